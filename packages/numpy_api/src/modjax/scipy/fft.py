"""Discrete cosine transforms in scipy.fft's names (the counterpart of jax.scipy.fft).

Only type 2 exists, as in JAX (``idct`` inverts it, so it is a scaled type 3).
Each 1-D transform is one complex FFT of the same length, after Makhoul (1980):
reorder the signal as its even-indexed samples followed by its odd-indexed ones
reversed, transform, and rotate bin ``k`` by ``exp(-i pi k / 2N)``; twice the
real part is the DCT. The inverse runs those steps backwards. ``dctn`` takes
pairs of axes through one 2-D FFT each, ``idctn`` one axis at a time. Every step
is JAX's, rotations computed in the input's complex type, and nothing is jitted
(JAX's are not): the bits are JAX's.

``norm`` is ``None``/``"backward"`` (scipy's unnormalized DCT-II, and its
inverse) or ``"ortho"`` (the orthonormal one); ``"forward"`` raises
ValueError as in JAX. Complex input transforms its real and imaginary parts.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.lax._common import kind, real_dtype
from modjax.lax.bits import _complex_dtype
from modjax.numpy._util import aval, canonicalize_axis, check_arraylike, promote_dtypes_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def _check(name: str, x: Any, type: int, norm: str | None):
    check_arraylike(name, x)
    if type != 2:
        raise NotImplementedError("Only DCT type 2 is implemented.")
    if norm is not None and norm not in ("backward", "ortho"):
        raise ValueError(f"jax.scipy.fft.{name}: {norm=!r} is not implemented")
    return jnp.asarray(x)


def _split_complex(fn, x, *args, **kwargs):
    """Transform the real and imaginary parts of a complex ``x`` separately."""
    return lax.complex(fn(jnp.real(x), *args, **kwargs), fn(jnp.imag(x), *args, **kwargs))


def _along(x, axis: int, ndim: int):
    """Expand a 1-D ``x`` to broadcast along ``axis`` of an ``ndim``-d array."""
    return lax.expand_dims(x, [a for a in range(ndim) if a != axis])


def _w4(n: int, k):
    """``exp(-i pi k / 2n)`` computed as JAX does: in ``k``'s complex type, divided by
    ``n`` as a complex number (the rotation of Makhoul's DCT)."""
    dtype = aval(k).dtype
    cdtype = dtype if kind(dtype) == "c" else _complex_dtype(dtype)
    k = lax.convert_element_type(k, cdtype)
    n_c = lax.convert_element_type(n, cdtype)
    return jnp.exp(-0.5j * np.pi * k / n_c)


def _ortho_norm(out, axis: int):
    """Divide by ``sqrt(4n)`` at bin 0 and ``sqrt(2n)`` elsewhere along ``axis``."""
    dtype = aval(out).dtype
    n = aval(out).shape[axis]
    factor = lax.concatenate([lax.full((1,), 4, dtype), lax.full((n - 1,), 2, dtype)], 0)
    factor = _along(factor, axis, aval(out).ndim)
    return out / lax.sqrt(factor * n)


def _interleave(x, axis: int):
    """The even-indexed samples in order, then the odd-indexed ones reversed."""
    evens = lax.slice_in_dim(x, None, None, 2, axis)
    odds = lax.rev(lax.slice_in_dim(x, 1, None, 2, axis), (axis,))
    return lax.concatenate([evens, odds], axis)


def _deinterleave(v, axis: int):
    """Invert ``_interleave``: the first half back to the even samples, the rest, reversed,
    to the odd ones."""
    size = aval(v).shape[axis]
    half = (size + 1) // 2
    evens = lax.slice_in_dim(v, 0, half, 1, axis)
    odds = lax.rev(lax.slice_in_dim(v, half, size, 1, axis), (axis,))
    if size % 2:
        odds = _pad(odds, {axis: half})  # one more even than odd sample: pad, cut below
    pairs = jnp.stack([evens, odds], axis=axis + 1)
    shape = list(aval(v).shape)
    shape[axis] = 2 * half
    return lax.slice_in_dim(jnp.reshape(pairs, shape), 0, size, 1, axis)


def _pad(x, sizes: dict):
    """Zero-pad or crop ``x`` at the end of each axis in ``sizes`` to its size."""
    shape = aval(x).shape
    config = [(0, sizes[a] - shape[a] if a in sizes else 0, 0) for a in range(len(shape))]
    return lax.pad(x, jnp.array(0, aval(x).dtype), config)


def dct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Compute the type-2 discrete cosine transform along ``axis`` (jax.scipy.fft.dct).

    ``n`` zero-pads or crops the input first; ``norm="ortho"`` makes the
    transform orthonormal. As JAX's, not one compiled program: op by op eagerly.
    """
    x = _check("dct", x, type, norm)
    if kind(aval(x).dtype) == "c":
        return _split_complex(dct, x, type=type, n=n, axis=axis, norm=norm)
    ndim = aval(x).ndim
    axis = canonicalize_axis(axis, ndim)
    if n is not None:
        x = _pad(x, {axis: n})
    size = aval(x).shape[axis]
    spectrum = jnp.fft.fft(_interleave(x, axis), axis=axis)
    k = _along(jnp.arange(size, dtype=real_dtype(aval(spectrum).dtype)), axis, ndim)
    out = 2 * jnp.real(spectrum * _w4(size, k))
    return _ortho_norm(out, axis) if norm == "ortho" else out


def _dct2(x, axes: tuple[int, int], norm: str | None):
    """The 2-D DCT over ``axes`` from one 2-D FFT (JAX's algorithm, not two 1-D DCTs)."""
    ndim = aval(x).ndim
    axis1, axis2 = axes
    n1, n2 = aval(x).shape[axis1], aval(x).shape[axis2]
    spectrum = jnp.fft.fftn(_interleave(_interleave(x, axis1), axis2), axes=axes)
    dtype = aval(spectrum).dtype
    k1 = _along(jnp.arange(n1, dtype=dtype), axis1, ndim)
    k2 = _along(jnp.arange(n2, dtype=dtype), axis2, ndim)
    mirrored = jnp.roll(jnp.flip(spectrum, axis=axis2), shift=1, axis=axis2)
    out = _w4(n1, k1) * (_w4(n2, k2) * spectrum + _w4(n2, -k2) * mirrored)
    out = 2 * jnp.real(out)
    if norm == "ortho":
        return _ortho_norm(_ortho_norm(out, axis1), axis2)
    return out


def idct(x: Any, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """Invert the type-2 discrete cosine transform along ``axis`` (jax.scipy.fft.idct).

    ``idct(dct(x, norm=norm), norm=norm)`` is ``x``; ``n`` zero-pads or crops
    the input first.
    """
    x = _check("idct", x, type, norm)
    if kind(aval(x).dtype) == "c":
        return _split_complex(idct, x, type=type, n=n, axis=axis, norm=norm)
    ndim = aval(x).ndim
    axis = canonicalize_axis(axis, ndim)
    if n is not None:
        x = _pad(x, {axis: n})
    size = aval(x).shape[axis]
    (x,) = promote_dtypes_inexact(x)
    # The unnormalized inverse scales twice by the orthonormal factors, as JAX's.
    if norm is None or norm == "backward":
        x = _ortho_norm(x, axis)
    x = _ortho_norm(x, axis)
    k = _along(jnp.arange(size, dtype=aval(x).dtype), axis, ndim)
    w4 = _w4(size, k)
    x = x.astype(aval(w4).dtype) / _w4(size, k)
    x = x * 2 * size
    return _deinterleave(jnp.real(jnp.fft.ifft(x, axis=axis)), axis)


def _axes_and_sizes(x, s, axes):
    """JAX's ``s`` and ``axes`` of an n-D transform (axes default to the last ``len(s)``)."""
    ndim = aval(x).ndim
    if s is not None:
        s = [operator.index(s)] if not isinstance(s, Sequence) else list(s)
        if len(s) > ndim:
            raise ValueError(f"s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    elif isinstance(axes, Sequence):
        axes = tuple(canonicalize_axis(a, ndim) for a in axes)
        if len(set(axes)) != len(axes):
            raise ValueError(f"repeated axis: {axes}")
    else:
        axes = (canonicalize_axis(axes, ndim),)
    return axes, s


def _start_nd(nd, one_d, x, type, s, axes, norm):
    """Check an n-D transform's arguments and pad; ``(True, result, None)`` if it is done.

    Complex inputs are transformed in two real halves, and one axis by the 1-D
    ``one_d``; otherwise the padded input and the axes come back to be transformed.
    """
    x = _check(nd.__name__, x, type, norm)
    if kind(aval(x).dtype) == "c":
        return True, _split_complex(nd, x, type=type, s=s, axes=axes, norm=norm), None
    axes, s = _axes_and_sizes(x, s, axes)
    if len(axes) == 1:
        return True, one_d(x, n=s[0] if s is not None else None, axis=axes[0], norm=norm), None
    if s is not None:
        x = _pad(x, dict(zip(axes, s, strict=False)))
    return False, x, axes


def dctn(x: Any, type: int = 2, s=None, axes=None, norm: str | None = None):
    """Compute the type-2 discrete cosine transform over ``axes`` (jax.scipy.fft.dctn).

    ``axes`` defaults to the last ``len(s)`` axes, or all; ``s`` zero-pads or
    crops the input along them first. As JAX's: pairs of axes take one 2-D
    transform each (a last odd axis a 1-D one).
    """
    done, x, axes = _start_nd(dctn, dct, x, type, s, axes, norm)
    if done:
        return x
    if len(axes) == 2:
        return _dct2(x, axes, norm)
    for i in range(0, len(axes), 2):
        x = dctn(x, axes=axes[i : i + 2], norm=norm)
    return x


def idctn(x: Any, type: int = 2, s=None, axes=None, norm: str | None = None):
    """Invert the type-2 discrete cosine transform over ``axes`` (jax.scipy.fft.idctn).

    One 1-D inverse per axis, after ``s`` pads or crops.
    """
    done, x, axes = _start_nd(idctn, idct, x, type, s, axes, norm)
    if done:
        return x
    for axis in axes:
        x = idct(x, axis=axis, norm=norm)
    return x
