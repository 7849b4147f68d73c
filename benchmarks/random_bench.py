"""PRNG speed: a jitted ``random.normal`` of 10**6 floats and an eager ``random.split``.

    python benchmarks/random_bench.py [--rounds N] [--jax-python PATH]

Two figures, the same code on both sides:

* normal: ``jit(lambda k: random.normal(k, (10**6,)))(key)`` per call once
  compiled, results ready (best of ``REPEAT`` calls); ``random.bits`` stands in
  when ``normal`` is not there;
* split: an eager ``random.split(key)`` on a typed key (best of ``NUMBER`` calls
  per repeat, results ready).

Both sides run in child processes, modjax with this interpreter and JAX with
one that can import ``jax`` (``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``);
they alternate for ``--rounds`` rounds and the best of each figure is kept.
Target: no slower than JAX (about 4.8 ms and 29 us for JAX 0.10.2 here).
Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys

from jax_side import best_of_rounds, jax_python, measure_jax, print_figures

REPEAT = 50
NUMBER = 2000

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, sys, timeit
lib_name, repeat, number = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib_name == "jax":
    import jax as lib
else:
    import modjax as lib
random = lib.random
draw = getattr(random, "normal", None) or random.bits
key = random.key(0)
f = lib.jit(lambda k: draw(k, (10**6,)))
lib.block_until_ready(f(key))
out = {"normal_ms": min(
    timeit.repeat(lambda: lib.block_until_ready(f(key)), number=1, repeat=repeat)) * 1e3}
lib.block_until_ready(random.split(key))
out["split_us"] = min(timeit.repeat(
    lambda: lib.block_until_ready(random.split(key)), number=number, repeat=7)) / number * 1e6
out["draw"] = draw.__name__
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("normal_ms", "ms", "jit normal(key, (10**6,))"),
    ("split_us", "us", "eager split(key)"),
)


def measure_modjax() -> dict[str, float]:
    """Run the program with modjax in a fresh child process; return its figures."""
    result = measure_jax(sys.executable, CODE, "modjax", REPEAT, NUMBER)
    if result is None:
        raise RuntimeError("the modjax run failed")
    result.pop("version")
    if result.pop("draw") != "normal":
        print("(modjax.random.normal missing: timing random.bits instead)")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    code = CODE.replace('out["draw"] = draw.__name__\n', "")
    ours, theirs, version = best_of_rounds(
        args.rounds, measure_modjax, jax_python(args.jax_python), code, "jax", REPEAT, NUMBER
    )
    print(f"modjax.random, CPU, float32 (best of {args.rounds} rounds)")
    print_figures([(k, label, unit) for k, unit, label in FIGURES], ours, theirs, version)


if __name__ == "__main__":
    main()
