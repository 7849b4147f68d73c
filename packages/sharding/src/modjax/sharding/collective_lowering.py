"""XLA lowerings of the collectives over mesh axes, and of ``shard_map`` itself.

batching declares the collectives (``psum``, ``all_gather``, ``ppermute``, ...)
and the runtime lowers their positional forms (what remains after ``vmap``).
Inside a shard_map body their named axes are mesh axes: each becomes one XLA
collective whose replica groups list, per combination of the other axes'
coordinates, the devices along the named axes (devices numbered by their
position in the mesh, the program's partition ids), with
``use_global_device_ids`` as JAX emits them. The rules here wrap the runtime's:
a collective with no mesh axis in its params is handed to them unchanged.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy as np

from modjax.batching import (
    all_gather_p,
    all_to_all_p,
    axis_index_p,
    pmax_p,
    pmin_p,
    ppermute_p,
    psum_p,
    psum_scatter_p,
)
from modjax.lowering import (
    channel_handle,
    dense_int_elements,
    hlo,
    ir,
    ir_constant,
    ir_type,
    ir_types,
    lower_jaxpr_inline,
    lowering_rules,
    manual_computation,
    register_lowering,
    sdy_return,
)
from modjax.tracecore.abstract import ShapedArray, physical_aval

from .mesh import Mesh
from .named_sharding import NamedSharding
from .shard_map import shard_map_p

__all__ = ["mesh_replica_groups", "enclosing_shard_map_mesh"]


class _Context(threading.local):
    def __init__(self):
        self.meshes: list[Mesh] = []
        self.manual: list[tuple[str, ...]] = []


_context = _Context()


@contextmanager
def _manual_mesh(mesh: Mesh, manual_axes):
    _context.meshes.append(mesh)
    _context.manual.append(tuple(manual_axes))
    try:
        yield
    finally:
        _context.meshes.pop()
        _context.manual.pop()


def enclosing_shard_map_mesh() -> Mesh | None:
    """Return the mesh of the shard_map whose body is being lowered, or None outside one."""
    return _context.meshes[-1] if _context.meshes else None


def _mesh_axes_of(entries) -> tuple[str, ...]:
    """The entries of a collective's axis param that are manual axes of the enclosing shard_map."""
    if not _context.meshes:
        return ()
    manual = _context.manual[-1]
    entries = entries if isinstance(entries, tuple) else (entries,)
    return tuple(e for e in entries if isinstance(e, str) and e in manual)


def replica_groups(mesh: Mesh, axes: tuple[str, ...], index_groups=None) -> list[list[int]]:
    """Partition ids grouped along ``axes`` (row-major in their order), one group per rest.

    ``index_groups`` (a collective's ``axis_index_groups``) splits each group
    further: each lists positions along ``axes``. Groups of unequal sizes are
    padded with -1, as StableHLO's replica groups allow.
    """
    ids = np.arange(mesh.size).reshape(mesh.axis_sizes)
    rest = [n for n in mesh.axis_names if n not in axes]
    order = [mesh.axis_names.index(n) for n in (*rest, *axes)]
    size = int(np.prod([mesh.axis_size(a) for a in axes]))
    rows = ids.transpose(order).reshape(-1, size).tolist()
    if index_groups is None:
        return rows
    width = max(len(g) for g in index_groups)
    return [[row[i] for i in g] + [-1] * (width - len(g)) for row in rows for g in index_groups]


def mesh_replica_groups(ctx, axis_name, axis_index_groups=None) -> list[list[int]]:
    """Return the replica groups of a collective over the enclosing shard_map's axes ``axis_name``.

    For collectives declared above this package (``ragged_all_to_all``): every
    entry must be a manual mesh axis there; otherwise NotImplementedError names
    the primitive (such a collective has no lowering over vmap axes).
    """
    named = _mesh_axes_of(axis_name)
    entries = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if not named or len(named) != len(entries):
        raise NotImplementedError(
            f"{ctx.primitive.name} over {entries} outside the manual axes of a shard_map"
        )
    return replica_groups(_context.meshes[-1], named, axis_index_groups)


def _groups_attr(groups) -> ir.Attribute:
    return dense_int_elements(np.asarray(groups, np.int64))


# --- reductions ------------------------------------------------------------------------------


def _reduce_body(kind: str, dtype):
    if kind == "sum":
        return hlo.or_ if dtype == np.bool_ else hlo.add
    if dtype == np.bool_:
        return hlo.or_ if kind == "max" else hlo.and_
    return hlo.maximum if kind == "max" else hlo.minimum


def _all_reduce(kind: str, x, aval: ShapedArray, groups) -> ir.Value:
    op = hlo.AllReduceOp(
        [ir_type(aval)], [x], _groups_attr(groups),
        channel_handle=channel_handle(), use_global_device_ids=True,
    )  # fmt: skip
    scalar = ir_type(ShapedArray((), aval.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([_reduce_body(kind, aval.dtype)(*block.arguments)])
    return op.results[0]


def _reduction_rule(prim, kind: str):
    positional_rule = lowering_rules[prim]

    def rule(ctx, x, *, axes, axis_index_groups):
        named = _mesh_axes_of(axes)
        if not named:
            return positional_rule(ctx, x, axes=axes, axis_index_groups=axis_index_groups)
        rest = tuple(a for a in axes if a not in named)
        aval_out = ctx.avals_out[0]
        if rest and axis_index_groups is not None:
            raise NotImplementedError(
                f"{ctx.primitive.name} with axis_index_groups over mesh axes and positional or "
                f"vmap axes at once ({axes})"
            )
        if rest:
            mid = ShapedArray(aval_out.shape, aval_out.dtype)
            x = positional_rule(
                ctx.replace(avals_out=[mid]), x, axes=rest, axis_index_groups=axis_index_groups
            )
        elif ctx.avals_in[0].dtype != aval_out.dtype:  # psum of booleans counts in int32
            x = hlo.convert(ir_type(ShapedArray(ctx.avals_in[0].shape, aval_out.dtype)), x)
        mesh = _context.meshes[-1]
        return _all_reduce(kind, x, aval_out, replica_groups(mesh, named, axis_index_groups))

    return rule


# --- gathers, scatters, permutations ---------------------------------------------------------


def _single(ctx, entries) -> tuple[str, ...]:
    named = _mesh_axes_of(entries)
    entries = entries if isinstance(entries, tuple) else (entries,)
    if len(named) != len(entries):
        raise NotImplementedError(
            f"{ctx.primitive.name} over {entries} inside shard_map: mixing mesh axes with vmap axes"
        )
    return named


def _reshape(x, aval, shape) -> ir.Value:
    return hlo.reshape(ir_type(ShapedArray(tuple(shape), aval.dtype)), x)


def _all_gather_rule(
    ctx, x, *, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None
):
    named = _mesh_axes_of(axis_name)
    if not named:
        return _previous[all_gather_p](ctx, x, axis_name=axis_name,
                                       all_gather_dimension=all_gather_dimension,
                                       axis_size=axis_size, tiled=tiled)  # fmt: skip
    named = _single(ctx, axis_name)
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    dim = all_gather_dimension
    if not tiled:  # gather along a new axis of size 1
        shape = list(aval_in.shape)
        shape.insert(dim, 1)
        x = _reshape(x, aval_in, shape)
    tiled_shape = list(aval_in.shape) if tiled else shape
    tiled_shape[dim] *= axis_size
    op = hlo.AllGatherOp(
        [ir_type(ShapedArray(tuple(tiled_shape), aval_in.dtype))], [x], dim,
        _groups_attr(replica_groups(_context.meshes[-1], named, axis_index_groups)),
        channel_handle=channel_handle(), use_global_device_ids=True,
    )  # fmt: skip
    out = op.results[0]
    return out if tuple(tiled_shape) == aval_out.shape else _reshape(out, aval_out, aval_out.shape)


def _psum_scatter_rule(
    ctx, x, *, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None
):
    named = _mesh_axes_of(axis_name)
    if not named:
        return _previous[psum_scatter_p](ctx, x, axis_name=axis_name,
                                         scatter_dimension=scatter_dimension,
                                         axis_size=axis_size, tiled=tiled)  # fmt: skip
    named = _single(ctx, axis_name)
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    dim = scatter_dimension
    shape = list(aval_in.shape)
    shape[dim] //= axis_size
    op = hlo.ReduceScatterOp(
        ir_type(ShapedArray(tuple(shape), aval_in.dtype)), x, dim,
        _groups_attr(replica_groups(_context.meshes[-1], named, axis_index_groups)),
        channel_handle=channel_handle(), use_global_device_ids=True,
    )  # fmt: skip
    scalar = ir_type(ShapedArray((), aval_in.dtype))
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([_reduce_body("sum", aval_in.dtype)(*block.arguments)])
    out = op.results[0]
    return out if tuple(shape) == aval_out.shape else _reshape(out, aval_out, aval_out.shape)


def _ppermute_rule(ctx, x, *, axis_name, perm):
    named = _mesh_axes_of(axis_name)
    if not named:
        return _previous[ppermute_p](ctx, x, axis_name=axis_name, perm=perm)
    named = _single(ctx, axis_name)
    pairs = [
        [group[src], group[dst]]
        for group in replica_groups(_context.meshes[-1], named)
        for src, dst in perm
    ]
    op = hlo.CollectivePermuteOp(
        x, dense_int_elements(np.asarray(pairs, np.int64)), channel_handle=channel_handle()
    )
    return op.results[0]


def _all_to_all_rule(
    ctx, x, *, axis_name, split_axis, concat_axis, axis_size, tiled, axis_index_groups=None
):
    named = _mesh_axes_of(axis_name)
    if not named:
        return _previous[all_to_all_p](ctx, x, axis_name=axis_name, split_axis=split_axis,
                                       concat_axis=concat_axis, axis_size=axis_size,
                                       tiled=tiled)  # fmt: skip
    named = _single(ctx, axis_name)
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    shape = list(aval_in.shape)
    if not tiled:  # the split axis (of size axis_size) moves to a new axis at concat_axis
        shape.insert(concat_axis, 1)
        split = split_axis + (1 if concat_axis <= split_axis else 0)
        x = _reshape(x, aval_in, shape)
        concat = concat_axis
    else:
        split, concat = split_axis, concat_axis
    out_shape = list(shape)
    out_shape[split] //= axis_size
    out_shape[concat] *= axis_size
    op = hlo.AllToAllOp(
        [x], split, concat, axis_size,
        _groups_attr(replica_groups(_context.meshes[-1], named, axis_index_groups)),
        channel_handle=channel_handle(),
        results=[ir_type(ShapedArray(tuple(out_shape), aval_in.dtype))],
    )  # fmt: skip
    out = op.results[0]
    return out if tuple(out_shape) == aval_out.shape else _reshape(out, aval_out, aval_out.shape)


def _axis_index_rule(ctx, *, axis_name):
    named = _mesh_axes_of(axis_name)
    if not named:
        return _previous[axis_index_p](ctx, axis_name=axis_name)
    entries = axis_name if isinstance(axis_name, tuple) else (axis_name,)
    if any(not isinstance(e, int) and e not in named for e in entries):
        raise NotImplementedError(
            f"axis_index over {entries} inside shard_map: mixing mesh axes with other named axes"
        )
    named = entries  # mesh axes, and the sizes of vmaps' axes (positional, an iota each)
    mesh = _context.meshes[-1]
    auto = [a for a in mesh.axis_names if a not in _context.manual[-1]]
    if auto:
        # partition_id means something only where every axis is manual (as JAX: a nested
        # manual computation over the automatic axes computes the index).
        i32 = ctx.avals_out[0]
        name = ctx.module_ctx.sdy_mesh_name(mesh.shape_tuple)
        op, block = manual_computation(
            [], [ir_type(i32)], [], [], [f"<@{name}, [{', '.join(['{}'] * len(i32.shape))}]>"], auto
        )
        with ir.InsertionPoint(block):
            sdy_return([_axis_index_value(ctx, mesh, named)])
        return op.results[0]
    return _axis_index_value(ctx, mesh, named)


def _axis_index_value(ctx, mesh: Mesh, entries) -> ir.Value:
    """The index row-major over ``entries``: mesh axes (from partition_id) and vmaps' sizes.

    A vmap's axis (an int entry: its size) contributes an iota along its own dimension of
    the result, as ``axis_index(('x', 'v'))`` is ``index_x * size_v + iota_v``.
    """
    out = ctx.avals_out[0]
    sizes = [e if isinstance(e, int) else mesh.axis_size(e) for e in entries]
    pid = None
    index = None
    dim = 0
    for k, entry in enumerate(entries):
        stride = int(np.prod(sizes[k + 1 :]))
        if isinstance(entry, int):
            term = hlo.iota(ir_type(out), dim)
            dim += 1
        else:
            if pid is None:
                u32 = ShapedArray((), np.dtype(np.uint32))
                pid = hlo.PartitionIdOp(results=[ir_type(u32)]).results[0]
            device_stride = int(np.prod(mesh.axis_sizes[mesh.axis_names.index(entry) + 1 :]))
            coord = hlo.remainder(
                hlo.divide(pid, ir_constant(np.array(device_stride, np.uint32))),
                ir_constant(np.array(mesh.axis_size(entry), np.uint32)),
            )
            coord = hlo.convert(ir_type(ShapedArray((), out.dtype)), coord)
            term = hlo.broadcast_in_dim(ir_type(out), coord, [])
        if stride != 1:
            scale = hlo.broadcast_in_dim(ir_type(out), ir_constant(np.array(stride, out.dtype)), [])
            term = hlo.multiply(term, scale)
        index = term if index is None else hlo.add(index, term)
    return index


# --- shard_map ---------------------------------------------------------------------------------


def _sdy_text(mesh: Mesh, spec, aval, name: str) -> str:
    # A key array's values are stored with trailing dimensions its spec leaves whole.
    ndim = len(physical_aval(aval).shape)
    return NamedSharding(mesh, spec)._to_sdy_sharding(ndim, name).removeprefix("#sdy.sharding")


def _shard_map_rule(ctx, *args, jaxpr, mesh, in_specs, out_specs, manual_axes, **_):
    name = ctx.module_ctx.sdy_mesh_name(mesh.shape_tuple)
    in_texts = [_sdy_text(mesh, s, a, name) for s, a in zip(in_specs, ctx.avals_in, strict=True)]
    out_texts = [_sdy_text(mesh, s, a, name) for s, a in zip(out_specs, ctx.avals_out, strict=True)]
    op, block = manual_computation(
        args, ir_types(ctx.avals_out), ir_types(jaxpr.in_avals), in_texts, out_texts,
        manual_axes,
    )  # fmt: skip
    with ir.InsertionPoint(block), _manual_mesh(mesh, manual_axes):
        outs = lower_jaxpr_inline(ctx, jaxpr, list(block.arguments))
        sdy_return(outs)
    return list(op.results)


_previous = {
    p: lowering_rules[p]
    for p in (all_gather_p, psum_scatter_p, ppermute_p, all_to_all_p, axis_index_p)
}
register_lowering(psum_p, _reduction_rule(psum_p, "sum"))
register_lowering(pmax_p, _reduction_rule(pmax_p, "max"))
register_lowering(pmin_p, _reduction_rule(pmin_p, "min"))
register_lowering(all_gather_p, _all_gather_rule)
register_lowering(psum_scatter_p, _psum_scatter_rule)
register_lowering(ppermute_p, _ppermute_rule)
register_lowering(all_to_all_p, _all_to_all_rule)
register_lowering(axis_index_p, _axis_index_rule)
register_lowering(shard_map_p, _shard_map_rule)
