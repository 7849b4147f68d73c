"""Special functions in scipy.special's names (the counterpart of jax.scipy.special).

Thin functions over modjax.lax's special-function primitives (``erf``,
``lgamma``, ``igamma``, ...) with modjax.numpy's promotion: integer and bool
arguments compute in the default float type, Python scalars stay weakly
typed. ``xlogy`` and ``xlog1py`` are ``custom_jvp`` functions as in JAX;
``logsumexp`` shifts by the (gradient-stopped) maximum and supports ``b``,
``return_sign`` and ``where``.
"""

from __future__ import annotations

import math
import operator
import warnings as _warnings

import numpy as np

import modjax.numpy as jnp
from modjax import lax

# Imported under private names: this module's namespace is jax.scipy.special's.
from modjax.autodiff import custom_jvp as _custom_jvp
from modjax.autodiff import stop_gradient as _stop_gradient
from modjax.lax._common import kind as _kind
from modjax.numpy._util import aval as _aval
from modjax.numpy._util import canonicalize_axes as _canonicalize_axes
from modjax.numpy._util import promote_args_inexact as _promote_args_inexact
from modjax.scipy import _lpmn
from modjax.scipy._special_extra import (  # the functions beyond the gamma/erf core
    bernoulli,
    bessel_jn,
    boxcox,
    boxcox1p,
    comb,
    dawsn,
    erfcx,
    exp1,
    expi,
    expn,
    fresnel,
    hyp1f1,
    hyp2f1,
    owens_t,
    poch,
    sici,
    spence,
    sph_harm_y,
    wofz,
)
from modjax.tracecore.core import concrete_or_error

__all__ = [
    "bernoulli",
    "bessel_jn",
    "beta",
    "betainc",
    "betaln",
    "boxcox",
    "boxcox1p",
    "comb",
    "dawsn",
    "digamma",
    "entr",
    "erf",
    "erfc",
    "erfcx",
    "erfinv",
    "exp1",
    "expi",
    "expit",
    "expn",
    "factorial",
    "fresnel",
    "gamma",
    "gammainc",
    "gammaincc",
    "gammaln",
    "gammasgn",
    "hyp1f1",
    "hyp2f1",
    "i0",
    "i0e",
    "i1",
    "i1e",
    "kl_div",
    "log_ndtr",
    "log_softmax",
    "loggamma",
    "logit",
    "logsumexp",
    "multigammaln",
    "ndtr",
    "ndtri",
    "owens_t",
    "poch",
    "polygamma",
    "rel_entr",
    "sici",
    "softmax",
    "spence",
    "sph_harm_y",
    "wofz",
    "xlog1py",
    "xlogy",
    "zeta",
]


def _float_args(name, *args):
    """Promote ``args`` to one inexact dtype (ints and bools to the default float)."""
    out = _promote_args_inexact(name, *args)
    for x in out:
        if _kind(_aval(x).dtype) == "c":
            raise TypeError(f"jax.scipy.special.{name} does not support complex inputs")
    return [jnp.asarray(x) for x in out]


def _float32_or_64(x, message_tail=""):
    """Return ``x`` as an array, or raise JAX's TypeError unless it is float32 or float64.

    JAX's ndtr, ndtri and log_ndtr take those dtypes only, unpromoted: integers, float16,
    bfloat16 and complex are refused (so are norm.cdf and truncnorm of float16 that use them).
    """
    x = jnp.asarray(x)
    if x.dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={x.dtype} is not supported{message_tail}.")
    return x


_SEE_DOCSTRING = ", see docstring for supported types"


def _broadcast(name, *args):
    shape = jnp.broadcast_shapes(*(jnp.shape(a) for a in args))
    return [jnp.broadcast_to(a, shape) for a in args]


# --- error functions and the normal distribution ------------------------------------------------


def erf(x):
    """Compute the error function elementwise (jax.scipy.special.erf)."""
    (x,) = _float_args("erf", x)
    return lax.erf(x)


def erfc(x):
    """Compute the complementary error function ``1 - erf(x)`` (jax.scipy.special.erfc)."""
    (x,) = _float_args("erfc", x)
    return lax.erfc(x)


def erfinv(x):
    """Compute the inverse of the error function elementwise (jax.scipy.special.erfinv)."""
    (x,) = _float_args("erfinv", x)
    return lax.erf_inv(x)


def ndtr(x):
    """Compute the standard normal CDF ``(1 + erf(x / sqrt 2)) / 2`` (jax.scipy.special.ndtr).

    Only float32 and float64 ``x``, as in JAX: other dtypes are a TypeError.
    """
    x = _float32_or_64(x, _SEE_DOCSTRING)
    x = lax.convert_element_type(x, x.dtype)  # strongly typed, as JAX's (its constants are)
    dtype = x.dtype.type
    # JAX's form (bits and derivative alike): erf near 0, erfc in the tails.
    half_sqrt_2 = dtype(0.5) * np.sqrt(2.0, dtype=dtype)
    w = lax.mul(x, half_sqrt_2)
    z = lax.abs(w)
    near_zero, by_erf = lax.lt(z, half_sqrt_2), lax.add(dtype(1.0), lax.erf(w))
    tails = lax.select(lax.gt(w, dtype(0.0)), lax.sub(dtype(2.0), lax.erfc(z)), lax.erfc(z))
    return lax.mul(dtype(0.5), lax.select(near_zero, by_erf, tails))


def _norm_logpdf(x):
    return jnp.subtract(jnp.multiply(-0.5, jnp.square(x)), 0.5 * math.log(2 * math.pi))


def ndtri(p):
    """Compute the inverse of the standard normal CDF elementwise (jax.scipy.special.ndtri).

    ``ndtri(0)`` is -inf, ``ndtri(1)`` inf, and arguments outside [0, 1] give NaN.
    The lower half is solved for ``min(p, 1 - p)``: a starting point from
    ``erf_inv`` (or the tail asymptotics below 1e-4), refined by Newton steps
    on ``log ndtr``, which stay accurate far into the tail. Only float32 and
    float64 ``p``, as in JAX: other dtypes are a TypeError.
    """
    p = _float32_or_64(p, _SEE_DOCSTRING)
    upper = jnp.greater(p, 0.5)
    q = jnp.where(upper, jnp.subtract(1.0, p), p)  # (not a minimum: its derivative splits at 0.5)
    safe_q = jnp.maximum(q, np.finfo(p.dtype).tiny)
    # each branch gets inputs where it is finite, so that no NaN reaches the derivatives
    in_tail = jnp.less(safe_q, 1e-4)
    q_central = jnp.where(in_tail, 1e-4, safe_q)
    q_tail = jnp.where(in_tail, safe_q, 1e-4)
    central = jnp.multiply(
        math.sqrt(2.0), lax.erf_inv(jnp.subtract(jnp.multiply(2.0, q_central), 1))
    )
    t = jnp.multiply(-2.0, jnp.log(q_tail))
    tail = jnp.negative(jnp.sqrt(jnp.subtract(t, jnp.log(jnp.multiply(2 * math.pi, t)))))
    x = jnp.where(in_tail, tail, central)
    log_q = jnp.log(safe_q)
    for _ in range(3):  # Newton on log(ndtr(x)) = log(q): fast and stable in the tail
        cdf = ndtr(x)
        step = jnp.multiply(
            jnp.subtract(jnp.log(cdf), log_q), jnp.divide(cdf, jnp.exp(_norm_logpdf(x)))
        )
        x = jnp.subtract(x, step)
    x = jnp.where(upper, jnp.negative(x), x)
    x = jnp.where(jnp.equal(p, 0), -math.inf, x)
    x = jnp.where(jnp.equal(p, 1), math.inf, x)
    outside = jnp.logical_or(jnp.less(p, 0), jnp.greater(p, 1))
    return jnp.where(jnp.logical_or(outside, jnp.isnan(p)), math.nan, x)


def log_ndtr(x, series_order: int = 3):
    """Compute ``log(ndtr(x))`` elementwise, accurately in both tails (jax.scipy.special.log_ndtr).

    Far in the lower tail it uses the asymptotic series of ``series_order``
    terms (0 to 30), far in the upper tail ``-ndtr(-x)``. Only float32 and float64
    ``x``, as in JAX: other dtypes are a TypeError.
    """
    series_order = operator.index(series_order)
    if not 0 <= series_order <= 30:
        raise ValueError(f"series_order must be in [0, 30], got {series_order}")
    x = _float32_or_64(x)
    x = lax.convert_element_type(x, x.dtype)  # strongly typed, as JAX's (its constants are)
    lower, upper = (-20.0, 8.0) if x.dtype == np.float64 else (-10.0, 5.0)
    # middle: log of the CDF itself
    mid_x = jnp.clip(x, lower, upper)
    middle = jnp.log(ndtr(mid_x))
    # upper tail: log(1 - q) ~ -q
    up_x = jnp.maximum(x, upper)
    upper_tail = jnp.negative(ndtr(jnp.negative(up_x)))
    # lower tail: log(phi(x) / -x) + log(1 + sum_k (-1)^k (2k-1)!! / x^(2k))
    lo_x = jnp.minimum(x, lower)
    inv_x2 = jnp.reciprocal(jnp.square(lo_x))
    series = jnp.ones_like(lo_x)
    term = jnp.ones_like(lo_x)
    for k in range(1, series_order + 1):
        term = jnp.multiply(term, jnp.multiply(-(2 * k - 1), inv_x2))
        series = jnp.add(series, term)
    lower_tail = jnp.add(
        jnp.subtract(_norm_logpdf(lo_x), jnp.log(jnp.negative(lo_x))), jnp.log(series)
    )
    out = jnp.where(jnp.greater(x, upper), upper_tail, middle)
    return jnp.where(jnp.less(x, lower), lower_tail, out)


# --- the gamma family ----------------------------------------------------------------------------


def gammaln(x):
    """Compute the log of the absolute value of the gamma function (jax.scipy.special.gammaln)."""
    (x,) = _float_args("gammaln", x)
    return lax.lgamma(x)


def loggamma(x):
    """Compute the log of the gamma function for real ``x`` (jax.scipy.special.loggamma).

    Unlike ``gammaln`` (the log of ``|Gamma|``) it is NaN for ``x <= 0``, as in JAX and
    SciPy's real ``loggamma``.
    """
    (x,) = _float_args("loggamma", x)
    return jnp.where(jnp.greater(x, 0), lax.lgamma(x), math.nan)


def gammasgn(x):
    """Return the sign of the gamma function, NaN at its poles (jax.scipy.special.gammasgn)."""
    (x,) = _float_args("gammasgn", x)
    floor = jnp.floor(x)
    pole = jnp.logical_and(jnp.less(x, 0), jnp.equal(x, floor))
    odd = jnp.equal(jnp.remainder(floor, 2), 1)  # floor(x) odd: Gamma < 0 for x < 0
    sign = jnp.where(jnp.logical_and(jnp.less(x, 0), odd), -1.0, 1.0).astype(x.dtype)
    return jnp.where(jnp.logical_or(pole, jnp.isnan(x)), math.nan, sign)


def gamma(x):
    """Compute the gamma function elementwise (jax.scipy.special.gamma)."""
    (x,) = _float_args("gamma", x)
    return jnp.multiply(gammasgn(x), jnp.exp(lax.lgamma(x)))


def digamma(x):
    """Compute the digamma function, the derivative of ``gammaln`` (jax.scipy.special.digamma)."""
    (x,) = _float_args("digamma", x)
    return lax.digamma(x)


def polygamma(n, x):
    """Compute the ``n``-th derivative of the digamma function (jax.scipy.special.polygamma).

    ``n`` must have an integer dtype.
    """
    n_dtype = _aval(n).dtype if not isinstance(n, int) else np.dtype(np.int32)
    if _kind(n_dtype) not in "iu":
        raise ValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {n_dtype}.")
    n, x = _float_args("polygamma", n, x)
    n, x = _broadcast("polygamma", n, x)
    return lax.polygamma(n, x)


def multigammaln(a, d):
    """Compute the log of the multivariate gamma function of dimension ``d``.

    (jax.scipy.special.multigammaln)
    """
    # As JAX: ``d`` is a concrete number taken by ``int`` (2.5 is 2), and the result is
    # strongly typed. JAX computes junk for a negative ``d``; that is an error here.
    d = int(concrete_or_error(d, "d argument of multigammaln"))
    if d < 0:
        raise ValueError(f"multigammaln: d must be a non-negative integer, got {d}")
    (a,) = _float_args("multigammaln", a)
    total = jnp.multiply(jnp.ones_like(a), d * (d - 1) / 4 * math.log(math.pi))
    for j in range(d):
        total = jnp.add(total, lax.lgamma(jnp.subtract(a, j / 2)))
    return lax.convert_element_type(total, _aval(total).dtype)


def factorial(n, exact: bool = False):
    """Compute ``n!`` as ``gamma(n + 1)``; negative ``n`` gives 0 (jax.scipy.special.factorial)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _float_args("factorial", n)
    # n's dtype and weak type already (0.0 is weak)
    return jnp.where(jnp.less(n, 0), 0.0, jnp.exp(lax.lgamma(jnp.add(n, 1))))


def gammainc(a, x):
    """Compute the regularized lower incomplete gamma function P(a, x).

    (jax.scipy.special.gammainc)
    """
    a, x = _broadcast("gammainc", *_float_args("gammainc", a, x))
    return lax.igamma(a, x)


def gammaincc(a, x):
    """Compute the regularized upper incomplete gamma function Q(a, x).

    (jax.scipy.special.gammaincc)
    """
    a, x = _broadcast("gammaincc", *_float_args("gammaincc", a, x))
    return lax.igammac(a, x)


# Coefficients of the asymptotic series of Stirling's remainder
# lgamma(x) - ((x - 1/2) log x - x + log(2 pi) / 2) ~ sum_k C_k / x^(2k + 1), as in
# cdflib's algdiv (which JAX's betaln follows).
_STIRLING_REMAINDER = (
    0.833333333333333e-01,
    -0.277777777760991e-02,
    0.793650666825390e-03,
    -0.595202931351870e-03,
    0.837308034031215e-03,
    -0.165322962780713e-02,
)


def _stirling_remainder_difference(a, b):
    """Return ``rem(b) - rem(a + b)`` for Stirling's remainder ``rem``, from its series.

    ``rem(b) - rem(a + b) = (c / b) sum_k C_k s_(2k+1) / b^(2k)`` with
    ``s_n = 1 + x + ... + x^(n-1)`` and ``c = a / (a + b)``. The sums should use
    ``x = b / (a + b)``; JAX's betaln takes ``x = c`` instead, which moves float32
    results by up to about 4e-7, and we do the same to give its answers.
    """
    h = jnp.divide(a, b)
    c = jnp.divide(h, jnp.add(1.0, h))
    x = c  # JAX's x (see above)
    x2 = jnp.multiply(x, x)
    sums = [1.0]  # s_1, s_3, ..., s_11 by s_(n+2) = 1 + x + x^2 s_n
    for _ in _STIRLING_REMAINDER[1:]:
        sums.append(jnp.add(1.0, jnp.add(x, jnp.multiply(x2, sums[-1]))))
    t = jnp.square(jnp.divide(1.0, b))
    # Horner in t from the highest order down: JAX's order, so JAX's rounding
    w = jnp.multiply(_STIRLING_REMAINDER[-1], sums[-1])
    for coefficient, s in zip(_STIRLING_REMAINDER[-2::-1], sums[-2::-1], strict=True):
        w = jnp.add(jnp.multiply(w, t), jnp.multiply(coefficient, s))
    return jnp.multiply(w, jnp.divide(c, b))


def _lgamma_ratio_large_b(a, b):
    """Return ``lgamma(b) - lgamma(a + b)`` for ``a <= b``, ``b >= 8``, without cancellation.

    With Stirling's formula the difference is ``w - u - v``, ``u = (a + b - 1/2) log1p(a / b)``,
    ``v = a (log b - 1)`` and ``w`` the remainders' difference; the larger of ``u`` and ``v``
    is subtracted first.
    """
    w = _stirling_remainder_difference(a, b)
    u = jnp.multiply(jnp.add(b, jnp.subtract(a, 0.5)), lax.log1p(jnp.divide(a, b)))
    v = jnp.multiply(a, jnp.subtract(lax.log(b), 1.0))
    return jnp.where(
        jnp.less_equal(u, v),
        jnp.subtract(jnp.subtract(w, v), u),
        jnp.subtract(jnp.subtract(w, u), v),
    )


def betaln(a, b):
    """Compute the log of the absolute value of the beta function (jax.scipy.special.betaln).

    As JAX's: ``lgamma(a) + (lgamma(b) - lgamma(a + b))`` for the smaller ``a`` and
    larger ``b`` while ``b < 8``; from there the difference of the last two comes from
    Stirling's series, accurate where the lgammas are large and nearly cancel.
    """
    a, b = _float_args("betaln", a, b)
    a, b = jnp.minimum(a, b), jnp.maximum(a, b)
    small_b = jnp.add(lax.lgamma(a), jnp.subtract(lax.lgamma(b), lax.lgamma(jnp.add(a, b))))
    large_b = jnp.add(lax.lgamma(a), _lgamma_ratio_large_b(a, b))
    return jnp.where(jnp.less(b, 8), small_b, large_b)


def beta(a, b):
    """Compute the beta function ``Gamma(a) Gamma(b) / Gamma(a + b)`` (jax.scipy.special.beta)."""
    a, b = _float_args("beta", a, b)
    sign = jnp.multiply(jnp.multiply(gammasgn(a), gammasgn(b)), gammasgn(jnp.add(a, b)))
    return jnp.multiply(sign, jnp.exp(betaln(a, b)))


def betainc(a, b, x):
    """Compute the regularized incomplete beta function I_x(a, b) (jax.scipy.special.betainc)."""
    a, b, x = _broadcast("betainc", *_float_args("betainc", a, b, x))
    return lax.betainc(a, b, x)


def zeta(x, q=None):
    """Compute the Hurwitz zeta function ``sum_k (k + q)^-x`` (jax.scipy.special.zeta).

    ``q=None`` (the Riemann zeta function) is not implemented, as in JAX.
    """
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta "
            "function."
        )
    x, q = _broadcast("zeta", *_float_args("zeta", x, q))
    return lax.zeta(x, q)


# --- Bessel functions -------------------------------------------------------------------------


def i0e(x):
    """Compute the exponentially scaled modified Bessel function of order 0.

    (jax.scipy.special.i0e)
    """
    (x,) = _float_args("i0e", x)
    return lax.bessel_i0e(x)


def i1e(x):
    """Compute the exponentially scaled modified Bessel function of order 1.

    (jax.scipy.special.i1e)
    """
    (x,) = _float_args("i1e", x)
    return lax.bessel_i1e(x)


def i0(x):
    """Compute the modified Bessel function of the first kind, order 0 (jax.scipy.special.i0)."""
    (x,) = _float_args("i0", x)
    return jnp.i0(x)


def i1(x):
    """Compute the modified Bessel function of the first kind, order 1 (jax.scipy.special.i1)."""
    (x,) = _float_args("i1", x)
    return jnp.multiply(jnp.exp(jnp.maximum(x, jnp.negative(x))), lax.bessel_i1e(x))


# --- logistic, entropies ---------------------------------------------------------------------


def expit(x):
    """Compute the logistic sigmoid ``1 / (1 + exp(-x))`` (jax.scipy.special.expit)."""
    (x,) = _float_args("expit", x)
    return lax.logistic(x)


def logit(x):
    """Compute the log-odds ``log(x / (1 - x))``, the inverse of ``expit``.

    (jax.scipy.special.logit)
    """
    (x,) = _float_args("logit", x)
    return jnp.log(jnp.divide(x, jnp.subtract(1, x)))


@_custom_jvp
def xlogy(x, y):
    """Compute ``x * log(y)``, with 0 where ``x`` is 0 (jax.scipy.special.xlogy)."""
    x, y = _float_args("xlogy", x, y)
    zero = _zero_times_log(x, y)
    safe_y = jnp.where(zero, 1, y)
    return jnp.where(zero, 0, jnp.multiply(x, jnp.log(safe_y)))


def _zero_times_log(x, y):
    """Return where ``xlogy``/``xlog1py`` are 0: ``x`` is 0 and ``y`` not NaN (as in JAX)."""
    return jnp.logical_and(jnp.equal(x, 0), jnp.logical_not(jnp.isnan(y)))


def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlogy(x, y)
    x, y = _float_args("xlogy", x, y)
    t = jnp.add(jnp.multiply(x_dot, jnp.log(y)), jnp.divide(jnp.multiply(y_dot, x), y))
    return out, jnp.broadcast_to(t, out.shape).astype(out.dtype)


xlogy.defjvp(_xlogy_jvp)


@_custom_jvp
def xlog1py(x, y):
    """Compute ``x * log1p(y)``, with 0 where ``x`` is 0 (jax.scipy.special.xlog1py)."""
    x, y = _float_args("xlog1py", x, y)
    zero = _zero_times_log(x, y)
    safe_y = jnp.where(zero, 0, y)
    return jnp.where(zero, 0, jnp.multiply(x, jnp.log1p(safe_y)))


def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlog1py(x, y)
    x, y = _float_args("xlog1py", x, y)
    t = jnp.add(
        jnp.multiply(x_dot, jnp.log1p(y)), jnp.divide(jnp.multiply(y_dot, x), jnp.add(y, 1))
    )
    return out, jnp.broadcast_to(t, out.shape).astype(out.dtype)


xlog1py.defjvp(_xlog1py_jvp)


def entr(x):
    """Compute the entropy term ``-x log(x)``: 0 at 0, -inf below (jax.scipy.special.entr)."""
    (x,) = _float_args("entr", x)
    positive = jnp.greater(x, 0)
    safe = jnp.where(positive, x, 1)
    out = jnp.where(positive, jnp.negative(jnp.multiply(x, jnp.log(safe))), 0)
    out = jnp.where(jnp.less(x, 0), -math.inf, out)
    return jnp.where(jnp.isnan(x), x, out)


def rel_entr(p, q):
    """Compute the relative entropy term ``p log(p / q)`` (jax.scipy.special.rel_entr).

    0 where ``p == 0`` and ``q >= 0``; inf where either is negative or ``q == 0 < p``.
    """
    p, q = _broadcast("rel_entr", *_float_args("rel_entr", p, q))
    both_positive = jnp.logical_and(jnp.greater(p, 0), jnp.greater(q, 0))
    safe_p, safe_q = jnp.where(both_positive, p, 1), jnp.where(both_positive, q, 1)
    value = jnp.multiply(safe_p, jnp.log(jnp.divide(safe_p, safe_q)))
    zero = jnp.logical_and(jnp.equal(p, 0), jnp.greater_equal(q, 0))
    out = jnp.where(both_positive, value, jnp.where(zero, 0, math.inf))
    return jnp.where(jnp.logical_or(jnp.isnan(p), jnp.isnan(q)), math.nan, out)


def kl_div(p, q):
    """Compute the Kullback-Leibler term ``p log(p / q) - p + q`` (jax.scipy.special.kl_div)."""
    p, q = _broadcast("kl_div", *_float_args("kl_div", p, q))
    both_positive = jnp.logical_and(jnp.greater(p, 0), jnp.greater(q, 0))
    safe_p, safe_q = jnp.where(both_positive, p, 1), jnp.where(both_positive, q, 1)
    value = jnp.add(jnp.subtract(jnp.multiply(safe_p, jnp.log(jnp.divide(safe_p, safe_q))), p), q)
    zero = jnp.logical_and(jnp.equal(p, 0), jnp.greater_equal(q, 0))
    out = jnp.where(both_positive, value, jnp.where(zero, q, math.inf))
    return jnp.where(jnp.logical_or(jnp.isnan(p), jnp.isnan(q)), math.nan, out)


# --- logsumexp and softmax -----------------------------------------------------------------


def logsumexp(a, axis=None, b=None, keepdims: bool = False, return_sign: bool = False, where=None):
    """Compute ``log(sum(b * exp(a)))`` over ``axis``, stably (jax.scipy.special.logsumexp).

    ``b`` scales the terms (zeros drop them); with ``return_sign`` the result
    is ``(log|sum|, sign(sum))``, otherwise a negative sum gives NaN. ``where``
    masks terms out. The maximum is subtracted first, with its gradient stopped.
    """
    # The program is JAX's, equation for equation: XLA compiles it to the same code, so the
    # bits are JAX's (its log and exp differ in the last bit between fusions).
    if where is not None:
        a = jnp.where(where, a, 0)
    if b is not None:
        a, b = _promote_args_inexact("logsumexp", a, b)
        a = jnp.where(jnp.not_equal(b, 0), a, -math.inf)
    else:
        (a,) = _promote_args_inexact("logsumexp", a)
    a = jnp.asarray(a)
    dims = _canonicalize_axes(axis, a.ndim)
    is_complex = _kind(a.dtype) == "c"
    kw = {} if where is None else {"where": where}
    real_a = jnp.real(a) if is_complex else a
    amax = jnp.max(real_a, axis=dims, keepdims=keepdims, initial=-math.inf, **kw)
    amax = _stop_gradient(lax.select(jnp.isfinite(amax), amax, lax.full_like(amax, 0)))
    amax_with_dims = amax if keepdims else lax.expand_dims(amax, dims)
    exp_a = lax.exp(lax.sub(a, amax_with_dims.astype(a.dtype)))
    if b is not None:
        exp_a = lax.mul(exp_a, b)
    sumexp = jnp.sum(exp_a, axis=dims, keepdims=keepdims, **kw)
    sign = lax.sign(sumexp)
    if return_sign or not is_complex:
        sumexp = jnp.abs(sumexp)
    out = lax.add(lax.log(sumexp), amax.astype(sumexp.dtype))
    if return_sign:
        return out, sign
    if b is not None and not is_complex:
        out = jnp.where(sign < 0, jnp.array(np.nan, dtype=out.dtype), out)
    return out


def softmax(x, /, *, axis=None):
    """Compute ``exp(x) / sum(exp(x))`` over ``axis`` (all axes by default).

    (jax.scipy.special.softmax)
    """
    from modjax import nn

    return nn.softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """Compute ``x - logsumexp(x)`` over ``axis`` (all axes by default).

    (jax.scipy.special.log_softmax)
    """
    from modjax import nn

    return nn.log_softmax(x, axis=axis)


# Deprecated names JAX 0.10.2 still serves through its module __getattr__, warning on access.
_DEPRECATED = {
    "lpmn": "jax.scipy.special.lpmn is deprecated; no replacement is planned.",
    "lpmn_values": "jax.scipy.special.lpmn_values is deprecated; no replacement is planned.",
}


def __getattr__(name: str):
    message = _DEPRECATED.get(name)
    if message is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    _warnings.warn(message, DeprecationWarning, stacklevel=2)
    return getattr(_lpmn, name)
