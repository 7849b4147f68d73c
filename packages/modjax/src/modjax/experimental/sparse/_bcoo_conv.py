"""``bcoo_conv_general_dilated``: the one convolution JAX's BCOO supports.

As in JAX 0.10.2: a 1-D convolution (``lax.conv_general_dilated``'s cross-correlation)
of one input with one filter (both of shape ``(1, 1, width)``), unit strides, no
dilation, no grouping. Either operand may be dense. Every pair of stored elements
contributes one output element, so the result is a BCOO of shape ``(1, 1, out)``
with ``n_batch=2`` and ``nse`` the product of the operands' element counts.
"""

from __future__ import annotations

from functools import partial

import modjax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_convert import bcoo_update_layout

__all__ = ["bcoo_conv_general_dilated"]


def _conv_params(lhs, rhs, **params):
    """Validate with the dense op's shape rule; return its canonical params."""
    jaxpr = modjax.make_jaxpr(partial(lax.conv_general_dilated, **params))(
        modjax.ShapeDtypeStruct(lhs.shape, lhs.dtype),
        modjax.ShapeDtypeStruct(rhs.shape, rhs.dtype),
    )
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "conv_general_dilated"]
    return eqn.params


def _as_1d(mat, index_dtype):
    """``(data, indices)`` of the ``(width,)`` operand behind a ``(1, 1, width)`` one."""
    if isinstance(mat, BCOO):
        mat = bcoo_update_layout(mat, n_batch=2, n_dense=0)
        data = lax.squeeze(mat.data, (0, 1))
        indices = lax.squeeze(mat.indices, (0, 1))
        # Entries outside the shape must not land inside the output.
        data = jnp.where(indices[:, 0] < mat.shape[-1], data, jnp.zeros((), data.dtype))
        return data, indices
    if not hasattr(mat, "shape") or not hasattr(mat, "dtype"):
        raise TypeError(f"bcoo_conv_general_dilated: input of type {type(mat)} not recognized.")
    data = lax.squeeze(jnp.asarray(mat), (0, 1))
    return data, lax.broadcasted_iota(index_dtype, (data.shape[0], 1), 0)


def bcoo_conv_general_dilated(
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation=None,
    rhs_dilation=None,
    dimension_numbers=None,
    feature_group_count=1,
    batch_group_count=1,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
) -> BCOO:
    """``lax.conv_general_dilated`` with BCOO operands (``jax.experimental.sparse``'s).

    Supports JAX's case only: 1-D, unit ``window_strides``, no ``lhs_dilation`` or
    ``rhs_dilation``, group counts 1 and operands whose two leading dimensions are
    ``(1, 1)`` (else NotImplementedError or the dense op's error, as in JAX).
    """
    if isinstance(padding, str) and lhs_dilation is not None and any(d != 1 for d in lhs_dilation):
        raise ValueError(
            "String padding is not implemented for transposed convolution using this op. "
            "Please either exactly specify the required padding or use conv_transpose."
        )
    params = _conv_params(
        lhs,
        rhs,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers,
        feature_group_count=feature_group_count,
        batch_group_count=batch_group_count,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
    spatial = lhs.ndim - 2
    if tuple(params["lhs_dilation"]) != (1,) * spatial:
        raise NotImplementedError("bcoo convolution with lhs_dilation.")
    if tuple(params["rhs_dilation"]) != (1,) * (rhs.ndim - 2):
        raise NotImplementedError("bcoo convolution with rhs_dilation.")
    if tuple(params["window_strides"]) != (1,) * spatial:
        raise NotImplementedError("bcoo convolution with non-unit window_strides.")
    if params["batch_group_count"] != 1 or params["feature_group_count"] != 1:
        raise NotImplementedError("bcoo convolution with non-unit group counts.")
    if lhs.shape[:2] != rhs.shape[:2] and rhs.shape[:2] != (1, 1):
        raise NotImplementedError("bcoo convolution with leading dimensions other than (1, 1)")
    pads = tuple(params["padding"])
    if len(pads) != 1:
        raise ValueError(
            f"bcoo_conv_general_dilated supports one spatial dimension; got {len(pads)}"
        )
    index_dtype = (
        lhs.indices.dtype
        if isinstance(lhs, BCOO)
        else rhs.indices.dtype
        if isinstance(rhs, BCOO)
        else jnp.int32
    )
    lo, hi = (int(p) for p in pads[0])
    lhs_data, lhs_indices = _as_1d(lhs, index_dtype)
    rhs_data, rhs_indices = _as_1d(rhs, index_dtype)
    width = max(0, lhs.shape[-1] + lo + hi - rhs.shape[-1] + 1)
    data, indices = _conv_buffers(lhs_data, lhs_indices, rhs_data, rhs_indices, low=lo)
    return BCOO((data, indices), shape=(1, 1, width))


@partial(modjax.jit, static_argnames=("low",))
def _conv_buffers(lhs_data, lhs_indices, rhs_data, rhs_indices, *, low):
    index_dtype = lhs_indices.dtype
    data = (lhs_data[:, None] * rhs_data[None, :]).ravel()
    offset = low - rhs_indices[:, 0].astype(index_dtype)
    indices = (lhs_indices[:, 0].astype(index_dtype)[:, None] + offset[None, :]).ravel()
    before = indices < 0
    indices = jnp.where(before, jnp.zeros((), index_dtype), indices)
    data = jnp.where(before, jnp.zeros((), data.dtype), data)
    return data[None, None], indices[None, None, :, None]
