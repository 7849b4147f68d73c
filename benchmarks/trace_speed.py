"""Tracing cost per equation: make_jaxpr of a 2000-equation chain.

Prints microseconds per equation for tracecore-level primitives, and for JAX's
lax primitives when JAX is installed (same machine, same run). Target for
modjax: at most 10 µs per equation.
"""

from __future__ import annotations

import timeit

import numpy as np

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


def bench_jax() -> float | None:
    try:
        import jax
        from jax import lax
    except ImportError:
        return None

    def new_chain():
        # A fresh function each time: JAX caches what it traced per function object.
        def jax_chain(x):
            for i in range(CHAIN // 2):
                x = lax.mul(lax.sin(x), x if i % 2 else 2.0)
            return x

        return jax_chain

    arg = jax.ShapeDtypeStruct((8,), np.float32)
    n_equations = len(jax.make_jaxpr(new_chain())(arg).jaxpr.eqns)
    return per_equation_us(lambda: jax.make_jaxpr(new_chain())(arg), n_equations)


def main() -> None:
    ours = bench_modjax()
    print(f"modjax.tracecore make_jaxpr: {ours:6.2f} µs per equation ({CHAIN}-equation chain)")
    theirs = bench_jax()
    if theirs is None:
        print("jax not installed: no side-by-side figure")
    else:
        print(f"jax.make_jaxpr (lax ops):    {theirs:6.2f} µs per equation")


if __name__ == "__main__":
    main()
