"""``accuracy=`` of lax's transcendental functions: ``AccuracyMode`` and ``Tolerance`` as an
equation param (printed as JAX 0.10.2 prints it, parsed back), lowered to StableHLO's
``result_accuracy``, passed on by the JVPs that JAX's pass it on, kept by vmap, and JAX's
errors. The printed and lowered programs are compared with JAX's in
``tests_integration/test_jax_texts.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from modjax import lax
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

HIGHEST, DEFAULT = lax.AccuracyMode.HIGHEST, lax.AccuracyMode.DEFAULT
TOL = lax.Tolerance(atol=1e-5, rtol=1e-4)
NAMES = ("exp", "exp2", "log", "log1p", "expm1", "tanh", "logistic")
NAMES += ("sin", "cos", "tan", "sqrt", "rsqrt", "cbrt")
X = np.array([0.25, 0.5, 1.5], np.float32)


def test_accuracy_mode_and_tolerance_as_jax():
    assert [m.name for m in lax.AccuracyMode] == ["HIGHEST", "DEFAULT"]
    assert HIGHEST.value == 1 and str(HIGHEST) == "AccuracyMode.HIGHEST"
    assert (TOL.atol, TOL.rtol, TOL.ulps) == (1e-5, 1e-4, 0)
    assert lax.Tolerance(1e-3, 0.0, 2).ulps == 2
    with pytest.raises(ValueError, match="Tolerances must be non-negative"):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(ValueError, match="At least one of atol, rtol, or ulps must be set"):
        lax.Tolerance()
    # modjax's Tolerance compares by value (JAX's by identity): equal requests share programs
    assert lax.Tolerance(ulps=2) == lax.Tolerance(ulps=2) and hash(TOL) == hash(
        lax.Tolerance(atol=1e-5, rtol=1e-4)
    )


@pytest.mark.parametrize("name", NAMES)
def test_each_function_takes_accuracy_and_computes_the_same(name):
    fn = getattr(lax, name)
    expected = np.asarray(fn(X))
    for accuracy in (HIGHEST, DEFAULT, TOL):
        np.testing.assert_allclose(np.asarray(fn(X, accuracy=accuracy)), expected, rtol=1e-6)
    lowered = jit(lambda x: fn(x, accuracy=HIGHEST)).lower(X).as_text()
    # logistic lowers without it, as in JAX
    assert ("result_accuracy_mode<HIGHEST>" in lowered) == (name != "logistic")
    closed = make_jaxpr(lambda x: fn(x, accuracy=TOL))(X)
    assert f"{name}[accuracy=Tolerance(atol=1e-05, rtol=0.0001, ulps=0)]" in str(closed)


def test_the_param_prints_as_jax_and_parses_back():
    for accuracy, text in [
        (HIGHEST, "sin[accuracy=AccuracyMode.HIGHEST]"),
        (DEFAULT, "sin[accuracy=AccuracyMode.DEFAULT]"),
        (lax.Tolerance(ulps=3), "sin[accuracy=Tolerance(atol=0.0, rtol=0.0, ulps=3)]"),
    ]:
        closed = make_jaxpr(lambda x, a=accuracy: lax.sin(x, accuracy=a))(X)
        assert text in str(closed)
        parsed = parse_jaxpr(str(closed))
        assert str(parsed) == str(closed)
        assert parsed.jaxpr.eqns[0].params == {"accuracy": accuracy}
    plain = make_jaxpr(lambda x: lax.sin(x))(X)
    assert plain.jaxpr.eqns[0].params == {} and "sin a" in str(plain)
    # an explicit None (JAX's default param) is not printed, as in JAX
    explicit = make_jaxpr(lambda x: lax.sin_p.bind(x, accuracy=None))(X)
    assert str(explicit) == str(plain)
    np.testing.assert_allclose(
        np.asarray(jit(lambda x: lax.sin_p.bind(x, accuracy=None))(X)), np.sin(X), rtol=1e-6
    )


def test_a_bad_accuracy_traces_and_fails_when_lowered_as_jax():
    closed = make_jaxpr(lambda x: lax.sin(x, accuracy="HIGHEST"))(X)
    assert "sin[accuracy=HIGHEST]" in str(closed)
    with pytest.raises(NotImplementedError, match="Accuracy HIGHEST not supported"):
        lax.sin(X, accuracy="HIGHEST")
    with pytest.raises(NotImplementedError, match="Accuracy 1 not supported"):
        jit(lambda x: lax.exp2(x, accuracy=1))(X)
    # JAX lowers logistic (and complex sin/cos) without the accuracy, so no error there
    np.testing.assert_allclose(
        np.asarray(lax.logistic(X, accuracy="x")), 1 / (1 + np.exp(-X)), rtol=1e-6
    )


def test_complex_sin_and_cos_drop_it_complex_exp_keeps_it():
    z = np.array([1 + 1j, 0.5 - 2j], np.complex64)
    for fn in (lax.sin, lax.cos):
        text = jit(lambda z, f=fn: f(z, accuracy=HIGHEST)).lower(z).as_text()
        assert "result_accuracy" not in text
    assert "result_accuracy" in jit(lambda z: lax.exp(z, accuracy=HIGHEST)).lower(z).as_text()


def _tangent_eqns(fn, accuracy):
    closed = make_jaxpr(lambda x: jvp(lambda x: fn(x, accuracy=accuracy), (x,), (x,)))(X)
    return [(e.primitive.name, e.params.get("accuracy")) for e in closed.jaxpr.eqns[1:]]


def test_jvps_pass_the_accuracy_on_where_jax_does():
    assert _tangent_eqns(lax.sin, HIGHEST) == [("cos", HIGHEST), ("mul", None)]
    assert ("sin", TOL) in _tangent_eqns(lax.cos, TOL)
    assert ("exp", HIGHEST) in _tangent_eqns(lax.expm1, HIGHEST)
    assert ("exp", None) not in _tangent_eqns(lax.expm1, TOL)  # only HIGHEST: ans + 1
    tanh = _tangent_eqns(lax.tanh, HIGHEST)
    assert tanh.count(("logistic", HIGHEST)) == 2
    assert all(name != "logistic" for name, _ in _tangent_eqns(lax.tanh, DEFAULT))
    # logistic's HIGHEST rule calls logistic(-x) at the default accuracy, as JAX's
    assert ("logistic", None) in _tangent_eqns(lax.logistic, HIGHEST)
    assert _tangent_eqns(lax.exp, HIGHEST) == [("mul", None)]
    for name in NAMES:  # the derivatives' values do not change
        fn = getattr(lax, name)
        for accuracy in (HIGHEST, TOL):
            got = grad(lambda x, f=fn, a=accuracy: f(x, accuracy=a).sum())(X)
            want = grad(lambda x, f=fn: f(x).sum())(X)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


def test_vmap_keeps_the_accuracy():
    f = vmap(lambda x: lax.tan(x, accuracy=HIGHEST))
    closed = make_jaxpr(f)(np.stack([X, X]))
    assert closed.jaxpr.eqns[0].params == {"accuracy": HIGHEST}
    np.testing.assert_allclose(np.asarray(f(np.stack([X, X]))), np.tan(np.stack([X, X])), rtol=1e-6)
