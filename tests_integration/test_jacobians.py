"""jacfwd, jacrev, jacobian and hessian against JAX 0.10.2's recorded answers.

Each case of jacobian_cases.py ran on JAX 0.10.2 (the script that recorded
jacobians_reference.json is kept in it under ``recorded_with``, since modjax never imports
jax); here it runs on modjax and must give the same pytree (structure, dict key order),
the same dtype, shape and weak type for every array leaf, values equal to rounding, or the
same exception class and message. Then a property: jacfwd and jacrev agree with each other
and with central finite differences over random shapes.
"""

from __future__ import annotations

import json
import pathlib
import re

import jacobian_cases
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax as jax
import modjax.numpy as jnp

REF = json.loads(pathlib.Path(__file__).with_name("jacobians_reference.json").read_text())
CASES = jacobian_cases.make_cases(jax)
X64_CASES = jacobian_cases.make_x64_cases(jax)

# Cases where only the exception class must match: JAX's message there comes from its
# internals (a tracer's repr, a failed cast deep inside, a pytree unflattening), and
# modjax's names the actual problem instead.
CLASS_ONLY = {
    "fwd_bool_output": "JAX: 'a bytes-like object is required' converting float0 to bool",
    "rev_allow_int_bool": "the same float0-to-bool conversion",
    "rev_argnums_empty": "JAX: 'Too few leaves for PyTreeDef'",
    "rev_has_aux_not_pair": "the message holds the tracers' reprs",
    "rev_has_aux_array_pair": "the same",
    "rev_none_output_leaf_str": "JAX's message says 'Argument', modjax's 'Value'",
    "fwd_object_output": "the same",
    "rev_key_input_allow_int": "JAX raises a bare NotImplementedError",
}

# Cases where modjax deliberately does better than JAX, which raises the error recorded.
BETTER_THAN_JAX = {
    "fwd_has_aux_array_pair": "an aux split off an array output (``out, aux = r``) leaks a "
    "JVPTracer in JAX (UnexpectedTracerError); modjax returns the aux",
}

# Relative and absolute tolerances by dtype: XLA's CPU code differs between the two builds
# in the last bits (fused and reassociated float operations).
TOLERANCES = {
    "float16": (1e-2, 1e-3),
    "bfloat16": (2e-2, 1e-2),
    "float32": (2e-5, 1e-6),
    "complex64": (2e-5, 1e-6),
    "float64": (1e-12, 1e-14),
    "complex128": (1e-12, 1e-14),
}


def _no_addresses(message: str) -> str:
    return re.sub(r"0x[0-9a-f]+", "0x...", message)


def assert_same(got, want, where: str) -> None:
    """Assert the encoded outcome ``got`` is ``want`` up to float rounding."""
    if want is None or got is None:
        assert got == want, where
        return
    ((kind, w),) = want.items()
    assert list(got) == [kind], f"{where}: got {got}, want {want}"
    g = got[kind]
    if kind == "dict":
        assert [k for k, _ in g] == [k for k, _ in w], f"{where}: keys {g}, want {w}"
        for (k, gv), (_, wv) in zip(g, w, strict=True):
            assert_same(gv, wv, f"{where}[{k!r}]")
    elif kind in ("tuple", "list"):
        assert len(g) == len(w), f"{where}: got {got}, want {want}"
        for i, (gv, wv) in enumerate(zip(g, w, strict=True)):
            assert_same(gv, wv, f"{where}[{i}]")
    elif kind == "array":
        assert g[:4] == w[:4], f"{where}: got (type, dtype, shape, weak) {g[:4]}, want {w[:4]}"
        if w[4] is not None:
            rtol, atol = TOLERANCES.get(w[1], (0, 0))
            np.testing.assert_allclose(
                np.asarray(g[4], np.float64),
                np.asarray(w[4], np.float64),
                rtol,
                atol,
                err_msg=where,
            )
    else:
        assert g == w, f"{where}: got {g}, want {w}"


def check(name: str, outcome) -> None:
    want = REF["cases"][name]
    if name in BETTER_THAN_JAX:
        assert "error" in want and "ok" in outcome, (name, want, outcome)
        return
    if "error" in want:
        assert "error" in outcome, f"{name}: JAX raised {want['error']}, modjax gave {outcome}"
        if name in CLASS_ONLY:
            assert outcome["error"][0] == want["error"][0], (name, outcome, want)
        else:
            assert [outcome["error"][0], _no_addresses(outcome["error"][1])] == [
                want["error"][0],
                _no_addresses(want["error"][1]),
            ], name
    else:
        assert "ok" in outcome, f"{name}: JAX gave a result, modjax raised {outcome['error']}"
        assert_same(outcome["ok"], want["ok"], name)


def test_the_table_is_the_recorded_one():
    assert REF["jax_version"] == "0.10.2"
    assert not set(CASES) & set(X64_CASES)
    assert set(CASES) | set(X64_CASES) == set(REF["cases"])
    assert set(CLASS_ONLY) | set(BETTER_THAN_JAX) <= set(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_case_matches_jax(name):
    check(name, jacobian_cases.outcome(jax, CASES[name]))


@pytest.mark.parametrize("name", list(X64_CASES))
def test_x64_case_matches_jax(name):
    with jax.enable_x64(True):
        check(name, jacobian_cases.outcome(jax, X64_CASES[name]))


# --- jacfwd == jacrev == finite differences ------------------------------------------------------

# Each composition is written once for modjax.numpy and numpy (``m`` is the module), so the
# finite differences run in float64 numpy, away from float32 rounding.
COMPOSITIONS = {
    "sin_times_sum": lambda m, x: m.sin(x) * m.sum(x),
    "softmax": lambda m, x: m.exp(x) / m.sum(m.exp(x)),
    "tanh_squared_mean": lambda m, x: m.mean(m.tanh(x) ** 2) * x,
    "cumprod_of_sigmoid": lambda m, x: m.cumprod(1 / (1 + m.exp(-x))),
    "norm": lambda m, x: m.sqrt(m.sum(x * x) + 1.0),
}


def finite_differences(f, x, eps=1e-6):
    """Central differences of ``f`` at float64 ``x``: shape ``f(x).shape + x.shape``."""
    with np.errstate(invalid="ignore"):  # the mean of a zero-size array
        out_shape = np.shape(f(x))
    jac = np.zeros(out_shape + x.shape)
    for i in np.ndindex(x.shape):
        dx = np.zeros_like(x)
        dx[i] = eps
        jac[(...,) + i] = (f(x + dx) - f(x - dx)) / (2 * eps)
    return jac


@settings(max_examples=8, deadline=None)
@given(
    name=st.sampled_from(sorted(COMPOSITIONS)),
    shape=st.sampled_from([(), (1,), (3,), (2, 2), (1, 3), (2, 0)]),
    seed=st.integers(0, 2**16),
)
def test_jacfwd_jacrev_and_finite_differences_agree(name, shape, seed):
    comp = COMPOSITIONS[name]
    x = np.random.default_rng(seed).uniform(-1.5, 1.5, shape)
    fwd = jax.jacfwd(lambda v: comp(jnp, v))(x.astype(np.float32))
    rev = jax.jacrev(lambda v: comp(jnp, v))(x.astype(np.float32))
    fd = finite_differences(lambda v: comp(np, v), x)
    assert fwd.shape == rev.shape == fd.shape
    assert fwd.dtype == rev.dtype == jnp.float32
    np.testing.assert_allclose(fwd, rev, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fwd, fd, rtol=1e-4, atol=1e-5)


def test_the_metapackage_reexports_the_jacobians_of_autodiff():
    import modjax.autodiff
    import modjax.runtime

    for name in ("jacfwd", "jacrev", "jacobian", "hessian"):
        assert getattr(jax, name) is getattr(modjax.autodiff, name)
    assert jax.fwd_and_bwd is modjax.runtime.fwd_and_bwd
    # modjax.numpy registered modjax's vmap and array operations: a traced Jacobian binds
    # lax's primitives (the basis is jnp.eye's iota/eq, the result moved by vmap).
    text = str(jax.make_jaxpr(jax.jacfwd(lambda x: x * jnp.sum(x)))(jnp.arange(3.0)))
    assert "iota" in text and "moveaxis" in text
