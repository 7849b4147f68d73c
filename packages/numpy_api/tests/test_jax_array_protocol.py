"""Objects with a ``__jax_array__`` method are array-like to jnp functions, as in JAX.

JAX's jnp functions accept them (``check_arraylike``) and call the method where they make
arrays of their arguments; a wrapper registered as a pytree (flax's ``nnx.Variable``)
reaches them inside jit holding a tracer. Checked against JAX 0.10.2 by hand.
"""

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax
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
    "zeros_like": (lambda w: jnp.zeros_like(w), lambda x: np.zeros_like(x)),
    "ones_like": (lambda w: jnp.ones_like(w), lambda x: np.ones_like(x)),
    "full_like": (lambda w: jnp.full_like(w, 2), lambda x: np.full_like(x, 2)),
    "convert_element_type": (
        lambda w: lax.convert_element_type(w, jnp.int32),
        lambda x: x.astype(np.int32),
    ),
    "einsum": (lambda w: jnp.einsum("i,i->", w, jnp.ones(3)), lambda x: x.sum()),
    "array_of_list": (lambda w: jnp.array([w, w]), lambda x: np.stack([x, x])),
    "isin": (lambda w: jnp.isin(w, jnp.array([2.0])), lambda x: np.isin(x, [2.0])),
    "select": (lambda w: jnp.select([jnp.ones(3, bool)], [w]), lambda x: x),
    "delete": (lambda w: jnp.delete(jnp.arange(4.0), Wrapped(np.int32(1))), lambda x: [0, 2, 3]),
    "at_set": (lambda w: jnp.zeros(3).at[0].set(Wrapped(np.float32(5))), lambda x: [5, 0, 0]),
}

OPERATORS = {
    "add": (lambda a, w: a + w, lambda x: 1 + x),
    "radd": (lambda a, w: w + a, lambda x: x + 1),
    "sub": (lambda a, w: a - w, lambda x: 1 - x),
    "mul": (lambda a, w: a * w, lambda x: x),
    "truediv": (lambda a, w: a / w, lambda x: 1 / x),
    "pow": (lambda a, w: a**w, lambda x: np.ones_like(x)),
    "matmul": (lambda a, w: a @ w, lambda x: x.sum()),
    "eq": (lambda a, w: a == w, lambda x: x == 1),
    "lt": (lambda a, w: a < w, lambda x: x > 1),
}


@pytest.mark.parametrize("name", list(CASES))
def test_jnp_functions_call_the_protocol_eagerly_and_under_jit(name):
    f, want = CASES[name]
    np.testing.assert_allclose(f(Wrapped(X)), want(X), rtol=1e-6)
    np.testing.assert_allclose(jit(f)(Wrapped(X)), want(X), rtol=1e-6)


def test_objects_without_the_protocol_are_still_refused():
    with pytest.raises(TypeError, match="sin requires ndarray or scalar arguments"):
        jnp.sin(object())


@pytest.mark.parametrize("name", list(OPERATORS))
def test_array_operators_call_the_protocol_of_the_other_operand(name):
    op, want = OPERATORS[name]
    ones = jnp.ones(3, jnp.float32)
    np.testing.assert_allclose(op(ones, Wrapped(X)), want(X), rtol=1e-6)
    np.testing.assert_allclose(jit(op)(ones, Wrapped(X)), want(X), rtol=1e-6)


def test_shape_ndim_and_size_read_through_the_protocol():
    w = Wrapped(np.zeros((2, 3), np.float32))
    assert (jnp.shape(w), jnp.ndim(w), jnp.size(w), jnp.size(w, 1)) == ((2, 3), 2, 6, 3)


def test_lax_and_jit_refuse_the_protocol_with_jaxs_error():
    class Unregistered:
        def __jax_array__(self):
            return jnp.ones(2)

    for call in (lambda: lax.sin(Unregistered()), lambda: jit(lambda v: v)(Unregistered())):
        with pytest.raises(ValueError, match="Triggering __jax_array__"):
            call()
