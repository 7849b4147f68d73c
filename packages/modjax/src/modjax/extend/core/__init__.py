"""Jaxpr types, primitives and helpers for extension authors (``jax.extend.core``).

The types are tracecore's own; the functions take JAX 0.10's parameters and
adapt them to tracecore's (whose ``new_jaxpr_eqn`` and ``subjaxprs``, for
example, order or name them differently). Names of JAX's tracing internals
with no modjax counterpart raise NotImplementedError naming themselves.
"""

from __future__ import annotations

from collections.abc import Iterator, Set
from typing import Any

import numpy as np

from modjax.autodiff.tangents import tangent_aval
from modjax.batching import axis_frames, axis_names
from modjax.batching.batch_trace import BatchTrace
from modjax.extend.core import primitives
from modjax.tracecore import (
    ClosedJaxpr,
    DebugInfo,
    DropVar,
    Effect,
    InconclusiveDimensionOperation,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Primitive,
    ShapedArray,
    Var,
    check_jaxpr,
    jaxpr_as_fun,
    no_effects,
)
from modjax.tracecore import concrete_or_error as _concrete_or_error
from modjax.tracecore import dtypes as _dtypes
from modjax.tracecore import subjaxprs as _subjaxprs_of_params
from modjax.tracecore.core import current_trace, get_opaque_trace_state, to_aval
from modjax.tracecore.core import set_current_trace as _set_current_trace
from modjax.tracecore.jaxpr import new_jaxpr_eqn as _new_jaxpr_eqn
from modjax.tracecore.tokens import AbstractToken, Token
from modjax.tracecore.tracing import JaxprTrace

from ..._unsupported import Unsupported

__all__ = [
    "AbstractToken", "CallPrimitive", "ClosedJaxpr", "DebugInfo", "DropVar", "Effect",
    "Effects", "InconclusiveDimensionOperation", "Jaxpr", "JaxprEqn", "JaxprTypeError",
    "Literal", "Primitive", "Token", "TraceTag", "Var", "array_types", "call_impl",
    "check_jaxpr", "concrete_or_error", "find_top_trace", "gensym", "get_opaque_trace_state",
    "jaxpr_as_fun", "jaxprs_in_params", "mapped_aval", "new_jaxpr_eqn", "no_effects",
    "nonempty_axis_env_DO_NOT_USE", "primal_dtype_to_tangent_dtype", "primitives",
    "set_current_trace", "subjaxprs", "take_current_trace", "unmapped_aval",
    "unsafe_am_i_under_a_jit_DO_NOT_USE", "unsafe_am_i_under_a_vmap_DO_NOT_USE",
    "unsafe_get_axis_names_DO_NOT_USE", "valid_jaxtype",
]  # fmt: skip

#: The type of a set of effects (JAX's ``core.Effects``).
Effects = Set

#: The types that are arrays by themselves: numpy arrays and numpy's (and ml_dtypes')
#: scalar types.
array_types: set[type] = {np.ndarray} | {
    np.dtype(name).type
    for name in (
        "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
        "float16 float32 float64 complex64 complex128"
    ).split()
}
array_types |= {np.dtype(getattr(_dtypes, name)).type for name in _dtypes.NARROW_DTYPE_NAMES}

_INTERNAL = "JAX's trace internals, which modjax's tracer design has no counterpart of"
CallPrimitive = Unsupported("jax.extend.core.CallPrimitive", _INTERNAL)
TraceTag = Unsupported("jax.extend.core.TraceTag", _INTERNAL)
take_current_trace = Unsupported(
    "jax.extend.core.take_current_trace", _INTERNAL + "; modjax.tracecore.current_trace reads it"
)


def find_top_trace(_) -> Any:
    """Return the current trace (``jax.extend.core.find_top_trace``).

    As in JAX since its traces stopped forming a stack of levels, the argument (the
    values JAX once searched for tracers) is not looked at: the current trace is
    the top one.
    """
    return current_trace()


def new_jaxpr_eqn(invars, outvars, primitive, params, effects, source_info=None, ctx=None):
    """Make a JaxprEqn (``jax.extend.core.new_jaxpr_eqn``, JAX's parameter order).

    ``ctx`` (JAX's per-equation context) must be None: modjax's equations carry none.
    """
    if ctx is not None:
        raise NotImplementedError("new_jaxpr_eqn(ctx=...): modjax equations carry no context")
    return _new_jaxpr_eqn(primitive, invars, outvars, params, source_info, effects)


def concrete_or_error(force: Any, val: Any, context: str = ""):
    """Return ``force(val)`` (``val`` if ``force`` is None) for a concrete ``val``.

    A traced ``val`` raises ConcretizationTypeError naming ``context``
    (``jax.extend.core.concrete_or_error``).
    """
    value = _concrete_or_error(val, context)
    return value if force is None else force(value)


def jaxprs_in_params(params) -> Iterator[Jaxpr]:
    """Yield the jaxprs held in an equation's ``params`` (``jax.extend.core.jaxprs_in_params``)."""
    for sub in _subjaxprs_of_params(params):
        yield sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub


def subjaxprs(jaxpr: Jaxpr) -> Iterator[Jaxpr]:
    """Yield the jaxprs nested one level inside ``jaxpr``'s equations (``subjaxprs``)."""
    for eqn in jaxpr.eqns:
        yield from jaxprs_in_params(eqn.params)


def call_impl(f, *args, **params):
    """Call a WrappedFun on ``args`` (``jax.extend.core.call_impl``); ``params`` are unused."""
    del params
    return f.call_wrapped(*args)


def gensym():
    """Return a maker of fresh Vars: ``gensym()(aval)`` (``jax.extend.core.gensym``)."""
    return Var


def set_current_trace(trace, check_leaks: bool = False):
    """Make ``trace`` the current trace in a ``with`` block (``jax.extend.core``)."""
    del check_leaks  # modjax checks leaks with its own option (check_tracer_leaks)
    return _set_current_trace(trace)


def mapped_aval(size: int, axis: int | None, aval):
    """The aval of one element of ``aval`` mapped along ``axis`` of length ``size``."""
    if axis is None or isinstance(aval, AbstractToken):
        return aval
    shape = tuple(aval.shape)
    if shape[axis] != size:
        raise ValueError(f"mapped_aval: axis {axis} of {aval.str_short()} is not of size {size}")
    return aval.update(shape=shape[:axis] + shape[axis + 1 :])


def unmapped_aval(size: int, axis: int | None, aval, explicit_mesh_axis=None):
    """The aval of ``size`` stacked ``aval``s along ``axis`` (``jax.extend.core``)."""
    if explicit_mesh_axis is not None:
        raise NotImplementedError("unmapped_aval(explicit_mesh_axis=...): only None")
    if axis is None or isinstance(aval, AbstractToken):
        return aval
    shape = tuple(aval.shape)
    return aval.update(shape=shape[:axis] + (size,) + shape[axis:])


def primal_dtype_to_tangent_dtype(primal_dtype):
    """The dtype of tangents of ``primal_dtype``: float0 for integers and booleans."""
    return tangent_aval(ShapedArray((), primal_dtype)).dtype


def valid_jaxtype(x) -> bool:
    """Tell whether ``x`` is a value modjax can trace (``jax.extend.core.valid_jaxtype``)."""
    try:
        to_aval(x)
    except TypeError:
        return False
    return True


def unsafe_am_i_under_a_jit_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    """Tell whether the current trace stages a program out (jit, make_jaxpr, ...)."""
    return isinstance(current_trace(), JaxprTrace)


def unsafe_am_i_under_a_vmap_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    """Tell whether the current trace is vmap's."""
    return isinstance(current_trace(), BatchTrace)


def unsafe_get_axis_names_DO_NOT_USE() -> list:  # noqa: N802 - JAX's name
    """The named axes bound here (by vmap or shard_map), outermost first."""
    return list(axis_names())


def nonempty_axis_env_DO_NOT_USE() -> bool:  # noqa: N802 - JAX's name
    """Tell whether any mapped axis (named or not) is bound here."""
    return bool(axis_frames())
