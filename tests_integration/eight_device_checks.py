"""The pytest side of the whole-stack modules whose checks need 8 CPU devices.

Such a module defines its checks (functions named ``check_*``) in a list ``CHECKS``
and ends with ``if __name__ == "__main__": main(CHECKS)``; pytest runs it once as a
script in a subprocess with 8 devices (``modjax.sharding.testing.run_checks``), and
each check is reported as its own test. Imported by name: the conftest puts this
folder on sys.path, and a module run as a script has its own folder there.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import pytest

from modjax.sharding.testing import run_checks


def device_tests(module_file: str, checks: Sequence[Callable[[], None]]):
    """Return the ``results`` fixture and ``test_on_8_devices`` test of a module's checks.

    Bind both at module level (``results, test_on_8_devices = device_tests(__file__,
    CHECKS)``) so pytest collects them: the fixture runs the module once per worker.
    """

    @pytest.fixture(scope="module")
    def results():
        return run_checks(module_file)

    @pytest.mark.parametrize("name", [c.__name__ for c in checks])
    def test_on_8_devices(results, name):
        error = results[name]
        assert error is None, error

    return results, test_on_8_devices
