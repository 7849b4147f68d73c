"""Run multi-device checks in a child process with a given number of CPU devices.

The CPU device count is fixed when the backend starts, so tests of several
devices run their checks in one child process per test module
(``MODJAX_NUM_CPU_DEVICES`` set there) and report each check's outcome back.
A module lists its checks as functions; ``run_checks`` runs them all in the
child once and returns ``{name: None or the error text}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import traceback
from collections.abc import Callable, Sequence

__all__ = ["run_checks", "main"]

_RESULT_MARK = "MODJAX-CHECK-RESULTS:"


def run_checks(
    module_file: str, num_devices: int = 8, timeout: float = 240
) -> dict[str, str | None]:
    """Run ``module_file`` as a script with ``num_devices`` CPU devices; return each check's error.

    The script must end with ``if __name__ == "__main__": main(CHECKS)``.
    """
    env = dict(os.environ, MODJAX_NUM_CPU_DEVICES=str(num_devices))
    proc = subprocess.run(
        [sys.executable, module_file],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    for line in proc.stdout.splitlines():
        if line.startswith(_RESULT_MARK):
            return json.loads(line[len(_RESULT_MARK) :])
    raise RuntimeError(
        f"the checks of {module_file} did not report (exit {proc.returncode}):\n"
        f"{proc.stdout[-4000:]}\n{proc.stderr[-4000:]}"
    )


def main(checks: Sequence[Callable[[], None]]) -> None:
    """Run every check in this process; print their outcomes for ``run_checks``."""
    results: dict[str, str | None] = {}
    for check in checks:
        try:
            check()
            results[check.__name__] = None
        except Exception:
            results[check.__name__] = traceback.format_exc()
    print(_RESULT_MARK + json.dumps(results), flush=True)
