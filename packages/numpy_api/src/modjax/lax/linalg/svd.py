"""``svd``: the singular value decomposition, LAPACK gesdd (or gesvd).

On CPU ``svd`` calls ``lapack_?gesdd_ffi`` (divide and conquer; the default)
or ``lapack_?gesvd_ffi`` (``algorithm=SvdAlgorithm.QR``) with ``mode`` ``'A'``
(full U and V^H), ``'S'`` (reduced) or ``'N'`` (values only); results the
overwritten input, ``s`` (real, descending), ``u``, ``vt`` and ``info`` (a
failure gives NaNs). Empty matrices are handled without LAPACK (identity
factors, as JAX does). ``subset_by_index`` other than all values is not
supported on CPU, as in JAX.

The JVP is JAX's (after Giles, "Collected matrix derivative results"):
``dS = U^H dA V``, ``ds = real(diag(dS))``, and the singular vectors'
tangents through ``F[i, j] = 1 / (s[j]^2 - s[i]^2)``, with the extra terms of
non-square matrices. Repeated or zero singular values make the vectors'
derivative undefined; full ``U``/``V^H`` of a non-square matrix raise
NotImplementedError, as in JAX.
"""

from __future__ import annotations

import enum

import numpy as np

from modjax.autodiff import Zero, jvp_rules
from modjax.lowering import lower_fun, register_lowering
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from .._common import aval_of, real_dtype
from ..elementwise import add, convert_element_type, div, eq, mul, sub
from ..structural import broadcast_in_dim, full
from ._base import batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless, u8_attr
from ._matrix import H, T, astype, diagonal, eye_like, from_diagonal, matmul, real_part

__all__ = ["SvdAlgorithm", "svd", "svd_p"]


class SvdAlgorithm(enum.Enum):
    """Which SVD algorithm to use (jax.lax.linalg.SvdAlgorithm)."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"

    def __repr__(self):
        return f"SvdAlgorithm.{self.name}"


def _svd_shape(shape, *, full_matrices, compute_uv, subset_by_index, algorithm):
    m, n = shape
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    if not compute_uv:
        return ((rank,),)
    return (rank,), (m, m if full_matrices else rank), (n if full_matrices else rank, n)


def _svd_dtypes(dtype, *, compute_uv, **_):
    real = real_dtype(dtype)
    return (real, dtype, dtype) if compute_uv else (real,)


def _empty_svd(a, *, full_matrices, compute_uv):
    *batch, m, n = to_aval(a).shape
    dtype = to_aval(a).dtype
    s = full((*batch, 0), 0, real_dtype(dtype))
    if not compute_uv:
        return [s]
    if full_matrices:
        size = max(m, n)
        u = eye_like((*batch, size, size), dtype)
    else:
        u = full((*batch, m, n), 0, dtype)
    v = full((*batch, 0, 0), 0, dtype)
    if m < n:
        u, v = v, u
    return [s, u, v]


def _svd_cpu_lowering(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (aval,) = ctx.avals_in
    m, n = aval.shape[-2:]
    if m == 0 or n == 0:
        rule = lower_fun(_empty_svd, multiple_results=True)
        return rule(ctx, x, full_matrices=full_matrices, compute_uv=compute_uv)
    batch = batch_dims_of(aval)
    k = min(m, n)
    routine = "gesvd" if algorithm is SvdAlgorithm.QR else "gesdd"
    mode = "N" if not compute_uv else ("A" if full_matrices else "S")
    s_aval = ctx.avals_out[0]
    u_aval = ShapedArray((*batch, m, m if full_matrices else k), aval.dtype)
    vt_aval = ShapedArray((*batch, n if full_matrices else k, n), aval.dtype)
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    _, s, u, vt, info = lapack_call(
        ctx,
        routine,
        [x],
        [aval, s_aval, u_aval, vt_aval, info_aval],
        aliases={0: 0},
        mode=u8_attr(mode),
    )
    ok = info_ok(info, batch)
    out = [nan_unless(ok, s, s_aval, batch)]
    if compute_uv:
        out += [nan_unless(ok, u, u_aval, batch), nan_unless(ok, vt, vt_aval, batch)]
    return out


def _zeros_to_one(x):
    """``1 / x`` where ``x != 0`` and 0 where it is (JAX's ``1 / (x + z) - z`` trick)."""
    dtype = to_aval(x).dtype
    z = convert_element_type(eq(x, np.asarray(0, dtype)), dtype)
    return sub(div(np.asarray(1, dtype), add(x, z)), z)


def _svd_jvp(primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (a,), (da,) = primals, tangents
    params = {"subset_by_index": subset_by_index, "algorithm": algorithm}
    s, u, vt = svd_p.bind(a, full_matrices=False, compute_uv=True, **params)
    *batch, m, n = to_aval(a).shape
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            "Singular value decomposition JVP not implemented for full matrices"
        )
    primal_out = [s, u, vt] if compute_uv else [s]
    if type(da) is Zero:
        return primal_out, [Zero(to_aval(p)) for p in primal_out]
    dtype = to_aval(a).dtype
    ut, v = H(u), H(vt)
    ds_full = matmul(matmul(ut, da), v)
    ds = real_part(diagonal(ds_full))
    if not compute_uv:
        return primal_out, [ds]
    k = to_aval(s).shape[-1]
    nb = len(batch)
    shape = (*batch, k, k)
    s_row = broadcast_in_dim(s, shape, (*range(nb), nb + 1))  # [i, j] -> s[j]
    s_diffs = mul(add(s_row, T(s_row)), sub(s_row, T(s_row)))  # s[j]^2 - s[i]^2
    eye = eye_like(shape, to_aval(s).dtype)
    f = sub(div(np.asarray(1, to_aval(s).dtype), add(s_diffs, eye)), eye)
    f = astype(f, dtype)
    s_c = astype(s_row, dtype)
    dss = mul(s_c, ds_full)  # dS diag(s)
    sds = mul(T(s_c), ds_full)  # diag(s) dS
    s_inv = astype(from_diagonal(_zeros_to_one(s)), dtype)
    half = np.asarray(0.5, dtype)
    du_dv_diag = mul(mul(half, sub(ds_full, H(ds_full))), s_inv)
    du = matmul(u, add(mul(f, add(dss, H(dss))), du_dv_diag))
    dv = matmul(v, mul(f, add(sds, H(sds))))
    s_cols = astype(broadcast_in_dim(s, (*batch, 1, k), (*range(nb), nb + 1)), dtype)
    if m > n:
        dav = matmul(da, v)
        du = add(du, div(sub(dav, matmul(u, matmul(ut, dav))), s_cols))
    if n > m:
        dahu = matmul(H(da), u)
        dv = add(dv, div(sub(dahu, matmul(v, matmul(vt, dahu))), s_cols))
    return primal_out, [ds, du, H(dv)]


svd_p = linalg_primitive("svd", (2,), _svd_shape, _svd_dtypes, multiple_results=True)
register_lowering(svd_p, _svd_cpu_lowering, platform="cpu")
jvp_rules[svd_p] = _svd_jvp


def svd(
    x,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index=None,
    algorithm: SvdAlgorithm | None = None,
):
    """Return ``(u, s, vh)`` with ``x = u diag(s) vh`` (or only ``s`` without ``compute_uv``).

    The counterpart of jax.lax.linalg.svd for ``x`` of shape ``[..., m, n]``:
    ``s`` is real and descending; ``u`` is ``[..., m, m]`` and ``vh``
    ``[..., n, n]`` with ``full_matrices``, else ``[..., m, k]`` and
    ``[..., k, n]``. ``algorithm``: None/DEFAULT/DIVIDE_AND_CONQUER (gesdd) or
    QR (gesvd); JACOBI, POLAR and a proper ``subset_by_index`` raise
    NotImplementedError, as on JAX's CPU backend.
    """
    if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
        raise TypeError(f"algorithm must be a SvdAlgorithm or None, got {algorithm!r}")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
        shape = aval_of(x).shape
        everything = len(shape) >= 2 and subset_by_index == (0, min(shape[-2:]))
        if not everything and not full_matrices:  # with full_matrices: the shape rule's error
            raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    out = svd_p.bind(
        x,
        full_matrices=bool(full_matrices),
        compute_uv=bool(compute_uv),
        subset_by_index=subset_by_index,
        algorithm=algorithm,
    )
    if compute_uv:
        s, u, vt = out
        return u, s, vt
    return out[0]
