"""Shardings in types: how each primitive's result sharding follows from its operands'.

An aval's ``sharding`` (JAX's sharding in types, over a mesh's *explicit*
axes) is None for almost every program; then nothing here runs. Once an aval
with a sharding exists, each traced equation whose operands carry one asks
``sharding_rules[primitive](avals, out, **params)`` for its result's
sharding (the result aval comes from the primitive's abstract eval, with no
sharding). A primitive without a rule gets the generic one: a result of the
shape of its sharded operands (elementwise operations, casts, ``select_n``,
cumulative ops) takes their merged sharding; any other result has none
(unknown in the type: the compiler chooses, as for automatic axes).

A rule sees only the per-dimension entries of a spec (None, an axis name or a
tuple of names), the sizes of the mesh's axes (``sharding.mesh.shape``, for
the rules that check divisibility) and builds the result's sharding with the
operand sharding's ``update(spec=entries)``, so tracecore needs no mesh class.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

from .abstract import (
    ShapedArray,
    reduced_axes,
    sharding_entries,
    unreduced_axes,
    with_type_sharding,
)
from .config import config
from .jaxpr import Literal, subjaxprs
from .options import auto_pcast

__all__ = [
    "ShardingTypeError",
    "context_mesh_sharding",
    "without_sharding_types",
    "sharding_rules",
    "unreduced_rules",
    "apply_sharding_rule",
    "nary_unreduced_rule",
    "keep_unreduced_rule",
    "add_unreduced_rule",
    "mul_unreduced_rule",
    "vma_operand_rules",
    "vma_rules",
    "apply_vma_rule",
    "varying_types",
    "vma_checked",
    "varying_axis_names",
    "order_axes",
    "missing_varying",
    "elementwise_rule",
    "reduce_rule",
    "transpose_rule",
    "broadcast_in_dim_rule",
    "squeeze_rule",
    "reshape_rule",
    "dot_general_rule",
    "varying_shape_rule",
    "dynamic_update_slice_rule",
    "gather_rule",
    "scatter_rule",
    "sort_rule",
    "top_k_rule",
    "cumulative_rule",
    "same_sharding_rule",
    "select_n_rule",
    "clamp_rule",
    "conv_rule",
    "with_entries",
    "type_sharding_str",
]


class ShardingTypeError(Exception):
    """Shardings in types that an operation cannot combine.

    JAX's ``ShardingTypeError``, which JAX does not export from ``jax.errors``.
    """


#: The current mesh's replicated sharding (``jax.set_mesh``; modjax.sharding sets it), or
#: None. Part of jit's keys: under a mesh, values made from operands with no sharding in
#: their type (constants, ``iota``, host data, unsharded arguments) are typed on the
#: mesh, replicated (its ``_type_sharding``: None when the mesh has no explicit axis),
#: and the runtime runs such programs on the mesh's devices, as JAX 0.10.2 does.
context_mesh_sharding = config.make_user_context(None, name="context_mesh")

#: ``sharding_rules[primitive](avals, out, **params) -> out`` with the sharding set.
sharding_rules: dict[Any, Callable] = {}


def _axes(entry) -> tuple[str, ...]:
    if entry is None:
        return ()
    return (entry,) if isinstance(entry, str) else tuple(entry)


def _norm(entry):
    axes = _axes(entry)
    if not axes:
        return None
    return axes[0] if len(axes) == 1 else axes


def _spec_str(entries) -> str:
    return (
        "(" + ", ".join(repr(_norm(e)) for e in entries) + ("," if len(entries) == 1 else "") + ")"
    )


def with_entries(out: ShapedArray, like, entries: Sequence) -> ShapedArray | None:
    """Return ``out`` with the sharding of ``like``'s mesh whose spec is ``entries``."""
    used = [a for e in entries for a in _axes(e)]
    if len(used) != len(set(used)):
        return None  # the caller raises with its own message
    return out.update(sharding=like.update(spec=tuple(_norm(e) for e in entries)))


def _first_sharding(avals):
    for a in avals:
        if a.type_sharding is not None:
            return a.type_sharding
    return None


def _merge(name: str, specs: list[tuple]) -> tuple:
    """Merge per-dimension entries: None yields to a named entry; two names must agree."""
    merged = list(specs[0])
    for spec in specs[1:]:
        for i, e in enumerate(spec):
            if _norm(e) is None:
                continue
            if _norm(merged[i]) is None:
                merged[i] = e
            elif _norm(merged[i]) != _norm(e):
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: "
                    + ", ".join(_spec_str(s) for s in specs)
                    + "."
                )
    return tuple(merged)


def elementwise_rule(name: str, avals: Sequence[ShapedArray], out: ShapedArray) -> ShapedArray:
    """Give ``out`` the merged sharding of the operands of its rank (JAX's broadcasting rule).

    A size-1 dimension broadcast to the result's size contributes no entry.
    """
    like = _first_sharding(avals)
    specs = [
        tuple(
            e if n == m else None
            for n, m, e in zip(a.shape, out.shape, sharding_entries(a), strict=True)
        )
        for a in avals
        if a.ndim == out.ndim
    ]
    if not specs or like is None:
        return out
    merged = _merge(name, specs)
    result = with_entries(out, like, merged)
    if result is None:
        raise ShardingTypeError(
            f"{name} got incompatible shardings for broadcasting: "
            + ", ".join(_spec_str(s) for s in specs)
            + "."
        )
    return result


def reduce_rule(avals, out, *, axes, **_):
    """A reduction over ``axes`` keeps the other dimensions' entries."""
    (aval, *_rest) = avals
    if aval.type_sharding is None:
        return out
    axes = {a % max(aval.ndim, 1) for a in axes}
    kept = [e for i, e in enumerate(sharding_entries(aval)) if i not in axes]
    return with_entries(out, aval.type_sharding, kept)


def transpose_rule(avals, out, *, permutation, **_):
    """A transpose permutes the entries."""
    (aval,) = avals
    entries = sharding_entries(aval)
    return with_entries(out, aval.type_sharding, [entries[p] for p in permutation])


def broadcast_in_dim_rule(avals, out, *, shape, broadcast_dimensions, **_):
    """An operand dimension keeps its entry where it keeps its size; new dimensions have none."""
    aval = avals[0]
    if aval.type_sharding is None:
        return out
    entries = [None] * len(shape)
    for src, dst in enumerate(broadcast_dimensions):
        if aval.shape[src] == shape[dst]:
            entries[dst] = sharding_entries(aval)[src]
    return with_entries(out, aval.type_sharding, entries)


def squeeze_rule(avals, out, *, dimensions, **_):
    """Squeezed (size-1) dimensions drop their entries."""
    (aval,) = avals
    drop = {d % aval.ndim for d in dimensions}
    kept = [e for i, e in enumerate(sharding_entries(aval)) if i not in drop]
    return with_entries(out, aval.type_sharding, kept)


def _reshape_error(aval, new_sizes):
    return ShardingTypeError(
        "This reshape is not supported. Please specify the sharding of the output via the "
        "`out_sharding` argument of jax.lax.reshape. Got operand type: "
        f"{aval.str_short()}, new sizes: {tuple(new_sizes)}"
    )


def _groups(old: Sequence[int], new: Sequence[int]):
    """Pair runs of ``old``'s dimensions with runs of ``new``'s of equal product (size-1s apart).

    Returns ``[(old_dims, new_dims), ...]`` covering every non-1 dimension of
    both, each pair as short as possible, or None when the sizes do not tile.
    """
    olds = [i for i, n in enumerate(old) if n != 1]
    news = [j for j, n in enumerate(new) if n != 1]
    out, i, j = [], 0, 0
    while i < len(olds) and j < len(news):
        go, gn = [olds[i]], [news[j]]
        po, pn = old[olds[i]], new[news[j]]
        i, j = i + 1, j + 1
        while po != pn:
            if po < pn and i < len(olds):
                go.append(olds[i])
                po *= old[olds[i]]
                i += 1
            elif pn < po and j < len(news):
                gn.append(news[j])
                pn *= new[news[j]]
                j += 1
            else:
                return None
        out.append((go, gn))
    return out if i == len(olds) and j == len(news) else None


def _spread(sharding, axes: Sequence[str], sizes: Sequence[int]) -> list | None:
    """Give ``axes``, in order, to the dimensions of ``sizes``, major first; None if uneven."""
    mesh = dict(sharding.mesh.shape)
    rest = list(axes)
    entries = []
    for n in sizes:
        taken = []
        while n > 1 and rest:
            n, r = divmod(n, mesh[rest[0]])
            if r:
                return None
            taken.append(rest.pop(0))
        entries.append(tuple(taken))
    return None if rest else entries


def reshape_rule(avals, out, *, new_sizes, **_):
    """A reshape keeps entries where it only adds or removes size-1 dimensions, or splits or
    merges one run of dimensions with the mesh axes landing on the major part (JAX's rule).

    A split dimension's axes go to the leading new dimensions that they divide
    (``f32[8@x,8]`` to ``(2, 4, 8)`` is ``f32[2@x,4,8]``); merged dimensions
    must be sharded major-first (``f32[4@x,8,8]`` to ``(32, 8)`` is
    ``f32[32@x,8]``). Any other reshape of a sharded operand would move data
    between devices: JAX asks for ``out_sharding`` there and so do we
    (ShardingTypeError).
    """
    aval = avals[0]
    entries = sharding_entries(aval)
    if all(_norm(e) is None for e in entries):
        return with_entries(out, aval.type_sharding, [None] * len(new_sizes))
    groups = _groups(aval.shape, new_sizes)
    if groups is None or sum(len(go) > 1 or len(gn) > 1 for go, gn in groups) > 1:
        raise _reshape_error(aval, new_sizes)
    result: list = [None] * len(new_sizes)
    for go, gn in groups:
        axes = [a for d in go for a in _axes(entries[d])]
        if not axes:
            continue
        if len(go) > 1 and len(gn) > 1:
            raise _reshape_error(aval, new_sizes)
        if len(go) > 1:  # a merge: a sharded dimension after an unsharded one splits it
            sharded = [bool(_axes(entries[d])) for d in go]
            if sharded != sorted(sharded, reverse=True):
                raise _reshape_error(aval, new_sizes)
        spread = _spread(aval.type_sharding, axes, [new_sizes[d] for d in gn])
        if spread is None:
            raise _reshape_error(aval, new_sizes)
        for d, e in zip(gn, spread, strict=True):
            result[d] = e
    return with_entries(out, aval.type_sharding, result)


def dot_general_rule(avals, out, *, dimension_numbers, **_):
    """Batch dimensions (lhs's entries), then lhs's and rhs's free dimensions keep their entries.

    Batch and contracting dimensions split differently on the two sides raise
    JAX's ShardingTypeError; a contracting dimension split on both sides leaves
    it ambiguous whether the result is reduced over those axes or scattered, and
    JAX asks for ``out_sharding``; so does a result that would use an axis twice.
    """
    lhs, rhs = avals
    (lc, rc), (lb, rb) = dimension_numbers
    le, re = sharding_entries(lhs), sharding_entries(rhs)
    lbs, rbs = tuple(_norm(le[d]) for d in lb), tuple(_norm(re[d]) for d in rb)
    lcs, rcs = tuple(_norm(le[d]) for d in lc), tuple(_norm(re[d]) for d in rc)
    for what, ls, rs in (("batch dimensions and rhs batch dimensions", lbs, rbs),
                         ("contracting dimensions", lcs, rcs)):  # fmt: skip
        if any(a is not None and b is not None and a != b for a, b in zip(ls, rs, strict=True)):
            lead = "lhs " if what.startswith("batch") else ""
            raise ShardingTypeError(
                f"dot_general requires {lead}{what} to have {'the ' if lead else ''}consistent "
                f"sharding, got {ls} and {rs}."
            )
    if any(a is not None and b is not None for a, b in zip(lcs, rcs, strict=True)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
            f"lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}"
        )
    batch = [le[d] for d in lb]
    lfree = [le[i] for i in range(lhs.ndim) if i not in lb and i not in lc]
    rfree = [re[i] for i in range(rhs.ndim) if i not in rb and i not in rc]
    entries = batch + lfree + rfree
    result = with_entries(out, lhs.type_sharding or rhs.type_sharding, entries)
    if result is None:
        dtype = out.str_short(short_dtypes=True).split("[")[0]
        dims = ",".join(_dim(n, e) for n, e in zip(out.shape, entries, strict=True))
        raise ShardingTypeError(
            f"dot_general operation with inputs: {lhs.str_short(short_dtypes=True)}, "
            f"{rhs.str_short(short_dtypes=True)} produces an illegally sharded result: "
            f"{dtype}[{dims}]"
        )
    return result


def _axis_size(sharding, entry) -> int:
    mesh = dict(sharding.mesh.shape)
    return math.prod(mesh[a] for a in _axes(entry))


def type_sharding_str(sharding) -> str:
    """The sharding as JAX prints a type's sharding (on the abstract mesh)."""
    if sharding is None:
        return "None"
    abstract = getattr(sharding.mesh, "abstract_mesh", None)
    if abstract is not None:
        sharding = sharding.update(mesh=abstract)
    if getattr(sharding, "memory_kind", None) is not None:
        sharding = sharding.with_memory_kind(None)  # JAX's type shardings have no memory kind
    return str(sharding)


def _with_axis_types(aval, short_dtypes: bool = False) -> str:
    """``float32[8@x,8]({Explicit: ('x', 'y')})``: JAX's ``str_short(mesh_axis_types=True)``."""
    text = aval.str_short(short_dtypes)
    mesh = getattr(aval.type_sharding, "mesh", None)
    if mesh is None:
        return text + "({})"  # JAX's empty mesh
    kinds: dict[str, list[str]] = {}
    for name, kind in zip(mesh.axis_names, mesh.axis_types, strict=True):
        kinds.setdefault(kind.name, []).append(name)
    return text + "({" + ", ".join(f"{k}: {tuple(v)}" for k, v in kinds.items()) + "})"


def _abstract(mesh):
    """A concrete mesh's abstract mesh (an abstract mesh is itself): what types compare."""
    return getattr(mesh, "abstract_mesh", mesh)


def _aval_repr(aval) -> str:
    # Without weak_type: JAX's operands here are never weak (its updates are cast first).
    return f"ShapedArray({aval.str_short()})"


def _entry_str(entry) -> str:
    return str(_norm(entry))


def _keep_if_divisible(name: str, aval, out_shape, out):
    """``out`` with ``aval``'s entries, where every resized sharded dimension stays divisible."""
    entries = sharding_entries(aval)
    for n, m, e in zip(aval.shape, out_shape, entries, strict=True):
        if n != m and _norm(e) is not None and m % _axis_size(aval.type_sharding, e):
            raise ShardingTypeError(
                f"{name} on sharded dims where out dim ({m}) is not divisible by mesh axes "
                f"({_axis_size(aval.type_sharding, e)}) with spec ({_entry_str(e)}) is not "
                f"implemented. Got input type={aval.str_short(short_dtypes=True)} and output "
                f"shape={tuple(out_shape)}"
            )
    return with_entries(out, aval.type_sharding, entries)


def varying_shape_rule(name: str):
    """The rule of an operation whose result has its first operand's rank, sizes changed
    (``slice``, ``dynamic_slice``, ``pad``): every entry stays, and a sharded dimension
    that changes size must stay divisible by its axes (JAX's ShardingTypeError otherwise).
    """

    def rule(avals, out, **_):
        if avals[0].type_sharding is None:
            return out
        return _keep_if_divisible(name, avals[0], out.shape, out)

    return rule


def dynamic_update_slice_rule(avals, out, **_):
    """The operand's sharding; an update typed otherwise raises JAX's error.

    As in JAX 0.10.2, the two types' shardings must be equal, so an update with no
    mesh in its type (None) does not match a typed operand, nor the reverse.
    """
    operand, update = avals[0], avals[1]
    if (operand.type_sharding is None) != (update.type_sharding is None) or (
        operand.type_sharding is not None
        and (
            sharding_entries(operand) != sharding_entries(update)
            or _abstract(operand.type_sharding.mesh) != _abstract(update.type_sharding.mesh)
        )
    ):
        raise ShardingTypeError(
            "dynamic_update_slice operand sharding must be equal to update sharding, got "
            f"operand sharding {_with_axis_types(operand)} and update sharding "
            f"{_with_axis_types(update)}."
        )
    if operand.type_sharding is None:
        return out
    return with_entries(out, operand.type_sharding, sharding_entries(operand))


def gather_rule(avals, out, *, dimension_numbers, slice_sizes, **_):
    """Operand dimensions sliced whole keep their entries, the indices' batch dimensions
    theirs; an operand dimension sliced in part must be unsharded (JAX's gather rule).

    Anything else would need collectives on the inputs: JAX asks for
    ``.at[...].get(out_sharding=)`` and so do we (ShardingTypeError).
    """
    operand, indices = avals[0], avals[1]
    dn = dimension_numbers
    op, ix = list(sharding_entries(operand)), list(sharding_entries(indices))
    like = operand.type_sharding or indices.type_sharding
    batch = list(zip(dn.operand_batching_dims, dn.start_indices_batching_dims, strict=True))
    ok = (
        all(
            slice_sizes[d] == operand.shape[d] or _norm(op[d]) is None
            for d in range(operand.ndim)
            if d not in dn.operand_batching_dims
        )
        and all(
            _norm(op[o]) is None or _norm(ix[i]) is None or _norm(op[o]) == _norm(ix[i])
            for o, i in batch
        )
        and all(
            _norm(e) is None for i, e in enumerate(ix) if i not in dn.start_indices_batching_dims
        )
    )
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={_aval_repr(operand)}, "
            f"indices={_aval_repr(indices)}"
        )
    for o, i in batch:
        ix[i] = ix[i] if _norm(ix[i]) is not None else op[o]
    window = iter(
        op[d]
        for d in range(operand.ndim)
        if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims
    )
    queries = iter(ix[:-1] if indices.ndim else [])
    entries = [next(window) if d in dn.offset_dims else next(queries) for d in range(out.ndim)]
    return with_entries(out, like, entries)


def scatter_rule(avals, out, *, dimension_numbers, **_):
    """A scatter keeps the operand's sharding where it writes whole windows (JAX's rule).

    Updates with no sharding in their type (unknown, as jnp's broadcast scalars
    are) are taken to match the operand along whole windows.
    """
    operand, indices, updates = avals[0], avals[1], avals[2]
    dn = dimension_numbers
    op = [_norm(e) for e in sharding_entries(operand)]
    ix = [_norm(e) for e in sharding_entries(indices)]
    up = [_norm(e) for e in sharding_entries(updates)]
    like = operand.type_sharding or indices.type_sharding or updates.type_sharding
    untyped = updates.type_sharding is None
    vector_dim = indices.ndim - 1
    # Where each query dimension of the indices lands among the updates' dimensions.
    query_in_updates: list = list(range(vector_dim))
    for d in dn.update_window_dims:
        query_in_updates.insert(d, None)
    up_batch = [query_in_updates.index(i) for i in dn.scatter_indices_batching_dims]
    op_window = [
        d
        for d in range(operand.ndim)
        if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims
    ]
    batches = list(
        zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims, up_batch, strict=True)
    )
    windows = list(zip(dn.update_window_dims, op_window, strict=True))
    ok = (
        all(len({op[o], ix[i], up[u]} - {None}) <= 1 for o, i, u in batches)
        and all(
            (updates.shape[u] == operand.shape[o] and (up[u] == op[o] or untyped))
            or (up[u] is None and op[o] is None)
            for u, o in windows
        )
        and all(op[d] is None for d in dn.inserted_window_dims)
        and all(
            e is None
            for d, e in enumerate(up)
            if d not in up_batch and d not in dn.update_window_dims
        )
        and all(
            e is None
            for d, e in enumerate(ix[:vector_dim])
            if d not in dn.scatter_indices_batching_dims
        )
        and (not ix or ix[vector_dim] is None)
    )
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
            "the scatter update as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={_aval_repr(operand)}, "
            f"indices={_aval_repr(indices)}, updates={_aval_repr(updates)}"
        )
    entries = list(op)
    for o, i, u in batches:
        entries[o] = entries[o] or ix[i] or up[u]
    for u, o in windows:
        entries[o] = entries[o] or up[u]
    return with_entries(out, like, entries)


def sort_rule(avals, out, *, dimension, **_):
    """Every operand must be unsharded along the sorted dimension; results keep the entries."""
    for a in avals:
        if a.type_sharding is not None and _norm(sharding_entries(a)[dimension]) is not None:
            raise ShardingTypeError(
                "Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={type_sharding_str(a.type_sharding)} and sorting dimension={dimension}"
            )
    like = _first_sharding(avals)
    merged = _merge("sort", [sharding_entries(a) for a in avals if a.type_sharding is not None])
    return [with_entries(o, like, merged) for o in out]


def top_k_rule(avals, out, *, axis, **_):
    """The operand must be unsharded along ``axis``; values and indices keep its entries."""
    (aval,) = avals
    entries = sharding_entries(aval)
    if _norm(entries[axis]) is not None:
        raise ShardingTypeError(
            "The input should be unsharded over the axis along which to compute the top_k "
            f"values. Got input type={aval.str_short()} and axis={axis}"
        )
    return [with_entries(o, aval.type_sharding, entries) for o in out]


def cumulative_rule(avals, out, *, axis, **_):
    """A cumulative reduction needs its axis unsharded and keeps the entries."""
    (aval,) = avals
    entries = sharding_entries(aval)
    if _norm(entries[axis]) is not None:
        raise ShardingTypeError(
            "Input should be unsharded over the axis being reduced. Got input "
            f"type={aval.str_short()} and axis={axis}"
        )
    return with_entries(out, aval.type_sharding, entries)


def same_sharding_rule(avals, out, **_):
    """Operands typed with a sharding must agree; the result has it (``concatenate``, ``rev``).

    Entries are kept even along a dimension whose size changes, as JAX does.
    """
    typed = [a for a in avals if a.type_sharding is not None]
    if any(sharding_entries(a) != sharding_entries(typed[0]) for a in typed[1:]):
        raise ShardingTypeError(
            "All operands should have the same sharding. Got shardings "
            + ", ".join(type_sharding_str(a.type_sharding) for a in avals)
        )
    return with_entries(out, typed[0].type_sharding, sharding_entries(typed[0]))


def select_n_rule(avals, out, **_):
    """``select_n``'s cases must agree, and a non-scalar predicate with them."""
    which, cases = avals[0], avals[1:]
    typed = [c for c in cases if c.type_sharding is not None]
    if not typed:
        if which.type_sharding is None or not which.shape:
            return out
        return with_entries(out, which.type_sharding, sharding_entries(which))
    first = sharding_entries(typed[0])
    if any(sharding_entries(c) != first for c in typed[1:]):
        raise ShardingTypeError(
            "select cases must have the same shardings, got ["
            + ", ".join(type_sharding_str(c.type_sharding) for c in cases)
            + "]."
        )
    if which.shape and which.type_sharding is not None and sharding_entries(which) != first:
        raise ShardingTypeError(
            "select `which` must be scalar or have the same sharding as cases, got `which` "
            f"sharding {type_sharding_str(which.type_sharding)} but case sharding "
            f"{type_sharding_str(typed[0].type_sharding)}."
        )
    return with_entries(out, typed[0].type_sharding, first)


def clamp_rule(avals, out, **_):
    """``clamp(lo, x, hi)`` has ``x``'s sharding."""
    x = avals[1]
    if x.type_sharding is None:
        return out
    return with_entries(out, x.type_sharding, sharding_entries(x))


def conv_rule(avals, out, *, dimension_numbers, **_):
    """A convolution with a replicated kernel and an unsplit input-feature dimension keeps
    the input's entries; anything else asks for ``out_sharding`` (JAX's rule).
    """
    lhs, rhs = avals[0], avals[1]
    lhs_feature = dimension_numbers.lhs_spec[1]
    if all(_norm(e) is None for e in sharding_entries(rhs)) and (
        _norm(sharding_entries(lhs)[lhs_feature]) is None
    ):
        if lhs.type_sharding is None:
            return out
        return _keep_if_divisible("conv_general_dilated", lhs, out.shape, out)
    raise ShardingTypeError(
        "Please specify the output sharding via `out_sharding` parameter of `conv_general_dilated`"
    )


def _dim(n, e) -> str:
    axes = _axes(e)
    if not axes:
        return str(n)
    return f"{n}@{axes[0]}" if len(axes) == 1 else f"{n}@({','.join(axes)})"


#: ``unreduced_rules[primitive](avals, **params) -> (unreduced, reduced)`` (a list of such
#: pairs for a primitive with several results; None when the sharding rule or abstract
#: evaluation already typed the result): the mesh axes a result is unreduced and
#: reduced over, given operands of which some are (JAX's ``ur_rule``). A primitive
#: without one refuses such operands (NotImplementedError, as JAX's), except the
#: elementwise ones following the generic sharding rule, which follow
#: :func:`nary_unreduced_rule`.
unreduced_rules: dict[Any, Callable] = {}


def _not_implemented(name: str, what: str = "unreduced/reduced") -> NotImplementedError:
    return NotImplementedError(
        f"{what} rule for {name} is not implemented. Please file an issue at "
        "https://github.com/jax-ml/jax/issues"
    )


def _common_reduced(avals) -> frozenset:
    """The reduced axes of elementwise operands: all alike (JAX's ``default_nary_reduced_rule``)."""
    found = {r for a in avals if (r := reduced_axes(a))}
    if len(found) > 1:
        raise ShardingTypeError(
            f"All inputs should be reduced across the same mesh axes. Got specs: {found}"
        )
    (reduced,) = found if found else (frozenset(),)
    # JAX also refuses an operand replicated over those axes, but only on the mesh set
    # with set_mesh (none here: tracecore has no current mesh), as JAX without one.
    if reduced:
        for a in avals:
            if ({x for e in sharding_entries(a) for x in _axes(e)} | a.vma) & reduced:
                raise ShardingTypeError(
                    "Inputs cannot be sharded/varying on the same axes that another input is "
                    "reduced on. Reshard the input which is reduced to be sharded on the mesh "
                    "axes it is reduced on via `jax.sharding.reshard(inp, jax.P(...))`. Got "
                    f"input type: {a} and reduced spec: {reduced}"
                )
    return reduced


def nary_unreduced_rule(name: str):
    """An elementwise operation: reduced operands give a reduced result; unreduced ones are
    refused (``sin`` of a partial sum is not the partial sum of a ``sin``), as JAX's.
    """

    def rule(avals, **_):
        reduced = _common_reduced(avals)
        if any(unreduced_axes(a) for a in avals):
            raise _not_implemented(name, "unreduced")
        return frozenset(), reduced

    return rule


def keep_unreduced_rule(avals, **_):
    """A linear operation of one operand (transpose, cast, reshape, ...) keeps both sets."""
    return unreduced_axes(avals[0]), reduced_axes(avals[0])


def add_unreduced_rule(name: str = "add"):
    """``add``: the sum of two partial sums over the same axes is one; one alone is refused."""

    def rule(avals, **_):
        x, y = avals
        reduced = _common_reduced(avals)
        xu, yu = unreduced_axes(x), unreduced_axes(y)
        if xu and yu:
            if xu != yu:
                raise ShardingTypeError(
                    f"lhs and rhs to `{name}` must be unreduced along the same mesh axes. Got "
                    f"lhs={xu}, rhs={yu}"
                )
            return xu, reduced
        if xu or yu:
            one, other = ("lhs", "rhs") if xu else ("rhs", "lhs")
            raise ShardingTypeError(
                f"{one} is unreduced while {other} is not. `{name}` operation does not allow "
                "this because there will be implicit communication. Please reduce "
                f"{one} via `reshard` before calling `{name}`."
            )
        return frozenset(), reduced

    return rule


def mul_unreduced_rule(avals, **_):
    """``mul``: a partial sum times a value reduced over the same axes stays a partial sum."""
    x, y = avals
    reduced = _common_reduced(avals)
    xu, yu = unreduced_axes(x), unreduced_axes(y)
    if xu and yu:
        raise ShardingTypeError(
            f"lhs and rhs to `mul` cannot be unreduced since mul is bilinear. Got lhs={xu}, "
            f"rhs={yu}"
        )
    if xu and xu != reduced_axes(y):
        raise ShardingTypeError(
            "RHS should be reduced along the same axes LHS is unreduced on. Got "
            f"lhs={x.str_short()} and rhs={y.str_short()}"
        )
    if yu and yu != reduced_axes(x):
        raise ShardingTypeError(
            "LHS should be reduced along the same axes RHS is unreduced on. Got "
            f"lhs={x.str_short()} and rhs={y.str_short()}"
        )
    unreduced = xu or yu
    return unreduced, (frozenset() if unreduced else reduced)


def _with_manual_ur(aval, unreduced, reduced):
    if type(aval) is not ShapedArray:
        return aval
    return aval.update(manual_unreduced=unreduced, manual_reduced=reduced)


def _with_ur(aval, unreduced, reduced):
    sharding = getattr(aval, "type_sharding", None)
    if sharding is None or (not unreduced and not reduced):
        return aval
    spec = sharding.spec.update(unreduced=frozenset(unreduced), reduced=frozenset(reduced))
    return aval.update(sharding=sharding.update(spec=spec))


def _apply_unreduced_rule(primitive, avals, out, params, generic: bool, manual: bool = False):
    rule = unreduced_rules.get(primitive)
    if rule is None:
        if not generic:
            raise _not_implemented(primitive.name)
        rule = nary_unreduced_rule(primitive.name)
    ur = rule(avals, **params)
    if ur is None:  # the rule typed the result itself
        return out
    setter = _with_manual_ur if manual else _with_ur
    if isinstance(out, list | tuple):
        pairs = ur if isinstance(ur, list) else [ur] * len(out)
        return type(out)(setter(o, u, r) for o, (u, r) in zip(out, pairs, strict=True))
    return setter(out, *ur)


def apply_sharding_rule(
    primitive, avals: Sequence[ShapedArray], out, params: dict, atoms: Sequence | None = None
):
    """Return ``out`` (an aval, or a list when the primitive has several results) with shardings.

    Called for every traced equation once some aval has a sharding; returns
    ``out`` unchanged when no operand has one, except under ``jax.set_mesh``
    (:func:`_on_context_mesh`; ``atoms``, the equation's operands, tell literals apart).
    Operands unreduced or reduced over some mesh axes go through ``unreduced_rules`` too.
    """
    if _suspended.depth:
        return out
    for a in avals:
        if getattr(a, "type_sharding", None) is not None:
            break
    else:
        return _on_context_mesh(out, params, avals, atoms)
    ur = any(
        unreduced_axes(a) or reduced_axes(a) for a in avals if getattr(a, "type_sharding", None)
    )
    rule = sharding_rules.get(primitive)
    if rule is not None:
        result = rule(avals, out, **params)
        return _apply_unreduced_rule(primitive, avals, result, params, False) if ur else result
    if primitive.multiple_results or type(out) is not ShapedArray:
        return out  # inner jaxprs (jit, scan, cond) already typed their results
    result = elementwise_rule(primitive.name, avals, out)
    return _apply_unreduced_rule(primitive, avals, result, params, True) if ur else result


class _Suspended(threading.local):
    def __init__(self):
        self.depth = 0


_suspended = _Suspended()


@contextlib.contextmanager
def without_sharding_types():
    """Trace without shardings in types: no sharding rule runs, results are untyped.

    For a lowering's helper programs (``lower_fun``), whose types only serve to emit
    operations: their constants are not values made under ``jax.set_mesh`` and their
    operations must not raise the type errors the traced program already passed.
    Unlike setting ``context_mesh_sharding``, this leaves jit's keys and fast paths alone.
    """
    _suspended.depth += 1
    try:
        yield
    finally:
        _suspended.depth -= 1


def _on_context_mesh(out, params: dict, avals: Sequence, atoms: Sequence | None):
    """``out`` (an aval or a list) typed on the current mesh, replicated, when one is set.

    As JAX 0.10.2 types them: results of operations on no operands (``iota``) or on a
    literal (``jnp.zeros``' broadcast of ``0.0``, ``x * 2`` of an unsharded ``x``: JAX
    types a literal made under the mesh on it), not of operations on unsharded values
    alone (``x[:4]``, ``x.sum()``: JAX keeps their empty mesh). Left alone: equations
    holding programs (their inner types decide) and shard_map bodies (their mesh axes
    are manual there).
    """
    ctx = context_mesh_sharding.value
    if ctx is None or _vma_checked.stack:
        return out
    if next(subjaxprs(params), None) is not None:
        return out
    if avals and (atoms is None or not any(type(a) is Literal for a in atoms)):
        return out
    typed = ctx._type_sharding
    if typed is None:
        return out
    if isinstance(out, list | tuple):
        return type(out)(_typed(o, typed) for o in out)
    return _typed(out, typed)


def _typed(aval, sharding):
    # A result its primitive already typed (zeros_like of a typed aval) keeps its type.
    if type(aval) is not ShapedArray or aval.type_sharding is not None:
        return aval
    return with_type_sharding(aval, sharding)


class _VmaChecked(threading.local):
    def __init__(self):
        # (on, mesh axis order) per shard_map body being traced, innermost last.
        self.stack: list[tuple[bool, tuple]] = []


_vma_checked = _VmaChecked()


@contextlib.contextmanager
def varying_types(on: bool, axis_order: Sequence[str] = ()):
    """Trace the body of a shard_map with (``on``) or without varying manual axes in types.

    ``axis_order`` is the mesh's axis order: the order in which an inserted ``pvary``
    names its axes (JAX orders them by the mesh).
    """
    _vma_checked.stack.append((on, tuple(axis_order)))
    try:
        yield
    finally:
        _vma_checked.stack.pop()


def vma_checked() -> bool:
    """Tell whether the body being traced has varying manual axes in its types."""
    return bool(_vma_checked.stack) and _vma_checked.stack[-1][0]


def varying_axis_names() -> tuple:
    """Return the mesh axes of the body being traced with varying types (none: ``()``)."""
    return _vma_checked.stack[-1][1] if vma_checked() else ()


def order_axes(axes) -> tuple:
    """Return the axis names ``axes`` in the current mesh's order (unknown ones sorted, last)."""
    order = _vma_checked.stack[-1][1] if _vma_checked.stack else ()
    known = [a for a in order if a in axes]
    return tuple(known) + tuple(sorted((a for a in axes if a not in order), key=str))


#: ``vma_rules[primitive](vma_in, params) -> frozenset``: the manual axes a result varies
#: over (inside shard_map with check_vma), given its operands'. The collectives register
#: theirs (modjax.sharding); every other primitive's results vary over the union.
vma_rules: dict[Any, Callable] = {}

#: ``vma_operand_rules[primitive](avals, params) -> list[frozenset] | None``: per operand,
#: the manual axes a collective's operand must be cast to vary over first (JAX's inserted
#: ``pvary`` before ``psum`` of an invariant value, ...); registered by modjax.sharding.
vma_operand_rules: dict[Any, Callable] = {}


def missing_varying(primitive, avals: Sequence[Any], params: dict) -> list[frozenset] | None:
    """Return, per operand, the varying axes it lacks before ``primitive`` applies (or None).

    As JAX's ``auto_insert_reshard``: inside a body traced with varying types, an
    operand of a primitive without its own rule (elementwise ops, ``select_n``,
    ``concatenate``, ``dynamic_slice``, ...) that varies over fewer manual axes than
    the others is first cast to vary over them all (a ``pvary``), so every operand
    has one type; not with ``jax.auto_pcast(False)``, as in JAX. Collectives say what
    their operand must vary over in ``vma_operand_rules`` (``psum`` of an invariant
    value is cast to vary over the summed axes first); equations holding programs
    (``cond``, ``scan``, ``jit``: their bodies do this themselves) are left alone.
    """
    if not auto_pcast.value:  # then the operands' types must already agree (apply_vma_rule)
        return None
    operand_rule = vma_operand_rules.get(primitive)
    if operand_rule is not None:
        missing = operand_rule(avals, params)
        return missing if missing is not None and any(missing) else None
    if primitive in vma_rules or next(subjaxprs(params), None) is not None:
        return None
    vmas = [a.vma if type(a) is ShapedArray else None for a in avals]
    union = frozenset().union(*(v for v in vmas if v is not None))
    if not union or all(v is None or v == union for v in vmas):
        return None
    return [frozenset() if v is None else union - v for v in vmas]


def apply_vma_rule(primitive, avals: Sequence[ShapedArray], out, params: dict):
    """Return ``out`` (an aval or a list of them) with its varying manual axes set.

    Called for every traced equation once some aval has varying axes; it acts
    only inside a body traced with :func:`varying_types` on (shard_map with
    ``check_vma``). An equation holding programs (jit, cond, scan) is left as
    its abstract eval made it: the inner types already say.
    """
    if not vma_checked():
        return out
    if next(subjaxprs(params), None) is not None:
        return out
    if any(
        getattr(a, "manual_unreduced", None) or getattr(a, "manual_reduced", None) for a in avals
    ):  # manual unreduced/reduced axes (lax.pcast): JAX's ur rules, in the manual sets
        generic = primitive not in sharding_rules and not primitive.multiple_results
        out = _apply_unreduced_rule(primitive, avals, out, params, generic, manual=True)
    vma_in: list[frozenset] = [getattr(a, "vma", frozenset()) for a in avals]
    rule = vma_rules.get(primitive)
    if rule is not None:
        vma = rule(vma_in, params)
    elif len(set(vma_in)) > 1 and not auto_pcast.value:
        # JAX inserts pvary to make them match (auto_pcast); without it the types disagree.
        raise ValueError(
            f"Primitive {primitive.name} requires varying manual axes to match, but got "
            f"{list(vma_in)}. Please open an issue at https://github.com/jax-ml/jax/issues and "
            "as a temporary workaround pass the check_vma=False argument to `jax.shard_map`"
        )
    elif any(vma_in):
        vma = frozenset().union(*vma_in)
    else:
        return out
    if not vma:
        return out
    if isinstance(out, list | tuple):
        return type(out)(_with_vma(o, vma) for o in out)
    return _with_vma(out, vma)


def _with_vma(aval, vma):
    return aval.update(vma=vma) if type(aval) is ShapedArray else aval
