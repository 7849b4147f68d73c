"""Batched-matrix helpers of the linalg rules and wrappers, made of lax primitives.

Every helper acts on the two trailing dimensions and treats the leading ones
as batch dimensions (JAX's ``_T``, ``_H``, ``_tril``, ``symmetrize``...), so
the JVP rules read like the formulas they implement.
"""

from __future__ import annotations

import numpy as np

from modjax.tracecore.core import to_aval
from modjax.tracecore.dtypes import default_float_dtype

from .._rules import const, zeros
from ..bits import conj, real
from ..dot import Precision, dot_general
from ..elementwise import (
    add,
    bitwise_or,
    convert_element_type,
    convert_element_type_p,
    div,
    eq,
    ge,
    select_n,
)
from ..reductions import reduce_sum
from ..structural import broadcast_in_dim, broadcasted_iota, full, slice, transpose

__all__ = [
    "T",
    "H",
    "astype",
    "block",
    "real_part",
    "zeros_of",
    "diagonal",
    "eye_like",
    "from_diagonal",
    "matmul",
    "symmetrize",
    "tril",
    "triu",
]


def _shape(x):
    return to_aval(x).shape


def _dtype(x):
    return to_aval(x).dtype


def T(x):
    """Swap the two trailing axes."""
    n = len(_shape(x))
    return transpose(x, (*range(n - 2), n - 1, n - 2))


def H(x):
    """Return the conjugate transpose over the two trailing axes."""
    x = T(x)
    return conj(x) if _dtype(x).kind == "c" else x


def astype(x, dtype):
    """Convert ``x`` to ``dtype`` (no equation when it already has it)."""
    return x if _dtype(x) == np.dtype(dtype) else convert_element_type(x, dtype)


def symmetrize(x):
    """Return ``(x + x^H) / 2``.

    Integer and bool matrices give the default float type, as JAX's true
    division does (so ``lax.linalg.cholesky`` and ``eigh`` accept them when
    they symmetrize); bools add as a logical or, as ``jnp.add`` does.
    """
    aval = to_aval(x)
    if aval.dtype.kind in "fc":
        return div(add(x, H(x)), const(x, 2))  # weak when x is, as JAX's Python 2
    total = bitwise_or(x, T(x)) if aval.dtype.kind == "b" else add(x, T(x))
    # A bool sum meets JAX's weakly typed 2 as a weak int, so its quotient is weak too.
    weak = aval.weak_type or aval.dtype.kind == "b"
    total = convert_element_type_p.bind(total, new_dtype=default_float_dtype(), weak_type=weak)
    return div(total, const(total, 2))


def _tri_mask(shape, k: int):
    """``col <= row + k`` over the trailing two axes of ``shape``, broadcast to ``shape``."""
    *_, m, n = shape
    rows = broadcasted_iota(np.int32, (m, n), 0)
    cols = broadcasted_iota(np.int32, (m, n), 1)
    mask = ge(add(rows, np.int32(k)), cols)
    return broadcast_in_dim(mask, tuple(shape), (len(shape) - 2, len(shape) - 1))


def tril(x, k: int = 0):
    """Keep the entries on and below the ``k``-th diagonal; zero the others.

    The zeros take ``x``'s weak type (JAX's ``full_like``), so ``x``'s is kept.
    """
    shape = _shape(x)
    return select_n(_tri_mask(shape, k), zeros(to_aval(x)), x)


def triu(x, k: int = 0):
    """Keep the entries on and above the ``k``-th diagonal; zero the others."""
    shape = _shape(x)
    return select_n(_tri_mask(shape, k - 1), x, zeros(to_aval(x)))


def _eye_mask(shape):
    *_, m, n = shape
    rows = broadcasted_iota(np.int32, (m, n), 0)
    cols = broadcasted_iota(np.int32, (m, n), 1)
    return broadcast_in_dim(eq(rows, cols), tuple(shape), (len(shape) - 2, len(shape) - 1))


def eye_like(shape, dtype):
    """Return identity matrices of ``shape`` (``(..., m, n)``, ones where row == col)."""
    return convert_element_type(_eye_mask(shape), dtype)


def _on_diagonal(x):
    """``x`` on the diagonal, exact zeros elsewhere (a select, so infinities stay put)."""
    aval = to_aval(x).update(weak_type=False)
    return select_n(_eye_mask(aval.shape), zeros(aval), x)


def matmul(a, b):
    """Return the batched matrix product ``a @ b`` at HIGHEST precision (``lax.batch_matmul``)."""
    n = len(_shape(a))
    batch = tuple(range(n - 2))
    return dot_general(
        a,
        b,
        (((n - 1,), (n - 2,)), (batch, batch)),
        precision=(Precision.HIGHEST, Precision.HIGHEST),
    )


def diagonal(x):
    """Return the main diagonal over the two trailing axes (shape ``(..., min(m, n))``)."""
    *batch, m, n = _shape(x)
    k = min(m, n)
    x = slice(x, (0,) * len(_shape(x)), (*batch, k, k))
    return reduce_sum(_on_diagonal(x), (len(batch) + 1,))


def from_diagonal(d):
    """Return square matrices with ``d`` (shape ``(..., n)``) on the diagonal."""
    *batch, n = _shape(d)
    shape = (*batch, n, n)
    return _on_diagonal(broadcast_in_dim(d, shape, (*range(len(batch)), len(batch) + 1)))


def real_part(x):
    """Return the real part of a complex ``x`` (``x`` itself if real)."""
    return real(x) if _dtype(x).kind == "c" else x


def zeros_of(shape, dtype):
    """Return zeros of ``shape`` and ``dtype``."""
    return full(tuple(shape), 0, dtype)


def block(x, rows=None, cols=None):
    """Return ``x[..., r0:r1, c0:c1]`` for ``rows=(r0, r1)`` and ``cols=(c0, c1)`` (None: all)."""
    *batch, m, n = _shape(x)
    r0, r1 = rows or (0, m)
    c0, c1 = cols or (0, n)
    return slice(x, (0,) * len(batch) + (r0, c0), (*batch, r1, c1))
