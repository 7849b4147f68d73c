"""Seeing values inside traced programs (the counterpart of ``jax.debug``).

``print``, ``log``, ``callback`` and ``breakpoint`` run on the host when the
program runs, eagerly or compiled, under vmap, grad and control flow; their
effects (``DebugEffect``, ``OrderedDebugEffect``) keep them from being removed.
``render(fn_or_jaxpr, path, *args)`` draws a program with Graphviz (JAX has none).
"""

from modjax.lax.callbacks import DebugEffect, OrderedDebugEffect, breakpoint  # noqa: A004
from modjax.lax.callbacks import debug_callback as callback
from modjax.lax.callbacks import debug_log as log
from modjax.lax.callbacks import debug_print as print  # noqa: A004
from modjax.sharding import inspect_array_sharding, visualize_array_sharding, visualize_sharding
from modjax.tracecore.dot import render

__all__ = [
    "callback",
    "print",
    "log",
    "breakpoint",
    "render",
    "DebugEffect",
    "OrderedDebugEffect",
    "inspect_array_sharding",
    "visualize_array_sharding",
    "visualize_sharding",
]
