"""``eigh``: the eigendecomposition of Hermitian (real symmetric) matrices, LAPACK syevd/heevd.

On CPU ``eigh`` calls ``lapack_?syevd_ffi`` (real) or ``lapack_?heevd_ffi``
(complex) with ``mode = 'V'`` and ``uplo``; results the eigenvectors (over the
input), the real eigenvalues in ascending order, and ``info`` (a failure gives
NaNs). ``subset_by_index`` other than all eigenvalues is not supported on CPU,
as in JAX.

The JVP is first-order nondegenerate perturbation theory, JAX's rule:
``dw = real(diag(V^H dA V))`` and ``dV = V (F * (V^H dA V))`` with
``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it. Caveat (as in JAX):
with repeated eigenvalues the eigenvectors are not unique and ``F`` has
infinities, so their derivative is not defined (NaNs or infinities appear);
the eigenvalues' derivative stays exact for any symmetric ``dA`` only when the
eigenvalues are distinct.
"""

from __future__ import annotations

import enum

import numpy as np

from modjax.autodiff import Zero, jvp_rules
from modjax.lowering import register_lowering
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from .._common import aval_of, real_dtype
from ..elementwise import add, div, mul, sub
from ..structural import broadcast_in_dim
from ._base import batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless, u8_attr
from ._matrix import H, astype, diagonal, eye_like, matmul, real_part, symmetrize

__all__ = ["EighImplementation", "eigh", "eigh_p"]


class EighImplementation(enum.Enum):
    """Which symmetric eigensolver to use (jax.lax.linalg.EighImplementation); CPU has QR only."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _eigh_shape(shape, *, subset_by_index, **_):
    if shape[0] != shape[-1]:
        raise ValueError(
            "Argument to symmetric eigendecomposition must have shape [..., n, n], "
            f"got shape {shape}"
        )
    n = shape[0]
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return (n, d), (d,)


def _check_subset(subset_by_index, n: int) -> None:
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("subset_by_index not supported on CPU and GPU")


def _eigh_cpu_lowering(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (aval,) = ctx.avals_in
    v_aval, w_aval = ctx.avals_out
    _check_subset(subset_by_index, aval.shape[-1])
    # As JAX, only these two members are refused; any other value (a string too) means QR.
    if algorithm == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if algorithm == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    batch = batch_dims_of(aval)
    routine = "heevd" if aval.dtype.kind == "c" else "syevd"
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    v, w, info = lapack_call(
        ctx,
        routine,
        [x],
        [v_aval, w_aval, info_aval],
        aliases={0: 0},
        mode=u8_attr("V"),
        uplo=u8_attr("L" if lower else "U"),
    )
    ok = info_ok(info, batch)
    return [nan_unless(ok, v, v_aval, batch), nan_unless(ok, w, w_aval, batch)]


def _eigh_jvp(primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (a,), (a_dot,) = primals, tangents
    n = to_aval(a).shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    params = {
        "lower": lower,
        "sort_eigenvalues": sort_eigenvalues,
        "subset_by_index": subset_by_index,
        "algorithm": algorithm,
    }
    v, w_real = eigh_p.bind(symmetrize(a), **params)
    if type(a_dot) is Zero:
        return [v, w_real], [Zero(to_aval(v)), Zero(to_aval(w_real))]
    dtype = to_aval(a).dtype
    w = astype(w_real, dtype)
    *batch, _ = to_aval(w).shape
    shape = (*batch, n, n)
    nb = len(batch)
    w_cols = broadcast_in_dim(w, shape, (*range(nb), nb + 1))  # [i, j] -> w[j]
    w_rows = broadcast_in_dim(w, shape, tuple(range(nb + 1)))  # [i, j] -> w[i]
    eye = eye_like(shape, dtype)
    # 1 / (w[j] - w[i]) off the diagonal, about 0 on it, without dividing by zero there:
    # JAX's order, (eye + w[j]) - w[i], whose diagonal (1 + w) - w need not be exactly 1.
    f = sub(div(np.asarray(1, dtype), sub(add(eye, w_cols), w_rows)), eye)
    vdag_adot_v = matmul(matmul(H(v), a_dot), v)
    dv = matmul(v, mul(f, vdag_adot_v))
    dw = real_part(diagonal(vdag_adot_v))
    return [v, w_real], [dv, dw]


eigh_p = linalg_primitive(
    "eigh",
    (2,),
    _eigh_shape,
    lambda d, **_: (d, real_dtype(d)),
    multiple_results=True,
)
register_lowering(eigh_p, _eigh_cpu_lowering, platform="cpu")
jvp_rules[eigh_p] = _eigh_jvp


def eigh(
    x,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index=None,
    implementation=None,
):
    """Return ``(v, w)``, the eigenvectors and eigenvalues of Hermitian ``x``.

    The counterpart of jax.lax.linalg.eigh: ``v[..., :, i]`` is the unit
    eigenvector of eigenvalue ``w[..., i]``, ``w`` real and ascending. With
    ``symmetrize_input`` the input is ``(x + x^H) / 2``, else only its ``lower``
    (or upper) triangle is read. ``subset_by_index`` other than ``(0, n)``
    raises NotImplementedError, and so does an ``implementation`` of
    ``EighImplementation.JACOBI`` or ``QDWH`` when compiled for CPU, as in JAX.
    """
    if subset_by_index is not None:
        subset_by_index = tuple(int(i) for i in subset_by_index)
        _check_subset(subset_by_index, aval_of(x).shape[-1])
    if symmetrize_input:
        x = symmetrize(x)
    v, w = eigh_p.bind(
        x,
        lower=bool(lower),
        sort_eigenvalues=bool(sort_eigenvalues),
        subset_by_index=subset_by_index,
        algorithm=implementation,
    )
    return v, w
