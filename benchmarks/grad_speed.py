"""Reverse-mode tracing cost: ``make_jaxpr(grad(chain))`` per forward equation.

    python benchmarks/grad_speed.py [--rounds N] [--jax-python PATH]

``chain`` is 1000 steps of ``x = sin(x) * c`` on f32[8] (2000 forward
equations, ``c`` alternating between 2.0 and ``x``), summed to a scalar. It is
written twice: with ``modjax.numpy`` (``jnp.sin(x) * c``) and with
``modjax.lax`` (``lax.mul(lax.sin(x), c)``). The figure is the time of
``make_jaxpr(grad(chain))`` divided by the 2000 forward equations: it covers
the JVP, the linearization (partial evaluation) and the transposition.

modjax runs in this process. JAX runs in a child process (JAX and modjax both
extend jaxlib's array class), with this interpreter if it can import ``jax``,
else with ``--jax-python`` (or ``MODJAX_BENCH_JAX_PYTHON``). The two alternate
for ``--rounds`` rounds and the best time of each is reported. Target: at most
a third of JAX's time. Prints figures only, asserts nothing.
"""

from __future__ import annotations

import argparse
import timeit

from jax_side import best_of_rounds, jax_python

STEPS = 1000  # two forward equations per step
REPEAT = 3

JAX_CODE = r"""
import json, sys, timeit
import numpy as np
import jax, jax.numpy as jnp
from jax import lax
steps, repeat = int(sys.argv[1]), int(sys.argv[2])

def chains():
    # Fresh functions every time: JAX caches what it traced per function object.
    def jnp_chain(x):
        for i in range(steps):
            x = jnp.sin(x) * (x if i % 2 else 2.0)
        return jnp.sum(x)
    def lax_chain(x):
        for i in range(steps):
            x = lax.mul(lax.sin(x), x if i % 2 else np.float32(2.0))
        return lax.reduce_sum(x, (0,))
    return {"jnp": jnp_chain, "lax": lax_chain}

arg = jax.ShapeDtypeStruct((8,), np.float32)
out = {}
for kind in ("jnp", "lax"):
    trace = lambda: jax.make_jaxpr(jax.grad(chains()[kind]))(arg)
    trace()
    out[kind] = min(timeit.repeat(trace, number=1, repeat=repeat)) / (2 * steps) * 1e6
out["version"] = jax.__version__
print(json.dumps(out))
"""


def modjax_chains():
    """Return the two chains written with modjax.numpy and modjax.lax."""
    import numpy as np

    import modjax.numpy as jnp
    from modjax import lax

    def jnp_chain(x):
        for i in range(STEPS):
            x = jnp.sin(x) * (x if i % 2 else 2.0)
        return jnp.sum(x)

    def lax_chain(x):
        for i in range(STEPS):
            x = lax.mul(lax.sin(x), x if i % 2 else np.float32(2.0))
        return lax.reduce_sum(x, (0,))

    return {"jnp": jnp_chain, "lax": lax_chain}


def measure_modjax(repeat: int) -> dict[str, float]:
    """Return modjax's best time per forward equation, in microseconds, per chain kind."""
    import numpy as np

    import modjax as jax

    arg = jax.ShapeDtypeStruct((8,), np.float32)
    out = {}
    for kind, chain in modjax_chains().items():

        def trace(chain=chain):
            return jax.make_jaxpr(jax.grad(chain))(arg)

        trace()
        out[kind] = min(timeit.repeat(trace, number=1, repeat=repeat)) / (2 * STEPS) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    ours, theirs, version = best_of_rounds(
        args.rounds,
        lambda: measure_modjax(REPEAT),
        jax_python(args.jax_python),
        JAX_CODE,
        STEPS,
        REPEAT,
    )

    print(
        f"make_jaxpr(grad(chain)), {2 * STEPS} forward equations on f32[8], best of "
        f"{args.rounds} rounds (microseconds per forward equation)"
    )
    header = f"{'':12}{'modjax':>10}"
    if theirs:
        header += f"{'JAX ' + version:>14}{'ratio':>8}"
    print(header)
    for kind in ("jnp", "lax"):
        line = f"{kind + ' ops':12}{ours[kind]:>10.1f}"
        if theirs:
            line += f"{theirs[kind]:>14.1f}{ours[kind] / theirs[kind]:>8.2f}"
        print(line)
    if not theirs:
        print("JAX: not measured (install jax, or pass --jax-python)")


if __name__ == "__main__":
    main()
