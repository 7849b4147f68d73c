"""Batching cost: ``make_jaxpr(vmap(chain))`` per equation, and per-example gradients.

    python benchmarks/vmap_speed.py [--rounds N] [--jax-python PATH]

* Tracing: ``chain`` is 1000 steps of ``x = sin(x) * c`` on f32[8] (2000
  equations, ``c`` alternating between 2.0 and ``x``), mapped over a batch of 16
  (``in_axes=0``), written with ``modjax.numpy`` and with ``modjax.lax``. The
  figure is the time of ``make_jaxpr(vmap(chain))`` per equation.
* Per-example gradients: a two-layer tanh MLP (32 -> 64 -> 10, squared error)
  under ``jit(vmap(grad(loss), in_axes=(None, 0, 0)))`` on 128 examples, the
  best time of one call over ``STEP_CALLS`` calls once compiled (the step of a
  DP-SGD-like training loop). XLA runs this program on its thread pool, and on
  a small VM the time of a burst of such calls swings 3x with the scheduling of
  those threads (the same executable, on either side); the best single call is
  what the program costs.

modjax runs in this process, JAX in a child process (``--jax-python`` or
``MODJAX_BENCH_JAX_PYTHON`` when this interpreter lacks jax); they alternate for
``--rounds`` rounds and the best of each is reported. Targets: tracing at most
a third of JAX's time, the step no slower than JAX's. Prints figures only.
"""

from __future__ import annotations

import argparse
import timeit

from jax_side import best_of_rounds, jax_python

STEPS = 1000  # two equations per step
BATCH = 16
REPEAT = 3
STEP_CALLS = 1000

COMMON = r"""
import numpy as np

def make_chains(jnp, lax, steps):
    def jnp_chain(x):
        for i in range(steps):
            x = jnp.sin(x) * (x if i % 2 else 2.0)
        return x
    def lax_chain(x):
        for i in range(steps):
            x = lax.mul(lax.sin(x), x if i % 2 else np.float32(2.0))
        return x
    return {"jnp": jnp_chain, "lax": lax_chain}

def mlp_problem(jnp):
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.normal(size=(32, 64)) * 0.2).astype(np.float32),
        "b1": np.zeros(64, np.float32),
        "w2": (rng.normal(size=(64, 10)) * 0.2).astype(np.float32),
        "b2": np.zeros(10, np.float32),
    }
    xs = rng.normal(size=(128, 32)).astype(np.float32)
    ys = rng.normal(size=(128, 10)).astype(np.float32)

    def loss(params, x, y):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        out = h @ params["w2"] + params["b2"]
        return jnp.mean((out - y) ** 2)

    return loss, params, xs, ys
"""

JAX_CODE = (
    COMMON
    + r"""
import json, sys, timeit
import jax, jax.numpy as jnp
from jax import lax
steps, batch, repeat, calls = map(int, sys.argv[1:5])
arg = jax.ShapeDtypeStruct((batch, 8), np.float32)
out = {}
for kind in ("jnp", "lax"):
    trace = lambda: jax.make_jaxpr(jax.vmap(make_chains(jnp, lax, steps)[kind]))(arg)
    trace()
    out[kind] = min(timeit.repeat(trace, number=1, repeat=repeat)) / (2 * steps) * 1e6
loss, params, xs, ys = mlp_problem(jnp)
params = jax.device_put(params); xs = jax.device_put(xs); ys = jax.device_put(ys)
step = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
jax.block_until_ready(step(params, xs, ys))
run = lambda: jax.block_until_ready(step(params, xs, ys))
out["step"] = min(timeit.repeat(run, number=1, repeat=calls)) * 1e6
out["version"] = jax.__version__
print(json.dumps(out))
"""
)


def measure_modjax(repeat: int, calls: int) -> dict[str, float]:
    """Return modjax's best times in microseconds: per equation for each chain, and the step."""
    import numpy as np

    import modjax as jax
    import modjax.numpy as jnp
    from modjax import lax

    scope: dict = {}
    exec(COMMON, scope)  # the same problem definitions as the JAX side
    chains = scope["make_chains"](jnp, lax, STEPS)
    arg = jax.ShapeDtypeStruct((BATCH, 8), np.float32)
    out = {}
    for kind, chain in chains.items():

        def trace(chain=chain):
            return jax.make_jaxpr(jax.vmap(chain))(arg)

        trace()
        out[kind] = min(timeit.repeat(trace, number=1, repeat=repeat)) / (2 * STEPS) * 1e6
    loss, params, xs, ys = scope["mlp_problem"](jnp)
    params, xs, ys = jax.device_put(params), jax.device_put(xs), jax.device_put(ys)
    step = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    jax.block_until_ready(step(params, xs, ys))

    def run():
        return jax.block_until_ready(step(params, xs, ys))

    out["step"] = min(timeit.repeat(run, number=1, repeat=calls)) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    ours, theirs, version = best_of_rounds(
        args.rounds,
        lambda: measure_modjax(REPEAT, STEP_CALLS),
        jax_python(args.jax_python),
        JAX_CODE,
        STEPS,
        BATCH,
        REPEAT,
        STEP_CALLS,
    )

    print(f"vmap on CPU, best of {args.rounds} rounds (microseconds)")
    header = f"{'':44}{'modjax':>10}"
    if theirs:
        header += f"{'JAX ' + version:>14}{'ratio':>8}"
    print(header)
    rows = [
        (f"make_jaxpr(vmap(chain)) per eq, jnp ops (B={BATCH})", "jnp"),
        (f"make_jaxpr(vmap(chain)) per eq, lax ops (B={BATCH})", "lax"),
        ("jit(vmap(grad(mlp loss))) step, 128 examples", "step"),
    ]
    for label, key in rows:
        line = f"{label:44}{ours[key]:>10.1f}"
        if theirs and key in theirs:
            line += f"{theirs[key]:>14.1f}{ours[key] / theirs[key]:>8.2f}"
        print(line)
    if not theirs:
        print("JAX: not measured (install jax, or pass --jax-python)")


if __name__ == "__main__":
    main()
