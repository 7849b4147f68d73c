"""Products of BCOO arrays with dense arrays: ``bcoo_dot_general``, ``bcoo_multiply_dense``.

``bcoo_dot_general`` of a BCOO and a dense array is computed sparsely whenever the
contracted axes of the BCOO are sparse axes and its batch axes are exactly the
leading batch dimensions of the product: for each stored element, the dense
operand's slice at the element's contracted indices is gathered, scaled by the
element's data and added (a scatter-add, i.e. a segment sum) at the element's free
indices of the output. The cost is proportional to nse times the size of a slice.
Other dimension numbers (contracting dense axes, unusual batch axes) go through the
dense form of the BCOO; they give the same result. A dense-by-BCOO product is the
BCOO-by-dense product with its operands swapped and its output axes transposed.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_extract, gather_at
from modjax.experimental.sparse.util import map_batched
from modjax.lax.dot import canonical_dimension_numbers, check_dot_general_shapes

__all__ = ["bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_multiply_dense", "matmul"]


def _sparse_dense_unbatched(data, indices, rhs, *, contract, rhs_contract, sparse_shape, dtype):
    """One batch entry's product: sparse axes ``contract`` pair with rhs's ``rhs_contract``."""
    nse, n_sparse = indices.shape
    dense_shape = data.shape[1:]
    free = [i for i in range(n_sparse) if i not in contract]
    rhs_free = [i for i in range(rhs.ndim) if i not in rhs_contract]
    rhs_free_shape = tuple(rhs.shape[i] for i in rhs_free)
    rhs = rhs.transpose((*rhs_contract, *rhs_free)).astype(dtype)
    if contract:
        slices = rhs.at[tuple(indices[:, c] for c in contract)].get(mode="fill", fill_value=0)
    else:
        slices = jnp.broadcast_to(rhs[None], (nse, *rhs.shape))
    products = data.astype(dtype).reshape(
        (nse, *dense_shape) + (1,) * len(rhs_free)
    ) * slices.reshape((nse,) + (1,) * len(dense_shape) + rhs_free_shape)
    if not free:
        return products.sum(0)
    out = jnp.zeros((*(sparse_shape[i] for i in free), *dense_shape, *rhs_free_shape), dtype)
    return out.at[tuple(indices[:, i] for i in free)].add(products, mode="drop")


def _sparse_dense(lhs: BCOO, rhs, dimension_numbers, precision, preferred_element_type):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    rhs = jnp.asarray(rhs)
    check_dot_general_shapes(lhs.shape, rhs.shape, dimension_numbers)
    dtype = preferred_element_type or jnp.result_type(lhs.dtype, rhs.dtype)
    nb, ns = lhs.n_batch, lhs.n_sparse
    sparse_axes = range(nb, nb + ns)
    fast = lhs_batch == tuple(range(nb)) and all(a in sparse_axes for a in lhs_contract)
    if not fast:
        out = lax.dot_general(
            lhs.todense(),
            rhs,
            (
                (lhs_contract, rhs_contract),
                (lhs_batch, rhs_batch),
            ),
            precision=precision,
            preferred_element_type=preferred_element_type,
        )
        return out.astype(dtype)
    # Batch axes of rhs go in front (in the order they pair with lhs's); its other
    # axes keep their order, so its contracting axes are renumbered accordingly.
    return _sparse_dense_buffers(
        lhs.data,
        lhs.indices,
        rhs,
        shape=lhs.shape,
        lhs_contract=lhs_contract,
        rhs_contract=rhs_contract,
        rhs_batch=rhs_batch,
        dtype=np.dtype(dtype),
    )


@partial(
    modjax.jit, static_argnames=("shape", "lhs_contract", "rhs_contract", "rhs_batch", "dtype")
)
def _sparse_dense_buffers(
    data, indices, rhs, *, shape, lhs_contract, rhs_contract, rhs_batch, dtype
):
    nb, ns = indices.ndim - 2, indices.shape[-1]
    rest = [i for i in range(rhs.ndim) if i not in rhs_batch]
    rhs = rhs.transpose((*rhs_batch, *rest))
    rhs_contract_inner = tuple(rest.index(r) for r in rhs_contract)
    sparse_shape = shape[nb : nb + ns]

    def unbatched(data, indices, r):
        return _sparse_dense_unbatched(
            data,
            indices,
            r,
            contract=tuple(c - nb for c in lhs_contract),
            rhs_contract=rhs_contract_inner,
            sparse_shape=sparse_shape,
            dtype=dtype,
        )

    return map_batched(unbatched, nb, data, indices, rhs)


def bcoo_dot_general(
    lhs,
    rhs,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """``lax.dot_general`` where one operand is a BCOO array; the result is dense.

    The output's axes are ordered as ``lax.dot_general``'s: batch, then lhs's free
    axes, then rhs's. Two BCOO operands give a BCOO array (JAX's
    ``bcoo_spdot_general``, see ``_bcoo_spdot``).
    """
    if out_sharding is not None:
        raise NotImplementedError(
            "bcoo_dot_general(out_sharding=...) is not implemented in modjax yet"
        )
    lhs_sparse, rhs_sparse = isinstance(lhs, JAXSparse), isinstance(rhs, JAXSparse)
    dimension_numbers = canonical_dimension_numbers(dimension_numbers)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        from modjax.experimental.sparse._bcoo_spdot import bcoo_spdot_general

        return bcoo_spdot_general(
            lhs,
            rhs,
            dimension_numbers=dimension_numbers,
            preferred_element_type=preferred_element_type,
        )
    for operand in (lhs, rhs):
        if isinstance(operand, JAXSparse) and not isinstance(operand, BCOO):
            raise TypeError(
                f"bcoo_dot_general expects BCOO or dense operands; got {type(operand).__name__}"
            )
    if lhs_sparse:
        return _sparse_dense(lhs, rhs, dimension_numbers, precision, preferred_element_type)
    if not rhs_sparse:
        return lax.dot_general(
            lhs,
            rhs,
            dimension_numbers,
            precision=precision,
            preferred_element_type=preferred_element_type,
        )
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs = jnp.asarray(lhs)
    swapped = _sparse_dense(
        rhs,
        lhs,
        ((rhs_contract, lhs_contract), (rhs_batch, lhs_batch)),
        precision,
        preferred_element_type,
    )
    n_batch = len(lhs_batch)
    n_lhs_free = lhs.ndim - len(lhs_contract) - n_batch
    n_rhs_free = rhs.ndim - len(rhs_contract) - n_batch
    order = (
        *range(n_batch),
        *range(n_batch + n_rhs_free, n_batch + n_rhs_free + n_lhs_free),
        *range(n_batch, n_batch + n_rhs_free),
    )
    return swapped.transpose(order)


def matmul(lhs, rhs):
    """``lhs @ rhs`` where one operand is a BCOO array (1-D or 2-D operands contract
    sparsely; higher ranks follow ``jnp.matmul`` through the dense form). Two BCOO
    operands give a BCOO array (``_bcoo_spdot.sparse_matmul``)."""
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        from modjax.experimental.sparse._bcoo_spdot import sparse_matmul

        return sparse_matmul(lhs, rhs)
    if isinstance(lhs, JAXSparse) and isinstance(rhs, JAXSparse):
        raise NotImplementedError(
            f"matmul of {type(lhs).__name__} and {type(rhs).__name__} is not implemented in modjax"
        )
    sparse, dense = (lhs, rhs) if isinstance(lhs, JAXSparse) else (rhs, lhs)
    dense = jnp.asarray(dense)
    if dense.ndim == 0 or sparse.ndim == 0:
        raise ValueError("matmul: operands must have at least one dimension; use * for scalars")
    lhs_ndim = lhs.ndim if lhs is sparse else dense.ndim
    rhs_ndim = rhs.ndim if rhs is sparse else dense.ndim
    if lhs_ndim > 2 or rhs_ndim > 2:
        if lhs is sparse:
            return jnp.matmul(sparse.todense(), dense)
        return jnp.matmul(dense, sparse.todense())
    numbers = (((lhs_ndim - 1,), (0 if rhs_ndim == 1 else rhs_ndim - 2,)), ((), ()))
    return bcoo_dot_general(
        lhs if lhs is sparse else dense, rhs if rhs is sparse else dense, dimension_numbers=numbers
    )


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The entries at ``indices`` (BCOO indices of the output's shape) of ``dot_general(A, B)``.

    Returns the BCOO data for those indices. modjax computes the dense product and
    gathers from it.
    """
    product = lax.dot_general(jnp.asarray(A), jnp.asarray(B), dimension_numbers)
    indices = jnp.asarray(indices)
    n_batch = indices.ndim - 2
    n_dense = product.ndim - n_batch - indices.shape[-1]
    zeros = jnp.zeros(
        (*indices.shape[:-1], *product.shape[product.ndim - n_dense :]), product.dtype
    )
    pattern = BCOO((zeros, indices), shape=product.shape, unique_indices=True)
    return bcoo_extract(pattern, product, assume_unique=True).data


def bcoo_multiply_dense(sp_mat: BCOO, v):
    """Elementwise ``sp_mat * v`` for a dense ``v`` broadcasting to ``sp_mat.shape``.

    Returns the product's data (the stored elements of ``sp_mat`` times the entries of
    ``v`` at their indices); ``sp_mat * v`` wraps it in a BCOO with ``sp_mat``'s indices.
    """
    v = jnp.asarray(v)
    if v.ndim == 0:
        return sp_mat.data * v
    shape = sp_mat.shape
    if jnp.broadcast_shapes(v.shape, shape) != shape:
        raise NotImplementedError(
            "multiplication between sparse and dense is only implemented where the output shape "
            f"matches the sparse array's shape; got sparse shape {shape} and dense shape {v.shape}"
        )
    v = jnp.broadcast_to(v, shape)
    values = map_batched(gather_at, sp_mat.n_batch, sp_mat.indices, v)
    return sp_mat.data * values
