"""``lu`` (LAPACK getrf with partial pivoting) and ``lu_pivots_to_permutation``.

``lu`` lowers on CPU to ``lapack_?getrf_ffi`` (no attributes; results the
factors, 1-based ``ipiv`` and ``info``): the pivots are made 0-based, a
factorization that fails (``info < 0``) gives NaNs, and the permutation is
computed from the pivots in the same program. A singular matrix (``info > 0``)
keeps its factors, as in JAX.

``lu_pivots_to_permutation`` applies the row swaps to ``iota`` in a
``fori_loop``; each swap is two selects against ``iota`` (no scatter), so the
batch dimensions need no special handling.

The JVP is De Hoog, Anderssen and Lukas's: with ``P A = L U``,
``L^-1 P A_dot U^-1 = X``, ``L_dot = L tril(X, -1)`` and ``U_dot = triu(X) U``
(JAX's rule, written for batches directly).
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import Zero, defjvp_zero, jvp_rules
from modjax.lowering import hlo, lower_fun, register_lowering
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from .._common import full
from .._rules import zeros
from ..control_flow import fori_loop
from ..elementwise import add, convert_element_type, eq, select_n
from ..indexing import GatherDimensionNumbers, dynamic_slice_in_dim, gather
from ..reductions import reduce_sum
from ..sorting import _take_along, sort_key_val
from ..structural import broadcast_in_dim, broadcasted_iota, expand_dims, pad, slice
from ._base import INT32, batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless
from ._matrix import eye_like, matmul, tril, triu
from .cholesky import triangular_solve

__all__ = [
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
]


# --- lu_pivots_to_permutation -------------------------------------------------------------------


def _permutation_shape(shape, *, permutation_size):
    (k,) = shape
    if not permutation_size >= k:
        raise ValueError(
            f"Output permutation size {permutation_size} has to exceed the trailing dimension "
            f"of the pivots. Got pivots size {k}"
        )
    return (permutation_size,)


def _pivots_to_permutation(swaps, *, permutation_size):
    shape = to_aval(swaps).shape
    *batch, k = shape
    axis = len(batch)
    out_shape = (*batch, permutation_size)
    iota = broadcasted_iota(np.int32, out_shape, axis)
    if permutation_size == 0 or k == 0:
        return iota

    def spread(v):  # batch + (1,) -> batch + (m,)
        return broadcast_in_dim(v, out_shape, tuple(range(axis + 1)))

    def swap(i, perm):
        i = convert_element_type(i, np.int32)  # the loop index is a weak int (int64 under x64)
        j = spread(dynamic_slice_in_dim(swaps, i, 1, axis))
        at_i = eq(iota, i)
        at_j = eq(iota, j)
        x = spread(dynamic_slice_in_dim(perm, i, 1, axis))
        y = spread(
            expand_dims(reduce_sum(select_n(at_j, zeros(to_aval(perm)), perm), (axis,)), (axis,))
        )
        # perm[i], perm[j] = perm[j], perm[i]
        return select_n(at_i, select_n(at_j, perm, x), y)

    return fori_loop(0, k, swap, iota)


lu_pivots_to_permutation_p = linalg_primitive(
    "lu_pivots_to_permutation",
    (1,),
    _permutation_shape,
    lambda d, **_: np.int32,
    accepted=[(INT32,)],
)
register_lowering(lu_pivots_to_permutation_p, lower_fun(_pivots_to_permutation))
defjvp_zero(lu_pivots_to_permutation_p)


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """Turn LU's row swaps ``[..., k]`` into a permutation ``[..., permutation_size]``.

    The counterpart of jax.lax.linalg.lu_pivots_to_permutation: row ``i`` was
    swapped with row ``pivots[..., i]``, in order; the result is int32.
    """
    return lu_pivots_to_permutation_p.bind(pivots, permutation_size=int(permutation_size))


# --- lu -----------------------------------------------------------------------------------------


def _lu_shape(shape):
    m, n = shape
    return shape, (min(m, n),), (m,)


def _lu_cpu_lowering(ctx, x):
    (aval,) = ctx.avals_in
    out_aval, pivots_aval, perm_aval = ctx.avals_out
    batch = batch_dims_of(aval)
    m = aval.shape[-2]
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    out, pivots, info = lapack_call(
        ctx, "getrf", [x], [out_aval, pivots_aval, info_aval], aliases={0: 0}
    )
    pivots = hlo.subtract(pivots, full(1, pivots_aval))
    out = nan_unless(info_ok(info, batch, "GE"), out, out_aval, batch)
    perm_ctx = ctx.replace(primitive=None, avals_in=[pivots_aval], avals_out=[perm_aval])
    perm = lower_fun(lambda p: lu_pivots_to_permutation_p.bind(p, permutation_size=m))(
        perm_ctx, pivots
    )
    return [out, pivots, perm]


def _lu_tangent(lu_, a_dot, permutation):
    *batch, m, n = to_aval(lu_).shape
    dtype = to_aval(lu_).dtype
    k = min(m, n)
    nb = len(batch)
    zero = np.zeros((), dtype)
    no_pad = [(0, 0, 0)] * nb
    lower = tril(slice(lu_, (0,) * (nb + 2), (*batch, m, k)), -1)
    l_full = add(
        pad(lower, zero, [*no_pad, (0, 0, 0), (0, m - k, 0)]), eye_like((*batch, m, m), dtype)
    )
    upper = triu(slice(lu_, (0,) * (nb + 2), (*batch, k, n)))
    corner = pad(eye_like((n - k, n - k), dtype), zero, [(k, 0, 0), (k, 0, 0)])
    u_full = add(
        pad(upper, zero, [*no_pad, (0, n - k, 0), (0, 0, 0)]),
        broadcast_in_dim(corner, (*batch, n, n), (nb, nb + 1)),
    )
    rows = broadcast_in_dim(permutation, (*batch, m, n), tuple(range(nb + 1)))
    permuted = _take_along(a_dot, rows, nb)
    la = triangular_solve(l_full, permuted, left_side=True, lower=True, unit_diagonal=True)
    lau = triangular_solve(u_full, la, left_side=False, lower=False)
    return add(matmul(l_full, tril(lau, -1)), matmul(triu(lau), u_full))


def _lu_jvp(primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu_, pivots, permutation = lu_p.bind(a)
    float0 = dtypes.float0
    index_zeros = [
        Zero(ShapedArray(to_aval(pivots).shape, float0)),
        Zero(ShapedArray(to_aval(permutation).shape, float0)),
    ]
    if type(a_dot) is Zero:
        return [lu_, pivots, permutation], [Zero(to_aval(lu_)), *index_zeros]
    return [lu_, pivots, permutation], [_lu_tangent(lu_, a_dot, permutation), *index_zeros]


lu_p = linalg_primitive(
    "lu",
    (2,),
    _lu_shape,
    lambda d: (d, np.int32, np.int32),
    multiple_results=True,
)
register_lowering(lu_p, _lu_cpu_lowering, platform="cpu")
jvp_rules[lu_p] = _lu_jvp


def lu(x):
    """Return ``(lu, pivots, permutation)`` of ``P x = L U`` with partial pivoting.

    The counterpart of jax.lax.linalg.lu, for ``x`` of shape ``[..., m, n]``:
    ``lu`` holds ``L`` (unit diagonal, not stored) below the diagonal and
    ``U`` on and above it; ``pivots`` (int32, ``[..., min(m, n)]``) are the
    0-based row swaps and ``permutation`` (int32, ``[..., m]``) their result.
    """
    return list(lu_p.bind(x))


def _permute_rows(x, permutation):
    """Return ``x[..., permutation, :]``: one gather of whole rows, batch dims matched."""
    *batch, m, k = to_aval(x).shape
    if 0 in (*batch, m):  # nothing to move (and a gather cannot slice an empty axis)
        return x
    nb = len(batch)
    same = tuple(range(nb))
    dn = GatherDimensionNumbers(
        offset_dims=(nb + 1,),
        collapsed_slice_dims=(nb,),
        start_index_map=(nb,),
        operand_batching_dims=same,
        start_indices_batching_dims=same,
    )
    rows = expand_dims(permutation, (nb + 1,))
    return gather(x, rows, dn, (1,) * (nb + 1) + (k,), mode="promise_in_bounds")


def _broadcast_batch(x, batch, core: int):
    shape = to_aval(x).shape
    target = (*batch, *shape[len(shape) - core :])
    if shape == target:
        return x
    return broadcast_in_dim(x, target, tuple(range(len(target) - len(shape), len(target))))


def lu_solve(lu_, permutation, b, trans: int = 0):
    """Solve with the factors of ``a[..., permutation, :] = L U`` (JAX's ``_lu_solve``).

    ``trans`` 0 solves ``a x = b``, 1 ``a^T x = b`` and 2 ``a^H x = b``, for ``b``
    of shape ``[..., m, k]``; the batch dimensions of ``lu_``, ``permutation``
    and ``b`` broadcast. Rows are permuted by gathers, never a permutation matmul.
    """
    if trans not in (0, 1, 2):
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    batch = np.broadcast_shapes(
        to_aval(lu_).shape[:-2], to_aval(permutation).shape[:-1], to_aval(b).shape[:-2]
    )
    lu_ = _broadcast_batch(lu_, batch, 2)
    permutation = _broadcast_batch(permutation, batch, 1)
    x = _broadcast_batch(b, batch, 2)
    if trans == 0:
        x = _permute_rows(x, permutation)
        x = triangular_solve(lu_, x, left_side=True, lower=True, unit_diagonal=True)
        return triangular_solve(lu_, x, left_side=True, lower=False)
    conj = trans == 2
    x = triangular_solve(lu_, x, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
    x = triangular_solve(
        lu_, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True, conjugate_a=conj
    )
    # row permutation[i] of the answer is row i of x: gather with the inverse permutation
    iota = broadcasted_iota(np.int32, to_aval(permutation).shape, len(batch))
    _, inverse = sort_key_val(permutation, iota)
    return _permute_rows(x, inverse)


def solve_by_lu(a, b, *, adjoint: bool = False):
    """Solve ``a x = b`` (or ``a^H x = b``) for square ``a`` by a fresh LU (JAX's ``_solve``).

    A helper of the derivative rules of ``qr`` and ``eig``.
    """
    lu_, _, permutation = lu_p.bind(a)
    return lu_solve(lu_, permutation, b, 2 if adjoint else 0)
