import os
import sys
from pathlib import Path

import pytest

# Make the shared test primitives importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

import runtime_test_prims  # noqa: E402

# The hypothesis profiles (modjax, smoke, thorough), one file for every test folder;
# HYPOTHESIS_PROFILE picks one (tools/hypothesis_profiles.py says what each does).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import hypothesis_profiles  # noqa: E402, F401


@pytest.fixture(scope="module")
def runtime_operators():
    """Give Arrays and tracers only the test primitives' operators, for one test module.

    Requested by each module (``pytestmark``), not autouse: in a workspace run this
    conftest may sit outside pytest's rootdir, where an autouse fixture would apply
    to every package's tests. The tables are emptied first, so other packages'
    registrations (modjax.numpy's) do not leak in, and restored afterwards.
    """
    with runtime_test_prims.operators(exclusive=True):
        yield
