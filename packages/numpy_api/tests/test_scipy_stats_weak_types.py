"""Dtype, weak type and values of modjax.scipy.stats results, as JAX 0.10.2 gives them.

JAX's stats functions build results from strongly typed constants of the
promoted dtype, so an int32 ``x`` with Python float parameters (all promoted
weakly) gives a strong float result; and promotion gives every argument the
weak type of the promotion (``loc=0`` next to a float32 array is strong).

The table was recorded from JAX 0.10.2 by calling ``jax.scipy.stats`` with
these arguments and printing ``dtype``, ``weak_type`` and the values (8
significant digits) with x64 off; with x64 on JAX gives the same weak types,
float64, and values within 1e-5 of these, so one table serves both modes.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.scipy import stats
from modjax.tracecore.config import enable_x64

nan, inf = math.nan, math.inf

# (module, function, x, parameters, weak_type, values)
CASES = [
    ("bernoulli", "cdf", "intarr", (0.5,), False, (0.5, 1.0, 1.0)),
    ("bernoulli", "cdf", "floatarr", (0.5,), False, (0.5, 1.0, 1.0)),
    ("bernoulli", "ppf", "intarr", (0.5,), False, (0.0, 1.0, nan)),
    ("bernoulli", "ppf", "floatarr", (0.5,), False, (0.0, 1.0, nan)),
    ("bernoulli", "pmf", "intarr", (0.5,), False, (0.5, 0.5, 0.0)),
    ("bernoulli", "logpmf", "intarr", (0.5,), False, (-0.69314718, -0.69314718, -inf)),
    ("beta", "pdf", "intarr", (2.0, 3.0), False, (0.0, 0.0, 0.0)),
    ("beta", "logpdf", "intarr", (2.0, 3.0), False, (-inf, -inf, -inf)),
    ("beta", "cdf", "intarr", (2.0, 3.0), False, (0.0, 1.0, 1.0)),
    ("beta", "logcdf", "intarr", (2.0, 3.0), False, (-inf, 0.0, 0.0)),
    ("beta", "sf", "intarr", (2.0, 3.0), False, (1.0, 0.0, 0.0)),
    ("beta", "logsf", "intarr", (2.0, 3.0), False, (0.0, -inf, -inf)),
    ("betabinom", "pmf", "intarr", (5, 2.0, 3.0), False, (0.16666701, 0.23809522, 0.23809534)),
    ("betabinom", "logpmf", "intarr", (5, 2.0, 3.0), False, (-1.7917573, -1.4350846, -1.4350841)),
    ("chi2", "pdf", "intarr", (3.0,), False, (0.0, 0.24197064, 0.20755368)),
    ("chi2", "logpdf", "intarr", (3.0,), False, (-inf, -1.4189389, -1.5723653)),
    ("chi2", "cdf", "intarr", (3.0,), False, (0.0, 0.19874799, 0.42759314)),
    ("chi2", "logcdf", "intarr", (3.0,), False, (-inf, -1.6157176, -0.84958315)),
    ("chi2", "sf", "intarr", (3.0,), False, (1.0, 0.80125201, 0.57240689)),
    ("chi2", "logsf", "intarr", (3.0,), False, (0.0, -0.22157976, -0.5579052)),
    ("gamma", "pdf", "intarr", (2.0,), False, (0.0, 0.36787945, 0.27067056)),
    ("gamma", "logpdf", "intarr", (2.0,), False, (-inf, -1.0, -1.3068528)),
    ("gamma", "cdf", "intarr", (2.0,), False, (0.0, 0.26424089, 0.5939936)),
    ("gamma", "logcdf", "intarr", (2.0,), False, (-inf, -1.3308941, -0.52088672)),
    ("geom", "pmf", "intarr", (0.5,), False, (0.0, 0.5, 0.25)),
    ("geom", "logpmf", "intarr", (0.5,), False, (-inf, -0.69314718, -1.3862944)),
    ("nbinom", "pmf", "intarr", (5, 0.5), False, (0.031249985, 0.078125, 0.11718753)),
    ("nbinom", "logpmf", "intarr", (5, 0.5), False, (-3.4657364, -2.5494452, -2.1439798)),
    ("pareto", "pdf", "intarr", (2.0,), False, (0.0, 2.0, 0.25)),
    ("pareto", "logpdf", "intarr", (2.0,), False, (-inf, 0.69314718, -1.3862944)),
    ("pareto", "cdf", "intarr", (2.0,), False, (0.0, 0.0, 0.75)),
    ("pareto", "sf", "intarr", (2.0,), False, (1.0, 1.0, 0.25)),
    ("pareto", "logsf", "intarr", (2.0,), False, (0.0, -0.0, -1.3862944)),
    ("pareto", "ppf", "intarr", (2.0,), False, (1.0, inf, nan)),
    ("poisson", "cdf", "intarr", (3.0,), False, (0.049787045, 0.19914828, 0.42319003)),
    ("t", "pdf", "intarr", (3.0,), False, (0.36755249, 0.20674825, 0.067509621)),
    ("t", "logpdf", "intarr", (3.0,), False, (-1.0008892, -1.5762534, -2.6954851)),
    ("uniform", "pdf", "intarr", (), False, (1.0, 1.0, 0.0)),
    ("uniform", "pdf", "floatarr", (), False, (1.0, 1.0, 0.0)),
    ("uniform", "logpdf", "intarr", (), False, (-0.0, -0.0, -inf)),
    ("uniform", "logpdf", "floatarr", (), False, (-0.0, -0.0, -inf)),
    ("uniform", "cdf", "pyint", (), False, 1.0),
    ("uniform", "cdf", "pyfloat", (), False, 0.5),
    # results that stay weak, strong through promotion, or of norm's quantiles
    ("bernoulli", "cdf", "pyint", (0.5,), True, 1.0),
    ("beta", "pdf", "pyfloat", (2.0, 3.0), True, 1.5000011),
    ("gamma", "sf", "intarr", (2.0,), True, (1.0, 0.73575914, 0.40600544)),
    ("pareto", "logcdf", "intarr", (2.0,), True, (-inf, -inf, -0.28768206)),
    ("poisson", "logpmf", "intarr", (3.0,), True, (-3.0000005, -1.9013877, -1.4959228)),
    ("norm", "logpdf", "intarr", (), False, (-0.91893852, -1.4189385, -2.9189386)),
    ("norm", "ppf", "pyfloat", (), False, 0.0),
    ("norm", "isf", "floatarr", (), False, (0.0, -inf, nan)),
]


def _argument(kind):
    return {
        "pyint": 1,
        "pyfloat": 0.5,
        "intarr": jnp.array([0, 1, 2]),
        "floatarr": jnp.array([0.5, 1.0, 2.0]),
    }[kind]


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("case", CASES, ids=[f"{m}.{f}({k})" for m, f, k, *_ in CASES])
def test_dtype_weak_type_and_values(case, x64):
    module, fn, kind, params, weak, expected = case
    with enable_x64(x64):
        out = getattr(getattr(stats, module), fn)(_argument(kind), *params)
        assert out.dtype == (np.float64 if x64 else np.float32)
        assert out.weak_type is weak
        np.testing.assert_allclose(np.asarray(out, np.float64), expected, rtol=2e-5, atol=0)


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("fn", ["ppf", "isf"])
@pytest.mark.parametrize("kind", ["pyint", "intarr"])
def test_norm_quantiles_reject_integers(kind, fn, x64):
    # JAX's ndtri takes float32 and float64 only, and norm.ppf/isf do not promote q
    with enable_x64(x64):
        q = _argument(kind)
        with pytest.raises(TypeError, match=f"x.dtype=int{64 if x64 else 32} is not supported"):
            getattr(stats.norm, fn)(q)
