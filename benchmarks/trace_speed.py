"""Tracing cost per equation: make_jaxpr of a 2000-equation chain.

Prints microseconds per equation for tracecore-level primitives, and for JAX's
lax primitives in a child interpreter when one with JAX is found (``--jax-python``
or ``MODJAX_BENCH_JAX_PYTHON``), the two alternating for ``--rounds`` rounds.
Target for modjax: at most 10 µs per equation.
"""

from __future__ import annotations

import argparse
import timeit

import numpy as np
from jax_side import best_of_rounds, jax_python, print_figures

from modjax.tracecore import Primitive, ShapeDtypeStruct, make_jaxpr

CHAIN = 2000
REPEATS = 5


def _unary(name: str) -> Primitive:
    prim = Primitive(name)
    prim.def_abstract_eval(lambda x: x)
    return prim


def _binary(name: str) -> Primitive:
    prim = Primitive(name)
    prim.def_abstract_eval(lambda x, y: x)
    return prim


sin_p, mul_p = _unary("bench_sin"), _binary("bench_mul")


def chain(x):
    for i in range(CHAIN // 2):
        x = mul_p.bind(sin_p.bind(x), x if i % 2 else 2.0)
    return x


def per_equation_us(trace, n_equations: int) -> float:
    best = min(timeit.repeat(trace, number=1, repeat=REPEATS))
    return best / n_equations * 1e6


def bench_modjax() -> float:
    arg = ShapeDtypeStruct((8,), np.float32)
    n_equations = len(make_jaxpr(chain)(arg).jaxpr.eqns)
    return per_equation_us(lambda: make_jaxpr(chain)(arg), n_equations)


JAX_CODE = r"""
import json, sys, timeit
import numpy as np
import jax
from jax import lax
chain_length, repeats = int(sys.argv[1]), int(sys.argv[2])

def new_chain():
    # A fresh function each time: JAX caches what it traced per function object.
    def jax_chain(x):
        for i in range(chain_length // 2):
            x = lax.mul(lax.sin(x), x if i % 2 else 2.0)
        return x
    return jax_chain

arg = jax.ShapeDtypeStruct((8,), np.float32)
n = len(jax.make_jaxpr(new_chain())(arg).jaxpr.eqns)
best = min(timeit.repeat(lambda: jax.make_jaxpr(new_chain())(arg), number=1, repeat=repeats))
print(json.dumps({"trace": best / n * 1e6, "version": jax.__version__}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jax-python", default=None)
    args = parser.parse_args()
    ours, theirs, version = best_of_rounds(
        args.rounds,
        lambda: {"trace": bench_modjax()},
        jax_python(args.jax_python),
        JAX_CODE,
        CHAIN,
        REPEATS,
    )
    print(f"make_jaxpr of a {CHAIN}-equation chain, best of {args.rounds} rounds (microseconds)")
    print_figures([("trace", "tracing per equation", "")], ours, theirs, version, digits=2)


if __name__ == "__main__":
    main()
