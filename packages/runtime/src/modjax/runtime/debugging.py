"""Debugging flags: NaN/inf checks, disable_jit, and their hooks into jit and eager ops.

* ``debug_nans`` / ``debug_infs`` (``jax_debug_nans``/``jax_debug_infs``): every
  eager op's outputs are checked; a jitted call whose outputs hold a NaN (inf) is
  run again op by op (``disable_jit``), so the first primitive that made one
  raises ``FloatingPointError`` naming the user's source line of its equation.
* ``disable_jit`` (``jax_disable_jit``, ``disable_jit()``): ``jit`` calls the
  Python function and control flow runs as Python loops (numpy_api reads it).
* ``explain_cache_misses`` (``jax_explain_cache_misses``): jit logs why it traces
  again (``jit_function.py``, ``explain.py``).

The hot paths (jit's fast paths, ``apply_primitive``) read one module attribute,
``flags.slow``, kept up to date by the options' hooks.
"""

from __future__ import annotations

import logging

import numpy as np

from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.config import config
from modjax.tracecore.evaluation import eval_jaxpr

__all__ = [
    "debug_nans",
    "debug_infs",
    "disable_jit",
    "explain_cache_misses",
    "flags",
    "check_outputs",
    "rerun_op_by_op",
]

logger = logging.getLogger("modjax.runtime.debugging")

debug_nans = config.define_bool_option(
    "debug_nans",
    False,
    env_var="MODJAX_DEBUG_NANS",
    help="Raise FloatingPointError at the first operation that produces a NaN.",
)
debug_infs = config.define_bool_option(
    "debug_infs",
    False,
    env_var="MODJAX_DEBUG_INFS",
    help="Raise FloatingPointError at the first operation that produces an infinity.",
)
_disable_jit = config.define_bool_option(
    "disable_jit",
    False,
    env_var="MODJAX_DISABLE_JIT",
    help="Run jitted functions and control flow eagerly, in Python (for debugging).",
)
explain_cache_misses = config.define_bool_option(
    "explain_cache_misses",
    False,
    env_var="MODJAX_EXPLAIN_CACHE_MISSES",
    help="Log, at WARNING, why a jitted function is traced again.",
)


class _Flags:
    """What the hot paths must know: whether any check is on, whether to leave them.

    ``slow_listeners`` are called with the new ``slow`` after each update (the C++
    fast paths' own switch, ``cpp_dispatch``).
    """

    __slots__ = ("checks", "slow", "slow_listeners")

    def __init__(self):
        self.checks = False
        self.slow = False
        self.slow_listeners: list = []

    def update(self, _value=None) -> None:
        self.checks = debug_nans.value or debug_infs.value
        self.slow = self.checks or _disable_jit.value
        for listener in self.slow_listeners:
            listener(self.slow)


flags = _Flags()
for _option in (debug_nans, debug_infs, _disable_jit):
    _option.add_hook(flags.update)
flags.update()


def disable_jit(disable: bool = True):
    """Run ``jit``-decorated functions and control flow eagerly in this block (jax.disable_jit).

    Useful with a debugger or ``print``: values are concrete everywhere. Also a
    decorator. Same as ``config.update("jax_disable_jit", True)`` while it lasts.
    """
    return _disable_jit(disable)


disable_jit.option = _disable_jit  # type: ignore[attr-defined]


def _bad_kind(value) -> str | None:
    """Return "nan" or "inf" when ``value`` holds one the active checks look for."""
    dtype = getattr(value, "dtype", None)
    if dtype is None or not (np.issubdtype(dtype, np.inexact) or dtype.kind == "V"):
        return None
    try:
        array = np.asarray(value)
        if debug_nans.value and np.isnan(array).any():
            return "nan"
        if debug_infs.value and np.isinf(array).any():
            return "inf"
    except TypeError:  # a dtype numpy cannot test (float0, int4...)
        return None
    return None


def check_outputs(name: str, outs) -> None:
    """Raise FloatingPointError if an output of operation ``name`` holds a NaN (or inf).

    The message is JAX's (``invalid value (nan) encountered in log``) followed
    by the user's source line of the operation.
    """
    for out in outs:
        kind = _bad_kind(out)
        if kind is not None:
            info = source_info_util.current()
            where = f" at {info.frame}" if info.frame is not None else ""
            raise FloatingPointError(f"invalid value ({kind}) encountered in {name}{where}")


def outputs_bad(outs) -> str | None:
    """Return "nan"/"inf" if some output holds one, else None."""
    for out in outs:
        kind = _bad_kind(out)
        if kind is not None:
            return kind
    return None


def rerun_op_by_op(name: str, closed, args, kind: str) -> None:
    """Run a jitted program again op by op to find the first NaN (JAX's de-optimized call).

    Each equation runs eagerly with its source line in force, so ``check_outputs``
    names it. If no operation reproduces the value, raise FloatingPointError
    naming the jitted function.
    """
    logger.warning(
        "Invalid %s value encountered in the output of a jit(%s) function. Calling the "
        "de-optimized version.",
        kind,
        name,
    )
    with _disable_jit(True):
        eval_jaxpr(closed.jaxpr, closed.consts, *args)
    raise FloatingPointError(
        f"invalid value ({kind}) encountered in the output of jit({name}), but no operation "
        "produced it when run op by op (XLA's fused code and the eager ops round differently)"
    )
