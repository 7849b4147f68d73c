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

from ._ufuncs import absolute, cos, i0, sqrt

__all__ = ["bartlett", "blackman", "hamming", "hanning", "kaiser"]


def _points(name: str, M):
    """The checked length, the default float dtype and the positions ``0 .. M-1`` as floats."""
    # A negative M fails in lax.full below with JAX's TypeError.
    M = int(concrete_or_error(M, f"M argument of jnp.{name}"))
    dtype = dtypes.canonicalize_dtype(np.float64)
    return M, dtype, lax.iota(dtype, M) if M > 1 else None


# The formulas below are JAX's, term by term and in its order, with Python floats as
# weakly typed scalars: the windows then round exactly as JAX's (numpy's own formulas,
# or constants folded on the host in float64, are 1 ulp off for many points).


def hamming(M: int):
    """Return the Hamming window of ``M`` points (jax.numpy.hamming)."""
    M, dtype, n = _points("hamming", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    return 0.54 - 0.46 * cos(2 * math.pi * n / (M - 1))


def hanning(M: int):
    """Return the Hann window of ``M`` points (jax.numpy.hanning)."""
    M, dtype, n = _points("hanning", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    return 0.5 * (1 - cos(2 * math.pi * n / (M - 1)))


def blackman(M: int):
    """Return the Blackman window of ``M`` points (jax.numpy.blackman)."""
    M, dtype, n = _points("blackman", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    return 0.42 - 0.5 * cos(2 * math.pi * n / (M - 1)) + 0.08 * cos(4 * math.pi * n / (M - 1))


def bartlett(M: int):
    """Return the Bartlett (triangular) window of ``M`` points (jax.numpy.bartlett)."""
    M, dtype, n = _points("bartlett", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    return 1 - absolute(2 * n + 1 - M) / (M - 1)


def kaiser(M: int, beta):
    """Return the Kaiser window of ``M`` points with shape parameter ``beta`` (jax.numpy.kaiser)."""
    M, dtype, n = _points("kaiser", M)
    if M <= 1:
        return lax.full((M,), np.ones((), dtype))
    alpha = 0.5 * (M - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
