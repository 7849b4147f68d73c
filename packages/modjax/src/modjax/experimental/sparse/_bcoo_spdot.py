"""Products of two BCOO arrays: ``bcoo_multiply_sparse`` and ``bcoo_dot_general`` (sparse × sparse).

Both compare every stored element of one operand with every stored element of the
other (an ``nse × nse`` outer comparison of indices, as JAX does): the elementwise
product keeps the pairs whose indices agree, the contraction multiplies the pairs
whose contracted indices agree and sums those that land on the same output index.
The result is a BCOO array whose ``nse`` is bounded by the product of the operands'.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_update_layout
from modjax.experimental.sparse._bcoo_indices import _sum_duplicates_unbatched
from modjax.experimental.sparse._bcoo_reshape import full_batch_buffers
from modjax.experimental.sparse._bcoo_shape import bcoo_transpose
from modjax.experimental.sparse.util import map_batched
from modjax.lax.dot import canonical_dimension_numbers, check_dot_general_shapes

__all__ = ["bcoo_multiply_sparse", "bcoo_spdot_general", "sparse_matmul"]


# --- elementwise product -------------------------------------------------------------


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Multiply two BCOO arrays elementwise (``jax.experimental.sparse.bcoo_multiply_sparse``).

    The shapes broadcast as in ``lax.mul`` (equal ranks, else TypeError) and both
    operands need the same ``n_dense`` (else NotImplementedError). The result has
    the smaller ``n_batch`` of the two and ``nse`` equal to the product of the
    operands' (per batch entry), as in JAX.
    """
    if not (isinstance(lhs, BCOO) and isinstance(rhs, BCOO)):
        raise TypeError(
            "bcoo_multiply_sparse expects two BCOO arrays; "
            f"got {type(lhs).__name__} and {type(rhs).__name__}"
        )
    if lhs.ndim != rhs.ndim:
        raise TypeError(
            "bcoo_multiply_sparse: arrays must have same number of dimensions, "
            f"got {lhs.shape}, {rhs.shape}"
        )
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError(
            "bcoo_multiply_sparse: arrays with differing numbers of dense dimensions: "
            f"(n_batch, n_sparse, n_dense) = {(lhs.n_batch, lhs.n_sparse, lhs.n_dense)} and "
            f"{(rhs.n_batch, rhs.n_sparse, rhs.n_dense)}"
        )
    shape = tuple(jnp.broadcast_shapes(lhs.shape, rhs.shape))
    n_batch = min(lhs.n_batch, rhs.n_batch)
    # Extra batch dimensions of one operand become sparse ones (cheap: no zeros stored).
    if lhs.n_batch > n_batch:
        lhs = bcoo_update_layout(lhs, n_batch=n_batch)
    if rhs.n_batch > n_batch:
        rhs = bcoo_update_layout(rhs, n_batch=n_batch)
    data, indices = _multiply_buffers(
        lhs.data, lhs.indices, rhs.data, rhs.indices, lhs_shape=lhs.shape, rhs_shape=rhs.shape
    )
    return BCOO((data, indices), shape=shape)


@partial(modjax.jit, static_argnames=("lhs_shape", "rhs_shape"))
def _multiply_buffers(lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_shape, rhs_shape):
    nb, ns = lhs_indices.ndim - 2, lhs_indices.shape[-1]
    lhs_sparse = lhs_shape[nb : nb + ns]
    rhs_sparse = rhs_shape[nb : nb + ns]
    # Size-1 (broadcast) dimensions of either side match any index of the other.
    pairs = enumerate(zip(lhs_sparse, rhs_sparse, strict=True))
    compared = np.array([i for i, (a, b) in pairs if a != 1 and b != 1], dtype=np.int32)
    lhs_fill = max(lhs_shape[nb:], default=0)
    rhs_fill = max(rhs_shape[nb:], default=0)

    def unbatched(ld, li, rd, ri):
        lnse, rnse = li.shape[0], ri.shape[0]
        nse = lnse * rnse
        mask = jnp.all(li[:, None, compared] == ri[None, :, compared], axis=-1)
        il, ir = jnp.nonzero(mask, size=nse, fill_value=(lnse, rnse))
        data = ld.at[il].get(mode="fill", fill_value=0) * rd.at[ir].get(mode="fill", fill_value=0)
        index_dtype = jnp.result_type(li.dtype, ri.dtype)
        indices = jnp.maximum(
            li.at[il].get(mode="fill", fill_value=lhs_fill).astype(index_dtype),
            ri.at[ir].get(mode="fill", fill_value=rhs_fill).astype(index_dtype),
        )
        return data, indices

    return map_batched(unbatched, nb, lhs_data, lhs_indices, rhs_data, rhs_indices)


# --- contraction ---------------------------------------------------------------------


def bcoo_spdot_general(
    lhs: BCOO, rhs: BCOO, *, dimension_numbers, preferred_element_type=None
) -> BCOO:
    """``dot_general`` of two BCOO arrays, a BCOO array (JAX's ``bcoo_spdot_general``).

    As in JAX: neither operand may have dense dimensions, batch dimensions must be
    batch dimensions of the sparse layouts and contracting dimensions sparse ones
    (else NotImplementedError); the output's batch dimensions are the paired batch
    dimensions, then lhs's other batch dimensions, then rhs's, and its ``nse`` is
    the product of the operands' ``nse`` (1 for an operand whose sparse dimensions
    are all contracted), at most the number of output positions.
    """
    numbers = canonical_dimension_numbers(dimension_numbers)
    out_shape = check_dot_general_shapes(lhs.shape, rhs.shape, numbers)
    (lc, rc), (lb, rb) = numbers
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if (lb and max(lb) >= lhs.n_batch) or (rb and max(rb) >= rhs.n_batch):
        raise NotImplementedError(
            "bcoo_spdot_general: batch_dims must correspond to batch dimensions of the "
            "sparse representation."
        )
    for contract, mat in ((lc, lhs), (rc, rhs)):
        if contract and (
            min(contract) < mat.n_batch or max(contract) >= mat.n_batch + mat.n_sparse
        ):
            raise NotImplementedError(
                "bcoo_spdot_general only supports contraction of sparse indices."
            )
    if rhs.n_batch > len(rb) and lhs.n_sparse > len(lc):
        raise ValueError(
            "bcoo_spdot_general: cannot have unused batch dims on rhs with unused sparse dims "
            "on lhs."
        )
    out_nse = (lhs.nse if lhs.n_sparse > len(lc) else 1) * (
        rhs.nse if rhs.n_sparse > len(rc) else 1
    )
    out_nb = lhs.n_batch + rhs.n_batch - len(lb)
    out_nse = min(out_nse, math.prod(out_shape[out_nb:]))
    dtype = (
        np.dtype(preferred_element_type)
        if preferred_element_type is not None
        else jnp.result_type(lhs.dtype, rhs.dtype)
    )
    lhs_data, lhs_indices = full_batch_buffers(lhs)
    rhs_data, rhs_indices = full_batch_buffers(rhs)
    data, indices = _spdot_buffers(
        lhs_data,
        lhs_indices,
        rhs_data,
        rhs_indices,
        lhs_shape=lhs.shape,
        rhs_shape=rhs.shape,
        numbers=numbers,
        out_nse=out_nse,
        dtype=np.dtype(dtype),
    )
    return BCOO((data, indices), shape=out_shape)


@partial(modjax.jit, static_argnames=("lhs_shape", "rhs_shape", "numbers", "out_nse", "dtype"))
def _spdot_buffers(
    lhs_data, lhs_indices, rhs_data, rhs_indices, *, lhs_shape, rhs_shape, numbers, out_nse, dtype
):
    (lc, rc), (lb, rb) = numbers
    lnb, rnb = lhs_indices.ndim - 2, rhs_indices.ndim - 2
    lns, rns = lhs_indices.shape[-1], rhs_indices.shape[-1]
    index_dtype = jnp.result_type(lhs_indices.dtype, rhs_indices.dtype)
    # Paired batch dimensions go first on both sides.
    lperm = (*lb, *(d for d in range(lnb) if d not in lb))
    rperm = (*rb, *(d for d in range(rnb) if d not in rb))
    lhs_data = lhs_data.transpose((*lperm, lnb))
    lhs_indices = lhs_indices.transpose((*lperm, lnb, lnb + 1))
    rhs_data = rhs_data.transpose((*rperm, rnb))
    rhs_indices = rhs_indices.transpose((*rperm, rnb, rnb + 1))
    lcon = [d - lnb for d in lc]
    rcon = [d - rnb for d in rc]
    lfree = [i for i in range(lns) if i not in lcon]
    rfree = [i for i in range(rns) if i not in rcon]
    lbound = np.array([lhs_shape[lnb + i] for i in lcon], dtype=np.int64)
    rbound = np.array([rhs_shape[rnb + i] for i in rcon], dtype=np.int64)
    out_sparse = (
        *(lhs_shape[lnb + i] for i in lfree),
        *(rhs_shape[rnb + i] for i in rfree),
    )

    def unbatched(ld, li, rd, ri):
        lk = li[:, np.array(lcon, dtype=np.int32)]
        rk = ri[:, np.array(rcon, dtype=np.int32)]
        overlap = jnp.all(lk[:, None, :] == rk[None, :, :], axis=-1)
        lvalid = jnp.all(lk < jnp.asarray(lbound).astype(lk.dtype), axis=-1)
        rvalid = jnp.all(rk < jnp.asarray(rbound).astype(rk.dtype), axis=-1)
        keep = overlap & lvalid[:, None] & rvalid[None, :]
        products = ld.astype(dtype)[:, None] * rd.astype(dtype)[None, :]
        data = jnp.where(keep, products, jnp.zeros((), dtype)).ravel()
        lnse, rnse = li.shape[0], ri.shape[0]
        left = jnp.broadcast_to(
            li[:, None, np.array(lfree, dtype=np.int32)].astype(index_dtype),
            (lnse, rnse, len(lfree)),
        )
        right = jnp.broadcast_to(
            ri[None, :, np.array(rfree, dtype=np.int32)].astype(index_dtype),
            (lnse, rnse, len(rfree)),
        )
        indices = jnp.concatenate([left, right], axis=-1).reshape(lnse * rnse, len(out_sparse))
        return _sum_duplicates_unbatched(data, indices, out_sparse, out_nse)

    def rhs_only(ld, li):  # over rhs's unpaired batch dimensions
        return lambda rd, ri: unbatched(ld, li, rd, ri)

    def over_rhs(ld, li, rd, ri):
        return map_batched(rhs_only(ld, li), rnb - len(rb), rd, ri)

    def over_lhs(ld, li, rd, ri):
        return map_batched(lambda a, b: over_rhs(a, b, rd, ri), lnb - len(lb), ld, li)

    def shared(ld, li, rd, ri):
        return over_lhs(ld, li, rd, ri)

    return map_batched(shared, len(lb), lhs_data, lhs_indices, rhs_data, rhs_indices)


def sparse_matmul(lhs: BCOO, rhs: BCOO) -> BCOO:
    """``lhs @ rhs`` of two BCOO arrays as ``jnp.matmul`` contracts them (a BCOO array).

    1-D and 2-D operands contract as ``jnp.matmul``; stacks of matrices with equal
    leading shapes pair them as batch dimensions (which must be batch dimensions of
    both layouts, as in JAX), and a stack times a matrix contracts without batching.
    """
    if lhs.ndim == 0 or rhs.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension; use * for scalars")
    ln, rn = lhs.ndim, rhs.ndim
    if ln == 1 or rn == 1:
        numbers = (((ln - 1,), (0 if rn == 1 else rn - 2,)), ((), ()))
        if ln > 2 or rn > 2:
            raise NotImplementedError(
                "matmul of a vector and a stack of sparse matrices is not implemented in modjax"
            )
        return bcoo_spdot_general(lhs, rhs, dimension_numbers=numbers)
    if ln == rn:
        batch = tuple(range(ln - 2))
        if lhs.shape[: ln - 2] != rhs.shape[: rn - 2]:
            raise NotImplementedError(
                "matmul of sparse stacks whose leading shapes differ "
                f"({lhs.shape} and {rhs.shape}) is not implemented in modjax"
            )
        numbers = (((ln - 1,), (rn - 2,)), (batch, batch))
        return bcoo_spdot_general(lhs, rhs, dimension_numbers=numbers)
    if rn == 2:
        return bcoo_spdot_general(lhs, rhs, dimension_numbers=(((ln - 1,), (0,)), ((), ())))
    if ln == 2:
        out = bcoo_spdot_general(lhs, rhs, dimension_numbers=(((1,), (rn - 2,)), ((), ())))
        # (m, *batch, n) -> (*batch, m, n)
        order = (*range(1, rn - 1), 0, rn - 1)
        return bcoo_transpose(out, permutation=order)
    raise NotImplementedError(
        f"matmul of sparse arrays of shapes {lhs.shape} and {rhs.shape} is not implemented"
    )
