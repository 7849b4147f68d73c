"""Rules of batching's structural primitives that need autodiff's or lowering's tables.

batching declares ``moveaxis_p``, ``broadcast_batch_p``, ``expand_dims_p``,
``squeeze_p``, ``iota_p`` (its ``arange``) and ``axis_index_p``; autodiff and
lowering are its siblings in layer 1, so their JVP/transpose rules and XLA
lowerings, and the eager impls on the device, live here (design.md). All are
linear but ``iota``/``axis_index``, whose JVP is zero; ``broadcast_batch``
transposes to ``sum_batch``.
"""

from __future__ import annotations

import functools

from modjax.autodiff import (
    defjvp_zero,
    deflinear,
)
from modjax.batching import (
    axis_index_p,
    broadcast_batch_p,
    expand_dims_p,
    iota_p,
    moveaxis_p,
    squeeze_p,
)
from modjax.lowering import (
    dense_int_array,
    hlo,
    ir_type,
    register_lowering,
)
from modjax.tracecore.abstract import physical_aval

from ..dispatch import apply_primitive
from ._device import device_impl
from .sum_batch import sum_batch_p

__all__: list[str] = []


for _prim in (moveaxis_p, broadcast_batch_p, expand_dims_p, squeeze_p):
    _prim.def_impl(device_impl(_prim, _prim._impl))
iota_p.def_impl(functools.partial(apply_primitive, iota_p))


# --- lowerings ---------------------------------------------------------------------------------


def _moveaxis_lowering(ctx, x, *, source, destination):
    # The physical rank: an extended dtype's element axes trail and stay in place.
    perm = list(range(len(physical_aval(ctx.avals_in[0]).shape)))
    perm.insert(destination, perm.pop(source))
    return hlo.transpose(x, dense_int_array(perm))


def _broadcast_batch_lowering(ctx, x, *, size, axis):
    out = ctx.avals_out[0]
    dims = [d for d in range(len(physical_aval(out).shape)) if d != axis]
    return hlo.broadcast_in_dim(ir_type(out), x, dense_int_array(dims))


def _reshape_lowering(ctx, x, **_):
    return hlo.reshape(ir_type(ctx.avals_out[0]), x)


def _iota_lowering(ctx, *, size, dtype):
    return hlo.iota(ir_type(ctx.avals_out[0]), 0)


register_lowering(moveaxis_p, _moveaxis_lowering)
register_lowering(broadcast_batch_p, _broadcast_batch_lowering)
register_lowering(expand_dims_p, _reshape_lowering)
register_lowering(squeeze_p, _reshape_lowering)
register_lowering(iota_p, _iota_lowering)


# --- derivatives of batching's primitives ----------------------------------------------------

deflinear(
    moveaxis_p,
    lambda ct, x, *, source, destination: [
        moveaxis_p.bind(ct, source=destination, destination=source)
    ],
)
deflinear(broadcast_batch_p, lambda ct, x, *, size, axis: [sum_batch_p.bind(ct, axis=axis)])
deflinear(expand_dims_p, lambda ct, x, *, dimensions: [squeeze_p.bind(ct, dimensions=dimensions)])
deflinear(squeeze_p, lambda ct, x, *, dimensions: [expand_dims_p.bind(ct, dimensions=dimensions)])
defjvp_zero(iota_p)
defjvp_zero(axis_index_p)

del _prim
