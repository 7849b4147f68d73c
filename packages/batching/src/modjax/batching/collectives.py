"""Collectives over named axes (jax.lax.psum & co.), implemented over vmapped axes.

Each collective is one primitive whose ``axis_name`` param is a tuple of axis
names. Its rule in ``axis_primitive_batchers`` runs under every vmap: the vmap
whose name it mentions carries out the collective along its batch axis, any
other vmap passes it outwards. A collective that reaches the evaluation trace
with a name still in it found no binding: NameError. (shard_map will lower the
named forms to XLA collectives.)

As in JAX, the reductions (``psum_p``, ``pmax_p``, ``pmin_p``) and ``ppermute_p``
also take *positional* axes, ints in ``axes`` / ``axis_name``: a vmap's rule
turns its name into the batch axis of the operand, so after every vmap has
run, what is left is an ordinary reduction (or permutation) of an array, with a
numpy impl here and an XLA lowering in the runtime package. ``all_gather``,
``all_to_all`` and ``psum_scatter`` batch to moves, reshapes (``reshape_p``)
and a positional ``psum``.
"""

from __future__ import annotations

import math

import numpy as np

from modjax.tracecore import tree_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.pvary import unreduced_psum_p

from .batch_trace import AxisData, _unbound, axis_names, axis_primitive_batchers, batching_rules
from .batch_trace import axis_size as _axis_size
from .primitives import broadcast, canonicalize_axis, moveaxis

__all__ = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "ppermute",
    "pshuffle",
    "all_to_all",
    "pswapaxes",
    "psum_scatter",
    "psum_p",
    "pmax_p",
    "pmin_p",
    "all_gather_p",
    "ppermute_p",
    "all_to_all_p",
    "psum_scatter_p",
    "reshape_p",
    "reshape",
]


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, tuple | list) else (axis_name,)


def _is_positional(entry) -> bool:
    return isinstance(entry, int | np.integer)


def _named(entries) -> tuple:
    return tuple(e for e in entries if not _is_positional(e))


def _check_bound(names) -> None:
    bound = axis_names()
    for name in names:
        if not _is_positional(name) and (name is None or name not in bound):
            raise _unbound(name)


def _group_params(op: str, axis_index_groups, size: int) -> tuple[dict, int]:
    """The ``axis_index_groups`` param of a gathering collective, and the size of a group.

    Groups must have one size and cover the axis' positions once each; with
    None the param is left out (the equation prints as before) and the group
    is the whole axis.
    """
    if axis_index_groups is None:
        return {}, size
    groups = tuple(tuple(int(i) for i in group) for group in axis_index_groups)
    if not groups or len({len(g) for g in groups}) != 1:
        raise ValueError(f"{op}: axis_index_groups must all have the same size, got {groups}")
    if sorted(i for g in groups for i in g) != list(range(size)):
        raise ValueError(
            f"{op}: axis_index_groups must cover every index of the axis (size {size}) exactly "
            f"once, got {groups}"
        )
    return {"axis_index_groups": groups}, len(groups[0])


def _refuse_groups_over_vmap(prim, axis_index_groups) -> None:
    if axis_index_groups is not None:
        raise NotImplementedError(f"{prim.name}: axis_index_groups not supported in vmap")


def _single_name(op: str, axis_name):
    names = _names(axis_name)
    if len(names) != 1:
        raise NotImplementedError(
            f"{op} over several axis names {names} is not supported yet; "
            "nest one collective per name"
        )
    return names


def _raise_unbound(entries) -> None:
    named = _named(entries)
    if named:
        raise _unbound(named[0])


def _real(axis: int, bdim: int) -> int:
    """Position in the batched value of logical axis ``axis`` (batch axis at ``bdim``)."""
    return axis if axis < bdim else axis + 1


def _front(x, d, prim, **params):
    """Pass a collective over another vmap's axis outwards, its batch axis moved to 0."""
    if d is None:
        return prim.bind(x, **params), None
    return prim.bind(moveaxis(x, d, 0), **params), 0


# --- reshape: the one array op the batched collectives need beyond moves ----------------

reshape_p = Primitive("reshape_dims")
reshape_p.def_impl(lambda x, *, shape: np.reshape(np.asarray(x, to_aval(x).dtype), shape))


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x, *, shape):
    if math.prod(shape) != math.prod(x.shape):
        raise ValueError(f"reshape: cannot reshape an array of shape {x.shape} into {shape}")
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


def _reshape_batching_rule(args, dims, *, shape):
    (x,), (d,) = args, dims
    x = moveaxis(x, d, 0)
    return reshape_p.bind(x, shape=(to_aval(x).shape[0], *shape)), 0


batching_rules[reshape_p] = _reshape_batching_rule


def reshape(x, shape):
    """Return ``x`` with the same elements in ``shape`` (jax.lax.reshape, row-major)."""
    shape = tuple(int(s) for s in shape)
    if to_aval(x).shape == shape:
        return x
    return reshape_p.bind(x, shape=shape)


def _merge(x, axis: int):
    """Merge axes ``axis`` and ``axis + 1`` of ``x`` (the first one major)."""
    shape = to_aval(x).shape
    return reshape(x, (*shape[:axis], shape[axis] * shape[axis + 1], *shape[axis + 2 :]))


def _split(x, axis: int, parts: int):
    """Split axis ``axis`` of ``x`` into ``(parts, size // parts)``."""
    shape = to_aval(x).shape
    return reshape(x, (*shape[:axis], parts, shape[axis] // parts, *shape[axis + 1 :]))


# --- psum, pmax, pmin ---------------------------------------------------------------------


def _reduction_abstract_eval(to_int: bool):
    def abstract_eval(x, *, axes, axis_index_groups):
        positional = [a for a in axes if _is_positional(a)]
        for a in positional:
            if not 0 <= a < len(x.shape):
                raise ValueError(f"positional axis {a} out of range for shape {x.shape}")
        shape = tuple(s for i, s in enumerate(x.shape) if i not in positional)
        dtype = np.dtype(np.int32) if to_int and x.dtype == np.bool_ else x.dtype
        return ShapedArray(shape, dtype, x.weak_type)

    return abstract_eval


def _reduction_impl(numpy_reduce, to_int: bool):
    def impl(x, *, axes, axis_index_groups):
        _raise_unbound(axes)
        x = np.asarray(x, to_aval(x).dtype)
        if to_int and x.dtype == np.bool_:
            x = x.astype(np.int32)
        return np.asarray(numpy_reduce(x, axis=tuple(int(a) for a in axes)), x.dtype)

    return impl


def _reduction_batcher(prim: Primitive, broadcast_unbatched: bool):
    """The rule of psum/pmax/pmin: this vmap's name becomes the operand's batch axis.

    An operand unbatched along a reduced axis is the same on every member: psum
    sums ``size`` copies of it (JAX multiplies by the size), pmax/pmin keep it.
    """

    def rule(axis_data: AxisData, args, dims, *, axes, axis_index_groups):
        (x,), (d,) = args, dims
        name = axis_data.name
        mine = name is not None and name in _named(axes)
        if d is None and not mine:
            return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), None
        if axis_index_groups is not None:
            raise NotImplementedError(
                f"{prim.name} with axis_index_groups over a vmap axis (only over the mesh axes "
                "of shard_map and pmap)"
            )
        rest = tuple(a for a in axes if _is_positional(a) or a != name)
        if d is None and not broadcast_unbatched:
            return (prim.bind(x, axes=rest, axis_index_groups=None) if rest else x), None
        if d is None:
            x, d = broadcast(x, axis_data.size, 0), 0
        new_axes = tuple(_real(a, d) if _is_positional(a) else a for a in rest)
        if mine:
            return prim.bind(x, axes=(*new_axes, d), axis_index_groups=None), None
        out_dim = d - sum(1 for a in new_axes if _is_positional(a) and a < d)
        return prim.bind(x, axes=new_axes, axis_index_groups=None), out_dim

    return rule


def _declare_reduction(name: str, numpy_reduce, to_int: bool, broadcast_unbatched: bool):
    prim = Primitive(name)
    prim.def_impl(_reduction_impl(numpy_reduce, to_int))
    prim.def_abstract_eval(_reduction_abstract_eval(to_int))
    axis_primitive_batchers[prim] = _reduction_batcher(prim, broadcast_unbatched)
    return prim


psum_p = _declare_reduction("psum", np.sum, to_int=True, broadcast_unbatched=True)
pmax_p = _declare_reduction("pmax", np.max, to_int=False, broadcast_unbatched=False)
pmin_p = _declare_reduction("pmin", np.min, to_int=False, broadcast_unbatched=False)


def _groups(axis_index_groups):
    """``axis_index_groups`` as a hashable tuple of tuples of ints (a primitive param)."""
    if axis_index_groups is None:
        return None
    return tuple(tuple(int(i) for i in group) for group in axis_index_groups)


def _reduce(op: str, prim: Primitive, x, axis_name, axis_index_groups):
    names = _names(axis_name)
    _check_bound(names)
    axes = tuple(int(a) if _is_positional(a) else a for a in names)
    # Groups are lowered over shard_map's and pmap's mesh axes; vmap's rule refuses them.
    groups = _groups(axis_index_groups)

    def one(leaf):
        aval = to_aval(leaf)
        ndim = len(aval.shape)
        leaf_axes = tuple(canonicalize_axis(a, ndim) if _is_positional(a) else a for a in axes)
        partial = getattr(aval, "manual_unreduced", frozenset())
        if op == "psum" and partial & set(leaf_axes):
            # Partial sums over those manual axes (lax.pcast to 'unreduced'): JAX's
            # unreduced_psum, once every summed axis is one of them.
            if not set(leaf_axes) <= partial or groups is not None:
                raise ValueError(
                    "jax.lax.psum can only accept axis_name which corresponds to one of "
                    "varying, unreduced, reduced or invarying state of the input. Got input "
                    f"type: {aval.str_short()}, axes: {leaf_axes}"
                )
            return unreduced_psum_p.bind(leaf, axes=leaf_axes)
        return prim.bind(leaf, axes=leaf_axes, axis_index_groups=groups)

    return tree_util.tree_map(one, x)


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum ``x`` (a pytree) over the mapped axis ``axis_name`` (jax.lax.psum).

    ``axis_name`` may be a tuple of names (sum over all of them); ints are
    positional axes of the array, as in JAX. Booleans sum to int32. A value that
    is not mapped along the axis is counted once per member (``size * x``).
    """
    return _reduce("psum", psum_p, x, axis_name, axis_index_groups)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Return the maximum of ``x`` (a pytree) over the mapped axis ``axis_name`` (jax.lax.pmax)."""
    return _reduce("pmax", pmax_p, x, axis_name, axis_index_groups)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Return the minimum of ``x`` (a pytree) over the mapped axis ``axis_name`` (jax.lax.pmin)."""
    return _reduce("pmin", pmin_p, x, axis_name, axis_index_groups)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Return the mean of ``x`` (a pytree) over the mapped axis ``axis_name`` (jax.lax.pmean).

    ``psum(x) / size``, with the array library's true division (integers give floats).
    """
    total = psum(x, axis_name, axis_index_groups=axis_index_groups)
    names = _names(axis_name)
    named_size = (
        _axis_size(_named(names)) if axis_index_groups is None else len(axis_index_groups[0])
    )

    def one(leaf, summed):
        shape = to_aval(leaf).shape
        size = named_size * math.prod(
            shape[canonicalize_axis(a, len(shape))] for a in names if _is_positional(a)
        )
        return summed / size

    return tree_util.tree_map(one, x, total)


# --- ppermute -------------------------------------------------------------------------------


ppermute_p = Primitive("ppermute")
ppermute_p.def_abstract_eval(lambda x, *, axis_name, perm: x)


@ppermute_p.def_impl
def _ppermute_impl(x, *, axis_name, perm):
    _raise_unbound(axis_name)
    x = np.asarray(x, to_aval(x).dtype)
    axes = [int(a) for a in axis_name]
    moved = np.moveaxis(x, axes, range(len(axes)))
    flat = moved.reshape((-1, *moved.shape[len(axes) :]))
    out = np.zeros_like(flat)
    for src, dst in perm:
        out[dst] = flat[src]
    return np.moveaxis(out.reshape(moved.shape), range(len(axes)), axes)


def _ppermute_batcher(axis_data: AxisData, args, dims, *, axis_name, perm):
    (x,), (d,) = args, dims
    name = axis_data.name
    mine = name is not None and name in _named(axis_name)
    if d is None and not mine:
        return ppermute_p.bind(x, axis_name=axis_name, perm=perm), None
    if d is None:
        # The same value on every member: members that receive keep it, others get zeros.
        if len(axis_name) == 1 and len(perm) == axis_data.size:
            return x, None
        x, d = broadcast(x, axis_data.size, 0), 0
    entries = tuple(
        d if not _is_positional(e) and e == name else _real_entry(e, d) for e in axis_name
    )
    return ppermute_p.bind(x, axis_name=entries, perm=perm), d


def _real_entry(entry, bdim: int):
    return _real(int(entry), bdim) if _is_positional(entry) else entry


axis_primitive_batchers[ppermute_p] = _ppermute_batcher


def _check_perm(op: str, perm, size: int) -> tuple:
    pairs = tuple((int(s), int(d)) for s, d in perm)
    for pair in pairs:
        if not all(0 <= i < size for i in pair):
            raise IndexError(
                f"{op}: permutation pair {pair} out of range for an axis of size {size}"
            )
    srcs, dsts = [s for s, _ in pairs], [d for _, d in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(f"{op}: sources and destinations must be unique, got {list(perm)}")
    return pairs


def ppermute(x, axis_name, perm):
    """Send ``x`` (a pytree) from ``src`` to ``dst`` for each pair of ``perm`` (jax.lax.ppermute).

    Members that are no pair's destination receive zeros. A tuple ``axis_name``
    numbers the members row-major over the names.
    """
    names = _names(axis_name)
    _check_bound(names)
    pairs = _check_perm("ppermute", perm, _axis_size(names))
    return tree_util.tree_map(lambda v: ppermute_p.bind(v, axis_name=names, perm=pairs), x)


def pshuffle(x, axis_name, perm):
    """Give member ``i`` the value of member ``perm[i]`` (jax.lax.pshuffle)."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


# --- all_gather ------------------------------------------------------------------------------

all_gather_p = Primitive("all_gather")


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(
    x, *, axis_name, all_gather_dimension, axis_size, tiled, axis_index_groups=None
):
    shape = list(x.shape)
    if tiled:
        shape[all_gather_dimension] *= axis_size
    else:
        shape.insert(all_gather_dimension, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_gather_p.def_impl(lambda x, *, axis_name, **_: _raise_unbound(axis_name))


def _all_gather_batcher(
    axis_data, args, dims, *, axis_name, all_gather_dimension, axis_size, tiled, **groups
):
    (x,), (d,) = args, dims
    dim = all_gather_dimension
    if axis_data.name is None or axis_data.name not in axis_name:
        return _front(
            x, d, all_gather_p,
            axis_name=axis_name, all_gather_dimension=dim + (d is not None),
            axis_size=axis_size, tiled=tiled, **groups,
        )  # fmt: skip
    _refuse_groups_over_vmap(all_gather_p, groups.get("axis_index_groups"))
    # Every member receives the whole stack: the batched value is the result.
    out = broadcast(x, axis_data.size, dim) if d is None else moveaxis(x, d, dim)
    return (_merge(out, dim) if tiled else out), None


axis_primitive_batchers[all_gather_p] = _all_gather_batcher


_ALL_GATHER_TO = ("varying", "reduced", "invarying")


def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Gather ``x`` (a pytree) from every member of ``axis_name`` (jax.lax.all_gather).

    The members' values are stacked along a new axis ``axis`` (concatenated along
    the existing axis ``axis`` when ``tiled``). ``axis_index_groups`` (lists of
    positions along the axis, of one size) gathers within each group only
    (over shard_map's and pmap's axes, not vmap's). ``to`` is the result's
    manual axis type: only JAX's default, ``"varying"``, is supported.
    """
    if to not in _ALL_GATHER_TO:
        raise ValueError(
            "Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` values are: "
            f"{set(_ALL_GATHER_TO)}"
        )
    if to != "varying":
        raise NotImplementedError(f"lax.all_gather(to={to!r}): only to='varying' is supported")
    names = _single_name("all_gather", axis_name)
    _check_bound(names)
    groups, size = _group_params("all_gather", axis_index_groups, _axis_size(names))

    def one(leaf):
        ndim = len(to_aval(leaf).shape)
        dim = canonicalize_axis(axis, ndim if tiled else ndim + 1)
        return all_gather_p.bind(
            leaf,
            axis_name=names,
            all_gather_dimension=dim,
            axis_size=size,
            tiled=bool(tiled),
            **groups,
        )

    return tree_util.tree_map(one, x)


# --- psum_scatter ----------------------------------------------------------------------------

psum_scatter_p = Primitive("reduce_scatter")


@psum_scatter_p.def_abstract_eval
def _psum_scatter_abstract_eval(
    x, *, axis_name, scatter_dimension, axis_size, tiled, axis_index_groups=None
):
    shape = list(x.shape)
    if tiled:
        shape[scatter_dimension] //= axis_size
    else:
        del shape[scatter_dimension]
    dtype = np.dtype(np.int32) if x.dtype == np.bool_ else x.dtype
    return ShapedArray(tuple(shape), dtype, x.weak_type)


psum_scatter_p.def_impl(lambda x, *, axis_name, **_: _raise_unbound(axis_name))


def _psum_scatter_batcher(
    axis_data, args, dims, *, axis_name, scatter_dimension, axis_size, tiled, **groups
):
    (x,), (d,) = args, dims
    sd = scatter_dimension
    if axis_data.name is None or axis_data.name not in axis_name:
        return _front(
            x, d, psum_scatter_p,
            axis_name=axis_name, scatter_dimension=sd + (d is not None),
            axis_size=axis_size, tiled=tiled, **groups,
        )  # fmt: skip
    _refuse_groups_over_vmap(psum_scatter_p, groups.get("axis_index_groups"))
    if d is None:
        x, d = broadcast(x, axis_data.size, 0), 0
    total = psum_p.bind(x, axes=(d,), axis_index_groups=None)
    # Member i keeps block i of the scatter dimension: that axis becomes the batch axis.
    return (_split(total, sd, axis_data.size) if tiled else total), sd


axis_primitive_batchers[psum_scatter_p] = _psum_scatter_batcher


def _split_size_check(op: str, what: str, shape, axis: int, size: int, name, tiled: bool):
    if tiled and shape[axis] % size:
        raise ValueError(
            f"{op}: the size of {what} ({shape[axis]}) has to be divisible by the size of "
            f"the named axis {name} ({size})"
        )
    if not tiled and shape[axis] != size:
        raise ValueError(
            f"{op} requires the size of the mapped axis {name} to equal x.shape[{what}], "
            f"but they are {size} and {shape[axis]} respectively (shape {shape})."
        )


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """Sum ``x`` (a pytree) over ``axis_name``, member ``i`` keeping block ``i`` (lax.psum_scatter).

    Untiled, ``x.shape[scatter_dimension]`` must equal the axis size and that axis
    is removed; tiled, it must be divisible by it and shrinks by that factor.
    With ``axis_index_groups`` the sum and the blocks are within each group
    (whose size then plays the axis size's part).
    """
    names = _single_name("psum_scatter", axis_name)
    _check_bound(names)
    groups, size = _group_params("psum_scatter", axis_index_groups, _axis_size(names))

    def one(leaf):
        shape = to_aval(leaf).shape
        sd = canonicalize_axis(scatter_dimension, len(shape))
        _split_size_check("psum_scatter", "scatter_dimension", shape, sd, size, names[0], tiled)
        return psum_scatter_p.bind(
            leaf,
            axis_name=names,
            scatter_dimension=sd,
            axis_size=size,
            tiled=bool(tiled),
            **groups,
        )

    return tree_util.tree_map(one, x)


# --- all_to_all ------------------------------------------------------------------------------

all_to_all_p = Primitive("all_to_all")


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(
    x, *, axis_name, split_axis, concat_axis, axis_size, tiled, axis_index_groups=None
):
    shape = list(x.shape)
    if tiled:
        shape[split_axis] //= axis_size
        shape[concat_axis] *= axis_size
    else:
        del shape[split_axis]
        shape.insert(concat_axis, axis_size)
    return ShapedArray(tuple(shape), x.dtype, x.weak_type)


all_to_all_p.def_impl(lambda x, *, axis_name, **_: _raise_unbound(axis_name))


def _all_to_all_batcher(
    axis_data, args, dims, *, axis_name, split_axis, concat_axis, axis_size, tiled, **groups
):
    (x,), (d,) = args, dims
    if axis_data.name is None or axis_data.name not in axis_name:
        shift = d is not None
        return _front(
            x, d, all_to_all_p,
            axis_name=axis_name, split_axis=split_axis + shift,
            concat_axis=concat_axis + shift, axis_size=axis_size, tiled=tiled, **groups,
        )  # fmt: skip
    _refuse_groups_over_vmap(all_to_all_p, groups.get("axis_index_groups"))
    n = axis_data.size
    if d is None:
        x, d = broadcast(x, n, 0), 0
    # Track each axis of the batched value by label: "src" is the sending member,
    # "dst" the receiving one (the new batch axis), ints the logical axes.
    labels: list = list(range(to_aval(x).ndim - 1))
    labels.insert(d, "src")
    at = labels.index(split_axis)
    if tiled:
        x = _split(x, at, n)
        labels[at : at + 1] = ["dst", split_axis]
    else:
        labels[at] = "dst"
    x = moveaxis(x, labels.index("dst"), 0)
    labels.remove("dst")
    labels.insert(0, "dst")
    src = labels.index("src")
    labels.remove("src")
    dst = labels.index(concat_axis) if tiled else 1 + concat_axis
    labels.insert(dst, "src")
    x = moveaxis(x, src, dst)
    return (_merge(x, dst) if tiled else x), 0


axis_primitive_batchers[all_to_all_p] = _all_to_all_batcher


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Send chunk ``j`` of ``x``'s ``split_axis`` to member ``j`` (jax.lax.all_to_all).

    Each member concatenates the chunks it receives along ``concat_axis``, in
    member order. Untiled, ``x.shape[split_axis]`` must equal the axis size: that
    axis is removed and the received values are stacked at ``concat_axis``.
    With ``axis_index_groups`` the exchange is within each group.
    """
    names = _single_name("all_to_all", axis_name)
    _check_bound(names)
    groups, size = _group_params("all_to_all", axis_index_groups, _axis_size(names))

    def one(leaf):
        shape = to_aval(leaf).shape
        sa = canonicalize_axis(split_axis, len(shape))
        ca = canonicalize_axis(concat_axis, len(shape))
        _split_size_check("all_to_all", "split_axis", shape, sa, size, names[0], tiled)
        return all_to_all_p.bind(
            leaf,
            axis_name=names,
            split_axis=sa,
            concat_axis=ca,
            axis_size=size,
            tiled=bool(tiled),
            **groups,
        )

    return tree_util.tree_map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swap the mapped axis ``axis_name`` with the array axis ``axis`` (jax.lax.pswapaxes).

    ``x.shape[axis]`` must equal the axis size (the group size with
    ``axis_index_groups``); the result has ``x``'s shape. It is
    ``all_to_all(x, axis_name, axis, axis)``, as in JAX.
    """
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)
