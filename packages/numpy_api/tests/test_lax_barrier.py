"""lax.optimization_barrier: the identity on pytrees, one stablehlo op, with every rule."""

import numpy as np

from modjax import autodiff, batching, lax
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr


def f(x):
    return lax.reduce_sum(lax.integer_pow(lax.optimization_barrier(lax.sin(x)), 2), (0,))


X = np.arange(3.0, dtype=np.float32)


def test_identity_on_pytrees_and_one_op():
    tree = (X, {"a": 2 * X})
    out = lax.optimization_barrier(tree)
    np.testing.assert_array_equal(out[0], X)
    np.testing.assert_array_equal(out[1]["a"], 2 * X)
    text = jit(lambda x: lax.optimization_barrier(x + 1)).lower(X).as_text()
    assert text.count("stablehlo.optimization_barrier") == 1
    closed = make_jaxpr(f)(X)
    assert "optimization_barrier" in str(closed)
    assert str(parse_jaxpr(str(closed), primitives=None)) == str(closed)


def test_derivatives_and_batching():
    want = 2 * np.sin(X) * np.cos(X)
    np.testing.assert_allclose(autodiff.grad(f)(X), want, rtol=1e-6)
    np.testing.assert_allclose(jit(autodiff.grad(f))(X), want, rtol=1e-6)
    _, tangent = autodiff.jvp(f, (X,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(tangent, want.sum(), rtol=1e-6)
    out = batching.vmap(lambda v: lax.optimization_barrier(v * 2))(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(out, np.full((2, 3), 2.0))
