"""Convolution, detrending and windowed spectra in scipy.signal's names (jax.scipy.signal).

Direct convolutions are one ``lax.conv_general_dilated`` of the two arrays seen
as a one-image, one-channel batch; ``fftconvolve`` multiplies (real or complex)
n-D FFTs. The spectral functions (``stft``, ``csd``, ``welch``) cut the signal
into overlapping windowed segments and transform each; ``istft`` adds the
inverse transforms back with the window's squared overlap as normalization.
Only the Hann window is built in, as in JAX; other named windows come from
scipy.signal.get_window when scipy is installed.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.batching import vmap
from modjax.lax._common import kind, real_dtype
from modjax.lax.bits import _complex_dtype
from modjax.numpy._eager_jit import compile_on_arrays
from modjax.numpy._util import canonicalize_axis, check_arraylike, promote_dtypes_inexact
from modjax.tracecore.core import concrete_or_error

__all__ = [
    "convolve",
    "convolve2d",
    "correlate",
    "correlate2d",
    "csd",
    "detrend",
    "fftconvolve",
    "istft",
    "stft",
    "welch",
]

_MODES = ("full", "same", "valid")


def _inexact_pair(name: str, in1: Any, in2: Any):
    check_arraylike(name, in1, in2)
    return [jnp.asarray(x) for x in promote_dtypes_inexact(in1, in2)]


def _convolve_nd(in1, in2, mode: str, precision):
    """N-D direct convolution: the smaller array is flipped and slid over the larger."""
    if mode not in _MODES:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(
            "zero-size arrays not supported in convolutions, got shapes "
            f"{in1.shape} and {in2.shape}."
        )
    larger = all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
    if not (larger or smaller):
        raise ValueError("One input must be smaller than the other in every dimension.")
    # "same" centres on the second argument's shape as given, before any swap.
    original_kernel = in2.shape
    if smaller:
        in1, in2 = in2, in1
    kernel = in2.shape
    in2 = jnp.flip(in2)
    if mode == "valid":
        padding = [(0, 0)] * len(kernel)
    elif mode == "same":
        padding = [
            (k - 1 - (o - 1) // 2, k - o + (o - 1) // 2)
            for k, o in zip(kernel, original_kernel, strict=True)
        ]
    else:
        padding = [(k - 1, k - 1) for k in kernel]
    out = lax.conv_general_dilated(
        in1[None, None], in2[None, None], (1,) * len(kernel), padding, precision=precision
    )
    return out[0, 0]


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision=None):
    """Convolve two N-D arrays (jax.scipy.signal.convolve).

    ``method`` is ``"auto"`` or ``"direct"`` (an XLA convolution) or ``"fft"``
    (:func:`fftconvolve`); ``mode`` is ``"full"``, ``"same"`` (the size of
    ``in1``) or ``"valid"``.
    """
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    if method not in ("direct", "auto"):
        raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")
    in1, in2 = _inexact_pair("convolve", in1, in2)
    return _convolve_nd(in1, in2, mode, precision)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision=None):
    """Cross-correlate two N-D arrays, conjugating ``in2`` (jax.scipy.signal.correlate)."""
    check_arraylike("correlate", in1, in2)
    return convolve(in1, jnp.flip(jnp.conj(jnp.asarray(in2))), mode, method, precision)


def _check_2d(name: str, in1: Any, in2: Any, boundary: str, fillvalue: Any):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{name}() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError(f"{name}() only supports 2-dimensional inputs.")
    return _inexact_pair(name, in1, in2)


def convolve2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None
):
    """Convolve two 2-D arrays (jax.scipy.signal.convolve2d); only zero fill at the boundary."""
    in1, in2 = _check_2d("convolve2d", in1, in2, boundary, fillvalue)
    return _convolve_nd(in1, in2, mode, precision)


def correlate2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None
):
    """Cross-correlate two 2-D arrays (jax.scipy.signal.correlate2d); only zero fill.

    As in JAX, correlation is a convolution of the flipped first array with the
    conjugated second, flipped back; when ``in1`` is the smaller array the roles
    swap (and a "full" result is conjugated), which is what JAX returns.
    """
    in1, in2 = _check_2d("correlate2d", in1, in2, boundary, fillvalue)
    smaller = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
    swap = smaller and (mode == "full" or (mode == "valid" and in1.shape != in2.shape))
    if not swap:
        return jnp.flip(_convolve_nd(jnp.flip(in1), jnp.conj(in2), mode, precision))
    out = _convolve_nd(jnp.flip(in2), jnp.conj(in1), mode, precision)
    return jnp.conj(out) if mode == "full" else out


def _fftconvolve_core(in1, in2, mode: str):
    full = tuple(a + b - 1 for a, b in zip(in1.shape, in2.shape, strict=True))
    if mode == "valid":
        larger = all(a >= b for a, b in zip(in1.shape, in2.shape, strict=True))
        smaller = all(a <= b for a, b in zip(in1.shape, in2.shape, strict=True))
        if not (larger or smaller):
            raise ValueError(
                "For 'valid' mode, One input must be at least as large as the other in "
                "every dimension."
            )
        if smaller:
            in1, in2 = in2, in1
    if all(a == 1 or b == 1 for a, b in zip(in1.shape, in2.shape, strict=True)):
        # Every axis is a scaling by one number: the product is the convolution.
        product = in1 * in2
    elif kind(in1.dtype) == "c":
        product = jnp.fft.ifftn(jnp.fft.fftn(in1, full) * jnp.fft.fftn(in2, full), full)
    else:
        product = jnp.fft.irfftn(jnp.fft.rfftn(in1, full) * jnp.fft.rfftn(in2, full), full)
    if mode == "full":
        out = full
    elif mode == "same":
        out = in1.shape
    else:
        out = tuple(a - b + 1 for a, b in zip(in1.shape, in2.shape, strict=True))
    start = tuple((f - o) // 2 for f, o in zip(full, out, strict=True))
    return lax.slice(product, start, tuple(s + o for s, o in zip(start, out, strict=True)))


def fftconvolve(in1: Any, in2: Any, mode: str = "full", axes: Sequence[int] | None = None):
    """Convolve two N-D arrays by FFT (jax.scipy.signal.fftconvolve).

    With ``axes``, only those axes are convolved; the others must agree in
    size and are mapped over.
    """
    in1, in2 = _inexact_pair("fftconvolve", in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in _MODES:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")

    def fn(a, b):
        return _fftconvolve_core(a, b, mode)

    if axes is None:
        return fn(in1, in2)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    axes = tuple(canonicalize_axis(a, in1.ndim) for a in axes)
    mapped = sorted(set(range(in1.ndim)) - set(axes))
    if any(in1.shape[i] != in2.shape[i] for i in mapped):
        raise ValueError(
            f"mapped axes must have same shape; got in1.shape={in1.shape} "
            f"in2.shape={in2.shape} axes={axes}"
        )
    # Innermost vmap takes the lowest mapped axis, so each later one keeps its index.
    for a in mapped:
        fn = vmap(fn, in_axes=a, out_axes=a)
    return fn(in1, in2)


def detrend(data: Any, axis: int = -1, type: str = "linear", bp: Any = 0, overwrite_data=None):
    """Subtract the mean or a piecewise-linear fit along ``axis`` (jax.scipy.signal.detrend).

    ``bp`` lists the breakpoints between linear pieces (static integers).
    """
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ("constant", "linear"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    check_arraylike("detrend", data)
    (x,) = promote_dtypes_inexact(jnp.asarray(data))
    x = jnp.asarray(x)
    if type == "constant":
        return x - jnp.mean(x, axis, keepdims=True)
    n = x.shape[axis]
    cuts = np.unique(np.concatenate([[0], np.ravel(bp), [n]]))
    if cuts[0] < 0 or cuts[-1] > n:
        raise ValueError(
            "Breakpoints must be non-negative and less than length of data along given axis."
        )
    moved = jnp.moveaxis(x, axis, 0)
    flat = jnp.reshape(moved, (n, -1))
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        m = int(hi - lo)
        # As JAX: the least-squares fit by [1, t] (t = (1..m)/m, as scipy) solved by lstsq on
        # the device, then subtracted in place (other bits with a precomputed projection).
        design = jnp.vstack(
            [
                jnp.ones(m, dtype=flat.dtype),
                jnp.arange(1, m + 1, dtype=flat.dtype) / flat.dtype.type(m),
            ]
        ).T
        piece = slice(int(lo), int(hi))
        coef = jnp.linalg.lstsq(design, flat[piece])[0]
        flat = flat.at[piece].add(-jnp.matmul(design, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(jnp.reshape(flat, moved.shape), 0, axis)


def _hann(n: int):
    """The periodic Hann window of length ``n`` (scipy's default ``"hann"``)."""
    if n == 1:
        return jnp.array([1.0])
    return jnp.sin(jnp.linspace(0, np.pi, n, endpoint=False)) ** 2


def _named_window(window: Any, n: int):
    if isinstance(window, str) and window == "hann":
        return _hann(n)
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return get_window(window, n)


def _window(window: Any, nperseg: int | None, length: int, dtype):
    """The window array and the segment length, as scipy's ``_triage_segments``."""
    if isinstance(window, str | tuple):
        n = length if nperseg is None else int(nperseg)
        if n > length:
            warnings.warn(
                f"nperseg={n} is greater than input_length={length!r}, using nperseg={length}",
                stacklevel=3,
            )
            n = length
        return jnp.asarray(_named_window(window, n), dtype), n
    win = jnp.asarray(window, dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise ValueError("window must be 1-D")
    if length < win.size:
        raise ValueError("window is longer than input signal")
    if n != win.size:
        raise ValueError("value specified for nperseg is different from length of window")
    return win, n


def _odd_extension(x, n: int):
    """Extend the last axis by ``n`` points on each side with odd symmetry about the ends."""
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise ValueError(
            f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, "
            f"which is {x.shape[-1] - 1}."
        )
    first, last = x[..., :1], x[..., -1:]
    left = 2 * first - jnp.flip(x[..., 1 : n + 1], -1)
    right = 2 * last - jnp.flip(x[..., -(n + 1) : -1], -1)
    return jnp.concatenate([left, x, right], axis=-1)


def _pad_last(mode: str) -> Callable:
    def pad(x, n):
        return jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode)

    return pad


_BOUNDARIES = {
    "even": _pad_last("reflect"),
    "odd": _odd_extension,
    "constant": _pad_last("edge"),
    "zeros": _pad_last("constant"),
    None: lambda x, n: x,
}


def _segments_fft(x, win, detrend_func, nperseg: int, noverlap: int, nfft: int, sides: str):
    """Window each overlapping segment of the last axis and transform it."""
    length = x.shape[-1]
    if nperseg == 1 and noverlap == 0:
        segs = x[..., None]
    else:
        starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
        # A gather of static windows: row i is x[..., starts[i] : starts[i] + nperseg].
        index = starts[:, None] + np.arange(nperseg)[None, :]
        segs = x[..., index]
    segs = detrend_func(segs)
    if kind(win.dtype) == "c" and kind(segs.dtype) != "c":
        segs = segs.astype(_complex_dtype(segs.dtype))
    segs = jnp.broadcast_to(win, segs.shape) * segs  # explicit: rank promotion may be 'raise'
    if sides == "twosided":
        return jnp.fft.fft(segs, n=nfft)
    return jnp.fft.rfft(jnp.real(segs), n=nfft)


def _static_int(value: Any, what: str) -> int:
    return operator.index(concrete_or_error(value, what))


def _spectral(
    x,
    y,
    fs,
    window,
    nperseg,
    noverlap,
    nfft,
    detrend_type,
    return_onesided: bool,
    scaling: str,
    axis: int,
    mode: str,
    boundary=None,
    padded: bool = False,
):
    """Frequencies, segment times and per-segment spectra (scipy's ``_spectral_helper``)."""
    if boundary not in _BOUNDARIES:
        raise ValueError(
            f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}"
        )
    axis = _static_int(axis, "axis of windowed-FFT")
    if y is None:
        check_arraylike("spectral_helper", x)
        (x,) = promote_dtypes_inexact(x)
        x = jnp.asarray(x)
        axis = canonicalize_axis(axis, x.ndim)
        outer = x.shape[:axis] + x.shape[axis + 1 :]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y = (jnp.asarray(v) for v in promote_dtypes_inexact(x, y))
        axis = canonicalize_axis(axis, x.ndim)
        if x.ndim != y.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = np.broadcast_shapes(
                x.shape[:axis] + x.shape[axis + 1 :], y.shape[:axis] + y.shape[axis + 1 :]
            )
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = real_dtype(result_dtype)
    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg = _window(window, nperseg, x.shape[axis], x.dtype)
    if noverlap is None:
        noverlap = nperseg // 2
    else:
        noverlap = _static_int(noverlap, "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else _static_int(nfft, "nfft of windowed-FFT")
    if y is None and x.size == 0:
        zeros = jnp.zeros(x.shape, freq_dtype)
        return zeros, zeros, jnp.zeros(x.shape, result_dtype)
    if y is not None and (x.size == 0 or y.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        zeros = jnp.zeros(shape, freq_dtype)
        return zeros, zeros, jnp.zeros(shape, result_dtype)
    x = jnp.moveaxis(x, axis, -1)
    if y is not None:
        y = jnp.moveaxis(y, axis, -1)
        # The shorter signal is zero-padded to the longer one's length.
        gap = x.shape[-1] - y.shape[-1]
        if gap < 0:
            x = jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(0, -gap)])
        elif gap > 0:
            y = jnp.pad(y, [(0, 0)] * (y.ndim - 1) + [(0, gap)])
    if nfft < nperseg:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    signals = [x] if y is None else [x, y]
    if boundary is not None:
        signals = [_BOUNDARIES[boundary](s, nperseg // 2) for s in signals]
    if padded:
        extra = -(signals[0].shape[-1] - nperseg) % step % nperseg
        signals = [jnp.pad(s, [(0, 0)] * (s.ndim - 1) + [(0, extra)]) for s in signals]
    if isinstance(detrend_type, str):

        def detrend_func(d):
            return detrend(d, axis=-1, type=detrend_type)
    elif callable(detrend_type):
        detrend_func = detrend_type
    elif not detrend_type:

        def detrend_func(d):
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")
    if scaling == "density":
        scale = 1.0 / (fs * jnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / jnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and any(kind(s.dtype) == "c" for s in signals):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
    if sides == "twosided":
        freqs = jnp.fft.fftfreq(nfft, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp.fft.rfftfreq(nfft, 1 / fs, dtype=freq_dtype)
    spectra = [_segments_fft(s, win, detrend_func, nperseg, noverlap, nfft, sides) for s in signals]
    if y is not None:
        result = jnp.conj(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = jnp.conj(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale
    if sides == "onesided" and mode == "psd":
        # Fold the negative frequencies onto the positive ones (not DC, nor Nyquist if even).
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)
    length = signals[0].shape[-1]
    time = jnp.arange(nperseg / 2, length - nperseg / 2 + 1, step, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - nperseg / 2 / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = jnp.real(result)
    return freqs, time, jnp.moveaxis(result, -1, axis)


def stft(
    x: Any,
    fs=1.0,
    window: Any = "hann",
    nperseg: int = 256,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = False,
    return_onesided: bool = True,
    boundary: str | None = "zeros",
    padded: bool = True,
    axis: int = -1,
):
    """Return ``(freqs, times, Zxx)``, the short-time Fourier transform (jax.scipy.signal.stft).

    The segments' axis is appended after the frequency axis, which replaces ``axis``.
    """
    return _spectral(
        x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
        "spectrum", axis, "stft", boundary, padded,
    )  # fmt: skip


def csd(
    x: Any,
    y: Any,
    fs=1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
):
    """Return ``(freqs, Pxy)``, Welch's cross spectral density estimate (jax.scipy.signal.csd).

    ``average`` is ``"mean"`` or ``"median"`` (bias-corrected) over segments.
    """
    freqs, _, pxy = _spectral(
        x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, "psd"
    )
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                count = pxy.shape[-1]
                # scipy's bias of the median of chi-squared(2) variables over ``count`` segments.
                bias = 1 + sum(1.0 / (k + 1) - 1.0 / k for k in range(2, count, 2))
                if kind(pxy.dtype) == "c":
                    pxy = jnp.median(jnp.real(pxy), axis=-1) + 1j * jnp.median(
                        jnp.imag(pxy), axis=-1
                    )
                else:
                    pxy = jnp.median(pxy, axis=-1)
                pxy = pxy / jnp.asarray(bias, pxy.dtype)
            elif average == "mean":
                pxy = jnp.mean(pxy, axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = jnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(
    x: Any,
    fs=1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    detrend: Any = "constant",
    return_onesided: bool = True,
    scaling: str = "density",
    axis: int = -1,
    average: str = "mean",
):
    """Return ``(freqs, Pxx)``, Welch's power spectral density estimate (jax.scipy.signal.welch)."""
    freqs, pxx = csd(
        x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis,
        average,
    )  # fmt: skip
    return freqs, jnp.real(pxx)


def _overlap_add(frames, step: int):
    """Sum ``(..., nframes, length)`` frames placed ``step`` apart into one signal.

    Each frame is scattered onto its own offset; the index map is static.
    """
    *batch, nframes, length = frames.shape
    size = step * (nframes - 1) + length
    index = (np.arange(nframes)[:, None] * step + np.arange(length)[None, :]).ravel()
    flat = jnp.reshape(frames, (*batch, nframes * length))
    return jnp.zeros((*batch, size), frames.dtype).at[..., index].add(flat)


def istft(
    Zxx: Any,
    fs=1.0,
    window: Any = "hann",
    nperseg: int | None = None,
    noverlap: int | None = None,
    nfft: int | None = None,
    input_onesided: bool = True,
    boundary: bool = True,
    time_axis: int = -1,
    freq_axis: int = -2,
):
    """Return ``(times, x)``, the inverse short-time Fourier transform (jax.scipy.signal.istft)."""
    check_arraylike("istft", Zxx)
    z = jnp.asarray(Zxx)
    if z.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, z.ndim)
    time_axis = canonicalize_axis(time_axis, z.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    z = z.astype(_complex_dtype(z.dtype))
    default = 2 * (z.shape[freq_axis] - 1) if input_onesided else z.shape[freq_axis]
    nperseg = _static_int(nperseg or default, "nperseg: segment length of STFT")
    if nperseg < 1:
        raise ValueError("nperseg must be a positive integer")
    if nfft is None:
        nfft = default + 1 if input_onesided and nperseg == default + 1 else default
    else:
        nfft = _static_int(nfft, "nfft of STFT")
    if nfft < nperseg:
        raise ValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = _static_int(noverlap or nperseg // 2, "noverlap of STFT")
    if noverlap >= nperseg:
        raise ValueError("noverlap must be less than nperseg.")
    step = nperseg - noverlap
    outer = tuple(a for a in range(z.ndim) if a not in (time_axis, freq_axis))
    z = jnp.transpose(z, (*outer, freq_axis, time_axis))
    inverse = jnp.fft.irfft if input_onesided else jnp.fft.ifft
    # (..., nperseg, segments): each column is one segment's samples.
    segs = inverse(z, axis=-2, n=nfft)[..., :nperseg, :]
    if isinstance(window, str | tuple):
        win = jnp.asarray(_named_window(window, nperseg), segs.dtype)
    else:
        win = jnp.asarray(window)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg:
            raise ValueError(f"window must have length of {nperseg}")
    segs = segs * jnp.sum(win)
    frames = jnp.swapaxes(segs * win[:, None], -2, -1)
    x = _overlap_add(frames, step)
    win_sq = jnp.broadcast_to((win * win).astype(frames.dtype), frames.shape[-2:])
    norm = _overlap_add(win_sq, step)
    if boundary:
        half = nperseg // 2
        x, norm = x[..., half:-half], norm[..., half:-half]
    x = x / jnp.where(norm > 1e-10, norm, 1.0)
    if x.ndim > 1 and time_axis != z.ndim - 1:
        x = jnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    # As in JAX, the times count samples along the first axis, even for a batch.
    time = jnp.arange(x.shape[0], dtype=real_dtype(x.dtype)) / fs
    return time, x


# One compiled program per eager call on device Arrays, as JAX's jitted functions.
compile_on_arrays(
    globals(),
    "convolve correlate convolve2d correlate2d fftconvolve detrend stft istft csd welch",
    values={"stft": "fs", "istft": "fs", "csd": "fs", "welch": "fs"},
)
