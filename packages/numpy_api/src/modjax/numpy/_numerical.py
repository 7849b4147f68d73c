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
from collections.abc import Sequence
from functools import partial

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.runtime import jit

from ._creation import asarray, full, zeros
from ._cumulative import bincount, cumsum, diff, histogram_bin_edges
from ._manipulation import (
    atleast_2d,
    concatenate,
    moveaxis,
    reshape,
    squeeze,
    stack,
)
from ._products import diagonal, dot
from ._reductions import average
from ._reductions import sum as _sum
from ._selection import clip, where
from ._sorting import searchsorted
from ._ufuncs import abs as _abs
from ._ufuncs import conj, imag, mod, real, sqrt, true_divide
from ._util import (
    aval,
    canonicalize_axis,
    check_arraylike,
    promote_args_inexact,
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


def _extrapolates(name: str, value) -> bool:
    """Whether ``left``/``right`` is ``"extrapolate"`` (any other string is an error)."""
    if not isinstance(value, str):
        return False
    if value != "extrapolate":
        raise ValueError(
            f"the only valid string value of `{name}` is 'extrapolate', but got: {value!r}"
        )
    return True


def _interp(x, xp, fp, left, right, period):
    check_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x, xp = (asarray(v) for v in promote_dtypes_inexact(x, xp))
    (fp,) = (asarray(v) for v in promote_dtypes_inexact(fp))
    extrapolate_left = _extrapolates("left", left)
    extrapolate_right = _extrapolates("right", right)
    if kind(aval(x).dtype) == "c":
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = _abs(period)
        x, xp = mod(x, period), mod(xp, period)
        xp, fp = lax.sort_key_val(xp, fp)
        xp = concatenate([xp[-1:] - period, xp, xp[:1] + period])
        fp = concatenate([fp[-1:], fp, fp[:1]])
    # JAX's arithmetic, in its order: ``f0 + (delta / dx) * df`` rounds differently
    # from ``f0 + delta * (df / dx)``; segments no wider than the spacing of eps are flat.
    i = clip(searchsorted(xp, x, side="right"), 1, aval(xp).shape[0] - 1)
    df = fp[i] - fp[i - 1]
    dx = xp[i] - xp[i - 1]
    delta = x - xp[i - 1]
    epsilon = np.spacing(np.finfo(aval(xp).dtype).eps)
    flat = lax.abs(dx) <= epsilon
    f = where(flat, fp[i - 1], fp[i - 1] + (delta / where(flat, 1, dx)) * df)
    if period is None:
        # An ``extrapolate`` end keeps the end segment's line, which i's clipping gives.
        if not extrapolate_left:
            f = where(x < xp[0], fp[0] if left is None else left, f)
        if not extrapolate_right:
            f = where(x > xp[-1], fp[-1] if right is None else right, f)
    return f


# One program per pattern of static arguments: a string or None ``left``/``right`` and a
# None ``period`` are static, numbers and arrays operands (as JAX jits ``interp``).
_INTERP_PROGRAMS: dict[tuple[str, ...], object] = {}


def interp(x, xp, fp, left=None, right=None, period=None):
    """Return the piecewise linear interpolant of ``(xp, fp)`` at ``x`` (jax.numpy.interp).

    ``xp`` is increasing (unless ``period`` is given: then ``x`` and ``xp`` are
    taken modulo ``period``); outside it the result is ``left``/``right``
    (default ``fp[0]``/``fp[-1]``, or ``"extrapolate"`` to extend the end segments).
    """
    statics = tuple(
        name
        for name, value in (("left", left), ("right", right), ("period", period))
        if value is None or (name != "period" and isinstance(value, str))
    )
    program = _INTERP_PROGRAMS.get(statics)
    if program is None:
        program = _INTERP_PROGRAMS[statics] = jit(_interp, static_argnames=statics)
    return program(x, xp, fp, left=left, right=right, period=period)


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
        # JAX's order: times one half, then over h (``/ (2 * h)`` rounds differently).
        interior = (_slice(f, axis, 2, None) - _slice(f, axis, None, -2)) * 0.5 / h
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


@partial(jit, static_argnames=("axis", "edge_order"))  # one program, as JAX's
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


@partial(jit, static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """Integrate ``y`` along ``axis`` with the trapezoidal rule (jax.numpy.trapezoid).

    The sample points are ``x`` (1-D along ``axis``, or broadcasting with ``y``),
    else evenly spaced ``dx`` apart.
    """
    # One program, in JAX's arithmetic: a constant spacing multiplies the sum less the
    # two half end points; otherwise half the sum of the spacings times the pair sums.
    if x is None:
        check_arraylike("trapezoid", y)
        (y,) = promote_dtypes_inexact(y)  # dx enters by ordinary promotion
        dx = asarray(dx)
        if aval(dx).ndim > 0:
            dx = lax.expand_dims(dx, tuple(range(aval(y).ndim - aval(dx).ndim)))
            dx = moveaxis(dx, axis, -1)
    else:
        check_arraylike("trapezoid", y, x)
        y, x = promote_dtypes_inexact(y, x)
        dx = diff(x) if aval(x).ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if aval(dx).ndim == 0 or aval(dx).shape[-1] == 1:
        step = dx if aval(dx).ndim == 0 else dx[..., 0]
        return step * (_sum(y, -1) - 0.5 * (y[..., 0] + y[..., -1]))
    return 0.5 * _sum(dx * (y[..., 1:] + y[..., :-1]), -1)


@partial(jit, static_argnames=("axis",))  # one program, as JAX's
def unwrap(p, discont=None, axis: int = -1, period=2 * math.pi):
    """Unwrap the phase ``p`` along ``axis`` (jax.numpy.unwrap).

    Jumps between neighbours larger than ``max(discont, period / 2)`` are
    replaced by their complement modulo ``period``.
    """
    check_arraylike("unwrap", p)
    p, period = promote_dtypes(p, period)
    if kind(aval(p).dtype) == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if aval(p).shape[axis] == 0:
        return p
    # JAX's arithmetic: an integer period halves by floor division, and a jump of
    # exactly -interval upward becomes +interval whatever the period's parity.
    if discont is None:
        discont = period / 2
    interval = period // 2 if kind(aval(p).dtype) in "iu" else period / 2
    dd = diff(p, axis=axis)
    ddmod = mod(dd + interval, period) - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    correction = where(_abs(dd) < discont, 0, ddmod - dd)
    head = _slice(p, axis, 0, 1)
    tail = _slice(p, axis, 1, None) + cumsum(correction, axis=axis)
    return concatenate([head, tail], axis)


# --- statistics -----------------------------------------------------------------------------------


def _weights(name: str, w, n: int, integer: bool):
    check_arraylike("cov", w)
    w = asarray(w)
    if aval(w).ndim > 1:
        raise RuntimeError(f"cannot handle multidimensional {name}")
    if aval(w).shape[0] != n:
        raise RuntimeError(f"incompatible numbers of samples and {name}")
    if integer and kind(aval(w).dtype) not in "iu":
        raise TypeError(f"{name} must be integer.")
    return _abs(w)  # as JAX: negative weights count as positive (numpy raises)


@partial(jit, static_argnames=("rowvar", "bias", "ddof", "dtype"))  # one program, as JAX's
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
    # JAX's steps and order: the weights' average (its promotion may widen X), the
    # centred X, then one dot over the normalization factor, with no cast back.
    if y is not None:
        m, y = promote_args_inexact("cov", m, y)
        if aval(y).ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", m)
    if aval(m).ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and kind(np.dtype(dtype)) not in "fc":
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got {dtype=}")
    X = atleast_2d(m)
    if not rowvar and aval(m).ndim != 1:
        X = X.T
    if aval(X).shape[0] == 0:
        return reshape(asarray([]), (0, 0))
    if y is not None:
        Y = atleast_2d(y)
        if not rowvar and aval(Y).shape[0] != 1:
            Y = Y.T
        X = concatenate([X, Y], axis=0)
    n_vars, n = aval(X).shape
    if n == 0:
        return full(() if n_vars == 1 else (n_vars, n_vars), np.nan, dtype=aval(X).dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        w = _weights("fweights", fweights, n, integer=True)
    if aweights is not None:
        aweights = _weights("aweights", aweights, n, integer=False)
        w = aweights if w is None else w * aweights
    if dtype is not None:
        X = X.astype(dtype)
        w = None if w is None else w.astype(dtype)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        fact = n - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * _sum(w * aweights) / w_sum
    X = X - avg[:, None]
    X_T = X.T if w is None else (X * w[None, :]).T
    return squeeze(true_divide(dot(X, conj(X_T)), fact))


@partial(jit, static_argnames=("rowvar", "dtype"))  # one program, as JAX's
def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Return the Pearson correlation coefficients of the variables (jax.numpy.corrcoef).

    Rows are variables (columns with ``rowvar=False``); the coefficients are
    clipped to [-1, 1] (real and imaginary parts separately for complex input).
    """
    check_arraylike("corrcoef", x)
    if dtype is not None and kind(np.dtype(dtype)) not in "fc":
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got {dtype=}")
    c = cov(x, y, rowvar, dtype=dtype)
    if aval(c).ndim == 0:
        return true_divide(c, c)  # NaN for 0/0, inf/inf and NaN; 1 otherwise
    # As JAX: the deviations in c's own dtype (complex for complex c), two divisions.
    stddev = sqrt(real(diagonal(c))).astype(aval(c).dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = clip(real(c), -1, 1)
    if kind(aval(c).dtype) == "c":
        return lax.complex(real_part, clip(imag(c), -1, 1))
    return real_part


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
        # JAX's order: to the sample's dtype, over the total, then over each bin width.
        counts = counts.astype(dtype)
        counts = counts / _sum(counts)
        for d, e in enumerate(edges):
            shape = [1] * D
            shape[d] = -1
            counts = counts / reshape(diff(e), shape)
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
    # As JAX: a count or two per-dimension entries go on as given; any other length is edges.
    try:
        n = len(bins)
    except TypeError:
        n = 1
    if n not in (1, 2):  # edges shared by both dimensions (JAX converts them, names refused)
        bins = [asarray(bins)] * 2
    counts, (ex, ey) = histogramdd(stack([x, y], axis=1), bins, range, weights, density)
    return counts, ex, ey
