"""A jitted MLP training step, stage by stage: trace, lower, compile, first call, steady step.

    python benchmarks/jit_stages.py [--rounds N] [--jax-python PATH]

The program is the data-parallel MLP step of ``sharding_bench.py`` on one
device: a 784-512-512-10 tanh MLP, a softmax cross-entropy loss, ``grad`` and
an SGD update with ``tree.map``, under ``jit``; the same code on both sides.
Figures:

* first call: the first call of ``jit(step)`` in a fresh process, batch 128:
  trace, lower, compile and run, with whatever the library sets up on first use;
* trace / lower / compile: the AOT stages ``jit(step).trace(...)``,
  ``.lower()`` and ``.compile()``, each the median of ``STAGE_REPS`` fresh
  ``jit`` objects on batch sizes not seen before, so that no cache of either
  library answers (the persistent compilation caches are off on both sides);
* steady step: one call of the compiled step (batch 128), results ready, best
  of ``REPEAT``, and the process CPU time per call (all threads);
* matmul: ``jit(lambda a, b: a @ b)`` on two float32 1024x1024 matrices, the
  same two figures.

Both sides run in child processes, modjax with this interpreter and JAX with
one that can import ``jax`` (``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``);
they alternate for ``--rounds`` rounds and each figure is the median over the
rounds. Target: no slower than JAX. Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from jax_side import jax_python, measure_jax, median_of_rounds, print_figures

REPEAT = 20
STAGE_REPS = 3

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, statistics, sys, time, timeit
import numpy as np
lib_name, repeat, stage_reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib_name == "jax":
    import jax as lib
else:
    import modjax as lib
jnp = lib.numpy
rng = np.random.default_rng(0)
sizes = [784, 512, 512, 10]
params = [(lib.device_put((rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)),
           lib.device_put(np.zeros(n, np.float32))) for m, n in zip(sizes[:-1], sizes[1:])]

def batch(n):
    x = rng.standard_normal((n, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, n)]
    return lib.device_put(x), lib.device_put(y)

def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    logp = logits - lib.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(logp * y, axis=1))

def step(params, x, y):
    grads = lib.grad(loss)(params, x, y)
    return lib.tree.map(lambda p, g: p - 0.01 * g, params, grads)

def per_call(fn, repeat):
    lib.block_until_ready(fn())
    cpu = time.process_time()
    wall = min(timeit.repeat(lambda: lib.block_until_ready(fn()), number=1, repeat=repeat))
    return wall * 1e3, (time.process_time() - cpu) / repeat * 1e3

out = {}
x, y = batch(128)
f = lib.jit(step)
start = time.perf_counter()
lib.block_until_ready(f(params, x, y))
out["first_call_s"] = time.perf_counter() - start

stages = {"trace_ms": [], "lower_ms": [], "compile_ms": []}
for i in range(stage_reps):
    xb, yb = batch(129 + i)
    t0 = time.perf_counter()
    traced = lib.jit(step).trace(params, xb, yb)
    t1 = time.perf_counter()
    lowered = traced.lower()
    t2 = time.perf_counter()
    lowered.compile()
    t3 = time.perf_counter()
    for key, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2)):
        stages[key].append(seconds * 1e3)
out.update({key: statistics.median(values) for key, values in stages.items()})

out["step_ms"], out["step_cpu_ms"] = per_call(lambda: f(params, x, y), repeat)
a = lib.device_put(rng.standard_normal((1024, 1024)).astype(np.float32))
b = lib.device_put(rng.standard_normal((1024, 1024)).astype(np.float32))
matmul = lib.jit(lambda a, b: a @ b)
out["matmul_ms"], out["matmul_cpu_ms"] = per_call(lambda: matmul(a, b), repeat)
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("first_call_s", "MLP step first call", "s"),
    ("trace_ms", "MLP step trace", "ms"),
    ("lower_ms", "MLP step lowering", "ms"),
    ("compile_ms", "MLP step compile", "ms"),
    ("step_ms", "MLP step steady call", "ms"),
    ("step_cpu_ms", "MLP step steady call (CPU)", "ms"),
    ("matmul_ms", "matmul 1024^2 f32", "ms"),
    ("matmul_cpu_ms", "matmul 1024^2 f32 (CPU)", "ms"),
)


def measure_modjax() -> dict[str, float]:
    """Run the program with modjax in a fresh child process; return its figures."""
    result = measure_jax(sys.executable, CODE, "modjax", REPEAT, STAGE_REPS)
    if result is None:
        raise RuntimeError("the modjax run failed")
    result.pop("version")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()
    # No persistent compilation cache on either side: every compile is a compile.
    for name in ("MODJAX_COMPILATION_CACHE_DIR", "JAX_COMPILATION_CACHE_DIR"):
        os.environ.pop(name, None)

    ours, theirs, version, spread = median_of_rounds(
        args.rounds, measure_modjax, jax_python(args.jax_python), CODE, "jax", REPEAT,
        STAGE_REPS,
    )  # fmt: skip
    print(
        "jit stages of a 784-512-512-10 MLP training step (batch 128) and a matmul, "
        f"float32, CPU (median of {args.rounds} rounds)"
    )
    print_figures([(k, label, unit) for k, label, unit in FIGURES], ours, theirs, version,
                  label_width=32, digits=3)  # fmt: skip
    print("range over the rounds:")
    for key, label, _ in FIGURES:
        print(f"  {label}: {spread[key]}")


if __name__ == "__main__":
    main()
