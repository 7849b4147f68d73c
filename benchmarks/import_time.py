"""Import time of ``import modjax, modjax.numpy`` against ``import jax, jax.numpy``.

    python benchmarks/import_time.py [--rounds N] [--jax-python PATH]

Each measurement is one fresh interpreter that times its own import statement with
``time.perf_counter`` (interpreter start-up is not counted, on either side). modjax and
JAX alternate for ``--rounds`` rounds, so a noisy machine slows both alike; the table
gives the median and the best of each side and their ratio (modjax / JAX). JAX runs
with this interpreter if it can import ``jax``, else with ``--jax-python`` (or
``MODJAX_BENCH_JAX_PYTHON``). A last row times the import and then the first use
of a narrow dtype (``jnp.ones(2, jnp.bfloat16)``) together: modjax imports ml_dtypes
at that first use (or at the first transfer to a device, where jaxlib loads it), JAX
at its import, so the first use alone would compare a cost one side has paid already
with the other's; the sum is what a program that uses bfloat16 waits for. Prints
figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys

from jax_side import jax_python, measure_jax, print_figures

# Run by both sides with NAME bound to "modjax" or "jax"; prints one line of JSON.
SNIPPET = r"""
import json, sys, time
name = sys.argv[1]
start = time.perf_counter()
top = __import__(name)
__import__(name + ".numpy")
imported = time.perf_counter() - start
numpy_api = sys.modules[name + ".numpy"]
start = time.perf_counter()
numpy_api.ones(2, numpy_api.bfloat16)
narrow = time.perf_counter() - start
print(json.dumps({"version": getattr(top, "__version__", "?"), "import": imported,
                  "bfloat16": narrow}))
"""

ROWS = [
    ("import", "import (median)", " s"),
    ("import_best", "import (best)", " s"),
    ("bfloat16", "import + ones(2, bfloat16)", " s"),
]


def _measure_modjax() -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", SNIPPET, "modjax"], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _summary(runs: list[dict[str, float]]) -> dict[str, float]:
    imports = [r["import"] for r in runs]
    return {
        "import": statistics.median(imports),
        "import_best": min(imports),
        "bfloat16": statistics.median(r["import"] + r["bfloat16"] for r in runs),
    }


def main() -> None:
    """Alternate fresh modjax and JAX interpreters and print the median import times."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()
    python = jax_python(args.jax_python)
    ours: list[dict[str, float]] = []
    theirs: list[dict[str, float]] = []
    version = None
    for _ in range(args.rounds):
        ours.append(_measure_modjax())
        if python is None:
            continue
        result = measure_jax(python, SNIPPET, "jax", timeout=300)
        if result is None:
            python = None
            continue
        version = result.pop("version")
        theirs.append(result)
    print(f"fresh interpreters, {args.rounds} alternating rounds")
    print_figures(ROWS, _summary(ours), _summary(theirs) if theirs else {}, version)


if __name__ == "__main__":
    main()
