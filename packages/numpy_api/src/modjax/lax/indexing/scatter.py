"""The scatter family: ``scatter``, ``scatter-add``/``-sub``/``-mul``/``-min``/``-max``.

Each writes (or combines) windows of updates into an operand at a batch of
indices; one declaration per primitive with the combining op as the region.
The autodiff rules follow: add/sub are linear (transposes are gathers);
``scatter``'s JVP numbers the updates so only the winner of repeated indices
counts; ``scatter-mul`` and ``scatter-min``/``-max`` (ties split evenly) have their own.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, ir, ir_type, lower_fun, register_lowering
from modjax.lowering import lowering_rules as _lowering_rules
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.memory_spaces import memory_space_rules

from .. import elementwise as _ew
from .. import structural as _st
from .._common import ANY, NUM, Category, aval_of, check_dtype, kind, reducer_region
from ._shared import (
    _batch_size,
    _check_batching,
    _check_in_range,
    _check_indices,
    _check_sorted_unique,
    _check_unique,
    _front,
    _instantiate,
    _move_to_front,
    _shift,
    _zeros,
)
from .dimension_numbers import (
    CLIP,
    FILL_OR_DROP,
    PROMISE_IN_BOUNDS,
    GatherScatterMode,
    ScatterDimensionNumbers,
    _register_param_text,
    _scatter_dnums,
    _scatter_to_gather_dnums,
)
from .gather import gather_p


def _window_sizes(dn: ScatterDimensionNumbers, operand_ndim: int, update_shape) -> list[int]:
    """Return each operand dimension's window size for updates of ``update_shape``."""
    sizes = []
    window = iter(dn.update_window_dims)
    for d in range(operand_ndim):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(update_shape[next(window)])
    return sizes


def _scatter_shape_rule(name, operand, indices, update_shape, dn):
    _check_indices(name, indices)
    if kind(operand.dtype) == "?" and not isinstance(operand.dtype, dtypes.ExtendedDType):
        raise TypeError(f"{name} does not accept operand dtype {operand.dtype}")
    update_rank = len(update_shape)
    _check_sorted_unique(
        name, "update_window_dims", dn.update_window_dims, update_rank, "updates rank"
    )
    _check_sorted_unique(
        name, "inserted_window_dims", dn.inserted_window_dims, operand.ndim, "operand rank"
    )
    _check_batching(
        name,
        operand,
        indices,
        dn.operand_batching_dims,
        dn.scatter_indices_batching_dims,
        "operand_batching_dims",
        "scatter_indices_batching_dims",
    )
    if set(dn.inserted_window_dims) & set(dn.operand_batching_dims):
        raise TypeError(
            f"{name} inserted_window_dims and operand_batching_dims must be disjoint; got "
            f"{dn.inserted_window_dims} and {dn.operand_batching_dims}."
        )
    if update_rank != len(dn.update_window_dims) + indices.ndim - 1:
        raise TypeError(
            f"{name} updates must have rank len(update_window_dims) + indices rank - 1 = "
            f"{len(dn.update_window_dims) + indices.ndim - 1}; got updates of shape "
            f"{update_shape} with update_window_dims {dn.update_window_dims} and indices of "
            f"shape {indices.shape}."
        )
    windows = len(dn.update_window_dims) + len(dn.inserted_window_dims)
    if windows + len(dn.operand_batching_dims) != operand.ndim:
        raise TypeError(
            f"{name} operand rank {operand.ndim} must equal the number of update_window_dims, "
            f"inserted_window_dims and operand_batching_dims; got {dn}."
        )
    if len(dn.scatter_dims_to_operand_dims) != indices.shape[-1]:
        raise TypeError(
            f"{name} scatter_dims_to_operand_dims has {len(dn.scatter_dims_to_operand_dims)} "
            f"entries but the index vector (the last dimension of indices of shape "
            f"{indices.shape}) has {indices.shape[-1]}."
        )
    sdod = dn.scatter_dims_to_operand_dims
    _check_unique(name, "scatter_dims_to_operand_dims", sdod)
    _check_in_range(name, "scatter_dims_to_operand_dims", sdod, operand.ndim, "operand rank")
    if set(sdod) & set(dn.operand_batching_dims):
        raise TypeError(
            f"{name} scatter_dims_to_operand_dims and operand_batching_dims must be disjoint; "
            f"got {sdod} and {dn.operand_batching_dims}."
        )
    sizes = _window_sizes(dn, operand.ndim, update_shape)
    # Only the updates' window dimensions are bounded by the operand's (as JAX checks):
    # an inserted or batching dimension of size 0 (vmap over an empty batch) is fine.
    implied = set(dn.inserted_window_dims) | set(dn.operand_batching_dims)
    for d, (w, s) in enumerate(zip(sizes, operand.shape, strict=True)):
        if w > s and d not in implied:
            raise TypeError(
                f"{name} window size {w} of operand dimension {d} exceeds its size {s}; got "
                f"operand shape {operand.shape} and updates shape {update_shape}."
            )
    scatter_dims = [d for d in range(update_rank) if d not in dn.update_window_dims]
    for k, (u, i) in enumerate(zip(scatter_dims, range(indices.ndim - 1), strict=True)):
        if update_shape[u] != indices.shape[i]:
            raise TypeError(
                f"{name}: the bounds of the scatter dimensions of updates must be those of the "
                f"index batch dimensions; for scatter dimension {k}, updates bound is "
                f"{update_shape[u]}, indices bound is {indices.shape[i]} (updates shape "
                f"{update_shape}, indices shape {indices.shape})."
            )


def _scatter_abstract_eval(
    name,
    accepted,
    combine_name,
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    indices_are_sorted,
    unique_indices,
    mode,
):
    if combine_name is not None and not isinstance(operand.dtype, dtypes.ExtendedDType):
        # JAX traces the combining function on the operand's scalar type first: a bool
        # scatter-add fails as ``add`` of bools, in add's words.
        check_dtype(combine_name, operand, accepted, position=0)
    if operand.dtype != updates.dtype:
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            f"{dtypes.dtype_name(operand.dtype)}, {dtypes.dtype_name(updates.dtype)}."
        )
    if not (name == "scatter" and isinstance(operand.dtype, dtypes.ExtendedDType)):
        check_dtype(name, operand, accepted)  # a plain scatter also moves keys
    _scatter_shape_rule(name, operand, indices, updates.shape, dimension_numbers)
    return ShapedArray(operand.shape, operand.dtype, operand.weak_type)


def _scatter_attr(dn: ScatterDimensionNumbers, index_vector_dim: int):
    return hlo.ScatterDimensionNumbers.get(
        update_window_dims=list(dn.update_window_dims),
        inserted_window_dims=list(dn.inserted_window_dims),
        input_batching_dims=list(dn.operand_batching_dims),
        scatter_indices_batching_dims=list(dn.scatter_indices_batching_dims),
        scattered_dims_to_operand_dims=list(dn.scatter_dims_to_operand_dims),
        index_vector_dim=index_vector_dim,
    )


def _clamp_indices(indices, operand_shape, dn: ScatterDimensionNumbers, update_shape):
    """Clamp each index vector so its window lies inside the operand (mode CLIP)."""
    aval = aval_of(indices)
    dtype = aval.dtype
    info = np.iinfo(dtype)
    sizes = _window_sizes(dn, len(operand_shape), update_shape)
    upper = np.array(
        [
            max(min(operand_shape[d] - sizes[d], info.max), 0)
            for d in dn.scatter_dims_to_operand_dims
        ],
        dtype,
    )
    upper = _st.broadcast_in_dim(upper, aval.shape, (aval.ndim - 1,))
    return _ew.clamp(np.zeros((), dtype), indices, upper)


def _scatter_region(ctx, combine: Primitive | None, operand, indices, updates, dn, params):
    """Emit ``stablehlo.scatter`` whose update computation applies ``combine`` (None: replace)."""
    aval = ctx.avals_out[0]
    op = hlo.ScatterOp(
        [ir_type(aval)],
        [operand],
        indices,
        [updates],
        _scatter_attr(dn, ctx.avals_in[1].ndim - 1),
        indices_are_sorted=ir.BoolAttr.get(bool(params["indices_are_sorted"])),
        unique_indices=ir.BoolAttr.get(bool(params["unique_indices"])),
    )
    block = reducer_region(op, aval.dtype)
    with ir.InsertionPoint(block):
        x, y = block.arguments
        if combine is None:
            result = y
        else:
            scalar = ShapedArray((), aval.dtype)
            sub = ctx.replace(primitive=combine, avals_in=[scalar, scalar], avals_out=[scalar])
            result = _lowering_rules[combine](sub, x, y)
        hlo.return_([result])
    return op.results[0]


def _scatter_lowering(
    prim, combine, ctx, operand, indices, updates, *, dimension_numbers, mode, **params
):
    if mode == CLIP:

        def clipped(operand, indices, updates):
            indices = _clamp_indices(
                indices, aval_of(operand).shape, dimension_numbers, aval_of(updates).shape
            )
            return prim.bind(
                operand,
                indices,
                updates,
                dimension_numbers=dimension_numbers,
                mode=PROMISE_IN_BOUNDS,
                **params,
            )

        return lower_fun(clipped)(ctx, operand, indices, updates)
    # XLA skips windows that are not entirely in bounds: that is FILL_OR_DROP.
    return _scatter_region(ctx, combine, operand, indices, updates, dimension_numbers, params)


def _declare_scatter(name: str, accepted: Sequence[Category], combine: Primitive | None):
    prim = Primitive(name)
    combine_name = None if combine is None else combine.name
    prim.def_abstract_eval(partial(_scatter_abstract_eval, name, accepted, combine_name))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, partial(_scatter_lowering, prim, combine))
    _register_param_text(prim, ScatterDimensionNumbers)
    batching_rules[prim] = partial(_scatter_batching, prim)
    return prim


def _scatter_batching(prim, args, dims, *, dimension_numbers, **params):
    operand, indices, updates = args
    od, idd, ud = dims
    size = _batch_size(args, dims)
    operand = _front(operand, od, size)
    if size == 0:  # zero members update nothing (and size-1 windows of a size-0 axis fail)
        return operand, 0
    updates = _front(updates, ud, size)
    dn = dimension_numbers
    if idd is None:  # the batch axis is one more window dimension
        dn = ScatterDimensionNumbers(
            update_window_dims=(0, *_shift(dn.update_window_dims)),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=_shift(dn.operand_batching_dims),
            scatter_indices_batching_dims=dn.scatter_indices_batching_dims,
        )
    else:  # a batching dimension of the operand, the indices and the updates
        indices = _move_to_front(indices, idd)
        dn = ScatterDimensionNumbers(
            update_window_dims=_shift(dn.update_window_dims),
            inserted_window_dims=_shift(dn.inserted_window_dims),
            scatter_dims_to_operand_dims=_shift(dn.scatter_dims_to_operand_dims),
            operand_batching_dims=(0, *_shift(dn.operand_batching_dims)),
            scatter_indices_batching_dims=(0, *_shift(dn.scatter_indices_batching_dims)),
        )
    return prim.bind(operand, indices, updates, dimension_numbers=dn, **params), 0


scatter_p = _declare_scatter("scatter", ANY, None)
scatter_add_p = _declare_scatter("scatter-add", NUM, _ew.add_p)
scatter_sub_p = _declare_scatter("scatter-sub", NUM, _ew.sub_p)
scatter_mul_p = _declare_scatter("scatter-mul", NUM, _ew.mul_p)
scatter_min_p = _declare_scatter("scatter-min", ANY, _ew.min_p)
scatter_max_p = _declare_scatter("scatter-max", ANY, _ew.max_p)
# A scatter's result is in its operand's memory space, whatever its indices' and
# updates' (JAX's scatter memory-space rule).
for _p in (scatter_p, scatter_add_p, scatter_sub_p, scatter_mul_p, scatter_min_p, scatter_max_p):
    memory_space_rules[_p] = lambda avals, **params: [avals[0].memory_space]


def _scatter_fn(prim: Primitive, doc: str) -> Callable:
    def fn(
        operand,
        scatter_indices,
        updates,
        dimension_numbers: ScatterDimensionNumbers,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode: str | GatherScatterMode | None = None,
    ):
        return prim.bind(
            operand,
            scatter_indices,
            updates,
            dimension_numbers=_scatter_dnums(dimension_numbers),
            indices_are_sorted=bool(indices_are_sorted),
            unique_indices=bool(unique_indices),
            mode=GatherScatterMode.from_any(mode),
        )

    fn.__doc__ = doc
    return fn


_SCATTER_DOC = (
    "{what} (jax.lax.{name}).\n\n    The last dimension of ``scatter_indices`` is the index "
    'vector. ``mode`` None or ``"drop"`` skips\n    out-of-bounds windows, ``"clip"`` '
    "clamps them into bounds.\n    "
)
scatter = _scatter_fn(
    scatter_p,
    _SCATTER_DOC.format(
        what="Replace windows of ``operand`` by ``updates`` at ``scatter_indices``", name="scatter"
    ),
)
scatter_add = _scatter_fn(
    scatter_add_p,
    _SCATTER_DOC.format(what="Add ``updates`` into windows of ``operand``", name="scatter_add"),
)
scatter_sub = _scatter_fn(
    scatter_sub_p,
    _SCATTER_DOC.format(
        what="Subtract ``updates`` from windows of ``operand``", name="scatter_sub"
    ),
)
scatter_mul = _scatter_fn(
    scatter_mul_p,
    _SCATTER_DOC.format(what="Multiply windows of ``operand`` by ``updates``", name="scatter_mul"),
)
scatter_min = _scatter_fn(
    scatter_min_p,
    _SCATTER_DOC.format(
        what="Take the minimum of windows of ``operand`` and ``updates``", name="scatter_min"
    ),
)
scatter_max = _scatter_fn(
    scatter_max_p,
    _SCATTER_DOC.format(
        what="Take the maximum of windows of ``operand`` and ``updates``", name="scatter_max"
    ),
)


# --- scatter rules: autodiff ------------------------------------------------------------------


def _gather_updates(x, indices, dn, operand_ndim, update_shape, mode, fill, **flags):
    """Gather, at each update, what a scatter with ``dn`` and ``mode`` writes there.

    The gather uses the scatter's mode: a dropped window reads ``fill``, a
    clamped one the clamped window.
    """
    return gather_p.bind(
        x,
        indices,
        dimension_numbers=_scatter_to_gather_dnums(dn),
        slice_sizes=tuple(_window_sizes(dn, operand_ndim, update_shape)),
        mode=mode,
        fill_value=fill if mode == FILL_OR_DROP else None,
        **flags,
    )


def _scatter_linear_jvp(prim, primals, tangents, **params):
    operand, indices, updates = primals
    out = prim.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        return out, Zero(t_op.aval)
    t_out = prim.bind(_instantiate(t_op, operand), indices, _instantiate(t_up, updates), **params)
    return out, t_out


def _scatter_add_transpose(
    negate,
    ct,
    operand,
    indices,
    updates,
    *,
    dimension_numbers,
    mode,
    indices_are_sorted,
    unique_indices,
):
    if is_undefined_primal(indices):
        raise ValueError("scatter-add is not linear in its indices")
    op_ct = ct if is_undefined_primal(operand) else None
    up_ct = None
    if is_undefined_primal(updates):
        aval = updates.aval
        if type(ct) is Zero:
            up_ct = Zero(aval)
        else:
            up_ct = _gather_updates(
                ct,
                indices,
                dimension_numbers,
                len(aval_of(ct).shape),
                aval.shape,
                mode,
                0,
                indices_are_sorted=indices_are_sorted,
                unique_indices=unique_indices,
            )
            if negate:
                up_ct = _ew.neg(up_ct)
    return [op_ct, None, up_ct]


jvp_rules[scatter_add_p] = partial(_scatter_linear_jvp, scatter_add_p)
jvp_rules[scatter_sub_p] = partial(_scatter_linear_jvp, scatter_sub_p)
transpose_rules[scatter_add_p] = partial(_scatter_add_transpose, False)
transpose_rules[scatter_sub_p] = partial(_scatter_add_transpose, True)


def _update_ids(updates_aval: ShapedArray, dn: ScatterDimensionNumbers):
    """Number the scatter positions of the updates 1, 2, ... (constant over each window)."""
    scatter_dims = tuple(d for d in range(updates_aval.ndim) if d not in dn.update_window_dims)
    scatter_shape = tuple(updates_aval.shape[d] for d in scatter_dims)
    count = math.prod(scatter_shape)
    dtype = np.dtype(np.int32) if count < 2**31 - 1 else np.dtype(np.int64)
    ids = _st.reshape(_ew.add(_st.iota(dtype, count), np.ones((), dtype)), scatter_shape)
    return _st.broadcast_in_dim(ids, updates_aval.shape, scatter_dims), dtype


def _scatter_jvp(primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode):
    """JVP of scatter (replace): with repeated indices, only the update that wins counts.

    The updates are numbered; scattering the numbers tells which update landed
    on each operand element, and gathering them back tells each update whether
    it won. Value and tangent are then sums of disjoint contributions.
    """
    operand, indices, updates = primals
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        out = scatter_p.bind(operand, indices, updates, **params)
        return out, Zero(t_op.aval)
    if unique_indices:
        return _scatter_linear_jvp(scatter_p, primals, tangents, **params)
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    ids, id_dtype = _update_ids(up_aval, dimension_numbers)
    id_zeros = _st.full(op_aval.shape, 0, id_dtype)
    won_by = scatter_p.bind(id_zeros, indices, ids, **params)
    winner = _gather_updates(
        won_by,
        indices,
        dimension_numbers,
        op_aval.ndim,
        up_aval.shape,
        mode,
        0,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
    )
    wins = _ew.eq(ids, winner)
    kept = _ew.eq(won_by, np.zeros((), id_dtype))

    def combine(x, u):
        x = _ew.select_n(kept, _zeros(aval_of(x)), x)
        u = _ew.select_n(wins, _zeros(aval_of(u)), u)
        return scatter_add_p.bind(x, indices, u, **params)

    out = combine(operand, updates)
    return out, combine(_instantiate(t_op, operand), _instantiate(t_up, updates))


def _scatter_transpose(
    ct, operand, indices, updates, *, dimension_numbers, indices_are_sorted, unique_indices, mode
):
    if not unique_indices:
        raise NotImplementedError("scatter transpose is only implemented where unique_indices=True")
    if is_undefined_primal(indices):
        raise ValueError("scatter is not linear in its indices")
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    up_aval = updates.aval if is_undefined_primal(updates) else aval_of(updates)
    op_ct = up_ct = None
    if type(ct) is Zero:
        return [
            Zero(operand.aval) if is_undefined_primal(operand) else None,
            None,
            Zero(up_aval) if is_undefined_primal(updates) else None,
        ]
    if is_undefined_primal(operand):
        op_ct = scatter_p.bind(ct, indices, _zeros(up_aval), **params)
    if is_undefined_primal(updates):
        up_ct = _gather_updates(
            ct,
            indices,
            dimension_numbers,
            len(aval_of(ct).shape),
            up_aval.shape,
            mode,
            0,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
        )
    return [op_ct, None, up_ct]


jvp_rules[scatter_p] = _scatter_jvp
transpose_rules[scatter_p] = _scatter_transpose


def _scatter_mul_jvp(primals, tangents, **params):
    operand, indices, updates = primals
    out = scatter_mul_p.bind(operand, indices, updates, **params)
    t_op, _, t_up = tangents
    t_out = Zero(t_op.aval) if type(t_op) is Zero else None
    if type(t_op) is not Zero:
        t_out = scatter_mul_p.bind(t_op, indices, updates, **params)
    if type(t_up) is not Zero:
        if not params["unique_indices"]:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        spread = scatter_add_p.bind(_zeros(aval_of(operand)), indices, t_up, **params)
        term = _ew.mul(operand, spread)
        t_out = term if type(t_out) is Zero else _ew.add(t_out, term)
    return out, t_out


def _scatter_mul_transpose(
    ct, operand, indices, updates, *, dimension_numbers, mode, indices_are_sorted, unique_indices
):
    params = {
        "dimension_numbers": dimension_numbers,
        "indices_are_sorted": indices_are_sorted,
        "unique_indices": unique_indices,
        "mode": mode,
    }
    if is_undefined_primal(updates):
        if is_undefined_primal(operand):
            raise ValueError("scatter-mul is not jointly linear in its operand and updates")
        if not unique_indices:
            raise NotImplementedError(
                "scatter_mul gradients are only implemented if `unique_indices=True`"
            )
        if type(ct) is Zero:
            return [None, None, Zero(updates.aval)]
        up_ct = _gather_updates(
            _ew.mul(ct, operand),
            indices,
            dimension_numbers,
            len(aval_of(ct).shape),
            updates.aval.shape,
            mode,
            0,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
        )
        return [None, None, up_ct]
    if type(ct) is Zero:
        return [Zero(operand.aval), None, None]
    return [scatter_mul_p.bind(ct, indices, updates, **params), None, None]


jvp_rules[scatter_mul_p] = _scatter_mul_jvp
transpose_rules[scatter_mul_p] = _scatter_mul_transpose


def _scatter_extremal_jvp(
    prim, primals, tangents, *, dimension_numbers, indices_are_sorted, unique_indices, mode
):
    """JVP of scatter-min/max as JAX's: the tangent of each result is shared evenly by its ties.

    The formula and its order of operations are JAX's (so are the bits). JAX's inner
    gathers and scatter-adds use the default mode (fill/drop); with ``mode='clip'`` that
    gives infinities at out-of-bounds indices (a JAX bug), so there they clip too.
    """
    operand, indices, updates = primals
    dn = dimension_numbers
    out = prim.bind(
        operand,
        indices,
        updates,
        dimension_numbers=dn,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    t_op, _, t_up = tangents
    if type(t_op) is Zero and type(t_up) is Zero:
        return out, Zero(t_op.aval)
    op_aval, up_aval = aval_of(operand), aval_of(updates)
    t_op, t_up = _instantiate(t_op, operand), _instantiate(t_up, updates)
    inner = CLIP if mode == CLIP else FILL_OR_DROP

    def at_updates(x):
        return _gather_updates(
            x, indices, dn, op_aval.ndim, up_aval.shape, inner, None,
            indices_are_sorted=False, unique_indices=False,
        )  # fmt: skip

    def add_at(x, u):
        return scatter_add_p.bind(
            x, indices, u, dimension_numbers=dn, indices_are_sorted=False,
            unique_indices=False, mode=inner,
        )  # fmt: skip

    zeros_op, zeros_up = _zeros(op_aval), _zeros(up_aval)
    ones_up = _st.full(up_aval.shape, 1, up_aval.dtype)
    target = at_updates(out)
    successful = _ew.eq(updates, target)
    retained = _ew.eq(at_updates(operand), target)
    num_updates = at_updates(add_at(zeros_op, _ew.select_n(successful, zeros_up, ones_up)))
    num_refs = at_updates(add_at(zeros_op, ones_up))
    one = np.ones((), up_aval.dtype)
    per_update = _ew.select_n(
        retained, _ew.div(one, num_updates), _ew.div(one, _ew.add(num_updates, one))
    )
    update_coef = _ew.select_n(successful, zeros_up, per_update)
    operand_norm = _ew.select_n(retained, zeros_up, _ew.div(one, _ew.add(num_updates, one)))
    operand_coef = _ew.div(_ew.add(np.asarray(-1.0, up_aval.dtype), operand_norm), num_refs)
    t_updates = _ew.add(_ew.mul(at_updates(t_op), operand_coef), _ew.mul(t_up, update_coef))
    t_out = scatter_add_p.bind(
        t_op,
        indices,
        t_updates,
        dimension_numbers=dn,
        indices_are_sorted=indices_are_sorted,
        unique_indices=unique_indices,
        mode=mode,
    )
    return out, t_out


jvp_rules[scatter_min_p] = partial(_scatter_extremal_jvp, scatter_min_p)
jvp_rules[scatter_max_p] = partial(_scatter_extremal_jvp, scatter_max_p)
