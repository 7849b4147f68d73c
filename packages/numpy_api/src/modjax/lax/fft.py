"""The ``fft`` primitive: XLA's fast Fourier transforms over the trailing axes.

``fft(x, fft_type, fft_lengths)`` transforms the last ``len(fft_lengths)``
axes of ``x`` (JAX's ``jax.lax.fft``). The four kinds are XLA's:

* ``FFT``/``IFFT``: complex to complex, forward and inverse (the inverse
  divides by the product of the lengths);
* ``RFFT``: real to complex, keeping the ``n // 2 + 1`` non-negative
  frequencies of the last axis;
* ``IRFFT``: the inverse of ``RFFT``, complex to real, reading only those bins.

The primitive is linear: its JVP is itself and its transposes are FFTs too.
The complex transforms are symmetric matrices, so each transposes to itself;
the real ones transpose to each other, weighted by how often a kept bin of the
half spectrum stands for two bins of the full one (the DC bin and, for even
lengths, the Nyquist bin once, the others twice). Leading axes are batch axes
of XLA's op, so vmap only moves a batch axis that lies among the transformed
ones. XLA transforms at most three axes at once; more are lowered as a chain of
transforms of at most three axes each.
"""

from __future__ import annotations

import enum
import math
from functools import partial

import numpy as np

from modjax.autodiff import deflinear
from modjax.batching import batching_rules, moveaxis
from modjax.lowering import hlo, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from . import elementwise as ew
from ._common import aval_of, convert_weak_scalars, kind, real_dtype
from .bits import _complex_dtype, conj

__all__ = ["FftType", "fft", "fft_p"]

# XLA's op handles this many trailing axes in one transform.
_XLA_MAX_AXES = 3


class FftType(enum.IntEnum):
    """Which transform ``fft`` computes (jax.lax.FftType)."""

    FFT = 0  # forward, complex to complex
    IFFT = 1  # inverse, complex to complex
    RFFT = 2  # forward, real to complex
    IRFFT = 3  # inverse, complex to real


_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)


def _to_inexact(dtype: np.dtype) -> np.dtype:
    """JAX's ``to_inexact_dtype``: bools and integers up to 32 bits give float32, 64 bits float64.

    Not the promotion lattice (which would send every integer to the default float).
    """
    if kind(dtype) in "biu":
        return _F64 if dtypes.itemsize_bits(dtype) == 64 else _F32
    return dtype


def _to_complex(dtype: np.dtype) -> np.dtype:
    return _complex_dtype(_to_inexact(dtype))


# The spellings JAX accepts: the member's name in upper or lower case.
_BY_NAME = {name: t for t in FftType for name in (t.name, t.name.lower())}


def _fft_type(fft_type) -> FftType:
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str):
        if fft_type in _BY_NAME:
            return _BY_NAME[fft_type]
        raise ValueError(f"Unknown FFT type '{fft_type}'")
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _fft_abstract_eval(x, *, fft_type, fft_lengths):
    k = len(fft_lengths)
    if k > len(x.shape):
        raise ValueError(
            f"FFT input shape {x.shape} must have at least as many input dimensions as "
            f"fft_lengths {fft_lengths}."
        )
    minor = x.shape[len(x.shape) - k :]
    if fft_type == FftType.RFFT:
        if x.dtype not in (_F32, _F64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if minor != fft_lengths:
            raise ValueError(
                f"RFFT input shape {x.shape} minor dimensions must be equal to fft_lengths "
                f"{fft_lengths}"
            )
        shape = x.shape[: len(x.shape) - k] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return ShapedArray(shape, _to_complex(x.dtype), x.weak_type)
    if kind(x.dtype) != "c":
        name = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{name} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if minor[:-1] != fft_lengths[:-1]:
            raise ValueError(
                f"IRFFT input shape {x.shape} minor dimensions must be equal to all except the "
                f"last fft_length, got fft_lengths={fft_lengths}"
            )
        shape = x.shape[: len(x.shape) - k] + fft_lengths
        return ShapedArray(shape, real_dtype(x.dtype), x.weak_type)
    if minor != fft_lengths:
        raise ValueError(
            f"FFT input shape {x.shape} minor dimensions must be equal to fft_lengths {fft_lengths}"
        )
    return ShapedArray(x.shape, x.dtype, x.weak_type)


# --- lowering ----------------------------------------------------------------------------


def _hlo_fft(x, fft_type: FftType, lengths: tuple[int, ...], shape, dtype):
    aval = ShapedArray(tuple(shape), dtype)
    attr = hlo.FftTypeAttr.get(fft_type.name)
    return hlo.fft(x, attr, list(lengths), results=[ir_type(aval)])


def _hlo_transpose(x, perm, shape, dtype):
    aval = ShapedArray(tuple(shape[p] for p in perm), dtype)
    return hlo.transpose(x, list(perm), results=[ir_type(aval)])


def _lower(x, shape, dtype, fft_type, lengths, irfft_axes=_XLA_MAX_AXES):
    """Lower one transform of any number of axes as XLA transforms of at most three.

    The last three axes (``irfft_axes`` for an IRFFT) transform at once; the axes
    before them are moved to the end, transformed (recursively) as complex axes,
    and moved back. A real forward transform does its real part first, a real
    inverse one last.
    """
    k = len(lengths)
    at_once = irfft_axes if fft_type == FftType.IRFFT else _XLA_MAX_AXES
    if k <= at_once:
        out_shape = _out_shape(shape, fft_type, lengths)
        return _hlo_fft(x, fft_type, lengths, out_shape, _out_dtype(dtype, fft_type)), out_shape
    rank = len(shape)
    inner, outer = lengths[-at_once:], lengths[:-at_once]
    first = rank - k  # the first transformed axis
    split = rank - at_once
    # Brings the outer fft axes to the end (after the inner ones), and back.
    to_end = list(range(first)) + list(range(split, rank)) + list(range(first, split))
    back = list(np.argsort(to_end))

    def outer_pass(x, shape, dtype, complex_type):
        x = _hlo_transpose(x, to_end, shape, dtype)
        moved = [shape[p] for p in to_end]
        x, moved = _lower(x, moved, dtype, complex_type, outer)
        return _hlo_transpose(x, back, moved, dtype), [moved[p] for p in back]

    if fft_type == FftType.IRFFT:
        x, shape = outer_pass(x, shape, dtype, FftType.IFFT)
        return _lower(x, shape, dtype, FftType.IRFFT, inner)
    x, shape = _lower(x, shape, dtype, fft_type, inner)
    dtype = _out_dtype(dtype, fft_type)
    complex_type = FftType.IFFT if fft_type == FftType.IFFT else FftType.FFT
    return outer_pass(x, shape, dtype, complex_type)


def _out_shape(shape, fft_type, lengths):
    k = len(lengths)
    if fft_type == FftType.RFFT:
        return [*shape[: len(shape) - k], *lengths[:-1], lengths[-1] // 2 + 1]
    if fft_type == FftType.IRFFT:
        return [*shape[: len(shape) - k], *lengths]
    return list(shape)


def _out_dtype(dtype, fft_type):
    if fft_type == FftType.RFFT:
        return _to_complex(dtype)
    if fft_type == FftType.IRFFT:
        return real_dtype(dtype)
    return dtype


def _fft_lowering(ctx, x, *, fft_type, fft_lengths, irfft_axes=_XLA_MAX_AXES):
    aval = ctx.avals_in[0]
    out, _ = _lower(x, list(aval.shape), aval.dtype, fft_type, fft_lengths, irfft_axes)
    return out


# cuFFT's multi-axis complex-to-real transform assumes Hermitian symmetry in every
# axis, numpy (and XLA on CPU) only in the last: on GPUs an IRFFT inverts the
# other axes with a complex IFFT first, then the last axis alone (as JAX does).
_fft_lowering_gpu = partial(_fft_lowering, irfft_axes=1)


# --- transformation rules ----------------------------------------------------------------


def _half_spectrum_weights(n: int, bins: int, rank: int, dtype) -> np.ndarray:
    """How many bins of the full spectrum of length ``n`` each kept bin stands for.

    1 for the DC bin and, for even ``n``, the Nyquist bin; 2 for the others.
    Shaped to broadcast along the last of ``rank`` axes.
    """
    weights = np.full(bins, 2, dtype)
    weights[0] = 1
    if n % 2 == 0:
        weights[-1] = 1
    return weights.reshape((1,) * (rank - 1) + (bins,))


def _rfft_transpose(t, fft_lengths):
    # JAX pairs cotangents with tangents bilinearly, so the cotangent of the real
    # x is ct_n = Re(sum_k t_k w^(kn)) over the kept bins k (w = exp(-2 pi i / N)).
    # IRFFT(z)_n = Re(sum_k weight_k z_k w^(-kn)) / N: N * IRFFT(conj(t) / weight)
    # is that sum.
    aval = aval_of(t)
    weights = _half_spectrum_weights(fft_lengths[-1], aval.shape[-1], len(aval.shape), aval.dtype)
    scaled = ew.div(conj(t), weights)
    out = fft(scaled, FftType.IRFFT, fft_lengths)
    return ew.mul(out, np.asarray(math.prod(fft_lengths), aval_of(out).dtype))


def _irfft_transpose(t, fft_lengths):
    # IRFFT(z)_n = Re(sum_k weight_k z_k w^(-kn)) / N is real-linear in z; with the
    # bilinear pairing the cotangent of z_k is conj(weight_k / N * sum_n t_n w^(kn)),
    # the conjugate of the weighted RFFT of t.
    x = fft(t, FftType.RFFT, fft_lengths)
    aval = aval_of(x)
    weights = _half_spectrum_weights(fft_lengths[-1], aval.shape[-1], len(aval.shape), aval.dtype)
    weights = weights / math.prod(fft_lengths)
    return conj(ew.mul(x, weights.astype(aval.dtype)))


def _fft_transpose(t, x, *, fft_type, fft_lengths):
    if fft_type == FftType.RFFT:
        return [_rfft_transpose(t, fft_lengths)]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(t, fft_lengths)]
    return [fft(t, fft_type, fft_lengths)]  # the DFT matrix is symmetric


def _fft_batching_rule(args, dims, *, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d >= len(aval_of(x).shape) - len(fft_lengths):
        x, d = moveaxis(x, d, 0), 0  # a transformed axis position: put the batch in front
    return fft_p.bind(x, fft_type=fft_type, fft_lengths=fft_lengths), d


fft_p = Primitive("fft")
fft_p.def_abstract_eval(_fft_abstract_eval)
fft_p.def_impl(partial(apply_primitive, fft_p))
register_lowering(fft_p, _fft_lowering)
register_lowering(fft_p, _fft_lowering_gpu, platform="cuda")
register_lowering(fft_p, _fft_lowering_gpu, platform="rocm")
deflinear(fft_p, _fft_transpose)
batching_rules[fft_p] = _fft_batching_rule
# Printed as JAX prints it (``fft[fft_lengths=(8,) fft_type=2]``) and read back as the enum.
register_param_printer(fft_p, "fft_type", lambda t: str(int(t)))
register_param_parser(fft_p, "fft_type", lambda text: FftType(int(text)))


def fft(x, fft_type, fft_lengths):
    """Transform the trailing ``len(fft_lengths)`` axes of ``x`` (jax.lax.fft).

    ``fft_type`` is an :class:`FftType` or its name (``"fft"``, ``"IRFFT"``,
    ...). ``RFFT`` takes real input (integers and bools become float32, or
    float64 for 64-bit ones); the others take complex input, real input being
    converted. No lengths return the converted input.
    """
    typ = _fft_type(fft_type)
    (x,) = convert_weak_scalars((x,))
    aval = aval_of(x)
    if typ == FftType.RFFT:
        if kind(aval.dtype) == "c":
            raise ValueError("only real valued inputs supported for rfft")
        dtype = _to_inexact(aval.dtype)
    else:
        dtype = _to_complex(aval.dtype)
    if dtype != aval.dtype or aval.weak_type:  # the result is strongly typed, as in JAX
        x = ew.convert_element_type(x, dtype)
    fft_lengths = tuple(int(n) for n in fft_lengths)
    if not fft_lengths:
        return x  # XLA has no rank-0 transform
    return fft_p.bind(x, fft_type=typ, fft_lengths=fft_lengths)
