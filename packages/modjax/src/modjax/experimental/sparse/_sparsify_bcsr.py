"""The ``sparsify`` rules for BCSR operands (JAX's ``sparse_rules_bcsr``).

JAX's table for BCSR is smaller than for BCOO: zero-preserving elementwise functions,
``integer_pow``, ``dot_general``, ``broadcast_in_dim``, ``concatenate``, ``stack``,
``todense`` and ``custom_jvp_call``; any other primitive with a BCSR operand raises
NotImplementedError naming it. Rules have the signature of ``_sparsify_rules``.
"""

from __future__ import annotations

from modjax.experimental.sparse import bcsr
from modjax.experimental.sparse._bcsr_array import BCSR
from modjax.experimental.sparse._sparsify_rules import (
    LINEAR_UNARY,
    NONLINEAR_UNARY,
    Rule,
    check_integer_pow,
    sparse_rules,
    stack_by_concatenation,
)

__all__ = ["sparse_rules_bcsr"]

sparse_rules_bcsr: dict[str, Rule] = {}


def _unary_rule(linear: bool) -> Rule:
    def rule(primitive, mat, **params):
        if not linear and not mat.unique_indices:
            mat = mat.sum_duplicates(nse=mat.nse, remove_zeros=False)
        data = primitive.bind(mat.data, **params)
        return [
            BCSR(
                (data, mat.indices, mat.indptr),
                shape=mat.shape,
                indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices,
            )
        ]

    return rule


for _name in LINEAR_UNARY:
    sparse_rules_bcsr[_name] = _unary_rule(linear=True)
for _name in NONLINEAR_UNARY:
    sparse_rules_bcsr[_name] = _unary_rule(linear=False)


def _integer_pow_rule(primitive, mat, *, y, **params):
    check_integer_pow(y)
    return _unary_rule(linear=False)(primitive, mat, y=y, **params)


def _dot_general_rule(primitive, lhs, rhs, **params):
    return [bcsr.bcsr_dot_general(lhs, rhs, **params)]


def _broadcast_in_dim_rule(primitive, mat, **params):
    return [bcsr.bcsr_broadcast_in_dim(mat, **params)]


def _concatenate_rule(primitive, *mats, dimension):
    return [bcsr.bcsr_concatenate(mats, dimension=dimension)]


def _stack_rule(primitive, *mats, axis):
    return [stack_by_concatenation(mats, axis, bcsr.bcsr_broadcast_in_dim, bcsr.bcsr_concatenate)]


sparse_rules_bcsr["integer_pow"] = _integer_pow_rule
sparse_rules_bcsr["dot_general"] = _dot_general_rule
sparse_rules_bcsr["broadcast_in_dim"] = _broadcast_in_dim_rule
sparse_rules_bcsr["concatenate"] = _concatenate_rule
sparse_rules_bcsr["stack"] = _stack_rule
sparse_rules_bcsr["todense"] = sparse_rules["todense"]
