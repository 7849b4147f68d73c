"""Contractions: the ``dot_general`` primitive and ``dot`` built on it."""

from __future__ import annotations

import enum
import operator
from functools import partial

from modjax.lowering import hlo, ir, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from ._common import aval_of, convert, kind

__all__ = ["Precision", "dot", "dot_general"]


class Precision(enum.Enum):
    """How hard XLA should try on a matmul's precision (jax.lax.Precision)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    def __str__(self) -> str:
        return self.name


def _precision_pair(precision) -> tuple[Precision, Precision] | None:
    if precision is None:
        return None
    if isinstance(precision, tuple | list):
        lhs, rhs = precision
        return (_one_precision(lhs), _one_precision(rhs))
    p = _one_precision(precision)
    return (p, p)


def _one_precision(p) -> Precision:
    if isinstance(p, Precision):
        return p
    if p is None:
        return Precision.DEFAULT
    names = {
        "default": "DEFAULT",
        "bfloat16": "DEFAULT",
        "high": "HIGH",
        "tensorfloat32": "HIGH",
        "highest": "HIGHEST",
        "float32": "HIGHEST",
        "fastest": "DEFAULT",
    }
    try:
        return Precision[names[str(p).lower()]]
    except KeyError:
        raise ValueError(
            f"unknown precision {p!r}; expected a lax.Precision or one of {list(names)}"
        ) from None


def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    for side, aval, batch, contract in (("lhs", lhs, lb, lc), ("rhs", rhs, rb, rc)):
        if any(not 0 <= d < aval.ndim for d in (*batch, *contract)):
            raise TypeError(
                f"dot_general requires {side} dimension numbers to be nonnegative and less than "
                f"the number of axes of the {side} value, got {side}_batch of {batch} and "
                f"{side}_contracting of {contract} for {side} of rank {aval.ndim}"
            )
        if len(set(batch)) != len(batch) or len(set(contract)) != len(contract):
            raise TypeError(
                f"dot_general requires {side} batch and contracting dimensions to be distinct, "
                f"got {side}_batch {batch} and {side}_contracting {contract}."
            )
        if set(batch) & set(contract):
            raise TypeError(
                f"dot_general requires {side} batch dimensions to be disjoint from its "
                f"contracting dimensions, got {side}_batch {batch} and {side}_contracting "
                f"{contract}."
            )
    if len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs_batch and rhs_batch dimensions, got "
            f"lhs_batch {lb} and rhs_batch {rb}."
        )
    if len(lc) != len(rc):
        raise TypeError(
            "dot_general requires equal numbers of lhs_contracting and rhs_contracting "
            f"dimensions, got lhs_contracting {lc} and rhs_contracting {rc}."
        )
    lb_shape = tuple(lhs.shape[d] for d in lb)
    rb_shape = tuple(rhs.shape[d] for d in rb)
    if lb_shape != rb_shape:
        raise TypeError(
            "dot_general requires lhs batch dimensions and rhs batch dimensions to have the "
            f"same shape, got {lb_shape} and {rb_shape}."
        )
    lc_shape = tuple(lhs.shape[d] for d in lc)
    rc_shape = tuple(rhs.shape[d] for d in rc)
    if lc_shape != rc_shape:
        raise TypeError(
            "dot_general requires contracting dimensions to have the same shape, got "
            f"{lc_shape} and {rc_shape}."
        )
    for side, aval in (("lhs", lhs), ("rhs", rhs)):
        if kind(aval.dtype) == "?":
            raise TypeError(f"dot_general does not accept {side} dtype {aval.dtype}")
    lhs_free = tuple(d for i, d in enumerate(lhs.shape) if i not in lb and i not in lc)
    rhs_free = tuple(d for i, d in enumerate(rhs.shape) if i not in rb and i not in rc)
    shape = lb_shape + lhs_free + rhs_free
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    dtype = lhs.dtype if lhs.dtype == rhs.dtype else dtypes.promote_types(lhs.dtype, rhs.dtype)
    return ShapedArray(shape, dtypes.canonicalize_dtype(dtype), lhs.weak_type and rhs.weak_type)


def _dot_general_lowering(ctx, lhs, rhs, *, dimension_numbers, precision, preferred_element_type):
    (lc, rc), (lb, rb) = dimension_numbers
    a_lhs, a_rhs = ctx.avals_in
    out = ctx.avals_out[0]
    if a_lhs.dtype != a_rhs.dtype:  # mixed inputs meet at their promoted type
        common = (
            out.dtype
            if preferred_element_type is None
            else dtypes.promote_types(a_lhs.dtype, a_rhs.dtype)
        )
        lhs = convert(lhs, a_lhs, a_lhs.update(dtype=common))
        rhs = convert(rhs, a_rhs, a_rhs.update(dtype=common))
    numbers = hlo.DotDimensionNumbers.get(
        lhs_batching_dimensions=list(lb),
        rhs_batching_dimensions=list(rb),
        lhs_contracting_dimensions=list(lc),
        rhs_contracting_dimensions=list(rc),
    )
    pair = precision or (Precision.DEFAULT, Precision.DEFAULT)
    config = ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in pair])
    return hlo.dot_general(ir_type(out), lhs, rhs, numbers, precision_config=config)


dot_general_p = Primitive("dot_general")
dot_general_p.def_abstract_eval(_dot_general_abstract_eval)
dot_general_p.def_impl(partial(apply_primitive, dot_general_p))
register_lowering(dot_general_p, _dot_general_lowering)
register_param_printer(dot_general_p, "precision", lambda p: _format_precision(p))
register_param_parser(dot_general_p, "precision", lambda text: _parse_precision(text))


def _format_precision(pair) -> str:
    return "None" if pair is None else f"({pair[0].name}, {pair[1].name})"


def _parse_precision(text: str):
    text = text.strip()
    if text == "None":
        return None
    lhs, rhs = (part.strip() for part in text.strip("()").split(","))
    return (Precision[lhs], Precision[rhs])


def _dims(values) -> tuple[int, ...]:
    return tuple(operator.index(v) for v in values)


def dot_general(
    lhs,
    rhs,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
):
    """Contract ``lhs`` and ``rhs`` over some axes, batching over others (jax.lax.dot_general).

    ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
    rhs_batch))``. The result's dimensions are the batch dimensions, then the
    free dimensions of ``lhs``, then those of ``rhs``. ``preferred_element_type``
    sets the result dtype (e.g. float32 accumulation of bfloat16 inputs).
    """
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        numbers = ((_dims(lc), _dims(rc)), (_dims(lb), _dims(rb)))
    except (TypeError, ValueError):
        raise TypeError(
            "dot_general dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), got {dimension_numbers!r}"
        ) from None
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.canonicalize_dtype(dtypes.dtype(preferred_element_type))
    )
    return dot_general_p.bind(
        lhs,
        rhs,
        dimension_numbers=numbers,
        precision=_precision_pair(precision),
        preferred_element_type=preferred,
    )


def dot(lhs, rhs, precision=None, preferred_element_type=None):
    """Compute a vector/matrix product of operands of rank 1 or 2 (jax.lax.dot)."""
    nl, nr = aval_of(lhs).ndim, aval_of(rhs).ndim
    if nl not in (1, 2) or nr not in (1, 2):
        raise ValueError(
            "lax.dot: dimension_numbers must be specified when not performing simple "
            "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
            f"lhs_shape={aval_of(lhs).shape} rhs_shape={aval_of(rhs).shape}"
        )
    numbers = (((nl - 1,), (0,)), ((), ()))
    return dot_general(lhs, rhs, numbers, precision, preferred_element_type)
