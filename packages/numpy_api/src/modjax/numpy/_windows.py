"""Window functions for signal processing: ``bartlett``, ``blackman``, ``hamming``, ``hanning``,
``kaiser``.

Each returns ``M`` points in the default float dtype (float32, float64 with
x64); ``M`` must be concrete (a static argument under ``jit``), and ``M == 1``
gives ``[1.]``. ``kaiser``'s ``beta`` may be traced (differentiable).
"""

from __future__ import annotations

import math

import numpy as np
from modjax import lax
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _points(name: str, M):
    """The checked length, the default float dtype and the positions ``0 .. M-1`` as floats."""
    M = int(concrete_or_error(M, f"M argument of jnp.{name}"))
    if M < 0:
        raise TypeError(f"jnp.{name}: the window length M must be non-negative, got {M}")
    dtype = dtypes.canonicalize_dtype(np.float64)
    return M, dtype, lax.iota(dtype, M)


def _cosine_sum(name: str, M, coefficients):
    """``sum_k (-1)**k a_k cos(2 pi k n / (M - 1))``: the generalized cosine windows."""
    M, dtype, n = _points(name, M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    phase = lax.mul(n, np.asarray(2 * math.pi / (M - 1), dtype))
    out = lax.full((M,), np.asarray(coefficients[0], dtype))
    for k, a in enumerate(coefficients[1:], start=1):
        term = lax.mul(
            np.asarray(a * (-1) ** k, dtype), lax.cos(lax.mul(phase, np.asarray(k, dtype)))
        )
        out = lax.add(out, term)
    return out


def hamming(M: int):
    """Return the Hamming window of ``M`` points (jax.numpy.hamming)."""
    return _cosine_sum("hamming", M, (0.54, 0.46))


def hanning(M: int):
    """Return the Hann window of ``M`` points (jax.numpy.hanning)."""
    return _cosine_sum("hanning", M, (0.5, 0.5))


def blackman(M: int):
    """Return the Blackman window of ``M`` points (jax.numpy.blackman)."""
    return _cosine_sum("blackman", M, (0.42, 0.5, 0.08))


def bartlett(M: int):
    """Return the Bartlett (triangular) window of ``M`` points (jax.numpy.bartlett)."""
    M, dtype, n = _points("bartlett", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    half = np.asarray((M - 1) / 2, dtype)
    return lax.sub(np.ones((), dtype), lax.abs(lax.div(lax.sub(n, half), half)))


def kaiser(M: int, beta):
    """Return the Kaiser window of ``M`` points with shape parameter ``beta`` (jax.numpy.kaiser)."""
    from ._creation import asarray
    from ._ufuncs import i0

    M, dtype, n = _points("kaiser", M)
    beta = lax.convert_element_type(asarray(beta), dtype)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    alpha = np.asarray((M - 1) / 2, dtype)
    ratio = lax.div(lax.sub(n, alpha), alpha)
    arg = lax.mul(beta, lax.sqrt(lax.sub(np.ones((), dtype), lax.mul(ratio, ratio))))
    return lax.div(i0(arg), i0(beta))
