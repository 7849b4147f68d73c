"""Whole-stack tests: hypothesis profiles, modjax.numpy's tracer operators, and the spec
modules on sys.path."""

import os
import sys
from pathlib import Path

import pytest

from modjax.numpy import _operators
from modjax.tracecore import core

# The hypothesis profiles (modjax, smoke, thorough), one file for every test folder;
# HYPOTHESIS_PROFILE picks one (tools/hypothesis_profiles.py says what each does).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
import hypothesis_profiles  # noqa: E402, F401

# Make the sweep spec modules importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(autouse=True, scope="module")
def _numpy_operators():
    """Run with modjax.numpy's tracer operators (other packages' tests swap their own in)."""
    saved = dict(core.tracer_operators), dict(core.tracer_attributes)
    _operators.register_operators()
    yield
    for table, entries in zip((core.tracer_operators, core.tracer_attributes), saved, strict=True):
        table.clear()
        table.update(entries)
