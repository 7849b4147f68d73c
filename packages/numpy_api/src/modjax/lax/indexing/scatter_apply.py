"""``scatter_apply``: apply a unary function at the scattered positions (jax.lax.scatter_apply)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial

from modjax.autodiff import jvp_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, ir, ir_type, lower_fun, lower_jaxpr_inline, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from .._common import aval_of, reducer_region
from ._shared import _batch_size, _front, _move_to_front, _shift
from .dimension_numbers import (
    CLIP,
    PROMISE_IN_BOUNDS,
    GatherScatterMode,
    ScatterDimensionNumbers,
    _ints,
    _register_param_text,
    _scatter_dnums,
)
from .scatter import _clamp_indices, _scatter_attr, _scatter_shape_rule


def _scatter_apply_abstract_eval(
    operand,
    indices,
    *,
    dimension_numbers,
    update_shape,
    update_jaxpr,
    indices_are_sorted,
    unique_indices,
    mode,
):
    _scatter_shape_rule("scatter-apply", operand, indices, update_shape, dimension_numbers)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_apply_lowering(
    ctx, operand, indices, *, dimension_numbers, update_shape, update_jaxpr, mode, **params
):
    aval = ctx.avals_out[0]
    if mode == CLIP:

        def clipped(operand, indices):
            indices = _clamp_indices(
                indices, aval_of(operand).shape, dimension_numbers, update_shape
            )
            return scatter_apply_p.bind(
                operand,
                indices,
                dimension_numbers=dimension_numbers,
                update_shape=update_shape,
                update_jaxpr=update_jaxpr,
                mode=PROMISE_IN_BOUNDS,
                **params,
            )

        return lower_fun(clipped)(ctx, operand, indices)
    from .._common import full as _ir_full

    updates = _ir_full(0, aval.update(shape=tuple(update_shape)))
    op = hlo.ScatterOp(
        [ir_type(aval)],
        [operand],
        indices,
        [updates],
        _scatter_attr(dimension_numbers, ctx.avals_in[1].ndim - 1),
        indices_are_sorted=ir.BoolAttr.get(bool(params["indices_are_sorted"])),
        unique_indices=ir.BoolAttr.get(bool(params["unique_indices"])),
    )
    block = reducer_region(op, aval.dtype)
    with ir.InsertionPoint(block):
        x, _ = block.arguments
        (result,) = lower_jaxpr_inline(ctx, update_jaxpr, [x])
        hlo.return_([result])
    return op.results[0]


def _scatter_apply_jvp(primals, tangents, **params):
    raise NotImplementedError("scatter_apply JVP not implemented")  # JAX's text


def _scatter_apply_batching(args, dims, *, dimension_numbers, update_shape, **params):
    (operand, indices), (od, idd) = args, dims
    size = _batch_size(args, dims)
    operand = _front(operand, od, size)
    dn = dimension_numbers
    if idd is None:
        dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
        )
    else:
        indices = _move_to_front(indices, idd)
        dn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
        )
    out = scatter_apply_p.bind(
        operand, indices, dimension_numbers=dn, update_shape=(size, *update_shape), **params
    )
    return out, 0


scatter_apply_p = Primitive("scatter-apply")
scatter_apply_p.def_abstract_eval(_scatter_apply_abstract_eval)
scatter_apply_p.def_impl(partial(apply_primitive, scatter_apply_p))
register_lowering(scatter_apply_p, _scatter_apply_lowering)
_register_param_text(scatter_apply_p, ScatterDimensionNumbers)
jvp_rules[scatter_apply_p] = _scatter_apply_jvp
batching_rules[scatter_apply_p] = _scatter_apply_batching


def scatter_apply(
    operand,
    scatter_indices,
    func: Callable,
    dimension_numbers: ScatterDimensionNumbers,
    *,
    update_shape: Sequence[int] = (),
    indices_are_sorted: bool = False,
    unique_indices: bool = False,
    mode: str | GatherScatterMode | None = None,
):
    """Apply the scalar function ``func`` to windows of ``operand`` (jax.lax.scatter_apply).

    ``update_shape`` is the shape updates would have (the windows and the index
    batch dimensions); an element hit ``k`` times gets ``func`` applied ``k``
    times, as in JAX.
    """
    from modjax.tracecore import make_jaxpr

    aval = aval_of(operand)
    scalar = ShapedArray((), aval.dtype, aval.weak_type)
    closed = make_jaxpr(func)(scalar)
    out_avals = [v.aval for v in closed.jaxpr.outvars]
    if len(out_avals) != 1 or out_avals[0].shape != () or out_avals[0].dtype != aval.dtype:
        raise TypeError(
            f"scatter_apply func must map a {dtypes.dtype_name(aval.dtype)} scalar to one "
            f"scalar of the same dtype; got {[a.str_short() for a in out_avals]}"
        )
    return scatter_apply_p.bind(
        operand,
        scatter_indices,
        dimension_numbers=_scatter_dnums(dimension_numbers),
        update_shape=_ints(update_shape, "scatter_apply update_shape"),
        update_jaxpr=closed,
        indices_are_sorted=bool(indices_are_sorted),
        unique_indices=bool(unique_indices),
        mode=GatherScatterMode.from_any(mode),
    )
