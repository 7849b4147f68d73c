"""Shardings in types for lax's primitives: which generic rule each one follows.

tracecore's ``sharding_types`` holds the rules (and the default one for
elementwise primitives); this table only says which primitives reduce,
permute, broadcast or reshape, in one place, so the primitives' own modules
stay as they are.
"""

from __future__ import annotations

from modjax.tracecore.sharding_types import (
    broadcast_in_dim_rule,
    dot_general_rule,
    reduce_rule,
    reshape_rule,
    sharding_rules,
    squeeze_rule,
    transpose_rule,
)

from .dot import dot_general_p
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
from .structural import broadcast_in_dim_p, reshape_p, squeeze_p, transpose_p

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
sharding_rules[dot_general_p] = dot_general_rule
sharding_rules[transpose_p] = transpose_rule
sharding_rules[broadcast_in_dim_p] = broadcast_in_dim_rule
sharding_rules[squeeze_p] = squeeze_rule
sharding_rules[reshape_p] = _reshape
