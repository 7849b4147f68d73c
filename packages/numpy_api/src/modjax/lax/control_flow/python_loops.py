"""Control flow as plain Python when ``disable_jit`` is on (as JAX does under ``jax.disable_jit``).

``cond``/``switch`` with a concrete predicate call the chosen branch,
``while_loop`` with a concrete condition loops in Python, and ``scan`` calls the
body once per step and stacks the ``ys``: every intermediate value is concrete,
so a debugger or ``print`` sees it. Each returns ``NOT_EAGER`` when it cannot run
eagerly (a traced predicate, a zero-length scan), and the caller traces as usual.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from modjax.runtime.debugging import disable_jit
from modjax.tracecore.core import ConcretizationTypeError, Tracer
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = ["NOT_EAGER", "enabled", "eager_cond", "eager_while", "eager_scan"]

NOT_EAGER = object()


def enabled() -> bool:
    """Tell whether control flow should run as Python (``disable_jit`` is on)."""
    return disable_jit.option.value


def _concrete(value):
    if isinstance(value, Tracer):
        concrete = value.to_concrete_value()
        return NOT_EAGER if concrete is None else concrete
    return value


def eager_cond(index, branches, operands):
    """Call ``branches[index](*operands)`` when ``index`` is concrete."""
    index = _concrete(index)
    if index is NOT_EAGER:
        return NOT_EAGER
    return branches[int(np.asarray(index))](*operands)


def eager_while(cond_fun: Callable, body_fun: Callable, init_val):
    """Loop in Python while ``cond_fun`` is concretely true."""
    val = init_val
    try:
        while bool(cond_fun(val)):
            val = body_fun(val)
    except ConcretizationTypeError:
        return NOT_EAGER
    return val


def eager_scan(f: Callable, init, xs, length: int, reverse: bool):
    """Call ``f`` once per step in Python and stack the ``ys`` (leading axis)."""
    if length == 0:
        return NOT_EAGER
    from ...numpy import stack

    xs_flat, xs_tree = tree_flatten(xs)
    carry, ys = init, [None] * length
    for i in reversed(range(length)) if reverse else range(length):
        x = tree_unflatten(xs_tree, [x[i] for x in xs_flat])
        carry, ys[i] = f(carry, x)
    stacked = tree_map(lambda *column: stack(column), *ys)
    return carry, stacked
