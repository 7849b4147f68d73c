import os
import sys
from pathlib import Path

# Make the test primitives importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

# The hypothesis profiles (modjax, smoke, thorough), one file for every test folder;
# HYPOTHESIS_PROFILE picks one (tools/hypothesis_profiles.py says what each does).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import hypothesis_profiles  # noqa: E402, F401
