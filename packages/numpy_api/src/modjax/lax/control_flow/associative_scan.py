"""``associative_scan``: a parallel prefix scan composed of lax primitives (none of its own).

The scan follows Blelloch's recursion: combine adjacent pairs, scan the
half-size sequence of pair results (which gives the prefixes ending at the odd
positions), then combine each odd prefix with the next element of the input
(the prefixes ending at the even positions) and interleave the two. Every step
is a static ``slice``, a call of the user's ``fn``, a ``concatenate``, a ``pad``
or an ``add``, so ``jit``, ``grad`` and ``vmap`` go through the rules of those
primitives, and the program has ``O(log n)`` rounds of combines.

The program is JAX's: the combines happen in the same order and the odd and
even results are interleaved as JAX's are (zero-padded copies added), so a
floating-point ``fn`` (associative only up to rounding) gives JAX's bits, and
so do its derivatives after XLA compiles them (JAX's adds also turn ``-0.0``
into ``0.0``). One deliberate difference: a negative ``axis`` works with
``reverse=True`` (JAX hands the negative axis to ``rev``, which rejects it).
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np

from modjax.tracecore import tree_util

from .._common import aval_of
from ..elementwise import add, bitwise_or
from ..indexing import slice_in_dim
from ..structural import concatenate, pad, rev

__all__ = ["associative_scan"]


def associative_scan(fn: Callable, elems, reverse: bool = False, axis: int = 0):
    """Scan ``elems`` with the associative ``fn`` in parallel (jax.lax.associative_scan).

    ``elems`` is a pytree of arrays that share their size ``n`` along ``axis``;
    ``fn(a, b)`` combines two pytrees of that structure elementwise along
    ``axis`` and returns one of the same structure, shapes and dtypes. Element
    ``k`` of the result is ``fn`` folded over elements ``0..k`` of ``elems``:
    ``[a, fn(a, b), fn(fn(a, b), c), ...]``; with ``reverse`` it is folded over
    ``k..n-1`` from the end: ``[..., fn(fn(z, y), x), fn(z, y), z]``.
    """
    if not callable(fn):
        raise TypeError("lax.associative_scan: fn argument should be callable.")
    leaves, tree = tree_util.tree_flatten(elems)
    if not leaves:
        # JAX fails here with an IndexError from indexing the empty list of leaves.
        raise IndexError(
            f"lax.associative_scan: elems must hold at least one array, got the empty pytree "
            f"{tree}."
        )
    avals = [aval_of(x) for x in leaves]
    axis = operator.index(axis)
    ndim = avals[0].ndim
    if not -ndim <= axis < ndim:
        # numpy's AxisError is a ValueError (JAX's kind) and an IndexError, with JAX's message.
        raise np.exceptions.AxisError(axis, ndim)
    axis = axis + ndim if axis < 0 else axis
    size = avals[0].shape[axis]
    if any(a.ndim <= axis or a.shape[axis] != size for a in avals[1:]):
        raise ValueError(
            "Array inputs to associative_scan must have the same first dimension. "
            f"(saw: {[a.shape for a in avals]})"
        )

    def combine(a: list, b: list) -> list:
        # fn sees and returns pytrees; the recursion works on lists of leaves.
        out_leaves, out_tree = tree_util.tree_flatten(
            fn(tree_util.tree_unflatten(tree, a), tree_util.tree_unflatten(tree, b))
        )
        if out_tree != tree:
            raise ValueError(
                f"lax.associative_scan: fn must return a pytree of the structure of elems, "
                f"{tree}, got {out_tree}."
            )
        # A wrong shape would otherwise be broadcast or sliced into a silently wrong result.
        for x, y in zip(a, out_leaves, strict=True):
            want, got = aval_of(x), aval_of(y)
            if got.shape != want.shape:
                raise ValueError(
                    f"lax.associative_scan: fn must return arrays of the shapes of its inputs, "
                    f"got shape {got.shape} for inputs of shape {want.shape}."
                )
            if got.dtype != want.dtype:
                raise TypeError(
                    f"lax.associative_scan: fn must return arrays of the dtypes of its inputs, "
                    f"got {got.dtype} for inputs of dtype {want.dtype}."
                )
        return out_leaves

    if reverse:
        leaves = [rev(x, (axis,)) for x in leaves]
    out = _prefix_scan(combine, leaves, axis)
    if reverse:
        out = [rev(x, (axis,)) for x in out]
    return tree_util.tree_unflatten(tree, out)


def _prefix_scan(combine: Callable, xs: list, axis: int) -> list:
    """Return the inclusive prefix combines of the leaves ``xs`` along ``axis``."""
    n = aval_of(xs[0]).shape[axis]
    if n < 2:
        return xs
    # Pair (x0, x1), (x2, x3), ...; an odd last element has no partner and is left out.
    firsts = [slice_in_dim(x, 0, -1, 2, axis) for x in xs]
    seconds = [slice_in_dim(x, 1, None, 2, axis) for x in xs]
    odds = _prefix_scan(combine, combine(firsts, seconds), axis)  # prefixes ending at 1, 3, ...
    # The prefix ending at 2k is the one ending at 2k-1 combined with x_2k; at 0 it is x0.
    # As JAX, fn also sees the empty slices when n == 2 (the program is then JAX's).
    before = odds if n % 2 else [slice_in_dim(o, 0, -1, 1, axis) for o in odds]
    later = combine(before, [slice_in_dim(x, 2, None, 2, axis) for x in xs])
    evens = [
        concatenate([slice_in_dim(x, 0, 1, 1, axis), e], axis)
        for x, e in zip(xs, later, strict=True)
    ]
    return [_interleave(e, o, axis) for e, o in zip(evens, odds, strict=True)]


def _interleave(evens, odds, axis: int):
    """Return ``[e0, o0, e1, o1, ...]`` along ``axis``; ``evens`` may be one longer than ``odds``.

    As JAX's: each is spread out with zeros (an interior padding of 1) and the two are
    added (or-ed for bool). The adds make ``-0.0`` into ``0.0`` as JAX's do, and XLA
    compiles the program (and its transpose) into JAX's bits.
    """
    shape_e, ndim = aval_of(evens).shape, aval_of(evens).ndim
    same = shape_e[axis] == aval_of(odds).shape[axis]
    pad_e, pad_o = [(0, 0, 0)] * ndim, [(0, 0, 0)] * ndim
    pad_e[axis] = (0, 1 if same else 0, 1)
    pad_o[axis] = (1, 0 if same else 1, 1)
    zero_e = np.zeros((), aval_of(evens).dtype)
    zero_o = np.zeros((), aval_of(odds).dtype)
    op = bitwise_or if aval_of(evens).dtype == np.bool_ else add
    return op(pad(evens, zero_e, pad_e), pad(odds, zero_o, pad_o))
