"""Bit-exact agreement with JAX 0.10.2 of jax.numpy functions that round like its programs.

Each case of ``numpy_jax_bits_sweep_gen.py`` is run eagerly on numpy inputs and
under ``jit``; its results must have JAX's dtype, shape, weak type and bytes
(recorded in ``numpy_jax_bits_sweep.json``), or raise JAX's error class with its
message. The cases come from a differential sweep that found modjax 1 ulp off
JAX where it computed on the host in float64, used another formula or operation
order, or ran op by op where JAX runs one compiled program (XLA contracts a
multiply and an add into one fused multiply-add there).
"""

from __future__ import annotations

import jax_bits_harness as harness  # the tests folder is on sys.path (conftest)
import numpy_jax_bits_sweep_gen as sweep
import pytest

_TABLE = harness.read_reference(sweep.REFERENCE)
_MODJAX = harness.framework("modjax")


@pytest.mark.parametrize("case", sweep.CASES, ids=[c["name"] for c in sweep.CASES])
def test_bits_match_jax(case):
    """Eagerly on numpy inputs and jitted: JAX's bits, dtypes, weak types and errors."""
    harness.check_case(_TABLE, _MODJAX, case, sweep.run)
