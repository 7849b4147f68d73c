"""Bit-exact agreement with JAX 0.10.2 of jax.scipy functions, their gradients and errors.

Each case of ``scipy_jax_bits_sweep_gen.py`` is run eagerly on numpy inputs and
under ``jit``; its results must have JAX's dtype, shape, weak type and bytes
(recorded in ``scipy_jax_bits_sweep.json``), or raise JAX's error class with its
message. The cases come from a differential sweep that found modjax off JAX by
an ulp or more where it used another formula or operation order (``rel_entr``,
``ndtri``, ``multigammaln``, ``lax.bessel_i0e``), another derivative rule
(``logit``, ``log_ndtr``, ``entr``) or refused inputs JAX takes (complex ``gamma``).
"""

from __future__ import annotations

import jax_bits_harness as harness  # the tests folder is on sys.path (conftest)
import pytest
import scipy_jax_bits_sweep_gen as sweep

# A compile-bound known-answer table: the workspace run runs it, the wheel check (smoke
# profile) only imports it, as test_scipy_special's.
pytestmark = pytest.mark.slow

_TABLE = harness.read_reference(sweep.REFERENCE)
_MODJAX = harness.framework("modjax")


@pytest.mark.parametrize("case", sweep.CASES, ids=[c["name"] for c in sweep.CASES])
def test_bits_match_jax(case):
    """Eagerly on numpy inputs and jitted: JAX's bits, dtypes, weak types and errors."""
    harness.check_case(_TABLE, _MODJAX, case, sweep.run)
