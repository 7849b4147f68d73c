"""Interpolation at arbitrary coordinates in scipy.ndimage's names (jax.scipy.ndimage).

``map_coordinates`` with spline order 0 (nearest sample) or 1 (multilinear),
as in JAX: each output is a weighted sum of gathered corner samples, so it is
differentiable with respect to the input and the coordinates.
"""

from __future__ import annotations

import functools
import itertools
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.lax._common import kind
from modjax.runtime import jit

__all__ = ["map_coordinates"]


def _mirror(index, size: int):
    """Fold an index into ``[0, size)`` by reflection about the end samples (scipy's "mirror")."""
    period = size - 1
    return jnp.abs((index + period) % (2 * period) - period)


def _reflect(index, size: int):
    """Fold an index by reflection about the half-sample edges (scipy's "reflect")."""
    # Reflection about -1/2 is mirroring about 0 on the doubled grid 2i + 1.
    return jnp.floor_divide(_mirror(2 * index + 1, 2 * size + 1) - 1, 2)


_INDEX_FIXERS = {
    "constant": lambda index, size: index,
    "nearest": lambda index, size: jnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def _round(x):
    """Round halves away from zero, leaving integers alone (scipy's convention)."""
    return x if kind(x.dtype) in "iu" else lax.round(x)


def _nearest(coordinate):
    return [(_round(coordinate).astype(np.int32), 1)]


def _linear(coordinate):
    lower = jnp.floor(coordinate)
    upper_weight = coordinate - lower
    index = lower.astype(np.int32)
    return [(index, 1 - upper_weight), (index + 1, upper_weight)]


def _map_coordinates(input, coordinates, order: int, mode: str, cval):
    values = jnp.asarray(input)
    coordinates = [jnp.asarray(c) for c in coordinates]
    cval = jnp.asarray(cval, values.dtype)
    if len(coordinates) != values.ndim:
        raise ValueError(
            "coordinates must be a sequence of length input.ndim, but "
            f"{len(coordinates)} != {values.ndim}"
        )
    fix = _INDEX_FIXERS.get(mode)
    if fix is None:
        raise NotImplementedError(
            f"jax.scipy.ndimage.map_coordinates does not yet support mode {mode}. "
            f"Currently supported modes are {set(_INDEX_FIXERS)}."
        )
    if order == 0:
        nodes = _nearest
    elif order == 1:
        nodes = _linear
    else:
        raise NotImplementedError("jax.scipy.ndimage.map_coordinates currently requires order<=1")
    per_axis = []
    for coordinate, size in zip(coordinates, values.shape, strict=True):
        axis_nodes = []
        for index, weight in nodes(coordinate):
            valid = (index >= 0) & (index < size) if mode == "constant" else None
            axis_nodes.append((fix(index, size), valid, weight))
        per_axis.append(axis_nodes)
    terms = []
    for corner in itertools.product(*per_axis):
        indices = tuple(c[0] for c in corner)
        sample = values[indices]
        valids = [c[1] for c in corner if c[1] is not None]
        if valids:
            sample = jnp.where(functools.reduce(operator.and_, valids), sample, cval)
        weight = functools.reduce(operator.mul, [c[2] for c in corner])
        terms.append(weight * sample)
    result = functools.reduce(operator.add, terms) if terms else jnp.zeros((), values.dtype)
    if kind(values.dtype) in "iu":
        result = _round(result)
    return result.astype(values.dtype)


# As in JAX, one program per (order, mode, cval): eager calls compile once.
_map_compiled = jit(_map_coordinates, static_argnums=(2, 3, 4))


def map_coordinates(
    input: Any, coordinates: Sequence[Any], order: int, mode: str = "constant", cval: Any = 0.0
):
    """Interpolate ``input`` at ``coordinates`` (jax.scipy.ndimage.map_coordinates).

    ``coordinates`` holds one array per input axis; ``order`` is 0 or 1; ``mode``
    (how indices outside the input are read) is ``"constant"`` (``cval``),
    ``"nearest"``, ``"wrap"``, ``"mirror"`` or ``"reflect"``.
    """
    try:
        hash(cval)
    except TypeError:
        return _map_coordinates(input, list(coordinates), order, mode, cval)
    return _map_compiled(input, list(coordinates), order, mode, cval)
