"""Bit-exact agreement with JAX 0.10.2 of jax.random beyond the older tables.

Each case of ``random_jax_bits_sweep_gen.py`` runs eagerly, under ``jit`` (the key
and the arrays as arguments) and under ``vmap`` over three keys; its results must
have JAX's dtype, shape, weak type and bytes (keys: their data), recorded in
``random_jax_bits_sweep.json``, or raise JAX's error class with its message. The
cases come from a differential sweep (dtypes, zero-size and scalar shapes, typed
and raw keys of threefry2x32, rbg and unsafe_rbg, x64 off and on, gradients),
which found ``rademacher`` drawing its coin in float32 where JAX draws it in the
default float (float64 with x64: the signs of ``generalized_normal`` and
``double_sided_maxwell`` followed), and ``fold_in`` under ``vmap`` mapping an
unsafe_rbg key's fold over a broadcast message where JAX maps over the keys only.
"""

from __future__ import annotations

import jax_bits_harness as harness  # the tests folder is on sys.path (conftest)
import pytest
import random_jax_bits_sweep_gen as sweep

# Compile-bound known-answer table: the workspace run runs it, the wheel check
# (smoke profile) only imports it.
pytestmark = pytest.mark.slow

_TABLE = harness.read_reference(sweep.REFERENCE)
_MODJAX = harness.framework("modjax")

# Gamma's rejection loop and its derivative run long floating-point loops whose
# last bits depend on the machine's kernels, in JAX as here (see random_reference).
_ULPS = {"grad_beta": 16, "grad_dirichlet": 16, "beta_broadcast": 16}


@pytest.mark.parametrize("case", sweep.CASES, ids=[c["name"] for c in sweep.CASES])
def test_bits_match_jax(case):
    """Eagerly, jitted and vmapped over keys: JAX's bits, dtypes, weak types and errors."""
    harness.check_case(_TABLE, _MODJAX, case, sweep.run, _ULPS.get(case["name"], 0))
