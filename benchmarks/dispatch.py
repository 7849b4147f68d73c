"""Dispatch latency: a cached jit call and an eager op, modjax and (when installed) JAX.

    python benchmarks/dispatch.py [--rounds N] [--jax-python PATH]

Measures, on f32[8] on the CPU backend:

* ``jit``: a cache hit of ``jit(lambda x: x + 1)(x)`` (the fast path: jaxlib's C++
  PjitFunction, and also modjax's pure-Python fast path, ``cpp_dispatch`` off);
* ``eager``: ``sin(x)`` outside jit (the eager path, ``apply_primitive``);
* ``floor``: the jaxlib executable call alone, without any Python around it.

modjax runs in this process. JAX runs in a child process (JAX and modjax both
extend jaxlib's array class, so they must not share one), with this interpreter
if it can import ``jax``, else with ``--jax-python`` (or the
``MODJAX_BENCH_JAX_PYTHON`` environment variable). The two alternate for
``--rounds`` rounds and the best time of each is reported, so that a noisy
machine hurts both alike. Times are process CPU time per call, not wall time: a
call of a few microseconds timed by the wall clock on a machine shared with other
work mostly measures the other work. Without JAX only modjax's numbers are printed.

When ``modjax.numpy`` is installed, ``x + 1`` and ``jnp.sin`` are used; otherwise
two primitives defined here (with the same lowering) stand in for them.
"""

from __future__ import annotations

import argparse
import time
import timeit

from jax_side import best_of_rounds, jax_python

NUMBER = 20000
REPEAT = 7

JAX_CODE = r"""
import json, sys, time, timeit
import jax, jax.numpy as jnp
number, repeat = int(sys.argv[1]), int(sys.argv[2])
x = jnp.ones(8, jnp.float32)
f = jax.jit(lambda x: x + 1)
f(x).block_until_ready()
jnp.sin(x).block_until_ready()
best = lambda fn: min(timeit.repeat(fn, number=number, repeat=repeat,
                                    timer=time.process_time)) / number * 1e6
consts = [jnp.full(8, 1 + k / 64, jnp.float32) for k in range(20)]
def closure(v):
    for c in consts:
        v = v * c
    return v
g = jax.jit(closure)
g(x).block_until_ready()
print(json.dumps({"jit": best(lambda: f(x)), "eager": best(lambda: jnp.sin(x)),
                  "closure": best(lambda: g(x)), "version": jax.__version__}))
"""


def _modjax_ops():
    """Return ``(add_one, sin, how)``: modjax.numpy's if installed, else local primitives."""
    try:
        import modjax.numpy as jnp

        return (lambda x: x + 1), jnp.sin, "modjax.numpy"
    except ImportError:
        pass
    import functools

    from modjax.lowering import hlo, ir_constant, ir_type, register_lowering
    from modjax.runtime import apply_primitive
    from modjax.tracecore import core

    add_one_p = core.Primitive("bench_add_one")
    add_one_p.def_abstract_eval(lambda a: a)
    add_one_p.def_impl(functools.partial(apply_primitive, add_one_p))

    def add_one_lowering(ctx, x):
        aval = ctx.avals_in[0]
        one = hlo.broadcast_in_dim(ir_type(aval), ir_constant(1, aval.dtype), [])
        return hlo.add(x, one)

    register_lowering(add_one_p, add_one_lowering)
    sin_p = core.Primitive("bench_sin")
    sin_p.def_abstract_eval(lambda a: a)
    sin_p.def_impl(functools.partial(apply_primitive, sin_p))
    register_lowering(sin_p, lambda ctx, x: hlo.sine(x))
    return add_one_p.bind, sin_p.bind, "local test primitives (modjax.numpy not installed)"


def measure_modjax(number: int, repeat: int) -> dict[str, float]:
    """Return modjax's best times in microseconds: jit, eager and the executable floor."""
    import numpy as np

    from modjax import runtime
    from modjax.runtime.cpp_dispatch import cpp_dispatch

    add_one, sin, _ = _OPS
    x = runtime.device_put(np.ones(8, np.float32))
    f = runtime.jit(add_one)
    with cpp_dispatch(False):
        f_python = runtime.jit(add_one)
    for fn in (f, f, f_python, f_python, sin):
        runtime.block_until_ready(fn(x))
    (executable,) = f._jit.executables.values()
    execute, handlers = executable.call, executable.handlers
    args = (x,)

    def best(fn):
        runs = timeit.repeat(fn, number=number, repeat=repeat, timer=time.process_time)
        return min(runs) / number * 1e6

    figures = {
        "jit": best(lambda: f(x)),
        "jit_python": best(lambda: f_python(x)),
        "eager": best(lambda: sin(x)),
        "floor": best(lambda: execute(args).consume_with_handlers(handlers)),
    }
    if _OPS[2] == "modjax.numpy":
        consts = [runtime.device_put(np.full(8, 1 + k / 64, np.float32)) for k in range(20)]

        def closure(v):
            for c in consts:
                v = v * c
            return v

        g = runtime.jit(closure)
        runtime.block_until_ready(g(x))
        figures["closure"] = best(lambda: g(x))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--number", type=int, default=NUMBER)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()

    ours, theirs, version = best_of_rounds(
        args.rounds,
        lambda: measure_modjax(args.number, REPEAT),
        jax_python(args.jax_python),
        JAX_CODE,
        args.number,
        REPEAT,
        timeout=600,
    )

    print(
        f"dispatch latency on f32[8], CPU, best of {args.rounds} rounds (microseconds of CPU time)"
    )
    print(f"modjax ops: {_OPS[2]}")
    header = f"{'':28}{'modjax':>10}"
    if theirs:
        header += f"{'JAX ' + version:>14}{'ratio':>8}"
    print(header)
    rows = [
        ("jit fast path (x + 1)", "jit"),
        ("  the same, Python fast path", "jit_python"),
        ("eager op (sin)", "eager"),
        ("jit closing over 20 arrays", "closure"),
        ("executable floor", "floor"),
    ]
    for label, key in rows:
        if key not in ours:
            continue
        line = f"{label:28}{ours[key]:>10.2f}"
        if theirs and key in theirs:
            line += f"{theirs[key]:>14.2f}{ours[key] / theirs[key]:>8.2f}"
        print(line)
    if not theirs:
        print("JAX: not measured (install jax, or pass --jax-python)")


_OPS = _modjax_ops()

if __name__ == "__main__":
    main()
