"""modjax.scipy.stats against JAX 0.10.2's recorded values, plus identities and transforms.

``scipy_stats_reference.json`` holds float64 values of jax.scipy.stats on
fixed grids (its "recorded_with" is the recording script), including points
outside the support and invalid parameters, so -inf / 0 / NaN there are
checked too.
"""

from __future__ import annotations

import json
import pathlib

import ml_dtypes
import numpy as np
import pytest

from modjax import random
from modjax.autodiff import grad
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.scipy import stats
from modjax.tracecore.config import enable_x64

# Compile-bound known-answer tables: the workspace run runs them, the wheel check
# (smoke profile) only imports them.
pytestmark = pytest.mark.slow

REF = json.loads(pathlib.Path(__file__).with_name("scipy_stats_reference.json").read_text())
CASES = {f"{c['name']}#{i}": c for i, c in enumerate(REF["cases"])}
EXTRA = REF["extra"]


def _fn(name):
    mod, fn = name.split(".")
    return getattr(getattr(stats, mod), fn)


def _close(actual, expected, rtol=1e-9, atol=1e-12):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, np.float64), rtol, atol)


def test_namespace_matches_jax():
    expected = {c["name"].split(".")[0] for c in REF["cases"]}
    expected |= {"dirichlet", "multinomial", "multivariate_normal"}
    assert expected <= set(stats.__all__)
    assert {"gaussian_kde", "mode", "rankdata", "sem"} <= set(stats.__all__)


@pytest.fixture(scope="module")
def float64_results():
    """Every case's eager float64 result (or the exception it raised), under one x64 block.

    Each switch of enable_x64 clears every compiled program, so one block for all
    cases lets them share their eager ops' programs (about 190 compiles instead of 1600).
    """
    results = {}
    with enable_x64(True):
        for key, case in CASES.items():
            try:
                results[key] = _fn(case["name"])(*(np.asarray(a, np.float64) for a in case["args"]))
            except Exception as err:  # reported by that case's test
                results[key] = err
    return results


@pytest.mark.parametrize("key", sorted(CASES))
def test_values_match_jax_float64(key, float64_results):
    case, out = CASES[key], float64_results[key]
    if isinstance(out, Exception):
        raise out
    assert out.dtype == np.float64
    # JAX's betaln loses about 4e-7 relative at these points (scipy agrees with modjax)
    rtol = 1e-6 if case["name"].startswith("betabinom") else 2e-7
    _close(out, case["expected"], rtol=rtol, atol=1e-10)


@pytest.mark.parametrize("name", ["norm.logpdf", "gamma.cdf", "beta.logpdf", "poisson.logpmf"])
def test_float32_and_int_promotion(name):
    case = next(c for c in REF["cases"] if c["name"] == name)
    args = [np.asarray(a, np.float32) for a in case["args"]]
    out = _fn(name)(*args)
    assert out.dtype == np.float32
    _close(out, case["expected"], rtol=2e-5, atol=1e-5)
    assert stats.norm.logpdf(1).dtype == np.float32  # ints compute in the default float


def test_jit_equals_eager_and_vmap_equals_loop():
    x = np.linspace(-2, 3, 6).astype(np.float32)
    a = np.linspace(0.5, 3, 6).astype(np.float32)
    for f in [stats.gamma.logpdf, stats.t.logpdf, stats.chi2.cdf]:
        _close(jit(f)(x, a), f(x, a), rtol=1e-6, atol=1e-6)
        looped = np.stack([np.asarray(f(x[i], a[i])) for i in range(6)])
        _close(vmap(f)(x, a), looped, rtol=1e-6, atol=1e-6)


def test_identities():
    x = np.linspace(-3, 3, 13).astype(np.float32)
    for mod in [stats.norm, stats.cauchy, stats.logistic, stats.gumbel_r, stats.gumbel_l]:
        _close(mod.pdf(x), np.exp(np.asarray(mod.logpdf(x))), rtol=1e-5, atol=1e-7)
        c = np.asarray(mod.cdf(x))
        assert np.all(np.diff(c) >= 0)
        q = np.linspace(0.05, 0.95, 7).astype(np.float32)
        _close(mod.cdf(mod.ppf(q)), q, rtol=1e-5, atol=1e-6)
    _close(stats.expon.cdf(stats.expon.ppf(0.3, 1.0, 2.0), 1.0, 2.0), 0.3, rtol=1e-6)


_SEE_DOCSTRING = ", see docstring for supported types"
# JAX 0.10.2's refusals of narrow floats: norm's CDFs and quantiles and every truncnorm
# function reach ndtr, ndtri or log_ndtr (message tail by which), which take float32 and
# float64 only
_NARROW_REFUSALS = {
    "norm.cdf": (lambda v: stats.norm.cdf(v), _SEE_DOCSTRING),
    "norm.sf": (lambda v: stats.norm.sf(v), _SEE_DOCSTRING),
    "norm.logcdf": (lambda v: stats.norm.logcdf(v), ""),
    "norm.logsf": (lambda v: stats.norm.logsf(v), ""),
    "norm.ppf": (lambda v: stats.norm.ppf(v), _SEE_DOCSTRING),
    "norm.isf": (lambda v: stats.norm.isf(v), _SEE_DOCSTRING),
    **{
        f"truncnorm.{fn}": (lambda v, fn=fn: getattr(stats.truncnorm, fn)(v, -2.0, 3.0), "")
        for fn in ["pdf", "logpdf", "cdf", "logcdf", "sf", "logsf"]
    },
    "truncnorm.pdf(a, b)": (lambda v: stats.truncnorm.pdf(0.5, v, v + 3), ""),
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(_NARROW_REFUSALS))
def test_narrow_floats_are_refused_as_in_jax(name, dtype):
    fn, tail = _NARROW_REFUSALS[name]
    x = np.array([0.25, 0.5], ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    for call in (fn, jit(fn)):
        with pytest.raises(TypeError) as info:
            call(x)
        assert str(info.value) == f"x.dtype={dtype} is not supported{tail}."


def test_narrow_floats_compute_where_jax_does():
    # JAX 0.10.2: the normal density needs no ndtr, and a float32 parameter promotes
    x = np.array([-1.5, 0.25, 2.0], np.float16)
    out = stats.norm.pdf(x)
    assert out.dtype == np.float16
    _close(out, [0.129638671875, 0.38671875, 0.054046630859375], rtol=1e-3, atol=0)
    out = stats.norm.logpdf(x.astype(ml_dtypes.bfloat16))
    assert out.dtype == ml_dtypes.bfloat16
    _close(out.astype(np.float32), [-2.046875, -0.94921875, -2.921875], rtol=1e-2, atol=0)
    out = stats.norm.cdf(np.float16(1.0), np.float32(0.0))
    assert out.dtype == np.float32
    _close(out, 0.8413447141647339, rtol=1e-6)
    out = stats.truncnorm.cdf(np.float16(0.5), np.float32(-1.0), 2.0)
    assert out.dtype == np.float32
    _close(out, 0.6508803963661194, rtol=1e-6)


def test_grads():
    with enable_x64(True):
        x, loc, scale = np.float64(0.7), np.float64(0.2), np.float64(1.3)
        check_grads(stats.norm.logpdf, (x, loc, scale), order=2)
        check_grads(stats.t.logpdf, (x, 3.0, loc, scale), order=1)
        check_grads(lambda x, a: stats.gamma.logpdf(x, a), (1.5, 2.5), order=1)
        check_grads(lambda x: stats.truncnorm.logpdf(x, -1.0, 2.0), (x,), order=1)
        # below the support the gradient is zero, not NaN (the masked point is safe)
        assert float(grad(stats.gamma.logpdf)(-1.0, 2.0)) == 0.0


def test_multivariate_and_discrete_extras():
    with enable_x64(True):
        x = np.array([[0.1, 0.5, 1.2], [0.3, 0.4, 0.6]])
        cov = np.array([[1.0, 0.3, 0.1], [0.3, 2.0, 0.2], [0.1, 0.2, 1.5]])
        mean = np.array([0.2, -0.1, 0.4])
        _close(stats.multivariate_normal.logpdf(x, mean, cov), EXTRA["mvn"])
        _close(stats.multivariate_normal.logpdf(x, mean, 1.7), EXTRA["mvn_iso"])
        d = np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]])
        alpha = np.array([1.5, 2.0, 0.7])
        _close(stats.dirichlet.logpdf(d, alpha), EXTRA["dirichlet"])
        _close(stats.dirichlet.logpdf(np.array([0.2, 0.3]), alpha), EXTRA["dirichlet_short"])
        p = np.array([0.2, 0.3, 0.5])
        _close(stats.multinomial.logpmf(np.array([1, 2, 3]), 6, p), EXTRA["multinomial"])
        _close(stats.multinomial.logpmf(np.array([1, 2, 3]), 5, p), EXTRA["multinomial_bad"])


def test_rankdata_mode_sem():
    a = np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0])
    for method, expected in EXTRA["rankdata"].items():
        _close(stats.rankdata(a, method), expected)
    _close(stats.rankdata(np.array([[3, 1, 3], [2, 2, 1]]), axis=1), EXTRA["rankdata_axis1"])
    assert np.all(np.isnan(np.asarray(stats.rankdata(np.array([1.0, np.nan])))))
    m = np.array([[1, 2, 1, 3], [3, 1, 3, 3], [1, 2, 2, 3]])
    for res, expected in [
        (stats.mode(m), EXTRA["mode"]),
        (stats.mode(m, axis=1), EXTRA["mode_axis1"]),
    ]:
        _close(res.mode, expected[0])
        _close(res.count, expected[1])
        assert res.count.dtype == np.int32
    _close(stats.sem(np.array([[2.0, 4, 1], [1, 3, 4], [4, 2, 3.5]])), EXTRA["sem"], rtol=1e-6)
    _close(
        stats.sem(np.array([2.0, np.nan, 1, 5]), nan_policy="omit"), EXTRA["sem_omit"], rtol=1e-6
    )


def test_gaussian_kde():
    with enable_x64(True):
        data = np.asarray(REF["kde_data"])
        pts = np.asarray(REF["kde_points"])
        kde = stats.gaussian_kde(data, weights=np.array([1.0, 2, 1, 1, 3, 1, 1]))
        _close(kde.covariance, EXTRA["kde_covariance"])
        _close(kde.evaluate(pts), EXTRA["kde_evaluate"])
        _close(kde(pts), EXTRA["kde_evaluate"])
        _close(kde.logpdf(pts), EXTRA["kde_logpdf"])
        g = kde.integrate_gaussian(np.array([0.2, 0.1]), np.array([[1.0, 0.2], [0.2, 0.5]]))
        _close(g, EXTRA["kde_gauss"])
        _close(kde.integrate_kde(stats.gaussian_kde(data[:, :4])), EXTRA["kde_kde"])
        kde1 = stats.gaussian_kde(data[0], bw_method="silverman")
        _close(kde1.integrate_box_1d(-0.5, 1.0), EXTRA["kde1_box"])
        _close(kde1(np.array([0.0, 1.0, 3.0])), EXTRA["kde1_eval"])
        _close(stats.gaussian_kde(data, bw_method=0.4).evaluate(pts), EXTRA["kde_scalar_bw"])
        samples = kde.resample(random.key(0), (5,))
        assert samples.shape == (2, 5)
        # a pytree: it passes through jit
        _close(jit(lambda k, p: k.evaluate(p))(kde, pts), EXTRA["kde_evaluate"])
        with pytest.raises(NotImplementedError):
            kde.integrate_box(np.zeros(2), np.ones(2))
        with pytest.raises(ValueError, match="only handles 1D"):
            kde.integrate_box_1d(0.0, 1.0)


def test_errors_match_jax():
    with pytest.raises(ValueError, match="unknown method"):
        stats.rankdata(np.array([1.0]), "bogus")
    with pytest.raises(ValueError, match="Illegal nan_policy"):
        stats.mode(np.array([1.0]), nan_policy="x")
    with pytest.raises(NotImplementedError):
        stats.rankdata(np.array([1.0]), nan_policy="omit")
    with pytest.raises(ValueError, match="one-dimensional"):
        stats.dirichlet.logpdf(np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(ValueError, match="integer type"):
        stats.multinomial.logpmf(np.array([1.0, 2.0]), 3.0, np.array([0.5, 0.5]))
    with pytest.raises(NotImplementedError, match="allow_singular"):
        stats.multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2), allow_singular=True)
    with pytest.raises(TypeError):
        stats.norm.logpdf([1.0, 2.0])
