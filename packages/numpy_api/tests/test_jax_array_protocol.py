"""Objects with a ``__jax_array__`` method are array-like to jnp functions, as in JAX.

JAX's jnp functions accept them (``check_arraylike``) and call the method where they make
arrays of their arguments; a wrapper registered as a pytree (flax's ``nnx.Variable``)
reaches them inside jit holding a tracer. Checked against JAX 0.10.2 by hand.
"""

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import tree_util


class Wrapped:
    """A value behind ``__jax_array__``, registered as a pytree like flax's Variables."""

    def __init__(self, value):
        self.value = value

    def __jax_array__(self):
        return jnp.asarray(self.value)


tree_util.register_pytree_node(Wrapped, lambda w: ((w.value,), None), lambda _, c: Wrapped(*c))

X = np.array([0.5, -1.0, 2.0], np.float32)

CASES = {
    "sin": (lambda w: jnp.sin(w), lambda x: np.sin(x)),
    "add": (lambda w: jnp.add(w, 1), lambda x: x + 1),
    "matmul": (lambda w: jnp.matmul(jnp.ones(3), w), lambda x: np.ones(3) @ x),
    "dot": (lambda w: jnp.dot(w, w), lambda x: x @ x),
    "mean": (lambda w: jnp.mean(w), lambda x: np.mean(x)),
    "sum": (lambda w: jnp.sum(w), lambda x: np.sum(x)),
    "isfinite": (lambda w: jnp.isfinite(w), lambda x: np.isfinite(x)),
    "reshape": (lambda w: jnp.reshape(w, (3, 1)), lambda x: x.reshape(3, 1)),
    "concatenate": (lambda w: jnp.concatenate([w, w]), lambda x: np.concatenate([x, x])),
    "asarray": (lambda w: jnp.asarray(w), lambda x: x),
}


@pytest.mark.parametrize("name", list(CASES))
def test_jnp_functions_call_the_protocol_eagerly_and_under_jit(name):
    f, want = CASES[name]
    np.testing.assert_allclose(f(Wrapped(X)), want(X), rtol=1e-6)
    np.testing.assert_allclose(jit(f)(Wrapped(X)), want(X), rtol=1e-6)


def test_objects_without_the_protocol_are_still_refused():
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin(object())
