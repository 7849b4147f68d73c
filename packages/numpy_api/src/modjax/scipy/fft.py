"""Discrete cosine transforms in scipy.fft's names (the counterpart of jax.scipy.fft).

Only type 2 exists, as in JAX (``idct`` inverts it, so it is a scaled type 3).
Each 1-D transform is one complex FFT of the same length, after Makhoul (1980):
reorder the signal as its even-indexed samples followed by its odd-indexed ones
reversed, transform, and rotate bin ``k`` by ``exp(-i pi k / 2N)``; twice the
real part is the DCT. The inverse runs those steps backwards. The n-D
transforms are separable: one 1-D transform per axis.

``norm`` is ``None``/``"backward"`` (scipy's unnormalized DCT-II, and its
inverse) or ``"ortho"`` (the orthonormal one); ``"forward"`` raises
ValueError as in JAX. Complex input transforms its real and imaginary parts.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.lax._common import kind, real_dtype
from modjax.lax.bits import _complex_dtype
from modjax.numpy._eager_jit import compile_on_arrays
from modjax.numpy._util import aval, canonicalize_axis, check_arraylike, promote_dtypes_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, x: Any, type: int, norm: str | None):
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")
    return jnp.asarray(x)


def _along(values: np.ndarray, axis: int, ndim: int) -> np.ndarray:
    """Shape a 1-D constant to broadcast along ``axis`` of an ``ndim``-d array."""
    return values.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _rotation(n: int, sign: int, dtype) -> np.ndarray:
    """``exp(sign * i pi k / 2n)`` for ``k < n``: the quarter-sample shift of Makhoul's DCT."""
    return np.exp(sign * 0.5j * np.pi * np.arange(n) / n).astype(dtype)


def _ortho_scale(n: int, dtype) -> np.ndarray:
    """The factors that make DCT-II orthonormal: ``1/sqrt(4n)`` for bin 0, ``1/sqrt(2n)`` else."""
    scale = np.full(n, 1 / math.sqrt(2 * n))
    scale[0] = 1 / math.sqrt(4 * n)
    return scale.astype(dtype)


def _resize(x, axis: int, n: int | None):
    """Zero-pad or crop ``x`` at the end of ``axis`` to length ``n``."""
    if n is None:
        return x
    config = [(0, 0, 0)] * aval(x).ndim
    config[axis] = (0, n - aval(x).shape[axis], 0)
    return lax.pad(x, np.zeros((), aval(x).dtype)[()], config)


def _split_complex(fn, x, *args):
    return lax.complex(fn(jnp.real(x), *args), fn(jnp.imag(x), *args))


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the type-2 discrete cosine transform along ``axis`` (jax.scipy.fft.dct).

    ``n`` zero-pads or crops the input first; ``norm="ortho"`` makes the
    transform orthonormal.
    """
    x = _check("dct", x, type, norm)
    axis = canonicalize_axis(axis, aval(x).ndim)
    return _dctn(x, (axis,), (n,), norm == "ortho")


def _dct(x, axis: int, n: int | None, ortho: bool):
    if kind(aval(x).dtype) == "c":
        return _split_complex(_dct, x, axis, n, ortho)
    ndim = aval(x).ndim
    x = _resize(x, axis, n)
    size = aval(x).shape[axis]
    # evens in order, then odds reversed: the DCT becomes a DFT of the same length
    evens = lax.slice_in_dim(x, 0, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    spectrum = jnp.fft.fft(lax.concatenate([evens, odds], axis), axis=axis)
    dtype = aval(spectrum).dtype
    out = jnp.real(spectrum * _along(_rotation(size, -1, dtype), axis, ndim))
    out = out * 2
    if ortho:
        out = out * _along(_ortho_scale(size, real_dtype(dtype)), axis, ndim)
    return out


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Invert the type-2 discrete cosine transform along ``axis`` (jax.scipy.fft.idct).

    ``idct(dct(x, norm=norm), norm=norm)`` is ``x``; ``n`` zero-pads or crops
    the input first.
    """
    x = _check("idct", x, type, norm)
    axis = canonicalize_axis(axis, aval(x).ndim)
    return _idctn(x, (axis,), (n,), norm == "ortho")


def _idct(x, axis: int, n: int | None, ortho: bool):
    if kind(aval(x).dtype) == "c":
        return _split_complex(_idct, x, axis, n, ortho)
    ndim = aval(x).ndim
    x = _resize(x, axis, n)
    (x,) = promote_dtypes_inexact(x)
    size = aval(x).shape[axis]
    dtype = aval(x).dtype
    # Undo the scaling (bin 0 counts half in the real part), then the rotation:
    # the real part of the inverse DFT is the reordered signal.
    scale = _ortho_scale(size, np.float64)
    weights = 2 * size * (scale if ortho else scale**2)
    factors = (weights * _rotation(size, 1, np.complex128)).astype(_complex_dtype(dtype))
    rotated = x * _along(factors, axis, ndim)
    reordered = jnp.real(jnp.fft.ifft(rotated, axis=axis))
    return _interleave(reordered, axis, size)


def _interleave(v, axis: int, size: int):
    """Invert the reordering of ``dct``: the first half back to the even samples, the rest,
    reversed, to the odd ones."""
    half = (size + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(v, half, size, 1, axis), (axis,))
    if size % 2:
        odds = _resize(odds, axis, half)  # one more even than odd sample: pad, cut below
    pairs = jnp.stack([evens, odds], axis=axis + 1)
    shape = list(aval(v).shape)
    shape[axis] = 2 * half
    return lax.slice_in_dim(jnp.reshape(pairs, shape), 0, size, 1, axis)


def _axes_and_sizes(name: str, x, s, axes):
    ndim = aval(x).ndim
    if s is not None:
        s = [operator.index(s)] if not isinstance(s, Sequence) else [operator.index(n) for n in s]
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(canonicalize_axis(a, ndim) for a in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"jax.scipy.fft.{name}: repeated axes {axes}")
    sizes = (None,) * len(axes) if s is None else tuple(s)
    return axes, sizes


def dctn(x: Any, type: int = 2, s=None, axes=None, norm: str | None = None):
    """Compute the type-2 discrete cosine transform over ``axes`` (jax.scipy.fft.dctn).

    ``axes`` defaults to the last ``len(s)`` axes, or all; ``s`` zero-pads or
    crops the input along them first.
    """
    x = _check("dctn", x, type, norm)
    axes, sizes = _axes_and_sizes("dctn", x, s, axes)
    return _dctn(x, axes, sizes, norm == "ortho")


def idctn(x: Any, type: int = 2, s=None, axes=None, norm: str | None = None):
    """Invert the type-2 discrete cosine transform over ``axes`` (jax.scipy.fft.idctn)."""
    x = _check("idctn", x, type, norm)
    axes, sizes = _axes_and_sizes("idctn", x, s, axes)
    return _idctn(x, axes, sizes, norm == "ortho")


def _dctn(x, axes: tuple[int, ...], sizes: tuple, ortho: bool):
    for axis, n in zip(axes, sizes, strict=True):
        x = _dct(x, axis, n, ortho)
    return x


def _idctn(x, axes: tuple[int, ...], sizes: tuple, ortho: bool):
    for axis, n in zip(axes, sizes, strict=True):
        x = _idct(x, axis, n, ortho)
    return x


# Eagerly, each n-D transform of device Arrays is one compiled program.
compile_on_arrays(globals(), "_dctn _idctn")
