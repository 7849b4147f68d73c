"""Autodiff rules, XLA lowerings and device impls of batching's collectives.

batching declares the collectives (``psum_p``, ``all_gather_p``, ...) and their
vmap rules; autodiff and lowering are its siblings, so their rules live here
(design.md). Linear collectives transpose as in JAX: ``psum`` to ``psum`` over
its names (and a broadcast over its positional axes), or, inside a shard_map
body traced with varying types, to ``pvary`` of the invariant cotangent (JAX
0.10.2's transpose of a psum of varying values), ``all_gather`` to
``psum_scatter`` and back, ``all_to_all`` to the swapped ``all_to_all``,
``ppermute`` to the inverse permutation. ``pmax``/``pmin`` have no JVP, as in JAX.

Lowerings cover the positional forms that remain once every vmap has run (a
reduction, a permutation along array axes, a row-major ``axis_index``) and
``reshape_dims``. A named form reaching XLA was bound by no vmap: collectives over
device axes belong to shard_map.
"""

from __future__ import annotations

import math

import numpy as np

from modjax.autodiff import deflinear
from modjax.batching import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    broadcast,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
    reshape_p,
)
from modjax.lowering import dense_int_array, hlo, ir, ir_constant, ir_type, register_lowering
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes, varying_axis_names

from ..dispatch import apply_primitive

__all__: list[str] = []


def _positional(entry) -> bool:
    return isinstance(entry, int | np.integer)


# --- transposes ------------------------------------------------------------------------------


def _psum_transpose(ct, x, *, axes, axis_index_groups):
    mesh_axes = varying_axis_names()
    names = tuple(a for a in axes if not _positional(a) and a not in mesh_axes)
    if names:
        ct = psum_p.bind(ct, axes=names, axis_index_groups=axis_index_groups)
    # A derivative taken inside a shard_map body whose types carry varying axes: over
    # its mesh axes the invariant cotangent is cast back to varying, not summed (JAX's
    # transpose of a psum of varying values; the operand varies over them, as tracing
    # inserted a pvary where it did not).
    missing = {a for a in axes if a in mesh_axes} - getattr(core.to_aval(ct), "vma", frozenset())
    if missing:
        ct = pvary_p.bind(ct, axes=order_axes(missing))
    shape = x.aval.shape
    for a in sorted(int(a) for a in axes if _positional(a)):
        ct = broadcast(ct, shape[a], a)
    return [ct]


def _all_gather_transpose(ct, x, *, axis_name, all_gather_dimension, axis_size, tiled, **groups):
    ct = psum_scatter_p.bind(
        ct,
        axis_name=axis_name,
        scatter_dimension=all_gather_dimension,
        axis_size=axis_size,
        tiled=tiled,
        **groups,
    )
    return [ct]


def _psum_scatter_transpose(ct, x, *, axis_name, scatter_dimension, axis_size, tiled, **groups):
    ct = all_gather_p.bind(
        ct,
        axis_name=axis_name,
        all_gather_dimension=scatter_dimension,
        axis_size=axis_size,
        tiled=tiled,
        **groups,
    )
    return [ct]


def _all_to_all_transpose(ct, x, *, axis_name, split_axis, concat_axis, axis_size, tiled, **groups):
    ct = all_to_all_p.bind(
        ct,
        axis_name=axis_name,
        split_axis=concat_axis,
        concat_axis=split_axis,
        axis_size=axis_size,
        tiled=tiled,
        **groups,
    )
    return [ct]


def _ppermute_transpose(ct, x, *, axis_name, perm):
    inverse = tuple((dst, src) for src, dst in perm)
    return [ppermute_p.bind(ct, axis_name=axis_name, perm=inverse)]


deflinear(psum_p, _psum_transpose)
deflinear(all_gather_p, _all_gather_transpose)
deflinear(psum_scatter_p, _psum_scatter_transpose)
deflinear(all_to_all_p, _all_to_all_transpose)
deflinear(ppermute_p, _ppermute_transpose)
deflinear(reshape_p, lambda ct, x, *, shape: [reshape_p.bind(ct, shape=x.aval.shape)])


# --- eager impls on the device ---------------------------------------------------------------


def _device_impl(prim, numpy_impl, entries_param):
    """Run the positional form on the device; a name left raises through the numpy impl."""

    def impl(*args, **params):
        entries = params[entries_param]
        entries = entries if isinstance(entries, tuple) else (entries,)
        float0 = any(getattr(x, "dtype", None) == dtypes.float0 for x in args)
        if float0 or not all(_positional(e) for e in entries):
            return numpy_impl(*args, **params)
        return apply_primitive(prim, *args, **params)

    return impl


for _prim, _param in (
    (psum_p, "axes"),
    (pmax_p, "axes"),
    (pmin_p, "axes"),
    (ppermute_p, "axis_name"),
    (axis_index_p, "axis_name"),
):
    _prim.def_impl(_device_impl(_prim, _prim._impl, _param))
reshape_p.def_impl(_device_impl(reshape_p, reshape_p._impl, "shape"))


# --- lowerings -------------------------------------------------------------------------------


def _named_error(ctx, entries):
    names = [e for e in entries if not _positional(e)]
    if names:
        raise NotImplementedError(
            f"{ctx.primitive.name} over the named axis {names[0]!r} outside vmap: "
            "collectives over device axes need modjax.sharding's shard_map"
        )


def _reduce_body(kind: str, dtype):
    if kind == "sum":
        return hlo.or_ if dtype == np.bool_ else hlo.add
    if dtype == np.bool_:
        return hlo.or_ if kind == "max" else hlo.and_
    return hlo.maximum if kind == "max" else hlo.minimum


def _reduce_identity(kind: str, dtype) -> np.ndarray:
    dtype = np.dtype(dtype)
    if kind == "sum":
        return np.zeros((), dtype)
    if dtype == np.bool_:
        return np.array(kind == "min")
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf if kind == "max" else np.inf, dtype)
    info = np.iinfo(dtype)
    return np.array(info.min if kind == "max" else info.max, dtype)


def _reduction_lowering(kind: str):
    def rule(ctx, x, *, axes, axis_index_groups):
        _named_error(ctx, axes)
        aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
        dtype = aval_out.dtype
        if aval_in.dtype != dtype:  # psum of booleans counts them in int32
            x = hlo.convert(ir_type(ShapedArray(aval_in.shape, dtype)), x)
        scalar = ir_type(ShapedArray((), dtype))
        op = hlo.ReduceOp(
            [ir_type(aval_out)],
            [x],
            [ir_constant(_reduce_identity(kind, dtype))],
            dense_int_array(sorted(int(a) for a in axes)),
        )
        block = op.regions[0].blocks.append(scalar, scalar)
        with ir.InsertionPoint(block):
            hlo.return_([_reduce_body(kind, dtype)(*block.arguments)])
        return op.result

    return rule


def _ppermute_lowering(ctx, x, *, axis_name, perm):
    _named_error(ctx, axis_name)
    aval = ctx.avals_in[0]
    axes = [int(a) for a in axis_name]
    rest = [d for d in range(aval.ndim) if d not in axes]
    order = axes + rest
    moved_shape = tuple(aval.shape[d] for d in order)
    k = len(axes)
    members = math.prod(moved_shape[:k])
    flat_shape = (members, *moved_shape[k:])
    flat = hlo.reshape(
        ir_type(ShapedArray(flat_shape, aval.dtype)), hlo.transpose(x, dense_int_array(order))
    )
    row = ShapedArray((1, *flat_shape[1:]), aval.dtype)
    zero = hlo.broadcast_in_dim(
        ir_type(row), ir_constant(np.zeros((), aval.dtype)), dense_int_array([])
    )
    source = {dst: src for src, dst in perm}
    ones = [1] * len(flat_shape)
    rows = []
    for dst in range(members):
        src = source.get(dst)
        if src is None:
            rows.append(zero)
        else:
            start = [src] + [0] * (len(flat_shape) - 1)
            limit = [src + 1, *flat_shape[1:]]
            rows.append(hlo.slice(flat, dense_int_array(start), dense_int_array(limit),
                                  dense_int_array(ones)))  # fmt: skip
    out = hlo.concatenate(rows, 0) if len(rows) > 1 else rows[0]
    out = hlo.reshape(ir_type(ShapedArray(moved_shape, aval.dtype)), out)
    return hlo.transpose(out, dense_int_array(list(np.argsort(order))))


def _axis_index_lowering(ctx, *, axis_name):
    entries = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    _named_error(ctx, entries)
    aval = ctx.avals_out[0]
    flat = hlo.iota(ir_type(ShapedArray((math.prod(aval.shape),), aval.dtype)), 0)
    return hlo.reshape(ir_type(aval), flat)


def _named_only_lowering(param):
    def rule(ctx, x, **params):
        _named_error(ctx, params[param])
        raise AssertionError("unreachable: these collectives have no positional form")

    return rule


register_lowering(psum_p, _reduction_lowering("sum"))
register_lowering(pmax_p, _reduction_lowering("max"))
register_lowering(pmin_p, _reduction_lowering("min"))
register_lowering(ppermute_p, _ppermute_lowering)
register_lowering(axis_index_p, _axis_index_lowering)
register_lowering(reshape_p, lambda ctx, x, *, shape: hlo.reshape(ir_type(ctx.avals_out[0]), x))
for _prim in (all_gather_p, all_to_all_p, psum_scatter_p):
    register_lowering(_prim, _named_only_lowering("axis_name"))
del _prim, _param
