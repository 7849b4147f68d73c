"""``eig``, ``schur`` and ``hessenberg`` of general square matrices (LAPACK geev, gees, gehrd).

CPU lowerings (jaxlib's typed-FFI kernels):

* ``lapack_?geev_ffi`` with ``compute_left``/``compute_right`` (``'V'`` or
  ``'N'``): real inputs give ``wr, wi`` (joined here into complex eigenvalues)
  and complex eigenvectors ``vl, vr``; complex inputs give ``w, vl, vr``; then
  ``info``. Eigenvalues come in LAPACK's order, eigenvectors normalized to
  unit norm with a real largest component.
* ``lapack_?gees_ffi`` with ``mode`` (``'V'``: Schur vectors) and ``sort``
  (``'N'``): the Schur form, the vectors, the eigenvalues, the count of
  selected eigenvalues and ``info``.
* ``lapack_?gehrd_ffi`` with ``low = 1`` and ``high = n``: Hessenberg form with
  the reflectors below its subdiagonal, ``taus`` and ``info``.

A failure gives NaNs. Only ``eig`` has a JVP (JAX's: the eigenvalues' always,
the eigenvectors' with ``enable_eigvec_derivs=True``, through LAPACK's
normalization of each vector).
"""

from __future__ import annotations

import enum
import warnings

import numpy as np

from modjax.autodiff import Zero, jvp_rules
from modjax.lowering import hlo, i32_attr, register_lowering
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from ..bits import complex as make_complex
from ..bits import conj, imag
from ..elementwise import abs as abs_
from ..elementwise import add, div, eq, mul, neg, sub
from ..reductions import argmax, reduce_sum
from ..structural import broadcast_in_dim, broadcasted_iota, expand_dims
from ._base import batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless, u8_attr
from ._matrix import H, T, astype, diagonal, eye_like, matmul, real_part
from .lu import solve_by_lu

__all__ = [
    "EigImplementation",
    "eig",
    "eig_p",
    "hessenberg",
    "hessenberg_p",
    "schur",
    "schur_p",
]


def _square(name: str):
    def check(shape):
        if shape[0] != shape[1]:
            raise ValueError(f"The input to {name} must be a square matrix. Got shape {shape}.")

    return check


def _complex_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    if dtype.kind == "c":
        return dtype
    return np.dtype(np.complex128 if dtype == np.float64 else np.complex64)


# --- eig ----------------------------------------------------------------------------------------


class EigImplementation(enum.Enum):
    """Which nonsymmetric eigensolver to use (jax.lax.linalg.EigImplementation); CPU has LAPACK."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


def _eig_shape(shape, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    _square("eig")(shape)
    count = compute_left_eigenvectors + compute_right_eigenvectors
    return (shape[:-1], *([shape] * count))


def _eig_dtypes(dtype, *, compute_left_eigenvectors, compute_right_eigenvectors, **_):
    count = compute_left_eigenvectors + compute_right_eigenvectors
    return (_complex_dtype(dtype),) * (1 + count)


def _eig_cpu_lowering(
    ctx,
    x,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    # As JAX: any true value but the LAPACK member is refused, the string "lapack" too.
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    (aval,) = ctx.avals_in
    batch = batch_dims_of(aval)
    cdtype = _complex_dtype(aval.dtype)
    w_aval = ShapedArray(aval.shape[:-1], cdtype)
    v_aval = ShapedArray(aval.shape, cdtype)
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    real = aval.dtype.kind == "f"
    values = [ShapedArray(aval.shape[:-1], aval.dtype)] * 2 if real else [w_aval]
    *w, vl, vr, info = lapack_call(
        ctx,
        "geev",
        [x],
        [*values, v_aval, v_aval, info_aval],
        compute_left=u8_attr("V" if compute_left_eigenvectors else "N"),
        compute_right=u8_attr("V" if compute_right_eigenvectors else "N"),
    )
    w = hlo.complex(w[0], w[1]) if real else w[0]
    ok = info_ok(info, batch)
    out = [nan_unless(ok, w, w_aval, batch)]
    if compute_left_eigenvectors:
        out.append(nan_unless(ok, vl, v_aval, batch))
    if compute_right_eigenvectors:
        out.append(nan_unless(ok, vr, v_aval, batch))
    return out


def _inverse_gaps(w):
    """``F[i, j] = 1 / (w[j] - w[i])`` off the diagonal, 0 on it (no division by zero there)."""
    *batch, n = to_aval(w).shape
    nb = len(batch)
    shape = (*batch, n, n)
    dtype = to_aval(w).dtype
    w_cols = broadcast_in_dim(w, shape, (*range(nb), nb + 1))
    w_rows = broadcast_in_dim(w, shape, tuple(range(nb + 1)))
    eye = eye_like(shape, dtype)
    return sub(div(np.asarray(1, dtype), add(eye, sub(w_cols, w_rows))), eye)


def _eig_vector_tangents(w, v, da):
    """Tangents of eigenvalues and LAPACK-normalized eigenvectors (nondegenerate theory)."""
    p = matmul(solve_by_lu(v, da), v)
    dw = diagonal(p)
    u = matmul(v, mul(_inverse_gaps(w), p))
    # dv_j = u_j + c_j v_j: c_j keeps |v_j| = 1 and v_j's largest component real.
    rows = to_aval(v).ndim - 2
    k = argmax(abs_(v), rows, np.int32)
    iota = broadcasted_iota(np.int32, to_aval(v).shape, rows)
    mask = astype(eq(iota, expand_dims(k, (rows,))), to_aval(v).dtype)
    re = neg(real_part(reduce_sum(mul(conj(v), u), (rows,))))
    im = neg(
        div(imag(reduce_sum(mul(mask, u), (rows,))), real_part(reduce_sum(mul(mask, v), (rows,))))
    )
    c = make_complex(re, im)
    return dw, add(u, mul(v, expand_dims(c, (rows,))))


def _eig_jvp(
    primals,
    tangents,
    *,
    compute_left_eigenvectors,
    compute_right_eigenvectors,
    enable_eigvec_derivs,
    implementation,
):
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on the "
            "input that JAX cannot check (see the enable_eigvec_derivs argument to "
            "jax.lax.linalg.eig). Pass enable_eigvec_derivs=True to jax.lax.linalg.eig to opt "
            "in. See https://github.com/jax-ml/jax/issues/2748 for discussion."
        )
    outs = eig_p.bind(
        a,
        compute_left_eigenvectors=compute_left_eigenvectors,
        compute_right_eigenvectors=True,
        enable_eigvec_derivs=enable_eigvec_derivs,
        implementation=implementation,
    )
    w, vr = outs[0], outs[-1]
    primal_out = [w]
    if compute_left_eigenvectors:
        primal_out.append(outs[1])
    if compute_right_eigenvectors:
        primal_out.append(vr)
    if type(da) is Zero:
        return primal_out, [Zero(to_aval(p)) for p in primal_out]
    da = astype(da, to_aval(vr).dtype)
    if not vectors:
        return primal_out, [reduce_sum(mul(solve_by_lu(vr, da), T(vr)), (to_aval(vr).ndim - 1,))]
    dw, dvr = _eig_vector_tangents(w, vr, da)
    tangent_out = [dw]
    if compute_left_eigenvectors:
        _, dvl = _eig_vector_tangents(conj(w), outs[1], H(da))
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        tangent_out.append(dvr)
    return primal_out, tangent_out


eig_p = linalg_primitive("eig", (2,), _eig_shape, _eig_dtypes, multiple_results=True)
register_lowering(eig_p, _eig_cpu_lowering, platform="cpu")
jvp_rules[eig_p] = _eig_jvp


def eig(
    x,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation=None,
    use_magma=None,
):
    """Return ``[w, vl, vr]``: eigenvalues and left/right eigenvectors of square ``x``.

    The counterpart of jax.lax.linalg.eig (LAPACK geev): all results are
    complex; ``vl``/``vr`` are included only when asked for. Eigenvectors are
    differentiable only with ``enable_eigvec_derivs=True`` (valid for distinct
    eigenvalues). An ``implementation`` other than None or
    ``EigImplementation.LAPACK`` raises ValueError when compiled for CPU, as in
    JAX; the deprecated ``use_magma`` picks MAGMA (True) or LAPACK (False).
    """
    if use_magma is not None:
        warnings.warn(
            "use_magma is deprecated, please use implementation=EigImplementation.MAGMA instead.",
            DeprecationWarning,
            stacklevel=2,
        )
        implementation = EigImplementation.MAGMA if use_magma else EigImplementation.LAPACK
    return eig_p.bind(
        x,
        compute_left_eigenvectors=bool(compute_left_eigenvectors),
        compute_right_eigenvectors=bool(compute_right_eigenvectors),
        enable_eigvec_derivs=bool(enable_eigvec_derivs),
        implementation=implementation,
    )


# --- schur --------------------------------------------------------------------------------------


def _schur_shape(shape, *, compute_schur_vectors, **_):
    _square("schur")(shape)
    return (shape, shape) if compute_schur_vectors else (shape,)


def _schur_cpu_lowering(ctx, x, *, compute_schur_vectors, sort_eig_vals):
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    (aval,) = ctx.avals_in
    batch = batch_dims_of(aval)
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    values = ShapedArray(aval.shape[:-1], aval.dtype)
    values = [values, values] if aval.dtype.kind == "f" else [values]
    form, vectors, *_, info = lapack_call(
        ctx,
        "gees",
        [x],
        [aval, aval, *values, info_aval, info_aval],
        aliases={0: 0},
        mode=u8_attr("V" if compute_schur_vectors else "N"),
        sort=u8_attr("N"),
    )
    ok = info_ok(info, batch)
    out = [nan_unless(ok, form, aval, batch)]
    if compute_schur_vectors:
        out.append(nan_unless(ok, vectors, aval, batch))
    return out


schur_p = linalg_primitive(
    "schur",
    (2,),
    _schur_shape,
    lambda d, *, compute_schur_vectors, **_: (d, d) if compute_schur_vectors else (d,),
    multiple_results=True,
)
register_lowering(schur_p, _schur_cpu_lowering, platform="cpu")


def schur(
    x,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable=None,
):
    """Return ``(t, q)`` with ``x = q t q^H``, ``t`` (quasi-)upper triangular, ``q`` unitary.

    The counterpart of jax.lax.linalg.schur (LAPACK gees); the list ``[t]``
    without ``compute_schur_vectors``. ``sort_eig_vals=True`` raises
    NotImplementedError and ``select_callable`` is unused, as in JAX.
    """
    del select_callable  # unused in JAX too
    if sort_eig_vals:
        raise NotImplementedError("The sort feature of LAPACK's gees routine is not implemented.")
    out = schur_p.bind(
        x, compute_schur_vectors=bool(compute_schur_vectors), sort_eig_vals=bool(sort_eig_vals)
    )
    # The primitive's list of results, as JAX's bind returns it: ``[t]`` alone without vectors.
    return list(out)


# --- hessenberg ---------------------------------------------------------------------------------


def _hessenberg_shape(shape):
    if shape[0] != shape[-1]:
        raise ValueError(
            f"Argument to Hessenberg reduction must have shape [..., n, n], got shape {shape}"
        )
    return shape, (max(shape[-1] - 1, 0),)


def _hessenberg_cpu_lowering(ctx, x):
    (aval,) = ctx.avals_in
    batch = batch_dims_of(aval)
    n = aval.shape[-1]
    a_aval, taus_aval = ctx.avals_out
    out, taus, info = lapack_call(
        ctx,
        "gehrd",
        [x],
        [a_aval, taus_aval, ShapedArray(batch, np.dtype(np.int32))],
        aliases={0: 0},
        low=i32_attr(1),
        high=i32_attr(n),
    )
    ok = info_ok(info, batch)
    return [nan_unless(ok, out, a_aval, batch), nan_unless(ok, taus, taus_aval, batch)]


hessenberg_p = linalg_primitive(
    "hessenberg", (2,), _hessenberg_shape, lambda d: (d, d), multiple_results=True
)
register_lowering(hessenberg_p, _hessenberg_cpu_lowering, platform="cpu")


def hessenberg(a):
    """Return ``(a, taus)``: upper Hessenberg form and Householder reflectors of square ``a``.

    The counterpart of jax.lax.linalg.hessenberg (LAPACK gehrd): the upper
    triangle and first subdiagonal hold the Hessenberg matrix, the entries
    below it the reflectors, whose scale factors are ``taus`` (``[..., n - 1]``).
    """
    return list(hessenberg_p.bind(a))
