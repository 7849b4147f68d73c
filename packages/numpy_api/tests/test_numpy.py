"""modjax.numpy: JAX's type promotion, creation, elementwise functions, reductions, products."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

BF16 = np.dtype(ml_dtypes.bfloat16)

# --- type promotion ---------------------------------------------------------------------------

# jnp.add's result dtype in JAX 0.10.2 (x64 off); "*" marks a weakly typed result.
# Rows and columns: arrays of these dtypes, then the Python scalars 1, 1.0 and 1j.
PROMOTION_NAMES = [
    "bool", "uint8", "uint32", "int8", "int32", "bfloat16", "float16", "float32", "complex64",
    "int", "float", "complex",
]  # fmt: skip
SHORT_NAMES = {
    "bool": "bool", "u8": "uint8", "u32": "uint32", "i8": "int8", "i16": "int16", "i32": "int32",
    "bf16": "bfloat16", "f16": "float16", "f32": "float32", "c64": "complex64",
}  # fmt: skip
PROMOTION_TABLE = """
        bool  u8    u32   i8    i32   bf16  f16   f32   c64   int   float complex
bool    bool  u8    u32   i8    i32   bf16  f16   f32   c64   i32*  f32*  c64*
u8      u8    u8    u32   i16   i32   bf16  f16   f32   c64   u8    f32*  c64*
u32     u32   u32   u32   i32   i32   bf16  f16   f32   c64   u32   f32*  c64*
i8      i8    i16   i32   i8    i32   bf16  f16   f32   c64   i8    f32*  c64*
i32     i32   i32   i32   i32   i32   bf16  f16   f32   c64   i32   f32*  c64*
bf16    bf16  bf16  bf16  bf16  bf16  bf16  f32   f32   c64   bf16  bf16  c64
f16     f16   f16   f16   f16   f16   f32   f16   f32   c64   f16   f16   c64
f32     f32   f32   f32   f32   f32   f32   f32   f32   c64   f32   f32   c64
c64     c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64   c64
int     i32*  u8    u32   i8    i32   bf16  f16   f32   c64   i32*  f32*  c64*
float   f32*  f32*  f32*  f32*  f32*  bf16  f16   f32   c64   f32*  f32*  c64*
complex c64*  c64*  c64*  c64*  c64*  c64   c64   c64   c64   c64*  c64*  c64*
"""


def _operand(name):
    return (
        {"int": 1, "float": 1.0, "complex": 1j}.get(name)
        if name in ("int", "float", "complex")
        else jnp.ones(2, name)
    )


def _promotion_cases():
    for row, line in zip(PROMOTION_NAMES, PROMOTION_TABLE.strip().splitlines()[1:], strict=True):
        for col, result in zip(PROMOTION_NAMES, line.split()[1:], strict=True):
            weak = result.endswith("*")
            yield row, col, SHORT_NAMES[result.rstrip("*")] + ("*" if weak else "")


@pytest.mark.parametrize("a,b,expected", list(_promotion_cases()))
def test_add_promotes_like_jax(a, b, expected):
    x, y = _operand(a), _operand(b)
    jaxpr = make_jaxpr(jnp.add)(x, y)  # abstract: no compilation per pair
    (out,) = jaxpr.out_avals
    assert (out.dtype.name + ("*" if out.weak_type else "")) == expected


def test_promotion_facts_from_jax():
    assert (jnp.ones(3, jnp.int8) + 1000).tolist() == [-23, -23, -23]
    assert (jnp.ones(3, jnp.int8) + 1000).dtype == jnp.int8
    assert (jnp.asarray(2.0) + jnp.ones(2, jnp.float16)).dtype == jnp.float16
    assert (jnp.ones(2, jnp.int32) + jnp.ones(2, jnp.float16)).dtype == jnp.float16
    assert (jnp.ones(2, jnp.bfloat16) + jnp.ones(2, jnp.float16)).dtype == jnp.float32
    assert (jnp.ones(2, jnp.uint32) + jnp.ones(2, jnp.int32)).dtype == jnp.int32
    assert jnp.sum(jnp.ones(3, jnp.int8)).dtype == jnp.int32
    assert jnp.sum(jnp.ones(3, jnp.uint8)).dtype == jnp.uint32
    with pytest.raises(OverflowError):
        jnp.array(2**31)
    with pytest.raises(OverflowError):
        jnp.ones(3, jnp.int8) + 2**31


def test_python_scalar_literals_take_the_array_dtype():
    jaxpr = make_jaxpr(lambda x: x * 2 + 1.5)(jnp.ones(3, jnp.float16))
    text = str(jaxpr)
    assert "2.0:f16[]" in text and "1.5:f16[]" in text and "convert_element_type" not in text


# --- elementwise functions ---------------------------------------------------------------------

SHAPE_PAIRS = [((2, 3), (3,)), ((2, 1), (1, 3)), ((), (2, 3)), ((0, 3), (3,)), ((3,), (3,))]
NUMERIC = ["int8", "uint8", "int32", "float16", "float32", "bfloat16", "bool"]
BINARY = [
    ("add", np.add),
    ("subtract", np.subtract),
    ("multiply", np.multiply),
    ("divide", np.true_divide),
    ("maximum", np.maximum),
    ("minimum", np.minimum),
    ("equal", np.equal),
    ("not_equal", np.not_equal),
    ("less", np.less),
    ("greater_equal", np.greater_equal),
    ("floor_divide", np.floor_divide),
    ("remainder", np.remainder),
    ("power", np.power),
    ("arctan2", np.arctan2),
    ("logical_and", np.logical_and),
    ("logical_xor", np.logical_xor),
    ("bitwise_or", np.bitwise_or),
    ("left_shift", np.left_shift),
    ("right_shift", np.right_shift),
]
NOT_FOR_BOOL = {
    "subtract",
    "floor_divide",
    "remainder",
    "power",
    "left_shift",
    "right_shift",
    "divide",
}
INTEGER_ONLY = {"bitwise_or", "left_shift", "right_shift"}


def values(rng, dtype, shape, lo, hi):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(max(lo, info.min), min(hi, info.max), size=shape, endpoint=True).astype(
            dtype
        )
    return rng.uniform(lo, hi, shape).astype(dtype)


def as_wide(x):
    x = np.asarray(x)
    return x.astype(np.float64) if x.dtype.kind == "f" or x.dtype == BF16 else x


@pytest.mark.parametrize("name,ref", BINARY, ids=[b[0] for b in BINARY])
@given(data=st.data())
def test_binary_functions_match_numpy(name, ref, data):
    dtypes = [d for d in NUMERIC if not (d == "bool" and name in NOT_FOR_BOOL)]
    if name in INTEGER_ONLY:
        dtypes = [d for d in dtypes if np.dtype(d).kind in "iub"]
    a = data.draw(st.sampled_from(dtypes), label="dtype1")
    b = data.draw(st.sampled_from(dtypes), label="dtype2")
    sa, sb = data.draw(st.sampled_from(SHAPE_PAIRS), label="shapes")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    lo, hi = (
        (1, 3)
        if name in ("power", "floor_divide", "remainder", "left_shift", "right_shift")
        else (-20, 20)
    )
    if name == "power" and "uint8" in (a, b) or name == "divide":
        lo = 1
    x, y = values(rng, a, sa, -20, 20), values(rng, b, sb, lo, hi)
    out_dtype = jnp.result_type(x, y)
    fn = getattr(jnp, name)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        xs, ys = as_wide(x.astype(out_dtype)), as_wide(y.astype(out_dtype))
        if name in ("divide", "arctan2"):  # these compute in floating point
            xs, ys = xs.astype(np.float64), ys.astype(np.float64)
        expected = ref(xs, ys)
    for out in (fn(x, y), jit(fn)(x, y)):
        got = np.asarray(out)
        assert got.shape == np.broadcast_shapes(sa, sb)
        if expected.dtype == np.bool_:
            assert out.dtype == np.bool_
            np.testing.assert_array_equal(got, expected)
        elif out.dtype.kind == "f" or out.dtype == BF16:
            tol = 1e-5 if out.dtype == np.float32 else 2e-2
            np.testing.assert_allclose(
                as_wide(got), expected.astype(np.float64), rtol=tol, atol=tol
            )
        else:
            assert out.dtype == np.dtype(out_dtype), (out.dtype, out_dtype)
            np.testing.assert_array_equal(got, expected.astype(out.dtype))


def test_integer_floor_divide_remainder_and_power_follow_jax():
    x = jnp.array([7, -7, 7, -7, 5, 0, -(2**31), -(2**31)], jnp.int32)
    y = jnp.array([2, 2, -2, -2, 0, 0, -1, 0], jnp.int32)
    assert (x // y).tolist() == [3, -4, -4, 3, -2, -1, -(2**31), -2]
    assert (x % y).tolist() == [1, 1, -1, -1, 0, 0, 0, 0]
    base = jnp.array([1, -1, -1, 2, 0, 0, 3], jnp.int32)
    exponent = jnp.array([-1, -1, -2, -2, -1, 0, 40], jnp.int32)
    assert (base**exponent).tolist() == [1, -1, 1, 0, 0, 1, 689956897]
    assert jnp.floor_divide(
        jnp.array([5, 0, 7], jnp.uint8), jnp.array([0, 0, 2], jnp.uint8)
    ).tolist() == [255, 255, 3]
    floats = jnp.floor_divide(jnp.array([5.0, -5.0, 5.0, 1.0]), jnp.array([0.0, 3.0, -3.0, 0.1]))
    assert floats.tolist() == [np.inf, -2.0, -2.0, 9.0]
    assert jnp.remainder(jnp.array([5.0, -5.0]), jnp.array([3.0, 3.0])).tolist() == [2.0, 1.0]


UNARY = [
    ("sin", np.sin), ("cos", np.cos), ("tan", np.tan), ("exp", np.exp), ("log", np.log),
    ("tanh", np.tanh), ("sqrt", np.sqrt), ("log2", np.log2), ("log10", np.log10),
    ("arctan", np.arctan), ("expm1", np.expm1), ("log1p", np.log1p), ("cbrt", np.cbrt),
    ("negative", np.negative), ("absolute", np.absolute), ("sign", np.sign), ("square", np.square),
    ("floor", np.floor), ("ceil", np.ceil), ("trunc", np.trunc), ("rint", np.rint),
    ("isfinite", np.isfinite), ("isnan", np.isnan), ("isinf", np.isinf),
    ("logical_not", np.logical_not),
    ("reciprocal", np.reciprocal),
]  # fmt: skip


@pytest.mark.parametrize("name,ref", UNARY, ids=[u[0] for u in UNARY])
@given(data=st.data())
def test_unary_functions_match_numpy(name, ref, data):
    dtype = np.dtype(data.draw(st.sampled_from(["int32", "uint8", "float32", "float16"])))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = values(rng, dtype, (2, 3), 1, 20)
    fn = getattr(jnp, name)
    out = fn(x)
    inexact = name not in {
        "negative",
        "absolute",
        "sign",
        "square",
        "floor",
        "ceil",
        "trunc",
    }  # rint computes in floating point, as in JAX: jnp.rint(int32) is float32
    if name in ("isfinite", "isnan", "isinf", "logical_not"):
        assert out.dtype == np.bool_
    elif inexact and dtype.kind in "iu":
        assert out.dtype == np.float32  # integers compute in the default float
    else:
        assert out.dtype == dtype
    with np.errstate(all="ignore"):
        expected = ref(
            as_wide(x).astype(np.float64) if inexact and dtype.kind in "iu" else as_wide(x)
        )
    tol = 1e-5 if out.dtype in (np.float32, np.int32, np.uint8, np.bool_) else 2e-3
    with np.errstate(over="ignore"):
        expected = as_wide(expected.astype(out.dtype))
    for got in (out, jit(fn)(x)):
        np.testing.assert_allclose(as_wide(got), expected, rtol=tol, atol=tol)


def test_round():
    x = jnp.array([0.5, 1.5, 2.5, -0.5, 2.567])
    np.testing.assert_allclose(np.asarray(jnp.round(x)), [0.0, 2.0, 2.0, -0.0, 3.0])
    np.testing.assert_allclose(np.asarray(jnp.round(x, 1)), [0.5, 1.5, 2.5, -0.5, 2.6], rtol=1e-6)
    assert round(jnp.float32(2.5)).dtype == np.int32
    with pytest.raises(NotImplementedError):
        jnp.round(jnp.array([125]), -1)


# --- creation -------------------------------------------------------------------------------------


def test_creation_dtypes_and_weak_types():
    cases = [
        (jnp.zeros(3), "float32", False),
        (jnp.zeros((2, 3), int), "int32", False),
        (jnp.ones(2, jnp.bfloat16), "bfloat16", False),
        (jnp.full((2,), 3), "int32", True),
        (jnp.full((2,), 3.0, jnp.int8), "int8", False),
        (jnp.array(2.0), "float32", True),
        (jnp.array(2), "int32", True),
        (jnp.array(True), "bool", False),
        (jnp.array([1, 2.5]), "float32", False),
        (jnp.array([1, jnp.float16(2)]), "float16", False),
        (jnp.array(np.arange(3.0)), "float32", False),
        (jnp.asarray(2.0), "float32", True),
        (jnp.float32(2), "float32", False),
        (jnp.int8(np.int32(300)), "int8", False),
        (jnp.arange(5), "int32", False),
        (jnp.arange(0, 1, 0.25), "float32", False),
        (jnp.arange(5, dtype=jnp.float16), "float16", False),
        (jnp.linspace(0, 1, 5), "float32", False),
        (jnp.eye(3, 2, 1), "float32", False),
        (jnp.zeros_like(jnp.ones(2, jnp.int8)), "int8", False),
        (jnp.full_like(jnp.ones(2), 3, jnp.int32), "int32", False),
    ]
    for out, dtype, weak in cases:
        assert (out.dtype.name, out.weak_type) == (dtype, weak), out


def test_creation_values():
    assert jnp.arange(2, 5).tolist() == [2, 3, 4]
    assert jnp.arange(0, 1, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]
    assert jnp.linspace(0, 1, 5).tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    np.testing.assert_array_equal(np.asarray(jnp.eye(3, 2, 1)), np.eye(3, 2, 1))
    np.testing.assert_array_equal(np.asarray(jnp.identity(2, int)), np.eye(2))
    np.testing.assert_array_equal(np.asarray(jnp.full((2, 2), jnp.arange(2))), [[0, 1], [0, 1]])
    np.testing.assert_array_equal(
        np.asarray(jnp.array([jnp.ones(2), jnp.zeros(2)])), [[1, 1], [0, 0]]
    )
    assert jnp.int8(np.int32(300)).tolist() == 44
    assert jnp.array([[1, 2], [3, 4]], ndmin=3).shape == (1, 2, 2)


def test_creation_errors():
    with pytest.raises(OverflowError):
        jnp.int8(300)
    with pytest.raises(TypeError):
        jnp.array("a")
    with pytest.raises(ValueError):
        jnp.array(None)
    with pytest.raises(ValueError):
        jnp.array([[1, 2], [3]])
    with pytest.raises(TypeError):
        jnp.zeros((2, -1))


def test_arange_lowers_to_iota():
    text = str(make_jaxpr(lambda: jnp.arange(1, 5))())
    assert "iota" in text and "add" in text


@pytest.mark.parametrize(
    "args, kwargs",
    [((0,), {"step": 2}), ((7,), {"step": 2}), ((5,), {"step": -1}), ((2.5,), {"step": 0.5})],
)
def test_arange_with_a_lone_bound_and_a_step_reads_the_bound_as_stop(args, kwargs):
    got = jnp.arange(*args, **kwargs)
    want = np.arange(*args, **kwargs)
    assert got.shape == want.shape
    np.testing.assert_allclose(np.asarray(got), want)


def test_scalar_types():
    assert jnp.float32 == np.float32 and hash(jnp.float32) == hash(np.float32)
    assert np.dtype(jnp.bfloat16) == BF16
    assert isinstance(np.float32(1), jnp.float32)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.dtype(jnp.int8) == np.int8
    assert jnp.zeros(2, jnp.float16).dtype == np.float16
    assert jnp.float32([1, 2]).tolist() == [1.0, 2.0]


# --- reductions -------------------------------------------------------------------------------

REDUCTIONS = ["sum", "prod", "max", "min", "mean", "all", "any", "argmax", "argmin", "var", "std"]


@pytest.mark.parametrize("name", REDUCTIONS)
@given(data=st.data())
def test_reductions_match_numpy(name, data):
    dtype = np.dtype(data.draw(st.sampled_from(["float32", "int8", "uint8", "int32", "bool"])))
    shape = data.draw(st.sampled_from([(2, 3), (4,), (2, 1, 3)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    x = values(rng, dtype, shape, -3, 3)
    if name in ("argmax", "argmin"):
        axis = data.draw(st.sampled_from([None, 0, -1]))
        keepdims = False
    else:
        axis = data.draw(st.sampled_from([None, 0, -1] + ([(0, -1)] if len(shape) > 1 else [])))
        keepdims = data.draw(st.booleans())
    kwargs = (
        {"axis": axis} if name in ("argmax", "argmin") else {"axis": axis, "keepdims": keepdims}
    )
    fn = getattr(jnp, name)
    out = fn(x, **kwargs)
    if name in ("sum", "prod"):
        wide_dtype = {"b": np.int32, "i": np.int32, "u": np.uint32, "f": np.float32}[dtype.kind]
        assert out.dtype == (dtype if dtype == np.int32 else wide_dtype)
        expected = getattr(np, name)(x.astype(out.dtype), **kwargs)
    elif name in ("mean", "var", "std"):
        assert out.dtype == np.float32
        expected = getattr(np, name)(x.astype(np.float64), **kwargs)
    elif name in ("all", "any"):
        assert out.dtype == np.bool_
        expected = getattr(np, name)(x, **kwargs)
    elif name in ("argmax", "argmin"):
        assert out.dtype == np.int32
        expected = getattr(np, name)(x, **kwargs)
    else:
        assert out.dtype == dtype
        expected = getattr(np, name)(x, **kwargs)
    assert not out.weak_type
    for got in (out, jit(lambda v: fn(v, **kwargs))(x)):
        np.testing.assert_allclose(as_wide(got), as_wide(expected), rtol=1e-5, atol=1e-5)


def test_reduction_details():
    assert jnp.mean(jnp.ones(3, jnp.float16)).dtype == np.float16
    assert jnp.mean(jnp.ones(3, jnp.int8), dtype=jnp.int8).dtype == np.int8
    assert np.isnan(float(jnp.mean(jnp.ones((0,)))))
    assert float(jnp.max(jnp.ones((0,)), initial=3.0)) == 3.0
    assert float(jnp.sum(jnp.ones(3), initial=2)) == 5.0
    assert not jnp.sum(jnp.asarray(2.0)).weak_type
    with pytest.raises(ValueError, match="zero-size"):
        jnp.max(jnp.ones((0,)))
    with pytest.raises(ValueError, match="out of bounds"):
        jnp.sum(jnp.ones((2, 3)), axis=2)
    assert jnp.argmax(jnp.ones((2, 3)), axis=1, keepdims=True).shape == (2, 1)


# --- shapes, where, products ----------------------------------------------------------------------


def test_shape_functions_match_numpy():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    checks = [
        (jnp.reshape(x, (4, -1)), x.reshape(4, -1)),
        (jnp.reshape(x, (4, 6), order="F"), x.reshape((4, 6), order="F")),
        (jnp.ravel(x), x.ravel()),
        (jnp.transpose(x), x.T),
        (jnp.transpose(x, (1, 0, 2)), x.transpose(1, 0, 2)),
        (jnp.swapaxes(x, 0, 2), np.swapaxes(x, 0, 2)),
        (jnp.moveaxis(x, 0, -1), np.moveaxis(x, 0, -1)),
        (jnp.squeeze(x[:1]), np.squeeze(x[:1])),
        (jnp.expand_dims(x, (0, -1)), np.expand_dims(x, (0, -1))),
        (jnp.broadcast_to(x[0, 0], (2, 4)), np.broadcast_to(x[0, 0], (2, 4))),
        (jnp.concatenate([x, x], axis=1), np.concatenate([x, x], axis=1)),
        (jnp.concatenate([x, x], axis=None), np.concatenate([x, x], axis=None)),
        (jnp.stack([x[0], x[1]], axis=-1), np.stack([x[0], x[1]], axis=-1)),
        (jnp.clip(x, 3, 10), np.clip(x, 3, 10)),
        (jnp.where(x > 5, x, 0), np.where(x > 5, x, 0)),
        (jnp.where(x[0], 1, x[1]), np.where(x[0], 1, x[1])),
    ]
    for got, expected in checks:
        assert got.shape == expected.shape
        np.testing.assert_array_equal(np.asarray(got), expected)
    assert jnp.where(jnp.array([True, False]), 1, 2.0).dtype == np.float32
    assert jnp.shape(x) == (2, 3, 4) and jnp.ndim(x) == 3 and jnp.size(x) == 24


MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)), ((5, 2, 3), (3, 4)),
    ((1, 2, 3), (5, 3, 4)), ((4, 1, 2, 3), (5, 3, 2)),
]  # fmt: skip


@pytest.mark.parametrize("sa,sb", MATMUL_SHAPES)
def test_matmul_and_dot_match_numpy(sa, sb):
    rng = np.random.default_rng(0)
    a, b = rng.uniform(-1, 1, sa).astype(np.float32), rng.uniform(-1, 1, sb).astype(np.float32)
    np.testing.assert_allclose(np.asarray(jnp.matmul(a, b)), np.matmul(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jit(jnp.matmul)(a, b)), np.matmul(a, b), rtol=1e-5, atol=1e-6
    )
    if len(sb) <= 2:
        np.testing.assert_allclose(np.asarray(jnp.dot(a, b)), np.dot(a, b), rtol=1e-5, atol=1e-6)


def test_product_details():
    assert jnp.matmul(jnp.ones(3, jnp.int8), jnp.ones((3, 2), jnp.int8)).dtype == np.int8
    assert jnp.dot(jnp.ones((2, 3, 4)), jnp.ones((5, 4, 2))).shape == (2, 3, 5, 2)
    assert jnp.dot(2, jnp.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(ValueError, match="ndim at least 1"):
        jnp.matmul(jnp.ones(()), jnp.ones(3))
    with pytest.raises(ValueError, match="Incompatible"):
        jnp.matmul(jnp.ones((2, 3, 4)), jnp.ones((5, 4, 2)))


def test_shape_errors_are_type_errors_eagerly_and_under_jit():
    for fn, args in [
        (lambda a, b: a + b, (jnp.ones(3), jnp.ones(4))),
        (lambda a, b: a @ b, (jnp.ones(3), jnp.ones(4))),
        (lambda a: a.reshape(4), (jnp.ones(3),)),
        (lambda a: jnp.reshape(a, (-1, -1)), (jnp.ones(6),)),
    ]:
        with pytest.raises(TypeError):
            fn(*args)
        with pytest.raises(TypeError):
            jit(fn)(*args)


def test_non_array_arguments_are_rejected():
    with pytest.raises(TypeError, match="ndarray or scalar"):
        jnp.add([1, 2], 3)
    with pytest.raises(TypeError):
        jnp.ones(3) + [1, 2, 3]
    with pytest.raises(TypeError):
        jnp.ones(3) + "a"
    assert (jnp.ones(3) == None) is False  # noqa: E711 - Python's fallback, as in JAX
