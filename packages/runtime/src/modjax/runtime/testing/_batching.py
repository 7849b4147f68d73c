"""The batching rule against a loop over the batch."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st

from modjax.batching import vmap
from modjax.tracecore import dtypes
from modjax.tracecore.core import to_aval

from ._cases import Case
from ._compare import as_list, assert_values_close, host, like_extended
from ._derivatives import normalize_argnums
from ._evaluation import jitted

__all__ = ["check_batching"]

# Batch sizes: 0 (an empty batch) and 1 are edge cases rules get wrong.
_SIZES = (2, 1, 0)


@st.composite
def _batching(draw, ndims: list[int], allowed: tuple[int, ...]):
    """Draw the batch size and each operand's batch axis (None: unbatched; maybe negative).

    Only the operands at ``allowed`` positions are batched, at least one of them.
    """
    axes = [
        draw(st.one_of(st.none(), st.integers(-n - 1, n))) if i in allowed else None
        for i, n in enumerate(ndims)
    ]
    if all(a is None for a in axes):
        i = draw(st.sampled_from(allowed))
        axes[i] = draw(st.integers(0, ndims[i]))
    return axes, draw(st.sampled_from(_SIZES))


def _stack(arg, axis: int, size: int):
    """``size`` variants of ``arg`` stacked at ``axis`` (its elements rolled: the same
    values, so they stay in the operand's domain)."""
    aval = to_aval(arg)
    axis %= len(aval.shape) + 1
    data = host(arg)  # a key array's data has trailing axes, after every batch position
    variants = [np.roll(data.reshape(-1), k).reshape(data.shape) for k in range(size)]
    stacked = np.stack(variants) if variants else np.zeros((0, *data.shape), data.dtype)
    stacked = np.moveaxis(stacked, 0, axis)
    if dtypes.issubdtype(aval.dtype, dtypes.extended):
        return like_extended(arg, stacked)  # back into keys (or EArrays) of arg's dtype
    return stacked


def check_batching(prim, case: Case, draw, batch_argnums: Sequence[int] | None = None) -> None:
    """Check ``vmap`` of the primitive against binding it on each slice of the batch.

    Only the operands of ``batch_argnums`` (default: all) may be batched. Both run
    under ``jit`` (shared programs); the batching rule runs while it traces.
    """
    allowed = (
        tuple(range(len(case.args)))
        if batch_argnums is None
        else normalize_argnums(batch_argnums, len(case.args), "batch_argnums")
    )
    if not allowed:
        return
    ndims = [len(to_aval(a).shape) for a in case.args]
    axes, size = draw(_batching(ndims, allowed))
    args = [a if ax is None else _stack(a, ax, size) for a, ax in zip(case.args, axes, strict=True)]
    params = case.params

    def build():
        return vmap(lambda *xs: prim.bind(*xs, **params), in_axes=tuple(axes))

    key = ("vmap", tuple(axes), tuple(to_aval(a) for a in args))
    batched = as_list(prim, jitted(prim, params, key, build)(*args))
    f = jitted(prim, params)
    if size == 0:  # nothing to loop over: the batched results have one slice's types
        one = as_list(prim, f(*case.args))
        for i, (b, o) in enumerate(zip(batched, one, strict=True)):
            ba, oa = to_aval(b), to_aval(o)
            if (ba.shape, ba.dtype) != ((0, *oa.shape), oa.dtype):
                raise AssertionError(f"output {i} of an empty batch: {ba} vs 0 x {oa}")
        return
    slices = [
        as_list(
            prim,
            f(*[a if ax is None else _take(a, k, ax) for a, ax in zip(args, axes, strict=True)]),
        )
        for k in range(size)
    ]
    for i, b in enumerate(batched):
        slice_aval = to_aval(slices[0][i])
        ba = to_aval(b)
        expected = ((size, *slice_aval.shape), slice_aval.dtype, slice_aval.weak_type)
        if (ba.shape, ba.dtype, ba.weak_type) != expected:
            raise AssertionError(
                f"output {i}: vmap gives {ba} (weak_type={ba.weak_type}), "
                f"the loop {size} x {slice_aval} (weak_type={slice_aval.weak_type})"
            )
        for k in range(size):
            what = f"output {i}, batch element {k} of {size} (in_axes={tuple(axes)}): vmap vs loop"
            assert_values_close(_take(b, k, 0), slices[k][i], what)


def _take(x, k: int, axis: int):
    """Slice ``k`` of ``x`` along ``axis``, on the host (key arrays through their data)."""
    aval = to_aval(x)
    axis %= len(aval.shape)
    if dtypes.issubdtype(aval.dtype, dtypes.extended):
        return like_extended(x, np.take(host(x), k, axis))
    return np.take(host(x), k, axis)
