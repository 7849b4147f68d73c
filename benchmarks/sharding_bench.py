"""Sharded programs on 8 CPU devices, side by side with JAX.

    python benchmarks/sharding_bench.py [--rounds N] [--jax-python PATH]

Three figures, the same code on both sides (8 CPU devices, one mesh axis 'd'):

* matmul: a row-sharded 2048x2048 float32 matmul (``x`` split over 'd', ``w``
  replicated), per call once compiled, results ready;
* mlp step: a data-parallel training step of a 784-512-512-10 MLP (SGD on a
  cross-entropy loss; batch 1024 split over 'd', parameters replicated);
* cached call: ``jit(lambda x: x + 1)`` on an 8-element row-sharded array, the
  C++ fast path (best of ``NUMBER`` calls per repeat).

Both sides run in child processes, modjax with this interpreter and
``MODJAX_NUM_CPU_DEVICES=8``, JAX with one that can import ``jax``
(``--jax-python`` or ``MODJAX_BENCH_JAX_PYTHON``) and ``jax_num_cpu_devices=8``;
they alternate for ``--rounds`` rounds and the best of each figure is kept.
Target: no slower than JAX (about 43 ms, 18 ms and 57 us for JAX 0.10.2 here).
Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import sys

from jax_side import best_of_rounds, jax_python, measure_jax, print_figures

REPEAT = 20
NUMBER = 2000

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, sys, timeit
import numpy as np
lib_name, repeat, number = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if lib_name == "jax":
    import jax as lib
    lib.config.update("jax_num_cpu_devices", 8)
else:
    import modjax as lib
jnp = lib.numpy
Mesh, NamedSharding, P = lib.sharding.Mesh, lib.sharding.NamedSharding, lib.sharding.PartitionSpec
mesh = Mesh(np.array(lib.devices()), ("d",))
rows, rep = NamedSharding(mesh, P("d")), NamedSharding(mesh, P())
rng = np.random.default_rng(0)
out = {}

x = lib.device_put(rng.standard_normal((2048, 2048), np.float32), rows)
w = lib.device_put(rng.standard_normal((2048, 2048), np.float32), rep)
matmul = lib.jit(lambda a, b: a @ b)
lib.block_until_ready(matmul(x, w))
out["matmul_ms"] = min(timeit.repeat(
    lambda: lib.block_until_ready(matmul(x, w)), number=1, repeat=repeat)) * 1e3

sizes = [784, 512, 512, 10]
params = [(lib.device_put(rng.standard_normal((m, n), np.float32) / np.sqrt(m), rep),
           lib.device_put(np.zeros(n, np.float32), rep)) for m, n in zip(sizes[:-1], sizes[1:])]
batch = lib.device_put(rng.standard_normal((1024, 784), np.float32), rows)
labels = lib.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 1024)], rows)

def loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    logp = logits - lib.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(logp * y, axis=1))

@lib.jit
def step(params, x, y):
    grads = lib.grad(loss)(params, x, y)
    return lib.tree.map(lambda p, g: p - 0.01 * g, params, grads)

lib.block_until_ready(step(params, batch, labels))
out["mlp_ms"] = min(timeit.repeat(
    lambda: lib.block_until_ready(step(params, batch, labels)), number=1, repeat=repeat)) * 1e3

small = lib.device_put(np.arange(8, dtype=np.float32), rows)
inc = lib.jit(lambda v: v + 1)
lib.block_until_ready(inc(small))
out["call_us"] = min(timeit.repeat(
    lambda: inc(small), number=number, repeat=7)) / number * 1e6
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("matmul_ms", "ms", "row-sharded 2048^2 matmul"),
    ("mlp_ms", "ms", "data-parallel MLP step"),
    ("call_us", "us", "cached sharded call x + 1"),
)


def measure_modjax() -> dict[str, float]:
    """Run the program with modjax (8 CPU devices) in a fresh child process."""
    os.environ["MODJAX_NUM_CPU_DEVICES"] = "8"
    result = measure_jax(sys.executable, CODE, "modjax", REPEAT, NUMBER)
    if result is None:
        raise RuntimeError("the modjax run failed")
    result.pop("version")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()
    ours, theirs, version = best_of_rounds(
        args.rounds, measure_modjax, jax_python(args.jax_python), CODE, "jax", REPEAT, NUMBER
    )
    print(f"sharded programs, 8 CPU devices, float32 (best of {args.rounds} rounds)")
    print_figures([(k, label, unit) for k, unit, label in FIGURES], ours, theirs, version)


if __name__ == "__main__":
    main()
