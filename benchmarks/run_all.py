"""Every benchmark side by side with JAX, as one table of medians and ratios.

    python benchmarks/run_all.py [--rounds N] [--only NAME,NAME] [--jax-python PATH]

Runs each ``benchmarks/*.py`` in a fresh interpreter, ``--rounds`` times, round
robin over the benchmarks (so a noisy stretch of the machine hurts all of them
alike); inside each run the benchmark alternates modjax with JAX in a child
interpreter, as ``jax_side.py`` does, when an interpreter with JAX is found (this
one, ``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``). Each benchmark prints its
own table; this script reads the rows of those tables (a label, modjax's figure,
JAX's figure and their ratio), takes each figure's median over the runs, and prints
one table with the ratio of the medians (below 1: modjax is faster).

Before the first run it writes the bytecode caches (``compileall``) of both
interpreters' site-packages and of modjax's sources, unless ``--no-compile``: a
user's ``pip install`` leaves them compiled, but an environment made by uv (as
hatch makes this one) does not, and where ``PYTHONDONTWRITEBYTECODE`` is set
every fresh process would then compile modjax, jaxlib's MLIR bindings and the
rest from source, a second or more on the import and first-call rows of one
side only.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
from pathlib import Path

from jax_side import jax_python

HERE = Path(__file__).resolve().parent
NOT_BENCHMARKS = {"jax_side.py", "run_all.py"}
# A figure as the benchmarks print it: a number and an optional unit glued to it.
FIGURE = r"(\d+(?:\.\d+)?)\s?(s|ms|us|µs|ns)?"
ROW = re.compile(rf"^(?P<label>\S.*?)\s{{2,}}{FIGURE}\s+{FIGURE}\s+\d+(?:\.\d+)?$")
SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9, None: 1.0}


def benchmarks(only: str | None) -> list[Path]:
    """The benchmark scripts, all or those named in ``only`` (comma separated, no .py)."""
    found = sorted(p for p in HERE.glob("*.py") if p.name not in NOT_BENCHMARKS)
    if only:
        wanted = set(only.split(","))
        unknown = wanted - {p.stem for p in found}
        if unknown:
            raise SystemExit(f"run_all: no benchmark named {sorted(unknown)}")
        found = [p for p in found if p.stem in wanted]
    return found


def compile_bytecode(python: str, *folders: Path) -> None:
    """Write the missing bytecode caches of ``python``'s site-packages and of ``folders``."""
    paths = subprocess.run(
        [python, "-c", "import sysconfig as s; p = s.get_paths(); print(p['purelib']); "
         "print(p['platlib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    targets = sorted(set(paths)) + [str(f) for f in folders]
    print(f"compiling bytecode for {python}", file=sys.stderr, flush=True)
    subprocess.run([python, "-m", "compileall", "-q", "-j", "0", *targets],
                   capture_output=True, check=False)  # fmt: skip


def run_once(script: Path, jax: str | None, timeout: int) -> str:
    """Run one benchmark once in a fresh interpreter; its standard output."""
    args = [sys.executable, str(script), "--rounds", "1"] + (["--jax-python", jax] if jax else [])
    done = subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=HERE.parent)
    if done.returncode != 0:
        raise RuntimeError(f"{script.name} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def rows_of(output: str) -> dict[str, tuple[float, str | None, float]]:
    """The side-by-side rows of a benchmark's output: label -> (modjax, unit, JAX in that unit)."""
    rows = {}
    # Tables whose header gives the unit print bare numbers.
    default_unit = "us" if "(microseconds" in output else None
    for line in output.splitlines():
        match = ROW.match(line.rstrip())
        if match is None:
            continue
        label, ours, unit, theirs, their_unit = match.groups()
        unit, their_unit = unit or default_unit, their_unit or default_unit
        rows[label.strip()] = (
            float(ours),
            unit,
            float(theirs) * SECONDS[their_unit] / SECONDS[unit],
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="fresh runs of each benchmark")
    parser.add_argument("--only", default=None, help="comma-separated benchmark names")
    parser.add_argument("--jax-python", default=None)
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per benchmark run")
    parser.add_argument(
        "--no-compile", action="store_true", help="do not write bytecode caches first"
    )
    args = parser.parse_args()
    jax = jax_python(args.jax_python)
    scripts = benchmarks(args.only)
    if not args.no_compile:
        compile_bytecode(sys.executable, *sorted(HERE.parent.glob("packages/*/src")))
        if jax and jax != sys.executable:
            compile_bytecode(jax)

    figures: dict[tuple[str, str], list[tuple[float, str | None, float]]] = {}
    for round_ in range(args.rounds):
        for script in scripts:
            print(f"round {round_ + 1}/{args.rounds}: {script.name}", file=sys.stderr, flush=True)
            output = run_once(script, jax, args.timeout)
            if not jax:  # nothing to put side by side: show modjax's own tables
                print(f"== {script.name}\n{output}")
            for label, row in rows_of(output).items():
                figures.setdefault((script.stem, label), []).append(row)

    if not jax:
        print("JAX not found (pass --jax-python or set MODJAX_BENCH_JAX_PYTHON): no JAX column")
        return
    width = max((len(f"{name}: {label}") for name, label in figures), default=20) + 2
    print(f"modjax and JAX, median of {args.rounds} fresh runs of each benchmark")
    print("(ratio: modjax / JAX, below 1 when modjax is faster)")
    print(f"{'':{width}}{'modjax':>12}{'JAX':>12}{'ratio':>8}")
    for (name, label), rows in figures.items():
        ours = statistics.median(r[0] for r in rows)
        theirs = statistics.median(r[2] for r in rows)
        unit = rows[0][1] or ""
        ratio = ours / theirs if theirs else float("inf")
        print(f"{name + ': ' + label:{width}}{ours:>{12 - len(unit)}.4g}{unit}"
              f"{theirs:>{12 - len(unit)}.4g}{unit}{ratio:>8.2f}")  # fmt: skip
    silent = sorted({s.stem for s in scripts} - {name for name, _ in figures})
    if silent:
        print(f"no side-by-side rows from: {', '.join(silent)} (run them alone)")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
