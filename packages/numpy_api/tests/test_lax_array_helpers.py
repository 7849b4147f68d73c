"""lax.dtype, lax.empty and lax.broadcast_like (JAX 0.10's values, checked by hand)."""

import numpy as np
import pytest

from modjax import lax
from modjax.runtime import jit
from modjax.tracecore import dtypes


def test_dtype_is_the_canonical_modjax_dtype():
    assert lax.dtype(1.0) == np.float32 and lax.dtype(2) == np.int32
    assert lax.dtype(True) == np.bool_ and lax.dtype(np.int64(1)) == np.int32
    assert lax.dtype(np.ones(2, dtypes.bfloat16)) == dtypes.bfloat16


def test_dtype_of_a_dtype_name_or_scalar_type_is_canonical():
    # As JAX 0.10.2 (flax's attention calls lax.dtype(cache_index.dtype)).
    assert lax.dtype(np.dtype("int32")) == np.int32 and lax.dtype("float32") == np.float32
    assert (lax.dtype(float), lax.dtype(int), lax.dtype(complex)) == (
        np.float32,
        np.int32,
        np.complex64,
    )
    assert lax.dtype(dtypes.bfloat16) == dtypes.bfloat16
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        assert lax.dtype(np.float64) == np.float32
    with pytest.raises(ValueError, match="Invalid argument to dtype: None."):
        lax.dtype(None)


def test_empty_has_the_shape_and_dtype():
    out = lax.empty((2, 3), np.float32)
    assert out.shape == (2, 3) and out.dtype == np.float32
    assert lax.empty((2,), "int32").dtype == np.int32
    with pytest.raises(NotImplementedError, match="out_sharding"):
        lax.empty((2,), np.float32, out_sharding=object())


def test_broadcast_like_follows_numpy_broadcasting():
    like = np.zeros((4, 2, 3), np.float32)
    for shape in [(3,), (2, 1), (1, 2, 3), ()]:
        x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
        np.testing.assert_array_equal(lax.broadcast_like(x, like), np.broadcast_to(x, like.shape))
    out = jit(lambda x: lax.broadcast_like(x, like))(np.ones(3, np.float32))
    assert out.shape == (4, 2, 3)
    with pytest.raises(
        ValueError, match=r"input type=float32\[2\] and requested type=float32\[4,2,3\]"
    ):
        lax.broadcast_like(np.ones(2, np.float32), like)


def test_scalar_type_of():
    cases = [(1.0, float), (np.int8(1), int), (np.uint8(1), int), (np.bool_(True), bool)]
    cases += [(np.complex64(1), complex), (np.ones(2, dtypes.bfloat16), float)]
    for value, want in cases:
        assert dtypes.scalar_type_of(value) is want
