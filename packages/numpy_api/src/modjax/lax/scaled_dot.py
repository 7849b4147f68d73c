"""``scaled_dot``: ``(lhs * lhs_scale) @ (rhs * rhs_scale)`` with subchannel scales.

``scaled_dot[dimension_numbers, preferred_element_type]`` takes the operands and their
scales (the scales' contracting dimensions divide the operands' ones, by at least 2).
It lowers, as JAX's, to the ``xla.scaled_dot`` composite: the scales repeated along the
contracting dimensions, operands and scales in bfloat16, then ``dot_general``. vmap
adds a batch dimension; like JAX's, it has no derivative rules.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from ._common import aval_of
from .composite_op import composite
from .dot import dot_general
from .elementwise import _convert_element_type, mul
from .structural import broadcast_in_dim, reshape

__all__ = ["scaled_dot", "scaled_dot_p"]


def _check_scale(side, operand, scale, contracting):
    for i, size in enumerate(operand.shape):
        if i in contracting:
            if size % scale.shape[i]:
                raise TypeError(
                    f"{side} contracting dim {i} of size {size} must be divisible by its scale's "
                    f"dim size {scale.shape[i]}."
                )
            if size // scale.shape[i] < 2:
                raise TypeError(
                    f"The ratio of {side} contracting dim {i} to its scale's dim size "
                    f"({size // scale.shape[i]}) must be at least 2."
                )
        elif scale.shape[i] != size:
            raise TypeError(
                f"{side} dim {i} of size {size} does not match scale dim size {scale.shape[i]}."
            )


def _abstract_eval(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    ranks = (lhs.ndim, rhs.ndim, lhs_scale.ndim, rhs_scale.ndim)
    if len(set(ranks)) != 1:
        raise TypeError(
            f"All input tensors must have the same rank. Got lhs rank: {lhs.ndim} rhs rank: "
            f"{rhs.ndim} lhs_scale rank: {lhs_scale.ndim} rhs_scale rank: {rhs_scale.ndim}."
        )
    if len(lb) != len(rb):
        raise TypeError(
            "LHS and RHS must have the same number of batch dimensions, got "
            f"{len(lb)} and {len(rb)}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            "LHS and RHS must have the same number of contracting dimensions, got "
            f"{len(lc)} and {len(rc)}."
        )
    for i, j in zip(lb, rb, strict=True):
        sizes = {lhs.shape[i], rhs.shape[j], lhs_scale.shape[i], rhs_scale.shape[j]}
        if len(sizes) != 1:
            raise TypeError(
                "All input tensors must have the same batch dimension size for batch dims "
                f"({i}, {j})."
            )
    for i, j in zip(lc, rc, strict=True):
        if lhs.shape[i] != rhs.shape[j]:
            raise TypeError(
                f"LHS contracting dim {i} of size {lhs.shape[i]} does not match RHS contracting "
                f"dim {j} of size {rhs.shape[j]}."
            )
    _check_scale("LHS", lhs, lhs_scale, lc)
    _check_scale("RHS", rhs, rhs_scale, rc)
    lhs_kept = [i for i in range(lhs.ndim) if i not in lc and i not in lb]
    rhs_kept = [i for i in range(rhs.ndim) if i not in rc and i not in rb]
    shape = (
        *(lhs.shape[i] for i in lb),
        *(lhs.shape[i] for i in lhs_kept),
        *(rhs.shape[i] for i in rhs_kept),
    )
    dtype = preferred_element_type if preferred_element_type is not None else dtypes.bfloat16
    return ShapedArray(shape, np.dtype(dtype))


def _repeat_scale(scale, operand_shape, contracting):
    """``scale`` repeated along each contracting dimension to the operand's size."""
    for i in contracting:
        shape = aval_of(scale).shape
        if shape[i] != operand_shape[i]:
            k = operand_shape[i] // shape[i]
            wide = (*shape[: i + 1], k, *shape[i + 1 :])
            dims = (*range(i + 1), *range(i + 2, len(wide)))
            scale = broadcast_in_dim(scale, wide, dims)
            scale = reshape(scale, (*shape[:i], shape[i] * k, *shape[i + 1 :]))
    return scale


@partial(composite, name="xla.scaled_dot")
def _decomposition(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
    (lc, rc), _ = dimension_numbers
    bf16 = np.dtype(dtypes.bfloat16)

    def scaled(x, scale, contracting):
        scale = _repeat_scale(scale, aval_of(x).shape, contracting)
        return mul(_convert_element_type(x, bf16, False), _convert_element_type(scale, bf16, False))

    return dot_general(
        scaled(lhs, lhs_scale, lc),
        scaled(rhs, rhs_scale, rc),
        dimension_numbers,
        preferred_element_type=preferred_element_type,
    )


def _lowering_fun(lhs, rhs, lhs_scale, rhs_scale, *, dimension_numbers, preferred_element_type):
    return _decomposition(
        lhs,
        rhs,
        lhs_scale,
        rhs_scale,
        dimension_numbers=dimension_numbers,
        preferred_element_type=preferred_element_type,
    )


def _batching(args, dims, *, dimension_numbers, preferred_element_type):
    size = next(aval_of(x).shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    args = [bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True)]
    (lc, rc), (lb, rb) = dimension_numbers
    up = lambda ds: tuple(d + 1 for d in ds)  # noqa: E731
    numbers = ((up(lc), up(rc)), ((0, *up(lb)), (0, *up(rb))))
    out = scaled_dot_p.bind(
        *args, dimension_numbers=numbers, preferred_element_type=preferred_element_type
    )
    return out, 0


scaled_dot_p = Primitive("scaled_dot")
scaled_dot_p.def_abstract_eval(_abstract_eval)
scaled_dot_p.def_impl(partial(apply_primitive, scaled_dot_p))
register_lowering(scaled_dot_p, lower_fun(_lowering_fun))
batching_rules[scaled_dot_p] = _batching


def _unit_scale(operand, contracting):
    """A scale of ones (float8_e8m0fnu, as JAX makes it) with size-1 contracting dims."""
    shape = tuple(1 if i in contracting else s for i, s in enumerate(aval_of(operand).shape))
    ones = broadcast_in_dim(np.array(1.0, dtypes.bfloat16), shape, ())
    return _convert_element_type(ones, np.dtype(dtypes.float8_e8m0fnu), False)


def scaled_dot(
    lhs,
    rhs,
    *,
    lhs_scale=None,
    rhs_scale=None,
    dimension_numbers=None,
    preferred_element_type=None,
):
    """Compute ``(lhs * lhs_scale) @ (rhs * rhs_scale)``, subchannel-scaled (jax.lax.scaled_dot).

    Scales have the operands' shapes except along contracting dimensions, which they
    divide (by 2 or more); a missing scale is ones. ``dimension_numbers`` defaults to
    a matmul over the last two dimensions with the others batched; the result is
    ``preferred_element_type`` (default bfloat16), computed from bfloat16 operands.
    Not differentiable, as in JAX.
    """
    if dimension_numbers is None:
        n = aval_of(lhs).ndim
        if n < 2:
            raise TypeError("scaled_dot does not support 0-rank and 1-rank operands.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    (lc, rc), (lb, rb) = dimension_numbers
    numbers = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    if lhs_scale is None:
        lhs_scale = _unit_scale(lhs, lc)
    if rhs_scale is None:
        rhs_scale = _unit_scale(rhs, rc)
    element = (
        np.dtype(dtypes.bfloat16)
        if preferred_element_type is None
        else dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "scaled_dot")
    )
    return scaled_dot_p.bind(
        lhs,
        rhs,
        lhs_scale,
        rhs_scale,
        dimension_numbers=numbers,
        preferred_element_type=element,
    )
