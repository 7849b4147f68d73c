"""modjax.numpy.fft: discrete Fourier transforms (the counterpart of ``jax.numpy.fft``).

Every transform is one ``lax.fft`` over the trailing axes: the requested axes
are moved to the end (XLA transforms only the innermost ones), cropped or
zero-padded to the requested sizes, transformed (``lax.fft`` chains XLA's
transforms of at most three axes for more) and moved back. ``norm`` scales
the result: ``"backward"`` (the default) leaves the forward transform
unscaled and divides the inverse by ``n``; ``"ortho"`` divides both by
``sqrt(n)``; ``"forward"`` divides the forward one by ``n``.

Dtypes are JAX's: real and integer inputs of the complex transforms become
complex64 (complex128 from float64 and 64-bit integers, which exist only with
x64 on); ``rfft`` takes float32/float64 (integers become float32, or float64
for 64-bit ones) and rejects complex input.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import real_dtype
from modjax.lax.fft import FftType, _to_inexact

from ._creation import arange, array, asarray
from ._eager_jit import compile_on_arrays
from ._manipulation import moveaxis, roll
from ._ufuncs import conj, multiply
from ._util import (
    ARRAY_TYPES,
    aval,
    canonical_dtype,
    canonicalize_axis,
    check_arraylike,
    to_inexact,
)

__all__ = [
    "fft",
    "fft2",
    "fftfreq",
    "fftn",
    "fftshift",
    "hfft",
    "ifft",
    "ifft2",
    "ifftn",
    "ifftshift",
    "ihfft",
    "irfft",
    "irfft2",
    "irfftn",
    "rfft",
    "rfft2",
    "rfftfreq",
    "rfftn",
]

_NORMS = ("backward", "ortho", "forward")


def _norm_factor(name: str, norm: str | None, lengths: Sequence[int], dtype):
    """The factor ``norm`` multiplies the result of ``lax.fft`` by, or None for none.

    ``lax.fft``'s inverse transforms already divide by the size (the "backward"
    convention); names starting with ``i`` are inverse transforms (``ihfft``
    included: it is a conjugated inverse). JAX computes the factor from the
    lengths as an array of the result's dtype (complex too: a complex square
    root and division), so does this, to round as it does.
    """
    if norm is None or norm == "backward":
        return None
    if norm not in _NORMS:
        raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')
    from ._reductions import prod
    from ._ufuncs import sqrt

    size = prod(array(list(lengths), dtype=dtype))
    inverse = name.startswith("i")
    if norm == "ortho":
        return sqrt(size) if inverse else 1 / sqrt(size)
    return size if inverse else 1 / size


def _as_array(name: str, a: Any):
    check_arraylike(name, a)
    return a if isinstance(a, ARRAY_TYPES) else asarray(a)


def _resize(a, axes: tuple[int, ...], sizes: tuple[int, ...]):
    """Crop or zero-pad ``a`` at the end of each of ``axes`` to ``sizes`` (one ``lax.pad``)."""
    shape = aval(a).shape
    config = [(0, 0, 0)] * len(shape)
    for ax, n in zip(axes, sizes, strict=True):
        config[ax] = (0, n - shape[ax], 0)
    if all(hi == 0 for _, hi, _ in config):
        return a
    return lax.pad(a, np.zeros((), aval(a).dtype)[()], config)


def _transform(name: str, fft_type: FftType, a, s, axes, norm):
    """Transform ``a`` over ``axes`` (default: the last ``len(s)``, or all) to sizes ``s``."""
    full_name = f"jax.numpy.fft.{name}"
    a = _as_array(full_name, a)
    ndim = aval(a).ndim
    if s is not None:
        s = tuple(operator.index(n) for n in s)
        if any(n <= 0 for n in s):
            raise ValueError("Shape should be positive.")
        if axes is not None and len(s) != len(axes):
            raise ValueError("Shape and axes have different lengths.")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(canonicalize_axis(ax, ndim) for ax in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    trailing = tuple(range(ndim - len(axes), ndim))
    if axes != trailing:
        a = moveaxis(a, axes, trailing)
    shape = aval(a).shape
    if s is None:
        lengths = [shape[ax] for ax in trailing]
        if fft_type == FftType.IRFFT and lengths:
            lengths[-1] = max(0, 2 * (lengths[-1] - 1))  # the full spectrum of an even length
        lengths = tuple(lengths)
    else:
        lengths = s
        sizes = list(s)
        if fft_type == FftType.IRFFT:
            sizes[-1] = s[-1] // 2 + 1  # the half spectrum that length reads
        a = _resize(a, trailing, tuple(sizes))
    out = lax.fft(a, fft_type, lengths)
    factor = _norm_factor(name, norm, lengths, aval(out).dtype)
    if factor is not None:
        out = multiply(out, factor)
    if axes != trailing:
        out = moveaxis(out, trailing, axes)
    return out


def _one_axis(name: str, axis: Any) -> None:
    if isinstance(axis, list | tuple):
        full_name = f"jax.numpy.fft.{name}"
        raise ValueError(
            f"{full_name} does not support multiple axes. Please use {full_name}n. "
            f"Got axis = {axis!r}."
        )


def _transform_1d(name: str, fft_type: FftType, a, n, axis, norm):
    _one_axis(name, axis)
    return _transform(name, fft_type, a, None if n is None else [n], [axis], norm)


def _transform_2d(name: str, fft_type: FftType, a, s, axes, norm):
    if len(axes) != 2:
        raise ValueError(f"jax.numpy.fft.{name} only supports 2 axes. Got axes = {axes!r}.")
    return _transform(name, fft_type, a, s, axes, norm)


def fft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the one-dimensional discrete Fourier transform along ``axis`` (jax.numpy.fft.fft).

    ``n`` crops or zero-pads the input along ``axis`` first.
    """
    return _transform_1d("fft", FftType.FFT, a, n, axis, norm)


def ifft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the one-dimensional inverse discrete Fourier transform (jax.numpy.fft.ifft)."""
    return _transform_1d("ifft", FftType.IFFT, a, n, axis, norm)


def rfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the transform of real input: ``n // 2 + 1`` bins (jax.numpy.fft.rfft)."""
    return _transform_1d("rfft", FftType.RFFT, a, n, axis, norm)


def irfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Invert ``rfft``: real, of length ``n`` (default ``2 * (m - 1)``) (jax.numpy.fft.irfft)."""
    return _transform_1d("irfft", FftType.IRFFT, a, n, axis, norm)


def hfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the real transform of a Hermitian-symmetric signal's half (jax.numpy.fft.hfft).

    The result has length ``n`` (default ``2 * (m - 1)``); it is ``irfft`` of the
    conjugate, scaled by ``n``.
    """
    _one_axis("hfft", axis)
    a = conj(_as_array("jax.numpy.fft.hfft", a))
    size = (aval(a).shape[canonicalize_axis(axis, aval(a).ndim)] - 1) * 2 if n is None else n
    return multiply(_transform_1d("hfft", FftType.IRFFT, a, n, axis, norm), size)


def ihfft(a: Any, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Invert ``hfft``: the conjugated half spectrum of a real signal (jax.numpy.fft.ihfft)."""
    _one_axis("ihfft", axis)
    a = _as_array("jax.numpy.fft.ihfft", a)
    size = aval(a).shape[canonicalize_axis(axis, aval(a).ndim)] if n is None else n
    out = _transform_1d("ihfft", FftType.RFFT, a, n, axis, norm)
    return multiply(conj(out), 1 / size)


def fft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm=None):
    """Compute the two-dimensional discrete Fourier transform over ``axes`` (jax.numpy.fft.fft2)."""
    return _transform_2d("fft2", FftType.FFT, a, s, axes, norm)


def ifft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm=None):
    """Compute the two-dimensional inverse discrete Fourier transform (jax.numpy.fft.ifft2)."""
    return _transform_2d("ifft2", FftType.IFFT, a, s, axes, norm)


def rfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm=None):
    """Compute the two-dimensional transform of real input (jax.numpy.fft.rfft2)."""
    return _transform_2d("rfft2", FftType.RFFT, a, s, axes, norm)


def irfft2(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm=None):
    """Invert ``rfft2`` to a real array (jax.numpy.fft.irfft2)."""
    return _transform_2d("irfft2", FftType.IRFFT, a, s, axes, norm)


def fftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm=None):
    """Compute the n-dimensional discrete Fourier transform over ``axes`` (jax.numpy.fft.fftn).

    ``axes`` defaults to the last ``len(s)`` axes, or all of them; ``s`` crops
    or zero-pads the input along them first.
    """
    return _transform("fftn", FftType.FFT, a, s, axes, norm)


def ifftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm=None):
    """Compute the n-dimensional inverse discrete Fourier transform (jax.numpy.fft.ifftn)."""
    return _transform("ifftn", FftType.IFFT, a, s, axes, norm)


def rfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm=None):
    """Compute the n-dimensional transform of real input (jax.numpy.fft.rfftn).

    The last axis keeps its ``s[-1] // 2 + 1`` non-negative frequencies.
    """
    return _transform("rfftn", FftType.RFFT, a, s, axes, norm)


def irfftn(a: Any, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm=None):
    """Invert ``rfftn`` to a real array of sizes ``s`` (jax.numpy.fft.irfftn)."""
    return _transform("irfftn", FftType.IRFFT, a, s, axes, norm)


# --- frequencies and shifts --------------------------------------------------------------


def _check_freq_args(name: str, n: Any, d: Any) -> None:
    if isinstance(n, list | tuple):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = {list(n)}."
        )
    if isinstance(d, list | tuple):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{name} only takes a single value. Got d = {list(d)}."
        )


def _default_float(dtype: Any, name: str) -> np.dtype:
    return canonical_dtype(float if dtype is None else dtype, name)


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None):
    """Return the sample frequencies of an ``n``-point transform (jax.numpy.fft.fftfreq).

    ``[0, 1, ..., (n - 1) // 2, -(n // 2), ..., -1] / (d * n)`` for sample spacing ``d``,
    computed in the floating type of ``dtype`` and returned as ``dtype``.
    """
    dtype = _default_float(dtype, "fftfreq")
    _check_freq_args("fftfreq", n, d)
    work = real_dtype(_to_inexact(dtype))
    if type(d) in (int, float):  # known values: numpy computes the same float32 divisions
        k = (np.arange(n, dtype=work) + n // 2) % n - n // 2
        return asarray((k / np.asarray(d * n, work)).astype(dtype), device=device)
    i = arange(n, dtype=work, device=device)
    k = (i + n // 2) % n - n // 2
    return (k / array(d * n, dtype=work, device=device)).astype(dtype)


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None):
    """Return the sample frequencies of an ``n``-point ``rfft`` (jax.numpy.fft.rfftfreq).

    ``[0, 1, ..., n // 2] / (d * n)``.
    """
    dtype = _default_float(dtype, "rfftfreq")
    _check_freq_args("rfftfreq", n, d)
    if type(d) in (int, float):  # known values: computed on the host, as in fftfreq
        out = to_inexact(dtype)  # true division of integers gives the default float
        k = np.arange(0, n // 2 + 1, dtype=dtype).astype(out)
        return asarray(k / np.asarray(d * n, out), device=device)
    k = arange(0, n // 2 + 1, dtype=dtype, device=device)
    return k / array(d * n, dtype=dtype, device=device)


def _shifts(x, axes, sign: int):
    shape = aval(x).shape
    if axes is None:
        return tuple(range(len(shape))), [sign * (n // 2) for n in shape]
    if isinstance(axes, int):
        return axes, sign * (shape[axes] // 2)
    return axes, [sign * (shape[ax] // 2) for ax in axes]


def fftshift(x: Any, axes: None | int | Sequence[int] = None):
    """Move the zero-frequency bin to the centre of ``axes`` (jax.numpy.fft.fftshift).

    ``axes`` defaults to all of them.
    """
    x = _as_array("fftshift", x)
    axes, shift = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x: Any, axes: None | int | Sequence[int] = None):
    """Undo ``fftshift``: move the centre bin back to index 0 (jax.numpy.fft.ifftshift)."""
    x = _as_array("ifftshift", x)
    axes, shift = _shifts(x, axes, -1)
    return roll(x, shift, axes)


# JAX jits none of its transforms: eagerly each step is its own computation, the norm's
# factor included (one program would fold it as a constant, rounding it otherwise).
compile_on_arrays(globals(), "fftshift ifftshift")
