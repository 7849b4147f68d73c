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

import json

import numpy_jax_bits_sweep_gen as sweep  # the tests folder is on sys.path (conftest)
import pytest

_TABLE = json.loads(sweep.REFERENCE.read_text())["results"]
_MODJAX = sweep.framework("modjax")


def _check(expected, actual, where):
    if "error" in expected:
        assert "error" in actual, (where, actual)
        name, message = expected["error"]
        got_name, got_message = actual["error"]
        assert got_name == name, (where, actual["error"])
        assert got_message == message, where
        return
    assert "error" not in actual, (where, actual["error"])
    if "items" in expected:
        assert len(actual.get("items", ())) == len(expected["items"]), where
        for i, (e, a) in enumerate(zip(expected["items"], actual["items"], strict=True)):
            _check(e, a, f"{where}[{i}]")
        return
    for key in ("dtype", "shape", "weak", "hex"):
        assert actual[key] == expected[key], (where, key, actual[key], expected[key])


@pytest.mark.parametrize("case", sweep.CASES, ids=[c["name"] for c in sweep.CASES])
def test_bits_match_jax(case):
    """Eagerly on numpy inputs and jitted: JAX's bits, dtypes, weak types and errors."""
    expected = _TABLE[case["name"]]
    actual = sweep.run(_MODJAX, case)
    assert sorted(actual) == sorted(expected)
    for mode in expected:
        _check(expected[mode], actual[mode], f"{case['name']}/{mode}")
