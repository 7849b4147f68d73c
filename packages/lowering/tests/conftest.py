import os
import sys

import pytest

# Make the shared test helpers importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

from lowering_test_util import CpuRunner  # noqa: E402


@pytest.fixture(scope="session")
def cpu() -> CpuRunner:
    """One XLA CPU client for every test: clients are slow to make."""
    return CpuRunner()
