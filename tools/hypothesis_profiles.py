"""The hypothesis profiles of every test folder (each conftest loads this one file).

``HYPOTHESIS_PROFILE`` picks one:

- ``modjax`` (the default): few examples from small pools, derandomized, so the
  compiled programs are shared between examples and the suite fits its budget;
- ``smoke``: two examples, what the per-package wheel check runs (the workspace
  run has already run the tests with ``modjax``);
- ``thorough``: many examples, randomly seeded, with hypothesis's example
  database (its writes are atomic renames, safe for pytest-xdist's workers).

A test that sets its own count (a cheap pure-Python property that wants more
than the default) passes it through ``examples(n)``, so that the profile still
scales it: ``n`` under ``modjax``, at most 10 under ``smoke``, at least 100 under
``thorough``.

Test modules import it as ``hypothesis_profiles`` (the conftest registers it).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "modjax")
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large]
_SMOKE_CAP = 10

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
settings.load_profile(PROFILE)


def examples(n: int) -> int:
    """Return the example count of a test that asks for ``n``, scaled by the profile."""
    if PROFILE == "smoke":
        return min(n, _SMOKE_CAP)
    if PROFILE == "thorough":
        return max(n, 100)
    return n
