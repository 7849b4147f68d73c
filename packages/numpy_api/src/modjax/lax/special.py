"""Special functions: error functions, gamma family, Bessel, incomplete gamma and beta.

Each primitive is declared in one line with its accepted dtypes (floating
only, as in JAX) and its lowering; the JVP and batching rules follow the
declarations. Functions with a CHLO op lower to it (``chlo.erf``,
``chlo.lgamma``, ``chlo.polygamma``, ...), which XLA expands for every float
width. The others are composites written with lax primitives and lowered
inline (``lower_fun``), in float32 for float16/bfloat16 operands:

* ``bessel_i0e``: Cephes' Chebyshev expansions of ``exp(-|x|) I0(x)`` on ``[0, 8]``
  and beyond, as JAX lowers it;
* ``igamma``/``igammac``/``igamma_grad_a``: the series of P(a, x) when
  ``x < 1`` or ``x < a`` and the continued fraction of Q(a, x) otherwise,
  iterated to convergence in a ``stablehlo.while``, carrying the derivative
  with respect to ``a`` alongside for ``igamma_grad_a``;
* ``regularized_incomplete_beta``: the continued fraction of I_x(a, b)
  (modified Lentz), with the symmetry ``I_x(a, b) = 1 - I_{1-x}(b, a)``.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from modjax.autodiff import defjvp, defjvp2
from modjax.batching import defbroadcasting, defvectorized
from modjax.lowering import chlo, lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from . import elementwise as ew
from . import reductions as red
from . import structural as st
from ._common import (
    FLOAT,
    aval_of,
    broadcast_shapes,
    check_dtype,
    check_same_dtypes,
    convert_weak_scalars,
)
from ._rules import const
from .control_flow.loops import while_loop
from .elementwise import _hlo_binary, _hlo_unary, binary_primitive, unary_primitive

__all__ = [
    "random_gamma_grad",
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "digamma",
    "erf",
    "erf_inv",
    "erfc",
    "igamma",
    "igamma_grad_a",
    "igammac",
    "lgamma",
    "polygamma",
    "regularized_incomplete_beta",
    "zeta",
    "bessel_i0e_p",
    "bessel_i1e_p",
    "digamma_p",
    "erf_inv_p",
    "erf_p",
    "erfc_p",
    "igamma_grad_a_p",
    "igamma_p",
    "igammac_p",
    "lgamma_p",
    "polygamma_p",
    "regularized_incomplete_beta_p",
    "zeta_p",
]

# --- helpers for the composites ----------------------------------------------------------------


def _dtype(x) -> np.dtype:
    return aval_of(x).dtype


def _c(value, like):
    """``value`` as a rank-0 constant of ``like``'s dtype (lax ops need equal dtypes)."""
    return np.asarray(value, _dtype(like))[()]


def _jvp_c(value, like):
    """``value`` as a constant of a derivative rule, typed as JAX's ``_const``: weakly
    typed when ``like`` is a weakly typed rank-0 value, strong otherwise (so that
    ``grad(erf)(0.5)`` is weak and the cotangent of a weak array is strong, as in JAX)."""
    aval = aval_of(like)
    if aval.weak_type and not aval.shape:
        return const(like, value)
    return _c(value, like)


def _full(value, like):
    return st.full_like(like, value)


def _where(pred, on_true, on_false):
    return ew.select_n(pred, on_false, on_true)


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """Composites compute in float32 for the narrow floats, as XLA's expansions do."""
    return np.dtype(np.float64) if dtype == np.float64 else np.dtype(np.float32)


def _upcast(fun):
    """Wrap a composite so that it computes in float32 (or float64) and casts back."""

    def wrapped(*args, **params):
        dtype = _dtype(args[0])
        wide = _compute_dtype(dtype)
        if wide == dtype:
            return fun(*args, **params)
        out = fun(*(ew.convert_element_type(a, wide) for a in args), **params)
        return ew.convert_element_type(out, dtype)

    wrapped.__name__ = fun.__name__
    return wrapped


def _loop(cond, body, carry):
    """Run ``body`` on the list ``carry`` while ``cond(carry)`` holds: a ``while_p`` loop.

    The composites are traced by ``lower_fun``, so the loop lowers to ``stablehlo.while``.
    """
    return while_loop(cond, body, list(carry))


def _any_enabled(axes, carry):
    """The loop condition of the composites: some element (``carry[0]``) is still iterating."""
    return red.reduce_or(carry[0], axes)


# --- unary special functions ---------------------------------------------------------------


# Cephes' Chebyshev coefficients of exp(-x) I0(x): on [0, 8] in the variable x / 2 - 2 and
# of sqrt(x) exp(-x) I0(x) beyond 8 in 32 / x - 2. float32 uses the last 18 and 7 of them
# (Cephes' single-precision tables), as JAX's lowering does.
_I0E_CHEB_LOW = (
    -4.41534164647933937950e-18,
    3.33079451882223809783e-17,
    -2.43127984654795469359e-16,
    1.71539128555513303061e-15,
    -1.16853328779934516808e-14,
    7.67618549860493561688e-14,
    -4.85644678311192946090e-13,
    2.95505266312963983461e-12,
    -1.72682629144155570723e-11,
    9.67580903537323691224e-11,
    -5.18979560163526290666e-10,
    2.65982372468238665035e-9,
    -1.30002500998624804212e-8,
    6.04699502254191894932e-8,
    -2.67079385394061173391e-7,
    1.11738753912010371815e-6,
    -4.41673835845875056359e-6,
    1.64484480707288970893e-5,
    -5.75419501008210370398e-5,
    1.88502885095841655729e-4,
    -5.76375574538582365885e-4,
    1.63947561694133579842e-3,
    -4.32430999505057594430e-3,
    1.05464603945949983183e-2,
    -2.37374148058994688156e-2,
    4.93052842396707084878e-2,
    -9.49010970480476444210e-2,
    1.71620901522208775349e-1,
    -3.04682672343198398683e-1,
    6.76795274409476084995e-1,
)
_I0E_CHEB_HIGH = (
    -7.23318048787475395456e-18,
    -4.83050448594418207126e-18,
    4.46562142029675999901e-17,
    3.46122286769746109310e-17,
    -2.82762398051658348494e-16,
    -3.42548561967721913462e-16,
    1.77256013305652638360e-15,
    3.81168066935262242075e-15,
    -9.55484669882830764870e-15,
    -4.15056934728722208663e-14,
    1.54008621752140982691e-14,
    3.85277838274214270114e-13,
    7.18012445138366623367e-13,
    -1.79417853150680611778e-12,
    -1.32158118404477131188e-11,
    -3.14991652796324136454e-11,
    1.18891471078464383424e-11,
    4.94060238822496958910e-10,
    3.39623202570838634515e-9,
    2.26666899049817806459e-8,
    2.04891858946906374183e-7,
    2.89137052083475648297e-6,
    6.88975834691682398426e-5,
    3.36911647825569408990e-3,
    8.04490411014108831608e-1,
)


def _chebyshev(t, coefficients):
    """Clenshaw's recurrence for a Chebyshev series in ``t`` (Cephes' ``chbevl``), every step
    as JAX's lowering writes it (starting from zero arrays), so that XLA rounds alike."""
    b0 = b1 = b2 = _full(0.0, t)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = ew.add(ew.sub(ew.mul(t, b1), b2), _full(c, t))
    return ew.mul(_c(0.5, t), ew.sub(b0, b2))


def _bessel_i0e_impl(x):
    """exp(-|x|) I0(x) from Cephes' Chebyshev expansions (JAX's lowering of bessel_i0e)."""
    f64 = _dtype(x) == np.float64
    low = _I0E_CHEB_LOW if f64 else _I0E_CHEB_LOW[-18:]
    high = _I0E_CHEB_HIGH if f64 else _I0E_CHEB_HIGH[-7:]
    ax = ew.abs(x)
    two = _full(2.0, ax)
    near = _chebyshev(ew.sub(ew.mul(_full(0.5, ax), ax), two), low)
    far_t = ew.sub(ew.div(_full(32.0, ax), ax), two)
    far = ew.div(_chebyshev(far_t, high), ew.sqrt(ax))
    return _where(ew.le(ax, _c(8.0, ax)), near, far)


def _chlo_unary(op):
    return _hlo_unary(op)


erf_p = unary_primitive("erf", [FLOAT], _chlo_unary(chlo.erf))
erfc_p = unary_primitive("erfc", [FLOAT], _chlo_unary(chlo.erfc))
erf_inv_p = unary_primitive("erf_inv", [FLOAT], _chlo_unary(chlo.erf_inv))
lgamma_p = unary_primitive("lgamma", [FLOAT], _chlo_unary(chlo.lgamma))
digamma_p = unary_primitive("digamma", [FLOAT], _chlo_unary(chlo.digamma))
bessel_i1e_p = unary_primitive("bessel_i1e", [FLOAT], _chlo_unary(chlo.bessel_i1e))
bessel_i0e_p = unary_primitive("bessel_i0e", [FLOAT], lower_fun(_upcast(_bessel_i0e_impl)))


def erf(x):
    """Compute the error function elementwise (jax.lax.erf)."""
    return erf_p.bind(x)


def erfc(x):
    """Compute the complementary error function ``1 - erf(x)`` elementwise (jax.lax.erfc)."""
    return erfc_p.bind(x)


def erf_inv(x):
    """Compute the inverse error function elementwise (jax.lax.erf_inv)."""
    return erf_inv_p.bind(x)


def lgamma(x):
    """Compute the log of the absolute value of the gamma function elementwise (jax.lax.lgamma)."""
    return lgamma_p.bind(x)


def digamma(x):
    """Compute the digamma function, the derivative of ``lgamma``, elementwise (jax.lax.digamma)."""
    return digamma_p.bind(x)


def bessel_i0e(x):
    """Compute the exponentially scaled Bessel function ``exp(-|x|) I0(x)`` (jax.lax.bessel_i0e)."""
    return bessel_i0e_p.bind(x)


def bessel_i1e(x):
    """Compute the exponentially scaled Bessel function ``exp(-|x|) I1(x)`` (jax.lax.bessel_i1e)."""
    return bessel_i1e_p.bind(x)


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0


def _gaussian_jvp(scale: float):
    # JAX's form: scale * (g * exp(-x^2)), so derivatives round as JAX's.
    def jvp(g, x):
        return ew.mul(_jvp_c(scale, x), ew.mul(g, ew.exp(ew.neg(ew.square(x)))))

    return jvp


_erf_jvp = _gaussian_jvp(_TWO_OVER_SQRT_PI)
_erfc_jvp = _gaussian_jvp(-_TWO_OVER_SQRT_PI)


def _erf_inv_jvp(g, ans, x):
    return ew.mul(_jvp_c(_SQRT_PI_OVER_TWO, x), ew.mul(g, ew.exp(ew.square(ans))))


def _bessel_i0e_jvp(g, ans, x):
    return ew.mul(g, ew.sub(bessel_i1e(x), ew.mul(ew.sign(x), ans)))


def _bessel_i1e_jvp(g, ans, x):
    # d/dx i1e(x) = i0e(x) - i1e(x) (sign(x) + 1/x), whose limit at 0 is 1/2
    eps = _c(np.finfo(_dtype(x)).eps, x)
    not_tiny = ew.gt(ew.abs(x), eps)
    safe_x = _where(not_tiny, x, _full(eps, x))
    dy = ew.sub(
        bessel_i0e(safe_x), ew.mul(ans, ew.add(ew.sign(safe_x), ew.div(const(x, 1), safe_x)))
    )
    return ew.mul(g, _where(not_tiny, dy, _full(0.5, x)))


defjvp(erf_p, _erf_jvp)
defjvp(erfc_p, _erfc_jvp)
defjvp2(erf_inv_p, _erf_inv_jvp)
defjvp(lgamma_p, lambda g, x: ew.mul(g, digamma(x)))
defjvp(digamma_p, lambda g, x: ew.mul(g, polygamma(_jvp_c(1, x), x)))
defjvp2(bessel_i0e_p, _bessel_i0e_jvp)
defjvp2(bessel_i1e_p, _bessel_i1e_jvp)
for _p in (erf_p, erfc_p, erf_inv_p, lgamma_p, digamma_p, bessel_i0e_p, bessel_i1e_p):
    defvectorized(_p)


# --- polygamma and zeta: binary, with CHLO ops ---------------------------------------------------

polygamma_p = binary_primitive("polygamma", [FLOAT], _hlo_binary(chlo.polygamma))
zeta_p = binary_primitive("zeta", [FLOAT], _hlo_binary(chlo.zeta))


def polygamma(m, x):
    """Compute the ``m``-th derivative of the digamma function elementwise (jax.lax.polygamma).

    ``m`` is a float array of non-negative integral values, of ``x``'s dtype.
    """
    return ew._bind_binary(polygamma_p, m, x)


def zeta(x, q):
    """Compute the Hurwitz zeta function ``sum_k (k + q)^-x`` elementwise (jax.lax.zeta)."""
    return ew._bind_binary(zeta_p, x, q)


def _polygamma_jvp_m(g, m, x):
    raise ValueError("polygamma gradient with respect to m is not supported")


def _zeta_jvp_x(g, x, q):
    raise ValueError("zeta gradient with respect to x is not supported")


def _zeta_jvp_q(g, x, q):
    # d/dq zeta(x, q) = -x zeta(x + 1, q)
    return ew.mul(g, ew.neg(ew.mul(x, zeta(ew.add(x, _c(1, x)), q))))


defjvp(
    polygamma_p, _polygamma_jvp_m, lambda g, m, x: ew.mul(g, polygamma(ew.add(m, _jvp_c(1, m)), x))
)
defjvp(zeta_p, _zeta_jvp_x, _zeta_jvp_q)
defbroadcasting(polygamma_p)
defbroadcasting(zeta_p)


# --- the incomplete gamma functions ---------------------------------------------------------


def _igamma_series(ax, a, x, enabled, derivative):
    """P(a, x) (or dP/da) by its power series, for the ``enabled`` elements."""
    eps = _c(np.finfo(_dtype(x)).eps, x)
    one, zero = _full(1.0, x), _full(0.0, x)
    cond = partial(_any_enabled, tuple(range(len(aval_of(x).shape))))

    def body(carry):
        enabled, r, c, ans, dc, dans, a, x, it = carry
        r2 = ew.add(r, _c(1, r))
        ratio = ew.div(x, r2)
        dc2 = ew.sub(ew.mul(dc, ratio), ew.div(ew.mul(c, ratio), r2))  # d/da of c * x / (a + n)
        c2 = ew.mul(c, ratio)
        ans2 = ew.add(ans, c2)
        dans2 = ew.add(dans, dc2)
        if derivative:
            going = ew.gt(ew.abs(ew.div(dc2, dans2)), eps)
        else:
            going = ew.gt(ew.abs(ew.div(c2, ans2)), eps)
        upd = [(r, r2), (c, c2), (ans, ans2), (dc, dc2), (dans, dans2)]
        new = [_where(enabled, n, o) for o, n in upd]
        it = ew.add(it, np.int32(1))
        more = ew.bitwise_and(enabled, going)
        more = ew.bitwise_and(more, ew.lt(it, np.int32(2000)))
        return [more, *new, a, x, it]

    carry = [enabled, a, one, one, zero, zero, a, x, np.int32(0)]
    _, _, _, ans, _, dans, *_ = _loop(cond, body, carry)
    exp_ax = ew.exp(ax)
    if not derivative:
        return ew.div(ew.mul(ans, exp_ax), a)
    dlogax = ew.sub(ew.log(x), digamma(a))
    # P = e^ax ans / a, so dP/da = e^ax / a (dans + ans dax - ans / a)
    inner = ew.add(dans, ew.mul(ans, ew.sub(dlogax, ew.div(_c(1, a), a))))
    return ew.div(ew.mul(exp_ax, inner), a)


def _igammac_cf(ax, a, x, enabled, derivative):
    """Q(a, x) (or dQ/da) by its continued fraction, for the ``enabled`` elements."""
    dt = _dtype(x)
    eps = _c(np.finfo(dt).eps, x)
    big = _c(2.0 ** (52 if dt == np.float64 else 24), x)
    biginv = _c(2.0 ** -(52 if dt == np.float64 else 24), x)
    zero = _full(0.0, x)
    y = ew.sub(_c(1, a), a)
    z = ew.add(ew.add(x, y), _c(1, x))
    pkm2, qkm2, pkm1, qkm1 = _full(1.0, x), x, ew.add(x, _c(1, x)), ew.mul(z, x)
    dpkm2, dqkm2, dpkm1, dqkm1 = zero, zero, zero, ew.neg(x)
    ans = ew.div(pkm1, qkm1)
    dans = ew.div(ew.sub(dpkm1, ew.mul(ans, dqkm1)), qkm1)
    cond = partial(_any_enabled, tuple(range(len(aval_of(x).shape))))

    def body(carry):
        enabled, c, y, z, pkm1, pkm2, qkm1, qkm2, dpkm1, dpkm2, dqkm1, dqkm2, ans, dans, it = carry
        one = _c(1, c)
        c2, y2, z2 = ew.add(c, one), ew.add(y, one), ew.add(z, _c(2, z))
        yc = ew.mul(y2, c2)
        pk = ew.sub(ew.mul(pkm1, z2), ew.mul(pkm2, yc))
        qk = ew.sub(ew.mul(qkm1, z2), ew.mul(qkm2, yc))
        # d/da: dy/da = -1 (so d(yc)/da = -c), dz/da = -1
        dpk = ew.add(ew.sub(ew.sub(ew.mul(dpkm1, z2), pkm1), ew.mul(dpkm2, yc)), ew.mul(pkm2, c2))
        dqk = ew.add(ew.sub(ew.sub(ew.mul(dqkm1, z2), qkm1), ew.mul(dqkm2, yc)), ew.mul(qkm2, c2))
        nonzero = ew.ne(qk, _c(0, qk))
        safe_qk = _where(nonzero, qk, _full(1.0, qk))
        r = ew.div(pk, safe_qk)
        dr = ew.div(ew.sub(dpk, ew.mul(r, dqk)), safe_qk)
        if derivative:
            t = ew.abs(ew.div(ew.sub(dans, dr), dr))
        else:
            t = ew.abs(ew.div(ew.sub(ans, r), r))
        t = _where(nonzero, t, _full(1.0, t))
        ans2 = _where(nonzero, r, ans)
        dans2 = _where(nonzero, dr, dans)
        rescale = ew.gt(ew.abs(pk), big)

        def scaled(v):
            return _where(rescale, ew.mul(v, biginv), v)

        new_p = [scaled(v) for v in (pk, pkm1, qk, qkm1, dpk, dpkm1, dqk, dqkm1)]
        pkm1_, pkm2_, qkm1_, qkm2_, dpkm1_, dpkm2_, dqkm1_, dqkm2_ = new_p
        olds = [c, y, z, pkm1, pkm2, qkm1, qkm2, dpkm1, dpkm2, dqkm1, dqkm2, ans, dans]
        news = [c2, y2, z2, pkm1_, pkm2_, qkm1_, qkm2_, dpkm1_, dpkm2_, dqkm1_, dqkm2_, ans2, dans2]
        vals = [_where(enabled, n, o) for o, n in zip(olds, news, strict=True)]
        it = ew.add(it, np.int32(1))
        more = ew.bitwise_and(ew.bitwise_and(enabled, ew.gt(t, eps)), ew.lt(it, np.int32(2000)))
        return [more, *vals, it]

    carry = [enabled, zero, y, z, pkm1, pkm2, qkm1, qkm2, dpkm1, dpkm2, dqkm1, dqkm2, ans, dans]
    out = _loop(cond, body, [*carry, np.int32(0)])
    ans, dans = out[12], out[13]
    exp_ax = ew.exp(ax)
    if not derivative:
        return ew.mul(ans, exp_ax)
    dax = ew.sub(ew.log(x), digamma(a))
    return ew.mul(exp_ax, ew.add(dans, ew.mul(ans, dax)))


def _igamma_parts(a, x):
    """The shared prologue: log(x^a e^-x / Gamma(a)), the branch, the invalid points."""
    a, x = (_broadcast_to_shape(v, _out_shape(a, x)) for v in (a, x))
    zero = _c(0, x)
    is_nan = ew.bitwise_or(ew.ne(a, a), ew.ne(x, x))
    x_is_zero = ew.eq(x, zero)
    x_is_inf = ew.eq(x, _c(math.inf, x))
    domain_error = ew.bitwise_or(ew.bitwise_or(ew.lt(x, zero), ew.lt(a, zero)), is_nan)
    domain_error = ew.bitwise_or(domain_error, ew.eq(a, _c(math.inf, a)))
    a_is_zero = ew.eq(a, zero)
    domain_error = ew.bitwise_or(domain_error, ew.bitwise_and(a_is_zero, x_is_zero))
    special = ew.bitwise_or(ew.bitwise_or(domain_error, x_is_zero), x_is_inf)
    special = ew.bitwise_or(special, a_is_zero)
    # safe operands where the result is special, so that the loops converge at once
    one = _full(1.0, x)
    a_s = _where(special, one, a)
    x_s = _where(special, one, x)
    ax = ew.sub(ew.sub(ew.mul(a_s, ew.log(x_s)), x_s), lgamma(a_s))
    use_series = ew.bitwise_or(ew.lt(x_s, _c(1, x)), ew.lt(x_s, a_s))
    not_special = ew.bitwise_not(special)
    series_on = ew.bitwise_and(not_special, use_series)
    cf_on = ew.bitwise_and(not_special, ew.bitwise_not(use_series))
    flags = {"domain_error": domain_error, "x_is_zero": x_is_zero}
    flags.update(x_is_inf=x_is_inf, a_is_zero=a_is_zero)
    return a_s, x_s, ax, use_series, series_on, cf_on, flags


def _out_shape(a, x):
    return broadcast_shapes("igamma", (aval_of(a).shape, aval_of(x).shape))


def _broadcast_to_shape(v, shape):
    """Broadcast an operand of a lax n-ary op (rank 0, or size-1 dims) to ``shape``."""
    s = aval_of(v).shape
    if s == shape:
        return v
    return st.broadcast_in_dim(v, shape, tuple(range(len(shape))) if s else ())


def _igamma_impl(a, x, *, complement=False):
    a_s, x_s, ax, use_series, series_on, cf_on, f = _igamma_parts(a, x)
    p = _igamma_series(ax, a_s, x_s, series_on, derivative=False)
    q = _igammac_cf(ax, a_s, x_s, cf_on, derivative=False)
    one = _c(1, p)
    if complement:
        out = _where(use_series, ew.sub(one, p), q)
        out = _where(f["x_is_zero"], _full(1.0, out), out)
        out = _where(ew.bitwise_or(f["x_is_inf"], f["a_is_zero"]), _full(0.0, out), out)
    else:
        out = _where(use_series, p, ew.sub(one, q))
        out = _where(f["x_is_zero"], _full(0.0, out), out)
        out = _where(ew.bitwise_or(f["x_is_inf"], f["a_is_zero"]), _full(1.0, out), out)
    return _where(f["domain_error"], _full(math.nan, out), out)


def _igamma_grad_a_impl(a, x):
    a_s, x_s, ax, use_series, series_on, cf_on, f = _igamma_parts(a, x)
    dp = _igamma_series(ax, a_s, x_s, series_on, derivative=True)
    dq = _igammac_cf(ax, a_s, x_s, cf_on, derivative=True)
    out = _where(use_series, dp, ew.neg(dq))
    out = _where(f["x_is_zero"], _full(0.0, out), out)
    bad = ew.bitwise_or(ew.bitwise_or(f["domain_error"], f["x_is_inf"]), f["a_is_zero"])
    return _where(bad, _full(math.nan, out), out)


def _igammac_impl(a, x):
    return _igamma_impl(a, x, complement=True)


igamma_p = binary_primitive("igamma", [FLOAT], lower_fun(_upcast(_igamma_impl)))
igammac_p = binary_primitive("igammac", [FLOAT], lower_fun(_upcast(_igammac_impl)))
igamma_grad_a_p = binary_primitive(
    "igamma_grad_a", [FLOAT], lower_fun(_upcast(_igamma_grad_a_impl))
)


def igamma(a, x):
    """Compute the regularized lower incomplete gamma function P(a, x) (jax.lax.igamma)."""
    return ew._bind_binary(igamma_p, a, x)


def igammac(a, x):
    """Compute the regularized upper incomplete gamma function Q(a, x) (jax.lax.igammac)."""
    return ew._bind_binary(igammac_p, a, x)


def igamma_grad_a(a, x):
    """Compute the derivative of ``igamma(a, x)`` with respect to ``a`` (jax.lax.igamma_grad_a)."""
    return ew._bind_binary(igamma_grad_a_p, a, x)


def random_gamma_grad(a, x):
    """Return the derivative of Gamma(a, 1) samples ``x`` in ``a`` (jax.lax.random_gamma_grad).

    Computed by modjax.random, where Gamma's implicit derivative lives (imported on first
    use: random builds on lax).
    """
    from ..random._gamma import random_gamma_grad as gamma_grad

    return gamma_grad(a, x)


def _igamma_dx(g, a, x):
    # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a); the 1 keeps a weakly typed ``a`` weak, as
    # JAX's ``_ones(a)`` (so ``grad(igamma, 1)(2.0, 1.5)`` is weakly typed)
    log_density = ew.sub(ew.sub(ew.mul(ew.sub(a, const(a, 1)), ew.log(x)), x), lgamma(a))
    return ew.mul(g, ew.exp(log_density))


def _igamma_grad_a_jvp(g, a, x):
    raise NotImplementedError("Differentiation rule for 'igamma_grad_a' not implemented")


defjvp(igamma_p, lambda g, a, x: ew.mul(g, igamma_grad_a(a, x)), _igamma_dx)
defjvp(
    igammac_p,
    lambda g, a, x: ew.neg(ew.mul(g, igamma_grad_a(a, x))),
    lambda g, a, x: ew.neg(_igamma_dx(g, a, x)),
)
defjvp(igamma_grad_a_p, _igamma_grad_a_jvp, _igamma_grad_a_jvp)
for _p in (igamma_p, igammac_p, igamma_grad_a_p):
    defbroadcasting(_p)


# --- the regularized incomplete beta function -----------------------------------------------


def _betainc_cf(a, b, x, enabled):
    """The continued fraction of I_x(a, b) without its prefactor (modified Lentz)."""
    dt = _dtype(x)
    tiny = _c(np.finfo(dt).tiny * 1e3, x)
    eps = _c(np.finfo(dt).eps, x)
    one = _c(1, x)

    def fix(v):
        return _where(ew.lt(ew.abs(v), tiny), _full(tiny, v), v)

    d0 = ew.div(one, fix(ew.sub(one, ew.div(ew.mul(ew.add(a, b), x), ew.add(a, one)))))
    cond = partial(_any_enabled, tuple(range(len(aval_of(x).shape))))

    def body(carry):
        enabled, m, c, d, h, a, b, x, it = carry
        qab, qap, qam = ew.add(a, b), ew.add(a, one), ew.sub(a, one)
        m2 = ew.mul(m, _c(2, m))
        # even step
        aa = ew.div(ew.mul(ew.mul(m, ew.sub(b, m)), x), ew.mul(ew.add(qam, m2), ew.add(a, m2)))
        d1 = ew.div(one, fix(ew.add(one, ew.mul(aa, d))))
        c1 = fix(ew.add(one, ew.div(aa, c)))
        h1 = ew.mul(h, ew.mul(d1, c1))
        # odd step
        aa = ew.neg(
            ew.div(
                ew.mul(ew.mul(ew.add(a, m), ew.add(qab, m)), x),
                ew.mul(ew.add(a, m2), ew.add(qap, m2)),
            )
        )
        d2 = ew.div(one, fix(ew.add(one, ew.mul(aa, d1))))
        c2 = fix(ew.add(one, ew.div(aa, c1)))
        delta = ew.mul(d2, c2)
        h2 = ew.mul(h1, delta)
        going = ew.gt(ew.abs(ew.sub(delta, one)), eps)
        vals = [_where(enabled, n, o) for o, n in ((c, c2), (d, d2), (h, h2))]
        it = ew.add(it, np.int32(1))
        more = ew.bitwise_and(ew.bitwise_and(enabled, going), ew.lt(it, np.int32(1000)))
        return [more, ew.add(m, one), *vals, a, b, x, it]

    carry = [enabled, _full(1.0, x), _full(1.0, x), d0, d0, a, b, x, np.int32(0)]
    return _loop(cond, body, carry)[4]


def _betainc_impl(a, b, x):
    shape = broadcast_shapes("regularized_incomplete_beta", [aval_of(v).shape for v in (a, b, x)])
    a, b, x = (_broadcast_to_shape(v, shape) for v in (a, b, x))
    one, zero = _c(1, x), _c(0, x)
    nan_in = ew.bitwise_or(ew.bitwise_or(ew.ne(a, a), ew.ne(b, b)), ew.ne(x, x))
    domain_error = ew.bitwise_or(ew.bitwise_or(ew.lt(a, zero), ew.lt(b, zero)), nan_in)
    domain_error = ew.bitwise_or(domain_error, ew.bitwise_or(ew.lt(x, zero), ew.gt(x, one)))
    a_zero, b_zero = ew.eq(a, zero), ew.eq(b, zero)
    domain_error = ew.bitwise_or(domain_error, ew.bitwise_and(a_zero, b_zero))
    special = ew.bitwise_or(ew.bitwise_or(domain_error, a_zero), b_zero)
    x_zero, x_one = ew.eq(x, zero), ew.eq(x, one)
    special = ew.bitwise_or(special, ew.bitwise_or(x_zero, x_one))
    half = _full(0.5, x)
    a_s = _where(special, _full(1.0, a), a)
    b_s = _where(special, _full(1.0, b), b)
    x_s = _where(special, half, x)
    # the fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise
    flip = ew.gt(x_s, ew.div(ew.add(a_s, one), ew.add(ew.add(a_s, b_s), _c(2, x))))
    aa, bb = _where(flip, b_s, a_s), _where(flip, a_s, b_s)
    xx = _where(flip, ew.sub(one, x_s), x_s)
    log_front = ew.sub(
        ew.add(ew.mul(aa, ew.log(xx)), ew.mul(bb, ew.log1p(ew.neg(xx)))),
        ew.sub(ew.add(lgamma(aa), lgamma(bb)), lgamma(ew.add(aa, bb))),
    )
    cf = _betainc_cf(aa, bb, xx, ew.bitwise_not(special))
    value = ew.div(ew.mul(ew.exp(log_front), cf), aa)
    out = _where(flip, ew.sub(one, value), value)
    # I_0 = 0 and I_1 = 1; a = 0 (b > 0) gives 1 and b = 0 (a > 0) gives 0, as JAX does
    out = _where(ew.bitwise_or(x_zero, b_zero), _full(0.0, out), out)
    out = _where(ew.bitwise_or(x_one, a_zero), _full(1.0, out), out)
    out = _where(ew.bitwise_and(x_zero, ew.bitwise_not(b_zero)), _full(0.0, out), out)
    out = _where(ew.bitwise_and(a_zero, ew.bitwise_not(x_zero)), _full(1.0, out), out)
    return _where(domain_error, _full(math.nan, out), out)


def _betainc_abstract_eval(a, b, x):
    for i, v in enumerate((a, b, x)):
        check_dtype("regularized_incomplete_beta", v, [FLOAT], i)
    check_same_dtypes("regularized_incomplete_beta", (a, b, x))
    shape = broadcast_shapes("regularized_incomplete_beta", (a.shape, b.shape, x.shape))
    return ShapedArray(shape, x.dtype, a.weak_type and b.weak_type and x.weak_type)


regularized_incomplete_beta_p = Primitive("regularized_incomplete_beta")
regularized_incomplete_beta_p.def_abstract_eval(_betainc_abstract_eval)
regularized_incomplete_beta_p.def_impl(partial(apply_primitive, regularized_incomplete_beta_p))
register_lowering(regularized_incomplete_beta_p, lower_fun(_upcast(_betainc_impl)))


def regularized_incomplete_beta(a, b, x):
    """Compute the regularized incomplete beta function I_x(a, b) (jax.lax.betainc)."""
    a, b, x = convert_weak_scalars((a, b, x))
    return regularized_incomplete_beta_p.bind(a, b, x)


betainc = regularized_incomplete_beta


def _betainc_jvp_ab(g, a, b, x):
    raise ValueError("Betainc gradient with respect to a and b not supported.")


def _betainc_jvp_x(g, a, b, x):
    # d/dx I_x(a, b) = x^(a-1) (1-x)^(b-1) / B(a, b); JAX subtracts Python 1s, so weakly
    # typed a and b keep the derivative weak
    log_beta = ew.sub(ew.add(lgamma(a), lgamma(b)), lgamma(ew.add(a, b)))
    log_density = ew.sub(
        ew.add(
            ew.mul(ew.sub(a, const(a, 1)), ew.log(x)),
            ew.mul(ew.sub(b, const(b, 1)), ew.log1p(ew.neg(x))),
        ),
        log_beta,
    )
    return ew.mul(g, ew.exp(log_density))


defjvp(regularized_incomplete_beta_p, _betainc_jvp_ab, _betainc_jvp_ab, _betainc_jvp_x)
defbroadcasting(regularized_incomplete_beta_p)
