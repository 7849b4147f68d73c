"""Approximate top-k: the ``approx_top_k`` primitive, ``approx_max_k`` and ``approx_min_k``.

The primitive lowers, as JAX's does, to XLA's ``ApproxTopK`` custom call with
``is_fallback`` set: off TPUs XLA computes it exactly (a sort), so on CPU the results
are the exact top-k, with ties in index order. With ``aggregate_to_topk=False`` the
reduction dimension keeps the size XLA's approximation would return (all of it, on
small inputs), sorted.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from modjax.autodiff import Zero, jvp_rules
from modjax.batching import batching_rules
from modjax.lowering import (
    custom_call,
    dtype_to_ir_type,
    func_dialect,
    hlo,
    i64_attr,
    ir,
    ir_constant,
    ir_type,
    register_lowering,
)
from modjax.runtime import _xla, apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from ._common import aval_of
from .sorting import _take_along

__all__ = ["approx_max_k", "approx_min_k", "approx_top_k_p"]


def _abstract_eval(
    operand,
    *,
    aggregate_to_topk,
    is_max_k,
    k,
    recall_target,
    reduction_dimension,
    reduction_input_size_override,
):
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if operand.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {operand.shape}")
    if not -operand.ndim <= reduction_dimension < operand.ndim:
        raise IndexError(
            f"approx_top_k reduction_dimension {reduction_dimension} is out of range for an "
            f"operand of rank {operand.ndim}"
        )
    dims = list(operand.shape)
    size = dims[reduction_dimension]
    if size < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {size}, got {k}")
    if not dtypes.issubdtype(operand.dtype, np.floating):
        raise ValueError("operand must be a floating type")
    if not 0 < recall_target <= 1:
        raise ValueError(f"approx_top_k recall_target must be in (0, 1], got {recall_target}")
    if aggregate_to_topk:
        dims[reduction_dimension] = k
    else:
        dims[reduction_dimension] = _xla.approx_top_k_output_size(
            size, len(dims), k, recall_target, reduction_input_size_override
        )
    return [
        ShapedArray(tuple(dims), operand.dtype, operand.weak_type),
        ShapedArray(tuple(dims), np.dtype(np.int32)),
    ]


def _comparator(ctx, element_type, is_max_k: bool) -> str:
    """A ``func.func`` comparing two (value, index) pairs by value: XLA's ApproxTopK's order."""
    mctx = ctx.module_ctx
    scalar = ir.RankedTensorType.get([], element_type)
    index = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
    i1 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(1))
    name = f"top_k_{'gt' if is_max_k else 'lt'}_{element_type}_comparator"
    with ir.InsertionPoint.at_block_begin(mctx.module.body):
        fn = func_dialect.FuncOp(name, ir.FunctionType.get([scalar, scalar, index, index], [i1]))
    symbol = ir.StringAttr(mctx.symbol_table.insert(fn)).value
    block = fn.add_entry_block()
    with ir.InsertionPoint(block):
        a, b, _, _ = block.arguments
        direction = hlo.ComparisonDirectionAttr.get("GT" if is_max_k else "LT")
        hlo.return_([hlo.compare(a, b, comparison_direction=direction)])
    return symbol


def _lowering(
    ctx,
    operand,
    *,
    aggregate_to_topk,
    is_max_k,
    k,
    recall_target,
    reduction_dimension,
    reduction_input_size_override,
):
    aval = ctx.avals_in[0]
    dim = reduction_dimension % aval.ndim
    element_type = dtype_to_ir_type(aval.dtype)
    comparator = _comparator(ctx, element_type, is_max_k)
    iota = hlo.iota(ir_type(ShapedArray(aval.shape, np.int32)), dim)
    init = ir_constant(np.array(-np.inf if is_max_k else np.inf, aval.dtype))
    config = {
        "reduction_dim": i64_attr(dim),
        "recall_target": ir.FloatAttr.get(ir.F32Type.get(), recall_target),
        "aggregate_to_topk": ir.BoolAttr.get(aggregate_to_topk),
        "reduction_input_size_override": i64_attr(reduction_input_size_override),
        "is_fallback": ir.BoolAttr.get(True),
        "top_k": i64_attr(k),
    }
    return custom_call(
        "ApproxTopK",
        [ir_type(a) for a in ctx.avals_out],
        [operand, iota, init, ir_constant(np.int32(-1))],
        api_version=1,
        op_attributes={
            "mhlo.backend_config": ir.DictAttr.get(config),
            "called_computations": ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(comparator)]),
        },
    )


def _jvp(primals, tangents, **params):
    (x,), (t,) = primals, tangents
    values, indices = approx_top_k_p.bind(x, **params)
    index_zero = Zero(ShapedArray(aval_of(indices).shape, dtypes.float0))
    if type(t) is Zero:
        return [values, indices], [Zero(t.aval.update(shape=aval_of(values).shape)), index_zero]
    axis = params["reduction_dimension"] % aval_of(x).ndim
    return [values, indices], [_take_along(t, indices, axis), index_zero]


def _batching(args, dims, *, reduction_dimension, **params):
    (x,), (d,) = args, dims
    kept = [i for i in range(aval_of(x).ndim) if i != d]
    out = approx_top_k_p.bind(x, reduction_dimension=kept[reduction_dimension], **params)
    return out, [d, d]


approx_top_k_p = Primitive("approx_top_k")
approx_top_k_p.multiple_results = True
approx_top_k_p.def_abstract_eval(_abstract_eval)
approx_top_k_p.def_impl(partial(apply_primitive, approx_top_k_p))
register_lowering(approx_top_k_p, _lowering)
jvp_rules[approx_top_k_p] = _jvp
batching_rules[approx_top_k_p] = _batching


def _approx_top_k(
    operand,
    k,
    reduction_dimension,
    recall_target,
    reduction_input_size_override,
    aggregate_to_topk,
    is_max_k,
):
    # a list, as JAX returns it
    return approx_top_k_p.bind(
        operand,
        aggregate_to_topk=bool(aggregate_to_topk),
        is_max_k=is_max_k,
        k=operator.index(k),
        recall_target=float(recall_target),
        reduction_dimension=operator.index(reduction_dimension),
        reduction_input_size_override=operator.index(reduction_input_size_override),
    )


def approx_max_k(
    operand,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
):
    """Return the ``k`` largest values along a dimension and their indices (jax.lax.approx_max_k).

    ``operand`` must be floating. On TPUs XLA approximates, aiming at
    ``recall_target``; elsewhere (CPU) the result is exact, ties in index order.
    With ``aggregate_to_topk=False`` more than ``k`` results come back (how many
    is XLA's choice; sorted here). Values in descending order; int32 indices.
    """
    return _approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        True,
    )


def approx_min_k(
    operand,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
):
    """Return the ``k`` smallest values along a dimension and their indices (jax.lax.approx_min_k).

    As ``approx_max_k``, in ascending order.
    """
    return _approx_top_k(
        operand,
        k,
        reduction_dimension,
        recall_target,
        reduction_input_size_override,
        aggregate_to_topk,
        False,
    )
