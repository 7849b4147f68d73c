"""Tracing Python functions into jaxprs: JaxprTrace, trace_to_jaxpr and make_jaxpr."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import source_info as source_info_util
from .abstract import ShapedArray, ShapeDtypeStruct, get_aval
from .check import check_jaxpr
from .core import (
    Trace,
    Tracer,
    UnexpectedTracerError,
    _leak_message,
    set_current_trace,
    to_aval,
)
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var
from .leaks import check_leaks, check_tracer_leaks
from .memory_spaces import apply_memory_space_rule
from .options import enable_checks
from .pvary import pvary_p, reduced_vary_cast_p
from .sharding_types import (
    apply_sharding_rule,
    apply_vma_rule,
    missing_varying,
    order_axes,
    vma_checked,
)
from .traceback_util import api_boundary
from .tree_util import tree_flatten, tree_unflatten
from .wrapped_fun import (
    DebugInfo,
    WrappedFun,
    check_array_arguments,
    debug_info,
    flatten_fun,
    wrap_init,
)

__all__ = [
    "JaxprTrace",
    "JaxprTracer",
    "trace_to_jaxpr",
    "make_jaxpr",
    "register_axis_env_binder",
    "convert_constvars_jaxpr",
    "arg_aval",
]

# Scalars of these types become Literals; everything else captured becomes a constvar.
_LITERAL_TYPES = (bool, int, float, complex, np.generic)


class JaxprTracer(Tracer):
    """A value being recorded into a jaxpr: an aval and the Var that names it."""

    __slots__ = ("aval", "var")

    def __init__(self, trace: JaxprTrace, aval: ShapedArray, var: Var):
        self._trace = trace
        self.aval = aval  # type: ignore[misc]  # a slot here, a property in Tracer
        self.var = var

    def _origin(self) -> str:
        return self._trace.describe(self.var)

    def _origin_msg(self) -> str:
        return self._trace.origin_msg(self.var)

    def _short_repr(self) -> str:
        return f"JitTracer({self.aval})"


class JaxprTrace(Trace):
    """A trace that records every primitive it sees as an equation of a new jaxpr."""

    __slots__ = ("eqns", "invars", "constvars", "consts", "_const_ids", "debug_info")

    def __init__(self, debug_info: DebugInfo | None = None):
        super().__init__()
        self.eqns: list[JaxprEqn] = []
        self.invars: list[Var] = []
        self.constvars: list[Var] = []
        self.consts: list[Any] = []
        self._const_ids: dict[int, Var] = {}
        self.debug_info = debug_info

    def new_arg(self, aval: ShapedArray) -> JaxprTracer:
        """Add an input of the jaxpr and return the tracer standing for it."""
        var = Var(aval)
        self.invars.append(var)
        return JaxprTracer(self, aval, var)

    def to_atom(self, value) -> Var | Literal:
        """Return the Var or Literal that ``value`` is in the jaxpr being built."""
        if type(value) is JaxprTracer and value._trace is self:
            return value.var
        if isinstance(value, Tracer):
            if not value._trace.alive:
                raise UnexpectedTracerError(_leak_message(value))
            return self._constvar(value, value.aval)
        if isinstance(value, _LITERAL_TYPES):
            return Literal(value, get_aval(value))
        if isinstance(value, np.ndarray) and value.shape == ():
            return Literal(value[()], get_aval(value))
        return self._constvar(value, to_aval(value))

    def _constvar(self, value, aval: ShapedArray) -> Var:
        var = self._const_ids.get(id(value))
        if var is None:
            var = Var(aval)
            self._const_ids[id(value)] = var
            self.constvars.append(var)
            self.consts.append(value)  # also keeps ``id(value)`` from being reused
        return var

    def process_primitive(self, primitive, args, params):
        # Own tracers inline and the abstract eval rule called directly: every traced
        # equation goes through here.
        invars = [
            arg.var if type(arg) is JaxprTracer and arg._trace is self else self.to_atom(arg)
            for arg in args
        ]
        avals = [atom.aval for atom in invars]
        if ShapedArray.varying_types_seen and vma_checked():
            missing = missing_varying(primitive, avals, params)
            if missing is not None:
                invars = [
                    self._pvary(v, m) if m else v for v, m in zip(invars, missing, strict=True)
                ]
                avals = [atom.aval for atom in invars]
        abstract_eval = primitive._abstract_eval
        if abstract_eval is None:
            out = primitive.abstract_eval(*avals, **params)  # raises its error
        else:
            out = abstract_eval(*avals, **params)
            if ShapedArray.sharded_types_seen:  # shardings in types (explicit mesh axes)
                out = apply_sharding_rule(primitive, avals, out, params, invars)
            if ShapedArray.varying_types_seen:  # varying manual axes (shard_map)
                out = apply_vma_rule(primitive, avals, out, params)
            if ShapedArray.memory_spaces_seen:  # memory spaces (arrays in host memory)
                out = apply_memory_space_rule(primitive, avals, out, params)
        info = source_info_util.current()
        if primitive.multiple_results:
            outvars = [Var(aval) for aval in out]
            self.eqns.append(JaxprEqn(primitive, invars, outvars, params, info))
            return [JaxprTracer(self, var.aval, var) for var in outvars]
        outvar = Var(out)
        self.eqns.append(JaxprEqn(primitive, invars, [outvar], params, info))
        return JaxprTracer(self, out, outvar)

    def _pvary(self, atom, axes: frozenset) -> Var:
        # JAX's inserted ``pvary``: ``atom`` made to vary over ``axes`` too. Axes it is
        # reduced over are cast with ``reduced_vary_cast_p``; unreduced ones cannot vary.
        aval = atom.aval
        partial: frozenset = getattr(aval, "manual_unreduced", frozenset()) & axes
        if partial:
            raise ValueError(
                f"pvary cannot accept args which are unreduced. Got {aval.str_short(True)} and "
                f"axes={set(partial)}"
            )
        reduced: frozenset = getattr(aval, "manual_reduced", frozenset()) & axes
        if reduced:
            out = Var(
                aval.update(vma=aval.vma | reduced, manual_reduced=aval.manual_reduced - reduced)
            )
            params = {"axes": order_axes(reduced)}
            info = source_info_util.current()
            self.eqns.append(JaxprEqn(reduced_vary_cast_p, [atom], [out], params, info))
            atom, aval, axes = out, out.aval, axes - reduced
            if not axes:
                return out
        outvar = Var(aval.update(vma=aval.vma | axes))
        params = {"axes": order_axes(axes)}
        self.eqns.append(JaxprEqn(pvary_p, [atom], [outvar], params, source_info_util.current()))
        return outvar

    def to_jaxpr(self, outs: Sequence[Any]) -> tuple[Jaxpr, list[Any]]:
        """Finish: return the jaxpr whose outputs are ``outs``, and its consts."""
        outvars = [self.to_atom(out) for out in outs]
        jaxpr = Jaxpr(self.constvars, self.invars, outvars, self.eqns, self.debug_info)
        return jaxpr, list(self.consts)

    def origin_msg(self, var: Var) -> str:
        """JAX's lines for a concretization error about ``var``: the traced function and the
        arguments ``var`` depends on (found by walking the equations back from it)."""
        info = self.debug_info
        if info is None:
            return ""
        active = {var}
        for eqn in reversed(self.eqns):
            produced = active.intersection(eqn.outvars)
            if produced:
                active.difference_update(produced)
                active.update(v for v in eqn.invars if type(v) is Var)
        positions = [i for i, v in enumerate(self.invars) if v in active]
        origin = (
            f"The error occurred while tracing the function {info.func_name}"
            f"{' at ' + info.func_src_info if info.func_src_info else ''} for {info.traced_for}. "
        )
        if positions:
            names = info.arg_names or ()
            if any(i >= len(names) for i in positions):
                return ""
            args = [names[i] for i in positions]
            if len(args) == 1:
                which = f"the argument {args[0]}"
            elif len(args) == 2:
                which = f"the arguments {args[0]} and {args[1]}"
            else:
                which = f"the arguments {', '.join(args[:-1])}, and {args[-1]}"
            plural = "s" if len(args) > 1 else ""
            origin += (
                "This concrete value was not available in Python because it depends on "
                f"the value{plural} of {which}."
            )
        return "\n" + origin

    def describe(self, var: Var) -> str:
        """Say, for an error message, where ``var`` came from."""
        if var in self.invars:
            index = self.invars.index(var)
            info = self.debug_info
            name = info.describe_arg(index) if info else f"flat argument {index}"
            func = f" of {info.func_name}" if info else ""
            return f" It is {name}{func}."
        for eqn in self.eqns:
            if any(out is var for out in eqn.outvars):
                return f" It was computed by '{eqn.primitive.name}' at {eqn.source_info}."
        return ""


def trace_to_jaxpr(fun: WrappedFun, in_avals: Sequence[ShapedArray]) -> tuple[Jaxpr, list[Any]]:
    """Trace flat ``fun`` on arguments of ``in_avals``; return its jaxpr and consts.

    ``fun`` takes and returns flat lists of arrays. Consts are the values the
    function closed over: concrete arrays, or tracers of enclosing transformations.
    """
    trace = JaxprTrace(fun.debug_info)
    args = [trace.new_arg(aval) for aval in in_avals]
    try:
        with set_current_trace(trace):
            outs = fun.call_wrapped(*args)
            jaxpr, consts = trace.to_jaxpr(outs)
    finally:
        trace.invalidate()
    if check_tracer_leaks.value:
        args = outs = None  # type: ignore[assignment]  # our own references are not leaks
        check_leaks(trace)
    if enable_checks.value:  # jax_enable_checks: every traced program is type-checked
        check_jaxpr(jaxpr)
    return jaxpr, consts


def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """Turn the constvars of ``jaxpr`` into its leading invars (closure conversion)."""
    return jaxpr.replace(constvars=[], invars=jaxpr.constvars + jaxpr.invars)


def arg_aval(x) -> ShapedArray:
    """Return the aval to trace an argument with (ShapeDtypeStruct, ShapedArray, tracer, value)."""
    if isinstance(x, ShapeDtypeStruct):
        return x.aval
    if isinstance(x, ShapedArray):
        return x
    return to_aval(x)


# How make_jaxpr's ``axis_env`` binds axis names: ``binder(name, size)`` returns a context
# manager. tracecore has no named axes; the package that owns them (batching) registers it.
_axis_env_binder: list[Callable[[Any, int], Any] | None] = [None]


def register_axis_env_binder(binder: Callable[[Any, int], Any]) -> None:
    """Make ``make_jaxpr(axis_env=...)`` bind each (name, size) with ``binder(name, size)``."""
    _axis_env_binder[0] = binder


def _bind_axis_env(axis_env) -> contextlib.ExitStack:
    stack = contextlib.ExitStack()
    if not axis_env:
        return stack
    binder = _axis_env_binder[0]
    if binder is None:
        raise NotImplementedError(
            "make_jaxpr(axis_env=...) needs a package that binds axis names (modjax.batching)"
        )
    for name, size in axis_env:
        stack.enter_context(binder(name, size))
    return stack


def make_jaxpr(
    fun: Callable,
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None,
    return_shape: bool = False,
) -> Callable:
    """Return a function that traces ``fun`` and gives its ClosedJaxpr (jax.make_jaxpr).

    Arguments may be arrays, Python scalars (traced as weakly-typed inputs),
    ``ShapeDtypeStruct`` or any pytree of them; keyword arguments are traced too.
    ``static_argnums`` positions are passed to ``fun`` as they are. ``axis_env``,
    a sequence of (axis name, size) pairs, binds names for collectives
    (``psum(x, 'i')``) outside any vmap or shard_map. With
    ``return_shape=True`` the result is ``(closed_jaxpr, out_shapes)`` where
    ``out_shapes`` is a pytree of ShapeDtypeStruct.
    """
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    def make_jaxpr_f(*args, **kwargs):
        nargs = len(args)
        static_pos = {i if i >= 0 else i + nargs for i in static}
        for i in static_pos:
            if not 0 <= i < nargs:
                raise ValueError(
                    f"Jitted function has static_argnums={tuple(static)}, but only accepts "
                    f"{nargs} positional arguments."
                )
        dynamic = tuple(a for i, a in enumerate(args) if i not in static_pos)

        def bound(*dyn_args, **kw):
            it = iter(dyn_args)
            full = [args[i] if i in static_pos else next(it) for i in range(nargs)]
            return fun(*full, **kw)

        info = debug_info(
            fun, args, kwargs, static_argnums=tuple(static_pos), traced_for="make_jaxpr"
        )
        args_flat, in_tree = tree_flatten((dynamic, kwargs))
        flat_fun, out_tree = flatten_fun(wrap_init(bound, info), in_tree)
        try:
            in_avals = [arg_aval(x) for x in args_flat]
        except TypeError:
            check_array_arguments(fun, args_flat, info.arg_names, arg_aval)
            raise
        with _bind_axis_env(axis_env):
            jaxpr, consts = trace_to_jaxpr(flat_fun, in_avals)
        closed = ClosedJaxpr(jaxpr, consts)
        if not return_shape:
            return closed
        shapes = [
            ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in jaxpr.out_avals
        ]
        return closed, tree_unflatten(out_tree.val, shapes)

    make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
    return api_boundary(make_jaxpr_f)
