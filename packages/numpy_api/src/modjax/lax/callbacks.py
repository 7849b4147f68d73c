"""Host callbacks: Python called from traced and compiled programs (JAX's callback.py).

Three primitives, each with an effect, an eager implementation (the Python
callable runs at once on Arrays), JVP and batching rules and a lowering through
jaxlib's CPU host-callback custom call (``modjax.lowering.emit_host_callback``):

* ``debug_callback``: no results; effect ``Debug`` or, with ``ordered=True``,
  ``OrderedDebug``. Under ``grad`` it sees primal values; under ``vmap`` it runs
  once per batch element. ``debug_callback``, ``debug_print``, ``debug_log`` and
  ``breakpoint`` are built on it.
* ``pure_callback``: results of declared types, no effect (DCE may drop it, and
  XLA may run it any number of times). Not differentiable (wrap it in
  ``custom_jvp``); under ``vmap`` it follows ``vmap_method``.
* ``io_callback``: results of declared types, effect ``IO`` or ``OrderedIO``.

The user's callable receives modjax Arrays (as JAX's receive jax Arrays), both
eagerly and under ``jit``; pytrees of arguments and results are flattened around
the primitive.
"""

from __future__ import annotations

import copy
import functools
import logging
import os
import pdb
import string
import sys
import traceback
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.autodiff import jvp_rules
from modjax.batching import batching_rules
from modjax.lowering import emit_host_callback, register_lowering
from modjax.lowering.host_callbacks import check_callback_results
from modjax.runtime import device_put
from modjax.runtime.array import ArrayImpl
from modjax.runtime.executable import JaxRuntimeError
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.effects import Effect, effects_by_name
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

__all__ = [
    "DebugEffect",
    "OrderedDebugEffect",
    "IOEffect",
    "OrderedIOEffect",
    "debug_callback_p",
    "pure_callback_p",
    "io_callback_p",
    "debug_callback",
    "debug_print",
    "debug_log",
    "breakpoint",
    "pure_callback",
    "io_callback",
]

source_info_util.register_exclusion(os.path.abspath(__file__))

DebugEffect = Effect("Debug")
OrderedDebugEffect = Effect("OrderedDebug", ordered=True)
IOEffect = Effect("IO")
OrderedIOEffect = Effect("OrderedIO", ordered=True)

logger = logging.getLogger("modjax.debug")

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized")  # fmt: skip


# --- calling the user's function with flat arrays ------------------------------------------------


def _as_array(x):
    """Return a host or device value as a modjax Array (what callbacks receive)."""
    return x if type(x) is ArrayImpl else device_put(np.asarray(x))


class FlatCallback:
    """The user's callable, taking and returning flat lists of arrays (JAX's ``_FlatCallback``).

    ``static_args`` are the leaves that are not arrays (strings, None...), kept
    out of the program and merged back, by position, before the call.
    """

    __slots__ = ("callback", "in_tree", "static_args", "result_tree")

    def __init__(self, callback: Callable, in_tree, static_args=(), result_tree=None):
        self.callback = callback
        self.in_tree = in_tree
        self.static_args = tuple(static_args)
        self.result_tree = result_tree

    def __call__(self, *flat):
        statics = dict(self.static_args)
        dynamic = iter(_as_array(x) for x in flat)
        n = len(statics) + len(flat)
        leaves = [statics[i] if i in statics else next(dynamic) for i in range(n)]
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        out = self.callback(*args, **kwargs)
        if self.result_tree is None:
            return []
        if tree_structure(out) != self.result_tree:
            raise TypeError(
                f"Callback {_name(self.callback)} returned a result with structure "
                f"{tree_structure(out)}, but result_shape_dtypes declares {self.result_tree}"
            )
        return tree_leaves(out)

    def __repr__(self) -> str:
        return f"FlatCallback({_name(self.callback)})"


def _name(fn) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _split_args(args: tuple, kwargs: dict):
    """Flatten ``(args, kwargs)``; return the tree, the array leaves and the static ones."""
    leaves, in_tree = tree_flatten((args, kwargs))
    dynamic, static = [], []
    for i, leaf in enumerate(leaves):
        try:
            to_aval(leaf)
        except TypeError:
            static.append((i, leaf))
        else:
            dynamic.append(leaf)
    return in_tree, dynamic, tuple(static)


def _result_avals(result_shape_dtypes):
    leaves, tree = tree_flatten(result_shape_dtypes)
    avals = []
    for leaf in leaves:
        if not hasattr(leaf, "shape") or not hasattr(leaf, "dtype"):
            raise TypeError(
                "result_shape_dtypes must be a pytree of values with a shape and a dtype "
                f"(jax.ShapeDtypeStruct), got a leaf of type {type(leaf).__name__}"
            )
        avals.append(ShapedArray(tuple(leaf.shape), np.dtype(leaf.dtype)))
    return tuple(avals), tree


def _run_with_results(callback: FlatCallback, args, result_avals) -> list:
    """Run ``callback`` eagerly and return its checked results as Arrays.

    As in JAX, where an eager call runs a compiled program, a callback that raises
    (or returns results of the wrong structure, shapes or dtypes) surfaces as
    jaxlib's ``JaxRuntimeError``, the original exception chained to it.
    """
    try:
        outs = check_callback_results(callback(*args), result_avals)
    except Exception as e:
        raise JaxRuntimeError(
            "INTERNAL: CpuCallback error calling callback: "
            + "".join(traceback.format_exception(e))
        ) from e
    return [device_put(x) for x in outs]


def _host(callback: FlatCallback, has_results: bool) -> Callable:
    """The callable a compiled program calls: numpy arrays in, numpy arrays out."""

    def host(*arrays):
        outs = callback(*arrays)
        return [np.asarray(x) for x in outs] if has_results else ()

    return host


# --- debug_callback ---------------------------------------------------------------------------

debug_callback_p = Primitive("debug_callback")
debug_callback_p.multiple_results = True
debug_callback_p.def_abstract_eval(lambda *avals, callback, effect: [])
debug_callback_p.def_effects(lambda callback, effect: (effect,))


def _debug_callback_impl(*args, callback, effect):
    try:
        callback(*args)
    except BaseException:
        logger.exception("modjax.debug.callback failed")
        raise
    return []


def _debug_callback_jvp(primals, tangents, **params):
    return debug_callback_p.bind(*primals, **params), []


def _unrolled_batching(primitive, args, dims, **params):
    """Bind ``primitive`` once per batch element, in order (JAX's ``debug_batching_rule``)."""
    from .indexing import index_in_dim

    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    for i in range(size):
        primitive.bind(
            *[
                x if d is None else index_in_dim(x, i, axis=d, keepdims=False)
                for x, d in zip(args, dims, strict=True)
            ],
            **params,
        )
    return [], []


def _debug_callback_lowering(ctx, *args, callback, effect):
    ordered = effect if effect.ordered else None
    emit_host_callback(
        ctx, _host(callback, False), args, [], has_side_effect=True, ordered_effect=ordered
    )
    return []


debug_callback_p.def_impl(_debug_callback_impl)
jvp_rules[debug_callback_p] = _debug_callback_jvp
batching_rules[debug_callback_p] = functools.partial(_unrolled_batching, debug_callback_p)
register_lowering(debug_callback_p, _debug_callback_lowering)
# The effect prints by name (effect=Debug); read it back as the effect, not its name.
register_param_parser(debug_callback_p, "effect", lambda text: effects_by_name[text.strip()])


def debug_callback(
    callback: Callable[..., Any] | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    **kwargs,
):
    """Call ``callback(*args, **kwargs)`` on the host when the program runs (jax.debug.callback).

    Works eagerly and under jit, vmap (once per element), grad (on primal
    values) and control flow; the callback receives Arrays and its result is
    ignored. ``ordered=True`` keeps the order of ordered callbacks across the
    program and across calls. ``debug_callback(ordered=...)`` without a callback
    returns a decorator-like function taking the callback.
    """
    if callback is None:
        if args or kwargs:
            raise TypeError(
                "debug_callback: the two-call form takes no arguments in its first call"
            )
        return functools.partial(debug_callback, ordered=ordered, partitioned=partitioned)
    if not callable(callback):
        raise TypeError(f"debug_callback: expected a callable, got {type(callback).__name__}")
    if partitioned:
        raise NotImplementedError(
            "debug.callback/debug.print(partitioned=True): per-shard callbacks outside shard_map"
        )
    in_tree, dynamic, static = _split_args(args, kwargs)
    flat = FlatCallback(callback, in_tree, static)
    effect = OrderedDebugEffect if ordered else DebugEffect
    debug_callback_p.bind(*dynamic, callback=flat, effect=effect)


# --- debug.print, debug.log ------------------------------------------------------------------


class _FormatChecker(string.Formatter):
    """Check a format string against its arguments without formatting them (as JAX does)."""

    def format_field(self, value, format_spec):
        return ""

    def check_unused_args(self, used_args, args, kwargs):
        unused = [a for i, a in enumerate(args) if i not in used_args]
        unused_kwargs = [k for k in kwargs if k not in used_args]
        if unused:
            raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
        if unused_kwargs:
            raise ValueError(
                f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be "
                'passing an f-string (i.e, `f"{x}"`) into `jax.debug.print` and instead should '
                "pass in a regular string."
            )


_checker = _FormatChecker()


class _Printer:
    """Format and write one ``debug.print`` when it runs (JAX's ``_format_print_callback``)."""

    __slots__ = ("fmt", "printoptions", "has_placeholders", "record")

    def __init__(self, fmt, printoptions, has_placeholders, record):
        self.fmt = fmt
        self.printoptions = printoptions
        self.has_placeholders = has_placeholders
        self.record = record

    def __call__(self, *args, **kwargs):
        if self.has_placeholders:
            with np.printoptions(**self.printoptions):
                message = self.fmt.format(*args, **kwargs)
        else:
            message = " ".join((self.fmt, *(str(a) for a in args)))
        if self.record is not None:
            record = copy.copy(self.record)
            record.msg = message
            logger.handle(record)
        else:
            sys.stdout.write(message + "\n")

    def __repr__(self) -> str:
        return f"print({self.fmt!r})"


def _log_record(level: int) -> logging.LogRecord:
    frame = source_info_util.user_frame()
    file_name, line = ("(unknown file)", 0) if frame is None else (frame.file_name, frame.line)
    return logger.makeRecord(logger.name, level, file_name, line, "", (), None)


def debug_print(
    fmt: str | None = None,
    *args,
    ordered: bool = False,
    partitioned: bool = False,
    skip_format_check: bool = False,
    _use_logging: bool = False,
    **kwargs,
):
    """Print ``fmt.format(*args, **kwargs)`` when the program runs (jax.debug.print).

    Formatting is delayed until the values exist, so write
    ``debug.print("x={x}", x=x)``, not an f-string. Arrays format as they print
    (numpy's print options at the time of the call apply); without placeholders
    the arguments are appended after ``fmt``. Unused arguments raise ValueError.
    ``debug.print(ordered=True)`` without a format returns the printing function.
    """

    def print_now(fmt: str, *c_args, **c_kwargs):
        if not skip_format_check:
            _checker.format(fmt, *c_args, **c_kwargs)
        has_placeholders = False
        if fmt:
            _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
            has_placeholders = field_name is not None
        record = _log_record(logging.INFO) if _use_logging else None
        printer = _Printer(fmt, np.get_printoptions(), has_placeholders, record)
        debug_callback(printer, *c_args, ordered=ordered, partitioned=partitioned, **c_kwargs)

    if fmt is not None:
        print_now(fmt, *args, **kwargs)
        return None
    if args or kwargs:
        raise TypeError(
            f"debug_print received unexpected arguments in the two-call form: {args=} {kwargs=}"
        )
    return print_now


debug_log = functools.partial(debug_print, _use_logging=True)
debug_log.__doc__ = (
    "Log ``fmt.format(*args, **kwargs)`` at INFO on logger ``modjax.debug`` when the "
    "program runs, with the caller's file and line (jax.debug.log)."
)


# --- debug.breakpoint ----------------------------------------------------------------------------


def _interactive() -> bool:
    stdin = sys.stdin
    try:
        return stdin is not None and stdin.isatty()
    except (AttributeError, ValueError):
        return False


class _Breakpoint:
    """Open a pdb prompt over the captured locals of the caller's frame, when it runs."""

    __slots__ = ("names", "where")

    def __init__(self, names, where):
        self.names = tuple(names)
        self.where = where

    def __call__(self, statics, *values):
        if not _interactive():
            return  # no terminal to talk to: skip, as a batch job must not hang
        namespace = dict(statics)
        namespace.update(zip(self.names, values, strict=True))
        sys.stdout.write(f"Entering modjax.debug.breakpoint at {self.where}\n")
        pdb.Pdb(stdin=sys.stdin, stdout=sys.stdout).run("pass", {}, namespace)

    def __repr__(self) -> str:
        return f"breakpoint({self.where})"


def breakpoint(  # noqa: A001  (jax.debug.breakpoint)
    *,
    backend: str | None = None,
    filter_frames: bool = True,
    num_frames: int | None = None,
    ordered: bool = False,
    token=None,
    **kwargs,
):
    """Stop at a pdb prompt on the host when the program runs (jax.debug.breakpoint).

    The prompt sees the calling frame's local variables, arrays with their
    values at that point of the run. Without a terminal on stdin (a batch job,
    a test run) it does nothing. ``backend`` may only be None or ``"pdb"``.
    """
    if backend not in (None, "pdb", "cli"):
        raise ValueError(f"debug.breakpoint: unknown backend {backend!r}; modjax has 'pdb'")
    if token is not None:
        raise NotImplementedError("debug.breakpoint(token=...) (JAX's deprecated token form)")
    frame = sys._getframe(1)
    dynamic_names, dynamic, statics = [], [], {}
    for name, value in frame.f_locals.items():
        try:
            to_aval(value)
        except TypeError:
            statics[name] = value
        else:
            dynamic_names.append(name)
            dynamic.append(value)
    where = f"{frame.f_code.co_filename}:{frame.f_lineno} ({frame.f_code.co_name})"
    stop = _Breakpoint(dynamic_names, where)
    debug_callback(stop, statics, *dynamic, ordered=ordered)


# --- pure_callback ---------------------------------------------------------------------------

pure_callback_p = Primitive("pure_callback")
pure_callback_p.multiple_results = True
pure_callback_p.def_abstract_eval(lambda *avals, callback, result_avals, vmap_method: result_avals)


def _pure_callback_impl(*args, callback, result_avals, vmap_method):
    return _run_with_results(callback, args, result_avals)


def _pure_callback_jvp(primals, tangents, **params):
    raise ValueError(
        "Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
        "while taking gradients."
    )


def _batched_avals(size: int, avals) -> tuple:
    return tuple(ShapedArray((size, *a.shape), a.dtype) for a in avals)


def _sequential(primitive, args, dims, size, params):
    """Bind ``primitive`` per batch element inside a scan; return the stacked results."""
    from .control_flow import scan
    from .structural import moveaxis

    batched = [d is not None for d in dims]
    xs = [moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True) if d is not None]
    fixed = [x for x, b in zip(args, batched, strict=True) if not b]

    def step(carry, xs_i):
        it_x, it_f = iter(xs_i), iter(fixed)
        merged = [next(it_x) if b else next(it_f) for b in batched]
        return carry, list(primitive.bind(*merged, **params))

    unroll = size if params.get("vmap_method") == "sequential_unrolled" else 1
    _, ys = scan(step, (), xs, length=size, unroll=max(unroll, 1))
    return ys


def vmap_method_batching(primitive, args, dims, *, vmap_method, result_avals, **params):
    """Batch a callback ``primitive`` as its ``vmap_method`` asks (pure and buffer callbacks).

    ``sequential``/``sequential_unrolled`` bind it per element in a scan; the others bind
    it once on operands with the batch axis in front, unbatched ones broadcast to size 1
    (``expand_dims``), to the batch's size (``broadcast_all``) or left as they are
    (``legacy_vectorized``).
    """
    from .structural import broadcast, moveaxis

    if vmap_method not in _VMAP_METHODS:
        raise NotImplementedError(
            f"vmap is only supported for the {primitive.name} primitive when vmap_method is "
            "one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    params = {**params, "result_avals": result_avals, "vmap_method": vmap_method}
    if vmap_method in ("sequential", "sequential_unrolled"):
        outs = _sequential(primitive, args, dims, size, params)
        return list(outs), [0] * len(outs)
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True)]
    if vmap_method != "legacy_vectorized":
        lead = size if vmap_method == "broadcast_all" else 1
        moved = [
            broadcast(x, (lead,)) if d is None else x for x, d in zip(moved, dims, strict=True)
        ]
    params["result_avals"] = _batched_avals(size, result_avals)
    outs = primitive.bind(*moved, **params)
    return list(outs), [0] * len(outs)


def _pure_callback_lowering(ctx, *args, callback, result_avals, vmap_method):
    return emit_host_callback(ctx, _host(callback, True), args, result_avals, has_side_effect=False)


pure_callback_p.def_impl(_pure_callback_impl)
jvp_rules[pure_callback_p] = _pure_callback_jvp
batching_rules[pure_callback_p] = functools.partial(vmap_method_batching, pure_callback_p)
register_lowering(pure_callback_p, _pure_callback_lowering)


def pure_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args,
    sharding=None,
    vmap_method: str | None = None,
    **kwargs,
):
    """Call a pure Python function on the host and return its results (jax.pure_callback).

    ``result_shape_dtypes`` is a pytree of ShapeDtypeStructs (or arrays) giving
    the results' structure, shapes and dtypes; the callback must return exactly
    that (checked when it runs). Being pure, the call may be removed when its
    results are unused, or repeated. Under ``vmap``, ``vmap_method`` says how:
    ``"sequential"`` (once per element, in a loop), ``"expand_dims"`` (once,
    unbatched arguments with a leading axis of size 1), ``"broadcast_all"``
    (once, every argument broadcast to the batch) or ``"legacy_vectorized"``
    (once, unbatched arguments as they are); None makes vmap an error. Not
    differentiable; wrap it in ``custom_jvp``.
    """
    if sharding is not None:
        raise NotImplementedError("pure_callback(sharding=...): sharded callbacks")
    if vmap_method is not None and vmap_method not in _VMAP_METHODS:
        raise ValueError(f"Invalid vmap_method: {vmap_method!r}; expected one of {_VMAP_METHODS}")
    result_avals, result_tree = _result_avals(result_shape_dtypes)
    in_tree, dynamic, static = _split_args(args, kwargs)
    flat = FlatCallback(callback, in_tree, static, result_tree)
    outs = pure_callback_p.bind(
        *dynamic, callback=flat, result_avals=result_avals, vmap_method=vmap_method
    )
    return tree_unflatten(result_tree, list(outs))


# --- io_callback ---------------------------------------------------------------------------------

io_callback_p = Primitive("io_callback")
io_callback_p.multiple_results = True
io_callback_p.def_abstract_eval(lambda *avals, callback, result_avals, ordered: result_avals)
io_callback_p.def_effects(
    lambda callback, result_avals, ordered: (OrderedIOEffect if ordered else IOEffect,)
)


def _io_callback_impl(*args, callback, result_avals, ordered):
    return _run_with_results(callback, args, result_avals)


def _io_callback_jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _io_callback_batching(args, dims, *, callback, result_avals, ordered):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    params = {"callback": callback, "result_avals": result_avals, "ordered": False}
    outs = _sequential(io_callback_p, args, dims, size, params)
    return list(outs), [0] * len(outs)


def _io_callback_lowering(ctx, *args, callback, result_avals, ordered):
    effect = OrderedIOEffect if ordered else None
    return emit_host_callback(
        ctx, _host(callback, True), args, result_avals, has_side_effect=True, ordered_effect=effect
    )


io_callback_p.def_impl(_io_callback_impl)
jvp_rules[io_callback_p] = _io_callback_jvp
batching_rules[io_callback_p] = _io_callback_batching
register_lowering(io_callback_p, _io_callback_lowering)


def io_callback(
    callback: Callable[..., Any],
    result_shape_dtypes: Any,
    *args,
    sharding=None,
    ordered: bool = False,
    **kwargs,
):
    """Call a Python function with side effects on the host (jax.experimental.io_callback).

    Like ``pure_callback`` but the call is never removed or repeated;
    ``ordered=True`` keeps its order relative to other ordered effects (and
    then it cannot be vmapped). Not differentiable.
    """
    if sharding is not None:
        raise NotImplementedError("io_callback(sharding=...): sharded callbacks")
    result_avals, result_tree = _result_avals(result_shape_dtypes)
    in_tree, dynamic, static = _split_args(args, kwargs)
    flat = FlatCallback(callback, in_tree, static, result_tree)
    outs = io_callback_p.bind(
        *dynamic, callback=flat, result_avals=result_avals, ordered=bool(ordered)
    )
    return tree_unflatten(result_tree, list(outs))
