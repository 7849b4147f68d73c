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
from modjax.tracecore.tokens import AbstractToken, abstract_token

__all__ = [
    "AbstractToken",
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "Primitive",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Var",
    "abstract_token",
    "eval_jaxpr",
    "get_aval",
    "jaxpr_as_fun",
]
