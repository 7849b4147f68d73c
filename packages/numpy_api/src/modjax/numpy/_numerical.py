"""Numerical analysis and statistics: ``interp``, ``gradient``, ``trapezoid``, ``unwrap``,
``cov``, ``corrcoef``, ``histogram2d``, ``histogramdd``.

All are compositions of ``modjax.numpy`` operations on static shapes, so they
work eagerly, under ``jit``, ``grad`` and ``vmap``. Result dtypes are JAX's:
inexact (integers compute in the default float), except that ``unwrap`` keeps the
promoted dtype of ``p`` and ``period`` and ``histogramdd`` without weights counts in
the default integer.
"""

from __future__ import annotations

import builtins
import math
import operator
from collections.abc import Sequence

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.tracecore import dtypes

from ._creation import asarray, zeros
from ._cumulative import bincount, cumsum, diff, histogram_bin_edges
from ._eager_jit import compile_on_arrays
from ._indexing import take
from ._manipulation import (
    atleast_2d,
    broadcast_to,
    concatenate,
    reshape,
    squeeze,
    stack,
)
from ._products import diagonal, dot
from ._reductions import sum as _sum
from ._selection import clip, where
from ._sorting import argsort, searchsorted
from ._ufuncs import abs as _abs
from ._ufuncs import conj, imag, mod, real, sqrt
from ._util import (
    aval,
    canonicalize_axis,
    check_arraylike,
    promote_dtypes,
    promote_dtypes_inexact,
)

__all__ = [
    "corrcoef",
    "cov",
    "gradient",
    "histogram2d",
    "histogramdd",
    "interp",
    "trapezoid",
    "unwrap",
]


def _slice(x, axis: int, start, stop):
    """``x[..., start:stop, ...]`` along ``axis``."""
    index = [slice(None)] * aval(x).ndim
    index[axis] = slice(start, stop)
    return x[tuple(index)]


# --- interpolation --------------------------------------------------------------------------------


def _edge_value(name: str, value, default, extrapolated):
    if value is None:
        return default
    if isinstance(value, str):
        if value != "extrapolate":
            raise ValueError(
                f"the only valid string value of `{name}` is 'extrapolate', but got: {value!r}"
            )
        return extrapolated
    return value


def interp(x, xp, fp, left=None, right=None, period=None):
    """Return the piecewise linear interpolant of ``(xp, fp)`` at ``x`` (jax.numpy.interp).

    ``xp`` is increasing (unless ``period`` is given: then ``x`` and ``xp`` are
    taken modulo ``period``); outside it the result is ``left``/``right``
    (default ``fp[0]``/``fp[-1]``, or ``"extrapolate"`` to extend the end segments).
    """
    check_arraylike("interp", x, xp, fp)
    x, xp = (asarray(v) for v in promote_dtypes_inexact(x, xp))
    (fp,) = (asarray(v) for v in promote_dtypes_inexact(fp))
    if kind(aval(x).dtype) == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if aval(xp).ndim != 1 or aval(fp).ndim != 1 or aval(xp).shape != aval(fp).shape:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    n = aval(xp).shape[0]
    if n == 0:
        raise ValueError("jnp.interp: xp and fp must not be empty")
    if period is not None:
        check_arraylike("interp", period)
        period = _abs(asarray(period))
        x, xp = mod(x, period), mod(xp, period)
        order = argsort(xp)
        xp, fp = take(xp, order), take(fp, order)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
        n += 2
    if n == 1:
        inside = broadcast_to(fp[0], aval(x).shape)
        low = high = inside
    else:
        i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1, f0, f1 = take(xp, i - 1), take(xp, i), take(fp, i - 1), take(fp, i)
        dx = x1 - x0
        # A zero-width segment would divide by zero (and give NaN gradients): take its left value.
        zero_width = _abs(dx) <= 10 * dtypes.finfo(aval(dx).dtype).eps
        slope = (f1 - f0) / where(zero_width, 1, dx)
        inside = where(zero_width, f0, f0 + (x - x0) * slope)
        low = fp[0] + (x - xp[0]) * (fp[1] - fp[0]) / (xp[1] - xp[0])
        high = fp[-1] + (x - xp[-1]) * (fp[-1] - fp[-2]) / (xp[-1] - xp[-2])
    if period is None:
        inside = where(x < xp[0], _edge_value("left", left, fp[0], low), inside)
        inside = where(x > xp[-1], _edge_value("right", right, fp[-1], high), inside)
    return asarray(inside)


# --- derivatives and integrals --------------------------------------------------------------------


def _gradient_along(f, h, axis: int):
    """The second-order accurate central difference of ``f`` along ``axis`` with spacing ``h``
    (a scalar, or the 1-D coordinates); first-order one-sided at the two ends."""
    n = aval(f).shape[axis]
    if n < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, at least 2 elements are "
            "required."
        )
    shape = [1] * aval(f).ndim
    shape[axis] = -1
    if aval(h).ndim == 0:
        interior = (_slice(f, axis, 2, None) - _slice(f, axis, None, -2)) / (2 * h)
        first = (_slice(f, axis, 1, 2) - _slice(f, axis, 0, 1)) / h
        last = (_slice(f, axis, -1, None) - _slice(f, axis, -2, -1)) / h
    else:
        if aval(h).shape[0] != n:
            raise ValueError(
                "Spacing arrays must have the same length as the dimension along which the "
                "gradient is calculated."
            )
        dx = reshape(diff(h), shape)
        d1, d2 = _slice(dx, axis, None, -1), _slice(dx, axis, 1, None)
        a = -d2 / (d1 * (d1 + d2))
        b = (d2 - d1) / (d1 * d2)
        c = d1 / (d2 * (d1 + d2))
        interior = (
            a * _slice(f, axis, None, -2)
            + b * _slice(f, axis, 1, -1)
            + c * _slice(f, axis, 2, None)
        )
        first = (_slice(f, axis, 1, 2) - _slice(f, axis, 0, 1)) / _slice(dx, axis, 0, 1)
        last = (_slice(f, axis, -1, None) - _slice(f, axis, -2, -1)) / _slice(dx, axis, -1, None)
    return concatenate([first, interior, last], axis)


def gradient(f, *varargs, axis: int | Sequence[int] | None = None, edge_order: int | None = None):
    """Return the gradient of ``f`` by central differences (jax.numpy.gradient).

    ``varargs`` give the spacing: none (1), one scalar or 1-D coordinate array
    for all axes, or one per axis. One axis gives an array, several a list.
    ``edge_order`` is not supported, as in JAX.
    """
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    check_arraylike("gradient", f, *varargs)
    f, *spacing = (asarray(v) for v in promote_dtypes_inexact(f, *varargs))
    ndim = aval(f).ndim
    if axis is None:
        axes = tuple(range(ndim))
    elif isinstance(axis, Sequence):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if not axes:
        return []
    if not spacing:  # a unit spacing typed like f, weak type included (as JAX's)
        spacing = [lax.full_like(f, 1, shape=())] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    if any(aval(h).ndim > 1 for h in spacing):
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    out = [_gradient_along(f, h, a) for h, a in zip(spacing, axes, strict=True)]
    return out[0] if len(out) == 1 else out


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """Integrate ``y`` along ``axis`` with the trapezoidal rule (jax.numpy.trapezoid).

    The sample points are ``x`` (1-D along ``axis``, or broadcasting with ``y``),
    else evenly spaced ``dx`` apart.
    """
    if x is None:
        check_arraylike("trapezoid", y, dx)
        # As JAX: y is made inexact alone; dx enters by ordinary promotion.
        (y,) = promote_dtypes_inexact(y)
        y, dx = asarray(y), asarray(dx)
        axis = canonicalize_axis(axis, aval(y).ndim)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = (asarray(v) for v in promote_dtypes_inexact(y, x))
        axis = canonicalize_axis(axis, aval(y).ndim)
        if aval(x).ndim == 1:
            shape = [1] * aval(y).ndim
            shape[axis] = -1
            dx = reshape(diff(x), shape)
        else:
            dx = diff(x, axis=axis)
    return _sum(dx * (_slice(y, axis, 1, None) + _slice(y, axis, None, -1)) / 2, axis=axis)


def unwrap(p, discont=None, axis: int = -1, period=2 * math.pi):
    """Unwrap the phase ``p`` along ``axis`` (jax.numpy.unwrap).

    Jumps between neighbours larger than ``max(discont, period / 2)`` are
    replaced by their complement modulo ``period``.
    """
    check_arraylike("unwrap", p, period)
    p, period = (asarray(v) for v in promote_dtypes(p, period))
    if aval(p).ndim == 0:
        raise IndexError("jnp.unwrap needs an array of at least one dimension, got shape ()")
    axis = canonicalize_axis(axis, aval(p).ndim)
    integer = kind(aval(p).dtype) in "iu"
    dd = diff(p, axis=axis)
    if integer:
        high, rem = period // 2, period % 2
        ambiguous = rem == 0
    else:
        high, ambiguous = period / 2, True
    discont = high if discont is None else discont
    low = -high
    ddmod = mod(dd - low, period) + low
    ddmod = where(ambiguous & (ddmod == low) & (dd > 0), high, ddmod)
    correction = where(_abs(dd) < discont, 0, ddmod - dd)
    if aval(p).shape[axis] == 0:
        return p
    head = _slice(p, axis, 0, 1)
    tail = _slice(p, axis, 1, None) + cumsum(correction, axis=axis).astype(aval(p).dtype)
    return concatenate([head, tail], axis)


# --- statistics -----------------------------------------------------------------------------------


def _weights(name: str, w, n: int, integer: bool):
    w = asarray(w)
    if aval(w).ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if aval(w).shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if integer and kind(aval(w).dtype) not in "iu":
        raise TypeError(f"{name} must be integer.")
    return w


def cov(
    m,
    y=None,
    rowvar: bool = True,
    bias: bool = False,
    ddof: int | None = None,
    fweights=None,
    aweights=None,
    dtype=None,
):
    """Return the covariance matrix of the variables in ``m`` (and ``y``) (jax.numpy.cov).

    Each row is a variable (each column with ``rowvar=False``); ``ddof``
    defaults to 1 (0 with ``bias``); ``fweights`` (integer frequencies) and
    ``aweights`` (observation weights) weight the observations.
    """
    check_arraylike("cov", m)
    if aval(asarray(m)).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    X = atleast_2d(asarray(m))
    if not rowvar and aval(X).shape[0] != 1:
        X = X.T
    if y is not None:
        check_arraylike("cov", y)
        if aval(asarray(y)).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        Y = atleast_2d(asarray(y))
        if not rowvar and aval(Y).shape[0] != 1:
            Y = Y.T
        X, Y = promote_dtypes(X, Y)
        X = concatenate([X, Y], axis=0)
    (X,) = promote_dtypes_inexact(X)
    if dtype is not None:
        X = asarray(X).astype(dtype)
    X = asarray(X)
    ddof = (0 if bias else 1) if ddof is None else operator.index(ddof)
    n = aval(X).shape[1]
    w = None
    if fweights is not None:
        w = _weights("fweights", fweights, n, integer=True)
    if aweights is not None:
        a = _weights("aweights", aweights, n, integer=False)
        w = a if w is None else w * a
    if w is None:
        avg = _sum(X, axis=1) / n
        fact = n - ddof
    else:
        w = w.astype(aval(real(X)).dtype)
        w_sum = _sum(w)
        avg = _sum(X * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * _sum(w * asarray(aweights)) / w_sum
    X = X - avg[:, None]
    X_T = (X if w is None else X * w).T
    c = dot(X, conj(X_T)) / fact
    return squeeze(c).astype(aval(X).dtype)


def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Return the Pearson correlation coefficients of the variables (jax.numpy.corrcoef).

    Rows are variables (columns with ``rowvar=False``); the coefficients are
    clipped to [-1, 1] (real and imaginary parts separately for complex input).
    """
    check_arraylike("corrcoef", x)
    c = cov(x, y, rowvar, dtype=dtype)
    if aval(c).ndim == 0:
        return c / c
    std = sqrt(real(diagonal(c)))
    c = c / std[:, None] / std[None, :]
    if kind(aval(c).dtype) == "c":
        return (clip(real(c), -1, 1) + 1j * clip(imag(c), -1, 1)).astype(aval(c).dtype)
    return clip(c, -1, 1)


# --- multidimensional histograms ------------------------------------------------------------------


def histogramdd(sample, bins=10, range=None, weights=None, density: bool | None = None):  # noqa: A002
    """Return the histogram of the ``(N, D)`` points in ``sample`` and its edges
    (jax.numpy.histogramdd).

    ``bins`` is one count for every dimension, or per dimension a count or an
    array of edges; ``range`` gives each dimension's ``(min, max)`` (or None).
    Each bin is half-open except the last along each dimension. Without
    ``weights`` the counts are integers; ``density`` normalizes by the total and
    the bin volumes.
    """
    if weights is None:
        check_arraylike("histogramdd", sample)
        (sample,) = promote_dtypes_inexact(sample)
    else:
        check_arraylike("histogramdd", sample, weights)
        sample, weights = promote_dtypes_inexact(sample, weights)
        weights = asarray(weights)
    sample = asarray(sample)
    if aval(sample).ndim != 2:
        raise ValueError(
            f"jnp.histogramdd: sample must be a 2-D array of N points in D dimensions, got shape "
            f"{aval(sample).shape}"
        )
    N, D = aval(sample).shape
    if weights is not None and aval(weights).shape != (N,):
        raise ValueError("should have one weight for each sample.")
    if range is not None and (len(range) != D or any(r is not None and len(r) != 2 for r in range)):
        raise ValueError(
            f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or Nones; "
            f"got range={range}"
        )
    if not isinstance(bins, Sequence) and np.ndim(bins) == 0:
        bins = [bins] * D
    elif len(bins) != D:
        raise ValueError("should be a bin for each dimension.")
    dtype = aval(sample).dtype
    edges, cells = [], []
    index = zeros((N,), dtype=np.int32)
    stride = 1
    for d in reversed(builtins.range(D)):
        b = bins[d]
        e = histogram_bin_edges(sample[:, d], b, None if range is None else range[d])
        e = asarray(e).astype(dtype)
        n_edges = aval(e).shape[0]
        column = sample[:, d]
        # Bin i + 1 holds [e[i], e[i + 1]); 0 and n_edges hold what is outside; the last
        # edge belongs to the last bin.
        at = searchsorted(e, column, side="right")
        at = where(column == e[-1], n_edges - 1, at)
        index = index + at * stride
        stride *= n_edges + 1
        edges.insert(0, e)
        cells.insert(0, n_edges + 1)
    counts = bincount(index, weights, length=stride)
    counts = reshape(counts, tuple(cells))
    counts = counts[tuple(slice(1, -1) for _ in cells)]
    if density:
        total = _sum(counts)
        for d, e in enumerate(edges):
            shape = [1] * D
            shape[d] = -1
            counts = counts / reshape(diff(e), shape)
        counts = counts / total
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density: bool | None = None):  # noqa: A002
    """Return the 2-D histogram of the points ``(x, y)`` and its edges (jax.numpy.histogram2d).

    ``bins`` is a count or edges for both dimensions, or a pair of them;
    ``range``, ``weights`` and ``density`` as in ``histogramdd``.
    """
    check_arraylike("histogram2d", x, y)
    x, y = (asarray(v) for v in promote_dtypes(x, y))
    if aval(x).shape != aval(y).shape or aval(x).ndim != 1:
        raise TypeError(
            f"jnp.histogram2d: x and y must be 1-D arrays of the same length, got shapes "
            f"{aval(x).shape} and {aval(y).shape}"
        )
    # As numpy: two entries are per-dimension bins, any other length is edges shared by both.
    if (not isinstance(bins, Sequence) and np.ndim(bins) == 0) or len(bins) != 2:
        bins = [bins, bins]
    counts, (ex, ey) = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return counts, ex, ey


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "corrcoef cov histogram2d histogramdd interp trapezoid unwrap",
    values={"interp": "left right period", "trapezoid": "dx", "unwrap": "discont period"},
    statics={"cov": "rowvar bias ddof dtype", "corrcoef": "rowvar dtype"},
)
