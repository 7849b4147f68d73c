"""modjax.scipy.special against scipy's values (a committed table) and numpy references.

``scipy_special_reference.json`` holds float64 scipy values on fixed grids
(``scipy_special_reference_gen.py`` regenerates it where scipy is installed);
the functions that wrap a lax primitive directly (``erf``, ``gammainc``, ...)
are checked against scipy in ``test_lax_special.py`` and here only for
promotion, shapes and dtypes. ``logsumexp`` is checked against a float64
numpy reference with generated axes, ``b``, ``where`` and special values.
"""

from __future__ import annotations

import json
import math
import pathlib

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.scipy import special as sp
from modjax.tracecore.config import enable_x64
from modjax.tracecore.core import ConcretizationTypeError

# Compile-bound known-answer tables: the workspace run runs them, the wheel check
# (smoke profile) only imports them.
pytestmark = pytest.mark.slow

REFERENCE = json.loads(pathlib.Path(__file__).with_name("scipy_special_reference.json").read_text())

# function: (callable on the table's arguments, float32 rtol, atol)
TABLE_FUNCTIONS = {
    "ndtri": (sp.ndtri, 2e-5, 1e-6),
    "log_ndtr": (sp.log_ndtr, 2e-5, 1e-6),
    "ndtr": (sp.ndtr, 2e-5, 1e-7),
    "gamma": (sp.gamma, 5e-5, 0),
    "gammasgn": (sp.gammasgn, 0, 0),
    "betaln": (sp.betaln, 2e-5, 2e-5),
    "beta": (sp.beta, 1e-4, 0),
    "multigammaln3": (lambda a: sp.multigammaln(a, 3), 2e-5, 1e-5),
    "i0": (sp.i0, 5e-6, 0),
    "i1": (sp.i1, 5e-6, 0),
    "logit": (sp.logit, 2e-6, 1e-6),
    "expit": (sp.expit, 2e-6, 0),
    "factorial": (sp.factorial, 5e-5, 0),
    "rel_entr": (sp.rel_entr, 2e-5, 1e-6),
    "kl_div": (sp.kl_div, 2e-5, 1e-6),
    "entr": (sp.entr, 2e-6, 1e-6),
    "xlogy": (sp.xlogy, 2e-6, 1e-6),
    "xlog1py": (sp.xlog1py, 2e-6, 1e-6),
}


@pytest.mark.parametrize("name", sorted(TABLE_FUNCTIONS))
def test_values_match_scipy(name):
    fn, rtol, atol = TABLE_FUNCTIONS[name]
    entry = REFERENCE[name]
    args = [np.asarray(a, np.float32) for a in entry["args"]]
    expected = np.asarray(entry["expected"], np.float64)
    out = fn(*args)
    assert out.dtype == np.float32 and out.shape == expected.shape
    keep = slice(None)
    if name == "ndtri":  # 1 - 1e-6 rounds to float32 with a relative error of 6% in 1 - p
        keep = np.asarray(entry["args"][0]) < 0.999
    np.testing.assert_allclose(
        np.asarray(out, np.float64)[keep], expected[keep], rtol=rtol, atol=atol
    )
    # jit may round otherwise (XLA fuses multiply-adds), as JAX's does: kl_div's cancellation
    # near p == q moves small values by an ulp of the larger terms, so atol counts too.
    np.testing.assert_allclose(np.asarray(jit(fn)(*args)), np.asarray(out), rtol=1e-6, atol=atol)


@pytest.mark.parametrize("name", ["ndtri", "log_ndtr", "gamma", "betaln"])
def test_float64_values_match_scipy(name):
    fn, _, _ = TABLE_FUNCTIONS[name]
    entry = REFERENCE[name]
    # JAX's betaln sums Stirling's series with a / (a + b) where b / (a + b) belongs: its
    # float64 answers (which we give) are off scipy's by up to about 1e-6
    rtol = 2e-6 if name == "betaln" else 1e-9
    with enable_x64(True):
        out = fn(*(np.asarray(a, np.float64) for a in entry["args"]))
        assert out.dtype == np.float64
        np.testing.assert_allclose(np.asarray(out), entry["expected"], rtol=rtol, atol=1e-12)


def test_betaln_matches_jax():
    # JAX 0.10.2's float32 answers: lgamma(a) + (lgamma(b) - lgamma(a + b)) while the
    # larger argument is below 8, Stirling's series for the last two from 8 on
    a = np.float32([2, 0.1, 0.5, 3, 7.5, 8, 20, 150, 1e3, 0.25, 40, 1e3])
    b = np.float32([8, 1e3, 9, 30, 7.9, 8, 20, 1e3, 1e3, 12, 0.3, 2.5])
    expected = np.float32(
        [
            -4.276664733886719,
            1.5619821548461914,
            -0.5123653411865234,
            -9.607772827148438,
            -10.407795906066895,
            -10.84894847869873,
            -27.95199203491211,
            -446.810302734375,
            -1388.48291015625,
            0.6746609210968018,
            -0.008237004280090332,
            -16.98657989501953,
        ]
    )
    for fn in (sp.betaln, jit(sp.betaln)):
        out = fn(a, b)
        assert out.dtype == np.float32
        np.testing.assert_array_max_ulp(np.asarray(out), expected, maxulp=1)
    np.testing.assert_array_max_ulp(np.asarray(sp.betaln(b, a)), expected, maxulp=1)
    np.testing.assert_allclose(
        np.asarray(sp.beta(a[:4], b[:4])),
        [0.013888908550143242, 4.768263339996338, 0.5990768671035767, 6.720433157170191e-05],
        rtol=3e-7,
    )


def test_special_values():
    nan, inf = math.nan, math.inf
    cases = [
        (sp.ndtri, [0.0, 1.0, -0.5, 1.5, nan], [-inf, inf, nan, nan, nan]),
        (sp.ndtr, [-inf, inf, nan], [0.0, 1.0, nan]),
        (sp.log_ndtr, [-inf, inf, nan], [-inf, 0.0, nan]),
        (sp.logit, [0.0, 1.0, 2.0, 0.5], [-inf, inf, nan, 0.0]),
        (sp.expit, [-inf, inf, 0.0], [0.0, 1.0, 0.5]),
        (sp.gamma, [0.0, -1.0, -2.0, inf], [inf, nan, nan, inf]),
        (sp.gammasgn, [0.0, -1.0, -0.5, -1.5], [1.0, nan, -1.0, 1.0]),
        (sp.entr, [0.0, -1.0, inf, nan], [0.0, -inf, -inf, nan]),
        (sp.factorial, [-1.0, 0.0, nan], [0.0, 1.0, nan]),
        (sp.erfinv, [1.0, -1.0, 0.0, 2.0], [inf, -inf, 0.0, nan]),
    ]
    for fn, x, expected in cases:
        out = np.asarray(fn(np.asarray(x, np.float32)), np.float64)
        np.testing.assert_allclose(out, expected, rtol=1e-6, err_msg=fn.__name__)
    pq = [
        (sp.xlogy, [0.0, 0.0, 1.0, 2.0], [0.0, -1.0, 0.0, 3.0], [0.0, 0.0, -inf, 2 * math.log(3)]),
        (sp.xlog1py, [0.0, 0.0, 1.0], [-1.0, -2.0, 0.5], [0.0, 0.0, math.log(1.5)]),
        (sp.rel_entr, [0.0, 1.0, 1.0, -1.0], [1.0, 2.0, 0.0, 1.0], [0.0, -math.log(2), inf, inf]),
        (sp.kl_div, [0.0, 1.0, 1.0, -1.0], [1.0, 2.0, 0.0, 1.0], [1.0, 1 - math.log(2), inf, inf]),
    ]
    for fn, p, q, expected in pq:
        out = np.asarray(fn(np.asarray(p, np.float32), np.asarray(q, np.float32)), np.float64)
        np.testing.assert_allclose(out, expected, rtol=1e-6, err_msg=fn.__name__)


def test_wrappers_promote_like_jax():
    # integers compute in the default float; Python scalars stay weakly typed
    for fn, args in [
        (sp.gammaln, (3,)),
        (sp.digamma, (1,)),
        (sp.erfinv, (0,)),
        (sp.i0e, (1,)),
        (sp.gammainc, (1, 2)),
        (sp.polygamma, (1, 2.0)),
        (sp.logit, (1,)),
    ]:
        out = fn(*args)
        assert out.dtype == np.float32 and out.weak_type, fn.__name__
    x16 = np.array([0.5, 1.5], np.float16)
    for fn in [sp.erf, sp.erfc, sp.erfinv, sp.gammaln, sp.digamma, sp.i0e, sp.i1e, sp.expit]:
        assert fn(x16).dtype == np.float16, fn.__name__
    assert sp.gammainc(x16, 1.0).dtype == np.float16
    assert sp.erf(np.arange(3, dtype=np.int8)).dtype == np.float32
    # broadcasting, which the lax primitives do not do
    assert sp.gammainc(np.ones((2, 1), np.float32), np.ones(3, np.float32)).shape == (2, 3)
    assert sp.betainc(1.0, np.ones((2, 1), np.float32), np.full(3, 0.5, np.float32)).shape == (2, 3)
    np.testing.assert_allclose(
        np.asarray(sp.zeta(np.array([2.0, 4.0], np.float32), 1.0)),
        [math.pi**2 / 6, math.pi**4 / 90],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        np.asarray(sp.polygamma(np.array([0, 1]), np.float32(1.0))),
        [-0.5772156649, math.pi**2 / 6],
        rtol=1e-5,
    )


def test_multigammaln_takes_d_as_jax_does():
    # JAX 0.10.2's answers: d is taken by int() (2.5 is 2), d=0 gives 0, the result is
    # strongly typed, and a traced d raises ConcretizationTypeError.
    want = np.float32(1.5501953)
    for d in (2, 2.0, 2.5, np.float32(2.5), np.array(2)):
        r = sp.multigammaln(3.0, d)
        assert r.dtype == np.float32 and not r.weak_type
        np.testing.assert_allclose(np.asarray(r), want, rtol=1e-6)
    assert float(sp.multigammaln(3.0, 0)) == 0.0
    with pytest.raises(ConcretizationTypeError, match="d argument of multigammaln"):
        jit(lambda d: sp.multigammaln(3.0, d))(2)


# JAX 0.10.2's ndtr, ndtri and log_ndtr take float32 and float64 only, unpromoted
_NORMAL_CDF_MESSAGE_TAILS = {
    "ndtr": ", see docstring for supported types",
    "ndtri": ", see docstring for supported types",
    "log_ndtr": "",
}


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32", "bool", "complex64"])
@pytest.mark.parametrize("name", sorted(_NORMAL_CDF_MESSAGE_TAILS))
def test_normal_cdf_functions_take_float32_and_float64_only(name, dtype):
    x = np.zeros(2, ml_dtypes.bfloat16 if dtype == "bfloat16" else dtype)
    message = f"x.dtype={dtype} is not supported{_NORMAL_CDF_MESSAGE_TAILS[name]}."
    fn = getattr(sp, name)
    for call in (fn, jit(fn)):
        with pytest.raises(TypeError) as info:
            call(x)
        assert str(info.value) == message
    if dtype == "int32":  # a Python int is not promoted either
        with pytest.raises(TypeError, match="x.dtype=int32 is not supported"):
            fn(1)


@pytest.mark.parametrize(
    ("call", "error", "match"),
    [
        (lambda: sp.polygamma(1.5, 2.0), ValueError, "integer type"),
        (lambda: sp.zeta(np.ones(2, np.float32)), NotImplementedError, "Riemann"),
        (lambda: sp.factorial(3, exact=True), NotImplementedError, "exact"),
        (lambda: sp.multigammaln(2.0, -1), ValueError, "non-negative"),
        (lambda: sp.log_ndtr(1.0, series_order=31), ValueError, "series_order"),
        (lambda: sp.gammaln(np.ones(2, np.complex64)), TypeError, "complex"),
    ],
)
def test_refused_inputs(call, error, match):
    with pytest.raises(error, match=match):
        call()


# --- logsumexp ---------------------------------------------------------------------------


def _lse_reference(a, axis, b=None, where=None, keepdims=False):
    a = np.asarray(a, np.float64)
    terms = np.exp(a) if b is None else np.asarray(b, np.float64) * np.exp(a)
    if where is not None:
        terms = np.where(where, terms, 0.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = np.sum(terms, axis=axis, keepdims=keepdims)
        return np.log(np.abs(total)), np.sign(total)


@given(
    data=st.data(),
    axis=st.sampled_from([None, 0, 1, -1, (0, 1)]),
    keepdims=st.booleans(),
    use_b=st.booleans(),
    use_where=st.booleans(),
)
def test_logsumexp_matches_numpy(data, axis, keepdims, use_b, use_where):
    a = data.draw(
        st.lists(st.floats(-30, 30, width=32), min_size=6, max_size=6).map(
            lambda v: np.asarray(v, np.float32).reshape(2, 3)
        )
    )
    b = np.asarray([[1.0, -0.5, 2.0], [0.0, 1.0, 3.0]], np.float32) if use_b else None
    where = np.asarray([[True, True, False], [True, False, True]]) if use_where else None
    out, sign = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, return_sign=True, where=where)
    ref, ref_sign = _lse_reference(a, axis, b, where, keepdims)
    np.testing.assert_allclose(np.asarray(out), ref, rtol=2e-6, atol=2e-6)
    np.testing.assert_array_equal(np.asarray(sign), ref_sign)
    plain = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims, where=where)
    np.testing.assert_allclose(
        np.asarray(plain), np.where(ref_sign < 0, np.nan, ref), rtol=2e-6, atol=2e-6
    )
    jitted = jit(lambda x: sp.logsumexp(x, axis=axis, b=b, keepdims=keepdims, where=where))(a)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(plain), rtol=1e-6)


def test_logsumexp_special_values_and_dtypes():
    inf, nan = math.inf, math.nan
    for values, expected in [
        ([-inf, -inf], -inf),
        ([inf, 1.0], inf),
        ([inf, -inf], inf),
        ([nan, 1.0], nan),
        ([1000.0, 1000.0], 1000.0 + math.log(2)),
        ([-1000.0, -1000.0], -1000.0 + math.log(2)),
        ([], -inf),
    ]:
        out = sp.logsumexp(np.asarray(values, np.float32))
        np.testing.assert_allclose(float(out), expected, rtol=1e-6)
    out, sign = sp.logsumexp(
        np.array([1.0, 2.0], np.float32), b=np.zeros(2, np.float32), return_sign=True
    )
    assert float(out) == -inf and float(sign) == 0
    assert sp.logsumexp(np.array([1, 2])).dtype == np.float32
    assert sp.logsumexp(np.ones(3, np.float16)).dtype == np.float16
    z = np.array([1 + 1j, 2.0], np.complex64)
    np.testing.assert_allclose(complex(sp.logsumexp(z)), np.log(np.sum(np.exp(z))), rtol=1e-6)


def test_logsumexp_gradient_is_softmax():
    x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.0, 50.0]], np.float32)
    g = grad(lambda v: jnp.sum(sp.logsumexp(v, axis=1)))(x)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(np.asarray(g), e / e.sum(axis=1, keepdims=True), rtol=1e-6)
    out = vmap(sp.logsumexp)(x)
    np.testing.assert_allclose(np.asarray(out), _lse_reference(x, 1)[0], rtol=1e-6)


# --- custom derivatives ---------------------------------------------------------------------


def test_xlogy_and_xlog1py_derivatives_match_jax():
    # JAX's custom rules: d/dx = log(y) (also at x = 0), d/dy = x / y
    assert math.isclose(float(grad(sp.xlogy)(0.0, 2.0)), math.log(2.0), rel_tol=1e-6)
    assert math.isnan(float(grad(sp.xlogy, 1)(0.0, 0.0)))
    assert math.isclose(float(grad(sp.xlogy, 1)(3.0, 2.0)), 1.5, rel_tol=1e-6)
    assert math.isclose(float(grad(sp.xlog1py)(0.0, 1.0)), math.log(2.0), rel_tol=1e-6)
    assert math.isclose(float(grad(sp.xlog1py, 1)(3.0, 2.0)), 1.0, rel_tol=1e-6)
    x, y = np.array([0.0, 1.0, 2.0], np.float32), np.float32(3.0)
    _, t = jvp(lambda a: sp.xlogy(a, y), (x,), (np.ones(3, np.float32),))
    np.testing.assert_allclose(np.asarray(t), np.log(3.0), rtol=1e-6)
    np.testing.assert_allclose(
        np.asarray(jit(sp.xlogy)(x, y)), [0.0, math.log(3), 2 * math.log(3)], rtol=1e-6
    )


def test_derivatives_through_the_primitives():
    x = np.float32(0.7)
    cases = [
        (sp.erf, 2 / math.sqrt(math.pi) * math.exp(-(0.7**2))),
        (sp.ndtr, math.exp(-(0.7**2) / 2) / math.sqrt(2 * math.pi)),
        (sp.expit, (1 / (1 + math.exp(-0.7))) * (1 - 1 / (1 + math.exp(-0.7)))),
        (sp.logit, 1 / (0.7 * 0.3)),
        (sp.gammaln, float(sp.digamma(x))),
        (lambda v: sp.gammainc(2.0, v), 0.7 * math.exp(-0.7)),
    ]
    for fn, expected in cases:
        assert math.isclose(float(grad(fn)(x)), expected, rel_tol=2e-5), fn
    # ndtri inverts ndtr, so its derivative is 1 / pdf(ndtri(p))
    for p in (0.2, 0.5, 0.9, 1e-6):
        q = float(sp.ndtri(np.float32(p)))
        expected = math.sqrt(2 * math.pi) * math.exp(q * q / 2)
        assert math.isclose(float(grad(sp.ndtri)(np.float32(p))), expected, rel_tol=1e-3), p


def test_loggamma_is_nan_off_the_positive_reals():
    # JAX 0.10.2: loggamma([-inf, -2.5, -1., 0., 1e-8, 0.5, 2.]) is
    # [nan, nan, nan, nan, 18.420681, 0.5723649, 0.] (unlike gammaln, no log|Gamma| for x <= 0)
    x = jnp.array([-np.inf, -2.5, -1.0, 0.0, 1e-8, 0.5, 2.0], dtype=jnp.float32)
    out = sp.loggamma(x)
    assert out.dtype == np.float32
    expected = [np.nan, np.nan, np.nan, np.nan, 18.42068099975586, 0.5723648071289062, 0.0]
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-6)


def test_xlogy_xlog1py_and_spence_keep_a_nan_argument():
    # JAX 0.10.2: xlogy(0., nan), xlog1py(0., nan) and spence(nan) are nan; xlogy(0., 0.) is 0
    assert np.isnan(sp.xlogy(0.0, np.nan)) and np.isnan(sp.xlog1py(0.0, np.nan))
    assert sp.xlogy(0.0, 0.0) == 0.0 and sp.xlog1py(0.0, -1.0) == 0.0
    np.testing.assert_allclose(
        np.asarray(sp.spence(jnp.array([np.nan, 0.5], dtype=jnp.float32))),
        [np.nan, 0.5822403430938721],
        rtol=1e-6,
    )
