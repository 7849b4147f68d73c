"""Whole-stack tests: hypothesis profiles, modjax.numpy's tracer operators, and the spec
modules on sys.path."""

import os
import sys

import pytest
from hypothesis import HealthCheck, settings

from modjax.numpy import _operators
from modjax.tracecore import core

# Hypothesis profiles, the same in every package's conftest (a workspace run loads
# them all); HYPOTHESIS_PROFILE picks one. "modjax" (the default) draws few examples
# from small pools, so compiled programs are shared; "smoke" is what the per-package
# wheel check runs, after the workspace run has run these tests in full; "thorough"
# runs many more, randomly seeded, with hypothesis's example database (its writes are
# atomic renames, safe for pytest-xdist's workers). A test's own max_examples wins.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile(
    "modjax",
    max_examples=6,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_QUIET,
)
settings.register_profile(
    "smoke",
    max_examples=2,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=_QUIET,
)
settings.register_profile("thorough", max_examples=100, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "modjax"))

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
