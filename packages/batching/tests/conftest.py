import os
import sys

from hypothesis import HealthCheck, settings

# Make the shared test primitives importable whatever pytest's import mode is.
sys.path.insert(0, os.path.dirname(__file__))

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
