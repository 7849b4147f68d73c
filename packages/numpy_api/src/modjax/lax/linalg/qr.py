"""``qr``, ``householder_product``, ``geqrf`` and ``geqp3``: Householder QR with LAPACK.

``geqrf`` (``lapack_?geqrf_ffi``: results the reflectors below R and ``tau``),
``geqp3`` (``lapack_?geqp3_ffi``: the same with column pivoting, and the 1-based
permutation) and ``householder_product`` (``lapack_?orgqr_ffi`` / ``?ungqr``: Q from the
reflectors) are primitives; ``qr`` is a primitive too (so it has JAX's JVP)
lowered as their composition, as in JAX: for ``full_matrices`` with ``m > n``
the reflectors are padded to ``m x m`` before forming Q; a wide matrix forms Q
from its leading ``m x m`` block. ``pivoting=True`` factors ``x[..., p] = q r``
with ``geqp3`` in place of ``geqrf``, as JAX's CPU lowering does.

The JVP is JAX's (j-towns.github.io/papers/qr-derivative.pdf for the thin
case; wide matrices split ``X = [X1 X2]``; full ``Q`` of tall matrices per
arXiv:2409.13374, with one LU solve).
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import Zero, jvp_rules
from modjax.lowering import ir_attribute, lower_fun, register_lowering
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from ..elementwise import add, mul, sub
from ..sorting import _take_along
from ..structural import broadcast_in_dim, concatenate, full, pad
from ._base import INEXACT, INT32, lapack_call, linalg_primitive
from ._matrix import (
    H,
    astype,
    block,
    eye_like,
    matmul,
    real_part,
    tril,
    triu,
)
from .cholesky import triangular_solve
from .lu import solve_by_lu

__all__ = [
    "geqp3",
    "geqp3_p",
    "geqrf",
    "geqrf_p",
    "householder_product",
    "householder_product_p",
    "ormqr",
    "ormqr_p",
    "qr",
    "qr_p",
]


# --- geqrf --------------------------------------------------------------------------------------


def _geqrf_cpu_lowering(ctx, a):
    return lapack_call(ctx, "geqrf", [a], ctx.avals_out, aliases={0: 0})


geqrf_p = linalg_primitive(
    "geqrf",
    (2,),
    lambda shape: (shape, (min(shape),)),
    lambda d: (d, d),
    multiple_results=True,
)
register_lowering(geqrf_p, _geqrf_cpu_lowering, platform="cpu")


def geqrf(a):
    """Return ``(a, taus)``: R on and above the diagonal, reflectors below (lax.linalg.geqrf)."""
    out, taus = geqrf_p.bind(a)
    return out, taus


# --- geqp3 --------------------------------------------------------------------------------------


def _geqp3_cpu_lowering(ctx, a, jpvt, *, use_magma):
    del use_magma  # GPU only in JAX
    return lapack_call(ctx, "geqp3", [a, jpvt], ctx.avals_out, aliases={0: 0, 1: 1})


def _geqp3_shape(a_shape, jpvt_shape, **_):
    # JAX does not check this; LAPACK would read past a short jpvt.
    if tuple(jpvt_shape) != (a_shape[1],):
        raise ValueError(
            f"geqp3: jpvt must have one entry per column of a, got a of shape {a_shape} "
            f"and jpvt of shape {jpvt_shape}"
        )
    return a_shape, jpvt_shape, (min(a_shape),)


geqp3_p = linalg_primitive(
    "geqp3",
    (2, 1),
    _geqp3_shape,
    lambda d, jpvt_dtype, **_: (d, jpvt_dtype, d),
    accepted=[INEXACT, (INT32,)],
    multiple_results=True,
    require_same=False,
)
register_lowering(geqp3_p, _geqp3_cpu_lowering, platform="cpu")


def geqp3(a, jpvt, *, use_magma=None):
    """Return ``(a, jpvt, taus)``: QR with column pivoting, LAPACK's ``geqp3`` (lax.linalg.geqp3).

    ``jpvt`` (int32 ``[..., n]``) marks columns LAPACK must put first (nonzero)
    or may move (0); the returned ``jpvt`` is the 1-based column permutation.
    """
    out, jpvt_out, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
    return out, jpvt_out, taus


# --- householder_product ------------------------------------------------------------------------


def _householder_shape(a_shape, taus_shape):
    m, n = a_shape
    if m < n:
        raise ValueError(
            "The first argument to householder_product must have at least as many rows as "
            f"columns, got shape {a_shape}"
        )
    if taus_shape[0] > min(m, n):
        raise ValueError(
            "The second argument to householder_product must not have more rows than the "
            "minimum of the first argument's rows and columns."
        )
    return a_shape


def _householder_cpu_lowering(ctx, a, taus):
    routine = "ungqr" if ctx.avals_in[0].dtype.kind == "c" else "orgqr"
    return lapack_call(ctx, routine, [a, taus], ctx.avals_out, aliases={0: 0})[0]


householder_product_p = linalg_primitive(
    "householder_product", (2, 1), _householder_shape, lambda a, t: a
)
register_lowering(householder_product_p, _householder_cpu_lowering, platform="cpu")


def householder_product(a, taus):
    """Return the product of the Householder reflectors stored in ``a`` and ``taus``.

    The counterpart of jax.lax.linalg.householder_product: ``a`` is
    ``[..., m, n]`` with ``m >= n``, its columns below the diagonal the
    reflectors; ``taus`` ``[..., k]`` (``k <= n``) their scale factors. The
    result has ``a``'s shape, with orthonormal (unitary) columns.
    """
    return householder_product_p.bind(a, taus)


# --- ormqr --------------------------------------------------------------------------------------


def _ormqr_shape(a_shape, taus_shape, c_shape, *, left, transpose):
    m = a_shape[0]
    if left and c_shape[0] != m:
        raise ValueError(
            "ormqr with left=True expects c to have the same number of rows as the Householder "
            f"matrix a. Got a shape {a_shape} and c shape {c_shape}."
        )
    if not left and c_shape[1] != m:
        raise ValueError(
            "ormqr with left=False expects c to have the same number of columns as the "
            f"Householder matrix a has rows. Got a shape {a_shape} and c shape {c_shape}."
        )
    # JAX does not check this; LAPACK would read reflectors past a's columns.
    if taus_shape[0] > min(a_shape):
        raise ValueError(
            f"ormqr expects at most min(m, n) = {min(a_shape)} scale factors for a of shape "
            f"{a_shape}, got taus of shape {taus_shape}."
        )
    return c_shape


def _ormqr_cpu_lowering(ctx, a, taus, c, *, left, transpose):
    routine = "unmqr" if ctx.avals_in[0].dtype.kind == "c" else "ormqr"
    return lapack_call(
        ctx,
        routine,
        [a, taus, c],
        ctx.avals_out,
        aliases={2: 0},
        left=ir_attribute(bool(left)),
        transpose=ir_attribute(bool(transpose)),
    )[0]


ormqr_p = linalg_primitive("ormqr", (2, 1, 2), _ormqr_shape, lambda a, t, c, **_: c)
register_lowering(ormqr_p, _ormqr_cpu_lowering, platform="cpu")


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Multiply ``c`` by the Q of Householder reflectors without forming Q (lax.linalg.ormqr).

    ``a`` (``[..., m, n]``, reflectors below its diagonal, as ``geqrf``/``geqp3``
    return them) and ``taus`` (``[..., k]``) define Q; the result is ``Q @ c``
    (``left``), ``c @ Q`` (not ``left``), with ``Q^T`` (``Q^H`` for complex) when
    ``transpose``. LAPACK's ``?ormqr``/``?unmqr`` on CPU; not differentiable, as in JAX.
    """
    return ormqr_p.bind(a, taus, c, left=bool(left), transpose=bool(transpose))


# --- qr -----------------------------------------------------------------------------------------


def _qr_shape(shape, *, pivoting, full_matrices, use_magma):
    m, n = shape
    k = m if full_matrices else min(m, n)
    return ((m, k), (k, n), (n,)) if pivoting else ((m, k), (k, n))


def _qr_dtypes(dtype, *, pivoting, full_matrices, use_magma):
    return (dtype, dtype, np.dtype(np.int32)) if pivoting else (dtype, dtype)


def _qr_composite(a, *, pivoting, full_matrices, use_magma):
    *batch, m, n = to_aval(a).shape
    dtype = to_aval(a).dtype
    if m == 0 or n == 0:
        k = m if full_matrices else min(m, n)
        q, r = eye_like((*batch, m, k), dtype), full((*batch, k, n), 0, dtype)
        return (q, r, full((*batch, n), 0, np.int32)) if pivoting else (q, r)
    if pivoting:
        jpvt = full((*batch, n), 0, np.int32)
        r, perm, taus = geqp3_p.bind(a, jpvt, use_magma=use_magma)
        perm = sub(perm, full((), 1, np.int32))  # LAPACK's permutation is 1-based
    else:
        r, taus = geqrf_p.bind(a)
    if m < n:
        q = householder_product_p.bind(block(r, (0, m), (0, m)), taus)
    elif full_matrices:
        config = [(0, 0, 0)] * (len(batch) + 1) + [(0, m - n, 0)]
        q = householder_product_p.bind(pad(r, np.zeros((), dtype), config), taus)
    else:
        q = householder_product_p.bind(r, taus)
        r = block(r, (0, n), (0, n))
    return (q, triu(r), perm) if pivoting else (q, triu(r))


def _thin_qr_tangent(q, r, dx):
    """Tangents of ``Q`` and ``R`` for ``[..., m, n]`` inputs with ``m >= n`` (thin factors)."""
    dtype = to_aval(q).dtype
    dx_rinv = triangular_solve(r, dx)  # dx R^-1: a right-side solve
    qt_dx_rinv = matmul(H(q), dx_rinv)
    lower = tril(qt_dx_rinv, -1)
    omega = sub(lower, H(lower))  # skew-Hermitian
    if dtype.kind == "c":
        # The imaginary part of the diagonal is free; JAX's choice keeps R's diagonal real.
        eye = eye_like(to_aval(omega).shape, dtype)
        omega = add(omega, mul(eye, sub(qt_dx_rinv, astype(real_part(qt_dx_rinv), dtype))))
    dq = add(matmul(q, sub(omega, qt_dx_rinv)), dx_rinv)
    dr = matmul(sub(qt_dx_rinv, omega), r)
    return dq, dr


def _qr_jvp(primals, tangents, **params):
    (x,), (dx,) = primals, tangents
    outs = qr_p.bind(x, **params)
    q, r = outs[:2]
    # The permutation is piecewise constant: a float0 zero tangent, as JAX's.
    perm_zero = [Zero(ShapedArray(to_aval(p).shape, dtypes.float0)) for p in outs[2:]]
    if type(dx) is Zero:
        return outs, [Zero(to_aval(q)), Zero(to_aval(r)), *perm_zero]
    dq, dr = _qr_tangents(x, q, r, outs[2:], dx, params["full_matrices"])
    return outs, [dq, dr, *perm_zero]


def _qr_tangents(x, q, r, perm, dx, full_matrices):
    *batch, m, n = to_aval(x).shape
    if perm:
        # x[..., p] = q r: differentiate the permuted columns (p is locally constant).
        columns = broadcast_in_dim(perm[0], (*batch, m, n), (*range(len(batch)), len(batch) + 1))
        dx = _take_along(dx, columns, len(batch) + 1)
        x = _take_along(x, columns, len(batch) + 1)
    if m < n:
        dq, dr1 = _thin_qr_tangent(q, block(r, None, (0, m)), block(dx, None, (0, m)))
        dr2 = add(matmul(H(dq), block(x, None, (m, n))), matmul(H(q), block(dx, None, (m, n))))
        return dq, concatenate([dr1, dr2], len(batch) + 1)
    q_mn = block(q, None, (0, n)) if full_matrices else q
    r_nn = block(r, (0, n), (0, n)) if full_matrices else r
    dq_mn, dr_nn = _thin_qr_tangent(q_mn, r_nn, dx)
    if not full_matrices or m == n:
        return dq_mn, dr_nn
    # Full Q of a tall matrix: the completion's tangent (arXiv:2409.13374, eqs. 32-33).
    dtype = to_aval(x).dtype
    q_nn, q_pn = block(q_mn, (0, n)), block(q_mn, (n, m))
    q_mp = block(q, None, (n, m))
    dq_nn, dq_pn = block(dq_mn, (0, n)), block(dq_mn, (n, m))
    eye = eye_like((*batch, n, n), dtype)
    z_pn_h = solve_by_lu(sub(q_nn, eye), H(q_pn), adjoint=True)
    z_pn = H(z_pn_h)
    dq_mp = sub(
        matmul(dq_mn, z_pn_h),
        matmul(add(q_mn, matmul(q_mp, z_pn)), H(sub(dq_pn, matmul(z_pn, dq_nn)))),
    )
    dq = concatenate([dq_mn, dq_mp], len(batch) + 1)
    dr = concatenate([dr_nn, full((*batch, m - n, n), 0, dtype)], len(batch))
    return dq, dr


qr_p = linalg_primitive("qr", (2,), _qr_shape, _qr_dtypes, multiple_results=True)
register_lowering(qr_p, lower_fun(_qr_composite, multiple_results=True))
jvp_rules[qr_p] = _qr_jvp


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma=None):
    """Return ``(q, r)`` with ``x = q r``, ``q`` unitary and ``r`` upper triangular.

    The counterpart of jax.lax.linalg.qr for ``x`` of shape ``[..., m, n]``:
    ``q`` is ``[..., m, m]`` and ``r`` ``[..., m, n]`` with ``full_matrices``,
    else ``[..., m, k]`` and ``[..., k, n]`` with ``k = min(m, n)``.
    ``pivoting=True`` returns ``(q, r, p)`` with ``x[..., p] = q r``: column
    pivoting (LAPACK geqp3) makes ``|diag(r)|`` non-increasing (rank revealing);
    ``p`` is int32 ``[..., n]``. ``use_magma`` is accepted and ignored on CPU.
    """
    return tuple(
        qr_p.bind(
            x, pivoting=bool(pivoting), full_matrices=bool(full_matrices), use_magma=use_magma
        )
    )
