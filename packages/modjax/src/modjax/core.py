"""Core types of traced programs (the public part of ``jax.core``)."""

from modjax.tracecore import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    Var,
    eval_jaxpr,
    get_aval,
    jaxpr_as_fun,
)

__all__ = [
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Var",
    "eval_jaxpr",
    "get_aval",
    "jaxpr_as_fun",
]
