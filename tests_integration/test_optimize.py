"""jax.scipy.optimize.minimize on modjax: JAX 0.10.2's answers and transformation laws.

The cases are in ``optimize_cases.py``, JAX's answers (recorded on CPU) in
``data/optimize_jax.json`` and, from a processor with AVX-512,
``data/optimize_jax_avx512.json``. modjax runs JAX's iterations with JAX's rounding, so
the answers agree to the last bit on the processor kind that recorded them. Each case
compiles a program or two, so by default a few cases run; HYPOTHESIS_PROFILE=thorough
runs every recorded one. The laws reuse module-level programs.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax.scipy import optimize

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import optimize_cases  # noqa: E402
from recorded_answers import assert_answers_close, cpu_kind  # noqa: E402

_DATA = pathlib.Path(__file__).parent / "data"
# JAX's answers on each processor kind they were recorded on; the first is the primary.
RECORDINGS = [
    json.loads((_DATA / name).read_text())
    for name in ("optimize_jax.json", "optimize_jax_avx512.json")
]
PRIMARY = RECORDINGS[0]
THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
# XLA compiles for the host processor, and a float32 line search that stops or goes on
# by the last bit of a value stops elsewhere on another kind of processor (JAX's own
# answers move too): float32 runs are compared only on a kind that recorded them,
# float64 runs everywhere, within rounding where the kinds differ.
RECORDED = next((r for r in RECORDINGS if r["cpu"] == cpu_kind()), PRIMARY)
SAME_CPU = RECORDED["cpu"] == cpu_kind()
OTHER_CPU_SKIP = "float32 answers were recorded on other processors: " + "; ".join(
    r["cpu"] for r in RECORDINGS
)

# Rosenbrock's famous stops (status 3 after 8 iterations from [-1.2, 1]; 35
# iterations from zeros(4)), a line search out of iterations, L-BFGS's limits,
# the errors and float64.
QUICK = [
    "bfgs_rosen2",
    "bfgs_rosen4",
    "lbfgs_rosen2",
    "bfgs_line_search_maxiter1",
    "lbfgs_maxfun",
    "errors",
]
QUICK_X64 = ["x64_bfgs_rosen2"]

# (rtol, atol) per dtype: exact answers on the recording processor kind.
EXACT = {"float32": (0.0, 0.0), "float64": (0.0, 0.0) if SAME_CPU else (1e-9, 1e-12)}


def assert_close(got, want, where, tolerances=EXACT):
    """Compare answers: float leaves within their dtype's tolerance, the rest exactly."""
    assert_answers_close(got, want, where, tolerances)


def test_every_case_is_recorded():
    cases = sorted({**optimize_cases.CASES, **optimize_cases.X64_CASES})
    for recording in RECORDINGS:
        assert sorted(k for k in recording if k != "cpu") == cases
    assert set(QUICK) <= set(optimize_cases.CASES)
    assert set(QUICK_X64) <= set(optimize_cases.X64_CASES)


@pytest.mark.parametrize("name", sorted(optimize_cases.CASES) if THOROUGH else QUICK)
def test_case_matches_jax(name):
    if not SAME_CPU and name != "errors":
        pytest.skip(OTHER_CPU_SKIP)
    got = json.loads(json.dumps(optimize_cases.CASES[name](modjax)))
    assert_close(got, RECORDED[name], name)


@pytest.mark.parametrize("name", sorted(optimize_cases.X64_CASES) if THOROUGH else QUICK_X64)
def test_x64_case_matches_jax(name):
    got = optimize_cases.run_x64(modjax, optimize_cases.X64_CASES[name])
    assert_close(json.loads(json.dumps(got)), RECORDED[name], name)


def test_the_known_rosenbrock_stops():
    """JAX's numbers on the primary recording's processor, spelled out: BFGS gives up
    where a zoom fails (status 3)."""
    if PRIMARY["cpu"] != cpu_kind():
        pytest.skip(f"these are JAX's answers on {PRIMARY['cpu']}")
    rosen = optimize_cases.problems(modjax)["rosen"]
    r = optimize.minimize(rosen, jnp.array([-1.2, 1.0]), method="BFGS")
    assert (int(r.status), int(r.nit), int(r.nfev), int(r.njev)) == (3, 8, 17, 17)
    np.testing.assert_array_equal(r.x, np.array([-0.2778100073, 0.0433415323], np.float32))
    assert float(r.fun) == np.float32(1.7472916842) and not bool(r.success)
    r = optimize.minimize(rosen, jnp.zeros(4), method="BFGS")
    assert (int(r.status), int(r.nit), int(r.nfev)) == (3, 35, 65)


# --- laws ----------------------------------------------------------------------------
# A convex quadratic, well conditioned: its answers do not hinge on last bits, so a
# fused program (jit, vmap) takes the same steps as the eager call, which evaluates
# the start op by op (as JAX does, whose jit differs from eager in last bits too).

N = 3
METHODS = ["BFGS", optimize_cases.LBFGS]


def quadratic(x, a, b):
    return 0.5 * jnp.dot(x, jnp.dot(a, x)) - jnp.dot(b, x)


def solve(x0, a, b, method):
    return optimize.minimize(quadratic, x0, (a, b), method=method)


_solve_jit = modjax.jit(solve, static_argnums=3)
_solve_batched = modjax.jit(modjax.vmap(solve, in_axes=(0, None, None, None)), static_argnums=3)

_floats = st.floats(-2.0, 2.0, width=32)
_vectors = st.lists(_floats, min_size=N, max_size=N)


def _problem(m, b):
    """A symmetric matrix with eigenvalues in [1, 3] from the entries of ``m``."""
    q, _ = np.linalg.qr(np.asarray(m, np.float64).reshape(N, N) + 3 * np.eye(N))
    a = q @ np.diag([1.0, 2.0, 3.0]) @ q.T
    return jnp.asarray(a, jnp.float32), jnp.asarray(b, jnp.float32)


def assert_same_run(got, want, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(got.x, want.x, rtol=rtol, atol=atol)
    np.testing.assert_allclose(got.fun, want.fun, rtol=rtol, atol=atol)
    assert bool(got.success) == bool(want.success)
    assert int(got.status) == int(want.status)


@given(
    st.lists(_floats, min_size=N * N, max_size=N * N), _vectors, _vectors, st.sampled_from(METHODS)
)
@settings(max_examples=examples(6), deadline=None)
def test_jit_is_eager(m, b, x0, method):
    a, b = _problem(m, b)
    x0 = jnp.asarray(x0, jnp.float32)
    eager, jitted = solve(x0, a, b, method), _solve_jit(x0, a, b, method)
    assert_same_run(jitted, eager)
    # JAX's BFGS may stop short even here (a zoom whose bracket is reversed fails).
    if bool(eager.success):
        np.testing.assert_allclose(eager.x, np.linalg.solve(a, b), rtol=1e-4, atol=1e-4)


@given(
    st.lists(_floats, min_size=N * N, max_size=N * N),
    _vectors,
    st.lists(_vectors, min_size=3, max_size=3),
    st.sampled_from(METHODS),
)
@settings(max_examples=examples(4), deadline=None)
def test_vmap_over_starts_is_a_loop(m, b, starts, method):
    a, b = _problem(m, b)
    x0s = jnp.asarray(starts, jnp.float32)
    batched = _solve_batched(x0s, a, b, method)
    for k in range(len(starts)):
        one = modjax.tree_util.tree_map(lambda v, k=k: v[k], batched)
        assert_same_run(one, _solve_jit(x0s[k], a, b, method))
