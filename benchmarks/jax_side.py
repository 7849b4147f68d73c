"""Run the JAX half of a side-by-side benchmark in a child interpreter.

JAX is never a dependency of modjax: a benchmark measures modjax in its own
process and, when some interpreter can import jax, runs a snippet of JAX code in
that interpreter and reads its times back as the last line of JSON it prints.
"""

from __future__ import annotations

import importlib.util
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable


def jax_python(explicit: str | None) -> str | None:
    """Return an interpreter that can import jax (``--jax-python``, this one, or
    ``MODJAX_BENCH_JAX_PYTHON``), or None."""
    if explicit:
        return explicit
    if importlib.util.find_spec("jax") is not None:
        return sys.executable
    return os.environ.get("MODJAX_BENCH_JAX_PYTHON") or None


def measure_jax(python: str, code: str, *args, timeout: int = 1200) -> dict | None:
    """Run ``code`` with ``args`` in ``python``; return the JSON it prints last, or None."""
    try:
        out = subprocess.run(
            [python, "-c", code, *map(str, args)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=True,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as err:
        print(f"(JAX run failed: {err})", file=sys.stderr)
        return None


def rounds_of(
    rounds: int,
    measure_modjax: Callable[[], dict[str, float]],
    python: str | None,
    code: str,
    *args,
    timeout: int = 1200,
) -> tuple[dict[str, list[float]], dict[str, list[float]], str | None]:
    """Alternate modjax's and JAX's measurements for ``rounds``; keep every round's figures.

    Return ``(ours, theirs, jax_version)``, each figure a list with one value per
    round; ``theirs`` is empty (and the version None) without a JAX interpreter or
    when its run fails. Alternating makes a noisy machine hurt both sides alike.
    """
    ours: dict[str, list[float]] = {}
    theirs: dict[str, list[float]] = {}
    version = None
    for _ in range(rounds):
        for k, v in measure_modjax().items():
            ours.setdefault(k, []).append(v)
        if python is None:
            continue
        result = measure_jax(python, code, *args, timeout=timeout)
        if result is None:
            python = None
            continue
        version = result.pop("version")
        for k, v in result.items():
            theirs.setdefault(k, []).append(v)
    return ours, theirs, version


def best_of_rounds(
    rounds: int,
    measure_modjax: Callable[[], dict[str, float]],
    python: str | None,
    code: str,
    *args,
    timeout: int = 1200,
) -> tuple[dict[str, float], dict[str, float], str | None]:
    """Like ``rounds_of``, keeping each figure's best (smallest) value."""
    ours, theirs, version = rounds_of(rounds, measure_modjax, python, code, *args, timeout=timeout)
    return (
        {k: min(v) for k, v in ours.items()},
        {k: min(v) for k, v in theirs.items()},
        version,
    )


def median_of_rounds(
    rounds: int,
    measure_modjax: Callable[[], dict[str, float]],
    python: str | None,
    code: str,
    *args,
    timeout: int = 1200,
) -> tuple[dict[str, float], dict[str, float], str | None, dict[str, str]]:
    """Like ``rounds_of``, keeping each figure's median over the rounds.

    The fourth result says how noisy each figure was: its smallest and largest
    round on each side (``"modjax 2.1-3.4, JAX 2.0-3.9"``).
    """
    ours, theirs, version = rounds_of(rounds, measure_modjax, python, code, *args, timeout=timeout)
    spread = {
        k: f"modjax {min(v):.3g}-{max(v):.3g}"
        + (f", JAX {min(theirs[k]):.3g}-{max(theirs[k]):.3g}" if k in theirs else "")
        for k, v in ours.items()
    }
    return (
        {k: statistics.median(v) for k, v in ours.items()},
        {k: statistics.median(v) for k, v in theirs.items()},
        version,
        spread,
    )


def print_figures(
    rows, ours: dict[str, float], theirs: dict[str, float], version: str | None, *,
    label_width: int = 28, digits: int = 3,
) -> None:  # fmt: skip
    """Print one line per ``(key, label, unit)`` of ``rows``: modjax, JAX and their ratio."""
    header = f"{'':{label_width}}{'modjax':>10}"
    if theirs:
        header += f"{'JAX ' + version:>14}{'ratio':>8}"
    print(header)
    for key, label, unit in rows:
        line = f"{label:{label_width}}{ours[key]:>{10 - len(unit)}.{digits}f}{unit}"
        if theirs:
            line += f"{theirs[key]:>{14 - len(unit)}.{digits}f}{unit}"
            line += f"{ours[key] / theirs[key]:>8.2f}"
        print(line)
    if not theirs:
        print("JAX: not measured (install jax, or pass --jax-python)")
