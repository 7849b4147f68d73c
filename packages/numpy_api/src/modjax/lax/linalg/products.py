"""``symmetric_product`` and ``cholesky_update``: products and rank-1 updates, as XLA ops.

Both are primitives of JAX 0.10.2 with a generic lowering only (GPU has kernels of its
own), and neither has a derivative; ``cholesky_update`` has no batch dimensions and no
``vmap`` rule either, as in JAX.
"""

from __future__ import annotations

import numpy as np

from modjax.lowering import lower_fun, register_lowering
from modjax.tracecore.core import to_aval

from ..elementwise import abs as abs_
from ..elementwise import add, div, eq, gt, mul, rsqrt, select_n, sub
from ..structural import broadcast_in_dim, concatenate, expand_dims, full, squeeze
from ..structural import slice as slice_
from ._base import FLOAT, linalg_primitive
from ._matrix import T, matmul, tril

__all__ = [
    "cholesky_update",
    "cholesky_update_p",
    "symmetric_product",
    "symmetric_product_p",
]


# --- symmetric_product --------------------------------------------------------------------------


def _symmetric_product_shape(a_shape, c_shape, **_):
    if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
        raise ValueError(
            "symmetric_update expects a rectangular matrix of shape (m, n) and a square "
            f"matrix of shape (n, n). Got shapes {a_shape} and {c_shape}."
        )
    return c_shape


def _symmetric_product_composite(a, c, *, alpha, beta):
    shape, dtype = to_aval(c).shape, to_aval(c).dtype
    return add(
        mul(full(shape, alpha, dtype), matmul(a, T(a))),
        mul(full(shape, beta, dtype), c),
    )


symmetric_product_p = linalg_primitive(
    "symmetric_product",
    (2, 2),
    _symmetric_product_shape,
    lambda a, c, **_: c,
    accepted=[(FLOAT,), (FLOAT,)],
)
register_lowering(symmetric_product_p, lower_fun(_symmetric_product_composite))


def symmetric_product(a_matrix, c_matrix, *, alpha=1.0, beta=0.0, symmetrize_output=False):
    """Return ``alpha * a @ a.T + beta * c`` (jax.lax.linalg.symmetric_product).

    ``a_matrix`` is ``[..., m, n]`` and ``c_matrix`` a symmetric ``[..., m, m]``; only the
    lower triangle of the result is promised (all of it on CPU), unless
    ``symmetrize_output`` copies it onto the upper one. Not differentiable, as in JAX.
    """
    result = symmetric_product_p.bind(a_matrix, c_matrix, alpha=alpha, beta=beta)
    if symmetrize_output:
        result = add(tril(result), T(tril(result, -1)))
    return result


# --- cholesky_update ----------------------------------------------------------------------------


def _cholesky_update_shape(r_shape, w_shape):
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError(
            "Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the "
            f"same size as input. Got shapes {r_shape} and {w_shape} instead"
        )
    return r_shape


def _givens(x, y):
    """``(c, s)`` rotating ``(x, y)`` onto ``(r, 0)``, scaled first against overflow."""
    dtype = to_aval(x).dtype
    one, zero = np.ones((), dtype), np.zeros((), dtype)
    scale = select_n(gt(abs_(x), abs_(y)), abs_(y), abs_(x))
    xs, ys = div(x, scale), div(y, scale)
    inv = rsqrt(add(mul(xs, xs), mul(ys, ys)))
    # y == 0 needs no rotation (and 0/0 would be NaN when x is 0 as well).
    no_turn = eq(y, zero)
    return select_n(no_turn, mul(xs, inv), one), select_n(no_turn, mul(ys, inv), zero)


def _entry(v, k: int):
    return squeeze(slice_(v, (k,), (k + 1,)), (0,))


def _cholesky_update_composite(r, w):
    # Row k of R and the vector w are rotated so that w[k] becomes 0 (Givens).
    n = to_aval(r).shape[0]
    rows = []
    for k in range(n):
        row = squeeze(slice_(r, (k, 0), (k + 1, n)), (0,))
        c, s = _givens(_entry(row, k), _entry(w, k))
        c_row, s_row = broadcast_in_dim(c, (n,), ()), broadcast_in_dim(s, (n,), ())
        rows.append(expand_dims(add(mul(c_row, row), mul(s_row, w)), (0,)))
        w = sub(mul(c_row, w), mul(s_row, row))
    return concatenate(rows, 0) if rows else r


cholesky_update_p = linalg_primitive(
    "cholesky_update",
    (2, 1),
    _cholesky_update_shape,
    lambda r, w: r,
    accepted=[(FLOAT,), (FLOAT,)],
    batch=False,
)
register_lowering(cholesky_update_p, lower_fun(_cholesky_update_composite))


def cholesky_update(r_matrix, w_vector):
    """Return the Cholesky factor of ``R^T R + w w^T`` (jax.lax.linalg.cholesky_update).

    ``r_matrix`` is an upper-triangular ``[n, n]`` ``R`` (no batch dimensions, no
    ``vmap`` and no derivative, as in JAX) and ``w_vector`` ``[n]``; ``n`` Givens
    rotations make it ``O(n^2)``.
    """
    return cholesky_update_p.bind(r_matrix, w_vector)
