"""A 2^20-point complex FFT under ``jit``: per call, side by side with JAX.

    python benchmarks/fft_bench.py [--rounds N] [--jax-python PATH]

``jit(jnp.fft.fft)`` of a complex64 vector of 2^20 points (one ``fft`` op,
``stablehlo.fft`` on XLA's CPU backend), and ``jit(jnp.fft.rfft)`` of a float32
vector of the same length. Figures per round: the best time of one call once
compiled, results ready; the process CPU time per call (all threads; less
sensitive to other processes on a shared machine); and the first call (trace,
lower, compile, run). Both sides run in child processes with the same code,
modjax with this interpreter and JAX with one that can import ``jax``
(``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``); they alternate for
``--rounds`` rounds and each figure is the median over the rounds, printed with
its range. Target: no slower than JAX (about 9.3 ms per
complex FFT here). Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys

from jax_side import jax_python, measure_jax, median_of_rounds, print_figures

POINTS, REPEAT = 2**20, 30

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, sys, time, timeit
import numpy as np
lib_name, points, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib_name == "jax":
    import jax as lib
else:
    import modjax as lib
jnp = lib.numpy

rng = np.random.default_rng(0)
z = (rng.standard_normal(points) + 1j * rng.standard_normal(points)).astype(np.complex64)
r = rng.standard_normal(points).astype(np.float32)
z, r = lib.device_put(z), lib.device_put(r)

def ready(out):
    return lib.block_until_ready(out)

out = {}
for name, fun, x in (("fft", jnp.fft.fft, z), ("rfft", jnp.fft.rfft, r)):
    f = lib.jit(fun)
    start = time.perf_counter()
    ready(f(x))
    out[name + "_first_s"] = time.perf_counter() - start
    cpu = time.process_time()
    out[name + "_call_ms"] = min(
        timeit.repeat(lambda: ready(f(x)), number=1, repeat=repeat)) * 1e3
    out[name + "_cpu_ms"] = (time.process_time() - cpu) / repeat * 1e3
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("fft_call_ms", "jit(fft) per call", "ms"),
    ("rfft_call_ms", "jit(rfft) per call", "ms"),
    ("fft_cpu_ms", "jit(fft) CPU per call", "ms"),
    ("rfft_cpu_ms", "jit(rfft) CPU per call", "ms"),
    ("fft_first_s", "jit(fft) first call", "s"),
    ("rfft_first_s", "jit(rfft) first call", "s"),
)


def measure_modjax() -> dict[str, float]:
    """Run the program with modjax in a fresh child process; return its figures."""
    result = measure_jax(sys.executable, CODE, "modjax", POINTS, REPEAT)
    if result is None:
        raise RuntimeError("the modjax run failed")
    result.pop("version")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    ours, theirs, version, spread = median_of_rounds(
        args.rounds, measure_modjax, jax_python(args.jax_python), CODE, "jax", POINTS, REPEAT
    )
    print(f"FFT of {POINTS} points (complex64; rfft of float32), median of {args.rounds} rounds")
    print_figures(
        list(FIGURES), ours, theirs, version,
        label_width=24, digits=4,
    )  # fmt: skip
    print("range over the rounds:")
    for key, label, _ in FIGURES:
        print(f"  {label}: {spread[key]}")


if __name__ == "__main__":
    main()
