"""Structural, reduction and contraction primitives of lax, eagerly and under jit, against numpy."""

from __future__ import annotations

import logging
import string
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax import lax
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.config import config

BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(d) for d in (np.float32, np.int32, np.int8, np.uint8, np.bool_)] + [BF16]
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), BF16]
INTS = [np.dtype(d) for d in (np.int32, np.int8, np.uint8, np.uint32)]
SHAPES = [(), (0,), (3,), (2, 3), (2, 1, 3), (2, 0, 3)]


def kind(dtype) -> str:
    return "f" if np.dtype(dtype) == BF16 else np.dtype(dtype).kind


def make_values(rng, dtype, shape, lo=-5, hi=5):
    k = kind(dtype)
    if k == "b":
        return rng.random(shape) < 0.5
    if k in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(lo, info.min), min(hi, info.max), size=shape, endpoint=True).astype(
            dtype
        )
    return rng.uniform(lo, hi, shape).astype(dtype)


def check(fn, args, expected, dtype=None, rtol=None):
    """Run ``fn`` eagerly and under jit; compare both with ``expected``."""
    expected = np.asarray(expected)
    dtype = np.dtype(dtype) if dtype is not None else expected.dtype
    for out in (fn(*args), jit(fn)(*args)):
        assert out.dtype == dtype, (out.dtype, dtype)
        got = np.asarray(out)
        assert got.shape == expected.shape, (got.shape, expected.shape)
        if kind(dtype) in "fc":
            tol = rtol or (2e-2 if dtype in (BF16, np.dtype(np.float16)) else 1e-5)
            np.testing.assert_allclose(
                got.astype(np.float64),
                expected.astype(np.float64),
                rtol=tol,
                atol=tol,
                equal_nan=True,
            )
        else:
            np.testing.assert_array_equal(got, expected.astype(dtype))


def draw_array(data, dtypes=DTYPES, shapes=SHAPES, lo=-5, hi=5):
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(st.sampled_from(shapes), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    return make_values(rng, dtype, shape, lo, hi), rng


# --- structural --------------------------------------------------------------------------------


@given(data=st.data())
def test_broadcast_in_dim(data):
    x, _ = draw_array(data)
    lead = data.draw(st.sampled_from([(), (2,), (1, 2)]))
    target = lead + tuple(4 if (d == 1 and data.draw(st.booleans())) else d for d in x.shape)
    dims = tuple(range(len(lead), len(target)))
    check(lambda v: lax.broadcast_in_dim(v, target, dims), (x,), np.broadcast_to(x, target))


def test_broadcast_and_expand_dims():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check(lambda v: lax.broadcast(v, (4,)), (x,), np.broadcast_to(x, (4, 2, 3)))
    check(lambda v: lax.expand_dims(v, (0, 3)), (x,), x[None, :, :, None])
    check(lambda v: lax.expand_dims(v, (-1,)), (x,), x[..., None])


@given(data=st.data())
def test_reshape(data):
    x, rng = draw_array(data)
    size = x.size
    candidates = [(size,), (1, size), (size, 1)] + (
        [(3, size // 3)] if size % 3 == 0 and size else []
    )
    new = data.draw(st.sampled_from(candidates))
    check(lambda v: lax.reshape(v, new), (x,), x.reshape(new))
    if x.ndim >= 2:
        perm = tuple(rng.permutation(x.ndim))
        check(lambda v: lax.reshape(v, new, perm), (x,), np.transpose(x, perm).reshape(new))


@given(data=st.data())
def test_squeeze(data):
    x, _ = draw_array(data, shapes=[(1,), (2, 1, 3), (1, 1), (1, 0)])
    dims = tuple(i for i, d in enumerate(x.shape) if d == 1)
    check(lambda v: lax.squeeze(v, dims), (x,), np.squeeze(x, dims))


@given(data=st.data())
def test_transpose_and_rev(data):
    x, rng = draw_array(data)
    perm = tuple(int(p) for p in rng.permutation(x.ndim))
    check(lambda v: lax.transpose(v, perm), (x,), np.transpose(x, perm))
    dims = tuple(i for i in range(x.ndim) if rng.random() < 0.6)
    check(lambda v: lax.rev(v, dims), (x,), np.flip(x, dims) if dims else x)


@given(data=st.data())
def test_slice(data):
    x, rng = draw_array(data)
    starts, limits, strides = [], [], []
    for d in x.shape:
        a, b = sorted(int(v) for v in rng.integers(0, d, size=2, endpoint=True))
        starts.append(a), limits.append(b), strides.append(int(rng.integers(1, 3)))
    index = tuple(slice(a, b, s) for a, b, s in zip(starts, limits, strides, strict=True))
    check(lambda v: lax.slice(v, starts, limits, strides), (x,), x[index])


@given(data=st.data())
def test_concatenate(data):
    x, rng = draw_array(data, shapes=[(3,), (2, 3), (2, 0, 3)])
    axis = int(rng.integers(0, x.ndim))
    other_shape = list(x.shape)
    other_shape[axis] = int(rng.integers(0, 3))
    y = make_values(rng, x.dtype, tuple(other_shape))
    check(lambda a, b: lax.concatenate([a, b, a], axis), (x, y), np.concatenate([x, y, x], axis))


def _np_pad(x, value, config):
    """numpy reference of lax.pad: interior padding, then low/high (negative crops)."""
    for axis, (lo, hi, interior) in enumerate(config):
        n = x.shape[axis]
        size = n + max(n - 1, 0) * interior
        shape = list(x.shape)
        shape[axis] = size
        out = np.full(shape, value, x.dtype)
        index = [slice(None)] * x.ndim
        index[axis] = slice(0, size, interior + 1)
        out[tuple(index)] = x
        pad = [(0, 0)] * x.ndim
        pad[axis] = (max(lo, 0), max(hi, 0))
        out = np.pad(out, pad, constant_values=value)
        index = [slice(None)] * x.ndim
        index[axis] = slice(max(-lo, 0), out.shape[axis] - max(-hi, 0))
        x = out[tuple(index)]
    return x


@given(data=st.data())
def test_pad(data):
    x, rng = draw_array(data, shapes=[(), (0,), (3,), (2, 3)])
    config = []
    for d in x.shape:
        interior = int(rng.integers(0, 3))
        full = d + max(d - 1, 0) * interior
        lo = int(rng.integers(-min(full, 2), 3))
        hi = int(rng.integers(-min(full + min(lo, 0), 2), 3))
        config.append((lo, hi, interior))
    value = make_values(rng, x.dtype, ())
    check(lambda a, v: lax.pad(a, v, config), (x, value), _np_pad(x, value, config))


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.uint8, BF16])
def test_iota(dtype):
    check(lambda: lax.iota(dtype, 5), (), np.arange(5).astype(dtype))
    expected = np.broadcast_to(np.arange(3)[None, :], (2, 3)).astype(dtype)
    check(lambda: lax.broadcasted_iota(dtype, (2, 3), 1), (), expected)
    check(lambda: lax.iota(dtype, 0), (), np.zeros(0, dtype))


def test_full_and_full_like():
    out = lax.full((2,), 3)
    assert out.dtype == np.int32 and out.weak_type
    check(lambda: lax.full((2, 2), 1.5, np.float16), (), np.full((2, 2), 1.5, np.float16))
    x = np.zeros((2, 3), np.int8)
    check(lambda v: lax.full_like(v, 7), (x,), np.full((2, 3), 7, np.int8))


def test_copy_returns_equal_values_in_a_new_array():
    x = lax.iota(np.int32, 4)
    y = lax.copy(x)
    assert y is not x
    np.testing.assert_array_equal(np.asarray(y), np.arange(4))
    check(lax.copy, (np.arange(3.0, dtype=np.float32),), np.arange(3.0, dtype=np.float32))


# --- reductions --------------------------------------------------------------------------------


def _axes(data, ndim):
    return tuple(i for i in range(ndim) if data.draw(st.booleans()))


REDUCTIONS = [
    # name, lax function, numpy reference (values, axes, dtype), dtypes
    ("sum", lax.reduce_sum, lambda x, a: np.sum(x, a, dtype=x.dtype), FLOATS + INTS),
    ("prod", lax.reduce_prod, lambda x, a: np.prod(x, a, dtype=x.dtype), FLOATS + INTS),
    ("max", lax.reduce_max, None, FLOATS + INTS + [np.dtype(np.bool_)]),
    ("min", lax.reduce_min, None, FLOATS + INTS + [np.dtype(np.bool_)]),
    ("and", lax.reduce_and, lambda x, a: np.bitwise_and.reduce(x, a), INTS + [np.dtype(np.bool_)]),
    ("or", lax.reduce_or, lambda x, a: np.bitwise_or.reduce(x, a), INTS + [np.dtype(np.bool_)]),
    ("xor", lax.reduce_xor, lambda x, a: np.bitwise_xor.reduce(x, a), INTS + [np.dtype(np.bool_)]),
]


def _extreme_ref(largest):
    def ref(x, axes):
        k = kind(x.dtype)
        if k == "b":
            init = not largest
        elif k in "iu":
            info = np.iinfo(x.dtype)
            init = info.min if largest else info.max
        else:
            init = -np.inf if largest else np.inf
        f = np.max if largest else np.min
        wide_x = x.astype(np.float64) if k == "f" else x
        return f(wide_x, axis=axes, initial=init).astype(x.dtype)

    return ref


@pytest.mark.parametrize("name,fn,ref,dtypes", REDUCTIONS, ids=[r[0] for r in REDUCTIONS])
@given(data=st.data())
def test_reductions(name, fn, ref, dtypes, data):
    x, rng = draw_array(data, dtypes=dtypes, lo=-3, hi=3)
    if kind(x.dtype) == "f" and name in ("max", "min") and x.size:
        x = np.where(rng.random(x.shape) < 0.2, np.nan, x).astype(x.dtype)
    axes = _axes(data, x.ndim)
    if ref is None:
        ref = _extreme_ref(name == "max")
    if kind(x.dtype) == "f" and name in ("sum", "prod"):
        expected = ref(x.astype(np.float64), axes).astype(x.dtype)
    elif kind(x.dtype) == "b" and name in ("and", "or", "xor"):
        expected = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[name].reduce(
            x, axes
        )
    else:
        with np.errstate(over="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = ref(x, axes)
    check(
        lambda v: fn(v, axes),
        (x,),
        expected,
        x.dtype,
        rtol=2e-2 if kind(x.dtype) == "f" and x.dtype != np.float32 else 1e-4,
    )


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@given(data=st.data())
def test_argmax_argmin(name, data):
    x, rng = draw_array(
        data,
        dtypes=FLOATS + INTS + [np.dtype(np.bool_)],
        shapes=[(3,), (2, 3), (2, 1, 3)],
        lo=-2,
        hi=2,
    )
    if kind(x.dtype) == "f":
        x = np.where(rng.random(x.shape) < 0.2, np.nan, x).astype(x.dtype)
    axis = int(rng.integers(0, x.ndim))
    index_dtype = data.draw(st.sampled_from([np.int32, np.int8, np.uint8]))
    expected = getattr(np, name)(x.astype(np.float64) if kind(x.dtype) == "f" else x, axis=axis)
    fn = getattr(lax, name)
    check(lambda v: fn(v, axis, index_dtype), (x,), expected.astype(index_dtype), index_dtype)


def test_argmax_ties_and_nans_pick_the_first():
    x = np.array([1.0, np.nan, 3.0, np.nan, 3.0], np.float32)
    assert int(lax.argmax(x, 0, np.int32)) == 1
    assert int(lax.argmin(x, 0, np.int32)) == 1
    y = np.array([3.0, 1.0, 3.0, 1.0], np.float32)
    assert int(lax.argmax(y, 0, np.int32)) == 0
    assert int(lax.argmin(y, 0, np.int32)) == 1


def test_reduce_of_a_weak_scalar_stays_weak():
    out = lax.reduce_sum(2.0, ())
    assert out.weak_type and float(out) == 2.0


# --- dot_general ---------------------------------------------------------------------------------

DOT_CASES = [
    # lhs shape, rhs shape, ((lc, rc), (lb, rb))
    ((3,), (3,), (((0,), (0,)), ((), ()))),
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),
    ((2, 3), (4, 3), (((1,), (1,)), ((), ()))),
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,)))),
    ((2, 5, 3), (3, 5, 4), (((2,), (0,)), ((1,), (1,)))),
    ((2, 0), (0, 3), (((1,), (0,)), ((), ()))),
    ((2, 3), (4,), (((), ()), ((), ()))),
    ((), (), (((), ()), ((), ()))),
]


def _einsum(lhs, rhs, numbers):
    (lc, rc), (lb, rb) = numbers
    letters = iter(string.ascii_letters)
    lhs_sub = [next(letters) for _ in range(lhs.ndim)]
    rhs_sub = [next(letters) for _ in range(rhs.ndim)]
    for a, b in zip(lc + lb, rc + rb, strict=True):
        rhs_sub[b] = lhs_sub[a]
    out = [lhs_sub[i] for i in lb]
    out += [s for i, s in enumerate(lhs_sub) if i not in lb and i not in lc]
    out += [s for i, s in enumerate(rhs_sub) if i not in rb and i not in rc]
    return np.einsum(f"{''.join(lhs_sub)},{''.join(rhs_sub)}->{''.join(out)}", lhs, rhs)


@given(data=st.data())
def test_dot_general(data):
    ls, rs, numbers = data.draw(st.sampled_from(DOT_CASES), label="case")
    dtype = data.draw(
        st.sampled_from([np.dtype(np.float32), BF16, np.dtype(np.int32), np.dtype(np.int8)])
    )
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    lhs, rhs = make_values(rng, dtype, ls, -3, 3), make_values(rng, dtype, rs, -3, 3)
    wide = np.float64 if kind(dtype) == "f" else np.int64
    expected = _einsum(lhs.astype(wide), rhs.astype(wide), numbers)
    check(
        lambda a, b: lax.dot_general(a, b, numbers),
        (lhs, rhs),
        expected.astype(dtype),
        dtype,
        rtol=2e-2,
    )
    if kind(dtype) != "f" or dtype == BF16:
        check(
            lambda a, b: lax.dot_general(a, b, numbers, preferred_element_type=np.float32),
            (lhs, rhs),
            expected.astype(np.float32),
            np.float32,
        )


def test_dot_general_jaxpr_and_mixed_dtypes():
    jaxpr = make_jaxpr(lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ()))))(
        np.ones((2, 3), np.float32), np.ones((3,), np.int32)
    )
    assert "dot_general" in str(jaxpr) and jaxpr.out_avals[0].dtype == np.float32
    out = lax.dot(np.ones((2, 3), np.float32), np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(out), [3.0, 3.0])
    both_weak = lax.dot_general(2.0, 3.0, (((), ()), ((), ())))
    assert both_weak.weak_type and float(both_weak) == 6.0


def test_negative_broadcast_sizes_are_broadcast_in_dims_type_error():
    # Observed from JAX 0.10.2: each raises TypeError "broadcast_in_dim shape must have
    # every element be nonnegative, got (-1,)."
    for call in (
        lambda: lax.full((-1,), 0.0),
        lambda: lax.broadcast_in_dim(1.0, (-1,), ()),
        lambda: lax.broadcast(1.0, (-1,)),
        lambda: lax.full_like(np.ones(2), 0, shape=(-1,)),
    ):
        with pytest.raises(TypeError, match=r"broadcast_in_dim shape must have every element"):
            call()


def test_lax_dot_of_unequal_sizes_is_a_value_error():
    # As JAX 0.10.2: lax.dot refuses (ValueError, "dimension_numbers must be specified")
    # before dot_general's TypeError; jnp.dot keeps the TypeError.
    with pytest.raises(ValueError, match="dimension_numbers must be specified"):
        lax.dot(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))
    with pytest.raises(TypeError):
        jnp.dot(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_eager_slices_at_many_positions_compile_one_program(caplog):
    # Eager unit-stride slices run as a dynamic_slice with the starts as arguments (as
    # JAX's do): reading an array element by element compiled a program per position.
    x = jnp.arange(40.0)
    assert float(x[0]) == 0.0 and lax.slice(x, (0,), (3,)).tolist() == [0.0, 1.0, 2.0]
    config.update("log_compiles", True)
    try:
        with caplog.at_level(logging.WARNING, logger="modjax.runtime"):
            items = [float(x[i]) for i in range(1, 30)]
            windows = [lax.slice(x, (i,), (i + 3,)).tolist() for i in range(1, 30, 7)]
    finally:
        config.update("log_compiles", False)
    assert items == [float(i) for i in range(1, 30)]
    assert windows == [[i, i + 1.0, i + 2.0] for i in range(1, 30, 7)]
    assert not [r.getMessage() for r in caplog.records if "Compiling" in r.getMessage()]
    # Strided and multi-dimensional eager slices keep their values.
    m = np.arange(24.0).reshape(4, 6)
    np.testing.assert_array_equal(
        np.asarray(lax.slice(jnp.asarray(m), (1, 0), (4, 6), (2, 3))), m[1:4:2, 0:6:3]
    )
    np.testing.assert_array_equal(
        np.asarray(lax.slice(jnp.asarray(m), (1, 2), (3, 2))), m[1:3, 2:2]
    )
