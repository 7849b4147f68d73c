"""``spsolve_p``: a sparse direct solve of a CSR system (``sparse.linalg.spsolve``).

As JAX does on CPU, the program calls back into ``scipy.sparse.linalg.spsolve`` on the
host (``pure_callback``; ``tol`` and ``reorder`` only matter to JAX's GPU solver). The
primitive is differentiable: forward mode in ``data`` and ``b``, reverse mode through
its transpose in ``b`` (a solve with the transposed matrix). It has no batching rule,
as in JAX.
"""

from __future__ import annotations

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import defjvp, is_undefined_primal, transpose_rules
from modjax.lowering import register_lowering
from modjax.lowering.lowering import lower_fun
from modjax.runtime import apply_primitive
from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.core import Primitive

__all__ = ["spsolve", "spsolve_p"]

spsolve_p = Primitive("spsolve")


def _abstract_eval(data, indices, indptr, b, *, tol, reorder):
    if data.dtype != b.dtype:
        raise ValueError(f"data types do not match: data.dtype={data.dtype!r} b.dtype={b.dtype!r}")
    if not (
        jnp.issubdtype(indices.dtype, jnp.integer) and jnp.issubdtype(indptr.dtype, jnp.integer)
    ):
        raise ValueError(
            "index arrays must be integer typed; got "
            f"indices.dtype={indices.dtype!r} indptr.dtype={indptr.dtype!r}"
        )
    if not data.ndim == indices.ndim == indptr.ndim == b.ndim == 1:
        raise ValueError(
            "Arrays must be one-dimensional. Got "
            f"data.shape={data.shape} indices.shape={indices.shape} "
            f"indptr.shape={indptr.shape} b.shape={b.shape}"
        )
    if indptr.size != b.size + 1 or data.shape != indices.shape:
        raise ValueError(
            "Invalid CSR buffer sizes: "
            f"data.shape={data.shape} indices.shape={indices.shape} indptr.shape={indptr.shape}"
        )
    if reorder not in (0, 1, 2, 3):
        raise ValueError(f"reorder={reorder} not valid, must be one of [1, 2, 3, 4]")
    float(tol)
    return b


def _host_solve(data, indices, indptr, b):
    import scipy.sparse  # type: ignore[import-untyped]  # noqa: PLC0415 - only here
    import scipy.sparse.linalg  # type: ignore[import-untyped]  # noqa: PLC0415

    b = np.asarray(b)
    matrix = scipy.sparse.csr_matrix(
        (np.asarray(data), np.asarray(indices), np.asarray(indptr)), shape=(b.size, b.size)
    )
    return np.asarray(scipy.sparse.linalg.spsolve(matrix, b)).astype(b.dtype)


def _via_callback(data, indices, indptr, b, *, tol, reorder):
    from modjax import pure_callback  # noqa: PLC0415 - the metapackage imports this module

    return pure_callback(_host_solve, ShapeDtypeStruct(b.shape, b.dtype), data, indices, indptr, b)


def _csr_matvec(data, indices, indptr, x):
    rows = jnp.searchsorted(indptr[1:], jnp.arange(data.shape[0]), side="right")
    return jnp.zeros(x.shape, x.dtype).at[rows].add(data * x[indices], mode="drop")


def _csr_transpose(data, indices, indptr):
    """The CSR buffers of the transpose of a square CSR matrix."""
    n = indptr.shape[0] - 1
    rows = jnp.searchsorted(indptr[1:], jnp.arange(data.shape[0]), side="right").astype(
        indices.dtype
    )
    new_rows, new_cols, new_data = lax.sort((indices, rows, data), num_keys=2)
    counts = jnp.zeros((n,), indptr.dtype).at[new_rows].add(1, mode="drop")
    new_indptr = jnp.concatenate([jnp.zeros((1,), indptr.dtype), jnp.cumsum(counts)])
    return new_data, new_cols, new_indptr.astype(indptr.dtype)


def _jvp_data(data_dot, data, indices, indptr, b, **params):
    x = spsolve_p.bind(data, indices, indptr, b, **params)
    return -spsolve_p.bind(
        data, indices, indptr, _csr_matvec(data_dot, indices, indptr, x), **params
    )


def _jvp_b(b_dot, data, indices, indptr, b, **params):
    return spsolve_p.bind(data, indices, indptr, b_dot, **params)


def _transpose(ct, data, indices, indptr, b, **params):
    if not is_undefined_primal(b) or is_undefined_primal(data):
        raise NotImplementedError("spsolve transpose with respect to data")
    data_t, indices_t, indptr_t = _csr_transpose(data, indices, indptr)
    return [None, None, None, spsolve_p.bind(data_t, indices_t, indptr_t, ct, **params)]


spsolve_p.def_abstract_eval(_abstract_eval)
spsolve_p.def_impl(lambda *args, **params: apply_primitive(spsolve_p, *args, **params))
register_lowering(spsolve_p, lower_fun(_via_callback))
defjvp(spsolve_p, _jvp_data, None, None, _jvp_b)
transpose_rules[spsolve_p] = _transpose


def spsolve(data, indices, indptr, b, tol=1e-6, reorder=1):
    """Solve ``A x = b`` for a sparse CSR matrix ``A = (data, indices, indptr)``
    (jax.experimental.sparse.linalg.spsolve).

    Computed on the host by ``scipy.sparse.linalg.spsolve`` (a singular matrix gives
    NaNs with scipy's warning). ``tol`` and ``reorder`` are checked and otherwise unused
    (they configure JAX's CUDA solver). Returns an array of ``b``'s dtype and size.
    """
    return spsolve_p.bind(data, indices, indptr, b, tol=tol, reorder=reorder)
