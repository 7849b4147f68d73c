"""jit's fast path in Python, used when the option ``cpp_dispatch`` is off.

Dicts keyed by each Array leaf's shared aval and sharding object (identities:
no hashing of avals), the argument structure and the static values. A hit runs
the executable directly; plain positional Arrays skip even the pytree
flattening. :func:`learn` adds the entries after a slow-path call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from modjax.tracecore import core
from modjax.tracecore.traceback_util import filter_exception, register_boundary

from . import cpp_dispatch
from .arguments import CallArgs, split_statics
from .array import ArrayImpl, _canonical_host_value, put_host_value
from .debugging import flags
from .executable import Executable, JaxRuntimeError, raise_if_deleted

if TYPE_CHECKING:
    from .jit_function import JitFunction, TracedProgram

__all__ = ["learn", "python_wrapper"]

_state = core.trace_state
_eval_trace = core.eval_trace
_cpp_registry = cpp_dispatch.registry
_SCALAR_TYPES = (bool, int, float, complex)


def python_wrapper(fn: JitFunction) -> Callable:
    """The fast path in Python: dicts keyed by leaf avals and shardings (by identity)."""
    call_slow = fn.call_slow
    fast_general = fn.fast_general
    has_statics = bool(fn.static_argnums or fn.static_argnames)

    def general(args, kwargs):
        if _state.trace is not _eval_trace or flags.slow:
            return call_slow(args, kwargs)
        if has_statics:
            statics, dyn_args, dyn_kwargs, _ = split_statics(fn, args, kwargs)
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

        def wrapped_general(*args, **kwargs):
            try:
                return general(args, kwargs)
            except Exception as e:  # an API boundary: the user sees their frames
                filter_exception(e)
                raise

        register_boundary(wrapped_general.__code__)
        return wrapped_general

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


def learn(
    fn: JitFunction, call: CallArgs, executable: Executable, traced: TracedProgram, device_leaves
) -> None:
    """Add fast-path entries for a call whose leaves need no transfer next time."""
    if (
        executable.ordered_effects
        or executable.host_callbacks
        or executable.extended
        or executable.float0
    ):
        return  # tokens, ExtendedArrays or float0 values: ``Executable.run`` handles them
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
        and not fn.static_argnums
        and not fn.static_argnames
    ):
        key = []
        for x in call.args:
            key.append(id(x.aval))
            key.append(id(x._sharding))
            key.append(x._committed)
        _bounded_insert(fn.fast_positional, tuple(key), entry + ((),))
        return
    leaves, cpp_tree = _cpp_registry.flatten((call.dyn_args, call.dyn_kwargs))
    if len(leaves) != len(call.leaves) or any(
        a is not b for a, b in zip(leaves, call.leaves, strict=True)
    ):
        return  # a pytree node jaxlib's registry does not know: no fast path for it
    general_key = _general_key(cpp_tree, call.statics, leaves)
    if general_key is None:
        return
    convert = tuple(i for i, x in enumerate(leaves) if type(x) is not ArrayImpl)
    _bounded_insert(fn.fast_general, general_key, entry + (convert,))


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
