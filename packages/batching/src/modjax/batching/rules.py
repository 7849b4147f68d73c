"""Rule factories for the common shapes of primitives (jax's defvectorized & co).

Each ``defX(prim)`` registers ``batching_rules[prim]`` and returns the rule.
"""

from __future__ import annotations

from collections import Counter

from modjax.tracecore.core import Primitive, to_aval

from .batch_trace import batching_rules
from .primitives import expand_dims, moveaxis

__all__ = [
    "defvectorized",
    "defbroadcasting",
    "defreducer",
    "shift_axes",
    "vectorized_rule",
    "broadcasting_rule",
]


def vectorized_rule(prim: Primitive):
    """Return the rule of a unary elementwise ``prim`` (jax's batching.vectorized_batcher).

    The batch dim passes through unchanged.
    """

    def rule(args, dims, **params):
        return prim.bind(*args, **params), dims[0]

    return rule


def defvectorized(prim: Primitive):
    """Register the rule of a unary elementwise primitive (jax's batching.defvectorized)."""
    batching_rules[prim] = rule = vectorized_rule(prim)
    return rule


def _aligned_operand(x, bdim, ndim, rank, out_rank, out_bdim, rank_polymorphic):
    """Lay out one operand for a broadcasting bind whose result is batched at ``out_bdim``.

    ``rank`` is the operand's logical rank, ``out_rank`` the result's (batch
    included). Logical axes are right-aligned, numpy style. Missing axes become
    size-1 axes, except leading ones in rank-polymorphic mode (numpy adds those
    implicitly) and except for unbatched scalars, which every broadcasting
    primitive takes as they are.
    """
    if bdim is None and ndim == 0:
        return x
    logical_positions = [p for p in range(out_rank) if p != out_bdim][out_rank - 1 - rank :]
    if bdim is not None:
        # Put the batch axis among the logical ones where the result has it.
        k = sum(p < out_bdim for p in logical_positions)
        x = moveaxis(x, bdim, k)
        occupied = sorted([*logical_positions, out_bdim])
    else:
        occupied = logical_positions
    start = occupied[0] if (rank_polymorphic and occupied) else 0
    missing = [p - start for p in range(start, out_rank) if p not in occupied]
    return expand_dims(x, missing)


def _jax_broadcasting_rule(prim: Primitive):
    """JAX's ``broadcast_batcher`` for lax's elementwise primitives (equal ranks or scalars).

    When every non-scalar operand is batched at the same axis with the same shape,
    ``prim`` is bound as is. Otherwise every batch axis moves to the front, an
    unbatched non-scalar operand gets a leading size-1 axis and a batched scalar
    trailing ones, and the result is batched at axis 0: the program JAX's vmap
    emits, so XLA compiles it (and rounds its reductions) as it does JAX's.
    """

    def rule(args, dims, **params):
        ndims = [len(to_aval(x).shape) for x in args]
        shape, dim = next(
            (to_aval(x).shape, d) for x, d in zip(args, dims, strict=True) if d is not None
        )
        if all(
            to_aval(x).shape == shape and d == dim
            for x, d, n in zip(args, dims, ndims, strict=True)
            if n
        ):
            out, out_bdim = prim.bind(*args, **params), dim
        else:
            moved = []
            for x, d, n in zip(args, dims, ndims, strict=True):
                if d is not None:
                    x = moveaxis(x, d, 0) if d else x
                elif n:
                    x = expand_dims(x, (0,))
                moved.append(x)
            rank = max(len(to_aval(x).shape) for x in moved)
            args = [
                x
                if d is None or len(to_aval(x).shape) == rank
                else expand_dims(x, tuple(range(len(to_aval(x).shape), rank)))
                for x, d in zip(moved, dims, strict=True)
            ]
            out, out_bdim = prim.bind(*args, **params), 0
        if prim.multiple_results:
            return out, [out_bdim] * len(out)
        return out, out_bdim

    return rule


def broadcasting_rule(prim: Primitive, rank_polymorphic: bool = False):
    """Return the rule of an n-ary broadcasting ``prim`` (jax's batching.broadcast_batcher).

    For lax's primitives (equal ranks; size-1 axes and rank-0 operands broadcast) the
    rule is JAX's (see ``_jax_broadcasting_rule``). With ``rank_polymorphic`` (numpy's
    broadcasting, operands of different ranks) operands are aligned, not
    materialized: when every non-scalar operand is batched at the same axis with the
    same rank, ``prim`` is bound as is; otherwise the batch axis goes where most
    batched operands already have it, the others are moved there, and unbatched
    operands get size-1 axes (a reshape) except the leading ones numpy implies.
    """
    if not rank_polymorphic:
        return _jax_broadcasting_rule(prim)

    def rule(args, dims, **params):
        ndims = [len(to_aval(x).shape) for x in args]
        ranks = [n if d is None else n - 1 for n, d in zip(ndims, dims, strict=True)]
        rank = max(ranks)
        batched = [(d, r) for d, r in zip(dims, ranks, strict=True) if d is not None]
        first_dim = batched[0][0]
        if all(
            (d == first_dim and r == rank) if d is not None else n == 0
            for d, r, n in zip(dims, ranks, ndims, strict=True)
        ):
            out, out_bdim = prim.bind(*args, **params), first_dim
        else:
            # Each batched operand suggests the result's batch position that needs no move;
            # the most popular suggestion wins (the smallest on ties).
            if len(batched) == 1:
                out_bdim = first_dim + rank - batched[0][1]
            else:
                votes = Counter(d + rank - r for d, r in batched)
                out_bdim = max(votes, key=lambda p: (votes[p], -p))
            args = [
                _aligned_operand(x, d, n, r, rank + 1, out_bdim, rank_polymorphic)
                for x, d, n, r in zip(args, dims, ndims, ranks, strict=True)
            ]
            out = prim.bind(*args, **params)
        if prim.multiple_results:
            return out, [out_bdim] * len(out)
        return out, out_bdim

    return rule


def defbroadcasting(prim: Primitive, *, rank_polymorphic: bool = False):
    """Register the rule of an n-ary broadcasting elementwise primitive (jax's defbroadcasting).

    See ``broadcasting_rule``; ``rank_polymorphic=True`` is for primitives with
    numpy's broadcasting (operands of different ranks), the default for lax's
    (equal ranks, size-1 axes and rank-0 operands broadcast).
    """
    batching_rules[prim] = rule = broadcasting_rule(prim, rank_polymorphic)
    return rule


def shift_axes(axes, bdim: int):
    """Map logical ``axes`` (an int or a sequence) to axes of an array batched at ``bdim``.

    The axis arithmetic of jax's batching.reducer_batcher, for rule authors.
    """
    if isinstance(axes, int):
        return axes if axes < bdim else axes + 1
    return type(axes)(a if a < bdim else a + 1 for a in axes)


def defreducer(prim: Primitive, axes_param: str = "axes", *, keepdims: bool = False):
    """Register the rule of a one-operand primitive that works along some axes (jax's defreducer).

    ``params[axes_param]`` holds the non-negative axes it works on (an int or a
    sequence); the rule shifts them past the batch axis. Without ``keepdims``
    those axes are removed from the result (reductions, argmax); with it the
    result keeps the operand's rank (cumulative ops, sorts along an axis).
    """

    def rule(args, dims, **params):
        (x,), (bdim,) = args, dims
        axes = params[axes_param]
        params[axes_param] = shift_axes(axes, bdim)
        out = prim.bind(x, **params)
        if keepdims:
            out_bdim = bdim
        else:
            removed = (axes,) if isinstance(axes, int) else axes
            out_bdim = bdim - sum(a < bdim for a in removed)
        if prim.multiple_results:
            return out, [out_bdim] * len(out)
        return out, out_bdim

    batching_rules[prim] = rule
    return rule
