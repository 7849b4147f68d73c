"""Eager latency of composite ``jnp`` functions on device Arrays, modjax and (when installed) JAX.

    python benchmarks/eager_composites.py [--rounds N] [--jax-python PATH]

Each function below is many primitives; JAX jits it, modjax runs it as one compiled
program per signature (``modjax.numpy._eager_jit``), so a steady-state call is one
cache lookup and one executable in both. The figure is the best wall time per call
until its result is ready, in microseconds, after a warm-up call (whose compilation
is not counted), on f32[64] operands on the CPU backend. Not CPU time, as the
dispatch benchmark takes: a program of several fused kernels (``cov``'s reduce,
subtract, dot, divide) hands work between XLA's threads, whose CPU time varies by
a factor of two from run to run for the same executable on either side; the best
of many wall-clock runs, each waiting for its result, is what a user waits and
stays steady.

modjax runs in this process. JAX runs in a child process (both extend jaxlib's array
class), with this interpreter if it can import ``jax``, else with ``--jax-python`` (or
``MODJAX_BENCH_JAX_PYTHON``). The two alternate for ``--rounds`` rounds. Prints
figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import timeit

from jax_side import best_of_rounds, jax_python

NUMBER = 300
REPEAT = 7

# Run by both sides with ``jnp`` bound to their numpy module and ``np`` to numpy.
WORKLOAD = r"""
x = jnp.asarray(np.random.RandomState(0).uniform(-2, 2, 64).astype(np.float32))
xp = jnp.asarray(np.linspace(-2, 2, 16, dtype=np.float32))
fp = jnp.asarray(np.sin(np.linspace(-2, 2, 16, dtype=np.float32)))
m = x.reshape(8, 8)


def ready(result):
    # The same code on both sides: each library's block_until_ready walks pytrees in
    # Python at its own cost, the Array method does not.
    for a in result if isinstance(result, tuple) else (result,):
        a.block_until_ready()


calls = {
    "where(c, x, y)": lambda: jnp.where(m > 0, m, 0.0),
    "clip": lambda: jnp.clip(x, -1.0, 1.0),
    "pad reflect": lambda: jnp.pad(x, 2, mode="reflect"),
    "roll": lambda: jnp.roll(x, 3),
    "interp": lambda: jnp.interp(x, xp, fp),
    "histogram": lambda: jnp.histogram(x, bins=8),
    "cov": lambda: jnp.cov(m),
    "insert": lambda: jnp.insert(x, 3, 1.0),
    "median": lambda: jnp.median(m, axis=0),
}
"""

JAX_CODE = r"""
import json, sys, time, timeit
import numpy as np
import jax, jax.numpy as jnp
number, repeat, workload = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
exec(workload)
out = {}
for name, call in calls.items():
    ready(call())
    runs = timeit.repeat(lambda: ready(call()), number=number, repeat=repeat)
    out[name] = min(runs) / number * 1e6
out["version"] = jax.__version__
print(json.dumps(out))
"""


def measure_modjax(number: int, repeat: int) -> dict[str, float]:
    """Return modjax's best time per call, in microseconds, per workload entry."""
    import numpy as np

    import modjax.numpy as jnp

    scope = {"jnp": jnp, "np": np}
    exec(WORKLOAD, scope)
    ready = scope["ready"]
    out = {}
    for name, call in scope["calls"].items():
        ready(call())
        runs = timeit.repeat(lambda call=call: ready(call()), number=number, repeat=repeat)
        out[name] = min(runs) / number * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    ours, theirs, version = best_of_rounds(
        args.rounds,
        lambda: measure_modjax(NUMBER, REPEAT),
        jax_python(args.jax_python),
        JAX_CODE,
        NUMBER,
        REPEAT,
        WORKLOAD,
    )

    print(
        f"eager composite calls on f32[64], CPU, best of {args.rounds} rounds "
        "(microseconds of wall time until the result is ready)"
    )
    header = f"{'':18}{'modjax':>10}"
    if theirs:
        header += f"{'JAX ' + version:>14}{'ratio':>8}"
    print(header)
    for name, value in ours.items():
        line = f"{name:18}{value:>10.1f}"
        if theirs:
            line += f"{theirs[name]:>14.1f}{value / theirs[name]:>8.2f}"
        print(line)
    if not theirs:
        print("JAX: not measured (install jax, or pass --jax-python)")


if __name__ == "__main__":
    main()
