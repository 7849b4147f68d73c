"""Bit-exact agreement with JAX 0.10.2 of linear algebra, its derivatives and FFTs.

Each case of ``linalg_fft_jax_bits_sweep_gen.py`` is run eagerly on numpy inputs
and under ``jit``; its results must have JAX's dtype, shape, weak type and bytes
(recorded in ``linalg_fft_jax_bits_sweep.json``), or raise JAX's error class with
its message. The cases come from a differential sweep that found modjax 1 ulp off
JAX where it ran op by op what JAX jits (``det``, ``norm``, ``lstsq``...), multiplied
or summed in another order (``matrix_power``, ``trace``), or differentiated with
another formula or operation order (``eigh``'s reciprocal gaps, ``slogdet``'s
primal and real parts, complex ``abs``, ``tridiagonal_solve``'s product).
"""

from __future__ import annotations

import jax_bits_harness as harness  # the tests folder is on sys.path (conftest)
import linalg_fft_jax_bits_sweep_gen as sweep
import pytest

_TABLE = harness.read_reference(sweep.REFERENCE)
_MODJAX = harness.framework("modjax")


@pytest.mark.parametrize("case", sweep.CASES, ids=[c["name"] for c in sweep.CASES])
def test_bits_match_jax(case):
    """Eagerly on numpy inputs and jitted: JAX's bits, dtypes, weak types and errors."""
    harness.check_case(_TABLE, _MODJAX, case, sweep.run)
