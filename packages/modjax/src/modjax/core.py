"""Core types of traced programs (the public part of ``jax.core``).

JAX 0.10's ``jax.core`` keeps twelve public names and serves about thirty more,
with a DeprecationWarning that points to ``jax.extend.core`` or ``jax.errors``;
libraries (flax, chex, equinox) still read several of them. modjax serves the
same names the same way, through the module ``__getattr__`` below. Those of JAX's
tracing internals that modjax's tracers have no counterpart of raise
NotImplementedError when used.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator
from typing import Any

from modjax.tracecore import (
    AbstractValue,
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    Literal,
    Primitive,
    ShapedArray,
    Trace,
    Tracer,
    Var,
    ensure_compile_time_eval,
    eval_jaxpr,
    get_aval,
    jaxpr_as_fun,
)
from modjax.tracecore.core import concrete_or_error as _concrete_or_error
from modjax.tracecore.core import eval_trace, set_current_trace
from modjax.tracecore.tokens import AbstractToken, abstract_token

from ._unsupported import Unsupported

__all__ = [
    "AbstractToken",
    "AbstractValue",
    "Atom",
    "ClosedJaxpr",
    "Jaxpr",
    "JaxprEqn",
    "Literal",
    "ParamDict",
    "Primitive",
    "ShapedArray",
    "Trace",
    "Tracer",
    "Value",
    "Var",
    "abstract_token",
    "ensure_compile_time_eval",
    "eval_context",
    "eval_jaxpr",
    "get_aval",
    "jaxpr_as_fun",
    "max_dim",
    "min_dim",
]

#: An operand of an equation: a variable or a literal (``jax.core.Atom``).
Atom = Var | Literal
#: The parameters of an equation (``jax.core.ParamDict``).
ParamDict = dict[str, Any]
#: Any value a program computes on (``jax.core.Value``).
Value = Any


@contextlib.contextmanager
def eval_context() -> Iterator[None]:
    """Run primitives eagerly in the block, whatever is being traced (``jax.core.eval_context``).

    Unlike :func:`ensure_compile_time_eval`, a tracer of an enclosing
    transformation reaching a primitive in the block is an error.
    """
    with set_current_trace(eval_trace):
        yield


def _constant_dim(d: Any) -> int:
    value = _concrete_or_error(d, "a dimension size")
    return int(value)


def max_dim(d1: Any, d2: Any) -> int:
    """The larger of two dimension sizes (``jax.core.max_dim``); modjax's sizes are integers."""
    return max(_constant_dim(d1), _constant_dim(d2))


def min_dim(d1: Any, d2: Any) -> int:
    """The smaller of two dimension sizes (``jax.core.min_dim``); modjax's sizes are integers."""
    return min(_constant_dim(d1), _constant_dim(d2))


def _is_concrete(x: Any) -> bool:
    """Tell whether ``x`` has a value known now (``jax.core.is_concrete``)."""
    return not isinstance(x, Tracer) or x.to_concrete_value() is not None


def _is_constant_dim(d: Any) -> bool:
    """Tell whether ``d`` is a static integer size (``jax.core.is_constant_dim``)."""
    if isinstance(d, Tracer) and not _is_concrete(d):
        return False
    try:
        _constant_dim(d)
    except (TypeError, ValueError):
        return False
    return True


def _is_constant_shape(shape: Any) -> bool:
    """Tell whether every size of ``shape`` is static (``jax.core.is_constant_shape``)."""
    return all(_is_constant_dim(d) for d in shape)


def _concretization_function_error(fun: Any, suggest_astype: bool = False):
    """Return a method that refuses a traced ``self`` (``jax.core.concretization_function_error``).

    Array types install it as ``__bool__``/``__int__``...: a concrete value goes
    through ``fun``, a tracer raises ConcretizationTypeError naming ``fun``.
    """
    name = getattr(fun, "__name__", fun)
    hint = f"The problem arose with the `{name}` function."
    if suggest_astype:
        hint += " To convert a traced array to another dtype use x.astype(dtype)."

    def refuse(self):
        return fun(_concrete_or_error(self, hint))

    return refuse


_NO_AXIS_NAME = object()


def _extend_core(name: str):
    def get():
        from modjax.extend import core

        return getattr(core, name)

    return get


def _errors(name: str):
    def get():
        from modjax import errors

        return getattr(errors, name)

    return get


def _tracecore(name: str):
    def get():
        from modjax import tracecore

        return getattr(tracecore, name)

    return get


def _internal(name: str, why: str):
    return lambda: Unsupported(f"jax.core.{name}", why)


def _value(value: Any):
    return lambda: value


_TRACE_INTERNALS = "JAX's trace internals, which modjax's tracer design has no counterpart of"
_PRINTING = "JAX's jaxpr printer settings; modjax prints with jaxpr.pretty_print(...)"

# Deprecated names: (where JAX points to, the getter of modjax's counterpart).
_DEPRECATED: dict[str, tuple[str, Any]] = {
    **{
        name: (f"jax.extend.core.{name}", _extend_core(name))
        for name in (
            "CallPrimitive DebugInfo DropVar Effect Effects check_jaxpr concrete_or_error "
            "find_top_trace gensym get_opaque_trace_state jaxprs_in_params new_jaxpr_eqn "
            "no_effects primal_dtype_to_tangent_dtype valid_jaxtype "
            "nonempty_axis_env_DO_NOT_USE unsafe_am_i_under_a_jit_DO_NOT_USE "
            "unsafe_am_i_under_a_vmap_DO_NOT_USE unsafe_get_axis_names_DO_NOT_USE"
        ).split()
    },
    "InconclusiveDimensionOperation": (
        "jax.errors.InconclusiveDimensionOperation",
        _errors("InconclusiveDimensionOperation"),
    ),
    "JaxprTypeError": ("jax.errors.JaxprTypeError", _errors("JaxprTypeError")),
    "call": ("", _tracecore("call")),
    "pytype_aval_mappings": ("", lambda: _aval_handlers()),
    "is_concrete": ("", _value(_is_concrete)),
    "is_constant_dim": ("", _value(_is_constant_dim)),
    "is_constant_shape": ("", _value(_is_constant_shape)),
    "concretization_function_error": ("", _value(_concretization_function_error)),
    "no_axis_name": ("", _value(_NO_AXIS_NAME)),
    "JaxprPpContext": ("", _internal("JaxprPpContext", _PRINTING)),
    "JaxprPpSettings": ("", _internal("JaxprPpSettings", _PRINTING)),
    "OutputType": ("", _internal("OutputType", "JAX's dynamic-shape output types")),
    "aval_mapping_handlers": (
        "",
        _internal("aval_mapping_handlers", "vmap maps avals with modjax.batching's rules"),
    ),
    "custom_typechecks": (
        "",
        _internal(
            "custom_typechecks", "modjax.tracecore.check_jaxpr checks with each primitive's rule"
        ),
    ),
    "literalable_types": (
        "",
        _internal("literalable_types", "modjax decides what becomes a Literal by value type"),
    ),
    "trace_ctx": ("", _internal("trace_ctx", _TRACE_INTERNALS)),
}


def _aval_handlers():
    from modjax.tracecore.abstract import aval_handlers

    return aval_handlers


def __getattr__(name: str) -> Any:
    entry = _DEPRECATED.get(name)
    if entry is None:
        raise AttributeError(f"module 'jax.core' has no attribute {name!r}")
    replacement, get = entry
    hint = f"; use {replacement} instead" if replacement else ""
    warnings.warn(
        f"jax.core.{name} is deprecated in JAX 0.10{hint}", DeprecationWarning, stacklevel=2
    )
    return get()
