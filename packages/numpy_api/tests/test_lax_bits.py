"""Bit-level and complex-part primitives of modjax.lax against numpy, with their rules."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import grad, jvp, vjp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

INTS = [np.int8, np.int32, np.uint8, np.uint32]


def _ints(dtype):
    info = np.iinfo(dtype)
    return st.lists(st.integers(int(info.min), int(info.max)), min_size=6, max_size=6).map(
        lambda v: np.asarray(v, dtype)
    )


@given(data=st.data())
def test_population_count_and_clz_match_numpy(data):
    dtype = np.dtype(data.draw(st.sampled_from(INTS)))
    x = data.draw(_ints(dtype))
    bits = dtype.itemsize * 8
    unsigned = x.view(np.dtype(f"uint{bits}"))
    expected_pop = np.bitwise_count(unsigned).astype(dtype)
    expected_clz = np.array([bits - int(v).bit_length() for v in unsigned], dtype)
    for fn in (lax.population_count, jit(lax.population_count)):
        out = fn(x)
        assert out.dtype == dtype
        np.testing.assert_array_equal(np.asarray(out), expected_pop)
    for fn in (lax.clz, jit(lax.clz)):
        np.testing.assert_array_equal(np.asarray(fn(x)), expected_clz)


@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.complex64])
def test_population_count_refuses_non_integers(dtype):
    with pytest.raises(TypeError, match="population_count does not accept dtype"):
        lax.population_count(np.ones(2, dtype))
    with pytest.raises(TypeError, match="clz does not accept dtype"):
        lax.clz(np.ones(2, dtype))


@pytest.mark.parametrize(
    ("source", "target", "shape"),
    [
        (np.float32, np.int32, (2, 3)),
        (np.int32, np.float32, (2, 3)),
        (np.float32, np.uint8, (2, 3)),
        (np.uint8, np.float32, (2, 4)),
        (np.float16, ml_dtypes.bfloat16, (3,)),
        (np.int16, np.uint8, ()),
        (np.uint16, np.int8, (0,)),
    ],
)
def test_bitcast_convert_type_matches_numpy_view(source, target, shape):
    rng = np.random.default_rng(0)
    size = np.dtype(source).itemsize
    raw = rng.integers(0, 256, size=(*shape, size), dtype=np.uint8)
    operand = raw.view(source).reshape(shape)
    new_size = np.dtype(target).itemsize
    if new_size < size:  # a trailing axis of size / new_size appears
        expected = raw.view(target)
    elif new_size > size:  # the trailing axis is consumed
        expected = operand.view(target).reshape(shape[:-1])
    else:
        expected = raw.view(target).reshape(shape)
    for fn in (lax.bitcast_convert_type, jit(lax.bitcast_convert_type, static_argnums=1)):
        out = fn(operand, target)
        assert out.dtype == np.dtype(target) and out.shape == expected.shape
        np.testing.assert_array_equal(
            np.asarray(out).view(np.uint8), np.ascontiguousarray(expected).view(np.uint8)
        )


def test_bitcast_convert_type_errors_and_jaxpr():
    with pytest.raises(ValueError, match="3 \\* 8 != 32"):
        lax.bitcast_convert_type(np.ones((2, 3), np.uint8), np.float32)
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(np.ones(2, np.bool_), np.uint8)
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(np.ones(2, np.complex64), np.float32)
    text = str(make_jaxpr(lambda v: lax.bitcast_convert_type(v, np.int32))(np.ones(2, np.float32)))
    assert "bitcast_convert_type[new_dtype=int32]" in text
    assert lax.bitcast_convert_type(1.0, np.int32).dtype == np.int32  # weak float32


def test_bitcast_batching_keeps_the_batch_axis_out_of_the_consumed_axis():
    x = np.arange(24, dtype=np.uint8).reshape(3, 2, 4)
    expected = x.view(np.float32)[..., 0]  # (3, 2): each (2, 4) element becomes (2,)
    batched_last = x.transpose(1, 2, 0)  # the batch axis is the one the bitcast consumes
    out = vmap(lambda v: lax.bitcast_convert_type(v, np.float32), in_axes=2)(batched_last)
    np.testing.assert_array_equal(np.asarray(out).view(np.uint8), expected.view(np.uint8))
    narrow = vmap(lambda v: lax.bitcast_convert_type(v, np.uint8))(np.ones((3, 2), np.float32))
    assert narrow.shape == (3, 2, 4)


# --- complex parts ---------------------------------------------------------------------------


def test_real_imag_conj_complex_values_and_dtypes():
    z = np.array([1 + 2j, -3 - 0.5j, 0j], np.complex64)
    np.testing.assert_array_equal(np.asarray(lax.real(z)), z.real)
    np.testing.assert_array_equal(np.asarray(lax.imag(z)), z.imag)
    np.testing.assert_array_equal(np.asarray(lax.conj(z)), np.conj(z))
    assert lax.real(z).dtype == np.float32
    x = np.array([1.0, -2.0], np.float32)
    c = lax.conj(x)  # a real operand gives a complex result, as in JAX
    assert c.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(c), x.astype(np.complex64))
    w = lax.complex(x, np.float32(3.0))
    assert w.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(w), x + 3j)
    assert lax.complex(1.0, 2.0).weak_type and lax.conj(1.0).weak_type
    assert lax.real(1j).weak_type and lax.real(1j).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(jit(lax.conj)(z)), np.conj(z))
    text = str(make_jaxpr(lax.conj)(z))
    assert "conj[input_dtype=complex64]" in text


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: lax.real(np.ones(2, np.float32)), "real does not accept dtype float32"),
        (lambda: lax.imag(np.ones(2, np.int32)), "imag does not accept dtype int32"),
        (lambda: lax.conj(np.ones(2, np.int32)), "conj does not accept dtype int32"),
        (lambda: lax.complex(np.ones(2, np.float16), 1.0), "complex does not accept"),
        (
            lambda: lax.complex(np.ones(2, np.float32), np.ones(3, np.float32)),
            "incompatible shapes",
        ),
    ],
)
def test_complex_parts_refuse_bad_operands(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_complex_parts_are_linear():
    x = np.float32(1.5)
    assert float(grad(lambda v: lax.real(lax.complex(v, 2 * v)))(x)) == 1.0
    assert float(grad(lambda v: lax.imag(lax.complex(v, 2 * v)))(x)) == 2.0
    assert float(grad(lambda v: lax.real(lax.mul(lax.conj(v), lax.conj(v))))(x)) == 3.0
    z = np.array([1 + 2j, 3 - 1j], np.complex64)
    _, t = jvp(lax.conj, (z,), (z,))
    np.testing.assert_array_equal(np.asarray(t), np.conj(z))
    # the transpose of complex() sums a broadcast rank-0 operand back
    xs = np.ones(3, np.float32)
    _, pullback = vjp(lambda a, b: lax.complex(a, b), xs, np.float32(2.0))
    ct = np.array([1 + 1j, 2 + 2j, 3 + 3j], np.complex64)
    g_a, g_b = pullback(ct)
    np.testing.assert_array_equal(np.asarray(g_a), [1.0, 2.0, 3.0])
    assert np.asarray(g_b).shape == () and float(g_b) == -6.0  # JAX: imag(-ct), summed
    _, pullback = vjp(lax.real, z)
    np.testing.assert_array_equal(np.asarray(pullback(np.ones(2, np.float32))[0]), [1, 1])
    _, pullback = vjp(lax.imag, z)
    np.testing.assert_array_equal(np.asarray(pullback(np.ones(2, np.float32))[0]), [-1j, -1j])


def test_complex_parts_batch():
    z = (np.arange(6) + 1j * np.arange(6)).astype(np.complex64).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(vmap(lax.real)(z)), z.real)
    np.testing.assert_array_equal(np.asarray(vmap(lax.conj, in_axes=1)(z)), np.conj(z).T)
    re = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = vmap(lax.complex, in_axes=(0, None))(re, np.float32(1.0))
    np.testing.assert_array_equal(np.asarray(out), re + 1j)
    out = vmap(lambda a: lax.population_count(a))(np.array([[1, 3], [7, 0]], np.int32))
    np.testing.assert_array_equal(np.asarray(out), [[1, 2], [3, 0]])
