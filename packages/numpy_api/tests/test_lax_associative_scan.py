"""lax.associative_scan: the parallel prefix scan composed of lax primitives.

Against numpy's cumulative functions over drawn shapes, axes (negative too),
directions and dtypes, under jit (one compiled program per signature, shared
between examples); known answers of JAX 0.10 for non-associative combines,
which pin the order of the combines; a pytree combine (the linear recurrence
of RNNs) against a Python loop; vmap against a loop; derivatives with
check_grads; sizes 0 and 1; and the errors.
"""

import math
from functools import partial

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.lax.control_flow import associative_scan
from modjax.runtime import device_put, jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.config import enable_x64


def A(x):
    return device_put(np.asarray(x))


def _flip(fn, x, axis, reverse):
    """Apply numpy's cumulative ``fn`` along ``axis``, from the end when ``reverse``."""
    if not reverse:
        return fn(x, axis)
    return np.flip(fn(np.flip(x, axis), axis), axis)


# name: (lax combine, numpy cumulative reference, dtypes it is drawn in)
OPS = {
    "add": (lax.add, lambda x, a: np.cumsum(x, a, dtype=x.dtype), ("float32", "int32")),
    "mul": (lax.mul, lambda x, a: np.cumprod(x, a, dtype=x.dtype), ("float32", "int32")),
    "max": (lax.max, np.maximum.accumulate, ("float32", "int32")),
    "min": (lax.min, np.minimum.accumulate, ("float32",)),
    "or": (lax.bitwise_or, np.logical_or.accumulate, ("bool",)),
}
SHAPES = [(0,), (1,), (2,), (5,), (8,), (3, 4), (2, 7, 3), (1, 0, 2)]

# One jitted scan per (op, axis, reverse): examples that draw the same signature share it.
_SCANS = {}


def _scan_fn(op, axis, reverse):
    key = (op, axis, reverse)
    if key not in _SCANS:
        _SCANS[key] = jit(partial(associative_scan, OPS[op][0], axis=axis, reverse=reverse))
    return _SCANS[key]


def _values(rng, shape, dtype, op):
    if dtype == "bool":
        return rng.random(shape) < 0.3
    if op == "mul":  # factors near 1 (floats) or small (ints): no overflow, modest rounding
        if dtype == "int32":
            return rng.integers(-2, 3, shape).astype(dtype)
        return rng.uniform(0.7, 1.3, shape).astype(dtype)
    if dtype == "int32":
        return rng.integers(-50, 50, shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


@given(
    op=st.sampled_from(sorted(OPS)),
    shape=st.sampled_from(SHAPES),
    axis_seed=st.integers(0, 5),
    reverse=st.booleans(),
    dtype_seed=st.integers(0, 1),
    seed=st.integers(0, 2**16),
)
def test_matches_numpy_cumulative(op, shape, axis_seed, reverse, dtype_seed, seed):
    fn, reference, dtypes = OPS[op]
    dtype = dtypes[dtype_seed % len(dtypes)]
    ndim = len(shape)
    axis = axis_seed % (2 * ndim) - ndim  # both negative and non-negative axes
    x = _values(np.random.default_rng(seed), shape, dtype, op)
    got = np.asarray(_scan_fn(op, axis, reverse)(x))
    want = _flip(reference, x, axis % ndim, reverse)
    assert got.dtype == want.dtype and got.shape == want.shape
    if dtype == "float32":
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    else:
        np.testing.assert_array_equal(got, want)


def test_eager_equals_jit():
    x = np.random.default_rng(0).standard_normal((3, 6)).astype(np.float32)
    eager = associative_scan(lax.add, A(x), axis=1)
    np.testing.assert_allclose(np.asarray(eager), np.cumsum(x, 1), rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(np.asarray(eager), np.asarray(_scan_fn("add", 1, False)(x)))


# --- the order of the combines: known answers of JAX 0.10 -------------------------------------


def _sub(a, b):
    return lax.sub(a, b)


def _twice_plus(a, b):
    return lax.add(lax.mul(np.float32(2), a), b)


# (fn, n, reverse): jax.lax.associative_scan(fn, jnp.arange(1, n + 1, dtype=jnp.float32), ...)
# in JAX 0.10.2; these combines are not associative, so the values record JAX's order.
JAX_ANSWERS = [
    (_sub, 7, False, [1.0, -1.0, -4.0, 0.0, -5.0, 1.0, -6.0]),
    (_sub, 7, True, [-2.0, -1.0, -3.0, 0.0, -4.0, 1.0, 7.0]),
    (_twice_plus, 9, False, [1.0, 4.0, 11.0, 18.0, 41.0, 52.0, 111.0, 90.0, 189.0]),
    (_twice_plus, 9, True, [361.0, 180.0, 319.0, 158.0, 149.0, 72.0, 59.0, 26.0, 9.0]),
]


@pytest.mark.parametrize(("fn", "n", "reverse", "want"), JAX_ANSWERS)
def test_combine_order_matches_jax(fn, n, reverse, want):
    x = np.arange(1, n + 1, dtype=np.float32)
    got = jit(partial(associative_scan, fn, reverse=reverse))(x)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want, np.float32))


def test_docstring_examples_and_jax_interleave():
    # jax.lax.associative_scan's docstring: [0, 1, 3, 6] and, reversed, [6, 6, 5, 3].
    x = np.arange(4, dtype=np.int32)
    np.testing.assert_array_equal(np.asarray(_scan_fn("add", 0, False)(x)), [0, 1, 3, 6])
    np.testing.assert_array_equal(np.asarray(_scan_fn("add", 0, True)(x)), [6, 6, 5, 3])
    # The interleave adds zero-padded copies, as JAX's: -0.0 comes back as 0.0 (JAX 0.10.2
    # gives [-1, 0, 0, 0, 0] here, numpy's cumprod [-1, -0, -0, -0, 0]).
    z = np.array([-1.0, 0.0, 2.0, 3.0, -0.0], np.float32)
    got = np.asarray(_scan_fn("mul", 0, False)(z))
    np.testing.assert_array_equal(np.signbit(got), [True, False, False, False, False])


def test_program_is_lax_primitives_with_log_depth():
    n = 16
    jaxpr = make_jaxpr(partial(associative_scan, lax.add))(np.ones(n, np.float32)).jaxpr
    names = [eqn.primitive.name for eqn in jaxpr.eqns]
    assert set(names) <= {"slice", "add", "concatenate", "pad"}
    # One combine going down, one coming back and one interleave per level of the recursion.
    assert names.count("add") <= 3 * math.ceil(math.log2(n))


def test_complex_and_negative_axis_reverse():
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((4, 5)) + 1j * rng.standard_normal((4, 5))).astype(np.complex64)
    got = np.asarray(jit(partial(associative_scan, lax.add, axis=-1, reverse=True))(x))
    np.testing.assert_allclose(got, _flip(np.cumsum, x, 1, True), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("shape", [(0, 3), (1, 3)])
@pytest.mark.parametrize("reverse", [False, True])
def test_sizes_zero_and_one_are_unchanged(shape, reverse):
    x = np.arange(math.prod(shape), dtype=np.float32).reshape(shape)
    got = associative_scan(lax.add, (A(x), {"y": A(x)}), reverse=reverse)
    for leaf in (got[0], got[1]["y"]):
        assert leaf.shape == shape
        np.testing.assert_array_equal(np.asarray(leaf), x)


# --- pytrees: the linear recurrence h_t = a_t * h_{t-1} + b_t ---------------------------------


def _linear_combine(first, second):
    # Composing h -> a1 h + b1 with h -> a2 h + b2 gives h -> a2 a1 h + (a2 b1 + b2); the
    # per-step gate ``a`` has no feature axis, so it broadcasts over ``b``'s features.
    a1, b1 = first["a"], first["b"]
    a2, b2 = second["a"], second["b"]
    a2_b = lax.broadcast_in_dim(a2, b1.shape, (0,))
    return {"a": lax.mul(a2, a1), "b": lax.add(lax.mul(a2_b, b1), b2)}


def _recurrence_loop(a, b, reverse=False):
    steps = range(len(a) - 1, -1, -1) if reverse else range(len(a))
    h, out = np.zeros(b.shape[1:], b.dtype), np.zeros_like(b)
    for t in steps:
        h = a[t] * h + b[t]
        out[t] = h
    return out


_linear_scan = jit(partial(associative_scan, _linear_combine))
_linear_scan_reverse = jit(partial(associative_scan, _linear_combine, reverse=True))


@given(t=st.sampled_from([1, 6, 11]), seed=st.integers(0, 2**16))
def test_linear_recurrence_pytree(t, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(0.5, 1.0, (t,)).astype(np.float32)
    b = rng.standard_normal((t, 3)).astype(np.float32)
    for scan, reverse in ((_linear_scan, False), (_linear_scan_reverse, True)):
        got = scan({"a": a, "b": b})
        assert set(got) == {"a", "b"} and got["b"].shape == (t, 3)
        want = _recurrence_loop(a, b, reverse)
        np.testing.assert_allclose(np.asarray(got["b"]), want, rtol=1e-5, atol=1e-5)
        gates = _flip(np.cumprod, a, 0, reverse)
        np.testing.assert_allclose(np.asarray(got["a"]), gates, rtol=1e-5, atol=1e-6)


# --- vmap and derivatives -------------------------------------------------------------------


def test_vmap_equals_loop():
    rng = np.random.default_rng(2)
    a = rng.uniform(0.5, 1.0, (4, 7)).astype(np.float32)  # batch axis 0
    b = rng.standard_normal((7, 4, 3)).astype(np.float32)  # batch axis 1
    batched = jit(
        vmap(lambda a, b: _linear_scan({"a": a, "b": b})["b"], in_axes=(0, 1), out_axes=2)
    )
    got = np.asarray(batched(a, b))
    assert got.shape == (7, 3, 4)
    for i in range(4):
        want = _recurrence_loop(a[i], b[:, i])
        np.testing.assert_allclose(got[:, :, i], want, rtol=1e-5, atol=1e-5)
    # A batch axis inside the scanned one: the scan's axis moves over it.
    x = rng.standard_normal((5, 4, 6)).astype(np.float32)
    cummax = jit(vmap(partial(associative_scan, lax.max, axis=-1, reverse=True), in_axes=1))
    got = np.asarray(cummax(x))
    for i in range(4):
        np.testing.assert_array_equal(got[i], _flip(np.maximum.accumulate, x[:, i], 1, True))


def test_grads():
    rng = np.random.default_rng(3)
    with enable_x64(True):
        x = rng.uniform(0.5, 1.5, (2, 5))
        check_grads(partial(associative_scan, lax.mul, axis=-1, reverse=True), (x,), order=2)
        a, b = rng.uniform(0.5, 1.0, (6,)), rng.standard_normal((6, 2))
        check_grads(
            lambda a, b: associative_scan(_linear_combine, {"a": a, "b": b})["b"],
            (a, b),
            order=1,
        )


# --- errors ---------------------------------------------------------------------------------


def test_errors():
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"must have the same first dimension\. \(saw: \[\(3,\)"):
        associative_scan(lax.add, (x, np.ones(4, np.float32)))
    with pytest.raises(ValueError, match="must have the same first dimension"):
        associative_scan(lax.add, {"a": np.ones((2, 3)), "b": np.ones(3)}, axis=1)
    with pytest.raises(TypeError, match="fn argument should be callable"):
        associative_scan(1, x)
    for axis in (1, -2):
        with pytest.raises(ValueError, match=f"axis {axis} is out of bounds for array of dimen"):
            associative_scan(lax.add, x, axis=axis)
    with pytest.raises(ValueError, match="axis 0 is out of bounds for array of dimension 0"):
        associative_scan(lax.add, np.float32(1))
    with pytest.raises(IndexError, match="at least one array"):
        associative_scan(lax.add, ())
    with pytest.raises(ValueError, match="structure of elems"):
        associative_scan(lambda a, b: (a, b), x)
    with pytest.raises(ValueError, match="shapes of its inputs"):
        associative_scan(lambda a, b: lax.slice(a, (0,), (0,)), x)
    with pytest.raises(TypeError, match="dtypes of its inputs"):
        associative_scan(lambda a, b: lax.convert_element_type(lax.add(a, b), np.int32), x)
