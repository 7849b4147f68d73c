"""Eager execution of one primitive: ``apply_primitive`` (JAX's ``dispatch.apply_primitive``).

It is the ``impl`` of every lax primitive::

    sin_p.def_impl(functools.partial(apply_primitive, sin_p))

A call looks its arguments' shared aval and sharding objects up (by identity,
as jit's fast path does) together with the primitive and its params; a miss
traces the one equation, compiles it with ``compile_jaxpr`` and remembers it.
"""

from __future__ import annotations

import logging
from typing import Any

from modjax.tracecore import core
from modjax.tracecore.config import config
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.options import no_tracing
from modjax.tracecore.sharding_types import context_mesh_sharding
from modjax.tracecore.tracing import trace_to_jaxpr
from modjax.tracecore.wrapped_fun import DebugInfo, wrap_init

from . import cpp_dispatch
from .array import ArrayImpl, _canonical_host_value
from .compile_cache import log_compiles
from .debugging import check_outputs, flags
from .executable import (
    Executable,
    JaxRuntimeError,
    compile_jaxpr,
    device_args,
    placement,
    raise_if_deleted,
)
from .extended import call_checks, checked_run
from .spmd import SpmdTarget, type_out_shardings

__all__ = ["apply_primitive", "clear_cache", "stats"]

logger = logging.getLogger("modjax.runtime.dispatch")

# Python fast path: key -> (execute, handlers, executable, avals)
_fast: dict[tuple, tuple] = {}
# C++ fast path: (primitive, params) -> jaxlib's PjitFunction for it
_cpp_functions: dict[Any, Any] = {}
# (primitive, params key, avals, device, committed) -> Executable
_executables: dict[tuple, Executable] = {}

#: Counters for tests: how many primitive programs were compiled.
stats = {"compiles": 0}

# Each table is emptied when it reaches this size (JAX bounds its eager op cache at
# 4096 too): every executable holds memory mappings, of which a process has a fixed
# number (see compile_cache).
_LIMIT = 4096


def clear_cache() -> None:
    """Forget every compiled primitive."""
    _fast.clear()
    for fast in _cpp_functions.values():
        fast._clear_cache()
    _cpp_functions.clear()
    _executables.clear()


def forget_fast_paths() -> None:
    """Drop the fast-path entries of eager ops, keeping their executables (keyed by device)."""
    _fast.clear()
    for fast in _cpp_functions.values():
        fast._clear_cache()


def apply_primitive(prim: core.Primitive, *args, **params):
    """Run ``prim`` on concrete ``args`` by compiling it alone (once per signature).

    Counterpart of JAX's ``dispatch.apply_primitive``. Arguments are Arrays,
    numpy arrays or Python scalars; the result is an Array (a list of them for
    ``multiple_results`` primitives). Params must be hashable to be cached (an
    unhashable one compiles on every call).
    """
    if flags.checks:
        return _apply_checked(prim, args, params)
    if _use_cpp:
        key = (prim, tuple(params.items())) if params else prim
        try:
            fast = _cpp_functions[key]
        except KeyError:
            fast = _cpp_function(prim, params, key)
        except TypeError:  # an unhashable param
            return _apply_slow(prim, args, params)
        try:
            return fast(*args)
        except (ValueError, RuntimeError):
            raise_if_deleted(args)
            raise
    signature: list[Any] = [prim, tuple(params.items())] if params else [prim]
    for x in args:
        if type(x) is not ArrayImpl:
            return _apply_slow(prim, args, params)
        signature.append(id(x.aval))
        signature.append(id(x._sharding))
        signature.append(x._committed)
    try:
        entry = _fast.get(tuple(signature))
    except TypeError:  # an unhashable param
        return _apply_slow(prim, args, params)
    if entry is None:
        return _apply_slow(prim, args, params)
    try:
        outs = entry[0](args).consume_with_handlers(entry[1])
    except JaxRuntimeError:
        raise_if_deleted(args)
        raise
    return outs if prim.multiple_results else outs[0]


def _apply_checked(prim: core.Primitive, args: tuple, params: dict):
    """Run ``prim`` and raise FloatingPointError if it made a NaN/inf (``debug_nans``)."""
    result = _apply_slow(prim, args, params)
    check_outputs(prim.name, result if prim.multiple_results else [result])
    return result


def _cpp_function(prim: core.Primitive, params: dict, key):
    """Make (and remember) the C++ fast-path function of ``prim`` with ``params``."""

    def cache_miss(*args):
        result, executable, leaves = _run_slow(prim, args, params)
        return result, _fastpath_data(args, result, executable), False

    def fun(*args):
        return _apply_slow(prim, args, params)

    fast = cpp_dispatch.make_fast_function(prim.name, fun, cache_miss, (), ())
    if len(_cpp_functions) >= _LIMIT:
        clear_cache()
    _cpp_functions[key] = fast
    return fast


def _fastpath_data(args, result, executable: Executable):
    """Describe an eager run for the C++ fast path (None if it cannot replay it)."""
    if (
        executable is None
        or executable.kept is not None
        or executable.const_args
        or executable.ordered_effects  # its tokens are threaded by ``Executable.run``
        or executable.host_callbacks
        or executable.extended
    ):
        return None
    leaves = cpp_dispatch.flatten_arguments(args, {})
    if len(leaves) != len(args) or any(a is not b for a, b in zip(leaves, args, strict=True)):
        return None
    outs, out_tree = cpp_dispatch.flatten_outputs(result)
    committed = executable.handlers_committed
    return cpp_dispatch.FastpathData(
        executable.xla,
        out_tree,
        list(executable.in_shardings),
        list(executable.out_shardings),
        [o.aval for o in outs],
        [committed] * len(outs),
        [True] * len(args),
        [None] * len(args),
        [],
    )


def _spmd_arg_aval(x):
    """The type of an argument that is not a plain Array: a key array's, or a host value's."""
    aval = getattr(x, "aval", None)
    return aval if aval is not None else _canonical_host_value(x)[1]


def _apply_slow(prim: core.Primitive, args: tuple, params: dict):
    return _run_slow(prim, args, params)[0]


def _run_slow(prim: core.Primitive, args: tuple, params: dict):
    """Place the arguments, find or compile the executable, run; learn the Python fast path.

    Return the result, the Executable (None if params are unhashable) and the
    placed arguments.
    """
    device, committed = placement(args)
    spmd = isinstance(device, SpmdTarget)
    if spmd:  # placed by the executable, once it knows where XLA wants each argument
        avals = tuple(x.aval if type(x) is ArrayImpl else _spmd_arg_aval(x) for x in args)
    else:
        leaves = device_args(args, device)
        avals = tuple(x.aval for x in leaves)
    params_key = tuple(params.items())
    try:
        hash(params_key)
        hashable = True
    except TypeError:
        hashable = False
    # The trace context too: an option of it can change how the equation traces
    # (jax_allow_f16_reductions refuses some), so each context compiles its own.
    context = config.trace_context()
    key = (prim, params_key, avals, device, committed, context) if hashable else None
    executable = _executables.get(key) if key is not None else None
    if executable is None:
        executable = _compile_primitive(prim, avals, params, device, committed)
        if key is not None:
            if len(_executables) >= _LIMIT:
                _executables.clear()
            _executables[key] = executable
    if spmd:
        leaves = executable.place(args)
    if executable.extended and call_checks:  # key reuse checking sees eager ops on keys
        outs = checked_run(executable, _one_equation(prim, avals, params), args, leaves)
    else:
        outs = executable.run(leaves)
    if (
        hashable
        and not _use_cpp
        and not executable.ordered_effects
        and not executable.host_callbacks
        and not executable.extended
        and all(x._sharding is executable.sharding for x in leaves)
    ):
        fast_key: list[Any] = [prim, params_key] if params else [prim]
        for x in leaves:
            fast_key.append(id(x.aval))
            fast_key.append(id(x._sharding))
            fast_key.append(x._committed)
        if len(_fast) >= _LIMIT:
            _fast.clear()
        _fast[tuple(fast_key)] = (executable.call, executable.handlers, executable, avals)
    result = outs if prim.multiple_results else outs[0]
    return result, executable if hashable else None, leaves


def _one_equation(prim, avals, params) -> ClosedJaxpr:
    """The program of ``prim`` alone on arguments of ``avals``."""

    def one_equation(*xs):
        out = prim.bind(*xs, **params)
        return list(out) if prim.multiple_results else [out]

    info = DebugInfo(prim.name, None, tuple(f"x{i}" for i in range(len(avals))))
    jaxpr, consts = trace_to_jaxpr(wrap_init(one_equation, info), list(avals))
    return ClosedJaxpr(jaxpr, consts)


def _compile_primitive(prim, avals, params, device, committed) -> Executable:
    if no_tracing.value:  # an eager op of a new signature traces its one-equation program
        raise RuntimeError(f"re-tracing function {prim.name} for `jit`, but 'no_tracing' is set")
    closed = _one_equation(prim, avals, params)
    if isinstance(device, SpmdTarget) and device.out_shardings is None:
        # As under jit: results typed over a mesh of explicit axes are laid out as the
        # primitive's sharding rule types them (JAX's eager result is the rule's type),
        # not as XLA would choose.
        context = context_mesh_sharding.value
        outs = type_out_shardings(closed.out_avals, context if device.context is context else None)
        if outs is not None:
            device = device.with_outputs(outs)
    executable = compile_jaxpr(
        closed,
        device,
        name=prim.name,
        keep_unused=True,
        committed=committed,
    )
    stats["compiles"] += 1
    if log_compiles.value:
        logger.warning(
            "Compiling %s for %s (eager op, params %s): %.1f ms%s",
            prim.name,
            ", ".join(a.str_short() for a in avals),
            _params_str(params),
            executable.compile_seconds * 1e3,
            " (from the persistent compilation cache)"
            if executable.compile_source == "disk"
            else "",
        )
    return executable


def _params_str(params: dict[str, Any]) -> str:
    return "{" + ", ".join(f"{k}={v!r:.40}" for k, v in params.items()) + "}"


def _set_use_cpp(value: bool) -> None:
    global _use_cpp
    _use_cpp = bool(value) and cpp_dispatch.available
    clear_cache()


_use_cpp = cpp_dispatch.cpp_dispatch.value and cpp_dispatch.available
cpp_dispatch.cpp_dispatch.add_hook(_set_use_cpp)
