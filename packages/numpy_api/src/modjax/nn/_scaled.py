"""Block-scaled matrix products: ``scaled_matmul``, ``scaled_dot_general`` and its configs.

JAX runs these through cuDNN; on CPU its ``scaled_matmul`` (and so
``scaled_dot_general`` with configs) raises NotImplementedError. Here ``scaled_matmul``
computes its documented definition (each operand times its scales repeated over
blocks of the contracting dimension, float32 arithmetic); ``scaled_dot_general``
with quantization configs still needs cuDNN's kernels and raises NotImplementedError,
as in JAX on CPU; without configs it is ``lax.dot_general``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from modjax import lax
from modjax.numpy._util import aval
from modjax.tracecore import dtypes

__all__ = [
    "BlockScaleConfig",
    "get_scaled_dot_general_config",
    "scaled_dot_general",
    "scaled_matmul",
]


@dataclass(slots=True)
class BlockScaleConfig:
    """A block-scaled quantization format for ``scaled_dot_general`` (JAX's BlockScaleConfig)."""

    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def _repeat_last(scales, times: int):
    """``scales`` repeated ``times`` times along its last axis, each element in place."""
    shape = aval(scales).shape
    wide = lax.broadcast_in_dim(scales, (*shape, times), tuple(range(len(shape))))
    return lax.reshape(wide, (*shape[:-1], shape[-1] * times))


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Multiply block-scaled operands: einsum('BMK,BNK->BMN', a*sa, b*sb) (jax.nn.scaled_matmul).

    ``lhs`` is ``(B, M, K)``, ``rhs`` ``(B, N, K)``; the scales are ``(B, M, K_a)`` and
    ``(B, N, K_b)`` with ``K`` a multiple of ``K_a`` and ``K_b``: each scale applies to
    a block of ``K // K_a`` consecutive elements. The arithmetic is float32; the
    result is ``preferred_element_type``.
    """
    a, b, sa, sb = (aval(x) for x in (lhs, rhs, lhs_scales, rhs_scales))
    if not all(x.ndim == 3 for x in (a, b, sa, sb)):
        raise ValueError("scaled_matmul requires all inputs to be 3-dimensional arrays")
    if a.shape[2] != b.shape[2] or a.shape[0] != b.shape[0]:
        raise ValueError(
            "scaled_matmul requires inputs a and b to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {a.shape} and {b.shape}"
        )
    if sa.shape[2] != sb.shape[2] or sa.shape[0] != sb.shape[0]:
        raise ValueError(
            "scaled_matmul requires scales to have matching batch (B) and contract (K) "
            f"dimensions, but got shapes {sa.shape} and {sb.shape}"
        )
    if sa.shape[1] != a.shape[1] or sb.shape[1] != b.shape[1]:
        raise ValueError(
            "scaled_matmul requires scales to match non-contract dimensions of inputs, but got "
            f"shapes a: {a.shape}, b: {b.shape}, a_scales: {sa.shape}, b_scales: {sb.shape}"
        )
    if a.shape[2] % sa.shape[2]:
        raise ValueError(
            f"scaled_matmul requires the contract dimension {a.shape[2]} to be a multiple of the "
            f"scales' {sa.shape[2]}"
        )
    out_dtype = dtypes.check_and_canonicalize_user_dtype(preferred_element_type, "scaled_matmul")
    f32 = np.dtype(np.float32)
    block = a.shape[2] // sa.shape[2]

    def scaled(x, s):
        return lax.mul(
            lax.convert_element_type(x, f32),
            _repeat_last(lax.convert_element_type(s, f32), block),
        )

    out = lax.dot_general(
        scaled(lhs, lhs_scales),
        scaled(rhs, rhs_scales),
        (((2,), (2,)), ((0,), (0,))),
        preferred_element_type=f32,
    )
    return lax.convert_element_type(out, out_dtype)


def get_scaled_dot_general_config(mode: str, global_scale=None) -> BlockScaleConfig:
    """Return the quantization config of ``mode``: ``'mxfp8'`` or ``'nvfp4'``.

    The counterpart of jax.nn.get_scaled_dot_general_config.

    ``mxfp8``: float8_e4m3fn data in blocks of 32 with float8_e8m0fnu scales;
    ``nvfp4``: float4_e2m1fn data in blocks of 16 with float8_e4m3fn scales and a
    float32 ``global_scale`` (default ``[1.0]``).
    """
    if mode == "nvfp4":
        one = np.ones((1,), np.float32)
        return BlockScaleConfig(
            mode="nvfp4",
            block_size=16,
            data_type=dtypes.float4_e2m1fn,
            scale_type=dtypes.float8_e4m3fn,
            global_scale=one if global_scale is None else global_scale,
            infer_only=False,
        )
    if mode == "mxfp8":
        return BlockScaleConfig(
            mode="mxfp8",
            block_size=32,
            data_type=dtypes.float8_e4m3fn,
            scale_type=dtypes.float8_e8m0fnu,
            global_scale=None,
            infer_only=False,
        )
    raise ValueError(f"Unsupported mode: {mode}")


def scaled_dot_general(
    lhs,
    rhs,
    dimension_numbers,
    preferred_element_type=np.float32,
    configs=None,
    implementation=None,
):
    """A ``dot_general`` of block-quantized operands (jax.nn.scaled_dot_general).

    Without ``configs`` it is ``lax.dot_general(..., preferred_element_type=...)``.
    With ``configs`` (from ``get_scaled_dot_general_config``) the operands are
    quantized for cuDNN's block-scaled kernels, which need an NVIDIA GPU:
    NotImplementedError here, as in JAX on CPU. ``implementation`` is deprecated
    and ignored (DeprecationWarning).
    """
    if implementation is not None:
        warnings.warn(
            "Backend selector, now ignored. The system chooses the backend automatically.",
            DeprecationWarning,
            stacklevel=2,
        )
    if configs is None:
        return lax.dot_general(
            lhs, rhs, dimension_numbers, preferred_element_type=preferred_element_type
        )
    raise NotImplementedError(
        "scaled_dot_general with quantization configs needs cuDNN's block-scaled matmul (an "
        "NVIDIA GPU); it is not available on CPU (JAX raises NotImplementedError there too)"
    )
