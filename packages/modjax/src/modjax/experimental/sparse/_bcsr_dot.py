"""Products and shape operations of BCSR arrays, through their BCOO form (as in JAX).

``bcsr_dot_general`` takes a BCSR left operand and a dense right one: JAX's
restrictions apply (the product's batch axes must be batch axes of the BCSR, no
contraction over its dense axes, else NotImplementedError), then the BCOO product of
``_bcoo_dot`` computes it. ``BCSR @ dense`` follows ``jnp.matmul`` as JAX's
sparsified matmul does. ``bcsr_broadcast_in_dim`` and ``bcsr_concatenate`` convert to
BCOO and back.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse import bcoo as _bcoo
from modjax.experimental.sparse._base import JAXSparse
from modjax.experimental.sparse._bcoo_dot import bcoo_dot_general
from modjax.experimental.sparse._bcsr_array import BCSR
from modjax.experimental.sparse._bcsr_convert import bcsr_from_bcoo, bcsr_to_bcoo
from modjax.lax.dot import check_dot_general_shapes

__all__ = ["bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_dot_general", "bcsr_matmul"]

_DENSE = (np.ndarray, modjax.Array)
_ONLY_BCSR_DENSE = "bcsr_dot_general currently implemented for BCSR lhs and ndarray rhs."


def _axes(axes) -> tuple[int, ...]:
    # A single int stands for one axis, as in JAX's bcsr_dot_general.
    return (int(axes),) if isinstance(axes, (int, np.integer)) else tuple(int(a) for a in axes)


def bcsr_dot_general(
    lhs,
    rhs,
    *,
    dimension_numbers,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """``lax.dot_general`` of a BCSR ``lhs`` and a dense ``rhs``; the result is dense.

    ``jax.experimental.sparse.bcsr_dot_general``. Two dense operands give
    ``lax.dot_general``; any other combination raises NotImplementedError, as in JAX.
    ``precision`` and ``out_sharding`` are ignored (as JAX does).
    """
    del precision, out_sharding
    if isinstance(rhs, _DENSE) and not isinstance(rhs, JAXSparse):
        if isinstance(lhs, _DENSE):
            return lax.dot_general(
                lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type
            )
        if isinstance(lhs, BCSR):
            return _bcsr_dense(lhs, jnp.asarray(rhs), dimension_numbers, preferred_element_type)
    raise NotImplementedError(_ONLY_BCSR_DENSE)


def _bcsr_dense(lhs: BCSR, rhs, dimension_numbers, preferred_element_type):
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers
    lhs_contract, rhs_contract = _axes(lhs_contract), _axes(rhs_contract)
    lhs_batch, rhs_batch = _axes(lhs_batch), _axes(rhs_batch)
    numbers = ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))
    check_dot_general_shapes(lhs.shape, rhs.shape, numbers)
    if lhs_batch and max(lhs_batch) >= lhs.n_batch:
        raise NotImplementedError(
            "bcsr_dot_general batch dimensions must be among the batch dimensions in the "
            f"sparse representation; got lhs_batch={lhs_batch}, n_batch={lhs.n_batch}"
        )
    if any(a >= lhs.n_batch + 2 for a in lhs_contract):
        raise NotImplementedError("bcsr_dot_general: contracting over dense dimensions.")
    out = bcoo_dot_general(
        bcsr_to_bcoo(lhs),
        rhs,
        dimension_numbers=numbers,
        preferred_element_type=preferred_element_type,
    )
    if preferred_element_type is None:  # JAX's dtype: the operands' (int8 stays int8)
        out = out.astype(jnp.result_type(lhs.dtype, rhs.dtype))
    return out


def bcsr_matmul(lhs: BCSR, rhs):
    """``lhs @ rhs`` for a BCSR ``lhs`` and a dense ``rhs``, with ``jnp.matmul``'s axes.

    Both operands are promoted to their common dtype. Batch axes of ``rhs`` (beyond its
    last two) lead the result; if both operands have them they must be equal and be
    the BCSR's batch axes.
    """
    if isinstance(rhs, JAXSparse):
        raise NotImplementedError(_ONLY_BCSR_DENSE)
    rhs = jnp.asarray(rhs)
    if rhs.ndim == 0:
        raise ValueError("matmul: the dense operand must have at least 1 dimension; got a scalar")
    dtype = jnp.result_type(lhs.dtype, rhs.dtype)
    lhs = BCSR((lhs.data.astype(dtype), lhs.indices, lhs.indptr), **lhs._info._asdict())
    rhs = rhs.astype(dtype)
    last = lhs.ndim - 1
    if rhs.ndim == 1:
        return bcsr_dot_general(lhs, rhs, dimension_numbers=(((last,), (0,)), ((), ())))
    lhs_batch, rhs_batch = lhs.shape[:-2], rhs.shape[:-2]
    if not lhs_batch:
        out = bcsr_dot_general(lhs, rhs, dimension_numbers=(((1,), (rhs.ndim - 2,)), ((), ())))
        return jnp.moveaxis(out, 0, -2)
    if not rhs_batch:
        return bcsr_dot_general(lhs, rhs, dimension_numbers=(((last,), (0,)), ((), ())))
    if lhs_batch != rhs_batch:
        raise NotImplementedError(
            f"matmul of a BCSR array of shape {lhs.shape} and a dense array of shape "
            f"{rhs.shape}: batch dimensions that broadcast are not supported"
        )
    batch = tuple(range(len(lhs_batch)))
    return bcsr_dot_general(
        lhs, rhs, dimension_numbers=(((last,), (rhs.ndim - 2,)), (batch, batch))
    )


def bcsr_broadcast_in_dim(
    mat: BCSR, *, shape: Sequence[int], broadcast_dimensions: Sequence[int], sharding=None
) -> BCSR:
    """``lax.broadcast_in_dim`` of a BCSR array, through ``bcoo_broadcast_in_dim``.

    ``jax.experimental.sparse.bcsr_broadcast_in_dim``.
    """
    result = _bcoo.bcoo_broadcast_in_dim(
        bcsr_to_bcoo(mat), shape=tuple(shape), broadcast_dimensions=tuple(broadcast_dimensions)
    )
    return bcsr_from_bcoo(result)


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """``lax.concatenate`` of BCSR arrays along a batch or sparse dimension.

    ``jax.experimental.sparse.bcsr_concatenate``, through ``bcoo_concatenate``.
    """
    result = _bcoo.bcoo_concatenate([bcsr_to_bcoo(m) for m in operands], dimension=dimension)
    return bcsr_from_bcoo(result)
