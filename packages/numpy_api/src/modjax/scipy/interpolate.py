"""Interpolation on a rectilinear grid in scipy.interpolate's names (jax.scipy.interpolate).

``RegularGridInterpolator`` with ``"linear"`` and ``"nearest"`` methods, as in
JAX: each query finds its cell by ``searchsorted`` on every axis (clamped to
the edge cells, so points outside extrapolate unless ``fill_value`` replaces
them). The interpolator is a pytree (grid, values and fill value are leaves),
so it can cross ``jit`` and be differentiated with respect to ``values``.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax.numpy._util import check_arraylike, promote_dtypes_inexact
from modjax.runtime import jit
from modjax.tracecore.tree_util import register_pytree_node

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


def _query_points(xi: Any, ndim: int):
    """``xi`` as an ``(..., ndim)`` array: a tuple of coordinate arrays is stacked last."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = jnp.broadcast_arrays(*xi)
        # JAX fills a default-float array, so the points take that dtype.
        return jnp.stack([jnp.asarray(p, float) for p in parts], axis=-1)
    check_arraylike("_ndim_coords_from_arrays", xi)
    xi = jnp.asarray(xi)
    return jnp.reshape(xi, (-1, ndim)) if xi.ndim == 1 else xi


class RegularGridInterpolator:
    """Interpolate on a rectilinear grid (jax.scipy.interpolate.RegularGridInterpolator).

    ``points`` holds one increasing 1-D array per grid axis and ``values`` the
    samples (extra trailing axes are carried along). Points outside the grid
    give ``fill_value`` (``None``: extrapolate). ``bounds_error=True`` raises
    NotImplementedError, as in JAX (it cannot be checked under jit).
    """

    def __init__(self, points, values, method="linear", bounds_error=False, fill_value=np.nan):
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        self.method = method
        self.bounds_error = bounds_error
        if bounds_error:
            raise NotImplementedError("`bounds_error` takes no effect under JIT")
        check_arraylike("RegularGridInterpolator", values)
        if len(points) > np.ndim(values):
            raise ValueError(
                f"there are {len(points)} point arrays, but values has {np.ndim(values)} dimensions"
            )
        (values,) = promote_dtypes_inexact(values)
        values = jnp.asarray(values)
        if fill_value is not None:
            check_arraylike("RegularGridInterpolator", fill_value)
            fill_value = jnp.asarray(fill_value)
            if not jnp.can_cast(fill_value.dtype, values.dtype, casting="same_kind"):
                raise ValueError(
                    "fill_value must be either 'None' or of a type compatible with values"
                )
        self.fill_value = fill_value
        check_arraylike("RegularGridInterpolator", *points)
        self.grid = tuple(jnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method=None):
        """Interpolate at ``xi`` (``(..., ndim)`` points or a tuple of coordinate arrays)."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method {method!r} is not defined")
        if not isinstance(xi, tuple):
            check_arraylike("_ndim_coords_from_arrays", xi)
        return _evaluate(self, xi, method)

    def _evaluate(self, xi, method):
        ndim = len(self.grid)
        xi = _query_points(xi, ndim)
        if xi.shape[-1] != ndim:
            raise ValueError(
                f"the requested sample points xi have dimension {xi.shape[1]}, but this "
                f"RegularGridInterpolator has dimension {ndim}"
            )
        shape = xi.shape
        flat = jnp.reshape(xi, (-1, ndim))
        cells, fractions, outside = self._locate(flat)
        if method == "linear":
            result = self._linear(cells, fractions)
        else:
            nearest = tuple(
                jnp.where(t <= 0.5, i, i + 1) for i, t in zip(cells, fractions, strict=True)
            )
            result = self.values[nearest]
        if self.fill_value is not None:
            mask = jnp.reshape(outside, outside.shape + (1,) * (result.ndim - 1))
            result = jnp.where(mask, self.fill_value, result)
        return jnp.reshape(result, shape[:-1] + self.values.shape[ndim:])

    def _locate(self, flat):
        """Per axis: the left index of each point's cell and its fraction across the cell."""
        cells, fractions = [], []
        outside = jnp.zeros(flat.shape[:1], bool)
        for axis, g in enumerate(self.grid):
            x = flat[:, axis]
            i = jnp.clip(jnp.searchsorted(g, x) - 1, 0, g.size - 2)
            cells.append(i)
            fractions.append((x - g[i]) / (g[i + 1] - g[i]))
            outside = outside | (x < g[0]) | (x > g[-1])
        return cells, fractions, outside

    def _linear(self, cells, fractions):
        trailing = (slice(None),) + (None,) * (self.values.ndim - len(cells))
        total = jnp.asarray(0.0)
        # Each corner of the cell weighs the product of its per-axis hat functions.
        for corner in itertools.product(*[(i, i + 1) for i in cells]):
            weight = jnp.asarray(1.0)
            for index, i, t in zip(corner, cells, fractions, strict=True):
                weight = weight * (1 - t if index is i else t)
            total = total + self.values[corner] * weight[trailing]
        return total


def _evaluate_uncompiled(interp, xi, method):
    return interp._evaluate(xi, method)


# One program per grid, query shape and method: an eager call compiles once.
_evaluate = jit(_evaluate_uncompiled, static_argnums=2)

register_pytree_node(
    RegularGridInterpolator,
    lambda obj: ((obj.grid, obj.values, obj.fill_value), (obj.method, obj.bounds_error)),
    lambda aux, leaves: RegularGridInterpolator(leaves[0], leaves[1], *aux, leaves[2]),
)
