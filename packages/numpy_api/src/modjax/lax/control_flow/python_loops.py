"""Control flow as plain Python when ``disable_jit`` is on (as JAX does under ``jax.disable_jit``).

``cond``/``switch`` with a concrete predicate call the chosen branch,
``while_loop`` with a concrete condition loops in Python, and ``scan`` calls the
body once per step and stacks the ``ys``: every intermediate value is concrete,
so a debugger or ``print`` sees it. Each returns ``NOT_EAGER`` when it cannot run
eagerly (a traced predicate, a zero-length scan), and the caller traces as usual.
The primitives' impls do the same for programs already traced.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from modjax.runtime.debugging import disable_jit
from modjax.tracecore.core import ConcretizationTypeError, Tracer
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_unflatten

__all__ = [
    "NOT_EAGER",
    "enabled",
    "eager_cond",
    "eager_while",
    "eager_scan",
    "cond_impl",
    "while_impl",
    "scan_impl",
]

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


# --- the primitives' impls: their programs run equation by equation under disable_jit ------
#
# A jaxpr already traced (inside a jit equation evaluated under disable_jit, or the
# op-by-op rerun of debug_nans) reaches these; evaluating the held programs eagerly lets
# debug_nans name the primitive inside a loop body, as JAX's de-optimized run does.


def _run(closed, *args) -> list:
    return eval_jaxpr(closed.jaxpr, closed.consts, *args)


def cond_impl(compiled: Callable, index, *operands, branches):
    """Run ``cond_p``: the chosen branch eagerly under disable_jit, else ``compiled``."""
    if not enabled():
        return compiled(index, *operands, branches=branches)
    chosen = int(np.clip(np.asarray(index), 0, len(branches) - 1))
    return _run(branches[chosen], *operands)


def while_impl(compiled: Callable, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Run ``while_p``: a Python loop over its programs under disable_jit, else ``compiled``."""
    if not enabled():
        return compiled(
            *args,
            cond_jaxpr=cond_jaxpr,
            body_jaxpr=body_jaxpr,
            cond_nconsts=cond_nconsts,
            body_nconsts=body_nconsts,
        )
    cond_consts = list(args[:cond_nconsts])
    body_consts = list(args[cond_nconsts : cond_nconsts + body_nconsts])
    carry = list(args[cond_nconsts + body_nconsts :])
    while bool(np.asarray(_run(cond_jaxpr, *cond_consts, *carry)[0])):
        carry = _run(body_jaxpr, *body_consts, *carry)
    return carry


def scan_impl(compiled: Callable, *args, jaxpr, length, reverse, num_consts, num_carry, **params):
    """Run ``scan_p``: its body once per step in Python under disable_jit, else ``compiled``."""
    if not enabled() or length == 0:
        return compiled(
            *args,
            jaxpr=jaxpr,
            length=length,
            reverse=reverse,
            num_consts=num_consts,
            num_carry=num_carry,
            **params,
        )
    from ...numpy import stack

    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    ys = [None] * length
    for i in reversed(range(length)) if reverse else range(length):
        outs = _run(jaxpr, *consts, *carry, *[x[i] for x in xs])
        carry, ys[i] = outs[:num_carry], outs[num_carry:]
    return [*carry, *[stack(column) for column in zip(*ys, strict=True)]]
