"""Linear algebra in scipy.linalg's names (the counterpart of ``jax.scipy.linalg``).

Factorizations and solves are thin functions over ``modjax.lax.linalg``'s
primitives and ``modjax.numpy.linalg`` (leading batch dimensions broadcast,
integers compute in the default float type). ``overwrite_*`` and
``check_finite`` are accepted and ignored, as in JAX (compiled code cannot
check values). The matrix functions follow JAX's algorithms: ``expm`` is
scaling and squaring with the Pade degree chosen from the 1-norm (Higham
2005), ``expm_frechet`` its JVP, ``sqrtm`` the Schur method, ``funm``
Parlett's recurrence on the complex Schur form, ``solve_sylvester`` the
Bartels-Stewart algorithm. The special matrices (``toeplitz``, ``hankel``,
``circulant``, ``companion``, ...) are gathers from their defining vectors.
"""

from __future__ import annotations

import math
import operator
import warnings
from collections.abc import Callable
from functools import partial, reduce

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import jvp, stop_gradient
from modjax.batching import vectorize
from modjax.lax import linalg as lax_linalg
from modjax.lax._common import kind
from modjax.lax.linalg.lu import lu_solve as lax_lu_solve
from modjax.numpy import linalg as jnp_linalg
from modjax.numpy._util import (
    check_arraylike,
    convert,
    promote_dtypes,
    result_type,
)
from modjax.numpy.linalg import _check_core_dims, _check_solve_shapes, _promote_inexact_arrays
from modjax.runtime import jit
from modjax.tracecore import dtypes

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "circulant",
    "companion",
    "convolution_matrix",
    "det",
    "dft",
    "eigh",
    "eigh_tridiagonal",
    "expm",
    "expm_frechet",
    "fiedler",
    "fiedler_companion",
    "funm",
    "hadamard",
    "hankel",
    "helmert",
    "hessenberg",
    "hilbert",
    "inv",
    "invhilbert",
    "invpascal",
    "leslie",
    "lu",
    "lu_factor",
    "lu_solve",
    "pascal",
    "polar",
    "qr",
    "qr_multiply",
    "rsf2csf",
    "schur",
    "solve",
    "solve_sylvester",
    "solve_triangular",
    "sqrtm",
    "svd",
    "toeplitz",
]


def _inexact(*args):
    return _promote_inexact_arrays(*args)


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _H(x):
    return jnp.conj(jnp.matrix_transpose(x))


def _dot(a, b):
    return jnp.matmul(a, b, precision=lax.Precision.HIGHEST)


# How each solve names its leading arguments in the deprecation warning's advice.
_RHS_CALL = {
    "cho_solve": "cho_solve(c_and_lower, {})",
    "lu_solve": "lu_solve(lu_and_piv, {})",
    "solve_triangular": "solve_triangular(a, {})",
}


def _warn_batched_vectors(name: str) -> None:
    warnings.warn(
        f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in "
        "the future will be treated as a batched 2D solve. Use "
        f"{_RHS_CALL[name].format('b[..., None]')}.squeeze(-1) to avoid this warning.",
        category=FutureWarning,
        stacklevel=4,
    )


def _matrix_rhs(name: str, a, b, *others):
    """``b`` as ``[..., n, k]`` and whether it was one vector (scipy's ``b`` of shape ``(n,)``).

    Shapes are checked as JAX's ``jnp.vectorize`` checks them, with ``others``
    (the pivots of ``lu_solve``) between ``a`` and ``b``.
    """
    middle = "".join(",(n)" for _ in others)
    if b.ndim == 1:
        vector = True
    elif a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        # JAX 0.10 still treats this as a batch of vectors, with a FutureWarning.
        _warn_batched_vectors(name)
        vector = True
    else:
        vector = False
    signature = f"(n,n){middle},(n)->(n)" if vector else f"(n,n){middle},(n,k)->(n,k)"
    _check_core_dims(signature, a, *others, b)
    return (b[..., None], True) if vector else (b, False)


def _broadcast_batch(a, b):
    batch = jnp.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return jnp.broadcast_to(a, batch + a.shape[-2:]), jnp.broadcast_to(b, batch + b.shape[-2:])


# --- Cholesky -------------------------------------------------------------------------------


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Return the Cholesky factor, upper by default (jax.scipy.linalg.cholesky).

    Only the chosen triangle of ``a`` is read (no symmetrization).
    """
    del overwrite_a, check_finite
    check_arraylike("cholesky", a)
    (a,) = _inexact(a)
    factor = lax_linalg.cholesky(a if lower else _H(a), symmetrize_input=False)
    return factor if lower else _H(factor)


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Return ``(c, lower)``, ``cho_solve``'s factor (jax.scipy.linalg.cho_factor)."""
    del overwrite_a, check_finite
    return cholesky(a, lower=lower), lower


def _cho_solve(c, b, lower: bool):
    b, vector = _matrix_rhs("cho_solve", c, b)
    c, b = _broadcast_batch(c, b)
    # a = L L^H: solve L y = b, then L^H x = y (or U^H y = b, then U x = y).
    y = lax_linalg.triangular_solve(
        c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower
    )
    x = lax_linalg.triangular_solve(
        c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower
    )
    return x[..., 0] if vector else x


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` from ``cho_factor``'s ``(c, lower)`` (jax.scipy.linalg.cho_solve)."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    check_arraylike("cho_solve", c, b)
    c, b = _inexact(c, b)
    return _cho_solve(c, b, lower)


# --- triangular and general solves ----------------------------------------------------------


def solve_triangular(
    a,
    b,
    trans=0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    debug=None,
    check_finite: bool = True,
):
    """Solve ``op(a) x = b`` for a triangular ``a`` (jax.scipy.linalg.solve_triangular).

    ``trans`` is 0/``"N"`` (``a``), 1/``"T"`` (``a^T``) or 2/``"C"`` (``a^H``).
    """
    del overwrite_b, debug, check_finite
    if trans == 0 or trans == "N":
        transpose_a, conjugate_a = False, False
    elif trans == 1 or trans == "T":
        transpose_a, conjugate_a = True, False
    elif trans == 2 or trans == "C":
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    check_arraylike("solve_triangular", a, b)
    a, b = _inexact(a, b)
    b, vector = _matrix_rhs("solve_triangular", a, b)
    a, b = _broadcast_batch(a, b)
    x = lax_linalg.triangular_solve(
        a,
        b,
        left_side=True,
        lower=lower,
        transpose_a=transpose_a,
        conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal,
    )
    return x[..., 0] if vector else x


def solve(
    a,
    b,
    lower: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    debug: bool = False,
    check_finite: bool = True,
    assume_a: str = "gen",
):
    """Solve ``a x = b`` (jax.scipy.linalg.solve).

    ``assume_a="pos"`` uses a Cholesky factorization (of the ``lower`` or
    upper triangle), differentiated implicitly as a symmetric linear solve;
    ``"gen"``, ``"sym"`` and ``"her"`` use ``numpy.linalg.solve``'s LU.
    """
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    check_arraylike("solve", a, b)
    a, b = _inexact(a, b)
    _check_solve_shapes(a, b)
    if a.ndim > 2:
        # JAX's solve passes batched vectors to cho_solve, which warns about them.
        _warn_batched_vectors("cho_solve")
    vector = b.ndim == a.ndim - 1
    if vector:
        b = b[..., None]
    a, b = _broadcast_batch(a, b)
    factors = cho_factor(stop_gradient(a), lower=lower)
    x = lax.custom_linear_solve(
        lambda x: _dot(a, x),
        b,
        solve=lambda _, x: cho_solve(factors, x),
        symmetric=True,
    )
    return x[..., 0] if vector else x


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """Return the determinant of a square matrix (jax.scipy.linalg.det)."""
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """Return the inverse of a square matrix (jax.scipy.linalg.inv)."""
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


# --- LU -------------------------------------------------------------------------------------


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """Return ``(lu, piv)``, the packed LU factors and pivots (jax.scipy.linalg.lu_factor)."""
    del overwrite_a, check_finite
    check_arraylike("lu_factor", a)
    (a,) = _inexact(a)
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True):
    """Solve ``a x = b`` (``trans`` 1: ``a^T``, 2: ``a^H``) from ``lu_factor``'s result.

    (jax.scipy.linalg.lu_solve.)
    """
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    check_arraylike("lu_solve", lu_, b)
    lu_, b = _inexact(lu_, b)
    m = lu_.shape[-2]
    perm = lax_linalg.lu_pivots_to_permutation(pivots, m)
    b, vector = _matrix_rhs("lu_solve", lu_, b, perm)
    x = lax_lu_solve(lu_, perm, b, trans)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Return the LU decomposition ``a = P @ L @ U`` (jax.scipy.linalg.lu).

    ``(P, L, U)``, or ``(P @ L, U)`` with ``permute_l=True``; ``a`` may be
    rectangular and batched.
    """
    del overwrite_a, check_finite
    check_arraylike("lu", a)
    (a,) = _inexact(a)
    lu_, _, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    m, n = a.shape[-2:]
    rows = jnp.arange(m, dtype=permutation.dtype).reshape((1,) * (permutation.ndim - 1) + (m, 1))
    # P is real even for complex a, as JAX makes it.
    p = (permutation[..., None, :] == rows).astype(jnp.finfo(dtype).dtype)
    k = min(m, n)
    lower = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype).reshape(
        rows.shape[:-2] + (m, k)
    )
    upper = jnp.triu(lu_)[..., :k, :]
    if permute_l:
        return _dot(p.astype(dtype), lower), upper
    return p, lower, upper


# --- QR, SVD, eigendecompositions -----------------------------------------------------------


def qr(
    a,
    overwrite_a: bool = False,
    lwork=None,
    mode: str = "full",
    pivoting: bool = False,
    check_finite: bool = True,
):
    """Return the QR decomposition (jax.scipy.linalg.qr).

    ``mode`` ``"full"`` (square ``Q``), ``"economic"`` or ``"r"`` (``(R,)``);
    with ``pivoting=True`` also the column permutation.
    """
    del overwrite_a, lwork, check_finite
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    check_arraylike("qr", a)
    (a,) = _inexact(a)
    if pivoting:
        q, r, p = lax_linalg.qr(a, pivoting=True, full_matrices=full_matrices)
        return (r, p) if mode == "r" else (q, r, p)
    q, r = lax_linalg.qr(a, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


def qr_multiply(
    a,
    c,
    mode: str = "right",
    pivoting: bool = False,
    conjugate: bool = False,
    overwrite_a: bool = False,
    overwrite_c: bool = False,
):
    """Return ``Q @ c`` (mode ``"left"``) or ``c @ Q`` (``"right"``) and ``R``.

    (jax.scipy.linalg.qr_multiply.) ``Q`` is the economic factor of ``a``;
    ``conjugate=True`` uses ``conj(Q)``.
    """
    del overwrite_a, overwrite_c
    check_arraylike("qr_multiply", a, c)
    a, c = _inexact(a, c)
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left" and c.shape[-2] != k:
        raise ValueError(
            f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} "
            f"so Q has {k} columns, but c has {c.shape[-2]} rows (expected {k})."
        )
    if mode == "right" and c.shape[-1] != m:
        raise ValueError(
            f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} "
            f"so Q has {m} rows, but c has {c.shape[-1]} columns (expected {m})."
        )
    if pivoting:
        q, r, p = lax_linalg.qr(a, pivoting=True, full_matrices=False)
    else:
        q, r = lax_linalg.qr(a, full_matrices=False)
    if conjugate:
        q = jnp.conj(q)
    out = _dot(q, c) if mode == "left" else _dot(c, q)
    if onedim:
        out = out.ravel()
    return (out, r, p) if pivoting else (out, r)


def svd(
    a,
    full_matrices: bool = True,
    compute_uv: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    lapack_driver: str = "gesdd",
):
    """Return the singular value decomposition ``(U, s, Vh)``, or ``s`` (jax.scipy.linalg.svd)."""
    del overwrite_a, check_finite, lapack_driver
    check_arraylike("svd", a)
    (a,) = _inexact(a)
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(
    a,
    b=None,
    lower: bool = True,
    eigvals_only: bool = False,
    overwrite_a: bool = False,
    overwrite_b: bool = False,
    turbo: bool = True,
    eigvals=None,
    type: int = 1,  # noqa: A002  (scipy's name)
    check_finite: bool = True,
):
    """Return the eigenvalues ``w`` (ascending) and eigenvectors ``v`` of a Hermitian matrix.

    (jax.scipy.linalg.eigh.) ``a`` is symmetrized, ``(a + a^H) / 2``, as in JAX.
    The generalized problem (``b``), ``type`` other than 1 and ``eigvals``
    raise NotImplementedError, as in JAX.
    """
    del overwrite_a, overwrite_b, turbo, check_finite
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    check_arraylike("eigh", a)
    (a,) = _inexact(a)
    # JAX symmetrizes the input (lax.linalg.eigh's default), so ``lower`` has no effect.
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def schur(a, output: str = "real"):
    """Return the Schur decomposition ``a = Z T Z^H`` as ``(T, Z)`` (jax.scipy.linalg.schur).

    ``output="complex"`` gives the triangular complex form.
    """
    if output not in ("real", "complex"):
        raise ValueError(
            f"Expected 'output' to be either 'real' or 'complex', got output={output!r}."
        )
    check_arraylike("schur", a)
    a = jnp.asarray(a)
    if output == "complex":
        a = a.astype(_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """Return the upper Hessenberg form ``H`` (and ``Q`` with ``a = Q H Q^H``).

    (jax.scipy.linalg.hessenberg.)
    """
    del overwrite_a, check_finite
    check_arraylike("hessenberg", a)
    a = jnp.asarray(a)
    n = a.shape[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    # The reflectors act on rows/columns 1..n-1; Q is 1 (+) their product, assembled from
    # strongly typed blocks, so not weakly typed (as JAX's jnp.block makes it).
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch, dtype = a_out.shape[:-2], a_out.dtype
    top = jnp.concatenate(
        [jnp.ones((*batch, 1, 1), dtype), jnp.zeros((*batch, 1, n - 1), dtype)], -1
    )
    bottom = jnp.concatenate([jnp.zeros((*batch, n - 1, 1), dtype), q], -1)
    return h, jnp.concatenate([top, bottom], -2)


def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form ``(T, Z)`` to the complex one (jax.scipy.linalg.rsf2csf).

    Each 2x2 block of a complex-conjugate eigenvalue pair is made triangular
    by a Givens rotation, applied to ``T`` on both sides and to ``Z``.
    """
    del check_finite
    check_arraylike("rsf2csf", T, Z)
    T_arr, Z_arr = jnp.asarray(T), jnp.asarray(Z)
    if T_arr.ndim < 2 or T_arr.shape[-1] != T_arr.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z_arr.ndim < 2 or Z_arr.shape[-1] != Z_arr.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T_arr.shape[-1] != Z_arr.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z_arr.shape} vs. T: {T_arr.shape}")
    return vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T_arr, Z_arr)


def _rsf2csf_2d(T, Z):
    dtype, weak = result_type(T, Z)
    dtype = _complex_dtype(dtype)
    # JAX's promote_dtypes_complex: the weak type survives the conversion.
    T, Z = convert(T, dtype, weak), convert(Z, dtype, weak)
    n = T.shape[0]
    if n == 0:  # JAX indexes T[n, n - 1]
        raise IndexError("index is out of bounds for axis 0 with size 0")
    if n == 1:
        return T, Z
    eps = np.finfo(dtype).eps
    idx = jnp.arange(n)

    def rotate(m, T, Z):
        block = lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))
        mu = jnp_linalg.eigvals(block) - T[m, m]
        r = jnp_linalg.norm(jnp.stack([mu[0], T[m, m - 1]])).astype(dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = jnp.stack([jnp.stack([jnp.conj(c), s]), jnp.stack([-s, c])])
        rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        cols_right = idx >= m - 1
        rows = jnp.where(cols_right, G @ jnp.where(cols_right, rows, 0), rows)
        T = lax.dynamic_update_slice_in_dim(T, rows, m - 1, axis=0)
        cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        rows_above = (idx < m + 1)[:, None]
        cols = jnp.where(rows_above, jnp.where(rows_above, cols, 0) @ _H(G), cols)
        T = lax.dynamic_update_slice_in_dim(T, cols, m - 1, axis=1)
        zc = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(Z, zc @ _H(G), m - 1, axis=1)
        return T, Z

    def step(i, TZ):
        T, Z = TZ
        m = n - i
        needs = jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m]))
        T, Z = lax.cond(needs, rotate, lambda m, T, Z: (T, Z), m, T, Z)
        return T.at[m, m - 1].set(0), Z

    return lax.fori_loop(1, n, step, (T, Z))


# --- matrix functions -----------------------------------------------------------------------


_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (
        17643225600.0,
        8821612800.0,
        2075673600.0,
        302702400.0,
        30270240.0,
        2162160.0,
        110880.0,
        3960.0,
        90.0,
        1.0,
    ),
    13: (
        64764752532480000.0,
        32382376266240000.0,
        7771770303897600.0,
        1187353796428800.0,
        129060195264000.0,
        10559470521600.0,
        670442572800.0,
        33522128640.0,
        1323241920.0,
        40840800.0,
        960960.0,
        16380.0,
        182.0,
        1.0,
    ),
}
# Higham (2005): the largest 1-norm for which each degree is accurate, and the norm
# above which the matrix is scaled down (by squarings) to use the highest degree.
_PADE_BOUNDS = {
    8: (
        (3, 5, 7, 9, 13),
        (0.01495585217958292, 0.253939833006323, 0.9504178996162932, 2.097847961257068),
        5.371920351148152,
    ),
    4: ((3, 5, 7), (0.4258730016922831, 1.880152677804762), 3.92572478313866),
}


def _pade(degree: int, A):
    """The odd (U) and even (V) parts of the [degree/degree] Pade approximant of exp."""
    b = _PADE[degree]
    ident = jnp.eye(A.shape[0], dtype=A.dtype)
    A2 = _dot(A, A)
    if degree == 13:
        A4 = _dot(A2, A2)
        A6 = _dot(A4, A2)
        U = _dot(
            A,
            _dot(A6, b[13] * A6 + b[11] * A4 + b[9] * A2)
            + b[7] * A6
            + b[5] * A4
            + b[3] * A2
            + b[1] * ident,
        )
        V = (
            _dot(A6, b[12] * A6 + b[10] * A4 + b[8] * A2)
            + b[6] * A6
            + b[4] * A4
            + b[2] * A2
            + b[0] * ident
        )
        return U, V
    powers = [ident, A2]
    for _ in range(2, degree // 2 + 1):
        powers.append(_dot(powers[-1], A2))
    # Summed from the highest power down, left to right, as JAX writes them out.
    odd = reduce(operator.add, [b[2 * i + 1] * p for i, p in enumerate(powers)][::-1])
    even = reduce(operator.add, [b[2 * i] * p for i, p in enumerate(powers)][::-1])
    return _dot(A, odd), even


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """Return the matrix exponential (jax.scipy.linalg.expm).

    Scaling and squaring with a Pade approximant of degree 3 to 13 chosen from
    the 1-norm (3 to 7 in single precision); more than ``max_squarings``
    squarings give NaN, as in JAX.
    """
    check_arraylike("expm", A)
    (A,) = _inexact(A)
    if A.ndim < 2 or A.shape[-1] != A.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={A.shape}.")
    if A.ndim > 2:
        return vectorize(
            partial(expm, upper_triangular=upper_triangular, max_squarings=max_squarings),
            signature="(n,n)->(n,n)",
        )(A)
    P, Q, n_squarings = _expm_p_q(A)

    def compute(args):
        P, Q = args
        R = solve_triangular(Q, P) if upper_triangular else jnp_linalg.solve(Q, P)
        return _expm_squaring(R, n_squarings, max_squarings)

    return lax.cond(
        n_squarings > max_squarings, lambda args: jnp.full_like(A, np.nan), compute, (P, Q)
    )


# The Pade approximant and the squarings are each one program, as JAX jits them (eagerly,
# and under vmap, XLA then fuses their multiply-adds as it does in JAX).
@jit
def _expm_p_q(A):
    """The Pade numerator ``P`` and denominator ``Q`` of the scaled ``A``, and the scaling."""
    if A.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"A.dtype={A.dtype} is not supported.")
    bits = np.finfo(A.dtype).bits
    degrees, bounds, maxnorm = _PADE_BOUNDS[8 if bits == 64 else 4]
    norm1 = jnp_linalg.norm(A, 1)
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(norm1 / maxnorm)))
    scaled = A / 2 ** n_squarings.astype(A.dtype)  # JAX's power, in A's (complex) dtype
    index = jnp.digitize(norm1, jnp.array(bounds, norm1.dtype))
    U, V = lax.switch(index, [partial(_pade, d) for d in degrees], scaled)
    return U + V, V - U, n_squarings


@partial(jit, static_argnums=(2,))
def _expm_squaring(R, n_squarings, max_squarings: int):
    """Square ``R`` ``n_squarings`` times (at most ``max_squarings``), undoing the scaling."""

    def square(R, i):
        return lax.cond(i < n_squarings, lambda r: _dot(r, r), lambda r: r, R), None

    R, _ = lax.scan(square, R, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return R


def expm_frechet(A, E, *, method=None, compute_expm: bool = True):
    """Return ``expm(A)`` and its Frechet derivative in direction ``E``, or the latter.

    (jax.scipy.linalg.expm_frechet.) The derivative is the JVP of ``expm``.
    """
    del method
    A_arr, E_arr = jnp.asarray(A), jnp.asarray(E)
    if A_arr.ndim < 2 or A_arr.shape[-2] != A_arr.shape[-1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={A_arr.shape}")
    if E_arr.ndim < 2 or E_arr.shape[-2] != E_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={E_arr.shape}")
    if A_arr.shape != E_arr.shape:
        raise ValueError(
            "expected A and E to be the same shape, got "
            f"A.shape={A_arr.shape} E.shape={E_arr.shape}"
        )
    primal, tangent = jvp(
        partial(expm, upper_triangular=False, max_squarings=16), (A_arr,), (E_arr,)
    )
    return (primal, tangent) if compute_expm else tangent


def _sqrtm_triu(T):
    """The upper triangular square root of an upper triangular ``T``, column by column."""
    diag = jnp.sqrt(jnp.diagonal(T))
    n = diag.shape[0]
    idx = jnp.arange(n)
    U = jnp.diag(diag)

    def row(step, data):
        j, U = data
        i = j - 1 - step
        between = (idx > i) & (idx < j)
        s = jnp.sum(jnp.where(between, U[i, :] * U[:, j], 0))
        value = jnp.where(T[i, j] == s, 0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def column(j, U):
        return lax.fori_loop(0, j, row, (j, U))[1]

    return lax.fori_loop(0, n, column, U)


def sqrtm(A, blocksize: int = 1):
    """Return the principal matrix square root (jax.scipy.linalg.sqrtm), by the Schur method."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    check_arraylike("sqrtm", A)
    T, Z = schur(A, output="complex")
    if T.ndim > 2:  # JAX's diag of the batched Schur form fails so
        raise ValueError("diag input must be 1d or 2d")
    return _dot(_dot(Z, _sqrtm_triu(T)), _H(Z))


def _parlett(F, T):
    """Fill the strict upper triangle of ``F = f(T)`` by Parlett's recurrence.

    (Golub and Van Loan, algorithm 11.1.1.)

    Also returns the smallest eigenvalue gap met, for ``funm``'s error estimate.
    """
    n = T.shape[0]
    idx = jnp.arange(n)

    def inner(i, state):
        p, F, minden = state
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        mask = (idx >= i) & (idx < j - 1)
        s = s + jnp.where(mask, T[i - 1], 0) @ jnp.where(mask, F[:, j - 1], 0)
        s = s - jnp.where(mask, F[i - 1], 0) @ jnp.where(mask, T[:, j - 1], 0)
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = jnp.where(den != 0, s / den, s)
        return p, F.at[i - 1, j - 1].set(s), jnp.minimum(minden, jnp.abs(den))

    def outer(p, state):
        F, minden = state
        _, F, minden = lax.fori_loop(1, n - p + 1, inner, (p, F, minden))
        return F, minden

    return lax.fori_loop(1, n, outer, (F, jnp.abs(T[0, 0])))


def funm(A, func: Callable, disp: bool = True):
    """Evaluate the matrix function of the scalar ``func`` (jax.scipy.linalg.funm).

    ``func`` is applied to the eigenvalues on the complex Schur form, and the
    rest filled by Parlett's recurrence (which needs distinct eigenvalues).
    With ``disp=False`` also an estimate of the relative error.
    """
    check_arraylike("funm", A)
    A_arr = jnp.asarray(A)
    if A_arr.ndim != 2 or A_arr.shape[0] != A_arr.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = schur(A_arr)
    T, Z = rsf2csf(T, Z)
    F = jnp.diag(func(jnp.diagonal(T))).astype(T.dtype)
    F, minden = _parlett(F, T)
    F = Z @ F @ _H(Z)
    if disp:
        return F
    tol = np.finfo(F.dtype).eps
    minden = jnp.where(minden == 0, tol, minden)
    err = jnp.where(
        jnp.any(jnp.isinf(F)),
        np.inf,
        jnp.minimum(1, jnp.maximum(tol, tol / minden * jnp_linalg.norm(jnp.triu(T, 1), 1))),
    )
    return F, err


def polar(a, side: str = "right", *, method: str = "qdwh", eps=None, max_iterations=None):
    """Return the polar decomposition ``(u, p)``: ``a = u p`` (right) or ``p u`` (left).

    (jax.scipy.linalg.polar.) ``u`` has orthonormal columns (rows), ``p`` is
    Hermitian positive semi-definite. ``method="qdwh"`` (``m >= n`` for the
    right side, ``m < n`` for the left) runs ``lax.linalg.qdwh`` with ``eps``;
    ``"svd"`` forms the factors from the SVD. ``max_iterations`` is unused, as
    in JAX.
    """
    del max_iterations  # JAX does not pass it on either
    check_arraylike("polar", a)
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    if method not in ("qdwh", "svd"):
        raise ValueError(f"Unknown polar decomposition method {method}.")
    m, n = arr.shape[-2:]
    if method == "qdwh":
        if (side == "right") != (m >= n):
            raise NotImplementedError(
                "method='qdwh' only supports mxn matrices where m < n where side='right' and "
                f"m >= n side='left', got {(m, n)} with side={side!r}"
            )
        signature = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
        return vectorize(partial(_polar_qdwh, side=side, eps=eps), signature=signature)(arr)
    (arr,) = _inexact(arr)
    u, s, vh = lax_linalg.svd(arr, full_matrices=False)
    s = s.astype(u.dtype)
    unitary = _dot(u, vh)
    if side == "right":
        posdef = _dot(_H(vh) * s[..., None, :], vh)
    else:
        posdef = _dot(u * s[..., None, :], _H(u))
    return unitary, posdef


def _polar_qdwh(a, *, side: str, eps):
    """QDWH of one matrix: ``a`` itself on the right side, ``a^H`` on the left."""
    if side == "right":
        unitary, posdef, _, _ = lax_linalg.qdwh(a, eps=eps)
        return unitary, posdef
    unitary, posdef, _, _ = lax_linalg.qdwh(_H(a), eps=eps)
    return _H(unitary), _H(posdef)


def _sylvester_triangular(R, S, F):
    """Solve ``R Y + Y S = F`` for ``Y``: ``R`` upper, ``S`` lower triangular.

    Entries are solved from the bottom-right corner, one per scan step (each
    needs those below it in its column and right of it in its row).
    """
    m, n = F.shape
    rows, cols = jnp.arange(m), jnp.arange(n)

    def step(Y, flat):
        i, j = flat // n, flat % n
        rhs = F[i, j]
        rhs = rhs - jnp.sum(jnp.where(rows > i, R[i, :] * Y[:, j], 0))
        rhs = rhs - jnp.sum(jnp.where(cols > j, Y[i, :] * S[:, j], 0))
        return Y.at[i, j].set(rhs / (R[i, i] + S[j, j])), None

    Y, _ = lax.scan(step, jnp.zeros((m, n), F.dtype), jnp.arange(m * n - 1, -1, -1))
    return Y


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """Solve the Sylvester equation ``A X + X B = C`` (jax.scipy.linalg.solve_sylvester).

    ``method="schur"`` is Bartels-Stewart on the complex Schur forms;
    ``"eigen"`` diagonalizes ``A`` and ``B``. If some eigenvalues of ``A`` and
    ``-B`` are within ``tol`` the equation is singular and the result is NaN.
    """
    check_arraylike("solve_sylvester", A, B, C)
    A, B, C = _inexact(A, B, C)
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(
            f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\nC: {C.shape}"
        )
    if method not in ("schur", "eigen"):
        raise ValueError(
            f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".'
        )
    return vectorize(
        partial(_solve_sylvester_2d, method=method, tol=tol),
        signature="(m,m),(n,n),(m,n)->(m,n)",
    )(A, B, C)


def _solve_sylvester_2d(A, B, C, *, method: str, tol: float):
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(_H(B), output="complex")
        F = _H(U) @ C.astype(R.dtype) @ V
        Y = _sylvester_triangular(R, _H(S), F)
        X = U @ Y @ _H(V)
    else:
        ra, ua = jnp_linalg.eig(A)
        rb, ub = jnp_linalg.eig(B)
        F = jnp_linalg.solve(ua, C.astype(ra.dtype) @ ub)
        X = ua @ (F / (ra[:, None] + rb[None, :])) @ jnp_linalg.inv(ub)
    if kind(C.dtype) != "c":
        X = jnp.real(X)
    close = jnp.abs(jnp_linalg.eigvals(A)[:, None] + jnp_linalg.eigvals(B)[None, :]) < tol
    return jnp.where(jnp.any(close), jnp.full_like(X, np.nan), X)


# --- tridiagonal eigenvalues ----------------------------------------------------------------


def eigh_tridiagonal(
    d, e, *, eigvals_only: bool = False, select: str = "a", select_range=None, tol=None, key=None
):
    """Return the eigenvalues (and vectors) of the Hermitian tridiagonal matrix ``(d, e)``.

    (jax.scipy.linalg.eigh_tridiagonal.) ``d`` is the diagonal, ``e`` the
    subdiagonal. Eigenvalues by bisection on Sturm sequence counts (Kahan's
    pivot guard), all of them (``select="a"``) or those with indices in
    ``select_range`` (``select="i"``). Unless ``eigvals_only``, also the
    eigenvectors (columns), by inverse iteration from normal vectors drawn
    with ``key`` (default ``random.key(42)``, as in JAX).
    """
    alpha, beta = jnp.asarray(d), jnp.asarray(e)
    supported = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(
            "diagonal and off-diagonal values must have same dtype, got "
            f"{alpha.dtype} and {beta.dtype}"
        )
    if alpha.dtype not in supported:
        raise TypeError(
            "Only float32 and float64 inputs are supported as inputs to "
            f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}"
        )
    n = alpha.shape[0]
    if n <= 1:
        if eigvals_only:
            return jnp.real(alpha)
        return jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype)
    off_diagonal = beta
    if kind(alpha.dtype) == "c":
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs, beta_sq = jnp.abs(beta), jnp.square(beta)
    real = alpha.dtype
    finfo = np.finfo(real)
    # Gershgorin bounds on the spectrum.
    row_sums = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]])
    hi_est = jnp.max(alpha + row_sums)  # first, so a length mismatch is reported by add
    lo_est = jnp.min(alpha - row_sums)
    t_norm = jnp.maximum(jnp.abs(lo_est), jnp.abs(hi_est))
    safemin = np.maximum(1 / finfo.max, (1 + finfo.eps) * finfo.tiny).astype(real)
    pivmin = safemin * jnp.maximum(1, jnp.max(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    if select == "a":
        targets = jnp.arange(n, dtype=np.int32)
    elif select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        targets = jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    elif select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    else:
        raise ValueError("'select must have a value in {'a', 'i', 'v'}.")
    fudge = 2.1
    slack = n * fudge * finfo.eps * t_norm
    lower = jnp.broadcast_to(lo_est - slack - 2 * fudge * pivmin, targets.shape)
    upper = jnp.broadcast_to(hi_est + slack + fudge * pivmin, targets.shape)

    def sturm_count(x):
        """How many eigenvalues lie below each ``x`` (the negative pivots of T - x I)."""
        q = alpha[0] - x
        count = (q < 0).astype(np.int32)
        q = jnp.where(alpha[0] == x, alpha0_perturbation, q)

        def step(i, qc):
            q, count = qc
            q = alpha[i] - beta_sq[i - 1] / q - x
            small = q <= pivmin
            return jnp.where(small, jnp.minimum(q, -pivmin), q), count + small.astype(np.int32)

        return lax.fori_loop(1, n, step, (q, count))[1]

    def keep_going(state):
        i, lower, upper = state
        return (i < finfo.nmant + 1) & (jnp.max(upper - lower) > abs_tol)

    def bisect(state):
        i, lower, upper = state
        mid = 0.5 * (lower + upper)
        counts = sturm_count(mid)
        return (
            i + 1,
            jnp.where(counts <= targets, mid, lower),
            jnp.where(counts > targets, mid, upper),
        )

    _, lower, upper = lax.while_loop(keep_going, bisect, (0, lower, upper))
    eigvals = 0.5 * (lower + upper)
    if eigvals_only:
        return eigvals
    if key is None:
        from modjax import random

        key = random.key(42)
    return eigvals, _tridiagonal_eigenvectors(alpha, off_diagonal, eigvals, key).T


def _orthonormalize_clusters(v, starts, ends, count):
    """Orthonormalize (by QR) each run ``v[start:end]`` of rows whose eigenvalues are close.

    Eigenvectors of nearly equal eigenvalues are only determined as a
    subspace; inverse iteration alone would let them collapse onto one vector.
    """
    k, n = v.shape
    rows = jnp.arange(k)

    def one(i, v):
        start, end = starts[i], ends[i]
        # The cluster's rows, moved to the top of a k-row block, the others zeroed.
        block = lax.dynamic_slice(jnp.pad(v, ((0, k), (0, 0))), (start, 0), (k, n))
        inside = (rows < end - start)[:, None]
        q, _ = jnp_linalg.qr(jnp.where(inside, block, 0).T)
        q_rows = jnp.where(inside, q.T, 0)
        placed = lax.dynamic_update_slice(jnp.zeros((2 * k, n), v.dtype), q_rows, (start, 0))[:k]
        return jnp.where(((rows >= start) & (rows < end))[:, None], placed, v)

    return lax.fori_loop(0, count, one, v)


def _tridiagonal_eigenvectors(alpha, beta, eigvals, key):
    """Inverse iteration for the eigenvectors (rows) of ``T = tridiag(conj(beta), alpha, beta)``.

    All ``k`` shifted systems ``(T - w_j I) x = v_j`` are one batched
    ``tridiagonal_solve`` (singular pivots perturbed). It stops after 5 steps or
    once no vector's norm grows by 10% (LAPACK xSTEIN's rules).
    """
    from modjax import random

    n, k = alpha.shape[0], eigvals.shape[0]
    dtype = np.result_type(alpha.dtype, beta.dtype)
    lower_diag = jnp.broadcast_to(jnp.pad(jnp.conj(beta), (1, 0)), (k, n)).astype(dtype)
    upper_diag = jnp.broadcast_to(jnp.pad(beta, (0, 1)), (k, n)).astype(dtype)
    shifted = (alpha[None, :] - eigvals[:, None]).astype(dtype)

    # Runs of eigenvalues closer than sqrt(eps) * |T| form the clusters to orthogonalize.
    close = eigvals[1:] - eigvals[:-1] < np.sqrt(np.finfo(eigvals.dtype).eps) * jnp.maximum(
        jnp.abs(eigvals[0]), jnp.abs(eigvals[-1])
    )
    before, after = jnp.pad(close, (1, 0)), jnp.pad(close, (0, 1))
    starts = jnp.nonzero(after & ~before, size=k // 2 + 1)[0]
    ends = jnp.nonzero(before & ~after, size=k // 2 + 1)[0] + 1
    count = jnp.sum(after & ~before)

    v = random.normal(key, (k, n), dtype=np.finfo(dtype).dtype).astype(dtype)
    v = v / jnp_linalg.norm(v, axis=-1, keepdims=True).astype(dtype)

    def keep_going(state):
        i, _, norms, old_norms = state
        return (i < 5) & jnp.any(norms >= 1.1 * old_norms)

    def step(state):
        i, v, norms, _ = state
        x = lax_linalg.tridiagonal_solve(
            lower_diag, shifted, upper_diag, v[:, :, None], perturb_singular=True
        )[..., 0]
        new_norms = jnp_linalg.norm(x, axis=-1, keepdims=True)
        x = _orthonormalize_clusters(x / new_norms.astype(dtype), starts, ends, count)
        return i + 1, x, new_norms[:, 0], norms

    ones = jnp.ones(k, eigvals.dtype)
    return lax.while_loop(keep_going, step, (0, v, ones, jnp.zeros_like(ones)))[1]


# --- special matrices -----------------------------------------------------------------------


def block_diag(*arrs):
    """Return the block-diagonal matrix of (at most 2-D) arrays (jax.scipy.linalg.block_diag)."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    check_arraylike("block_diag", *arrs)
    arrs = tuple(promote_dtypes(*arrs))
    bad = [i for i, a in enumerate(arrs) if np.ndim(a) > 2]
    if bad:
        # JAX formats the argument as the tracer its jitted function sees.
        raise ValueError(
            "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
            f"JitTracer({jnp.asarray(arrs[bad[0]]).aval}) at argument {bad[0]}."
        )
    blocks = [jnp.atleast_2d(a) for a in arrs]
    total = sum(b.shape[1] for b in blocks)
    rows, col = [], 0
    for b in blocks:
        cols = b.shape[1]
        # A strongly typed zero pads, so the result is never weakly typed (as in JAX).
        zero = np.zeros((), b.dtype)
        rows.append(lax.pad(b, zero, ((0, 0, 0), (col, total - cols - col, 0))))
        col += cols
    return jnp.concatenate(rows, axis=0)


def toeplitz(c, r=None):
    """Return the Toeplitz matrix with first column ``c`` and first row ``r``.

    (jax.scipy.linalg.toeplitz.) ``r`` defaults to ``conj(c)``; ``r[0]`` is
    ignored. Leading dimensions of ``c`` and ``r`` are a batch.
    """
    if r is None:
        check_arraylike("toeplitz", c)
        r = jnp.conjugate(jnp.asarray(c))
    else:
        check_arraylike("toeplitz", c, r)
    return vectorize(_toeplitz, signature="(m),(n)->(m,n)")(
        jnp.atleast_1d(jnp.asarray(c)), jnp.atleast_1d(jnp.asarray(r))
    )


def _toeplitz(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.promote_types(c.dtype, r.dtype)
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=dtype)
    # Entry (i, j) is c[i - j] below the diagonal and r[j - i] above: one gather from
    # reversed(c) ++ r[1:] at m - 1 - i + j.
    elems = jnp.concatenate([c[::-1], r[1:]]).astype(dtype)
    return elems[(m - 1) - jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def hankel(c, r=None):
    """Return the Hankel matrix of first column ``c``, last row ``r`` (jax.scipy.linalg.hankel).

    ``r`` defaults to zeros; ``r[0]`` is ignored.
    """
    if r is None:
        check_arraylike("hankel", c)
        c = jnp.asarray(c)
        r = jnp.zeros_like(c)
    else:
        check_arraylike("hankel", c, r)
        c, r = jnp.asarray(c), jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    return vectorize(_hankel, signature="(m),(n)->(m,n)")(c, r)


def _hankel(c, r):
    m, n = c.shape[0], r.shape[0]
    dtype = jnp.result_type(c, r)
    if m == 0 or n == 0:
        return jnp.empty((m, n), dtype=dtype)
    v = jnp.concatenate([c, r[1:]]).astype(dtype)
    return v[jnp.arange(m)[:, None] + jnp.arange(n)[None, :]]


def circulant(c):
    """Return the circulant matrix with first column ``c`` (jax.scipy.linalg.circulant)."""
    check_arraylike("circulant", c)

    def one(c):
        n = c.shape[0]
        return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]

    return vectorize(one, signature="(n)->(n,n)")(jnp.atleast_1d(jnp.asarray(c)))


def leslie(f, s):
    """Return the Leslie matrix of fecundities ``f``, survivals ``s`` (jax.scipy.linalg.leslie)."""
    check_arraylike("leslie", f, s)
    f_arr, s_arr = jnp.atleast_1d(f), jnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError(
            f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}."
        )
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError(
            "Incorrect lengths for f and s. The length of s along the last axis must be one "
            f"less than the length of f; got f shape {f_arr.shape} and s shape {s_arr.shape}."
        )

    def one(f, s):
        f, s = promote_dtypes(f, s)
        return jnp.diag(s, k=-1).at[0].set(f)

    return vectorize(one, signature="(n),(m)->(n,n)")(f_arr, s_arr)


def companion(a):
    """Return the companion matrix of the polynomial ``a`` (jax.scipy.linalg.companion)."""
    check_arraylike("companion", a)
    (a,) = _inexact(a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(
            f"The length of `a` along the last axis must be at least 2; got shape {a.shape}."
        )

    def one(a):
        first = -a[1:] / a[0]
        m = a.shape[0] - 1
        return jnp.eye(m, m, k=-1, dtype=first.dtype).at[0].set(first)

    return vectorize(one, signature="(n)->(m,m)")(a)


def fiedler(a):
    """Return the symmetric Fiedler matrix ``|a_i - a_j|`` (jax.scipy.linalg.fiedler)."""
    check_arraylike("fiedler", a)
    arr = jnp.atleast_1d(a)
    return jnp.abs(arr[..., None] - arr[..., None, :])


def fiedler_companion(a):
    """Return the Fiedler companion matrix of ``a`` (jax.scipy.linalg.fiedler_companion)."""
    check_arraylike("fiedler_companion", a)
    (a,) = _inexact(a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError(
            "fiedler_companion requires the last axis of 'a' to have nonzero length, but got an "
            f"array of shape {a.shape}."
        )
    return vectorize(_fiedler_companion, signature="(n)->(m,m)")(a)


def _fiedler_companion(a):
    n = a.shape[0] - 1
    if n == 0:
        return jnp.empty((0, 0), a.dtype)
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i, j = jnp.arange(n)[:, None], jnp.arange(n)[None, :]
    even, odd = i % 2 == 0, i % 2 == 1
    one, zero = jnp.ones((), a.dtype), jnp.zeros((), a.dtype)
    conditions = [
        (i == 0) & (j == 0),
        (i == 1) & (j == 0),
        (j == i + 1) & even,
        (j == i + 2) & even,
        (j == i - 1) & even & (i >= 2),
        (j == i - 2) & odd & (i >= 3),
    ]
    choices = [-a[1], one, -a[jnp.minimum(i + 2, n)], one, -a[jnp.minimum(i + 1, n)], one]
    return jnp.select(conditions, choices, default=zero)


def convolution_matrix(a, n: int, mode: str = "full"):
    """Return the matrix of convolution with ``a`` for length-``n`` inputs.

    (jax.scipy.linalg.convolution_matrix.) ``mode`` ``full``, ``valid`` or
    ``same`` as in ``numpy.convolve``.
    """
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = jnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pads = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a_arr, pads)
    raz = jnp.pad(jnp.flip(a_arr, axis=-1), pads)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb, te = trim // 2, trim - trim // 2
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    return toeplitz(az[..., tb : length - te], raz[..., length - n - tb : length - tb])


def _default_float():
    return dtypes.default_float_dtype()


def hilbert(n: int):
    """Return the ``n x n`` Hilbert matrix ``1 / (i + j + 1)`` (jax.scipy.linalg.hilbert)."""
    a = lax.broadcasted_iota(_default_float(), (n, 1), 0)
    return 1 / (a + a.T + 1)


def _comb(n, k):
    """Binomial coefficients of floats (0 outside 0 <= k <= n), rounded."""
    valid = (k >= 0) & (k <= n)
    k = jnp.where(valid, k, 0)
    value = jnp.exp(lax.lgamma(n + 1.0) - lax.lgamma(k + 1.0) - lax.lgamma(n - k + 1.0))
    return jnp.where(valid, jnp.round(value), 0)


def invhilbert(n: int):
    """Return the inverse of the ``n x n`` Hilbert matrix (jax.scipy.linalg.invhilbert)."""
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    s = i + j
    return (
        (-1.0) ** s
        * (s + 1.0)
        * _comb(n + i, n - j - 1)
        * _comb(n + j, n - i - 1)
        * _comb(s, i) ** 2
    )


def _binom(n, k):
    return jnp.exp(lax.lgamma(n + 1.0) - lax.lgamma(n - k + 1.0) - lax.lgamma(k + 1.0))


def _pascal_kind(kind_):
    kind_ = "symmetric" if kind_ is None else kind_
    valid = ["symmetric", "lower", "upper"]
    if kind_ not in valid:
        raise ValueError(f"Expected kind to be on of: {valid}; got {kind_}")
    return kind_


def pascal(n: int, kind=None):
    """Return the ``n x n`` Pascal matrix: symmetric, lower or upper (jax.scipy.linalg.pascal)."""
    kind = _pascal_kind(kind)
    a = jnp.arange(n, dtype=np.float32)
    lower = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower, lower.T)


def invpascal(n: int, kind=None):
    """Return the inverse of the ``n x n`` Pascal matrix (jax.scipy.linalg.invpascal)."""
    kind = _pascal_kind(kind)
    a = jnp.arange(n, dtype=_default_float())
    i, j = a[:, None], a[None, :]
    lower = (-1.0) ** (i - j) * _binom(i, j)
    if kind == "lower":
        return lower
    if kind == "upper":
        return lower.T
    return jnp.dot(lower.T, lower)


def helmert(n: int, full: bool = False):
    """Return the ``(n - 1) x n`` (``full``: square) Helmert matrix (jax.scipy.linalg.helmert)."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i, j = jnp.arange(n - 1)[:, None], jnp.arange(n)[None, :]
    k = (i + 1).astype(_default_float())
    denom = jnp.sqrt(k * (k + 1))
    H = jnp.where(j <= i, 1.0 / denom, jnp.where(j == i + 1, -k / denom, jnp.zeros_like(denom)))
    if full:
        first = jnp.full((1, n), 1.0 / math.sqrt(n), dtype=H.dtype)
        H = jnp.concatenate([first, H], axis=0)
    return H


def hadamard(n: int, dtype=int):
    """Return the ``n x n`` Hadamard matrix, ``n`` a power of 2 (jax.scipy.linalg.hadamard)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    H = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        H = jnp.concatenate(
            [jnp.concatenate([H, H], axis=1), jnp.concatenate([H, -H], axis=1)], axis=0
        )
    return H


def dft(n: int, scale=None, *, dtype=None):
    """Return the ``n x n`` discrete Fourier transform matrix (jax.scipy.linalg.dft).

    ``scale`` ``None``, ``"sqrtn"`` or ``"n"`` divides by 1, sqrt(n) or n.
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = np.dtype(dtype)
        if kind(dtype) != "c":
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / math.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas
