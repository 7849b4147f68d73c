"""Tests of modjax.tracecore.abstract: ShapedArray, ShapeDtypeStruct and get_aval."""

import enum
import pickle

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.tracecore import dtypes
from modjax.tracecore.abstract import (
    ShapedArray,
    ShapeDtypeStruct,
    aval_handlers,
    canonicalize_shape,
    get_aval,
    register_aval_handler,
)
from modjax.tracecore.config import enable_x64

# Every dtype, the narrow ones (loaded on first use) included.
dtypes.load_narrow_dtypes()

F32 = np.dtype(np.float32)

# --------------------------------------------------------------------------
# ShapedArray
# --------------------------------------------------------------------------


def test_shaped_array_attributes():
    a = ShapedArray((3, 4), np.float32)
    assert a.shape == (3, 4) and a.dtype == F32 and a.weak_type is False
    assert (a.ndim, a.size) == (2, 12)
    scalar = ShapedArray((), F32, weak_type=True)
    assert (scalar.ndim, scalar.size, scalar.weak_type) == (0, 1, True)
    assert ShapedArray((0, 5), F32).size == 0


@pytest.mark.parametrize(
    "shape",
    [(np.int64(3), np.int32(4)), [3, 4], np.array([3, 4]), range(3, 5)],
    ids=["np-ints", "list", "array", "range"],
)
def test_shape_is_canonicalized_to_python_ints(shape):
    a = ShapedArray(shape, F32)
    assert a.shape == (3, 4)
    assert type(a.shape) is tuple and all(type(d) is int for d in a.shape)


@pytest.mark.parametrize(
    ("shape", "error"),
    [((-1,), ValueError), ((2.0,), TypeError), ((None,), TypeError), (3, TypeError)],
)
def test_bad_shapes_raise(shape, error):
    with pytest.raises(error, match="[Ss]hape"):
        ShapedArray(shape, F32)
    with pytest.raises(error):
        canonicalize_shape(shape)


def test_canonical_shape_is_not_copied():
    shape = (2, 3)
    assert canonicalize_shape(shape) is shape


@pytest.mark.parametrize(
    ("dtype_like", "expected"),
    [("float32", "float32"), (float, "float64"), (np.int64, "int64"), ("bfloat16", "bfloat16")]
    + [(ml_dtypes.int4, "int4"), (dtypes.float0, "float0"), ([("float0", np.void, 0)], "float0")],
)
def test_dtype_is_normalized_but_not_canonicalized(dtype_like, expected):
    with enable_x64(False):  # float64 stays float64: the caller canonicalizes
        a = ShapedArray((2,), dtype_like)
    assert isinstance(a.dtype, np.dtype)
    assert dtypes.dtype_name(a.dtype) == expected


@pytest.mark.parametrize("bad", ["U3", object, np.dtype("O"), "not_a_dtype", None])
def test_non_numeric_dtypes_raise(bad):
    with pytest.raises(TypeError):
        ShapedArray((2,), bad)


def test_extended_dtype_is_allowed():
    class KeyType(dtypes.ExtendedDType):
        name = "key<fry>"

    key = KeyType()
    a = ShapedArray((2,), key)
    assert a.dtype is key
    assert str(a) == "key<fry>[2]"


# str() as JAX 0.10.2's: long dtype names, "~" for weak types; jaxpr text uses the short
# names (str_short(short_dtypes=True)).
@pytest.mark.parametrize(
    ("aval", "text", "short", "representation"),
    [
        (ShapedArray((3, 4), F32), "float32[3,4]", "f32[3,4]", "ShapedArray(float32[3,4])"),
        (
            ShapedArray((3, 4), F32, True),
            "~float32[3,4]",
            "f32[3,4]",
            "ShapedArray(float32[3,4], weak_type=True)",
        ),
        (
            ShapedArray((), np.int32, True),
            "~int32[]",
            "i32[]",
            "ShapedArray(int32[], weak_type=True)",
        ),
        (
            ShapedArray((2,), ml_dtypes.bfloat16),
            "bfloat16[2]",
            "bf16[2]",
            "ShapedArray(bfloat16[2])",
        ),
        (
            ShapedArray((1, 2, 3), np.uint8),
            "uint8[1,2,3]",
            "u8[1,2,3]",
            "ShapedArray(uint8[1,2,3])",
        ),
        (ShapedArray((2,), np.bool_), "bool[2]", "bool[2]", "ShapedArray(bool[2])"),
        (ShapedArray((2,), np.complex64), "complex64[2]", "c64[2]", "ShapedArray(complex64[2])"),
        (ShapedArray((0, 3), F32), "float32[0,3]", "f32[0,3]", "ShapedArray(float32[0,3])"),
        (
            ShapedArray((2,), ml_dtypes.float8_e4m3fn),
            "float8_e4m3fn[2]",
            "f8_e4m3fn[2]",
            "ShapedArray(float8_e4m3fn[2])",
        ),
        (ShapedArray((2,), ml_dtypes.int4), "int4[2]", "i4[2]", "ShapedArray(int4[2])"),
        (ShapedArray((2,), dtypes.float0), "float0[2]", "float0[2]", "ShapedArray(float0[2])"),
    ],
)
def test_str_and_repr(aval, text, short, representation):
    assert str(aval) == text
    assert repr(aval) == representation
    assert aval.str_short(short_dtypes=True) == short
    assert aval.str_short() == text.lstrip("~")


def test_equality_and_hash():
    a = ShapedArray((3, 4), F32)
    assert a == ShapedArray([3, 4], "float32")
    assert hash(a) == hash(ShapedArray((np.int64(3), 4), np.float32))
    assert a != ShapedArray((3, 4), F32, weak_type=True)
    assert a != ShapedArray((4, 3), F32)
    assert a != ShapedArray((3, 4), np.float64)
    assert a != (3, 4)
    assert a != ShapeDtypeStruct((3, 4), F32)
    assert len({a, ShapedArray((3, 4), F32), ShapedArray((3, 4), F32, True)}) == 2


avals = st.builds(
    ShapedArray,
    st.lists(st.integers(0, 4), max_size=3).map(tuple),
    st.sampled_from(dtypes.supported_dtypes()),
    st.booleans(),
)


@settings(max_examples=examples(200), deadline=None)
@given(avals, avals)
def test_equal_avals_hash_equal(a, b):
    by_name = a.dtype.name if a.dtype != dtypes.float0 else [("float0", np.void, 0)]
    rebuilt = ShapedArray(list(a.shape), by_name, a.weak_type)
    assert rebuilt == a and hash(rebuilt) == hash(a)
    assert (a == b) == ((a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type))
    if a == b:
        assert hash(a) == hash(b)


def test_update_and_strip_weak_type():
    a = ShapedArray((3,), F32, weak_type=True)
    assert a.update(shape=(4,)) == ShapedArray((4,), F32, True)
    assert a.update(dtype=np.int8) == ShapedArray((3,), np.int8, True)
    assert a.update(weak_type=False) == ShapedArray((3,), F32)
    assert a.update() == a and a.update() is not a
    stripped = a.strip_weak_type()
    assert stripped == ShapedArray((3,), F32) and a.weak_type  # the original is unchanged
    assert stripped.strip_weak_type() is stripped


def test_shaped_array_has_slots_and_pickles():
    a = ShapedArray((3,), F32, weak_type=True)
    assert not hasattr(a, "__dict__")
    with pytest.raises(AttributeError):
        a.color = "red"
    assert pickle.loads(pickle.dumps(a)) == a


# --------------------------------------------------------------------------
# ShapeDtypeStruct
# --------------------------------------------------------------------------


def test_shape_dtype_struct_mirrors_jax():
    s = ShapeDtypeStruct((2, 3), np.float64)
    assert (s.shape, s.dtype, s.ndim, s.size, s.sharding, s.weak_type) == (
        (2, 3),
        np.float64,
        2,
        6,
        None,
        False,
    )
    assert repr(s) == str(s) == "ShapeDtypeStruct(shape=(2, 3), dtype=float64)"
    assert repr(ShapeDtypeStruct((2, 3), np.float32, weak_type=True)) == (
        "ShapeDtypeStruct(shape=(2, 3), dtype=float32, weak_type=True)"
    )
    assert repr(ShapeDtypeStruct((), int)) == "ShapeDtypeStruct(shape=(), dtype=int64)"
    assert (
        repr(ShapeDtypeStruct([np.int64(2)], "bfloat16"))
        == "ShapeDtypeStruct(shape=(2,), dtype=bfloat16)"
    )
    assert repr(ShapeDtypeStruct((2,), np.float32, sharding="S")) == (
        "ShapeDtypeStruct(shape=(2,), dtype=float32, sharding='S')"
    )


def test_shape_dtype_struct_eq_hash_update():
    s = ShapeDtypeStruct((2, 3), np.float32)
    assert s == ShapeDtypeStruct([2, 3], "float32") and hash(s) == hash(
        ShapeDtypeStruct([2, 3], "float32")
    )
    assert s != ShapeDtypeStruct((2, 3), np.float32, weak_type=True)
    assert s != ShapeDtypeStruct((2, 3), np.float32, sharding="S")
    assert s != ShapedArray((2, 3), np.float32)
    assert s.update(dtype=np.int8) == ShapeDtypeStruct((2, 3), np.int8)
    with pytest.raises(TypeError, match="color"):
        s.update(color="red")


def test_shape_dtype_struct_aval_is_canonical():
    s = ShapeDtypeStruct((2,), np.float64, weak_type=True)
    with enable_x64(False):
        assert s.aval == ShapedArray((2,), np.float32, weak_type=True)
        assert get_aval(s) == s.aval
    with enable_x64(True):
        assert s.aval == ShapedArray((2,), np.float64, weak_type=True)


def test_shape_dtype_struct_requires_a_valid_dtype():
    with pytest.raises(ValueError, match="dtype must be specified"):
        ShapeDtypeStruct((2,), None)
    with pytest.raises(TypeError):
        ShapeDtypeStruct((2,), "U3")
    with pytest.raises(ValueError):
        ShapeDtypeStruct((-1,), np.float32)


# --------------------------------------------------------------------------
# get_aval
# --------------------------------------------------------------------------


class Color(enum.IntEnum):
    RED = 1


@pytest.mark.parametrize(
    ("value", "x32", "x64"),
    [
        (True, ShapedArray((), np.bool_), ShapedArray((), np.bool_)),  # bools are not weak
        (1, ShapedArray((), np.int32, True), ShapedArray((), np.int64, True)),
        (1.5, ShapedArray((), np.float32, True), ShapedArray((), np.float64, True)),
        (1j, ShapedArray((), np.complex64, True), ShapedArray((), np.complex128, True)),
        (Color.RED, ShapedArray((), np.int32, True), ShapedArray((), np.int64, True)),
        (np.int64(3), ShapedArray((), np.int32), ShapedArray((), np.int64)),
        (np.float64(3), ShapedArray((), np.float32), ShapedArray((), np.float64)),
        (np.bool_(True), ShapedArray((), np.bool_), ShapedArray((), np.bool_)),
        (np.ones((2, 3)), ShapedArray((2, 3), np.float32), ShapedArray((2, 3), np.float64)),
        (np.ones(4, np.int8), ShapedArray((4,), np.int8), ShapedArray((4,), np.int8)),
        (
            np.zeros(2, ml_dtypes.bfloat16),
            ShapedArray((2,), ml_dtypes.bfloat16),
            ShapedArray((2,), ml_dtypes.bfloat16),
        ),
        (
            np.zeros(2, dtypes.float0),
            ShapedArray((2,), dtypes.float0),
            ShapedArray((2,), dtypes.float0),
        ),
        (
            ShapeDtypeStruct((5,), np.uint64),
            ShapedArray((5,), np.uint32),
            ShapedArray((5,), np.uint64),
        ),
    ],
    ids=repr,
)
def test_get_aval_of_every_input_kind(value, x32, x64):
    with enable_x64(False):
        got = get_aval(value)
        assert (got, got.weak_type) == (x32, x32.weak_type)
    with enable_x64(True):
        got = get_aval(value)
        assert (got, got.weak_type) == (x64, x64.weak_type)


@pytest.mark.parametrize(
    ("value", "x64"), [(2**31, False), (-(2**31) - 1, False), (2**63, True), (2**64, True)]
)
def test_get_aval_of_out_of_range_int_raises_overflow(value, x64):
    width = "int64" if x64 else "int32"
    with (
        enable_x64(x64),
        pytest.raises(OverflowError, match=f"Python int {value} too large to convert to {width}"),
    ):
        get_aval(value)


def test_get_aval_uses_the_aval_attribute():
    class FakeTracer:
        def __init__(self, aval):
            self.aval = aval

    aval = ShapedArray((7,), np.int16, weak_type=True)
    assert get_aval(FakeTracer(aval)) is aval


def test_get_aval_dispatch_table_and_mro_fallback():
    class Box:
        def __init__(self, n):
            self.n = n

    class SubBox(Box):
        pass

    class SubArray(np.ndarray):
        pass

    try:
        register_aval_handler(Box, lambda b: ShapedArray((b.n,), np.float32))
        assert aval_handlers[Box] is not None
        assert get_aval(Box(3)) == ShapedArray((3,), np.float32)
        assert get_aval(SubBox(4)) == ShapedArray((4,), np.float32)  # found along the MRO
        assert get_aval(np.ones(2).view(SubArray)) == ShapedArray((2,), np.float32)
    finally:
        del aval_handlers[Box]
    with pytest.raises(TypeError):
        get_aval(Box(3))


@pytest.mark.parametrize(
    "value", ["a", [1], None, object(), np.array(["a"]), np.array([None]), ShapedArray, int]
)
def test_get_aval_rejects_non_arrays(value):
    with pytest.raises(TypeError, match="not a valid JAX type|not a valid modjax array type"):
        get_aval(value)


def test_get_aval_error_names_value_and_type():
    with pytest.raises(
        TypeError, match=r"Argument 'a' of type <class 'str'> is not a valid JAX type"
    ):
        get_aval("a")


def test_to_tangent_aval_as_jax():
    # equinox and other libraries ask an aval for its tangent type by this method.
    f = ShapedArray((2, 3), np.float32, weak_type=True)
    assert f.to_tangent_aval() is f
    for dtype in (np.int32, np.bool_, np.uint8):
        t = ShapedArray((4,), dtype).to_tangent_aval()
        assert (t.shape, t.dtype) == ((4,), dtypes.float0)
    assert ShapedArray((), np.complex64).to_tangent_aval().dtype == np.complex64
