import os
import sys
from pathlib import Path

import pytest

# Make the shared test helpers importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

from lowering_test_util import CpuRunner  # noqa: E402

# The hypothesis profiles (modjax, smoke, thorough), one file for every test folder;
# HYPOTHESIS_PROFILE picks one (tools/hypothesis_profiles.py says what each does).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import hypothesis_profiles  # noqa: E402, F401


@pytest.fixture(scope="session")
def cpu() -> CpuRunner:
    """One XLA CPU client for every test: clients are slow to make."""
    return CpuRunner()
