"""split_p, stack_p, unstack_p and tile_p: one equation each, as in JAX 0.10.2, with every rule.

The printed programs are compared with JAX's in ``tests_integration/test_jax_texts.py``;
check_primitive runs their rules (``tests_integration/primitive_cases.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax, random
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

X = np.arange(12.0, dtype=np.float32).reshape(3, 4)


def _names(fn, *args):
    return [e.primitive.name for e in make_jaxpr(fn)(*args).jaxpr.eqns]


def test_each_is_one_equation_with_numpys_values():
    a, b = lax.split(X, [1, 3], axis=1)
    assert a.tolist() == X[:, :1].tolist() and b.tolist() == X[:, 1:].tolist()
    assert lax.stack([X, X + 1], axis=1).tolist() == np.stack([X, X + 1], axis=1).tolist()
    assert [u.tolist() for u in lax.unstack(X, axis=1)] == [list(c) for c in X.T]
    assert lax.tile(X, (2, 1)).tolist() == np.tile(X, (2, 1)).tolist()
    assert _names(lambda x: lax.split(x, [2, 2], axis=1), X) == ["split"]
    assert _names(lambda x: jnp.array_split(x, 2, axis=1), X) == ["split"]
    assert _names(lambda x: jnp.split(x, [1], axis=0), X) == ["split"]
    assert _names(lambda x: jnp.stack([x, x]), X) == ["stack"]
    assert _names(lambda x: jnp.unstack(x, axis=1), X) == ["unstack"]
    assert _names(lambda x: jnp.tile(x, (2,)), X) == ["tile"]
    closed = make_jaxpr(lambda x: lax.split(x, [1, 2]))(X)
    assert "split[axis=0 sizes=(1, 2)]" in str(closed)
    assert str(parse_jaxpr(str(closed))) == str(closed)
    # jnp.stack and jnp.concatenate of one array (unstacked first)
    assert jnp.stack(jnp.asarray(X)).tolist() == X.tolist()
    assert jnp.concatenate(jnp.asarray(X)).tolist() == X.reshape(-1).tolist()


def test_errors_as_jax():
    with pytest.raises(ValueError, match="Sum of sizes 2 must be equal to dimension 0"):
        lax.split(X, [1, 1])
    with pytest.raises(ValueError, match="Sizes passed to split must be nonnegative"):
        lax.split(X, [-1, 4])
    with pytest.raises(ValueError, match="axis 5 is out of bounds for array of dimension 2"):
        lax.split(X, [1, 2], axis=5)
    with pytest.raises(ValueError, match="unstack requires arrays with rank > 0"):
        lax.unstack(np.float32(1))
    with pytest.raises(TypeError, match="reps length must be equal to the ndim of x"):
        lax.tile(X, (2,))
    with pytest.raises(TypeError, match="same shapes"):
        lax.stack([X, X[:2]])


def test_derivatives_and_batching():
    g = grad(lambda x: (lax.split(x, [1, 2])[1] ** 2).sum())(X)
    assert g.tolist() == [[0.0] * 4, (2 * X[1]).tolist(), (2 * X[2]).tolist()]
    g = grad(lambda x: sum(i * u.sum() for i, u in enumerate(lax.unstack(x, axis=1))))(X)
    assert g.tolist() == [[0.0, 1.0, 2.0, 3.0]] * 3
    assert grad(lambda x: (lax.stack([x, 2 * x]) ** 2).sum())(X[0]).tolist() == (10 * X[0]).tolist()
    assert grad(lambda x: lax.tile(x, (3, 2)).sum())(X).tolist() == [[6.0] * 4] * 3
    batched = vmap(lambda x: lax.split(x, [1, 3]))(X)
    assert [b.shape for b in batched] == [(3, 1), (3, 3)]
    assert vmap(lambda x: lax.tile(x, (2,)))(X).tolist() == np.tile(X, (1, 2)).tolist()
    out = vmap(lambda a, b: lax.stack([a, b]), in_axes=(0, None))(X, X[0])
    assert out.tolist() == np.stack([X, np.broadcast_to(X[0], X.shape)], axis=1).tolist()
    assert vmap(lambda x: lax.unstack(x), in_axes=1)(X)[2].tolist() == X[2].tolist()
    assert jit(lambda x: lax.unstack(x, 1))(X)[1].tolist() == X[:, 1].tolist()


def test_key_arrays():
    keys = random.split(random.key(0), 6)
    first, rest = lax.split(keys, [2, 4])
    assert (random.key_data(first) == random.key_data(keys[:2])).all()
    assert rest.shape == (4,) and jit(lambda k: lax.split(k, [2, 4])[1])(keys).shape == (4,)
    assert (random.key_data(lax.unstack(keys)[3]) == random.key_data(keys[3])).all()
    assert lax.tile(keys, (2,)).shape == (12,) and lax.stack([keys, keys]).shape == (2, 6)
