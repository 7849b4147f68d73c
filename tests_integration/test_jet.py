"""jax.experimental.jet on modjax: JAX 0.10.2's answers and agreement with nested grads.

The cases are in ``jet_cases.py``, JAX's answers in ``data/jet_jax.json``.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax.experimental import jet as jet_module
from modjax.experimental.jet import jet, jet2
from modjax.extend.core import Primitive

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jet_cases  # noqa: E402

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jet_jax.json").read_text())


def _numeric(value) -> bool:
    if isinstance(value, list):
        return all(_numeric(v) for v in value)
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _rectangular(value) -> bool:
    try:
        return np.asarray(value, float).size > 0 or not isinstance(value, list)
    except ValueError:  # ragged: compare item by item
        return False


def _close(got, want, path="") -> None:
    """Compare JSON answers: numbers to float32 rounding, everything else exactly."""
    if isinstance(want, dict):
        assert sorted(got) == sorted(want), path
        for key in want:
            _close(got[key], want[key], f"{path}/{key}")
    elif _numeric(want) and _rectangular(want):
        np.testing.assert_allclose(
            np.asarray(got, float), np.asarray(want, float), rtol=3e-5, atol=1e-5, err_msg=path
        )
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), path
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            _close(g, w, f"{path}[{i}]")
    else:
        assert got == want, path


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(jet_cases.CASES)


@pytest.mark.parametrize("name", sorted(jet_cases.CASES))
def test_jet_answers_as_jax(name):
    got = json.loads(json.dumps(jet_cases.CASES[name](modjax)))
    _close(got, RECORDED[name], name)


def _f(x):
    return jnp.sin(x) * jnp.exp(-x / 3) + jnp.tanh(x) ** 2 + 1 / (1 + x * x)


_df = modjax.grad(_f)
_ddf = modjax.grad(_df)
_dddf = modjax.grad(_ddf)


@given(st.floats(-2.0, 2.0))
@settings(max_examples=examples(15), deadline=None)
def test_jet_of_a_line_gives_the_derivatives(x):
    x = np.float32(x)
    primal, (d1, d2, d3) = jet(_f, (x,), ((np.float32(1.0), np.float32(0.0), np.float32(0.0)),))
    np.testing.assert_allclose(primal, _f(x), rtol=1e-6, atol=1e-6)
    for got, want in ((d1, _df(x)), (d2, _ddf(x)), (d3, _dddf(x))):
        np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)


@given(st.floats(-1.5, 1.5), st.floats(-1.0, 1.0), st.floats(-1.0, 1.0))
@settings(max_examples=examples(15), deadline=None)
def test_coefficients_and_derivatives_differ_by_factorials(x, a, b):
    x, a, b = np.float32(x), np.float32(a), np.float32(b)
    _, derivs = jet(_f, (x,), ((a, b * 2),))
    _, coeffs = jet2(_f, (x,), ((a, b),))
    np.testing.assert_allclose(derivs[0], coeffs[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(derivs[1], coeffs[1] * 2, rtol=1e-4, atol=1e-4)


def test_jit_of_jet_is_jet_and_custom_rules_are_registered():
    x = np.linspace(-1, 1, 5, dtype=np.float32)
    series = ((np.ones(5, np.float32), np.zeros(5, np.float32)),)
    eager = jet(_f, (x,), series)
    jitted = modjax.jit(lambda v: jet(_f, (v,), series))(x)
    for got, want in zip(modjax.tree.leaves(jitted), modjax.tree.leaves(eager), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    cube_p = Primitive("jet_test_cube")
    cube_p.def_impl(lambda v: v**3)
    cube_p.def_abstract_eval(lambda a: a)
    jet_module.def_comp(cube_p, lambda v: v * v * v)
    _, terms = jet(cube_p.bind, (np.float32(2.0),), ((np.float32(1.0), np.float32(0.0)),))
    assert [float(t) for t in terms] == [12.0, 12.0]
    assert math.isclose(float(jet_module.fact(4)), 24.0, rel_tol=1e-6)
