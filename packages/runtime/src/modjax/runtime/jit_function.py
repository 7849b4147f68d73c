"""The state of one jitted function: its traces, executables and slow path.

:class:`JitFunction` is everything one ``jit(f)`` knows: its options, the
programs traced per argument signature, the executables compiled per signature
and placement, and the slow path of a call (split and flatten the arguments,
trace, lower and compile on a miss, run, and teach the fast path). The fast
paths themselves live in ``fast_path_cpp`` and ``fast_path_python``.
"""

from __future__ import annotations

import logging
import os
import time
import weakref
from typing import Any

from modjax.tracecore import core
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.config import config, enable_x64
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.jaxpr_cache import clear_jaxpr_caches
from modjax.tracecore.monitoring import timed
from modjax.tracecore.options import no_tracing
from modjax.tracecore.sharding_types import context_mesh_sharding
from modjax.tracecore.state import check_no_ref_outputs
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun, infer_nums_and_names, wrap_init

from . import cpp_dispatch, refs
from .arguments import (
    CallArgs,
    broadcast_shardings,
    committed_of,
    flat_shardings,
    normalize_indices,
    normalize_names,
    validate_argnames,
    validate_argnums,
)
from .backends import Device
from .compile_cache import log_compiles
from .debugging import disable_jit, explain_cache_misses, flags, outputs_bad, rerun_op_by_op
from .executable import (
    Executable,
    LoweredProgram,
    lower_jaxpr,
    no_execution,
    one_device_placement,
)
from .executable import placement as _placement
from .explain import explain_compile_miss, explain_trace_miss
from .extended import checked_run, jaxpr_checks
from .fast_path_cpp import fastpath_data
from .fast_path_python import learn
from .jit_primitive import jit_p
from .spmd import (
    SpmdTarget,
    jaxpr_shardings,
    one_device_shardings,
    spmd_target,
    type_out_shardings,
)

__all__ = ["JitFunction", "TracedProgram", "clear_caches"]

logger = logging.getLogger("modjax.runtime.jit")

source_info_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

_state = core.trace_state
_eval_trace = core.eval_trace


class TracedProgram:
    """A traced program of one argument signature (cached per jitted function)."""

    __slots__ = (
        "closed",
        "call_jaxpr",
        "out_tree",
        "donated",
        "in_avals",
        "arg_names",
        "inner_shardings",
        "type_out_shardings",
        "ref_program",
        "one_device_shardings",
    )

    def __init__(self, closed, out_tree, donated, in_avals, arg_names):
        self.closed: ClosedJaxpr = closed
        # Shardings the program holds (sharding constraints): they choose its devices too.
        self.inner_shardings = jaxpr_shardings(closed.jaxpr)
        self.type_out_shardings = type_out_shardings(closed.out_avals)
        # The program as jit_p applies it: the consts as leading operands.
        self.call_jaxpr = ClosedJaxpr(convert_constvars_jaxpr(closed.jaxpr), ())
        self.out_tree = out_tree
        self.donated: tuple[bool, ...] = donated
        self.in_avals: tuple[ShapedArray, ...] = in_avals
        self.arg_names = arg_names
        # Programs with references: the discharged program, jitted (refs.call_with_refs).
        self.ref_program = None
        # On one device, jit's flat (in, out) shardings when one names another memory
        # kind (``spmd.one_device_shardings``): set by ``placement``, read by ``lower``.
        self.one_device_shardings = None


_all_functions: weakref.WeakSet = weakref.WeakSet()


def clear_caches() -> None:
    """Drop every jitted function's traces and executables, and the eager op caches.

    Counterpart of ``jax.clear_caches``. The compile cache in memory is cleared
    too, and so are the programs derived from jaxprs (JVPs, partial-evaluation
    splits, transposes, batched programs); the persistent cache on disk is kept.
    """
    from . import compile_cache

    _forget_traces()
    compile_cache.clear_caches()


def _forget_traces() -> None:
    """Drop every traced program and fast path, keeping the compiled executables."""
    from . import dispatch

    for fn in list(_all_functions):
        fn.clear_cache()
    clear_jaxpr_caches()
    dispatch.clear_cache()
    cpp_dispatch.clear_cache()


# A switch of x64 changes what tracing produces, so traces go; the executables stay,
# since the compile cache is keyed by the module's text, in which x64 shows as its
# dtypes (a program traced again after switching back compiles nothing).
enable_x64.add_hook(lambda _value: _forget_traces())


def forget_fast_paths() -> None:
    """Drop the fast-path entries of every jitted function and eager op, keeping programs.

    The fast paths (C++ and Python) key on the arguments alone; an option of the
    trace context (``config.trace_context()``) changes which program a call
    needs, so their entries go, and the next call finds its program in the
    traces and executables, which are keyed on the context too.
    """
    from . import dispatch

    for fn in list(_all_functions):
        fn.fast_positional.clear()
        fn.fast_general.clear()
        if fn.cpp_fast is not None:
            fn.cpp_fast._clear_cache()
    cpp_dispatch.clear_cache()
    dispatch.forget_fast_paths()


config.on_trace_context_change(forget_fast_paths)
# Fast paths run executables without Executable.run, which checks no_execution.
no_execution.add_hook(lambda _value: forget_fast_paths())


def _checked_nums_and_names(fun, nums, names, kind: str):
    """Check ``fun``'s ``{kind}_argnums``/``argnames`` as JAX does; complete each from the other.

    As in JAX, when both are given neither is completed (flax's ``nn.jit`` names a keyword
    of its wrapped method that is a position of its own wrapper's signature).
    """
    both_given = nums is not None and names is not None
    nums = normalize_indices(nums, f"{kind}_argnums")
    names = normalize_names(names, f"{kind}_argnames")
    validate_argnums(fun, nums, f"{kind}_argnums")
    validate_argnames(fun, names, f"{kind}_argnames")
    return (nums, names) if both_given else infer_nums_and_names(fun, nums, names)


class JitFunction:
    """Everything one ``jit(f)`` knows: options, traces, executables and the fast tables."""

    __slots__ = (
        "fun",
        "name",
        "static_argnums",
        "static_argnames",
        "donate_argnums",
        "donate_argnames",
        "keep_unused",
        "inline",
        "traces",
        "executables",
        "fast_positional",
        "fast_general",
        "stats",
        "last_signature",
        "use_cpp",
        "cpp_fast",
        "in_shardings",
        "out_shardings",
        "compiler_options",
        "seen",
        "__weakref__",
    )

    def __init__(
        self,
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        inline,
        in_shardings=None,
        out_shardings=None,
        compiler_options=None,
    ):
        self.fun = fun
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.compiler_options = dict(compiler_options) if compiler_options else None
        self.name = getattr(fun, "__name__", None) or type(fun).__name__
        self.static_argnums, self.static_argnames = _checked_nums_and_names(
            fun, static_argnums, static_argnames, "static"
        )
        self.donate_argnums, self.donate_argnames = _checked_nums_and_names(
            fun, donate_argnums, donate_argnames, "donate"
        )
        if both := set(self.static_argnames) & set(self.donate_argnames):
            raise ValueError(
                "static_argnames and donate_argnames cannot intersect. Argument names "
                f"{both} appear in both static_argnames and donate_argnames"
            )
        if set(self.static_argnums) & set(self.donate_argnums):
            raise ValueError(
                f"`static_argnums` {sorted(set(self.static_argnums))} and "
                f"`donate_argnums` {sorted(set(self.donate_argnums))} cannot intersect."
            )
        self.keep_unused = bool(keep_unused)
        self.inline = bool(inline)
        self.traces: dict[tuple, TracedProgram] = {}
        self.executables: dict[tuple, Executable] = {}
        self.fast_positional: dict[tuple, tuple] = {}
        self.fast_general: dict[tuple, tuple] = {}
        self.stats = {"traces": 0, "compiles": 0}
        self.last_signature = None
        self.use_cpp = False
        self.cpp_fast = None
        self.seen: list = []  # every trace key so far, for explain_cache_misses
        _all_functions.add(self)

    def clear_cache(self) -> None:
        """Forget this function's traces, executables and fast-path entries."""
        self.traces.clear()
        self.executables.clear()
        self.fast_positional.clear()
        self.fast_general.clear()
        if self.cpp_fast is not None:
            self.cpp_fast._clear_cache()

    # --- tracing ----------------------------------------------------------------------

    def trace(self, call: CallArgs, in_avals: tuple[ShapedArray, ...]) -> TracedProgram:
        """Return the traced program for ``call``'s structure and ``in_avals`` (cached)."""
        key = (call.in_tree, in_avals, call.statics, call.donated, config.trace_context())
        traced = self.traces.get(key)
        if traced is not None:
            return traced
        static_pos = tuple(k for k, _, _ in call.statics if isinstance(k, int))
        static_names = tuple(k for k, _, _ in call.statics if isinstance(k, str))
        info = debug_info(self.fun, call.args, call.kwargs, static_pos, static_names)
        if no_tracing.value:
            where = f" at {info.func_src_info}" if info.func_src_info else ""
            raise RuntimeError(
                f"re-tracing function {info.func_name}{where} for `jit`, but 'no_tracing' is set"
            )
        if explain_cache_misses.value:
            explain_trace_miss(self.name, self.fun, key, self.seen, info.arg_names)
        if len(self.seen) < 4096:
            self.seen.append(key)
        flat_fun, out_tree = flatten_fun(
            wrap_init(call.bound_function(self.fun), info), call.in_tree
        )
        with (
            source_info_util.scope_name(f"jit({self.name})"),
            timed("/jax/core/compile/jaxpr_trace_duration", info.func_name),
        ):
            jaxpr, consts = trace_to_jaxpr(flat_fun, in_avals)
        for check in jaxpr_checks:
            check(jaxpr)
        check_no_ref_outputs(jaxpr, info, "jit", out_tree.val)
        self.stats["traces"] += 1
        traced = TracedProgram(
            ClosedJaxpr(jaxpr, consts), out_tree.val, call.donated, in_avals, info.arg_names
        )
        if not any(isinstance(c, core.Tracer) for c in consts):
            self.traces[key] = traced  # a program closing over tracers is not reusable
        return traced

    # --- placement --------------------------------------------------------------------

    def placement(self, call: CallArgs, in_avals):
        """Return where this call runs (a Device or an SpmdTarget) and whether it is committed.

        jit's ``in_shardings``/``out_shardings``, committed Arrays and the program's
        own sharding constraints decide; without any multi-device sharding the
        call runs on one device as ``placement`` chooses.
        """
        if self.in_shardings is None and self.out_shardings is None:
            traced = self.trace(call, in_avals)
            if not traced.inner_shardings and traced.type_out_shardings is None:
                device, committed = _placement(call.leaves)
                context = context_mesh_sharding.value
                if isinstance(device, SpmdTarget) and device.context is context:
                    # On the current mesh for want of committed arguments: results
                    # with no type are typed on it, replicated, as JAX's are.
                    typed = type_out_shardings(traced.closed.out_avals, context)
                    if typed is not None:
                        device = device.with_outputs(typed)
                return device, committed
        traced = self.trace(call, in_avals)
        ins = flat_shardings(self.in_shardings, call, "in_shardings")
        outs: Any = traced.type_out_shardings  # results typed over explicit mesh axes
        context = context_mesh_sharding.value
        if (
            outs is not None
            and context is not None
            and self.in_shardings is None
            and all(committed_of(x) is None for x in call.leaves)
        ):
            outs = type_out_shardings(traced.closed.out_avals, context)
        if self.out_shardings is not None:
            placeholder = tree_unflatten(traced.out_tree, [0] * traced.out_tree.num_leaves)
            outs = broadcast_shardings(self.out_shardings, placeholder, "out_shardings")
        target = spmd_target(
            call.leaves, ins, outs, traced.inner_shardings, committed_of=committed_of
        )
        if target is None:
            traced.one_device_shardings = one_device_shardings(ins, outs)
            return one_device_placement(call.leaves, traced.inner_shardings, ins, outs)
        return target, True

    # --- compiling --------------------------------------------------------------------

    def lower(self, traced: TracedProgram, device: Device) -> LoweredProgram:
        """Prune and lower a traced program for ``device``."""
        return lower_jaxpr(
            traced.closed,
            device,
            name=self.name,
            donated=traced.donated,
            keep_unused=self.keep_unused,
            one_device_shardings=None
            if isinstance(device, SpmdTarget)
            else traced.one_device_shardings,
        )

    def executable(
        self,
        call: CallArgs,
        in_avals,
        device: Device,
        committed: bool,
        program: LoweredProgram | None = None,
    ):
        """Return the Executable for this signature on ``device``, compiling on a miss."""
        traced_key = (call.in_tree, in_avals, call.statics, call.donated, config.trace_context())
        key = (*traced_key, device, committed)
        executable = self.executables.get(key)
        if executable is not None:
            return executable, self.traces.get(traced_key) or self.trace(call, in_avals)
        start = time.perf_counter()
        was_traced = traced_key in self.traces
        if was_traced and explain_cache_misses.value:
            placements = [(k[5], k[6]) for k in self.executables if k[:5] == traced_key]
            if placements:
                explain_compile_miss(self.name, self.fun, device, committed, placements)
        traced = self.trace(call, in_avals)
        traced_at = time.perf_counter()
        if program is None:
            program = self.lower(traced, device)
        executable = program.compile(committed, compiler_options=self.compiler_options)
        self.stats["compiles"] += 1
        self.executables[key] = executable
        signature = (traced.arg_names, in_avals, call.statics, call.in_tree, device)
        if log_compiles.value:
            trace_time = (
                "traced earlier" if was_traced else f"trace {(traced_at - start) * 1e3:.1f} ms"
            )
            logger.warning(
                "Compiling jit(%s) (cause: %s): %s, lower + compile %.1f ms%s",
                self.name,
                _compile_cause(self.last_signature, signature),
                trace_time,
                executable.compile_seconds * 1e3,
                {
                    "memory": " (from the compile cache in memory)",
                    "disk": " (from the persistent compilation cache)",
                }.get(executable.compile_source, ""),
            )
        self.last_signature = signature
        return executable, traced

    # --- calling ----------------------------------------------------------------------

    def call_slow(self, args: tuple, kwargs: dict):
        """Call on the slow path: split, flatten, trace/compile if needed, run, learn."""
        if disable_jit.option.value:  # type: ignore[attr-defined]
            return self.fun(*args, **kwargs)
        call = CallArgs(self, args, kwargs)
        if _state.trace is not _eval_trace or any(isinstance(x, core.Tracer) for x in call.leaves):
            return self.call_traced(call)
        in_avals = call.avals(self.fun)
        if refs.takes_refs(self, call, in_avals):
            return refs.call_with_refs(self, call, in_avals)
        device, committed = self.placement(call, in_avals)
        executable, traced = self.executable(call, in_avals, device, committed)
        device_leaves = executable.place(call.leaves)
        outs = checked_run(executable, traced.closed, call.leaves, device_leaves)
        if flags.checks:
            kind = outputs_bad(outs)
            if kind is not None:
                rerun_op_by_op(self.name, traced.closed, device_leaves, kind)
        if not self.use_cpp:
            learn(self, call, executable, traced, device_leaves)
        return traced.out_tree.unflatten(outs)

    def cpp_cache_miss(self, *args, **kwargs):
        """The C++ fast path's miss: run the slow path; describe the run for next time."""
        if _state.trace is not _eval_trace:
            return self.call_slow(args, kwargs), None, False
        call = CallArgs(self, args, kwargs)
        if any(isinstance(x, core.Tracer) for x in call.leaves):
            return self.call_traced(call), None, False
        in_avals = call.avals(self.fun)
        if refs.takes_refs(self, call, in_avals):
            return refs.call_with_refs(self, call, in_avals), None, False
        device, committed = self.placement(call, in_avals)
        executable, traced = self.executable(call, in_avals, device, committed)
        outs = checked_run(executable, traced.closed, call.leaves, executable.place(call.leaves))
        result = traced.out_tree.unflatten(outs)
        return result, fastpath_data(call, executable, result, outs, committed), False

    def call_traced(self, call: CallArgs):
        """Apply the function under the current transformation: bind ``jit_p`` (or inline)."""
        in_avals = tuple(core.to_aval(x) for x in call.leaves)
        traced = self.trace(call, in_avals)
        closed = traced.closed
        if self.inline:
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *call.leaves)
        else:
            outs = jit_p.bind(
                *closed.consts,
                *call.leaves,
                jaxpr=traced.call_jaxpr,
                name=self.name,
                donated_invars=(False,) * len(closed.consts) + traced.donated,
                keep_unused=self.keep_unused,
                inline=self.inline,
                **self.equation_shardings(call, traced, len(closed.consts)),
            )
        return traced.out_tree.unflatten(outs)

    def equation_shardings(self, call: CallArgs, traced: TracedProgram, n_consts: int) -> dict:
        """The ``in_shardings``/``out_shardings`` params of this call's ``jit`` equation.

        As in JAX, the equation carries jit's shardings (one entry per operand
        and result, None where unspecified; consts unspecified), so an outer
        program honours them; without any, the params are left out.
        """
        if self.in_shardings is None and self.out_shardings is None:
            return {}
        ins = flat_shardings(self.in_shardings, call, "in_shardings") or [None] * len(call.leaves)
        n_out = traced.out_tree.num_leaves
        outs: list = [None] * n_out
        if self.out_shardings is not None:
            placeholder = tree_unflatten(traced.out_tree, [0] * n_out)
            outs = list(broadcast_shardings(self.out_shardings, placeholder, "out_shardings"))
        return {
            "in_shardings": (None,) * n_consts + tuple(ins),
            "out_shardings": tuple(outs),
        }


def _compile_cause(previous, current) -> str:
    """Say what changed between two compiled signatures of one function, for the log."""
    if previous is None:
        return "first call"
    old_names, old_avals, old_statics, old_tree, old_device = previous
    names, avals, statics, tree, device = current
    if old_tree != tree:
        return f"the argument structure changed from {old_tree} to {tree}"
    changes = []
    for i, (old, new) in enumerate(zip(old_avals, avals, strict=True)):
        if old == new:
            continue
        name = names[i] if names and i < len(names) else f"flat argument {i}"
        if old.shape != new.shape:
            changes.append(
                f"argument {name} changed shape from {old.str_short()} to {new.str_short()}"
            )
        elif old.dtype != new.dtype:
            changes.append(f"argument {name} changed dtype from {old.dtype} to {new.dtype}")
        else:
            changes.append(
                f"argument {name} changed weak type from {old.weak_type} to {new.weak_type}"
            )
    old_static = {k: v for k, _, v in old_statics}
    for k, _, v in statics:
        if k not in old_static or old_static[k] != v or type(old_static[k]) is not type(v):
            label = f"'{k}'" if isinstance(k, str) else f"at position {k}"
            changes.append(
                f"static argument {label} changed from {old_static.get(k, '<absent>')!r} to {v!r}"
            )
    if old_device != device:
        changes.append(f"the device changed from {old_device} to {device}")
    return "; ".join(changes) or "a new combination of earlier signatures"
