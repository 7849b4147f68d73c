"""The generic ``reduce``: a user's Python computation as the reduction (jax.lax.reduce).

``reduce(operands, init_values, computation, dimensions)`` recognizes the
monoids JAX recognizes (``lax.add`` with 0, ``lax.mul`` with 1, ``lax.max``
with the least value, ``lax.min`` with the greatest, ``bitwise_and``/``or``/
``xor`` with their identities) and binds the matching ``reduce_*`` primitive;
any other computation is traced on scalars to a jaxpr that becomes the
``reduce`` primitive's region (variadic: pytrees of operands reduce together).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, jvp, jvp_rules
from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import hlo, ir, ir_type, lower_jaxpr_inline, register_lowering
from modjax.runtime import apply_primitive
from modjax.sharding.constraint import resharded_result
from modjax.tracecore import make_jaxpr, tree_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, Tracer
from modjax.tracecore.evaluation import jaxpr_as_fun

from ._common import aval_of, kind, reducer_region
from .reductions import _extreme

__all__ = [
    "reduce",
    "reduce_p",
]


# --- the generic reduce ------------------------------------------------------------------------


def _reduce_abstract_eval(*avals, jaxpr, dimensions):
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    if len({o.shape for o in operands}) != 1:
        raise ValueError(
            "reduce found non-scalar initial value or operands of different shapes: "
            f"{', '.join(str(o.shape) for o in operands)}"
        )
    for i, (o, v) in enumerate(zip(operands, inits, strict=True)):
        if v.shape:
            raise ValueError(f"reduce found non-scalar initial value: {v.shape} (init {i})")
        if o.dtype != v.dtype:
            raise TypeError(
                "reduce operand dtypes should match corresponding initial value dtypes, got "
                f"operand {o.str_short()} and initial value {v.str_short()} at position {i}"
            )
    shape = operands[0].shape
    if len(set(dimensions)) != len(dimensions):
        raise ValueError(f"reduce dimensions must be unique, got {dimensions}")
    if any(not 0 <= d < len(shape) for d in dimensions):
        raise ValueError(
            f"reduce dimensions {dimensions} out of bounds for operands of shape {shape}"
        )
    out_shape = tuple(d for i, d in enumerate(shape) if i not in dimensions)
    return [ShapedArray(out_shape, o.dtype) for o in operands]


def _reduce_lowering(ctx, *args, jaxpr, dimensions):
    n = len(args) // 2
    op = hlo.ReduceOp(
        [ir_type(a) for a in ctx.avals_out], list(args[:n]), list(args[n:]), list(dimensions)
    )
    block = reducer_region(op, [a.dtype for a in ctx.avals_in[:n]])
    with ir.InsertionPoint(block):
        hlo.return_(lower_jaxpr_inline(ctx, jaxpr, list(block.arguments)))
    return op.results


reduce_p = Primitive("reduce")
reduce_p.multiple_results = True
reduce_p.def_abstract_eval(_reduce_abstract_eval)
reduce_p.def_impl(partial(apply_primitive, reduce_p))
register_lowering(reduce_p, _reduce_lowering)


def _reduce_batch_rule(args, dims, *, jaxpr, dimensions):
    n = len(args) // 2
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of lax.reduce over batched init_values is not supported")
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    operands = [bdim_at_front(a, d, size) for a, d in zip(args[:n], dims[:n], strict=True)]
    outs = reduce_p.bind(
        *operands, *args[n:], jaxpr=jaxpr, dimensions=tuple(d + 1 for d in dimensions)
    )
    return outs, [0] * n


batching_rules[reduce_p] = _reduce_batch_rule


def _reduce_jvp(primals, tangents, *, jaxpr, dimensions):
    """Differentiate by a pairwise tree of the computation's JVP over the reduced elements.

    Like JAX, this needs the computation to work elementwise on arrays, and the
    init values to be unperturbed.
    """
    from .structural import broadcast_in_dim, concatenate, full, reshape, transpose

    n = len(primals) // 2
    xs, inits = list(primals[:n]), primals[n:]
    if any(type(t) is not Zero for t in tangents[n:]):
        raise NotImplementedError(
            "Gradient of general lax.reduce with non-zero tangents for initial values to "
            "reduction not implemented"
        )
    outs = reduce_p.bind(*primals, jaxpr=jaxpr, dimensions=dimensions)
    ts = list(tangents[:n])
    if all(type(t) is Zero for t in ts):
        return outs, [Zero(o.aval) for o in outs]
    shape = aval_of(xs[0]).shape
    kept = [i for i in range(len(shape)) if i not in dimensions]
    rest = tuple(shape[i] for i in kept)
    m = int(np.prod([shape[d] for d in dimensions], dtype=np.int64))

    def flat(x):
        return reshape(transpose(x, tuple(dimensions) + tuple(kept)), (m, *rest))

    ts = [
        flat(full(shape, np.zeros((), aval_of(x).dtype))) if type(t) is Zero else flat(t)
        for x, t in zip(xs, ts, strict=True)
    ]
    xs = [flat(x) for x in xs]
    fun = jaxpr_as_fun(jaxpr)

    def combine(a, ta, b, tb):
        prim_out, tan_out = jvp(lambda *v: fun(*v), (*a, *b), (*ta, *tb))
        return list(prim_out), list(tan_out)

    def row_of(v):
        return broadcast_in_dim(v, (1, *rest), ())

    while m > 1:
        if m % 2:
            xs = [concatenate([x, row_of(v)], 0) for x, v in zip(xs, inits, strict=True)]
            ts = [concatenate([t, full((1, *rest), np.zeros((), aval_of(t).dtype))], 0) for t in ts]
            m += 1
        half = m // 2
        evens = [_stride(x, 0, m) for x in xs], [_stride(t, 0, m) for t in ts]
        odds = [_stride(x, 1, m) for x in xs], [_stride(t, 1, m) for t in ts]
        xs, ts = combine(evens[0], evens[1], odds[0], odds[1])
        m = half
    if m == 0:
        return outs, [full(rest, np.zeros((), aval_of(o).dtype)) for o in outs]
    tangents_out = [reshape(t, rest) for t in ts]
    return outs, tangents_out


def _stride(x, start: int, m: int):
    from .structural import slice

    aval = aval_of(x)
    return slice(
        x, (start,) + (0,) * (aval.ndim - 1), (m,) + aval.shape[1:], (2,) + (1,) * (aval.ndim - 1)
    )


jvp_rules[reduce_p] = _reduce_jvp


@functools.lru_cache(maxsize=256)
def _traced_computation(computation: Callable, tree, avals: tuple[ShapedArray, ...]):
    """Trace ``computation(x, y)`` on scalars of ``avals`` to a jaxpr, once per signature."""
    n = len(avals)

    def flat(*args):
        x = tree_util.tree_unflatten(tree, args[:n])
        y = tree_util.tree_unflatten(tree, args[n:])
        leaves, out_tree = tree_util.tree_flatten(computation(x, y))
        if out_tree != tree:
            raise TypeError(
                f"reduce: the computation must return the structure of its operands ({tree}), "
                f"got {out_tree}"
            )
        return leaves

    closed = make_jaxpr(flat)(*[np.zeros((), a.dtype) for a in avals] * 2)
    for out_aval, aval in zip(closed.out_avals, avals, strict=True):
        if out_aval.shape != () or out_aval.dtype != aval.dtype:
            raise TypeError(
                "reduce: the computation must return scalars of its operands' dtypes, got "
                f"{out_aval.str_short()} for {aval.str_short()}"
            )
    return closed


def _monoid(computation, dtype, init):
    """Return the ``reduce_*`` function matching ``computation`` and a concrete ``init``."""
    from . import elementwise as ew
    from . import reductions as r

    if isinstance(init, Tracer):
        return None
    try:
        value = np.asarray(init)
    except Exception:  # noqa: BLE001 - an Array that cannot be read, or anything else
        return None
    if value.shape or value.dtype == object:
        return None
    k = kind(dtype)
    candidates = [
        (ew.add, "iufc", 0, r.reduce_sum),
        (ew.mul, "iufc", 1, r.reduce_prod),
        (ew.max, "biuf", _extreme(dtype, largest=False), r.reduce_max),
        (ew.min, "biuf", _extreme(dtype, largest=True), r.reduce_min),
        (ew.bitwise_and, "biu", True if k == "b" else -1, r.reduce_and),
        (ew.bitwise_or, "biu", 0, r.reduce_or),
        (ew.bitwise_xor, "biu", 0, r.reduce_xor),
    ]
    for fn, kinds, identity, reducer in candidates:
        if computation is fn and k in kinds:
            with np.errstate(over="ignore", invalid="ignore"):
                same = np.asarray(identity).astype(dtype) == value.astype(dtype)
            return reducer if bool(same) else None
    return None


def reduce(
    operands, init_values, computation: Callable, dimensions: Sequence[int], out_sharding=None
):
    """Reduce ``operands`` over ``dimensions`` with ``computation`` (jax.lax.reduce).

    ``operands`` and ``init_values`` are matching pytrees (arrays of one shape,
    scalars); ``computation(x, y)`` combines two such trees of scalars and must
    be associative and commutative, with the init values as identity. Known
    monoids bind ``reduce_sum``/``reduce_max``/...; other computations are
    traced to a jaxpr and lowered as the region of ``stablehlo.reduce``.
    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh)
    is the sharding of every result.
    """
    if out_sharding is not None:
        out = reduce(operands, init_values, computation, dimensions)
        avals = [aval_of(x) for x in tree_util.tree_leaves(operands)]
        return tree_util.tree_map(
            lambda r: resharded_result(r, out_sharding, "reduce", avals, operation=True), out
        )
    flat_ops, tree = tree_util.tree_flatten(operands)
    flat_inits, init_tree = tree_util.tree_flatten(init_values)
    if tree != init_tree:
        raise ValueError(
            "reduce: operands and init_values must have the same tree structure, got "
            f"{tree} and {init_tree}"
        )
    if not flat_ops:
        return operands
    try:
        dimensions = tuple(operator.index(d) for d in dimensions)
    except TypeError:
        raise TypeError(f"reduce dimensions must be integers, got {dimensions!r}") from None
    avals = [aval_of(o) for o in flat_ops]
    ndim = avals[0].ndim
    dimensions = tuple(d + ndim if d < 0 else d for d in dimensions)
    if len(flat_ops) == 1:
        reducer = _monoid(computation, avals[0].dtype, flat_inits[0])
        if reducer is not None:
            return tree_util.tree_unflatten(tree, [reducer(flat_ops[0], dimensions)])
    inits = []
    for a, v in zip(avals, flat_inits, strict=True):
        if type(v) in (int, float, complex, bool):
            with np.errstate(over="ignore", invalid="ignore"):
                v = np.asarray(v).astype(a.dtype)
        inits.append(v)
    scalars = tuple(ShapedArray((), a.dtype) for a in avals)
    closed = _traced_computation(computation, tree, scalars)
    outs = reduce_p.bind(*flat_ops, *inits, jaxpr=closed, dimensions=dimensions)
    return tree_util.tree_unflatten(tree, outs)
