"""jit's fast path in C++: jaxlib's ``PjitFunction`` behind a thin Python wrapper.

This is the default fast path (option ``cpp_dispatch``). The C++ callable
flattens the arguments, computes each leaf's signature and, on a hit, runs the
executable without Python; on a miss it calls ``JitFunction.cpp_cache_miss``,
which runs the slow path and hands back :func:`fastpath_data`, the record the
C++ side keeps for next time. ``cpp_dispatch`` holds the contract with jaxlib.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from modjax.tracecore import core
from modjax.tracecore.traceback_util import filter_exception, register_boundary
from modjax.tracecore.tree_util import tree_flatten

from . import cpp_dispatch
from .arguments import CallArgs, split_statics
from .debugging import flags
from .executable import Executable, raise_if_deleted
from .extended import call_checks, physical

if TYPE_CHECKING:
    from .jit_function import JitFunction

__all__ = ["cpp_wrapper", "eager_fast_path", "fastpath_data", "flags"]

_state = core.trace_state
_eval_trace = core.eval_trace


def cpp_wrapper(fn: JitFunction) -> Callable:
    """The fast path in C++: jaxlib's PjitFunction, missing into ``fn.cpp_cache_miss``."""
    fn.use_cpp = True
    call_slow = fn.call_slow

    def python_path(*args, **kwargs):
        # What the C++ side calls while it is told to stay out (``cpp_dispatch``): in a
        # rule run with the eval trace current inside a transformation, for one.
        return call_slow(args, kwargs)

    fast = cpp_dispatch.make_fast_function(
        fn.name, python_path, fn.cpp_cache_miss, fn.static_argnums, fn.static_argnames
    )
    has_statics = bool(fn.static_argnums or fn.static_argnames)

    def wrapped(*args, **kwargs):
        try:
            if _state.trace is _eval_trace and not flags.slow:
                try:
                    return fast(*args, **kwargs)
                except (ValueError, RuntimeError):
                    # Say it our way when it is an unhashable static or a deleted Array.
                    if has_statics:
                        split_statics(fn, args, kwargs)
                    raise_if_deleted(tree_flatten((args, kwargs))[0])
                    raise
            return call_slow(args, kwargs)
        except Exception as e:  # an API boundary: the user sees their frames
            filter_exception(e)
            raise

    register_boundary(wrapped.__code__)
    fn.cpp_fast = fast
    return wrapped


def eager_fast_path(jitted: Callable) -> Callable | None:
    """Return the C++ callable behind ``jitted`` (a ``jit`` result), or None if it has none.

    For library functions that call ``jitted`` eagerly on device Arrays, one Python
    frame cheaper than calling ``jitted`` (its wrapper is most of what a cached call of
    a few microseconds spends in Python). Call it only where ``jitted``'s wrapper would:
    while ``core.trace_state.trace is core.eval_trace and not flags.slow``; on any
    exception call ``jitted`` itself, which raises the error as the user sees it.
    """
    fn = getattr(jitted, "_jit", None)
    return getattr(fn, "cpp_fast", None) if getattr(fn, "use_cpp", False) else None


def fastpath_data(call: CallArgs, executable: Executable, result, outs, committed):
    """Return the C++ fast path's record of this call, or None if it cannot take it."""
    if executable.ordered_effects or executable.host_callbacks:
        return None  # its tokens are threaded by ``Executable.run``
    if executable.extended and call_checks:
        return None  # every call is checked (key reuse)
    # The C++ registry flattens an ExtendedArray to its data, which the program takes.
    flat = [physical(x) for x in call.leaves] if executable.extended else call.leaves
    outs = [physical(x) for x in outs] if executable.extended else outs
    leaves = cpp_dispatch.flatten_arguments(call.dyn_args, call.dyn_kwargs)
    if len(leaves) != len(flat) or any(a is not b for a, b in zip(leaves, flat, strict=True)):
        # A pytree node the C++ registry does not know: teach it, take the next call.
        cpp_dispatch.mirror_node_types(leaves)
        return None
    out_leaves, out_tree = cpp_dispatch.flatten_outputs(result)
    if len(out_leaves) != len(outs) or any(
        a is not b for a, b in zip(out_leaves, outs, strict=True)
    ):
        cpp_dispatch.mirror_node_types(out_leaves)
        return None
    n_consts = len(executable.const_args)
    kept = executable.kept
    bits = [True] * n_consts + (
        [True] * len(call.leaves) if kept is None else [i in kept for i in range(len(call.leaves))]
    )
    n_in = sum(bits)
    return cpp_dispatch.FastpathData(
        executable.xla,
        out_tree,
        list(executable.in_shardings),
        list(executable.out_shardings),
        [o.aval for o in outs],
        [executable.handlers_committed] * len(outs),
        bits,
        [None] * n_in,
        list(executable.const_args),
    )
