"""``cholesky`` and ``triangular_solve``: XLA's own ops, LAPACK's potrf/trsm on CPU.

Both lower to ``stablehlo.cholesky`` / ``stablehlo.triangular_solve`` in
general and, on CPU, to jaxlib's LAPACK kernels as JAX does there (XLA's CPU
expansion of those ops is a loop of small steps, several times slower than
potrf/trsm): ``lapack_?potrf_ffi`` (``uplo``) and ``lapack_?trsm_ffi``
(``side uplo trans_x diag``). A Cholesky that fails (a matrix that is not
positive definite) gives NaNs for that matrix, as in JAX.

Derivatives follow JAX: Cholesky's forward rule is Murray's
(arXiv:1602.07527), ``L_dot = L phi(L^-1 A_dot L^-H)`` with ``phi`` the lower
triangle with a halved diagonal; ``triangular_solve`` is linear in ``b``
(transposed by a solve with the transposed ``a``) and its tangent in ``a`` is
``-op(A)^-1 op(A_dot) X`` (or its right-side twin), with the products ordered
to be cheapest.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import Zero, defjvp2, is_undefined_primal, jvp_rules, transpose_rules
from modjax.lowering import chlo, hlo, ir, register_lowering
from modjax.tracecore.core import to_aval

from .._common import aval_of
from ..bits import conj
from ..elementwise import add, div, neg
from ..structural import expand_dims, squeeze
from ._base import batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless, u8_attr
from ._matrix import T, eye_like, matmul, symmetrize, tril, triu

__all__ = [
    "cholesky",
    "cholesky_p",
    "triangular_solve",
    "triangular_solve_p",
]

_LAPACK_DTYPES = {np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128)}


# --- cholesky -----------------------------------------------------------------------------------


def _cholesky_shape(shape):
    if shape[0] != shape[1]:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {shape}.")
    return shape


def _cholesky_lowering(ctx, x):
    return hlo.cholesky(x, lower=ir.BoolAttr.get(True))


def _cholesky_cpu_lowering(ctx, x):
    (aval,) = ctx.avals_in
    batch = batch_dims_of(aval)
    info_aval = aval.update(shape=batch, dtype=np.dtype(np.int32))
    out, info = lapack_call(ctx, "potrf", [x], [aval, info_aval], aliases={0: 0}, uplo=u8_attr("L"))
    return nan_unless(info_ok(info, batch), out, aval, batch)


def _cholesky_jvp(primals, tangents):
    (x,), (x_dot,) = primals, tangents
    chol = tril(cholesky_p.bind(x))
    if type(x_dot) is Zero:
        return chol, Zero(to_aval(chol))
    dtype = to_aval(x).dtype
    n = to_aval(x).shape[-1]

    def phi(m):
        # The lower triangle with its diagonal halved.
        return div(tril(m), add(np.asarray(1, dtype), eye_like(to_aval(m).shape, dtype)))

    del n
    tmp = triangular_solve(
        chol, x_dot, left_side=False, transpose_a=True, conjugate_a=True, lower=True
    )
    inner = triangular_solve(chol, tmp, left_side=True, transpose_a=False, lower=True)
    return chol, matmul(chol, phi(inner))


cholesky_p = linalg_primitive("cholesky", (2,), _cholesky_shape, lambda d: d)
register_lowering(cholesky_p, _cholesky_lowering)
register_lowering(cholesky_p, _cholesky_cpu_lowering, platform="cpu")
jvp_rules[cholesky_p] = _cholesky_jvp


def cholesky(x, *, symmetrize_input: bool = True):
    """Return the lower Cholesky factor ``L`` of ``x = L L^H`` (jax.lax.linalg.cholesky).

    ``x`` is a batch of Hermitian positive-definite matrices ``[..., n, n]``;
    with ``symmetrize_input`` it is replaced by ``(x + x^H) / 2`` first,
    otherwise only its lower triangle is read. A matrix whose factorization
    fails gives NaNs.
    """
    if symmetrize_input:
        x = symmetrize(x)
    return tril(cholesky_p.bind(x))


# --- triangular_solve ---------------------------------------------------------------------------


def _triangular_solve_shape(a_shape, b_shape, *, left_side, **_):
    if a_shape[0] != a_shape[1]:
        raise ValueError(
            f"The first input to triangular_solve must be a square matrix. Got shape {a_shape}."
        )
    common = -2 if left_side else -1
    if a_shape[-1] != b_shape[common]:
        raise ValueError(
            f"Incompatible shapes for arguments to triangular_solve: {a_shape} and {b_shape}."
        )
    return b_shape


def _transpose_attr(transpose_a: bool, conjugate_a: bool) -> str:
    if not transpose_a:
        return "NO_TRANSPOSE"
    return "ADJOINT" if conjugate_a else "TRANSPOSE"


def _triangular_solve_lowering(
    ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    if conjugate_a and not transpose_a:
        a = chlo.conj(a)
        conjugate_a = False
    return hlo.triangular_solve(
        a,
        b,
        ir.BoolAttr.get(left_side),
        ir.BoolAttr.get(lower),
        ir.BoolAttr.get(unit_diagonal),
        hlo.TransposeAttr.get(_transpose_attr(transpose_a, conjugate_a)),
    )


def _triangular_solve_cpu_lowering(
    ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    a_aval, b_aval = ctx.avals_in
    if a_aval.dtype not in _LAPACK_DTYPES:
        return _triangular_solve_lowering(
            ctx,
            a,
            b,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )
    if conjugate_a and not transpose_a:
        a = chlo.conj(a)
        conjugate_a = False
    trans = ("C" if conjugate_a else "T") if transpose_a else "N"
    (out,) = lapack_call(
        ctx,
        "trsm",
        [a, b],
        [b_aval],
        aliases={1: 0},
        side=u8_attr("L" if left_side else "R"),
        uplo=u8_attr("L" if lower else "U"),
        trans_x=u8_attr(trans),
        diag=u8_attr("U" if unit_diagonal else "N"),
    )
    return out


def _triangular_solve_jvp_a(
    g_a, ans, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    m, n = to_aval(b).shape[-2:]
    k = 1 if unit_diagonal else 0
    g_a = tril(g_a, -k) if lower else triu(g_a, k)
    g_a = neg(g_a)
    g_a = T(g_a) if transpose_a else g_a
    g_a = conj(g_a) if conjugate_a else g_a

    def a_inverse(rhs):
        return triangular_solve_p.bind(
            a,
            rhs,
            left_side=left_side,
            lower=lower,
            transpose_a=transpose_a,
            conjugate_a=conjugate_a,
            unit_diagonal=unit_diagonal,
        )

    # A solve costs about a product: apply the cheaper order (as JAX does).
    if left_side:
        return a_inverse(matmul(g_a, ans)) if m > n else matmul(a_inverse(g_a), ans)
    return a_inverse(matmul(ans, g_a)) if m < n else matmul(ans, a_inverse(g_a))


def _triangular_solve_jvp_b(g_b, ans, a, b, **params):
    return triangular_solve_p.bind(a, g_b, **params)


def _triangular_solve_transpose(
    ct, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal
):
    if is_undefined_primal(a):
        raise NotImplementedError("triangular_solve is not linear in its first operand")
    if type(ct) is Zero:
        return [None, Zero(b.aval)]
    ct_b = triangular_solve_p.bind(
        a,
        ct,
        left_side=left_side,
        lower=lower,
        transpose_a=not transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return [None, ct_b]


triangular_solve_p = linalg_primitive(
    "triangular_solve", (2, 2), _triangular_solve_shape, lambda a, b, **_: a
)
register_lowering(triangular_solve_p, _triangular_solve_lowering)
register_lowering(triangular_solve_p, _triangular_solve_cpu_lowering, platform="cpu")
defjvp2(triangular_solve_p, _triangular_solve_jvp_a, _triangular_solve_jvp_b)
transpose_rules[triangular_solve_p] = _triangular_solve_transpose


def triangular_solve(
    a,
    b,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
):
    """Solve ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for triangular ``a``.

    The counterpart of jax.lax.linalg.triangular_solve: ``a`` is ``[..., m, m]``,
    only its ``lower`` (or upper) triangle is read, ``op`` transposes it with
    ``transpose_a`` and conjugates it with ``conjugate_a`` (a no-op for real
    ``a``); ``unit_diagonal`` assumes ones on the diagonal. A ``b`` of one rank
    less than ``a`` is a single vector.
    """
    a_aval, b_aval = aval_of(a), aval_of(b)
    conjugate_a = bool(conjugate_a) and a_aval.dtype.kind == "c"
    vector = b_aval.ndim == a_aval.ndim - 1
    if vector:
        b = expand_dims(b, (b_aval.ndim if left_side else b_aval.ndim - 1,))
    out = triangular_solve_p.bind(
        a,
        b,
        left_side=bool(left_side),
        lower=bool(lower),
        transpose_a=bool(transpose_a),
        conjugate_a=conjugate_a,
        unit_diagonal=bool(unit_diagonal),
    )
    if vector:
        out_ndim = to_aval(out).ndim
        out = squeeze(out, (out_ndim - 1 if left_side else out_ndim - 2,))
    return out
