"""Bit-exact known answers of jax.scipy functions (JAX 0.10.2): cases and their recorder.

``CASES`` lists calls of ``jax.scipy.special`` and ``jax.scipy.stats`` functions,
their gradients and JVPs, with numpy-built inputs (numpy's legacy ``RandomState``,
whose streams are stable). ``run`` calls a case with a framework (jax or modjax)
eagerly on the numpy inputs and under ``jit`` with them as arguments, and describes
each result by its dtype, shape, weak type and raw bytes (hex), or the error's class
and message: equal records mean equal bits.

Run this file with a Python where jax is installed, from outside the repository
(modjax's tests never import jax): ``python .../scipy_jax_bits_sweep_gen.py``. It
writes ``scipy_jax_bits_sweep.json`` beside itself, read by
``test_scipy_jax_bits_sweep.py``.
"""

from __future__ import annotations

import pathlib
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jax_bits_harness as harness  # noqa: E402

REFERENCE = pathlib.Path(__file__).with_name("scipy_jax_bits_sweep.json")

F16, F32, F64, BF16 = np.float16, np.float32, np.float64, ml_dtypes.bfloat16
C64, I32 = np.complex64, np.int32


rand, uniform = harness.rand, harness.uniform


CASES: list[dict] = []


def case(name, fn, *args, x64=False, jit=True, **kwargs):
    """``fn(F, *args, **kwargs)`` with ``F`` a framework (``F.S`` its scipy)."""
    CASES.append({"name": name, "fn": fn, "args": args, "kwargs": kwargs, "x64": x64, "jit": jit})


def special(name):
    return lambda F, *a, **k: getattr(F.S.special, name)(*a, **k)


def stats(dist, name):
    return lambda F, *a, **k: getattr(getattr(F.S.stats, dist), name)(*a, **k)


def grad(f, argnum=0):
    """The gradient of ``sum(f(...))`` with respect to argument ``argnum``."""

    def g(F, *args, **kwargs):
        return F.grad(lambda *xs: F.jnp.sum(f(F, *xs, **kwargs)), argnums=argnum)(*args)

    return g


def jvp(f):
    """``f``'s value and JVP with respect to its first argument (tangent 0.75)."""

    def g(F, x, *rest, **kwargs):
        x = F.jnp.asarray(x)
        tangent = F.jnp.ones_like(x) * 0.75
        return F.jvp(lambda v: f(F, v, *rest, **kwargs), (x,), (tangent,))

    return g


real = rand((7,), F32, 1, 3.0)
positive = uniform((7,), F32, 2, 0.1, 6.0)
positive2 = uniform((7,), F32, 3, 0.1, 6.0)
probability = uniform((7,), F32, 4, 0.01, 0.99)
entr_points = np.array([0.0, -1.0, 0.5, 2.0, 3.0, np.inf, 1e-30], F32)

# i0 and i0e: Cephes' Chebyshev series (lax.bessel_i0e), i0 = exp(|x|) i0e(x).
for fname in ("i0", "i0e"):
    case(f"{fname}_f32", special(fname), real)
    case(f"{fname}_f64_x64", special(fname), real.astype(F64), x64=True)
    case(f"{fname}_int", special(fname), np.array([1, 2, 3, 0, -1], I32))
    case(f"{fname}_grad", grad(special(fname)), real)
case("i1_grad", grad(special("i1")), real)
case("i1e_jvp", jvp(special("i1e")), real)

# ndtri: Cephes' rational approximations; log_ndtr's own derivative rule.
case("ndtri_f32", special("ndtri"), probability)
case("ndtri_f64_x64", special("ndtri"), probability.astype(F64), x64=True)
case("ndtri_edges", special("ndtri"), np.array([0.0, 1.0, 1e-30, 0.5, 1 - 1e-7, 2.0], F32))
case("ndtri_python", special("ndtri"), 0.3, jit=False)
case("ndtri_grad", grad(special("ndtri")), probability)
case("log_ndtr_grad", grad(special("log_ndtr")), real * 5)
case("log_ndtr_grad_x64", grad(special("log_ndtr")), (real * 5).astype(F64), x64=True)
case(
    "log_ndtr_series_too_big",
    lambda F, x: F.S.special.log_ndtr(x, series_order=31),
    real,
    jit=False,
)

# logit's derivative rule; xlogy/xlog1py with complex values.
case("logit_grad", grad(special("logit")), probability)
case("logit_grad_x64", grad(special("logit")), probability.astype(F64), x64=True)
case("logit_python", special("logit"), 0.3, jit=False)
case("logit_c64", special("logit"), rand((3,), C64, 9))
case("expit_c64", special("expit"), rand((3,), C64, 9))
case("xlogy_c64", special("xlogy"), rand((3,), C64, 9), positive[:3])

# entr, rel_entr, kl_div: x log x - x log y with xlogx's derivative rule.
case("entr", special("entr"), entr_points)
case("entr_grad", grad(special("entr")), entr_points)
case("rel_entr", special("rel_entr"), positive, positive2)
case("rel_entr_broadcast", special("rel_entr"), positive[:, None], positive2[None, :3])
case("rel_entr_python", special("rel_entr"), 2.5, 1.5, jit=False)
case("rel_entr_grad1", grad(special("rel_entr"), 1), positive, positive2)
case("kl_div", special("kl_div"), positive, positive2)
case("kl_div_f64_x64", special("kl_div"), positive.astype(F64), positive2.astype(F64), x64=True)
case("kl_div_grad0", grad(special("kl_div")), positive, positive2)

# multigammaln: one lgamma per dimension along a new axis, then their sum.
case("multigammaln", special("multigammaln"), positive + 2, 3)
case("multigammaln_x64", special("multigammaln"), (positive + 2).astype(F64), 3, x64=True)

# gamma and loggamma of complex values (Lanczos), gammasgn's -0.
complex_points = rand((5,), C64, 9, 2.0)
case("gamma_c64", special("gamma"), complex_points)
case("loggamma_c64", special("loggamma"), complex_points)
case("gammasgn_signed_zero", special("gammasgn"), np.array([-0.0, 0.0, -1.5, -2.0, np.nan], F32))

# zeta: derivatives (and the primal under differentiation) from the Euler-Maclaurin series.
case("zeta_grad_x", grad(special("zeta")), positive + 1, positive2)
case(
    "zeta_jvp_q",
    lambda F, x, q: F.jvp(lambda v: F.S.special.zeta(x, v), (q,), (q * 0.5,)),
    positive + 1,
    positive2,
)
case(
    "zeta_grad_q_x64",
    grad(special("zeta"), 1),
    (positive + 1).astype(F64),
    positive2.astype(F64),
    x64=True,
)

# poch on broadcast shapes: gamma(z) on z's own shape, as JAX's (XLA's loops round by shape).
case("poch_broadcast", special("poch"), positive[:, None], positive2[None, :3])

# sici and expi run as one program eagerly too, as JAX's jitted functions.
case("sici_f64_x64", special("sici"), real.astype(F64), x64=True)
case("sici_grad", grad(lambda F, x: F.S.special.sici(x)[0] + F.S.special.sici(x)[1]), real)
case("expi_positive_python", special("expi"), 0.7, jit=False)

# sph_harm_y: the normalized Legendre table gathered at (|m|, n), then the phase.
degrees, orders = np.array([0, 1, 2, 3, 2], I32), np.array([0, 1, -1, 2, 0], I32)
theta, phi = uniform((5,), F32, 11, 0, 3), uniform((5,), F32, 12, 0, 6)
case(
    "sph_harm_y",
    lambda F, n, m, t, p: F.S.special.sph_harm_y(n, m, t, p, n_max=3),
    degrees,
    orders,
    theta,
    phi,
)

# sin and cos of complex values: JAX's expansion by expm1, not StableHLO's complex ops.
case("complex_sin_cos", lambda F, z: (F.jnp.sin(z), F.jnp.cos(z)), rand((16,), C64, 9, 3.0))
case("complex_sin_imaginary", lambda F, z: F.jnp.sin(z * 1j), rand((8,), C64, 8))

# --- jax.scipy.stats ---

x6 = rand((6,), F32, 1, 2.0)
q6 = uniform((6,), F32, 3, 0.02, 0.98)
shape6 = uniform((6,), F32, 4, 0.5, 4.0)
shape6b = uniform((6,), F32, 5, 0.5, 4.0)
loc = rand((3, 1), F32, 6)
scale = uniform((3, 1), F32, 7, 0.5, 2.0)
counts = np.array([0, 1, 2, 3, 5, 1], I32)
trials = np.array([5, 6, 7, 8, 9, 10], I32)
p6 = uniform((6,), F32, 8, 0.1, 0.9)

# Gumbel: JAX's formulas (sf = 1 - exp(-exp(-z)), logsf by log1mexp, ...).
for dist, fname in [("gumbel_r", "sf"), ("gumbel_r", "logsf"), ("gumbel_l", "logcdf")]:
    case(f"{dist}.{fname}", stats(dist, fname), x6, loc, scale)
case("gumbel_l.ppf", stats("gumbel_l", "ppf"), q6, loc, scale)
case("gumbel_r.logsf_grad", grad(stats("gumbel_r", "logsf")), x6, loc, scale)

# CDFs clamp with lax.clamp: log CDFs have finite gradients below the support.
positive6 = uniform((6,), F32, 2, 0.05, 4.0)
case("gamma.logcdf_grad_x", grad(stats("gamma", "logcdf")), positive6, shape6, loc, scale)
case("chi2.logcdf_grad_x", grad(stats("chi2", "logcdf")), positive6, shape6, loc, scale)

# Arguments promoted to a common rank only (lax broadcasts): gradients sum as JAX's.
case("cauchy.ppf_grad", grad(stats("cauchy", "ppf")), q6, loc, scale)
case("expon.ppf_grad", grad(stats("expon", "ppf")), q6, loc, scale)
case("logistic.ppf_grad", grad(stats("logistic", "ppf")), q6, loc, scale)
case("pareto.ppf_grad", grad(stats("pareto", "ppf")), q6, shape6, loc, scale)
case("t.logpdf_loc_scale", stats("t", "logpdf"), x6, shape6, loc, scale)
case("pareto.logpdf_loc_scale", stats("pareto", "logpdf"), positive6 + 1, shape6, loc, scale)

# Grouping of terms as JAX's; JAX's jitted functions as one program, eager too.
case("nbinom.logpmf", stats("nbinom", "logpmf"), counts, trials, p6)
case("nbinom.pmf_python", stats("nbinom", "pmf"), 2, 5.0, 0.3, jit=False)
case("betabinom.logpmf", stats("betabinom", "logpmf"), counts, trials, shape6, shape6b)
case("truncnorm.logcdf", stats("truncnorm", "logcdf"), x6, -shape6, shape6b)
case(
    "truncnorm.logpdf_grad_scale",
    grad(stats("truncnorm", "logpdf"), 4),
    x6,
    -shape6,
    shape6b,
    loc,
    scale,
)
case("poisson.entropy", stats("poisson", "entropy"), shape6)
data45 = rand((4, 5), F32, 15)
case("sem", lambda F, a: F.S.stats.sem(a), data45)
case(
    "mode_counts_x64",
    lambda F, a: F.S.stats.mode(a, axis=1),
    np.array([[1, 2, 2, 3], [4, 4, 1, 0]], np.int64),
    x64=True,
)
kde_data, kde_points = rand((2, 20), F32, 16), rand((2, 5), F32, 17)
case("kde_evaluate", lambda F, d, p: F.S.stats.gaussian_kde(d).evaluate(p), kde_data, kde_points)
case("kde_box_1d", lambda F, d: F.S.stats.gaussian_kde(d).integrate_box_1d(-0.5, 1.0), kde_data[0])
A3 = rand((3, 3), F32, 12)
cov3 = (A3 @ A3.T + np.eye(3, dtype=F32)).astype(F32)
mvn = stats("multivariate_normal", "logpdf")
case("mvn.logpdf", mvn, rand((5, 3), F32, 14), rand((3,), F32, 13), cov3)
case("mvn.logpdf_isotropic", mvn, rand((5, 3), F32, 14), rand((3,), F32, 13), np.float32(2.0))

# --- jax.scipy.signal ---

signal = rand((2, 64), F32, 5)
case("detrend_linear", lambda F, x: F.S.signal.detrend(x), signal)
case("detrend_breakpoints", lambda F, x: F.S.signal.detrend(x, bp=[10, 30]), signal)
case("detrend_x64", lambda F, x: F.S.signal.detrend(x), signal.astype(F64), x64=True)
case("detrend_grad", grad(lambda F, x: F.S.signal.detrend(x) * F.jnp.arange(64.0)), signal)
case(
    "welch_detrend_linear",
    lambda F, x: F.S.signal.welch(x, nperseg=16, detrend="linear", noverlap=3),
    signal,
)

# Complex inputs: the lax primitive's TypeError or the function's ValueError, as JAX's.
for fname in ("gammaln", "erf", "i0", "gammasgn", "entr", "beta", "kl_div"):
    args = (rand((3,), C64, 9),) * (2 if fname in ("beta", "kl_div") else 1)
    case(f"{fname}_complex_error", special(fname), *args, jit=False)


# --- running a case ---------------------------------------------------------------------------


def run(F, c) -> dict:
    """Run case ``c`` with framework ``F`` eagerly and jitted."""
    return harness.run_eager_and_jit(F, c)


if __name__ == "__main__":
    harness.write_reference(REFERENCE, CASES, run, "scipy_jax_bits_sweep_gen.py")
