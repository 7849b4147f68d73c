"""jit: compile a Python function with XLA (``jax.jit``), and its AOT stages.

The path of a call (design.md, "the path of a jitted call"):

1. *Fast path.* Outside any transformation, the arguments' leaves are looked
   up in a dict keyed by each Array's shared aval and sharding object
   (identities: no hashing of avals), the argument structure and the static
   values. A hit runs the executable directly. Plain positional Arrays skip
   even the pytree flattening.
2. *Miss.* Static arguments are separated (and must be hashable), the leaves
   flattened with tracecore's pytrees and turned into avals (numpy arrays
   canonicalized, Python scalars weakly typed); tracecore traces the function
   into a ClosedJaxpr; ``compile_jaxpr`` prunes, lowers (modjax.lowering) and
   compiles it (``compile_or_get_cached``); the run's leaves are put on the
   device; the fast path learns the new entry.
3. *Under a transformation* (an outer jit, make_jaxpr, grad, vmap...), the
   call binds ``jit_p`` with the traced program: a nested jit is one call
   equation of the outer jaxpr, lowered as a call (not compiled separately).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import logging
import os
import time
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from modjax.lowering import call_lowering, register_lowering
from modjax.tracecore import core
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import ShapedArray, ShapeDtypeStruct
from modjax.tracecore.call import check_call_operands, register_call_rules
from modjax.tracecore.config import enable_x64
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.jaxpr_cache import JaxprCache, clear_jaxpr_caches
from modjax.tracecore.traceback_util import api_boundary, filter_exception, register_boundary
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import (
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun, wrap_init

from . import cpp_dispatch
from .array import ArrayImpl, _canonical_host_value, put_host_value
from .backends import Device
from .compile_cache import log_compiles
from .debugging import disable_jit, explain_cache_misses, flags, outputs_bad, rerun_op_by_op
from .executable import (
    Executable,
    JaxRuntimeError,
    LoweredProgram,
    compile_jaxpr,
    lower_jaxpr,
    raise_if_deleted,
)
from .executable import placement as _placement
from .explain import explain_compile_miss, explain_trace_miss
from .extended import ExtendedArray, call_checks, checked_run, jaxpr_checks, physical
from .sharding import Sharding, SingleDeviceSharding, as_sharding, is_sharding_like
from .spmd import jaxpr_shardings, spmd_target

__all__ = [
    "jit",
    "jit_p",
    "eval_shape",
    "Traced",
    "Lowered",
    "Compiled",
    "clear_caches",
]

logger = logging.getLogger("modjax.runtime.jit")

source_info_util.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

_state = core.trace_state
_eval_trace = core.eval_trace
_cpp_registry = cpp_dispatch.registry
_SCALAR_TYPES = (bool, int, float, complex)

# --- the call primitive ---------------------------------------------------------------------

jit_p = core.Primitive("jit")
jit_p.multiple_results = True


def _jit_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, **_):
    check_call_operands(jit_p, in_avals, jaxpr)
    return jaxpr.out_avals


# Executables of jit equations run eagerly (outside any jit), per jaxpr object: held
# weakly on the jaxpr, so they go with the program (and the closure it came from).
_impl_cache = JaxprCache("jit_impl")


def _jit_impl(*args, jaxpr: ClosedJaxpr, name: str, donated_invars, keep_unused, inline):
    """Run a ``jit`` equation on concrete values: compile its jaxpr (once) and execute it."""
    if disable_jit.option.value:
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
    device, committed = _placement(args)
    avals = tuple(_leaf_aval(x) for x in args)
    executable = _impl_cache.get(
        jaxpr,
        (avals, device, committed, donated_invars, keep_unused),
        lambda: compile_jaxpr(
            jaxpr,
            device,
            name=name,
            donated=donated_invars,
            keep_unused=keep_unused,
            committed=committed,
        ),
    )
    return executable.run(executable.place(args))


def _jit_update_params(params, in_map, out_map, new_jaxpr):
    donated = params["donated_invars"]
    return {
        **params,
        "jaxpr": new_jaxpr,
        "donated_invars": tuple(False if i is None else donated[i] for i in in_map),
    }


jit_p.def_abstract_eval(_jit_abstract_eval)
jit_p.def_impl(_jit_impl)
register_call_rules(jit_p, update_params=_jit_update_params)
register_lowering(jit_p, call_lowering)


# --- arguments -----------------------------------------------------------------------------


def _leaf_aval(x: Any) -> ShapedArray:
    """Return the aval a leaf is traced and compiled with (numpy canonicalized, scalars weak)."""
    if type(x) is ArrayImpl or isinstance(x, core.Tracer | ShapeDtypeStruct | ExtendedArray):
        return x.aval
    return _canonical_host_value(x)[1]


def _check_hashable(value: Any, what: str) -> None:
    try:
        hash(value)
    except TypeError as err:
        raise ValueError(
            f"Non-hashable static arguments are not supported: {what} is a "
            f"{type(value).__name__} ({value!r:.80}), which cannot be hashed ({err}). "
            "Make it hashable (a tuple instead of a list, say) or pass it as a dynamic "
            "argument."
        ) from None


def _normalize_indices(value, what: str) -> tuple[int, ...]:
    if value is None:
        return ()
    if isinstance(value, int):
        return (value,)
    try:
        out = tuple(value)
    except TypeError:
        raise TypeError(f"{what} must be an int or a sequence of ints, got {value!r}") from None
    if not all(isinstance(i, int) for i in out):
        raise TypeError(f"{what} must be an int or a sequence of ints, got {value!r}")
    return out


def _normalize_names(value, what: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    out = tuple(value)
    if not all(isinstance(n, str) for n in out):
        raise TypeError(f"{what} must be a str or a sequence of str, got {value!r}")
    return out


def _infer_nums_and_names(fun, nums, names) -> tuple[tuple[int, ...], tuple[str, ...]]:
    """Complete argnums from argnames and back through ``fun``'s signature, as JAX does."""
    if not nums and not names:
        return nums, names  # nothing to complete: spare a fresh wrapper the signature
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    nums_set = set(nums)
    for name in names:
        if name in positional and positional.index(name) not in nums_set:
            nums_set.add(positional.index(name))
    names_set = list(names)
    for i in nums:
        j = i if i >= 0 else len(positional) + i
        if 0 <= j < len(positional):
            p = params[j]
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.name not in names_set:
                names_set.append(p.name)
    return tuple(sorted(nums_set)), tuple(names_set)


# --- the state of one jitted function -------------------------------------------------------


class _Traced:
    """A traced program of one argument signature (cached per jitted function)."""

    __slots__ = (
        "closed",
        "call_jaxpr",
        "out_tree",
        "donated",
        "in_avals",
        "arg_names",
        "inner_shardings",
    )

    def __init__(self, closed, out_tree, donated, in_avals, arg_names):
        self.closed: ClosedJaxpr = closed
        # Shardings the program holds (sharding constraints): they choose its devices too.
        self.inner_shardings = jaxpr_shardings(closed.jaxpr)
        # The program as jit_p applies it: the consts as leading operands.
        self.call_jaxpr = ClosedJaxpr(convert_constvars_jaxpr(closed.jaxpr), ())
        self.out_tree = out_tree
        self.donated: tuple[bool, ...] = donated
        self.in_avals: tuple[ShapedArray, ...] = in_avals
        self.arg_names = arg_names


def _split_statics(fn: _JitFunction, args: tuple, kwargs: dict):
    """Return ``(statics, dyn_args, dyn_kwargs, static_positions)`` of one call.

    ``statics`` is a tuple of ``(position or name, type, value)``; each value must
    be hashable (ValueError naming the argument otherwise).
    """
    nargs = len(args)
    positions = {i if i >= 0 else i + nargs for i in fn.static_argnums}
    statics: list = []
    for i in sorted(positions):
        if 0 <= i < nargs:
            _check_hashable(args[i], f"static argument {fn.describe_position(i)}")
            statics.append((i, type(args[i]), args[i]))
    dyn_args = tuple(a for i, a in enumerate(args) if i not in positions)
    dyn_kwargs = {}
    for k, v in kwargs.items():
        if k in fn.static_argnames:
            _check_hashable(v, f"static argument '{k}'")
            statics.append((k, type(v), v))
        else:
            dyn_kwargs[k] = v
    return tuple(statics), dyn_args, dyn_kwargs, positions


class _Call:
    """One call's arguments, split and flattened (the slow path's working set)."""

    __slots__ = (
        "args",
        "kwargs",
        "dyn_args",
        "dyn_kwargs",
        "statics",
        "leaves",
        "in_tree",
        "donated",
    )

    def __init__(self, fn: _JitFunction, args: tuple, kwargs: dict):
        self.args = args
        self.kwargs = kwargs
        if fn.static_argnums or fn.static_argnames:
            self.statics, self.dyn_args, self.dyn_kwargs, positions = _split_statics(
                fn, args, kwargs
            )
        else:
            self.statics, self.dyn_args, self.dyn_kwargs, positions = (), args, kwargs, ()
        self.leaves, self.in_tree = tree_flatten((self.dyn_args, self.dyn_kwargs))
        if fn.donate_argnums or fn.donate_argnames:
            # Mark every leaf of a donated argument, in the order tree_flatten visits them.
            nargs = len(args)
            nums = {i if i >= 0 else i + nargs for i in fn.donate_argnums}
            dyn_positions = [i for i in range(nargs) if i not in positions]
            marks = (
                tuple(
                    tree_map(lambda _, d=(i in nums): d, a)
                    for i, a in zip(dyn_positions, self.dyn_args, strict=True)
                ),
                {
                    k: tree_map(lambda _, d=(k in fn.donate_argnames): d, v)
                    for k, v in self.dyn_kwargs.items()
                },
            )
            self.donated = tuple(tree_flatten(marks)[0])
        else:
            self.donated = (False,) * len(self.leaves)

    def bound_function(self, fun: Callable) -> Callable:
        """Return ``fun`` with the static arguments filled in, taking the dynamic ones."""
        if not self.statics:
            return fun
        positional = {k: v for k, _, v in self.statics if isinstance(k, int)}
        named = {k: v for k, _, v in self.statics if isinstance(k, str)}
        nargs = len(self.args)

        def bound(*dyn_args, **dyn_kwargs):
            it = iter(dyn_args)
            full = [positional[i] if i in positional else next(it) for i in range(nargs)]
            return fun(*full, **dyn_kwargs, **named)

        return bound


_all_functions: weakref.WeakSet = weakref.WeakSet()


def clear_caches() -> None:
    """Drop every jitted function's traces and executables, and the eager op caches.

    Counterpart of ``jax.clear_caches``. The compile cache in memory is cleared
    too, and so are the programs derived from jaxprs (JVPs, partial-evaluation
    splits, transposes, batched programs); the persistent cache on disk is kept.
    """
    from . import compile_cache, dispatch

    for fn in list(_all_functions):
        fn.clear_cache()
    clear_jaxpr_caches()
    dispatch.clear_cache()
    cpp_dispatch.clear_cache()
    compile_cache.clear_caches()


enable_x64.add_hook(lambda _value: clear_caches())


class _JitFunction:
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
    ):
        self.fun = fun
        self.in_shardings = in_shardings
        self.out_shardings = out_shardings
        self.name = getattr(fun, "__name__", None) or type(fun).__name__
        self.static_argnums, self.static_argnames = _infer_nums_and_names(
            fun,
            _normalize_indices(static_argnums, "static_argnums"),
            _normalize_names(static_argnames, "static_argnames"),
        )
        self.donate_argnums, self.donate_argnames = _infer_nums_and_names(
            fun,
            _normalize_indices(donate_argnums, "donate_argnums"),
            _normalize_names(donate_argnames, "donate_argnames"),
        )
        overlap = set(self.static_argnums) & set(self.donate_argnums)
        if overlap:
            raise ValueError(
                f"jit({self.name}): arguments {sorted(overlap)} cannot be both static and donated"
            )
        self.keep_unused = bool(keep_unused)
        self.inline = bool(inline)
        self.traces: dict[tuple, _Traced] = {}
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

    def describe_position(self, i: int) -> str:
        try:
            names = list(inspect.signature(self.fun).parameters)
            return f"'{names[i]}' (position {i})"
        except (TypeError, ValueError, IndexError):
            return f"at position {i}"

    # --- tracing ----------------------------------------------------------------------

    def trace(self, call: _Call, in_avals: tuple[ShapedArray, ...]) -> _Traced:
        """Return the traced program for ``call``'s structure and ``in_avals`` (cached)."""
        key = (call.in_tree, in_avals, call.statics, call.donated)
        traced = self.traces.get(key)
        if traced is not None:
            return traced
        static_pos = tuple(k for k, _, _ in call.statics if isinstance(k, int))
        static_names = tuple(k for k, _, _ in call.statics if isinstance(k, str))
        info = debug_info(self.fun, call.args, call.kwargs, static_pos, static_names)
        if explain_cache_misses.value:
            explain_trace_miss(self.name, self.fun, key, self.seen, info.arg_names)
        if len(self.seen) < 4096:
            self.seen.append(key)
        flat_fun, out_tree = flatten_fun(
            wrap_init(call.bound_function(self.fun), info), call.in_tree
        )
        with source_info_util.transform_name(f"jit({self.name})"):
            jaxpr, consts = trace_to_jaxpr(flat_fun, in_avals)
        for check in jaxpr_checks:
            check(jaxpr)
        self.stats["traces"] += 1
        traced = _Traced(
            ClosedJaxpr(jaxpr, consts), out_tree.val, call.donated, in_avals, info.arg_names
        )
        if not any(isinstance(c, core.Tracer) for c in consts):
            self.traces[key] = traced  # a program closing over tracers is not reusable
        return traced

    # --- placement --------------------------------------------------------------------

    def placement(self, call: _Call, in_avals):
        """Return where this call runs (a Device or an SpmdTarget) and whether it is committed.

        jit's ``in_shardings``/``out_shardings``, committed Arrays and the program's
        own sharding constraints decide; without any multi-device sharding the
        call runs on one device as ``placement`` chooses.
        """
        if self.in_shardings is None and self.out_shardings is None:
            inner = self.trace(call, in_avals).inner_shardings
            if not inner:
                return _placement(call.leaves)
        traced = self.trace(call, in_avals)
        ins = _flat_shardings(self.in_shardings, call, "in_shardings")
        outs = None
        if self.out_shardings is not None:
            placeholder = tree_unflatten(traced.out_tree, [0] * traced.out_tree.num_leaves)
            outs = _broadcast_shardings(self.out_shardings, placeholder, "out_shardings")
        target = spmd_target(
            call.leaves, ins, outs, traced.inner_shardings, committed_of=_committed_of
        )
        if target is None:
            return _placement(call.leaves)
        return target, True

    # --- compiling --------------------------------------------------------------------

    def lower(self, traced: _Traced, device: Device) -> LoweredProgram:
        """Prune and lower a traced program for ``device``."""
        return lower_jaxpr(
            traced.closed,
            device,
            name=self.name,
            donated=traced.donated,
            keep_unused=self.keep_unused,
        )

    def executable(
        self,
        call: _Call,
        in_avals,
        device: Device,
        committed: bool,
        program: LoweredProgram | None = None,
    ):
        """Return the Executable for this signature on ``device``, compiling on a miss."""
        key = (call.in_tree, in_avals, call.statics, call.donated, device, committed)
        executable = self.executables.get(key)
        if executable is not None:
            return executable, self.traces.get(key[:4]) or self.trace(call, in_avals)
        start = time.perf_counter()
        was_traced = (call.in_tree, in_avals, call.statics, call.donated) in self.traces
        if was_traced and explain_cache_misses.value:
            placements = [(k[4], k[5]) for k in self.executables if k[:4] == key[:4]]
            if placements:
                explain_compile_miss(self.name, self.fun, device, committed, placements)
        traced = self.trace(call, in_avals)
        traced_at = time.perf_counter()
        if program is None:
            program = self.lower(traced, device)
        executable = program.compile(committed)
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
        if disable_jit.option.value:
            return self.fun(*args, **kwargs)
        call = _Call(self, args, kwargs)
        if _state.trace is not _eval_trace or any(isinstance(x, core.Tracer) for x in call.leaves):
            return self.call_traced(call)
        in_avals = tuple(_leaf_aval(x) for x in call.leaves)
        device, committed = self.placement(call, in_avals)
        executable, traced = self.executable(call, in_avals, device, committed)
        device_leaves = executable.place(call.leaves)
        outs = checked_run(executable, traced.closed, call.leaves, device_leaves)
        if flags.checks:
            kind = outputs_bad(outs)
            if kind is not None:
                rerun_op_by_op(self.name, traced.closed, device_leaves, kind)
        if not self.use_cpp:
            self.learn(call, executable, traced, device_leaves)
        return traced.out_tree.unflatten(outs)

    def cpp_cache_miss(self, *args, **kwargs):
        """The C++ fast path's miss: run the slow path; describe the run for next time."""
        if _state.trace is not _eval_trace:
            return self.call_slow(args, kwargs), None, False
        call = _Call(self, args, kwargs)
        if any(isinstance(x, core.Tracer) for x in call.leaves):
            return self.call_traced(call), None, False
        in_avals = tuple(_leaf_aval(x) for x in call.leaves)
        device, committed = self.placement(call, in_avals)
        executable, traced = self.executable(call, in_avals, device, committed)
        outs = checked_run(executable, traced.closed, call.leaves, executable.place(call.leaves))
        result = traced.out_tree.unflatten(outs)
        return result, self.fastpath_data(call, executable, result, outs, committed), False

    def fastpath_data(self, call: _Call, executable: Executable, result, outs, committed):
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
            [True] * len(call.leaves)
            if kept is None
            else [i in kept for i in range(len(call.leaves))]
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

    def call_traced(self, call: _Call):
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
            )
        return traced.out_tree.unflatten(outs)

    def learn(self, call: _Call, executable: Executable, traced: _Traced, device_leaves) -> None:
        """Add fast-path entries for a call whose leaves need no transfer next time."""
        if executable.ordered_effects or executable.host_callbacks or executable.extended:
            return  # tokens or ExtendedArrays: ``Executable.run`` handles them
        sharding = executable.sharding
        if sharding is None:
            return  # multi-device programs take the C++ fast path only
        if not all(type(x) is not ArrayImpl or x._sharding is sharding for x in call.leaves):
            return
        out = _fast_unflattener(traced.out_tree)
        entry = (executable.call, executable.handlers, out, executable)
        if (
            not call.kwargs
            and not call.statics
            and all(type(x) is ArrayImpl for x in call.args)
            and not self.static_argnums
            and not self.static_argnames
        ):
            key = []
            for x in call.args:
                key.append(id(x.aval))
                key.append(id(x._sharding))
                key.append(x._committed)
            _bounded_insert(self.fast_positional, tuple(key), entry + ((),))
            return
        leaves, cpp_tree = _cpp_registry.flatten((call.dyn_args, call.dyn_kwargs))
        if len(leaves) != len(call.leaves) or any(
            a is not b for a, b in zip(leaves, call.leaves, strict=True)
        ):
            return  # a pytree node jaxlib's registry does not know: no fast path for it
        key = _general_key(cpp_tree, call.statics, leaves)
        if key is None:
            return
        convert = tuple(i for i, x in enumerate(leaves) if type(x) is not ArrayImpl)
        _bounded_insert(self.fast_general, key, entry + (convert,))


def _bounded_insert(table: dict, key, value, limit: int = 4096) -> None:
    if len(table) >= limit:
        table.clear()
    table[key] = value


def _general_key(cpp_tree, statics, leaves) -> tuple | None:
    key = [cpp_tree, statics]
    for x in leaves:
        t = type(x)
        if t is ArrayImpl:
            key.append(id(x.aval))
            key.append(id(x._sharding))
            key.append(x._committed)
        elif t in _SCALAR_TYPES or isinstance(x, np.generic):
            key.append(t)
        elif t is np.ndarray:
            key.append(x.dtype)
            key.append(x.shape)
        else:
            return None
    return tuple(key)


def _fast_unflattener(out_tree):
    """Return None for a single-leaf output, else something with ``.unflatten(outs)``."""
    if out_tree.num_leaves == 1 and out_tree.num_nodes == 1:
        return None
    placeholders = [object() for _ in range(out_tree.num_leaves)]
    leaves, cpp_tree = _cpp_registry.flatten(out_tree.unflatten(placeholders))
    if len(leaves) == len(placeholders) and all(
        a is b for a, b in zip(leaves, placeholders, strict=True)
    ):
        return cpp_tree
    return out_tree


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


# --- the user-facing wrapper ---------------------------------------------------------------


def jit(
    fun: Callable,
    *,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    inline: bool = False,
    in_shardings: Any = None,
    out_shardings: Any = None,
) -> Callable:
    """Return a version of ``fun`` compiled with XLA on first use per signature (``jax.jit``).

    Arguments are pytrees of Arrays, numpy arrays and Python scalars (traced as
    weakly typed values). ``static_argnums``/``static_argnames`` name arguments
    passed to ``fun`` as Python values: they must be hashable and each new value
    compiles anew. ``donate_argnums``/``donate_argnames`` name arguments whose
    buffers the computation may reuse; they are deleted by the call. Unused
    arguments are pruned from the compiled program unless ``keep_unused``.
    Under another transformation the call becomes one ``jit`` equation (or, with
    ``inline=True``, its equations are inlined). The result also offers
    ``.trace``, ``.lower`` and ``.eval_shape`` (ahead-of-time compilation) and
    ``.clear_cache()``. ``in_shardings``/``out_shardings`` are Shardings, or pytree
    prefixes of the positional arguments / of the output with Shardings and None
    (unspecified: committed inputs keep theirs, XLA chooses the rest); with a
    multi-device sharding the program is partitioned over its devices.
    """
    if not callable(fun):
        raise TypeError(f"jit: expected a callable, got {type(fun).__name__}")
    fn = _JitFunction(
        fun,
        static_argnums,
        static_argnames,
        donate_argnums,
        donate_argnames,
        keep_unused,
        inline,
        in_shardings,
        out_shardings,
    )
    if cpp_dispatch.cpp_dispatch.value and cpp_dispatch.available:
        wrapped = _cpp_wrapper(fn)
    else:
        wrapped = _python_wrapper(fn)
    with contextlib.suppress(AttributeError, TypeError):  # callables without a __name__
        functools.update_wrapper(wrapped, fun)
    wrapped.__dict__.pop("_jit", None)
    wrapped._jit = fn
    wrapped.trace = functools.partial(_aot_trace, fn)
    wrapped.lower = functools.partial(_aot_lower, fn)
    wrapped.eval_shape = functools.partial(_jit_eval_shape, fn)
    wrapped.clear_cache = fn.clear_cache
    wrapped._cache_size = lambda: len(fn.executables)
    wrapped._stats = fn.stats
    return wrapped


def _cpp_wrapper(fn: _JitFunction) -> Callable:
    """The fast path in C++: jaxlib's PjitFunction, missing into ``fn.cpp_cache_miss``."""
    fn.use_cpp = True
    fast = cpp_dispatch.make_fast_function(
        fn.name, fn.fun, fn.cpp_cache_miss, fn.static_argnums, fn.static_argnames
    )
    call_slow = fn.call_slow
    has_statics = bool(fn.static_argnums or fn.static_argnames)

    def wrapped(*args, **kwargs):
        try:
            if _state.trace is _eval_trace and not flags.slow:
                try:
                    return fast(*args, **kwargs)
                except (ValueError, RuntimeError):
                    # Say it our way when it is an unhashable static or a deleted Array.
                    if has_statics:
                        _split_statics(fn, args, kwargs)
                    raise_if_deleted(tree_flatten((args, kwargs))[0])
                    raise
            return call_slow(args, kwargs)
        except Exception as e:  # an API boundary: the user sees their frames
            filter_exception(e)
            raise

    register_boundary(wrapped.__code__)
    fn.cpp_fast = fast
    return wrapped


def _python_wrapper(fn: _JitFunction) -> Callable:
    """The fast path in Python: dicts keyed by leaf avals and shardings (by identity)."""
    call_slow = fn.call_slow
    fast_general = fn.fast_general
    has_statics = bool(fn.static_argnums or fn.static_argnames)

    def general(args, kwargs):
        if _state.trace is not _eval_trace or flags.slow:
            return call_slow(args, kwargs)
        if has_statics:
            statics, dyn_args, dyn_kwargs, _ = _split_statics(fn, args, kwargs)
        else:
            statics, dyn_args, dyn_kwargs = (), args, kwargs
        leaves, cpp_tree = _cpp_registry.flatten((dyn_args, dyn_kwargs))
        key = _general_key(cpp_tree, statics, leaves)
        entry = fast_general.get(key) if key is not None else None
        if entry is None:
            return call_slow(args, kwargs)
        execute, handlers, out_tree, executable, convert = entry
        if convert:
            sharding = executable.sharding
            for i in convert:
                value, aval = _canonical_host_value(leaves[i])
                leaves[i] = put_host_value(value, aval, sharding, False)
        try:
            outs = execute(leaves).consume_with_handlers(handlers)
        except JaxRuntimeError:
            raise_if_deleted(leaves)
            raise
        return outs[0] if out_tree is None else out_tree.unflatten(outs)

    if has_statics:

        def wrapped(*args, **kwargs):
            try:
                return general(args, kwargs)
            except Exception as e:  # an API boundary: the user sees their frames
                filter_exception(e)
                raise

        register_boundary(wrapped.__code__)
        return wrapped

    fast_positional = fn.fast_positional

    def wrapped(*args, **kwargs):
        try:
            if not kwargs and _state.trace is _eval_trace and not flags.slow:
                key = []
                for x in args:
                    if type(x) is not ArrayImpl:
                        break
                    key.append(id(x.aval))
                    key.append(id(x._sharding))
                    key.append(x._committed)
                else:
                    entry = fast_positional.get(tuple(key))
                    if entry is not None:
                        try:
                            outs = entry[0](args).consume_with_handlers(entry[1])
                        except JaxRuntimeError:
                            raise_if_deleted(args)
                            raise
                        out_tree = entry[2]
                        return outs[0] if out_tree is None else out_tree.unflatten(outs)
            return general(args, kwargs)
        except Exception as e:  # an API boundary: the user sees their frames
            filter_exception(e)
            raise

    register_boundary(wrapped.__code__)
    return wrapped


# --- ahead of time: trace, lower, compile -----------------------------------------------------


def _committed_of(x) -> Sharding | None:
    """The sharding a leaf insists on: a committed Array's, or a ShapeDtypeStruct's."""
    if type(x) is ArrayImpl:
        return x._sharding if x._committed else None
    if isinstance(x, ShapeDtypeStruct):
        return x.sharding if isinstance(x.sharding, Sharding) else None
    return None


_is_sharding_leaf = is_sharding_like


def _broadcast_shardings(prefix, full, what: str) -> list:
    """Return one sharding (or None) per leaf of ``full``, from the pytree prefix ``prefix``."""
    if _is_sharding_leaf(prefix):
        return [as_sharding(prefix, what)] * len(tree_leaves(full))
    treedef = tree_structure(prefix, is_leaf=_is_sharding_leaf)
    try:
        subtrees = treedef.flatten_up_to(full)
    except ValueError as err:
        raise ValueError(f"jit {what}: {err}") from None
    prefix_leaves = tree_leaves(prefix, is_leaf=_is_sharding_leaf)
    out = []
    for s, sub in zip(prefix_leaves, subtrees, strict=True):
        if not _is_sharding_leaf(s):
            raise TypeError(f"jit {what}: expected Shardings or None, got {s!r}")
        out.extend([as_sharding(s, what)] * len(tree_leaves(sub)))
    return out


def _flat_shardings(in_shardings, call: _Call, what: str) -> list | None:
    """Return jit's ``in_shardings`` per flat argument leaf (keyword arguments: unspecified)."""
    if in_shardings is None:
        return None
    if _is_sharding_leaf(in_shardings):
        return [as_sharding(in_shardings, what)] * len(call.leaves)
    prefix = tuple(in_shardings) if isinstance(in_shardings, list) else in_shardings
    positional = _broadcast_shardings(prefix, tuple(call.dyn_args), what)
    return positional + [None] * (len(call.leaves) - len(positional))


def _spec_placement(leaves) -> tuple[Device, bool]:
    """Choose the device of an AOT compilation: from Arrays, else ShapeDtypeStruct shardings."""
    device, committed = _placement([x for x in leaves if type(x) is ArrayImpl])
    if not committed:
        for x in leaves:
            if isinstance(x, ShapeDtypeStruct) and isinstance(x.sharding, SingleDeviceSharding):
                return x.sharding._device, True
    return device, committed


class Traced:
    """A function traced for given argument types (``jax.stages.Traced``).

    ``jaxpr`` is the ClosedJaxpr; ``out_info`` the output ShapeDtypeStructs;
    ``lower()`` gives the :class:`Lowered` module.
    """

    def __init__(self, fn: _JitFunction, call: _Call, traced: _Traced, device, committed):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._device = device
        self._committed = committed

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._traced.closed

    @property
    def in_avals(self):
        return self._traced.in_avals

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, _shape_structs(self._traced.closed.out_avals))

    def lower(self) -> Lowered:
        """Lower the traced program to StableHLO."""
        return Lowered(self._fn, self._call, self._traced, self._device, self._committed)


class Lowered:
    """A function lowered to a StableHLO module (``jax.stages.Lowered``).

    ``as_text()`` prints the module, ``compiler_ir()`` returns it and
    ``compile()`` gives the :class:`Compiled` program.
    """

    def __init__(self, fn: _JitFunction, call: _Call, traced: _Traced, device, committed):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._device = device
        self._committed = committed
        # Lowered eagerly (as JAX does) so that lowering errors surface here.
        self._program = fn.lower(traced, device)
        self._module = self._program.module

    def as_text(self, debug_info: bool = False) -> str:
        """Return the StableHLO text of the module (``Lowered.as_text``)."""
        return self._module.as_text(debug_info=debug_info)

    def compiler_ir(self, dialect: str = "stablehlo"):
        """Return the MLIR module (``Lowered.compiler_ir``)."""
        if dialect != "stablehlo":
            raise ValueError(f"only the 'stablehlo' dialect is available, not {dialect!r}")
        return self._module.module

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, _shape_structs(self._traced.closed.out_avals))

    def compile(self) -> Compiled:
        """Compile the module with XLA (``Lowered.compile``)."""
        executable, _ = self._fn.executable(
            self._call, self._traced.in_avals, self._device, self._committed, self._program
        )
        return Compiled(self._fn, self._call, self._traced, executable)


class Compiled:
    """A compiled program for fixed argument types (``jax.stages.Compiled``).

    Call it with arguments of exactly those types (a mismatch is a TypeError).
    """

    def __init__(self, fn: _JitFunction, call: _Call, traced: _Traced, executable: Executable):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._executable = executable

    def __call__(self, *args, **kwargs):
        call = _Call(self._fn, args, kwargs)
        if call.in_tree != self._call.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled for {self._call.in_tree}, called with {call.in_tree}"
            )
        if call.statics != self._call.statics:
            raise TypeError("Compiled program called with different static arguments")
        avals = tuple(_leaf_aval(x) for x in call.leaves)
        if avals != self._traced.in_avals:
            names = self._traced.arg_names or ()
            lines = [
                f"Argument '{names[i] if i < len(names) else i}' compiled with "
                f"{want.str_short()} and called with {got.str_short()}"
                for i, (want, got) in enumerate(zip(self._traced.in_avals, avals, strict=True))
                if want != got
            ]
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. The mismatches are:\n" + "\n".join(lines)
            )
        leaves = self._executable.place(call.leaves)
        return self._traced.out_tree.unflatten(self._executable.run(leaves))

    def as_text(self) -> str:
        """Return the optimized HLO text XLA compiled (``Compiled.as_text``)."""
        return self._executable.as_text()

    def cost_analysis(self) -> dict[str, Any]:
        """Return XLA's cost estimate: flops, bytes accessed, ... (``Compiled.cost_analysis``)."""
        return self._executable.cost_analysis()

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, _shape_structs(self._traced.closed.out_avals))


def _prepare_aot(fn: _JitFunction, args, kwargs):
    call = _Call(fn, args, kwargs)
    in_avals = tuple(_leaf_aval(x) for x in call.leaves)
    device, committed = _spec_placement(call.leaves)
    if (
        fn.in_shardings is not None
        or fn.out_shardings is not None
        or any(
            _committed_of(x) is not None and not isinstance(_committed_of(x), SingleDeviceSharding)
            for x in call.leaves
        )
        or fn.trace(call, in_avals).inner_shardings
    ):
        device, committed = fn.placement(call, in_avals)
    return call, in_avals, device, committed


def _aot_trace(fn: _JitFunction, *args, **kwargs) -> Traced:
    """Trace the jitted function for these arguments (values or ShapeDtypeStructs)."""
    call, in_avals, device, committed = _prepare_aot(fn, args, kwargs)
    return Traced(fn, call, fn.trace(call, in_avals), device, committed)


def _aot_lower(fn: _JitFunction, *args, **kwargs) -> Lowered:
    """Trace and lower the jitted function for these arguments (values or ShapeDtypeStructs)."""
    return _aot_trace(fn, *args, **kwargs).lower()


def _shape_structs(avals) -> list[ShapeDtypeStruct]:
    return [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type) for a in avals]


def _jit_eval_shape(fn: _JitFunction, *args, **kwargs):
    """Return the output ShapeDtypeStructs of the jitted function for these arguments."""
    call, in_avals, _, _ = _prepare_aot(fn, args, kwargs)
    traced = fn.trace(call, in_avals)
    return tree_unflatten(traced.out_tree, _shape_structs(traced.closed.out_avals))


@api_boundary
def eval_shape(fun: Callable, *args, **kwargs):
    """Return the shapes and dtypes ``fun`` would produce, without running it (``jax.eval_shape``).

    Arguments may be arrays, scalars or ShapeDtypeStructs (pytrees of them); the
    result is a pytree of ShapeDtypeStruct.
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    info = debug_info(fun, args, kwargs)
    flat_fun, out_tree = flatten_fun(wrap_init(fun, info), in_tree)
    jaxpr, _ = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in leaves])
    return tree_unflatten(out_tree.val, _shape_structs(jaxpr.out_avals))
