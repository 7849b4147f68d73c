"""lax.fft, modjax.numpy.fft and modjax.scipy.fft against numpy, with their rules.

Values are checked against numpy.fft (computed in float64 from the same
inputs) eagerly and under jit; dtypes against what JAX 0.10 returns (recorded
by hand from jax.eval_shape, with and without x64); derivatives with
check_grads in both modes (x64); vmap against a loop; printed jaxprs parse
back; the errors are JAX's. Shapes come from small pools so that examples
share their compiled programs.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax.numpy as jnp
import modjax.scipy.fft as jsp_fft
from modjax import lax
from modjax.autodiff import grad, vjp
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import check_jaxpr, jaxpr_equal, make_jaxpr, parse_jaxpr
from modjax.tracecore.config import enable_x64

FftType = lax.FftType
SHAPES = [(5,), (1,), (2, 6), (3, 1, 4), (2, 3, 5)]
NORMS = [None, "backward", "ortho", "forward"]


def _real(rng, shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def _complex(rng, shape, dtype=np.complex64):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def _close(got, want, tol=2e-4):
    got = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want), initial=0)))
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol * scale)


# --- lax.fft -----------------------------------------------------------------------------


def _numpy_lax_fft(x, fft_type, lengths):
    axes = tuple(range(x.ndim - len(lengths), x.ndim))
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    if fft_type == FftType.FFT:
        return np.fft.fftn(x, lengths, axes)
    if fft_type == FftType.IFFT:
        return np.fft.ifftn(x, lengths, axes)
    if fft_type == FftType.RFFT:
        return np.fft.rfftn(x, lengths, axes)
    return np.fft.irfftn(x, lengths, axes)


def _lax_operand(rng, shape, fft_type, k):
    lengths = shape[len(shape) - k :]
    if fft_type == FftType.RFFT:
        return _real(rng, shape), lengths
    if fft_type == FftType.IRFFT:  # the half spectrum of real data of those lengths
        full = _real(rng, shape)
        return np.fft.rfftn(full, axes=range(len(shape) - k, len(shape))).astype(
            np.complex64
        ), lengths
    return _complex(rng, shape), lengths


@given(
    shape=st.sampled_from(SHAPES),
    fft_type=st.sampled_from(list(FftType)),
    k=st.integers(1, 3),
    seed=st.integers(0, 2**16),
)
def test_lax_fft_matches_numpy_eager_and_jit(shape, fft_type, k, seed):
    k = min(k, len(shape))
    x, lengths = _lax_operand(np.random.default_rng(seed), shape, fft_type, k)
    want = _numpy_lax_fft(x, fft_type, lengths)
    for fn in (lax.fft, jit(lax.fft, static_argnums=(1, 2))):
        out = fn(x, fft_type, lengths)
        assert out.dtype == (np.float32 if fft_type == FftType.IRFFT else np.complex64)
        _close(out, want)


@pytest.mark.parametrize("fft_type", list(FftType))
def test_lax_fft_over_more_than_three_axes(fft_type):
    # XLA transforms at most three axes at once: the lowering chains transforms.
    x, lengths = _lax_operand(np.random.default_rng(0), (2, 3, 2, 2, 4), fft_type, 4)
    _close(lax.fft(x, fft_type, lengths), _numpy_lax_fft(x, fft_type, lengths))
    x, lengths = _lax_operand(np.random.default_rng(1), (2, 3, 2, 2, 4), fft_type, 5)
    _close(lax.fft(x, fft_type, lengths), _numpy_lax_fft(x, fft_type, lengths))


def test_lax_fft_names_dtypes_and_no_lengths():
    x = np.arange(4, dtype=np.int32)
    assert lax.fft(x, "fft", (4,)).dtype == np.complex64
    assert lax.fft(x, "RFFT", (4,)).dtype == np.complex64
    assert lax.fft(x, "irfft", (6,)).dtype == np.float32
    out = lax.fft(x, FftType.FFT, ())  # no lengths: only the conversion
    assert out.dtype == np.complex64
    np.testing.assert_array_equal(np.asarray(out), x)
    with enable_x64(True):
        assert lax.fft(x.astype(np.int64), "fft", (4,)).dtype == np.complex128
        assert lax.fft(x.astype(np.float64), "rfft", (4,)).dtype == np.complex128
        assert lax.fft(x.astype(np.uint32), "fft", (4,)).dtype == np.complex64
    assert [int(t) for t in FftType] == [0, 1, 2, 3]
    weak = make_jaxpr(lambda x: lax.fft(lax.broadcast(x * 1j, (4,)), "fft", (4,)))(2.0)
    assert not weak.jaxpr.outvars[0].aval.weak_type


def test_gpu_lowering_of_irfft_matches_numpy(monkeypatch):
    # The GPU rule (one IFFT over the leading axes, then a 1-D IRFFT), run on the CPU.
    from modjax.lowering import lowering_rules, platform_lowering_rules

    monkeypatch.setitem(lowering_rules, lax.fft_p, platform_lowering_rules["cuda"][lax.fft_p])
    rng = np.random.default_rng(9)
    c = _complex(rng, (2, 3, 4, 3))  # not Hermitian along the leading axes
    for lengths in ((4, 4), (3, 4, 5), (2, 3, 4, 4)):
        k = len(lengths)
        x = c[(0,) * (4 - k)] if k < 4 else c
        got = jit(lambda x, lengths=lengths: lax.fft(x, "irfft", lengths))(x)
        _close(got, _numpy_lax_fft(x, FftType.IRFFT, lengths))


def test_lax_fft_errors():
    x = np.ones((3, 4), np.float32)
    c = x.astype(np.complex64)
    with pytest.raises(ValueError, match="Unknown FFT type 'bad'"):
        lax.fft(x, "bad", (4,))
    with pytest.raises(TypeError, match="Unknown FFT type value '2'"):
        lax.fft(x, 2, (4,))
    with pytest.raises(ValueError, match=r"minor dimensions must be equal to fft_lengths \(5,\)"):
        lax.fft(c, "fft", (5,))
    with pytest.raises(ValueError, match="must have at least as many input dimensions"):
        lax.fft(c, "fft", (1, 3, 4))
    with pytest.raises(ValueError, match="all except the last fft_length"):
        lax.fft(c, "irfft", (2, 6))
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(c, "rfft", (4,))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got float16"):
        lax.fft(x.astype(np.float16), "rfft", (4,))
    with pytest.raises(ValueError, match="FFT input must be complex64 or complex128"):
        lax.fft_p.bind(x, fft_type=FftType.FFT, fft_lengths=(4,))


@pytest.mark.parametrize("fft_type", list(FftType))
@pytest.mark.parametrize("lengths", [(5,), (6,), (2, 6)])
def test_lax_fft_grads(fft_type, lengths):
    with enable_x64(True):
        rng = np.random.default_rng(len(lengths) + int(fft_type))
        shape = (2, *lengths)
        x, _ = _lax_operand(rng, shape, fft_type, len(lengths))
        x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
        check_grads(lambda x: lax.fft(x, fft_type, lengths), (x,), order=2, modes=("fwd", "rev"))


def test_lax_fft_real_transforms_have_jaxs_cotangents():
    # JAX pairs a cotangent with a tangent bilinearly: Re(sum(ct * dx)), no conjugate.
    # The real transforms are real-linear, so their cotangents follow from the images
    # of unit vectors (and of i times them for a complex input).
    rng = np.random.default_rng(3)
    with enable_x64(True):
        for n in (5, 6):
            m = n // 2 + 1
            x = rng.standard_normal((2, n))
            y = rng.standard_normal((2, m)) + 1j * rng.standard_normal((2, m))
            _, pullback = vjp(lambda x, n=n: lax.fft(x, "rfft", (n,)), x)
            (ct,) = pullback(y)
            columns = np.fft.rfft(np.eye(n), axis=0)  # [k, j]: bin k of unit vector j
            np.testing.assert_allclose(np.asarray(ct), np.real(y @ columns), atol=1e-10)
            _, pullback = vjp(lambda y, n=n: lax.fft(y, "irfft", (n,)), y)
            (ct,) = pullback(x)
            real_part = x @ np.fft.irfft(np.eye(m), n).T  # d<x, irfft(y)> / d Re(y_j)
            imag_part = x @ np.fft.irfft(1j * np.eye(m), n).T  # ... / d Im(y_j)
            np.testing.assert_allclose(np.asarray(ct), real_part - 1j * imag_part, atol=1e-10)


@pytest.mark.parametrize("fft_type", list(FftType))
@pytest.mark.parametrize("in_axis", [0, 1, -1])
def test_lax_fft_vmap_equals_loop(fft_type, in_axis):
    rng = np.random.default_rng(7)
    xs, lengths = _lax_operand(rng, (3, 2, 6), fft_type, 2)
    lengths = lengths[-2:]
    base = np.moveaxis(xs, 0, in_axis)
    batched = vmap(lambda x: lax.fft(x, fft_type, lengths), in_axes=in_axis)(base)
    loop = np.stack([np.asarray(lax.fft(x, fft_type, lengths)) for x in xs])
    _close(batched, loop)


def test_lax_fft_vmap_keeps_a_leading_batch_axis():
    xs = np.ones((4, 3, 6), np.complex64)
    f = vmap(lambda x: lax.fft(x, "fft", (6,)), in_axes=1, out_axes=1)
    text = str(make_jaxpr(f)(xs))
    assert "moveaxis" not in text and "transpose" not in text, text
    xs = np.ones((3, 4, 6), np.complex64)
    text = str(make_jaxpr(vmap(lambda x: lax.fft(x, "fft", (3, 6)), in_axes=1))(xs))
    assert "moveaxis" in text, text  # the batch sits among the transformed axes


def _roundtrip(closed):
    check_jaxpr(closed)
    text = str(closed)
    parsed = parse_jaxpr(text, consts=closed.consts)
    assert jaxpr_equal(parsed, closed), text
    return text, parsed


def test_printed_jaxprs_parse_back():
    x = np.ones((3, 6), np.float32)
    text, parsed = _roundtrip(make_jaxpr(lambda x: lax.fft(x, "rfft", (6,)))(x))
    assert "fft[fft_lengths=(6,) fft_type=2]" in text
    assert parsed.jaxpr.eqns[0].params["fft_type"] is FftType.RFFT
    text, _ = _roundtrip(make_jaxpr(grad(lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)))))(x))
    assert "fft_type=3" in text  # the transpose of rfft is an irfft
    _roundtrip(make_jaxpr(lambda c: jnp.fft.irfft2(c, norm="ortho"))(np.ones((3, 4), np.complex64)))


# --- modjax.numpy.fft --------------------------------------------------------------------

ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_IN = {"rfft", "ihfft", "rfft2", "rfftn"}


def _jnp_operand(rng, name, shape):
    return _real(rng, shape) if name in REAL_IN else _complex(rng, shape)


def _numpy_ref(name, x, **kwargs):
    x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
    return getattr(np.fft, name)(x, **kwargs)


def _out_dtype(name):
    return np.float32 if name in ("irfft", "hfft", "irfft2", "irfftn") else np.complex64


@given(
    name=st.sampled_from(ONE_D),
    shape=st.sampled_from([(6,), (3, 5), (2, 1, 4)]),
    axis=st.sampled_from([-1, 0]),
    n=st.sampled_from([None, 1, 3, 8]),
    norm=st.sampled_from(NORMS),
    seed=st.integers(0, 2**16),
)
def test_one_dimensional_transforms_match_numpy(name, shape, axis, n, norm, seed):
    x = _jnp_operand(np.random.default_rng(seed), name, shape)
    if name in ("irfft", "hfft") and n is None and x.shape[axis] == 1:
        n = 2  # numpy refuses the empty default; JAX returns an empty array (tested below)
    want = _numpy_ref(name, x, n=n, axis=axis, norm=norm)
    fn = getattr(jnp.fft, name)
    for f in (fn, jit(lambda x: fn(x, n, axis, norm))):
        out = f(x, n, axis, norm) if f is fn else f(x)
        assert out.dtype == _out_dtype(name)
        _close(out, want)


MULTI = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]


@given(
    name=st.sampled_from(MULTI),
    case=st.sampled_from(
        [
            (None, None),
            ((4, 3), None),
            (None, (0, 2)),
            ((2, 6), (2, 1)),
            ((3,), (1,)),
            ((3, 2, 4), (0, 1, 2)),
        ]
    ),
    norm=st.sampled_from(NORMS),
    seed=st.integers(0, 2**16),
)
def test_multi_dimensional_transforms_match_numpy(name, case, norm, seed):
    s, axes = case
    if name.endswith("2") and (axes is None and s is not None and len(s) != 2):
        return
    if name.endswith("2") and axes is not None and len(axes) != 2:
        return
    x = _jnp_operand(np.random.default_rng(seed), name, (3, 4, 5))
    kwargs = {"s": s, "norm": norm}
    if axes is not None:
        kwargs["axes"] = axes
    elif s is not None:
        kwargs["axes"] = tuple(range(3 - len(s), 3))  # numpy 2 wants axes with s
    want = _numpy_ref(name, x, **kwargs)
    fn = getattr(jnp.fft, name)
    out = fn(x, **kwargs)
    assert out.dtype == _out_dtype(name)
    _close(out, want)
    _close(jit(lambda x: fn(x, **kwargs))(x), want)


def test_transforms_of_four_and_five_axes():
    rng = np.random.default_rng(5)
    x = _complex(rng, (2, 3, 2, 2, 3))
    _close(jnp.fft.fftn(x), np.fft.fftn(x.astype(np.complex128)))
    _close(jnp.fft.ifftn(x, axes=(0, 1, 3, 4)), np.fft.ifftn(x, axes=(0, 1, 3, 4)))
    r = _real(rng, (2, 3, 2, 2, 4))
    _close(jnp.fft.rfftn(r), np.fft.rfftn(r.astype(np.float64)))
    _close(jnp.fft.irfftn(x, s=(2, 3, 2, 4)), np.fft.irfftn(x, s=(2, 3, 2, 4), axes=(1, 2, 3, 4)))


# Input dtype -> the result dtype JAX 0.10 gives (jax.eval_shape), x64 off and on.
DTYPES_X32 = {
    "fft": {"bool": "complex64", "int8": "complex64", "float16": "complex64",
            "float32": "complex64", "complex64": "complex64"},
    "rfft": {"bool": "complex64", "uint8": "complex64", "int32": "complex64",
             "float32": "complex64"},
    "irfft": {"int8": "float32", "float16": "float32", "complex64": "float32"},
}  # fmt: skip
DTYPES_X64 = {
    "fft": {"int32": "complex64", "uint32": "complex64", "int64": "complex128",
            "uint64": "complex128", "float32": "complex64", "float64": "complex128",
            "complex128": "complex128"},
    "rfft": {"int16": "complex64", "int64": "complex128", "float64": "complex128"},
    "irfft": {"int32": "float32", "int64": "float64", "float64": "float64",
              "complex128": "float64"},
}  # fmt: skip


@pytest.mark.parametrize("x64", [False, True])
def test_result_dtypes_are_jaxs(x64):
    table = DTYPES_X64 if x64 else DTYPES_X32
    with enable_x64(x64):
        for name, cases in table.items():
            for dtype, want in cases.items():
                x = np.ones((2, 4), dtype)
                closed = make_jaxpr(getattr(jnp.fft, name))(x)
                got = closed.jaxpr.outvars[0].aval.dtype
                assert got == np.dtype(want), (name, dtype, got, want)


def test_float64_input_without_x64_is_float32():
    x = np.arange(4.0)  # float64: canonicalized to float32 with x64 off
    assert jnp.fft.fft(x).dtype == np.complex64
    assert jnp.fft.irfft(x).dtype == np.float32


def test_empty_and_degenerate_shapes():
    assert jnp.fft.irfft(jnp.ones((3, 1))).shape == (3, 0)  # JAX: empty, numpy raises
    assert jnp.fft.fft(jnp.ones((0, 4))).shape == (0, 4)
    assert jnp.fft.fft(jnp.ones((3, 0))).shape == (3, 0)
    out = jnp.fft.fftn(jnp.float32(2))  # no axes: only the conversion
    assert out.shape == () and out.dtype == np.complex64 and complex(out) == 2


def test_numpy_fft_errors():
    x = jnp.ones((3, 4))
    with pytest.raises(ValueError, match="Shape should be positive."):
        jnp.fft.fft(x, n=0)
    with pytest.raises(ValueError, match="Shape should be positive."):
        jnp.fft.fft(x, n=-1)
    with pytest.raises(ValueError, match="Shape and axes have different lengths."):
        jnp.fft.fftn(x, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match=r"fftn does not support repeated axes. Got axes \(0, 0\)"):
        jnp.fft.fftn(x, axes=(0, 0))
    with pytest.raises(ValueError, match=r"fft does not support multiple axes. Please use jax"):
        jnp.fft.fft(x, axis=(0, 1))
    with pytest.raises(ValueError, match=r"hfft does not support multiple axes"):
        jnp.fft.hfft(x, axis=(0,))
    with pytest.raises(ValueError, match=r"fft2 only supports 2 axes. Got axes = \(0,\)."):
        jnp.fft.fft2(x, axes=(0,))
    with pytest.raises(ValueError, match='Invalid norm value bad; should be "backward"'):
        jnp.fft.fft(x, norm="bad")
    with pytest.raises(ValueError, match="axis -1 is out of bounds for array of dimension 0"):
        jnp.fft.fft(jnp.float32(1))
    with pytest.raises(ValueError, match="axis 5 is out of bounds for array of dimension 2"):
        jnp.fft.fftn(x, axes=(5,))
    with pytest.raises(TypeError, match="jax.numpy.fft.fft requires ndarray or scalar arguments"):
        jnp.fft.fft([1.0, 2.0])
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        jnp.fft.fft(x, n=2.0)
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        jnp.fft.rfft(x.astype(jnp.complex64))
    with pytest.raises(ValueError, match="RFFT input must be float32 or float64, got float16"):
        jnp.fft.rfft(x.astype(jnp.float16))
    with pytest.raises(TypeError, match="fftshift requires ndarray or scalar arguments"):
        jnp.fft.fftshift([1, 2])


@pytest.mark.parametrize(
    ("name", "kwargs"),
    [
        ("fft", {"n": 7, "norm": "ortho"}),
        ("ifft", {"axis": 0}),
        ("rfft", {"n": 6}),
        ("irfft", {"n": 5, "norm": "forward"}),
        ("hfft", {"n": 6}),
        ("ihfft", {"norm": "ortho"}),
        ("fft2", {}),
        ("irfftn", {"s": (3, 4)}),
    ],
)
def test_numpy_fft_grads(name, kwargs):
    with enable_x64(True):
        rng = np.random.default_rng(11)
        x = _jnp_operand(rng, name, (3, 4))
        x = x.astype(np.complex128 if np.iscomplexobj(x) else np.float64)
        fn = getattr(jnp.fft, name)
        check_grads(lambda x: fn(x, **kwargs), (x,), order=1, modes=("fwd", "rev"))


def test_numpy_fft_vmap_equals_loop():
    rng = np.random.default_rng(2)
    xs = _complex(rng, (3, 4, 5))
    for f in (
        lambda x: jnp.fft.fft(x, axis=0),
        lambda x: jnp.fft.irfft(x, n=6),
        lambda x: jnp.fft.fft2(x, s=(3, 3)),
        lambda x: jnp.fft.fftshift(x),
    ):
        for in_axis in (0, 2):
            batched = vmap(f, in_axes=in_axis)(np.moveaxis(xs, 0, in_axis))
            loop = np.stack([np.asarray(f(x)) for x in xs])
            _close(batched, loop)


@settings(max_examples=6)
@given(
    n=st.integers(1, 9),
    d=st.sampled_from([1.0, 0.1, 2.5]),
)
def test_frequencies_match_numpy(n, d):
    _close(jnp.fft.fftfreq(n, d), np.fft.fftfreq(n, d), tol=1e-6)
    _close(jnp.fft.rfftfreq(n, d), np.fft.rfftfreq(n, d), tol=1e-6)
    assert jnp.fft.fftfreq(n, d).dtype == np.float32


def test_frequency_dtypes_and_errors():
    np.testing.assert_array_equal(jnp.fft.fftfreq(5, dtype=jnp.int32), np.zeros(5, np.int32))
    assert jnp.fft.rfftfreq(5, dtype=jnp.int32).dtype == np.float32  # JAX divides in float
    assert jnp.fft.fftfreq(0).shape == (0,)
    with enable_x64(True):
        assert jnp.fft.fftfreq(4).dtype == np.float64
        assert jnp.fft.fftfreq(4, dtype=jnp.float32).dtype == np.float32
    with pytest.raises(ValueError, match=r"The n argument of jax.numpy.fft.fftfreq only takes an"):
        jnp.fft.fftfreq([1, 2])
    with pytest.raises(ValueError, match=r"The d argument of jax.numpy.fft.rfftfreq only takes a"):
        jnp.fft.rfftfreq(4, d=[1, 2])


@pytest.mark.parametrize("axes", [None, 0, (1,), (0, 2), -1])
def test_shifts_match_numpy(axes):
    x = np.arange(2 * 5 * 4).reshape(2, 5, 4)
    for name in ("fftshift", "ifftshift"):
        out = getattr(jnp.fft, name)(x, axes)
        np.testing.assert_array_equal(np.asarray(out), getattr(np.fft, name)(x, axes))
        assert out.dtype == np.int32


def test_a_normalized_transform_scales_by_jax_factor():
    # JAX computes the factor from the lengths in the result's dtype (prod, sqrt, 1/x),
    # so it rounds as JAX's, complex types included.
    x = jnp.ones((4, 6))
    closed = make_jaxpr(lambda x: jnp.fft.rfft2(x, norm="ortho"))(x)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == [
        "fft",
        "reduce_prod",
        "sqrt",
        "div",
        "mul",
    ]
    np.testing.assert_allclose(np.asarray(jnp.fft.rfft2(x, norm="ortho"))[0, 0], np.sqrt(24))


# --- modjax.scipy.fft --------------------------------------------------------------------


def _dct2(x, axis, norm):
    """The DCT-II by its definition, in float64 (scipy.fft.dct's conventions)."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    n = x.shape[-1]
    k, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    basis = np.cos(np.pi * k * (2 * j + 1) / (2 * n))
    out = 2 * x @ basis.T
    if norm == "ortho":
        out[..., 0] *= np.sqrt(1 / (4 * n))
        out[..., 1:] *= np.sqrt(1 / (2 * n))
    return np.moveaxis(out, -1, axis)


def _resized(x, axis, n):
    if n is None:
        return x
    x = np.moveaxis(x, axis, -1)
    out = np.zeros((*x.shape[:-1], n), x.dtype)
    m = min(n, x.shape[-1])
    out[..., :m] = x[..., :m]
    return np.moveaxis(out, -1, axis)


@given(
    shape=st.sampled_from([(5,), (4,), (1,), (3, 6)]),
    axis=st.sampled_from([0, -1]),
    n=st.sampled_from([None, 3, 7]),
    norm=st.sampled_from([None, "backward", "ortho"]),
    seed=st.integers(0, 2**16),
)
def test_dct_and_idct_match_the_definition(shape, axis, n, norm, seed):
    x = _real(np.random.default_rng(seed), shape)
    want = _dct2(_resized(x, axis, n), axis, norm)
    out = jsp_fft.dct(x, n=n, axis=axis, norm=norm)
    assert out.dtype == np.float32
    _close(out, want)
    _close(jit(lambda x: jsp_fft.dct(x, n=n, axis=axis, norm=norm))(x), want)
    # idct inverts dct (with the same norm), also after padding or cropping
    back = jsp_fft.idct(np.asarray(want, np.float32), axis=axis, norm=norm)
    _close(back, _resized(x, axis, n))


def test_dctn_and_idctn_are_separable_transforms():
    rng = np.random.default_rng(4)
    x = _real(rng, (3, 4, 5))
    for norm in (None, "ortho"):
        want = _dct2(_dct2(_dct2(x, 0, norm), 1, norm), 2, norm)
        _close(jsp_fft.dctn(x, norm=norm), want)
        _close(jsp_fft.idctn(np.asarray(want, np.float32), norm=norm), x)
    want = _dct2(_dct2(_resized(_resized(x, 2, 2), 0, 6), 2, None), 0, None)
    _close(jsp_fft.dctn(x, s=(2, 6), axes=(2, 0)), want)
    want = _dct2(_dct2(_resized(_resized(x, 2, 2), 1, 3), 1, None), 2, None)
    _close(jsp_fft.dctn(x, s=(3, 2)), want)


def test_dct_dtypes_complex_and_grads():
    z = np.array([1 + 2j, 3 - 1j, 0.5j, 2], np.complex64)
    out = jsp_fft.dct(z)
    assert out.dtype == np.complex64
    _close(out, _dct2(z.real, 0, None) + 1j * _dct2(z.imag, 0, None))
    assert jsp_fft.dct(np.arange(4)).dtype == np.float32
    assert jsp_fft.idct(np.arange(4)).dtype == np.float32
    with enable_x64(True):
        x = np.random.default_rng(0).standard_normal((2, 5))
        for f in (jsp_fft.dct, jsp_fft.idct, jsp_fft.dctn):
            check_grads(lambda x, f=f: f(x, norm="ortho"), (x,), order=1, modes=("fwd", "rev"))


def test_dct_errors():
    x = jnp.ones((3, 4))
    for f in (jsp_fft.dct, jsp_fft.idct, jsp_fft.dctn, jsp_fft.idctn):
        with pytest.raises(NotImplementedError, match="Only DCT type 2 is implemented."):
            f(x, type=3)
        with pytest.raises(ValueError, match=f"jax.scipy.fft.{f.__name__}: norm='forward' is"):
            f(x, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(2\) elements, got 4"):
        jsp_fft.dctn(x, s=(2, 3, 4, 5))
