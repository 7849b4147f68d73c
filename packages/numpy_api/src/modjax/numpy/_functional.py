"""Applying functions over axes: ``apply_along_axis`` and ``apply_over_axes``.

``apply_along_axis`` vectorizes the 1-D function with ``vmap`` over every other
axis (so it is traced once, works under ``jit``/``grad``/``vmap`` and the
function's output may be an array of any shape); ``apply_over_axes`` calls the
function once per axis, as numpy does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from modjax.batching import vmap

from ._util import aval, canonicalize_axis

__all__ = ["apply_along_axis", "apply_over_axes"]


def apply_along_axis(func1d: Callable, axis: int, arr: Any, *args, **kwargs):
    """Apply ``func1d`` to the 1-D slices of ``arr`` along ``axis`` (jax.numpy.apply_along_axis).

    ``args``/``kwargs`` are passed on to ``func1d``. The result's shape is
    ``arr.shape[:axis] + out.shape + arr.shape[axis + 1:]`` where ``out`` is
    ``func1d``'s result on one slice.
    """
    from ._creation import asarray

    arr = asarray(arr)
    ndim = aval(arr).ndim
    axis = canonicalize_axis(axis, ndim)

    def on_slice(v):
        return func1d(v, *args, **kwargs)

    fn = on_slice
    # Axes after ``axis`` map innermost, each putting its batch dimension last, so they
    # end up after the function's output dimensions in order; the axes before map outermost.
    for i in range(1, ndim - axis):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func: Callable, a: Any, axes: Sequence[int]):
    """Apply ``func(a, axis)`` repeatedly, once for each of ``axes`` (jax.numpy.apply_over_axes).

    ``func`` must keep the rank or remove the one axis (which is then put back
    with size 1), so the result has ``a``'s rank.
    """
    from ._creation import asarray
    from ._manipulation import expand_dims

    a = asarray(a)
    for axis in axes:
        out = asarray(func(a, axis))
        if aval(out).ndim == aval(a).ndim - 1:
            out = expand_dims(out, axis)
        elif aval(out).ndim != aval(a).ndim:
            raise ValueError(
                f"jnp.apply_over_axes: function is not returning an array of the correct shape: "
                f"got rank {aval(out).ndim} from an array of rank {aval(a).ndim} over axis {axis}"
            )
        a = out
    return a
