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
import warnings as _warnings
from functools import partial

import numpy as np

import modjax.numpy as jnp
from modjax import lax

# Imported under private names: this module's namespace is jax.scipy.special's.
from modjax.autodiff import custom_jvp as _custom_jvp
from modjax.autodiff import jvp as _jvp
from modjax.autodiff import stop_gradient as _stop_gradient
from modjax.lax._common import kind as _kind
from modjax.numpy._util import aval as _aval
from modjax.numpy._util import canonicalize_axes as _canonicalize_axes
from modjax.numpy._util import promote_args_inexact as _promote_args_inexact
from modjax.scipy import _lpmn, _special_complex
from modjax.scipy import _special_coefficients as _coefficients
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
from modjax.tracecore import dtypes as _dtypes
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
    """Promote ``args`` to one inexact dtype (ints and bools to the default float).

    Complex values pass: as in JAX, the lax primitive that cannot take them raises (for
    example ``lgamma does not accept dtype complex64``), or the function says so itself.
    """
    return [jnp.asarray(x) for x in _promote_args_inexact(name, *args)]


def _refuse_complex(name, x, message=None):
    """Raise JAX's ValueError for a function that refuses complex inputs by name."""
    if _kind(_aval(x).dtype) == "c":
        raise ValueError(message or f"{name} does not support complex-valued inputs.")


def _lax_const(x, value):
    """``value`` as a constant of ``x``'s dtype, as JAX's ``lax._const``: a Python scalar
    (weak) for a weakly typed 0-d ``x`` of the scalar's own dtype, else a strong array."""
    dtype = jnp.result_type(x)
    if _dtypes.is_weakly_typed(x) and jnp.ndim(x) == 0:
        scalar = _dtypes.scalar_type_of(x)(value)
        if jnp.result_type(scalar) == dtype:
            return scalar
    return np.array(value, dtype)


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
    # -x^2 / 2 - log(sqrt(2 pi)) with constants of x's dtype, as JAX's
    t = jnp.result_type(x).type
    return lax.sub(lax.mul(t(-0.5), lax.square(x)), t(np.log(np.sqrt(2 * np.pi))))


def ndtri(p):
    """Compute the inverse of the standard normal CDF elementwise (jax.scipy.special.ndtri).

    Cephes' piecewise rational approximations, as JAX's: a central one in
    ``p - 1/2`` and two tail ones in ``1 / sqrt(-2 log p)``, for ``p`` or its
    complement. ``ndtri(0)`` is -inf, ``ndtri(1)`` inf. Only float32 and float64
    ``p``, as in JAX: other dtypes are a TypeError.
    """
    dtype = np.dtype(_aval(p).dtype if not isinstance(p, float) else jnp.result_type(float))
    if dtype not in (np.float32, np.float64):
        raise TypeError(f"x.dtype={dtype} is not supported{_SEE_DOCSTRING}.")
    t = dtype.type
    c = {k: np.array(v) for k, v in _coefficients.NDTRI.items()}
    shape = jnp.shape(p)
    # the tail formulas run on min(p, 1 - p); 0 is replaced where it would make NaNs
    mcp = jnp.where(p > t(-np.expm1(-2.0)), t(1.0) - p, p)
    mcp = jnp.where(mcp == t(0.0), jnp.full(shape, t(0.5)), mcp)
    w = mcp - t(0.5)
    ww = lax.square(w)
    central = w + w * ww * (jnp.polyval(c["p0"].astype(t), ww) / jnp.polyval(c["q0"].astype(t), ww))
    central = central * -t(np.sqrt(2.0 * np.pi))
    z = lax.sqrt(t(-2.0) * lax.log(mcp))
    first = z - lax.log(z) / z
    far = jnp.polyval(c["p2"].astype(t), 1 / z) / jnp.polyval(c["q2"].astype(t), 1 / z) / z
    near = jnp.polyval(c["p1"].astype(t), 1 / z) / jnp.polyval(c["q1"].astype(t), 1 / z) / z
    tails = jnp.where(z >= t(8.0), first - far, first - near)
    x = jnp.where(mcp > t(np.exp(-2.0)), central, tails)
    x = jnp.where(p > t(1.0 - np.exp(-2.0)), x, -x)
    infinity = jnp.full(shape, t(np.inf))
    return jnp.where(p == t(0.0), -infinity, jnp.where(p == t(1.0), infinity, x))


def log_ndtr(x, series_order: int = 3):
    """Compute ``log(ndtr(x))`` elementwise, accurately in both tails (jax.scipy.special.log_ndtr).

    As JAX's: ``log(ndtr(x))`` in the middle, ``-ndtr(-x)`` above it and the asymptotic
    series of ``series_order`` terms (0 to 30) below; its derivative is
    ``exp(log phi(x) - log_ndtr(x))``. Only float32 and float64 ``x``, as in JAX: other
    dtypes are a TypeError.
    """
    # series_order goes to the custom-JVP function explicitly (a default is not resolved there)
    return _log_ndtr(x, series_order)


@partial(_custom_jvp, nondiff_argnums=(1,))
def _log_ndtr(x, series_order):
    if not isinstance(series_order, int):
        raise TypeError("series_order must be a Python integer.")
    if series_order < 0:
        raise ValueError("series_order must be non-negative.")
    if series_order > 30:
        raise ValueError("series_order must be <= 30.")
    x = jnp.asarray(x)
    if x.dtype == np.float64:
        lower, upper = np.float64(-20.0), np.float64(8.0)
    elif x.dtype == np.float32:
        lower, upper = np.float32(-10.0), np.float32(5.0)
    else:
        raise TypeError(f"x.dtype={x.dtype} is not supported.")
    above = lax.gt(x, upper)
    # one ndtr for both the middle and the upper tail keeps the program small, as JAX's
    cdf = ndtr(jnp.where(above, -x, lax.max(x, lower)))
    lower_tail = _log_ndtr_lower(lax.min(x, lower), series_order)
    return jnp.where(above, -cdf, jnp.where(lax.gt(x, lower), lax.log(cdf), lower_tail))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    ans = _log_ndtr(x, series_order)
    return ans, lax.mul(t, lax.exp(lax.sub(_norm_logpdf(x), ans)))


_log_ndtr.defjvp(_log_ndtr_jvp)


def _log_ndtr_lower(x, series_order):
    """``log ndtr`` for very negative ``x``: ``log(phi(x) / -x)`` plus the log of the series."""
    t = x.dtype.type
    log_scale = -t(0.5) * lax.square(x) - lax.log(-x) - t(0.5 * np.log(2.0 * np.pi))
    return log_scale + lax.log(_log_ndtr_series(x, series_order))


def _log_ndtr_series(x, series_order):
    """``1 + sum_n (-1)^n (2n-1)!! / x^(2n)``, the even and odd terms summed apart (JAX's order)."""
    t = x.dtype.type
    if series_order <= 0:
        return np.array(1, t)
    x2 = lax.square(x)
    even, odd = jnp.zeros_like(x), jnp.zeros_like(x)
    x2n = x2
    for n in range(1, series_order + 1):
        term = np.array(np.prod(np.arange(2 * n - 1, 1, -2)), t) / x2n
        if n % 2:
            odd = odd + term
        else:
            even = even + term
        x2n = x2n * x2
    return t(1.0) + even - odd


# --- the gamma family ----------------------------------------------------------------------------


def gammaln(x):
    """Compute the log of the absolute value of the gamma function (jax.scipy.special.gammaln)."""
    (x,) = _float_args("gammaln", x)
    return lax.lgamma(x)


def loggamma(x):
    """Compute the log of the gamma function (jax.scipy.special.loggamma).

    Unlike ``gammaln`` (the log of ``|Gamma|``) it is NaN for real ``x <= 0``; complex
    ``x`` gives the principal branch, as SciPy's.
    """
    (x,) = _float_args("loggamma", x)
    if _kind(x.dtype) == "c":
        return _special_complex.complex_loggamma(x)
    return jnp.where(x > 0, lax.lgamma(x), jnp.nan)


def gammasgn(x):
    """Return the sign of the gamma function, NaN at its poles (jax.scipy.special.gammasgn).

    ``-0.0`` gives -1 (the limit from below), as in JAX.
    """
    (x,) = _float_args("gammasgn", x)
    _refuse_complex("gammasgn", x)
    t = x.dtype.type
    floor = lax.floor(x)
    negative = x < 0
    pole = (negative & (x == floor)) | jnp.isnan(x)
    minus = (negative & (floor % 2 != 0)) | ((x == 0) & jnp.signbit(x))
    return jnp.select([pole, minus], [t(np.nan), t(-1.0)], t(1.0))


def gamma(x):
    """Compute the gamma function elementwise (jax.scipy.special.gamma)."""
    (x,) = _float_args("gamma", x)
    if _kind(x.dtype) == "c":
        return _special_complex.complex_gamma(x)
    return gammasgn(x) * lax.exp(lax.lgamma(x))


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
    _refuse_complex("polygamma", x)
    n, x = _broadcast("polygamma", n, x)
    return lax.polygamma(n, x)


def multigammaln(a, d):
    """Compute the log of the multivariate gamma function of dimension ``d``.

    (jax.scipy.special.multigammaln)
    """
    # As JAX: ``d`` is a concrete number taken by ``int`` (2.5 is 2). JAX computes junk for
    # a negative ``d``; that is an error here.
    d = int(concrete_or_error(d, "d argument of multigammaln"))
    if d < 0:
        raise ValueError(f"multigammaln: d must be a non-negative integer, got {d}")
    a, d_ = _float_args("multigammaln", a, d)
    t = a.dtype.type
    constant = lax.mul(lax.mul(lax.mul(t(0.25), d_), lax.sub(d_, t(1))), lax.log(t(np.pi)))
    # one lgamma of a - j/2 for every j along a new last axis, then their sum (JAX's order)
    b = lax.div(jnp.arange(d, dtype=d_.dtype), t(2))
    terms = gammaln(jnp.expand_dims(a, -1) - jnp.expand_dims(b, tuple(range(a.ndim))))
    return jnp.sum(terms, axis=-1) + constant


def factorial(n, exact: bool = False):
    """Compute ``n!`` as ``gamma(n + 1)``; negative ``n`` gives 0 (jax.scipy.special.factorial)."""
    if exact:
        raise NotImplementedError("factorial with exact=True")
    (n,) = _float_args("factorial", n)
    return jnp.where(n < 0, 0, lax.exp(lax.lgamma(n + 1)))


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
    _refuse_complex("beta", a)
    sign = gammasgn(a) * gammasgn(b) * gammasgn(a + b)
    return sign * lax.exp(betaln(a, b))


def betainc(a, b, x):
    """Compute the regularized incomplete beta function I_x(a, b) (jax.scipy.special.betainc)."""
    a, b, x = _float_args("betainc", a, b, x)
    _refuse_complex("betainc", x)
    a, b, x = _broadcast("betainc", a, b, x)
    return lax.betainc(a, b, x)


def _riemann_refused(q):
    if q is None:
        raise NotImplementedError(
            "Riemann zeta function not implemented; pass q != None to compute the Hurwitz Zeta "
            "function."
        )


@_custom_jvp
def zeta(x, q=None):
    """Compute the Hurwitz zeta function ``sum_k (k + q)^-x`` (jax.scipy.special.zeta).

    ``q=None`` (the Riemann zeta function) is not implemented, as in JAX. Derivatives
    (in ``x`` and ``q``) are those of Johansson's Euler-Maclaurin series, whose value is
    also the primal output under differentiation, as in JAX.
    """
    _riemann_refused(q)
    x, q = _broadcast("zeta", *_float_args("zeta", x, q))
    return lax.zeta(x, q)


def _zeta_bernoulli_ratios(count):
    """``(2k)! / B_2k`` for k = 1..count (B_2k the Bernoulli numbers), as floats."""
    from fractions import Fraction

    a, numbers = [], []
    for m in range(2 * count + 1):  # Akiyama-Tanigawa: B_m (with B_1 = +1/2)
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        numbers.append(a[0])
    return tuple(float(math.factorial(2 * k) / numbers[2 * k]) for k in range(1, count + 1))


_ZETA_BERNOULLI = _zeta_bernoulli_ratios(16)


def _zeta_series(x, q):
    """Hurwitz zeta by Euler-Maclaurin summation (Johansson 2015, formula 5): N terms, the
    integral of the tail and M correction terms, N = M = 8 (float32) or 16, as JAX's."""
    _riemann_refused(q)
    s, a = _float_args("zeta", x, q)
    t = a.dtype.type
    n = t(8) if a.dtype == np.float32 else t(16)
    s_, a_ = jnp.expand_dims(s, -1), jnp.expand_dims(a, -1)
    k = jnp.expand_dims(np.arange(n, dtype=n.dtype), tuple(range(a.ndim)))
    head = jnp.sum((a_ + k) ** -s_, -1)
    integral = lax.div((a + n) ** (t(1) - s), s - t(1))
    t0 = (a + n) ** -s
    m = jnp.expand_dims(np.arange(2 * n, dtype=n.dtype), tuple(range(s.ndim)))
    ratios = jnp.cumprod((s_ + m) / (a_ + n), -1)[..., ::2]
    ratios = jnp.clip(ratios, max=jnp.finfo(t).max)
    coefficients = np.array(_ZETA_BERNOULLI[: ratios.shape[-1]], dtype=t)
    ratios = ratios / np.expand_dims(coefficients, tuple(range(a.ndim)))
    return head + integral + t0 * (t(0.5) + ratios.sum(-1))


zeta.defjvp(lambda primals, tangents: _jvp(_zeta_series, primals, tangents))


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
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i0e(x))


def i1(x):
    """Compute the modified Bessel function of the first kind, order 1 (jax.scipy.special.i1)."""
    (x,) = _float_args("i1", x)
    return lax.mul(lax.exp(lax.abs(x)), lax.bessel_i1e(x))


# --- logistic, entropies ---------------------------------------------------------------------


def expit(x):
    """Compute the logistic sigmoid ``1 / (1 + exp(-x))`` (jax.scipy.special.expit)."""
    (x,) = _float_args("expit", x)
    return lax.logistic(x)


@_custom_jvp
def logit(x):
    """Compute the log-odds ``log(x / (1 - x))``, the inverse of ``expit``.

    (jax.scipy.special.logit)
    """
    (x,) = _float_args("logit", x)
    return lax.log(lax.div(x, lax.sub(_lax_const(x, 1), x)))


def _logit_jvp(g, ans, x):
    return lax.div(g, lax.mul(x, lax.sub(_lax_const(x, 1), x)))


logit.defjvps(_logit_jvp)


@_custom_jvp
def xlogy(x, y):
    """Compute ``x * log(y)``, 0 where ``x`` is 0 unless ``y`` is NaN (jax.scipy.special.xlogy)."""
    x, y = _float_args("xlogy", x, y)
    keep = (x != 0.0) | jnp.isnan(y)
    return jnp.where(keep, lax.mul(x, lax.log(y)), jnp.zeros_like(x))


def _xlogy_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlogy(x, y)
    return out, (x_dot * lax.log(y) + y_dot * x / y).astype(out.dtype)


xlogy.defjvp(_xlogy_jvp)


@_custom_jvp
def xlog1py(x, y):
    """Compute ``x * log1p(y)``, 0 where ``x`` is 0 unless ``y`` is NaN.

    (jax.scipy.special.xlog1py)
    """
    x, y = _float_args("xlog1py", x, y)
    keep = (x != 0.0) | jnp.isnan(y)
    return jnp.where(keep, lax.mul(x, lax.log1p(y)), jnp.zeros_like(x))


def _xlog1py_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    out = xlog1py(x, y)
    return out, (x_dot * lax.log1p(y) + y_dot * x / (1 + y)).astype(out.dtype)


xlog1py.defjvp(_xlog1py_jvp)


@_custom_jvp
def _xlogx(x):
    return xlogy(x, x)


def _xlogx_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    return _xlogx(x), x_dot * (lax.log(x) + 1)


_xlogx.defjvp(_xlogx_jvp)


def entr(x):
    """Compute the entropy term ``-x log(x)``: 0 at 0, -inf below (jax.scipy.special.entr)."""
    (x,) = _float_args("entr", x)
    _refuse_complex("entr", x)
    return lax.select(lax.lt(x, _lax_const(x, 0)), lax.full_like(x, -np.inf), lax.neg(_xlogx(x)))


def rel_entr(p, q):
    """Compute the relative entropy term ``p log(p / q)`` (jax.scipy.special.rel_entr).

    0 where ``p == 0`` and ``q >= 0``; inf where either is negative or ``q == 0 < p``.
    """
    p, q = _float_args("rel_entr", p, q)
    _refuse_complex("rel_entr", p)
    zero = _lax_const(p, 0.0)
    both_positive = (p > zero) & (q > zero)
    zero_term = (p == zero) & (q >= zero)
    safe_p = jnp.where(both_positive, p, 1)
    safe_q = jnp.where(both_positive, q, 1)
    # p log p - p log q, as JAX's (not p log(p / q): other bits)
    value = lax.sub(_xlogx(safe_p), xlogy(safe_p, safe_q))
    return jnp.where(both_positive, value, jnp.where(zero_term, zero, np.inf))


def kl_div(p, q):
    """Compute the Kullback-Leibler term ``p log(p / q) - p + q`` (jax.scipy.special.kl_div)."""
    p, q = _float_args("kl_div", p, q)
    _refuse_complex("kl_div", p)
    return rel_entr(p, q) - p + q


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
