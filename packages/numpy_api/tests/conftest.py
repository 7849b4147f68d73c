"""Hypothesis settings and the operator tables for modjax.numpy's tests.

Every distinct (primitive, shapes, dtypes) costs an XLA compilation (tens of
milliseconds), so the tests draw shapes and dtypes from small pools and run
few examples: compiled programs are shared between examples that differ only
in values. ``HYPOTHESIS_PROFILE=thorough`` runs many more; ``smoke`` (two examples)
is what the per-package wheel check runs, after the workspace run has run these
tests in full.
"""

import os
import sys
from pathlib import Path

import pytest

from modjax.numpy import _operators
from modjax.tracecore import core

# The shared helpers (numpy_api_checks) import by name in pytest's importlib mode.
sys.path.insert(0, os.path.dirname(__file__))

# The hypothesis profiles (modjax, smoke, thorough), one file for every test folder;
# HYPOTHESIS_PROFILE picks one (tools/hypothesis_profiles.py says what each does).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import hypothesis_profiles  # noqa: E402, F401


def pytest_configure(config):
    """Register the ``slow`` mark (the per-package wheel check deselects it)."""
    config.addinivalue_line(
        "markers",
        "slow: a compile-bound module the workspace run runs and the wheel check only imports",
    )


@pytest.fixture(autouse=True, scope="module")
def _numpy_operators():
    """Run each module with modjax.numpy's operators registered, then restore the tables.

    In a workspace run, other packages' tests install operators of their own
    test primitives for a while; these tests must see modjax.numpy's.
    """
    saved = dict(core.tracer_operators), dict(core.tracer_attributes)
    _operators.register_operators()
    yield
    for table, entries in zip((core.tracer_operators, core.tracer_attributes), saved, strict=True):
        table.clear()
        table.update(entries)
