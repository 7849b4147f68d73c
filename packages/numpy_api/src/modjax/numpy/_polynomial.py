"""Polynomials as 1-D coefficient arrays, highest power first: ``poly``, ``polyadd``,
``polysub``, ``polymul``, ``polydiv``, ``polyder``, ``polyint``, ``polyval``, ``polyfit``,
``roots``.

Loops run over the static number of coefficients at trace time, so every
function works under ``jit``, ``grad`` and ``vmap``; results are inexact
except for ``polyadd``/``polysub``/``polyval``, which keep the promoted dtype,
as in JAX. ``trim_leading_zeros`` needs concrete inputs. ``polyfit`` is a least
squares solve and ``roots`` the eigenvalues of the companion matrix
(``modjax.numpy.linalg``).
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np
from modjax import lax
from modjax.runtime import jit
from modjax.tracecore.core import concrete_or_error

from ._creation import arange, asarray, full, ones, zeros
from ._manipulation import atleast_1d, concatenate, trim_zeros
from ._reductions import prod
from ._signal import convolve
from ._ufuncs import maximum, true_divide
from ._util import aval, check_arraylike, promote_dtypes, promote_dtypes_inexact

__all__ = [
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "polyval",
    "roots",
]


@jit
def poly(seq_of_zeros):
    """Return the coefficients of the monic polynomial with the given roots (jax.numpy.poly).

    A 0-d input is one root; no roots give ``1.0``. A non-empty square matrix
    gives its characteristic polynomial (from its eigenvalues, so complex).
    """
    check_arraylike("poly", seq_of_zeros)
    (roots_,) = promote_dtypes_inexact(seq_of_zeros)
    roots_ = atleast_1d(roots_)
    shape = aval(roots_).shape
    if len(shape) == 2 and shape[0] == shape[1] and shape[0]:
        from .linalg import eigvals

        roots_ = eigvals(roots_)
    if aval(roots_).ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = aval(roots_).dtype
    if aval(roots_).shape[0] == 0:
        return ones((), dtype)
    # As JAX: one 2-tap convolution per root (the products round as its convolutions do).
    coeffs = ones((1,), dtype)
    for k in range(aval(roots_).shape[0]):
        factor = concatenate([ones((1,), dtype), -roots_[k : k + 1]])
        coeffs = convolve(coeffs, factor, mode="full")
    return coeffs


@jit
def polyadd(a1, a2):
    """Return the sum of two polynomials (jax.numpy.polyadd)."""
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    # As JAX: the shorter one scatter-added into the tail of the longer (so bools fail).
    if aval(a2).shape[0] <= aval(a1).shape[0]:
        return a1.at[-aval(a2).shape[0] :].add(a2)
    return a2.at[-aval(a1).shape[0] :].add(a1)


@jit
def polysub(a1, a2):
    """Return the difference of two polynomials (jax.numpy.polysub)."""
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return polyadd(a1, -a2)


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """Return the product of two polynomials (jax.numpy.polymul).

    ``trim_leading_zeros`` drops the inputs' leading zeros first (concrete inputs only).
    """
    check_arraylike("polymul", a1, a2)
    a1, a2 = (asarray(a) for a in promote_dtypes_inexact(a1, a2))
    if trim_leading_zeros and (len(a1) > 1 or len(a2) > 1):
        a1, a2 = trim_zeros(a1, "f"), trim_zeros(a2, "f")
    # As JAX: an empty polynomial is the zero polynomial [0].
    if len(a1) == 0:
        a1 = zeros((1,), aval(a2).dtype)
    if len(a2) == 0:
        a2 = zeros((1,), aval(a1).dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Return the quotient and remainder of dividing polynomial ``u`` by ``v`` (jax.numpy.polydiv).

    The remainder keeps ``u``'s length (leading zeros included); ``trim_leading_zeros``
    drops the remainder's leading coefficients below sqrt(eps) in magnitude, as
    numpy's tolerance does (concrete input only).
    """
    # Op by op, as JAX's (not jitted: a fused program would contract -d * v + u).
    check_arraylike("polydiv", u, v)
    u, v = (asarray(a) for a in promote_dtypes_inexact(u, v))
    m, n = len(u) - 1, len(v) - 1
    scale = 1.0 / v[0]
    q = zeros(max(m - n + 1, 1), dtype=aval(u).dtype)
    for k in range(m - n + 1):
        d = scale * u[k]
        q = q.at[k].set(d)
        u = u.at[k : k + n + 1].add(-d * v)
    if trim_leading_zeros:
        u = _trim_leading_small(u)
    return q, u


def _trim_leading_small(r):
    """Drop the leading entries of concrete ``r`` below sqrt(eps) in magnitude (all: empty)."""
    values = np.asarray(concrete_or_error(r, "the remainder of polydiv(trim_leading_zeros=True)"))
    tol = np.sqrt(np.finfo(values.dtype).eps)
    big = np.flatnonzero(np.abs(values) >= tol)
    return r[int(big[0]) if big.size else values.shape[0] :]


@partial(jit, static_argnames=("m",))
def polyder(p, m: int = 1):
    """Return the ``m``-th derivative of polynomial ``p`` (jax.numpy.polyder)."""
    check_arraylike("polyder", p)
    m = operator.index(concrete_or_error(m, "'m' argument of jnp.polyder"))
    (p,) = promote_dtypes_inexact(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    # As JAX: the falling factorials as one product over a grid, then one multiply.
    dtype = aval(p).dtype
    n = aval(p).shape[0]
    grid = arange(m, n, dtype=dtype)[None] - arange(m, dtype=dtype)[:, None]
    return p[:-m] * prod(grid, 0)[::-1]


@partial(jit, static_argnames=("m",))
def polyint(p, m: int = 1, k=None):
    """Return the ``m``-th antiderivative of polynomial ``p`` (jax.numpy.polyint).

    ``k`` gives the ``m`` integration constants (a scalar is used for all; the
    first is added by the first integration); they default to 0.
    """
    m = operator.index(concrete_or_error(m, "'m' argument of jnp.polyint"))
    k = 0 if k is None else k
    check_arraylike("polyint", p, k)
    p, k = promote_dtypes_inexact(p, k)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k = atleast_1d(k)
    if aval(k).shape[0] == 1:
        k = full((m,), k[0])
    if aval(k).shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    # As JAX: the divisors as one product over a grid, one division of [p, k] by them.
    dtype = aval(p).dtype
    n = aval(p).shape[0]
    grid = arange(n + m, dtype=dtype)[None] - arange(m, dtype=dtype)[:, None]
    return true_divide(concatenate([p, k]), prod(maximum(1, grid), 0)[::-1])


@partial(jit, static_argnames=("unroll",))
def polyval(p, x, *, unroll: int = 16):
    """Return the value of polynomial ``p`` at ``x`` by Horner's rule (jax.numpy.polyval).

    The loop over the coefficients is unrolled while tracing, so ``unroll`` only
    exists for compatibility. As in numpy and JAX, ``p`` may have more dimensions:
    its rows (along axis 0) are the coefficients, and each broadcasts against ``x``.
    """
    del unroll
    check_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    if aval(p).ndim == 0:
        raise IndexError("jnp.polyval: the coefficients p must have at least one dimension")
    shape = np.broadcast_shapes(aval(p).shape[1:], aval(x).shape)
    y = lax.full_like(x, 0, shape=shape)  # x's dtype and weak type, as JAX's
    for i in range(aval(p).shape[0]):
        y = y * x + p[i]
    return y


@partial(jit, static_argnames=("deg", "rcond", "full", "cov"))  # one program, as JAX's
def polyfit(x, y, deg: int, rcond=None, full: bool = False, w=None, cov: bool = False):
    """Fit a polynomial of degree ``deg`` by least squares (jax.numpy.polyfit).

    The Vandermonde matrix's columns are scaled to unit norm before the
    solve (``linalg.lstsq``), as numpy and JAX do. ``full=True`` also returns
    the residuals, rank, singular values and ``rcond``; ``cov=True`` (or
    ``"unscaled"``) the covariance of the coefficients.
    """
    from . import linalg
    from ._creation import array, vander
    from ._manipulation import atleast_1d
    from ._products import dot, outer
    from ._ufuncs import sqrt

    if w is None:
        check_arraylike("polyfit", x, y)
    else:
        check_arraylike("polyfit", x, y, w)
    x_arr, y_arr = asarray(x), asarray(y)
    deg = operator.index(concrete_or_error(deg, "deg must be int"))
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_arr.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_arr.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_arr.ndim < 1 or y_arr.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_arr.shape[0] != y_arr.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:  # from x's own dtype, as JAX (an integer x needs an explicit rcond)
        rcond = len(x_arr) * float(np.finfo(aval(x_arr).dtype).eps)
    rcond = float(concrete_or_error(rcond, "rcond must be float"))
    lhs = vander(x_arr, order)
    rhs = y_arr
    if w is not None:
        (w_arr,) = promote_dtypes_inexact(w)
        if aval(w_arr).ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if aval(w_arr).shape[0] != y_arr.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w_arr[:, None]
        rhs = rhs * (w_arr[:, None] if rhs.ndim == 2 else w_arr)
    # Unit-norm columns keep the Vandermonde system well scaled.
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = linalg.inv(dot(lhs.T, lhs)) / outer(scale, scale)
        if cov == "unscaled":
            fac = array(1.0)
        else:
            if len(x_arr) <= order:
                raise ValueError(
                    "the number of data points must exceed order to scale the covariance matrix"
                )
            fac = resids / (len(x_arr) - order)
        if y_arr.ndim == 1:
            return c, vbase * atleast_1d(fac)[None]
        return c, vbase[:, :, None] * atleast_1d(fac)[None, None, :]
    return c


def _roots_no_zeros(p):
    """The eigenvalues of the companion matrix of ``p`` (leading coefficient nonzero)."""
    from . import linalg
    from ._creation import diag, ones

    n = aval(p).shape[0]
    if n < 2:
        return asarray(np.array([], _complex_dtype(aval(p).dtype)))
    companion = diag(ones((n - 2,), aval(p).dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return linalg.eigvals(companion)


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def roots(p, *, strip_zeros: bool = True):
    """Return the roots of polynomial ``p``, as complex numbers (jax.numpy.roots).

    The roots are the eigenvalues of the companion matrix. Leading zeros are
    stripped, which needs concrete coefficients; with ``strip_zeros=False``
    (traceable) each leading zero gives a NaN root instead, at the end.
    """
    from modjax import lax

    from ._manipulation import atleast_1d, roll
    from ._reductions import all as all_
    from ._reductions import argmin
    from ._selection import where

    check_arraylike("roots", p)
    (p_arr,) = promote_dtypes_inexact(p)
    p_arr = atleast_1d(p_arr)
    if p_arr.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = p_arr.shape[0]
    if n < 2:
        return asarray(np.array([], _complex_dtype(aval(p_arr).dtype)))
    leading = where(all_(p_arr == 0), n, argmin(p_arr == 0))
    if strip_zeros:
        leading = operator.index(
            concrete_or_error(
                leading,
                "The error occurred in the jnp.roots() function. To use this within a "
                "JIT-compiled context, pass strip_zeros=False, but be aware that leading zeros "
                "will result in some returned roots being set to NaN.",
            )
        )
        return _roots_no_zeros(p_arr[leading:])
    # An all-zero p would make a NaN companion matrix; any polynomial does, its roots are
    # all replaced by NaN below.
    p_arr = where(leading == n, asarray(np.ones((), aval(p_arr).dtype)), p_arr)
    found = _roots_no_zeros(roll(p_arr, -leading))
    # Leading zeros rolled to the end give zero roots: sort them last, then mark them NaN.
    found = lax.sort_key_val(found == 0, found)[1]
    m = found.shape[0]
    return where(arange(m) < m - leading, found, complex(np.nan, np.nan))
