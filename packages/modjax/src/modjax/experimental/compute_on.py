"""Where a block of a program computes (the counterpart of ``jax.experimental.compute_on``).

``compute_on2(f, compute_type=, out_memory_spaces=)`` makes ``f`` one
``compute_on`` equation whose results are in the memory spaces given
(``compute_on_p``, declared with its rules in modjax-runtime's ``compute_on.py``).

Equations traced inside ``compute_on(compute_type)`` carry the compute type;
lowered, their ops get XLA's ``_xla_compute_type`` frontend attribute (``host``
for ``"device_host"``), as JAX 0.10.2 emits them. The block is part of jit's
trace context, so a function is traced again inside another block. On CPU the
program runs as without it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from modjax.api_util import flatten_axes
from modjax.runtime.compute_on import compute_on_p
from modjax.tracecore import config
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import MemorySpace
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun_nokwargs, wrap_init

__all__ = ["compute_on", "compute_on2"]

_COMPUTE_TYPES = ("device_host", "device", "tpu_sparsecore")

# jit keys its traces on the block's compute type (JAX's compute_on_context_manager).
_context = config.make_user_context(None)


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Trace the block's computations for ``compute_type`` (``jax.experimental.compute_on``).

    ``compute_type`` is ``"device_host"``, ``"device"``, ``"tpu_sparsecore"`` or
    ``"gpu_stream:<n>"``; anything else is JAX's ValueError, a non-string its
    TypeError. Usable as a decorator of a jitted function, as in JAX.
    """
    _check_compute_type(compute_type)
    with _context(compute_type), source_info_util.compute_type(compute_type):
        yield


def _check_compute_type(compute_type) -> None:
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in _COMPUTE_TYPES and not compute_type.startswith("gpu_stream:"):
        raise ValueError(
            f"Invalid compute type {compute_type}. Current supported values are "
            "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`."
        )


def compute_on2(f=None, *, compute_type, out_memory_spaces, compiler_options=None):
    """Run ``f`` for ``compute_type``, its results in ``out_memory_spaces`` (``compute_on2``).

    The counterpart of ``jax.experimental.compute_on.compute_on2``: returns a
    function that traces ``f`` (inside ``compute_on(compute_type)``, so its
    operations carry the compute type) into one ``compute_on`` equation whose
    results are typed and placed in the memory spaces ``out_memory_spaces`` names
    (a ``jax.memory.Space`` or a pytree prefix of ``f``'s results).
    ``compiler_options`` (a JSON-able dict) becomes the call's ``backend_config``.
    Without ``f``, returns a decorator. Bad compute types raise ``compute_on``'s
    errors; a nested ``compute_on2`` raises JAX's ValueError when lowered.
    """
    kwargs = {
        "compute_type": compute_type,
        "out_memory_spaces": out_memory_spaces,
        "compiler_options": compiler_options,
    }
    if f is None:
        return lambda g: compute_on2(g, **kwargs)
    _check_compute_type(compute_type)
    options_json = None if compiler_options is None else json.dumps(compiler_options)

    def wrapped(*args):  # named so, as JAX's (a jit of it lowers to @jit_wrapped)
        args_flat, in_tree = tree_flatten(args)
        info = debug_info(f, args, {})
        flat_fun, out_tree = flatten_fun_nokwargs(wrap_init(f, info), in_tree)
        with compute_on(compute_type):
            jaxpr, consts = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in args_flat])
        treedef = out_tree.val
        spaces = _flat_spaces(treedef, out_memory_spaces)
        # closed-over values become leading operands, seen by the enclosing trace
        closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ())
        outs = compute_on_p.bind(
            *consts,
            *args_flat,
            jaxpr=closed,
            compute_type=compute_type,
            out_memory_spaces=tuple(spaces),
            compiler_options_json=options_json,
        )
        return tree_unflatten(treedef, outs)

    return wrapped


def _flat_spaces(treedef, out_memory_spaces) -> list:
    """One memory space per result leaf, broadcasting the prefix tree (JAX's ``flatten_axes``)."""
    # flatten_axes reads int (and None) leaves: the spaces go through it as their indices
    members = list(MemorySpace)
    codes = tree_map(
        lambda s: members.index(s) if isinstance(s, MemorySpace) else s, out_memory_spaces
    )
    flat = flatten_axes("compute_on out_memory_spaces", treedef, codes)
    return [members[c] if type(c) is int else c for c in flat]
