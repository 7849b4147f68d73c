"""Shardings in types for lax's primitives: which generic rule each one follows.

tracecore's ``sharding_types`` holds the rules (and the default one for
elementwise primitives); this table only says which primitives reduce,
permute, broadcast or reshape, in one place, so the primitives' own modules
stay as they are.
"""

from __future__ import annotations

from modjax.autodiff.tangents import add_any_p
from modjax.batching.primitives import moveaxis_p
from modjax.tracecore.abstract import sharding_entries, unreduced_axes, with_type_sharding
from modjax.tracecore.sharding_types import (
    ShardingTypeError,
    add_unreduced_rule,
    broadcast_in_dim_rule,
    clamp_rule,
    conv_rule,
    cumulative_rule,
    dot_general_rule,
    dynamic_update_slice_rule,
    gather_rule,
    keep_unreduced_rule,
    mul_unreduced_rule,
    reduce_rule,
    reshape_rule,
    same_sharding_rule,
    scatter_rule,
    select_n_rule,
    sharding_rules,
    sort_rule,
    squeeze_rule,
    top_k_rule,
    transpose_rule,
    type_sharding_str,
    unreduced_rules,
    varying_shape_rule,
    with_entries,
)

from .convolution import conv_general_dilated_p
from .cumulative import cumlogsumexp_p, cummax_p, cummin_p, cumprod_p, cumsum_p
from .dot import dot_general_p
from .elementwise import add_p, clamp_p, convert_element_type_p, mul_p, select_n_p
from .indexing import (
    dynamic_slice_p,
    dynamic_update_slice_p,
    gather_p,
    scatter_add_p,
    scatter_apply_p,
    scatter_max_p,
    scatter_min_p,
    scatter_mul_p,
    scatter_p,
    scatter_sub_p,
)
from .reductions import (
    argmax_p,
    argmin_p,
    reduce_and_p,
    reduce_max_p,
    reduce_min_p,
    reduce_or_p,
    reduce_prod_p,
    reduce_sum_p,
    reduce_xor_p,
)
from .sorting import sort_p, top_k_p
from .split_stack import split_p, stack_p, tile_p, unstack_p
from .structural import (
    broadcast_in_dim_p,
    concatenate_p,
    copy_p,
    pad_p,
    reshape_p,
    rev_p,
    slice_p,
    squeeze_p,
    transpose_p,
)

__all__: list[str] = []


def _reshape(avals, out, *, new_sizes, dimensions, **params):
    if dimensions is not None:  # a reshape that also transposes: the type says nothing
        return out
    return reshape_rule(avals, out, new_sizes=new_sizes)


for _p in (
    reduce_sum_p,
    reduce_prod_p,
    reduce_max_p,
    reduce_min_p,
    reduce_and_p,
    reduce_or_p,
    reduce_xor_p,
    argmax_p,
    argmin_p,
):
    sharding_rules[_p] = reduce_rule


def _dot_general(avals, out, *, out_sharding=None, **params):
    if out_sharding is not None:  # a result left unreduced (lax.dot_general checked it)
        return with_type_sharding(out, out_sharding)
    return dot_general_rule(avals, out, **params)


def _dot_general_unreduced(avals, *, out_sharding=None, **_):
    if any(unreduced_axes(a) for a in avals):
        lhs, rhs = avals
        raise ShardingTypeError(
            f"lhs or rhs passed to dot_general cannot be unreduced. Got lhs={lhs!r} and rhs={rhs!r}"
        )
    # As JAX 0.10.2: reduced operands give a result that is not (JAX's TODO).
    return None if out_sharding is not None else (frozenset(), frozenset())


sharding_rules[dot_general_p] = _dot_general
unreduced_rules[dot_general_p] = _dot_general_unreduced
sharding_rules[transpose_p] = transpose_rule


def _moveaxis(avals, out, *, source, destination, **_):
    # vmap's axis move (out_axes): a transpose, its entry moving with the axis.
    perm = list(range(len(out.shape)))
    perm.insert(destination, perm.pop(source))
    return transpose_rule(avals, out, permutation=perm)


sharding_rules[moveaxis_p] = _moveaxis
sharding_rules[broadcast_in_dim_p] = broadcast_in_dim_rule
sharding_rules[squeeze_p] = squeeze_rule
sharding_rules[reshape_p] = _reshape
sharding_rules[slice_p] = varying_shape_rule("slicing")
sharding_rules[dynamic_slice_p] = varying_shape_rule("dynamic_slice")
sharding_rules[pad_p] = varying_shape_rule("padding")
sharding_rules[dynamic_update_slice_p] = dynamic_update_slice_rule
sharding_rules[gather_p] = gather_rule
for _p in (
    scatter_p,
    scatter_add_p,
    scatter_sub_p,
    scatter_mul_p,
    scatter_min_p,
    scatter_max_p,
    scatter_apply_p,
):
    sharding_rules[_p] = scatter_rule
sharding_rules[sort_p] = sort_rule
sharding_rules[top_k_p] = top_k_rule
for _p in (cumsum_p, cumprod_p, cummax_p, cummin_p, cumlogsumexp_p):
    sharding_rules[_p] = cumulative_rule
sharding_rules[concatenate_p] = same_sharding_rule
sharding_rules[rev_p] = same_sharding_rule
sharding_rules[select_n_p] = select_n_rule
sharding_rules[clamp_p] = clamp_rule
sharding_rules[conv_general_dilated_p] = conv_rule


def _split(avals, outs, *, sizes, axis):
    # each piece keeps the operand's entries (divisible along a sharded axis, as slices)
    piece = varying_shape_rule("split")
    return [piece(avals, out) for out in outs]


def _stack(avals, out, *, axis):
    typed = [a for a in avals if a.type_sharding is not None]
    entries = list(sharding_entries(typed[0]))
    if any(list(sharding_entries(a)) != entries for a in typed[1:]):
        raise ShardingTypeError(
            "All operands should have the same sharding. Got shardings "
            + ", ".join(type_sharding_str(a.type_sharding) for a in avals)
        )
    entries.insert(axis, None)  # the new axis is not sharded
    return with_entries(out, typed[0].type_sharding, entries)


def _unstack(avals, outs, *, axis):
    (x,) = avals
    entries = list(sharding_entries(x))
    if entries[axis] is not None:
        raise ShardingTypeError(
            f"unstack operand cannot be sharded on the unstacking axis {axis}. Got operand "
            f"type={x.str_short(True)}"
        )
    del entries[axis]
    return [with_entries(out, x.type_sharding, entries) for out in outs]


def _tile(avals, out, *, reps):
    (x,) = avals
    entries = sharding_entries(x)
    for i, (r, e) in enumerate(zip(reps, entries, strict=True)):
        if r != 1 and e is not None:
            raise ShardingTypeError(
                f"Operand cannot be sharded on dimension {i} when the tiling is non-trivial. "
                f"Got input type: {x.str_short(True)} with reps: {reps}"
            )
    return with_entries(out, x.type_sharding, entries)


sharding_rules[split_p] = _split
sharding_rules[stack_p] = _stack
sharding_rules[unstack_p] = _unstack
sharding_rules[tile_p] = _tile


# Unreduced and reduced axes (JAX's ``ur_rule``s): sums of partial sums, products with a
# value reduced over their axes, and linear rearrangements keep them; the other
# elementwise primitives follow tracecore's generic rule; any other primitive refuses them.
unreduced_rules[add_p] = add_unreduced_rule("add")
unreduced_rules[add_any_p] = add_unreduced_rule("add_any")
unreduced_rules[mul_p] = mul_unreduced_rule
for _p in (
    convert_element_type_p,
    transpose_p,
    squeeze_p,
    reduce_sum_p,
    copy_p,
    moveaxis_p,
    broadcast_in_dim_p,
):
    unreduced_rules[_p] = keep_unreduced_rule


def _reshape_unreduced(avals, *, dimensions=None, **_):
    if dimensions is not None:
        raise NotImplementedError(
            "unreduced/reduced rule for reshape with dimensions is not implemented"
        )
    return keep_unreduced_rule(avals)


unreduced_rules[reshape_p] = _reshape_unreduced
