"""A 1000-step RNN on ``lax.scan``: first call and steady call, forward and ``grad``.

    python benchmarks/rnn_scan.py [--rounds N] [--jax-python PATH]

The cell is ``h = tanh(W @ h + x_t)`` with hidden size 64 over 1000 steps of
``xs`` (f32[1000, 64]); the forward function returns the final ``h`` and the
stacked ``h``s, the loss is ``sum(hs ** 2)``. Four figures, for ``jit(rnn)``
and ``jit(grad(loss))`` (with respect to ``W``, ``h0`` and ``xs``):

* first call: trace, lower, compile and run once (a fresh process per round,
  so no in-memory cache helps; no persistent compilation cache on either side);
* per call: the best time of one call once compiled, results ready.

Both sides run in child processes with the same code, modjax with this
interpreter and JAX with one that can import ``jax`` (``--jax-python`` or
``MODJAX_BENCH_JAX_PYTHON``); they alternate for ``--rounds`` rounds and the
best of each figure is kept. Target: no slower than JAX on every figure.
Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import sys

from jax_side import best_of_rounds, jax_python, measure_jax, print_figures

STEPS, HIDDEN, REPEAT = 1000, 64, 200

# The same program for both sides; ``lib`` is ``jax`` or ``modjax``.
CODE = r"""
import json, sys, time, timeit
import numpy as np
lib_name, steps, hidden, repeat = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
if lib_name == "jax":
    import jax as lib
else:
    import modjax as lib
jnp, lax = lib.numpy, lib.lax

rng = np.random.default_rng(0)
W = (rng.standard_normal((hidden, hidden)) / np.sqrt(hidden)).astype(np.float32)
h0 = rng.standard_normal(hidden).astype(np.float32)
xs = rng.standard_normal((steps, hidden)).astype(np.float32)
W, h0, xs = lib.device_put(W), lib.device_put(h0), lib.device_put(xs)

def rnn(W, h0, xs):
    def cell(h, x):
        h = jnp.tanh(W @ h + x)
        return h, h
    return lax.scan(cell, h0, xs)

def loss(W, h0, xs):
    _, hs = rnn(W, h0, xs)
    return jnp.sum(hs ** 2)

def ready(out):
    return lib.block_until_ready(out)

out = {}
for name, fun in (("fwd", rnn), ("grad", lib.grad(loss, argnums=(0, 1, 2)))):
    f = lib.jit(fun)
    start = time.perf_counter()
    ready(f(W, h0, xs))
    out[name + "_first_s"] = time.perf_counter() - start
    ready(f(W, h0, xs))
    out[name + "_call_ms"] = min(
        timeit.repeat(lambda: ready(f(W, h0, xs)), number=1, repeat=repeat)) * 1e3
out["version"] = lib.__version__
print(json.dumps(out))
"""

FIGURES = (
    ("fwd_first_s", "jit(rnn) first call", "s"),
    ("fwd_call_ms", "jit(rnn) per call", "ms"),
    ("grad_first_s", "jit(grad(loss)) first call", "s"),
    ("grad_call_ms", "jit(grad(loss)) per call", "ms"),
)


def measure_modjax() -> dict[str, float]:
    """Run the program with modjax in a fresh child process; return its figures."""
    result = measure_jax(sys.executable, CODE, "modjax", STEPS, HIDDEN, REPEAT)
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
        args.rounds, measure_modjax, jax_python(args.jax_python), CODE, "jax", STEPS, HIDDEN,
        REPEAT,
    )  # fmt: skip
    print(
        f"RNN h = tanh(W @ h + x_t), hidden {HIDDEN}, {STEPS} steps of lax.scan, best of "
        f"{args.rounds} rounds"
    )
    print_figures(
        list(FIGURES), ours, theirs, version,
        label_width=30, digits=4,
    )  # fmt: skip


if __name__ == "__main__":
    main()
