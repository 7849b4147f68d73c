"""Conditionals: ``cond`` and ``switch`` on one primitive, ``cond_p``.

``cond_p.bind(index, *operands, branches=(jaxpr_0, ..., jaxpr_n))`` runs the
branch ``index`` (an int32 scalar already clamped into range) on the operands.
Every branch takes the same operands (the closed-over values of all branches
first, then the user's operands) and returns values of the same types; as in
JAX, ``cond(pred, true_fun, false_fun)`` is ``branches=(false_fun, true_fun)``.
It lowers to ``stablehlo.case``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import numpy as np

from modjax.lowering import (
    hlo,
    ir,
    ir_types,
    lower_jaxpr_inline,
    region_tokens,
    register_lowering,
    set_tokens,
    token_type,
    tokens_in,
)
from modjax.runtime import device_put
from modjax.runtime.refs import apply_with_refs
from modjax.tracecore.core import Primitive
from modjax.tracecore.effects import ordered_effects
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes
from modjax.tracecore.tracing import trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import wrap_init

from .. import elementwise as ew
from .._common import aval_of, kind
from . import python_loops
from .common import (
    abstractify,
    check_tree_and_avals,
    func_description,
    join_consts,
    trace_closed,
    typematch,
)

__all__ = ["cond", "switch", "cond_p"]

cond_p = Primitive("cond")
cond_p.multiple_results = True


def _cond_abstract_eval(index, *operands, branches: tuple[ClosedJaxpr, ...]):
    if index.shape != () or index.dtype != np.int32:
        raise TypeError(f"cond: the branch index must be an int32 scalar, got {index.str_short()}")
    if not branches:
        raise TypeError("cond: needs at least one branch")
    out0 = branches[0].out_avals
    for i, branch in enumerate(branches):
        ins = branch.in_avals
        if len(ins) != len(operands) or not all(
            typematch(a, b) for a, b in zip(ins, operands, strict=True)
        ):
            raise TypeError(
                f"cond: branch {i} takes ({_types(ins)}) but the operands are ({_types(operands)})"
            )
        # Varying manual axes aside: the user's branches were joined when traced
        # (``join_out_types``); bodies that rules rewrite are traced without them.
        if _novma(branch.out_avals) != _novma(out0):
            raise TypeError(
                f"cond: branch {i} returns ({_types(branch.out_avals)}) but branch 0 returns "
                f"({_types(out0)})"
            )
    if len(branches) > 1 and any(_vma(a) for b in branches for a in b.out_avals):
        columns = zip(*(b.out_avals for b in branches), strict=True)
        return [col[0].update(vma=frozenset().union(*map(_vma, col))) for col in columns]
    return list(out0)


def _novma(avals) -> list:
    return [a.update(vma=()) if _vma(a) else a for a in avals]


def _types(avals) -> str:
    return ", ".join(a.str_short() for a in avals)


def _cond_lowering(ctx, index, *operands, branches):
    # Each ordered effect's token goes into every branch and comes out of the case.
    effects = ordered_effects(ctx.effects)
    tokens = tokens_in(ctx, effects)
    case = hlo.CaseOp([token_type()] * len(tokens) + ir_types(ctx.avals_out), index, len(branches))
    for region, branch in zip(case.regions, branches, strict=True):
        block = region.blocks.append()
        with ir.InsertionPoint(block), region_tokens(ctx):
            outs = lower_jaxpr_inline(ctx, branch, operands)
            hlo.return_(tokens_in(ctx, effects) + outs)
    results = list(case.results)
    set_tokens(ctx, effects, results[: len(tokens)])
    return results[len(tokens) :]


cond_p.def_impl(
    functools.partial(python_loops.cond_impl, functools.partial(apply_with_refs, cond_p))
)
cond_p.def_abstract_eval(_cond_abstract_eval)
register_lowering(cond_p, _cond_lowering)


# --- the API ---------------------------------------------------------------------------------


def _trace_branches(branches: Sequence[Callable], operands) -> tuple[list, list]:
    """Trace each branch on the operands; return the flat operands and the traced branches."""
    ops_flat, in_tree = tree_flatten(operands)
    in_avals = [abstractify(x) for x in ops_flat]
    traced = [trace_closed(branch, in_tree, in_avals) for branch in branches]
    return ops_flat, traced


def join_out_types(jaxprs: list[ClosedJaxpr]) -> list[ClosedJaxpr]:
    """Make every branch return the same weak types and varying manual axes.

    JAX's branches may differ only in weak types, and the result is then strongly
    typed (``cond(p, lambda: 1.0, lambda: x)`` is float32 for float32 ``x``). The
    user's branches must agree in varying manual axes (checked before, as JAX
    does); branches that rules rewrite (derivatives inside shard_map, traced without
    varying types) are given the union, a less varying output cast (a ``pvary``).
    """
    columns = list(zip(*(j.out_avals for j in jaxprs), strict=True))
    weak = [all(getattr(a, "weak_type", False) for a in column) for column in columns]
    vma = [frozenset().union(*(_vma(a) for a in column)) for column in columns]
    return [_with_out_types(j, weak, vma) for j in jaxprs]


def _vma(aval) -> frozenset:
    return getattr(aval, "vma", frozenset())


def _with_out_types(closed: ClosedJaxpr, weak: list[bool], vma: list[frozenset]) -> ClosedJaxpr:
    avals = closed.out_avals
    if all(
        getattr(a, "weak_type", False) == w and _vma(a) == v
        for a, w, v in zip(avals, weak, vma, strict=True)
    ):
        return closed

    def fix(o, w, v):
        if aval_of(o).weak_type != w:
            o = ew._convert_element_type(o, aval_of(o).dtype, weak_type=w)
        missing = v - _vma(aval_of(o))
        return pvary_p.bind(o, axes=order_axes(missing)) if missing else o

    def fun(*args):
        from modjax.tracecore.evaluation import eval_jaxpr

        outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        return [fix(o, w, v) for o, w, v in zip(outs, weak, vma, strict=True)]

    jaxpr, consts = trace_to_jaxpr(wrap_init(fun, closed.jaxpr.debug_info), closed.in_avals)
    return ClosedJaxpr(jaxpr, consts)


def _bind_cond(index, branches: Sequence[Callable], what: str, pairs, operands):
    """Trace and check the branches, then bind ``cond_p``.

    ``pairs`` lists ``(i, name_i, j, name_j)``: the branches whose outputs are compared
    and how the error calls them.
    """
    ops_flat, traced = _trace_branches(branches, operands)
    for i, name_i, j, name_j in pairs:
        check_tree_and_avals(
            what,
            (name_i, name_j),
            (func_description(branches[i]), func_description(branches[j])),
            (traced[i].out_tree, traced[j].out_tree),
            (traced[i].out_avals, traced[j].out_avals),
        )
    consts, jaxprs = join_consts(traced)
    jaxprs = join_out_types(jaxprs)
    args = [*consts, *ops_flat]
    forwarded = _forwarded_outputs(jaxprs)
    if any(f is not None for f in forwarded):
        jaxprs = [_without_outputs(j, forwarded) for j in jaxprs]
    computed = iter(cond_p.bind(index, *args, branches=tuple(jaxprs)))
    outs = [next(computed) if f is None else _as_array(args[f]) for f in forwarded]
    return tree_unflatten(traced[0].out_tree, outs)


def _as_array(x):
    """A forwarded operand as the Array JAX's cond gives (a Python or numpy value is put)."""
    if isinstance(x, np.ndarray | np.generic | bool | int | float | complex):
        return device_put(x)
    return x


def _forwarded_outputs(jaxprs: Sequence[ClosedJaxpr]) -> list[int | None]:
    """For each output, the operand every branch returns unchanged there, if one does.

    As JAX's cond, such an output is the operand itself, not a result of the cond: under
    vmap with a batched predicate it stays unbatched (flax's state passed through both
    branches).
    """
    per_branch = []
    for closed in jaxprs:
        position = {id(v): i for i, v in enumerate(closed.jaxpr.invars)}
        per_branch.append([position.get(id(v)) for v in closed.jaxpr.outvars])
    return [
        column[0] if column[0] is not None and len(set(column)) == 1 else None
        for column in zip(*per_branch, strict=True)
    ]


def _without_outputs(closed: ClosedJaxpr, forwarded: list[int | None]) -> ClosedJaxpr:
    outvars = [v for v, f in zip(closed.jaxpr.outvars, forwarded, strict=True) if f is None]
    return ClosedJaxpr(closed.jaxpr.replace(outvars=outvars), closed.consts)


_NO_OPERAND = object()


def _with_operand_keyword(operands: tuple, operand) -> tuple:
    """Return the operands, given positionally or as the deprecated ``operand=`` (not both)."""
    if operand is _NO_OPERAND:
        return operands
    if operands:
        raise TypeError(
            "if 'operand' keyword is passed then no positional operands can be passed, "
            f"got operand={operand!r} and positional operands {operands!r}"
        )
    return (operand,)


def cond(pred, true_fun: Callable, false_fun: Callable, *operands, operand=_NO_OPERAND):
    """Apply ``true_fun`` or ``false_fun`` to ``operands`` as ``pred`` says (jax.lax.cond).

    Both functions are traced once, and must return the same pytree of the same
    shapes and dtypes (weak types may differ). ``pred`` is a boolean or number
    scalar (nonzero is true); under ``vmap`` a batched ``pred`` evaluates both
    branches and selects. ``operand=`` is the deprecated single-operand keyword.
    """
    if not callable(true_fun) or not callable(false_fun):
        # The old form cond(pred, true_operand, true_fun, false_operand, false_fun), which
        # JAX still accepts (blackjax calls it).
        if callable(false_fun) and len(operands) == 2 and callable(operands[1]):
            x_true, f_true, x_false, f_false = true_fun, false_fun, *operands
            return cond(pred, lambda x, _: f_true(x), lambda _, x: f_false(x), x_true, x_false)
        raise TypeError("lax.cond: true_fun and false_fun arguments should be callable.")
    operands = _with_operand_keyword(operands, operand)
    pred_aval = abstractify(pred)
    if pred_aval.shape != ():
        raise TypeError(f"Pred must be a scalar, got {pred} of shape {pred_aval.shape}.")
    pred_kind = kind(pred_aval.dtype)
    if pred_kind not in "biuf":
        raise TypeError(f"Pred type must be either boolean or number, got {pred_aval.dtype}.")
    if pred_kind != "b":
        pred = ew.ne(pred, np.zeros((), pred_aval.dtype)[()])
    index = ew.convert_element_type(pred, np.int32)
    if python_loops.enabled():
        out = python_loops.eager_cond(index, (false_fun, true_fun), operands)
        if out is not python_loops.NOT_EAGER:
            return out
    return _bind_cond(
        index,
        (false_fun, true_fun),
        "cond branches",
        [(1, "true_fun", 0, "false_fun")],
        operands,
    )


def switch(index, branches: Sequence[Callable], *operands, operand=_NO_OPERAND):
    """Apply ``branches[index]`` to ``operands`` (jax.lax.switch).

    ``index`` is an integer scalar, clamped into ``[0, len(branches) - 1]``. Every
    branch is traced once and must return the same pytree of the same types.
    """
    operands = _with_operand_keyword(operands, operand)
    branches = tuple(branches)
    if not branches:
        raise ValueError("Empty branch sequence")
    for b in branches:
        if not callable(b):
            raise TypeError("lax.switch: branches argument should be a sequence of callables.")
    index_aval = abstractify(index)
    if index_aval.shape != ():
        raise TypeError(f"Branch index must be scalar, got {index} of shape {index_aval.shape}.")
    if kind(index_aval.dtype) not in "iu":
        raise TypeError(f"Index type must be an integer, got {index} as {index_aval.dtype}")
    if len(branches) == 1:
        return branches[0](*operands)
    index = ew.convert_element_type(index, np.int32)
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    if python_loops.enabled():
        out = python_loops.eager_cond(index, branches, operands)
        if out is not python_loops.NOT_EAGER:
            return out
    return _bind_cond(
        index,
        branches,
        "switch branches",
        [(0, "branch 0", i, f"branch{i}") for i in range(1, len(branches))],
        operands,
    )
