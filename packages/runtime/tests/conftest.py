import os
import sys

import pytest

# Make the shared test primitives importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

import runtime_test_prims  # noqa: E402


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
