"""``sum_batch_p``: the sum over one axis, a primitive of runtime's own.

The transpose of batching's ``broadcast_batch`` and the batched ``custom_vjp``
backward rule need a sum, and neither autodiff nor batching has an array library
to sum with (that is modjax-numpy, above the runtime). So the runtime declares
this one primitive with all its rules: abstract eval, device impl, lowering,
transpose (a ``broadcast_batch``) and batching.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import (
    deflinear,
)
from modjax.batching import (
    batching_rules,
    broadcast_batch_p,
)
from modjax.lowering import (
    dense_int_array,
    hlo,
    ir,
    ir_constant,
    ir_type,
    register_lowering,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval

from ._device import device_impl

__all__ = ["sum_batch_p", "sum_batch"]

sum_batch_p = Primitive("sum_batch")


@sum_batch_p.def_abstract_eval
def _sum_batch_abstract_eval(x, *, axis):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"sum_batch: axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape[:axis] + x.shape[axis + 1 :], x.dtype, x.weak_type)


def _sum_batch_numpy(x, *, axis):
    aval = to_aval(x)
    return np.zeros(aval.shape[:axis] + aval.shape[axis + 1 :], aval.dtype)


sum_batch_p.def_impl(device_impl(sum_batch_p, _sum_batch_numpy))


def _sum_batch_lowering(ctx, x, *, axis):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    scalar = ir_type(ShapedArray((), aval_in.dtype))
    op = hlo.ReduceOp(
        [ir_type(aval_out)],
        [x],
        [ir_constant(np.zeros((), aval_in.dtype))],
        dense_int_array([axis]),
    )
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        hlo.return_([hlo.or_(a, b) if aval_in.dtype == np.bool_ else hlo.add(a, b)])
    return op.result


def _sum_batch_batching_rule(args, dims, *, axis):
    (x,), (bdim,) = args, dims
    real = axis if axis < bdim else axis + 1
    return sum_batch_p.bind(x, axis=real), bdim - (real < bdim)


register_lowering(sum_batch_p, _sum_batch_lowering)
deflinear(
    sum_batch_p,
    lambda ct, x, *, axis: [broadcast_batch_p.bind(ct, size=x.aval.shape[axis], axis=axis)],
)
batching_rules[sum_batch_p] = _sum_batch_batching_rule


def sum_batch(x, axis: int):
    """Sum ``x`` over ``axis`` (what transposes ``broadcast_batch``; lax.reduce_sum on one axis)."""
    ndim = len(to_aval(x).shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"sum_batch: axis {axis} out of range for an array of rank {ndim}")
    return sum_batch_p.bind(x, axis=axis % ndim)
