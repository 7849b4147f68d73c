"""``lax.mulhi`` against exact Python integer products, for every integer dtype, eagerly and
under jit and vmap; JAX's errors; a zero derivative."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import dtypes, make_jaxpr

DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def reference(x, y):
    bits = np.iinfo(x.dtype).bits
    high = [(int(a) * int(b)) >> bits for a, b in zip(x.tolist(), y.tolist(), strict=True)]
    # the high half as an N-bit pattern, read in the operands' dtype
    return np.array([h % (1 << bits) for h in high], np.uint64).astype(x.dtype)


@given(st.sampled_from(DTYPES), st.data())
def test_mulhi_is_the_high_half_of_the_product(dtype, data):
    info = np.iinfo(dtype)
    ints = st.integers(int(info.min), int(info.max))
    x = np.array(data.draw(st.lists(ints, min_size=4, max_size=4)), dtype)
    y = np.array(data.draw(st.lists(ints, min_size=4, max_size=4)), dtype)
    for out in (lax.mulhi(x, y), jit(lax.mulhi)(x, y)):
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out), reference(x, y))


def test_known_answers_of_jax():
    x = np.array([2**31 - 1, -5, 123456789, -(2**31)], np.int32)
    y = np.array([2**31 - 1, 7, 987654321, -(2**31)], np.int32)
    np.testing.assert_array_equal(lax.mulhi(x, y), [1073741823, -1, 28389652, 1073741824])
    np.testing.assert_array_equal(
        lax.mulhi(x.astype(np.uint32), y.astype(np.uint32)), [1073741823, 6, 28389652, 1073741824]
    )
    np.testing.assert_array_equal(lax.mulhi(x, 3), [1, -1, 0, -2])  # a weak Python int
    assert "mulhi a b" in str(make_jaxpr(lax.mulhi)(x, y))
    np.testing.assert_array_equal(
        vmap(lax.mulhi, in_axes=(0, None))(np.stack([x, x]), y)[1], lax.mulhi(x, y)
    )
    _, tangent = jvp(lambda a: lax.mulhi(a, a), (x,), (np.zeros(4, dtypes.float0),))
    assert tangent.dtype == dtypes.float0


def test_errors():
    x = np.ones(4, np.int32)
    with pytest.raises(TypeError, match="same dtypes, got int32, uint32"):
        lax.mulhi(x, x.astype(np.uint32))
    with pytest.raises(TypeError, match="mulhi does not accept dtype float32"):
        lax.mulhi(x.astype(np.float32), x.astype(np.float32))
    with pytest.raises(TypeError, match="mulhi does not accept dtype bool"):
        lax.mulhi(x > 0, x > 0)
    with pytest.raises(TypeError, match="incompatible shapes"):
        lax.mulhi(x, x[:2])


def test_mulhi_after_a_reshape_compiles():
    # XLA's CPU backend rejects chlo.mulhi fused after a bitcast (JAX 0.10.2 fails here)
    f = jit(lambda a, b: lax.mulhi(a.reshape(1), b))
    np.testing.assert_array_equal(f(np.int32(0), np.array([-5], np.int32)), [0])
    np.testing.assert_array_equal(
        vmap(lax.mulhi)(np.array([-5], np.int8), np.array([7], np.int8)), [-1]
    )
