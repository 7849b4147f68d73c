"""``tridiagonal`` (LAPACK sytrd/hetrd) and ``tridiagonal_solve`` (LAPACK gtsv).

``tridiagonal`` calls ``lapack_?sytrd_ffi`` / ``lapack_?hetrd_ffi`` (``uplo``):
results the reduced matrix with the reflectors, the real diagonal ``d`` and
off-diagonal ``e``, ``taus`` and ``info``. ``tridiagonal_solve`` calls
``lapack_?gtsv_ffi`` (no attributes; all four operands overwritten, then
``info``), or jaxlib's ``tridiagonal_solve_perturbed_ffi`` with
``perturb_singular=True``. Failures give NaNs.

``tridiagonal_solve`` is linear in ``b``: its transpose solves with the
transposed matrix (the off-diagonals swapped and shifted), and its JVP in the
diagonals is ``A^-1 (b_dot - A_dot x)``, as JAX defines them.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.lowering import register_lowering
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

from .._common import real_dtype
from .._rules import instantiate, zeros
from ..elementwise import mul, neg, sub
from ..indexing.dimension_numbers import ScatterDimensionNumbers
from ..indexing.scatter import scatter_add
from ..structural import broadcast_in_dim, concatenate, slice
from ._base import batch_dims_of, info_ok, lapack_call, linalg_primitive, nan_unless, u8_attr

__all__ = [
    "tridiagonal",
    "tridiagonal_p",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
]


# --- tridiagonal --------------------------------------------------------------------------------


def _tridiagonal_shape(shape, *, lower):
    if shape[0] != shape[1] or shape[1] == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {shape}.")
    n = shape[0]
    return shape, (n,), (n - 1,), (n - 1,)


def _tridiagonal_dtypes(dtype, *, lower):
    real = real_dtype(dtype)
    return dtype, real, real, dtype


def _tridiagonal_cpu_lowering(ctx, x, *, lower):
    (aval,) = ctx.avals_in
    batch = batch_dims_of(aval)
    routine = "hetrd" if aval.dtype.kind == "c" else "sytrd"
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    *outs, info = lapack_call(
        ctx,
        routine,
        [x],
        [*ctx.avals_out, info_aval],
        aliases={0: 0},
        uplo=u8_attr("L" if lower else "U"),
    )
    ok = info_ok(info, batch)
    return [nan_unless(ok, o, a, batch) for o, a in zip(outs, ctx.avals_out, strict=True)]


tridiagonal_p = linalg_primitive(
    "tridiagonal", (2,), _tridiagonal_shape, _tridiagonal_dtypes, multiple_results=True
)
register_lowering(tridiagonal_p, _tridiagonal_cpu_lowering, platform="cpu")


def tridiagonal(a, *, lower: bool = True):
    """Return ``(a, d, e, taus)``: the reduction of Hermitian ``a`` to tridiagonal form.

    The counterpart of jax.lax.linalg.tridiagonal (LAPACK sytrd/hetrd): ``d``
    is the (real) diagonal and ``e`` the first sub- (``lower``) or
    super-diagonal; ``a`` also holds the Householder reflectors, scaled by
    ``taus``. Only the ``lower`` (or upper) triangle of ``a`` is read.
    """
    return list(tridiagonal_p.bind(a, lower=bool(lower)))


# --- tridiagonal_solve --------------------------------------------------------------------------


def _tridiagonal_solve_shape(dl_shape, d_shape, du_shape, b_shape, *, perturb_singular):
    if dl_shape != d_shape or dl_shape != du_shape:
        raise TypeError(
            "tridiagonal_solve requires that all diagonal arguments have the same shape."
        )
    if dl_shape != b_shape[:-1]:
        raise TypeError(
            "tridiagonal_solve requires that the leading ndim-1 dimensions of b equal the "
            "dimensions of the diagonal arguments."
        )
    return b_shape


def _tridiagonal_solve_cpu_lowering(ctx, dl, d, du, b, *, perturb_singular):
    b_aval = ctx.avals_in[-1]
    batch = batch_dims_of(b_aval)
    if perturb_singular:
        (out,) = lapack_call(ctx, "tridiagonal_solve_perturbed", [dl, d, du, b], [b_aval])
        return out
    info_aval = ShapedArray(batch, np.dtype(np.int32))
    *_, out, info = lapack_call(
        ctx,
        "gtsv",
        [dl, d, du, b],
        [*ctx.avals_in, info_aval],
        aliases={0: 0, 1: 1, 2: 2, 3: 3},
    )
    return nan_unless(info_ok(info, batch), out, b_aval, batch)


def _tridiagonal_product(dl, d, du, x):
    """``A x`` for the tridiagonal ``A`` of ``(dl, d, du)`` and ``x`` of shape ``[..., m, n]``."""
    shape = to_aval(x).shape
    *batch, m, n = shape
    nb = len(batch)

    def column(v):  # [..., m] -> [..., m, n]
        return broadcast_in_dim(v, shape, tuple(range(nb + 1)))

    def rows(v, r0, r1):
        return (
            slice(v, (0,) * (nb + 2), (*batch, r1, n))
            if r0 == 0
            else slice(v, (0,) * nb + (r0, 0), (*batch, r1, n))
        )

    # JAX adds the off-diagonal products with scatter-adds (``y.at[..., 1:, :].add``):
    # added otherwise, XLA fuses the products into the sums and rounds differently.
    dn = ScatterDimensionNumbers(
        update_window_dims=tuple(range(nb + 2)),
        inserted_window_dims=(),
        scatter_dims_to_operand_dims=(nb,),
    )

    def add_rows(y, start, v):
        at = np.array([start], np.int32)
        return scatter_add(y, at, v, dn, indices_are_sorted=True, unique_indices=True, mode="fill")

    y = mul(column(d), x)
    if m > 1:
        y = add_rows(y, 1, mul(rows(column(dl), 1, m), rows(x, 0, m - 1)))  # dl[i] x[i - 1]
        y = add_rows(y, 0, mul(rows(column(du), 0, m - 1), rows(x, 1, m)))  # du[i] x[i + 1]
    return y


def _tridiagonal_solve_jvp(primals, tangents, *, perturb_singular):
    dl, d, du, b = primals
    *diag_dots, b_dot = tangents
    x = tridiagonal_solve_p.bind(*primals, perturb_singular=perturb_singular)
    if all(type(t) is Zero for t in tangents):
        return x, Zero(to_aval(x))
    if all(type(t) is Zero for t in diag_dots):
        rhs = b_dot
    else:
        product = _tridiagonal_product(*map(instantiate, diag_dots), x)
        rhs = neg(product) if type(b_dot) is Zero else sub(b_dot, product)
    return x, tridiagonal_solve_p.bind(dl, d, du, rhs, perturb_singular=perturb_singular)


def _tridiagonal_solve_transpose(ct, dl, d, du, b, *, perturb_singular):
    if any(is_undefined_primal(v) for v in (dl, d, du)):
        raise NotImplementedError("tridiagonal_solve is linear only in its right-hand side b")
    if type(ct) is Zero:
        return [None, None, None, Zero(b.aval)]
    last = to_aval(d).ndim - 1
    m = to_aval(d).shape[-1]
    batch = to_aval(d).shape[:-1]

    def cut(v, start, stop):
        return slice(v, (0,) * last + (start,), (*batch, stop))

    zero = zeros(to_aval(d).update(shape=(*batch, min(m, 1)), weak_type=False))
    # A^T has sub-diagonal du shifted down one row and super-diagonal dl shifted up one.
    dl_t = concatenate([zero, cut(du, 0, max(m - 1, 0))], last)
    du_t = concatenate([cut(dl, min(m, 1), m), zero], last)
    ct_b = tridiagonal_solve_p.bind(dl_t, d, du_t, ct, perturb_singular=perturb_singular)
    return [None, None, None, ct_b]


tridiagonal_solve_p = linalg_primitive(
    "tridiagonal_solve", (1, 1, 1, 2), _tridiagonal_solve_shape, lambda *ds, **_: ds[-1]
)
register_lowering(tridiagonal_solve_p, _tridiagonal_solve_cpu_lowering, platform="cpu")
jvp_rules[tridiagonal_solve_p] = _tridiagonal_solve_jvp
transpose_rules[tridiagonal_solve_p] = _tridiagonal_solve_transpose


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """Solve the tridiagonal system ``A x = b`` (jax.lax.linalg.tridiagonal_solve).

    ``dl``, ``d``, ``du`` (``[..., m]``) are the sub-, main and super-diagonal
    (``dl[..., 0]`` and ``du[..., m - 1]`` are ignored); ``b`` is ``[..., m, n]``.
    ``perturb_singular`` perturbs tiny pivots so singular systems give finite
    results (jaxlib's perturbed kernel).
    """
    return tridiagonal_solve_p.bind(dl, d, du, b, perturb_singular=bool(perturb_singular))
