"""jit's fast path in C++: jaxlib's ``PjitFunction``, with no Python wrapper.

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

from . import cpp_dispatch
from .arguments import CallArgs
from .debugging import flags
from .executable import Executable
from .extended import call_checks, physical

if TYPE_CHECKING:
    from .jit_function import JitFunction

__all__ = ["cpp_wrapper", "eager_fast_path", "fastpath_data", "flags"]

_state = core.trace_state
_eval_trace = core.eval_trace


def cpp_wrapper(fn: JitFunction) -> Callable:
    """Return jit's C++ fast path itself: jaxlib's PjitFunction, missing into ``fn``.

    There is no Python wrapper around it, as in JAX: a cached call runs without a
    Python frame. While the thread traces, or a debugging check or ``disable_jit``
    is on, jaxlib's disable_jit state is True (``cpp_dispatch``) and the C++ side
    calls ``python_path``, the slow path, which binds ``jit_p`` under a trace. A
    deleted Array or an unhashable static raises the C++ side's RuntimeError or
    ValueError, JAX's.
    """
    fn.use_cpp = True
    call_slow = fn.call_slow
    cpp_cache_miss = fn.cpp_cache_miss

    def python_path(*args, **kwargs):
        try:
            return call_slow(args, kwargs)
        except Exception as e:  # an API boundary: the user sees their frames
            filter_exception(e)
            raise

    def cache_miss(*args, **kwargs):
        try:
            if _state.trace is not _eval_trace or flags.slow:
                # The disable_jit state is True while this thread traces, so only a
                # trace made current without set_current_trace gets here: the slow
                # path, remembering nothing.
                return call_slow(args, kwargs), None, False
            return cpp_cache_miss(*args, **kwargs)
        except Exception as e:  # an API boundary: the user sees their frames
            filter_exception(e)
            raise

    register_boundary(python_path.__code__)
    register_boundary(cache_miss.__code__)
    # The PjitFunction's ``__signature__`` is its Python function's: the user's.
    python_path.__wrapped__ = fn.fun  # type: ignore[attr-defined]
    fast = cpp_dispatch.make_fast_function(
        fn.name, python_path, cache_miss, fn.static_argnums, fn.static_argnames
    )
    fn.cpp_fast = fast
    return fast


def eager_fast_path(jitted: Callable) -> Callable | None:
    """Return the C++ callable of ``jitted`` (a ``jit`` result), or None if it has none.

    With the C++ fast path on, that is ``jitted`` itself (a ``PjitFunction``); with
    it off (``cpp_dispatch``), None. Library code tests it to pick its own path.
    """
    fn = getattr(jitted, "_jit", None)
    return getattr(fn, "cpp_fast", None) if getattr(fn, "use_cpp", False) else None


def fastpath_data(call: CallArgs, executable: Executable, result, outs, committed):
    """Return the C++ fast path's record of this call, or None if it cannot take it."""
    if executable.ordered_effects or executable.host_callbacks or executable.float0:
        return None  # tokens and float0 values are handled by ``Executable.run``
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
