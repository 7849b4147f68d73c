"""Sorting: the variadic ``sort`` primitive (``num_keys``, ``is_stable``), ``top_k``, and the
helpers built on them (``sort_key_val``, ``argsort``).

``sort`` lowers to ``stablehlo.sort`` with a comparator region that orders
values as JAX does: floats by total order after mapping ``-0.0`` to ``0.0`` and
every NaN to one positive NaN (so ``-0.0`` and ``0.0`` tie, and NaNs go last),
complex numbers by real part then imaginary part, several keys
lexicographically. ``top_k`` lowers to ``chlo.top_k`` (NaN counts as largest).

Derivatives: the tangents of sorted operands are sorted by the same keys (one
more stable ``sort``, linear in the tangents); its transpose sends each
cotangent back through the inverse permutation (a ``sort`` keyed by the
permutation). ``top_k``'s tangents are gathered at its indices.
"""

from __future__ import annotations

import operator
from functools import partial

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import chlo, hlo, ir, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from ._common import aval_of, compare, constant, kind, real_dtype

__all__ = [
    "sort",
    "sort_key_val",
    "sort_p",
    "top_k",
    "top_k_p",
]


# --- sort --------------------------------------------------------------------------------------


def _sort_abstract_eval(*operands, dimension, is_stable, num_keys):
    if not operands:
        raise TypeError("sort requires at least one operand")
    shapes = [o.shape for o in operands]
    if any(s != shapes[0] for s in shapes):
        raise TypeError(
            f"Arguments to sort must have equal shapes, got: {' '.join(map(str, shapes))}"
        )
    ndim = len(shapes[0])
    if not 0 <= dimension < ndim:
        raise ValueError(f"sort dimension {dimension} is out of bounds for operands of rank {ndim}")
    if not 1 <= num_keys <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(operands)}")
    for i, o in enumerate(operands):
        if kind(o.dtype) == "?":
            raise TypeError(f"sort does not accept dtype {o.dtype} (operand {i})")
    return [ShapedArray(o.shape, o.dtype, o.weak_type) for o in operands]


def _canonical_float(x, dtype):
    """Map -0.0 to 0.0 and every NaN to one positive NaN, for a total-order comparison."""
    zero = constant(0, dtype)
    x = hlo.select(compare(x, zero, "EQ", dtype), zero, x)
    return hlo.select(compare(x, x, "NE", dtype), constant(np.nan, dtype), x)


def _total(x, y, direction):
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"),
    )


def _key_parts(x, dtype) -> list[tuple[ir.Value, np.dtype]]:
    """The scalars a key compares by, most significant first."""
    k = kind(dtype)
    if k == "c":
        part = real_dtype(dtype)
        return [(hlo.real(x), part), (hlo.imag(x), part)]
    return [(x, dtype)]


def _less(x, y, dtype) -> ir.Value:
    if kind(dtype) == "f":
        return _total(_canonical_float(x, dtype), _canonical_float(y, dtype), "LT")
    return compare(x, y, "LT", dtype)


def _equal(x, y, dtype) -> ir.Value:
    if kind(dtype) == "f":
        return _total(_canonical_float(x, dtype), _canonical_float(y, dtype), "EQ")
    return compare(x, y, "EQ", dtype)


def _sort_lowering(ctx, *operands, dimension, is_stable, num_keys):
    avals = ctx.avals_in
    op = hlo.SortOp(
        [ir_type(a) for a in ctx.avals_out],
        list(operands),
        dimension=dimension,
        is_stable=is_stable,
    )
    scalars = []
    for a in avals:
        t = ir_type(ShapedArray((), a.dtype))
        scalars += [t, t]
    block = op.comparator.blocks.append(*scalars)
    with ir.InsertionPoint(block):
        parts = []  # (lhs, rhs, dtype) from most to least significant
        for i in range(num_keys):
            lhs, rhs = block.arguments[2 * i], block.arguments[2 * i + 1]
            dtype = avals[i].dtype
            parts += [
                (a, b, d)
                for (a, d), (b, _) in zip(
                    _key_parts(lhs, dtype), _key_parts(rhs, dtype), strict=True
                )
            ]
        lhs, rhs, dtype = parts[-1]
        result = _less(lhs, rhs, dtype)
        for lhs, rhs, dtype in reversed(parts[:-1]):
            result = hlo.or_(_less(lhs, rhs, dtype), hlo.and_(_equal(lhs, rhs, dtype), result))
        hlo.return_([result])
    return op.results


sort_p = Primitive("sort")
sort_p.multiple_results = True
sort_p.def_abstract_eval(_sort_abstract_eval)
sort_p.def_impl(partial(apply_primitive, sort_p))
register_lowering(sort_p, _sort_lowering)


def _iota_like(aval: ShapedArray, dimension: int):
    from .structural import broadcasted_iota

    return broadcasted_iota(np.int32, aval.shape, dimension)


def _sort_jvp(primals, tangents, *, dimension, is_stable, num_keys):
    # Both sorts are stable so that tied keys move their operands and tangents alike.
    out = sort_p.bind(*primals, dimension=dimension, is_stable=True, num_keys=num_keys)
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    tangents_out = [Zero(t.aval) if type(t) is Zero else None for t in tangents]
    if live:
        keys = primals[:num_keys]
        moved = sort_p.bind(
            *keys,
            *(tangents[i] for i in live),
            dimension=dimension,
            is_stable=True,
            num_keys=num_keys,
        )[num_keys:]
        for i, t in zip(live, moved, strict=True):
            tangents_out[i] = t
    return out, tangents_out


def _sort_transpose(cts, *operands, dimension, is_stable, num_keys):
    keys = operands[:num_keys]
    if any(is_undefined_primal(k) for k in keys):
        raise NotImplementedError("sort is not linear in its keys: they cannot be transposed")
    perm = sort_p.bind(
        *keys,
        _iota_like(aval_of(keys[0]), dimension),
        dimension=dimension,
        is_stable=True,
        num_keys=num_keys,
    )[-1]
    result: list = [None] * len(operands)
    for i in range(num_keys, len(operands)):
        if not is_undefined_primal(operands[i]):
            continue
        ct = cts[i]
        if type(ct) is Zero:
            result[i] = Zero(operands[i].aval)
            continue
        # out[j] = x[perm[j]], so x's cotangent at perm[j] is ct[j]: sort ct by perm.
        result[i] = sort_p.bind(perm, ct, dimension=dimension, is_stable=True, num_keys=1)[1]
    return result


def _sort_batch_rule(args, dims, *, dimension, is_stable, num_keys):
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True)]
    outs = sort_p.bind(*args, dimension=dimension + 1, is_stable=is_stable, num_keys=num_keys)
    return outs, [0] * len(outs)


jvp_rules[sort_p] = _sort_jvp
transpose_rules[sort_p] = _sort_transpose
batching_rules[sort_p] = _sort_batch_rule


def _canonical_dimension(dimension, ndim: int, name: str = "sort") -> int:
    try:
        dimension = operator.index(dimension)
    except TypeError:
        raise TypeError(f"{name} dimension must be an integer, got {dimension!r}") from None
    if not -ndim <= dimension < ndim:
        raise ValueError(f"axis {dimension} is out of bounds for array of dimension {ndim}")
    return dimension % ndim


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sort one array, or several arrays by their first ``num_keys`` (jax.lax.sort).

    With a sequence of operands (of one shape), all are permuted alike, ordered
    lexicographically by the first ``num_keys``; the result is a tuple. Floats
    sort by total order with ``-0.0`` equal to ``0.0`` and NaNs last; complex
    numbers by real then imaginary part.
    """
    single = not isinstance(operand, tuple | list)
    operands = [operand] if single else list(operand)
    if not operands:
        raise TypeError("sort requires at least one operand")
    num_keys = operator.index(num_keys)
    if single and num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    ndim = aval_of(operands[0]).ndim
    dimension = _canonical_dimension(dimension, ndim)
    out = sort_p.bind(*operands, dimension=dimension, is_stable=bool(is_stable), num_keys=num_keys)
    return out[0] if single else tuple(out)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """Sort ``keys`` along ``dimension`` and permute ``values`` alike (jax.lax.sort_key_val)."""
    ndim = aval_of(keys).ndim
    dimension = _canonical_dimension(dimension, ndim)
    k, v = sort_p.bind(keys, values, dimension=dimension, is_stable=bool(is_stable), num_keys=1)
    return k, v


def argsort(
    operand,
    dimension: int = -1,
    *,
    is_stable: bool = True,
    descending: bool = False,
    index_dtype=np.int32,
):
    """Return the indices that sort ``operand`` along ``dimension`` (a helper of jnp.argsort).

    Descending order keeps ties in their original order (the operand and the
    indices are reversed around an ascending stable sort, as JAX does).
    """
    from .structural import broadcasted_iota, rev

    aval = aval_of(operand)
    dimension = _canonical_dimension(dimension, aval.ndim, "argsort")
    index_dtype = dtypes.canonicalize_dtype(dtypes.dtype(index_dtype))
    iota = broadcasted_iota(index_dtype, aval.shape, dimension)
    if descending:
        operand, iota = rev(operand, (dimension,)), rev(iota, (dimension,))
    _, perm = sort_p.bind(operand, iota, dimension=dimension, is_stable=bool(is_stable), num_keys=1)
    return rev(perm, (dimension,)) if descending else perm


# --- top_k ----------------------------------------------------------------------------------------


def _top_k_abstract_eval(operand, *, k, axis):
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if not operand.shape:
        raise ValueError("top_k operand must have >= 1 dimension, got shape ()")
    if not 0 <= axis < operand.ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {operand.ndim}")
    if kind(operand.dtype) == "c":
        raise ValueError("top_k is not compatible with complex inputs.")
    if kind(operand.dtype) == "?":
        raise TypeError(f"top_k does not accept dtype {operand.dtype}")
    if operand.shape[axis] < k:
        raise ValueError(
            "k argument to top_k must be no larger than size along axis; got "
            f"k={k} with shape={list(operand.shape)} and axis={axis}"
        )
    shape = list(operand.shape)
    shape[axis] = k
    shape = tuple(shape)
    return [ShapedArray(shape, operand.dtype, operand.weak_type), ShapedArray(shape, np.int32)]


def _top_k_lowering(ctx, x, *, k, axis):
    aval = ctx.avals_in[0]
    last = aval.ndim - 1
    values_aval, indices_aval = ctx.avals_out
    if axis == last:
        op = chlo.TopKOp(x, k, results=[ir_type(values_aval), ir_type(indices_aval)])
        return op.results
    perm = list(range(aval.ndim))
    perm[axis], perm[last] = last, axis
    moved = [values_aval.shape[p] for p in perm]
    x = hlo.transpose(x, perm)
    op = chlo.TopKOp(
        x,
        k,
        results=[
            ir_type(ShapedArray(tuple(moved), values_aval.dtype)),
            ir_type(ShapedArray(tuple(moved), np.int32)),
        ],
    )
    return [hlo.transpose(r, perm) for r in op.results]


top_k_p = Primitive("top_k")
top_k_p.multiple_results = True
top_k_p.def_abstract_eval(_top_k_abstract_eval)
top_k_p.def_impl(partial(apply_primitive, top_k_p))
register_lowering(top_k_p, _top_k_lowering)


def _take_along(x, indices, axis: int):
    """``x`` picked at ``indices`` along ``axis`` (other dims equal): one batched gather, as JAX."""
    from .indexing import GatherDimensionNumbers, gather
    from .structural import expand_dims

    ndim = aval_of(x).ndim
    batch = tuple(d for d in range(ndim) if d != axis)
    dn = GatherDimensionNumbers(
        offset_dims=(),
        collapsed_slice_dims=(axis,),
        start_index_map=(axis,),
        operand_batching_dims=batch,
        start_indices_batching_dims=batch,
    )
    return gather(x, expand_dims(indices, (ndim,)), dn, (1,) * ndim, mode="promise_in_bounds")


def _top_k_jvp(primals, tangents, *, k, axis):
    (x,), (t,) = primals, tangents
    values, indices = top_k_p.bind(x, k=k, axis=axis)
    shape = aval_of(indices).shape
    index_zero = Zero(ShapedArray(shape, dtypes.float0))
    if type(t) is Zero:
        return [values, indices], [Zero(t.aval.update(shape=shape)), index_zero]
    return [values, indices], [_take_along(t, indices, axis), index_zero]


def _top_k_batch_rule(args, dims, *, k, axis):
    (x,), (d,) = args, dims
    new_axis = axis + 1 if axis >= d else axis
    return top_k_p.bind(x, k=k, axis=new_axis), [d, d]


jvp_rules[top_k_p] = _top_k_jvp
batching_rules[top_k_p] = _top_k_batch_rule


def top_k(operand, k: int, *, axis: int = -1):
    """Return the ``k`` largest values along ``axis`` and their indices (jax.lax.top_k).

    Values come in descending order (NaN counts as largest; ties keep index
    order); indices are int32.
    """
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"top_k k must be an integer, got {k!r}") from None
    aval = aval_of(operand)
    if not aval.shape:
        raise ValueError("axis -1 is out of bounds for array of dimension 0")
    axis = _canonical_dimension(axis, aval.ndim, "top_k")
    # A list, as JAX's (the primitive's results)
    return list(top_k_p.bind(operand, k=k, axis=axis))
