"""The sparse rules of ``sparsify``: one rule per primitive name (JAX's ``sparse_rules_bcoo``).

A rule is ``rule(primitive, *values, **params) -> list of values`` where each value is
a ``BCOO`` or a dense array; it runs when at least one operand of an equation is
sparse. Rules that keep a sparsity pattern reuse the operand's ``indices`` array
itself, so a later rule can tell two values of one pattern apart from two patterns
by identity (``x.indices is y.indices``), as JAX's sparsify does with buffer
references. Operations of other modules (``bcoo_reshape``...) are looked up in
``bcoo`` at call time. Control-flow rules live in ``_sparsify_control``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse import bcoo
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_array import BCOO

__all__ = [
    "LINEAR_UNARY",
    "NONLINEAR_UNARY",
    "check_integer_pow",
    "densifying_primitives",
    "is_sparse",
    "sparse_rules",
    "stack_by_concatenation",
    "unimplemented_rule_error",
]

Rule = Callable[..., list[Any]]

# Primitive name -> rule, for equations with a BCOO operand.
sparse_rules: dict[str, Rule] = {}

# Primitives without a rule because their result would be dense (JAX's message says so).
densifying_primitives = frozenset(
    ["acos", "acosh", "bessel_i0e", "cos", "cosh", "eq", "exp", "ge", "gt", "le", "lt", "log"]
    + ["ne", "xor"]
)


def is_sparse(value: Any) -> bool:
    """Whether ``value`` is one of modjax's sparse arrays."""
    return isinstance(value, JAXSparse)


def unimplemented_rule_error(name: str) -> NotImplementedError:
    """JAX's error for a primitive that ``sparsify`` meets with a sparse operand and no rule."""
    if name in densifying_primitives:
        return NotImplementedError(
            f"sparse rule for {name} is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to dense matrices."
        )
    return NotImplementedError(f"sparse rule for {name} is not implemented.")


def _with_data(mat: BCOO, data, *, unique_indices: bool | None = None) -> BCOO:
    unique = mat.unique_indices if unique_indices is None else unique_indices
    return BCOO(
        (data, mat.indices),
        shape=mat.shape,
        indices_sorted=mat.indices_sorted,
        unique_indices=unique,
    )


def _deduplicated(mat: BCOO) -> BCOO:
    """``mat`` with unique indices (same nse), so a nonlinear map can act per entry."""
    if mat.unique_indices:
        return mat
    return mat.sum_duplicates(nse=mat.nse, remove_zeros=False)


# --- elementwise ------------------------------------------------------------------


def _unary_rule(linear: bool) -> Rule:
    def rule(primitive, mat, **params):
        if not linear:
            mat = _deduplicated(mat)
        return [_with_data(mat, primitive.bind(mat.data, **params))]

    return rule


LINEAR_UNARY = ("conj", "copy", "imag", "neg", "real", "stage")
NONLINEAR_UNARY = (
    "abs",
    "asin",
    "asinh",
    "atan",
    "atanh",
    "bessel_i1e",
    "expm1",
    "log1p",
    "sign",
    "sin",
    "sinh",
    "sqrt",
    "square",
    "tan",
    "tanh",
    "convert_element_type",
)
for _name in LINEAR_UNARY:
    sparse_rules[_name] = _unary_rule(linear=True)
for _name in NONLINEAR_UNARY:
    sparse_rules[_name] = _unary_rule(linear=False)


def check_integer_pow(y: int) -> None:
    """JAX's refusal of ``x ** y`` with ``y <= 0`` on a sparse ``x`` (the result is dense)."""
    if y <= 0:
        raise NotImplementedError(
            f"sparse rule for integer_pow with non-positive exponent {y} is not implemented "
            "because it would result in dense output. If this is your intent, use "
            "sparse.todense() to convert your argument to a dense array."
        )


def _integer_pow_rule(primitive, mat, *, y, **params):
    check_integer_pow(y)
    return _unary_rule(linear=False)(primitive, mat, y=y, **params)


sparse_rules["integer_pow"] = _integer_pow_rule


def _shape(value) -> tuple[int, ...]:
    return tuple(value.shape) if is_sparse(value) else tuple(np.shape(value))


def _add_rule(primitive, x, y):
    out_shape = jnp.broadcast_shapes(_shape(x), _shape(y))
    if is_sparse(x) and is_sparse(y):
        if x.shape != y.shape:
            raise NotImplementedError("Addition between sparse matrices of different shapes.")
        if x.indices is y.indices:
            return [_with_data(x, lax.add(x.data, y.data))]
        if x.indices.ndim != y.indices.ndim or x.data.ndim != y.data.ndim:
            raise NotImplementedError(
                "Addition between sparse matrices with different batch/dense dimensions."
            )
        axis = x.indices.ndim - 2
        indices = lax.concatenate([x.indices, y.indices], axis)
        data = lax.concatenate([x.data, y.data], axis)
        return [BCOO((data, indices), shape=x.shape)]
    sparse, dense = (x, y) if is_sparse(x) else (y, x)
    if _shape(dense) != tuple(out_shape):
        raise NotImplementedError(
            "Addition between a sparse array X and a dense array Y is not implemented when "
            "the output shape is larger than Y.shape. This is to prevent silent densification "
            "of a large sparse array. If this is your intent, you can explicitly cast the "
            "sparse array to a dense matrix."
        )
    return [sparse.todense() + dense]


def _sub_rule(primitive, x, y):
    if not (is_sparse(x) and is_sparse(y)):
        raise NotImplementedError("Subtraction between sparse and dense array.")
    (negated,) = sparse_rules["neg"](lax.neg_p, y)
    return _add_rule(primitive, x, negated)


def _mul_rule(primitive, x, y, **params):
    if is_sparse(x) and is_sparse(y):
        if x.indices is y.indices and x.unique_indices:
            return [_with_data(x, lax.mul(x.data, y.data), unique_indices=True)]
        product = bcoo.bcoo_multiply_sparse(x, y)
        return [BCOO((product.data, product.indices), shape=product.shape)]
    sparse, dense = (x, y) if is_sparse(x) else (y, x)
    return [_with_data(sparse, bcoo.bcoo_multiply_dense(sparse, dense))]


def _div_rule(primitive, x, y):
    if is_sparse(y):
        raise NotImplementedError(
            "Division by a sparse array is not implemented because it would result in dense "
            "output. If this is your intent, use sparse.todense() to convert your arguments "
            "to a dense array."
        )
    return [_with_data(x, bcoo.bcoo_multiply_dense(x, 1.0 / jnp.asarray(y)))]


sparse_rules["add"] = _add_rule
sparse_rules["sub"] = _sub_rule
sparse_rules["mul"] = _mul_rule
sparse_rules["div"] = _div_rule


# --- structure ----------------------------------------------------------------------


def _reduce_sum_rule(primitive, mat, *, axes, **params):
    out = bcoo.bcoo_reduce_sum(mat, axes=axes)
    if out.shape == ():
        return [out.data.sum()]
    return [BCOO((out.data, out.indices), shape=out.shape)]


def _transpose_rule(primitive, mat, *, permutation):
    permutation = tuple(int(p) for p in permutation)
    out = bcoo.bcoo_transpose(mat, permutation=permutation)
    nb, ns = mat.n_batch, mat.n_sparse
    batch_kept = permutation[:nb] == tuple(range(nb))
    sparse_kept = permutation[nb : nb + ns] == tuple(range(nb, nb + ns))
    dense_kept = permutation[nb + ns :] == tuple(range(nb + ns, mat.ndim))
    data = mat.data if batch_kept and dense_kept else out.data
    indices = mat.indices if batch_kept and sparse_kept else out.indices
    return [
        BCOO(
            (data, indices),
            shape=out.shape,
            indices_sorted=out.indices_sorted,
            unique_indices=out.unique_indices,
        )
    ]


def _standard_rule(function_name: str, call: Callable[..., Any] | None = None) -> Rule:
    """A rule that hands the operands and params to ``bcoo.<function_name>``."""

    def rule(primitive, *operands, **params):
        function = getattr(bcoo, function_name)
        out = call(function, operands, params) if call else function(*operands, **params)
        return list(out) if primitive.multiple_results else [out]

    return rule


sparse_rules["reduce_sum"] = _reduce_sum_rule
sparse_rules["transpose"] = _transpose_rule
sparse_rules["dot_general"] = _standard_rule("bcoo_dot_general")
sparse_rules["broadcast_in_dim"] = _standard_rule("bcoo_broadcast_in_dim")
sparse_rules["concatenate"] = _standard_rule(
    "bcoo_concatenate", lambda f, operands, params: f(operands, **params)
)
sparse_rules["conv_general_dilated"] = _standard_rule("bcoo_conv_general_dilated")
sparse_rules["dynamic_slice"] = _standard_rule(
    "bcoo_dynamic_slice", lambda f, operands, params: f(operands[0], operands[1:], **params)
)
sparse_rules["reshape"] = _standard_rule("bcoo_reshape")
sparse_rules["rev"] = _standard_rule("bcoo_rev")
sparse_rules["slice"] = _standard_rule("bcoo_slice")
sparse_rules["squeeze"] = _standard_rule("bcoo_squeeze")
sparse_rules["gather"] = _standard_rule("bcoo_gather")


def stack_by_concatenation(mats, axis: int, broadcast_in_dim, concatenate):
    """``stack`` of sparse arrays, as JAX's sparse rules (BCOO and BCSR) do it.

    Each array gains a size-1 axis ``axis`` with the format's ``broadcast_in_dim``;
    the arrays are then joined along it with the format's ``concatenate``.
    """
    shape = mats[0].shape
    expanded_shape = (*shape[:axis], 1, *shape[axis:])
    dims = tuple(d if d < axis else d + 1 for d in range(len(shape)))
    expanded = [broadcast_in_dim(m, shape=expanded_shape, broadcast_dimensions=dims) for m in mats]
    return concatenate(expanded, dimension=axis)


def _stack_rule(primitive, *mats, axis):
    return [stack_by_concatenation(mats, axis, bcoo.bcoo_broadcast_in_dim, bcoo.bcoo_concatenate)]


sparse_rules["stack"] = _stack_rule


def _todense_rule(primitive, mat, **params):
    return [mat.todense()]


sparse_rules["todense"] = _todense_rule
