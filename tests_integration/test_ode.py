"""jax.experimental.ode on modjax: JAX 0.10.2's answers, closed forms and transformation laws.

The cases are in ``ode_cases.py``, JAX's answers in ``data/ode_jax.json``. The laws
reuse a few module-level functions so that each program compiles once.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax.experimental import ode

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import ode_cases  # noqa: E402
from recorded_answers import assert_answers_close  # noqa: E402

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "ode_jax.json").read_text())

# (rtol, atol) per dtype: another fusion may round differently, and the adaptive
# solver then takes slightly different steps, within its own error.
TOLERANCES = {
    "float16": (1e-3, 1e-3),
    "float32": (1e-5, 1e-5),
    "complex64": (1e-5, 1e-5),
    "float64": (1e-9, 1e-10),
}


def assert_close(got, want, where="answer"):
    """Compare answers within their dtype's tolerance (bare floats, errors against closed
    forms, within 1e-5)."""
    assert_answers_close(got, want, where, TOLERANCES, float_atol=1e-5)


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted({**ode_cases.CASES, **ode_cases.X64_CASES})


@pytest.mark.parametrize("name", sorted(ode_cases.CASES))
def test_case_matches_jax(name):
    assert_close(json.loads(json.dumps(ode_cases.CASES[name](modjax))), RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(ode_cases.X64_CASES))
def test_x64_case_matches_jax(name):
    got = ode_cases.run_x64(modjax, ode_cases.X64_CASES[name])
    assert_close(json.loads(json.dumps(got)), RECORDED[name], name)


TS = jnp.linspace(0.0, 2.0, 5)


def oscillator(y, t, omega):
    return jnp.stack([y[1], -(omega**2) * y[0]])


def solve(y0, omega):
    return ode.odeint(oscillator, y0, TS, omega)


_solve_jit = modjax.jit(solve)
_solve_batched = modjax.jit(modjax.vmap(solve))

_floats = st.floats(-2.0, 2.0, width=32)
_omegas = st.floats(0.5, 2.0, width=32)


@given(_floats, _floats, _omegas)
@settings(max_examples=examples(8), deadline=None)
def test_oscillator_follows_its_closed_form_and_jit_is_eager(x0, v0, omega):
    y0, omega = jnp.array([x0, v0]), jnp.float32(omega)
    eager, jitted = solve(y0, omega), _solve_jit(y0, omega)
    np.testing.assert_allclose(jitted, eager, rtol=1e-6, atol=1e-7)
    ts, w = np.asarray(TS, np.float64), float(omega)
    x = x0 * np.cos(w * ts) + v0 / w * np.sin(w * ts)
    v = -x0 * w * np.sin(w * ts) + v0 * np.cos(w * ts)
    np.testing.assert_allclose(eager, np.stack([x, v], axis=1), rtol=0, atol=1e-4)


@given(st.lists(st.tuples(_floats, _floats, _omegas), min_size=3, max_size=3))
@settings(max_examples=examples(5), deadline=None)
def test_vmap_is_a_loop(rows):
    y0s = jnp.array([r[:2] for r in rows], jnp.float32)
    omegas = jnp.array([r[2] for r in rows], jnp.float32)
    batched = _solve_batched(y0s, omegas)
    for k in range(len(rows)):
        np.testing.assert_allclose(batched[k], _solve_jit(y0s[k], omegas[k]), rtol=1e-5, atol=1e-6)


def path_loss(y0, ts, omega):
    ys = ode.odeint(oscillator, y0, ts, omega)
    return jnp.sum(ys[:, 0] * jnp.arange(1.0, 1.0 + ts.shape[0]) + ys[:, 1] ** 2)


_path_loss_grad = modjax.jit(modjax.grad(path_loss, argnums=(0, 1, 2)))


def test_gradients_match_finite_differences():
    """The adjoint's cotangents of y0, the times and the argument, in float64."""
    with modjax.enable_x64(True):
        y0 = np.array([0.8, -0.3])
        ts = np.array([0.0, 0.4, 1.1, 1.5])
        omega = 1.3
        grads = _path_loss_grad(jnp.asarray(y0), jnp.asarray(ts), jnp.float64(omega))
        loss = modjax.jit(path_loss)

        def central(i, x, eps=1e-6):
            """d loss / d x, with x replacing argument i."""
            args = [y0, ts, omega]
            up, down = list(args), list(args)
            up[i], down[i] = x(eps), x(-eps)
            return (float(loss(*map(jnp.asarray, up))) - float(loss(*map(jnp.asarray, down)))) / (
                2 * eps
            )

        def unit(n, j, scale):
            return np.eye(n)[j] * scale

        fd = [
            [central(0, lambda e, j=j: y0 + unit(2, j, e)) for j in range(2)],
            [central(1, lambda e, j=j: ts + unit(4, j, e)) for j in range(4)],
            central(2, lambda e: omega + e),
        ]
    for got, want in zip(grads, fd, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_a_second_call_reuses_the_compiled_solver():
    """closure_convert makes a new function each call; the solver's jit still hits its cache."""
    traces = []

    def f(y, t):
        traces.append(None)
        return -y

    y0 = jnp.ones(3)
    first = ode.odeint(f, y0, TS)
    traced_once = len(traces)
    second = ode.odeint(f, y0 + 1.0, TS)
    assert len(traces) == traced_once + 1  # closure_convert's trace alone
    np.testing.assert_allclose(second, 2.0 * first, rtol=1e-6)


def test_one_dormand_prince_step_is_fifth_order():
    """runge_kutta_step's error on dy/dt = y shrinks 64-fold when the step halves."""
    with modjax.enable_x64(True):
        y0 = jnp.ones(1)

        def error(h):
            y1, f1, _, k = ode.runge_kutta_step(lambda y, t: y, y0, y0, 0.0, jnp.float64(h))
            assert k.shape == (7, 1) and float(f1[0]) == float(k[-1, 0])
            return abs(float(y1[0]) - np.exp(h))

        assert 55 < error(0.2) / error(0.1) < 70  # 2**6: the local error is O(h**6)


def test_step_size_control():
    def next_step(ratio):
        return float(ode.optimal_step_size(jnp.float32(0.1), jnp.float32(ratio)))

    assert next_step(0.0) == pytest.approx(1.0)  # grow by ifactor
    assert next_step(1e6) == pytest.approx(0.02)  # shrink by dfactor
    assert next_step(0.5) >= 0.1  # a kept step never shrinks


def test_ravel_first_arg_underscore_is_a_wrapped_fun_layer():
    from modjax.extend import linear_util

    y = {"a": jnp.ones(2), "b": jnp.zeros(())}
    flat, unravel = modjax.flatten_util.ravel_pytree(y)
    fun = linear_util.wrap_init(lambda y, k: {"a": y["a"] * k, "b": y["b"] + k}, debug_info=None)
    out = ode.ravel_first_arg_(fun, unravel).call_wrapped(flat, 2.0)
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])
