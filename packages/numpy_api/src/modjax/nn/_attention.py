"""Scaled dot-product attention of modjax.nn (the counterpart of ``jax.nn.dot_product_attention``).

Layouts are JAX's: queries ``(B, T, N, H)``, keys and values ``(B, S, K, H)``
(batch, sequence, heads, head size; the batch axis may be left out). With
fewer key/value heads than query heads (grouped-query attention, ``N = K * G``)
query head ``n`` reads key/value head ``n // G``. Logits are computed in at
least float32 (``preferred_element_type``), masked positions get a large
negative logit rather than -inf (a fully masked row averages the values
instead of producing NaN), and the softmax runs in float32, as in JAX.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import stop_gradient
from modjax.scipy.special import logsumexp

from ._functions import softmax

__all__ = ["dot_product_attention"]

# Implementations other than the portable one need cuDNN (GPU only in JAX).
_NOT_SUPPORTED_IMPLEMENTATIONS = ("cudnn",)


def _as_4d(name: str, t: Any):
    """``t`` as an array with leading size-1 axes up to rank 4 (a missing batch, heads...)."""
    t = jnp.asarray(t)
    if t.ndim > 4:
        raise ValueError(f"dot_product_attention: {name} ndim should be at most 4, got {t.ndim}")
    return lax.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(name: str, t: Any, shape: tuple[int, ...], dtype) -> None:
    """Raise ValueError unless ``t`` has ``len(shape)`` axes, ``shape`` (-1: any) and ``dtype``."""
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(
            f"dot_product_attention: {name} ndim should be {len(shape)}, but got {t.ndim}"
        )
    if dtype is not None and t.dtype != np.dtype(dtype):
        raise ValueError(
            f"dot_product_attention: {name} dtype should be {np.dtype(dtype)}, but got {t.dtype}"
        )
    if any(want not in (-1, got) for want, got in zip(shape, t.shape, strict=True)):
        raise ValueError(
            f"dot_product_attention: {name} shape should be {list(shape)}, but got {t.shape}"
        )


def _check_heads(name: str, t: Any, n: int) -> None:
    """A bias or mask has one head (shared) or one per query head."""
    if t is not None and t.shape[1] not in (1, n):
        raise ValueError(
            f"dot_product_attention: {name} of shape {t.shape} must have 1 or {n} heads "
            "(axis 1, the query heads)"
        )


def _large_negative(dtype: np.dtype) -> np.ndarray:
    """The logit of masked positions: large, yet finite once the softmax casts to float32."""
    top = min(float(jnp.finfo(dtype).max), float(jnp.finfo(np.float32).max))
    return np.asarray(-0.7 * top, dtype)


def _combined_mask(t, s, mask, is_causal, q_lengths, kv_lengths, window):
    """One boolean mask broadcasting against the logits (B, N, T, S), or None if nothing masks."""
    parts = [] if mask is None else [mask]
    query_pos = lax.broadcasted_iota(np.int32, (t, s), 0)
    key_pos = lax.broadcasted_iota(np.int32, (t, s), 1)
    if is_causal:
        parts.append(jnp.expand_dims(key_pos <= query_pos, (0, 1)))
    if window is not None:
        left, right = window
        inside = jnp.logical_and(key_pos >= query_pos - left, key_pos <= query_pos + right)
        parts.append(jnp.expand_dims(inside, (0, 1)))
    if q_lengths is not None:
        rows = lax.iota(np.int32, t)[None, :, None] < q_lengths[:, None, None]
        parts.append(jnp.expand_dims(rows, 1))
    if kv_lengths is not None:
        cols = lax.iota(np.int32, s)[None, None, :] < kv_lengths[:, None, None]
        parts.append(jnp.expand_dims(cols, 1))
    if not parts:
        return None
    combined = parts[0]
    for part in parts[1:]:
        combined = jnp.logical_and(combined, part)
    return combined


def _attend(query, key, value, bias, mask, scale, q_lengths, return_residual):
    """Attention of 4-d operands with a combined ``mask``; ``N`` query heads in ``K`` groups."""
    b, t, n, h = query.shape
    _, s, k, _ = key.shape
    g = n // k
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    # Query heads grouped by the key/value head they read: (B, T, K, G, H).
    grouped = lax.reshape(query, (b, t, k, g, h))
    # Contract H, batch over (B, K): (B, K, T, G, S) -> (B, N, T, S) with n = k * G + g.
    logits = lax.dot_general(
        grouped, key, (((4,), (3,)), ((0, 2), (0, 2))), preferred_element_type=logits_dtype
    )
    logits = lax.reshape(lax.transpose(logits, (0, 1, 3, 2, 4)), (b, n, t, s))
    logits = logits * np.asarray(scale, logits_dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits_dtype)
    if mask is not None:
        logits = jnp.where(mask, logits, _large_negative(logits_dtype))
    logits = logits.astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    # probs (B, K, G, T, S) with values (B, S, K, H): contract S, batch (B, K) -> (B, K, G, T, H).
    encoded = lax.dot_general(
        lax.reshape(probs, (b, k, g, t, s)), value, (((4,), (1,)), ((0, 1), (0, 2)))
    )
    encoded = lax.reshape(lax.transpose(encoded, (0, 3, 1, 2, 4)), (b, t, n, h))
    if q_lengths is not None:  # padded query rows give zeros
        rows = lax.iota(np.int32, t)[None, :] < q_lengths[:, None]
        encoded = encoded * rows[:, :, None, None].astype(encoded.dtype)
    if not return_residual:
        return encoded
    residual = jnp.transpose(logsumexp(logits, axis=-1).astype(key.dtype), (0, 2, 1))
    return encoded, stop_gradient(residual)


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale: float | None = None,
    is_causal: bool = False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size: int | tuple[int, int] | None = None,
    implementation: str | None = None,
    return_residual: bool = False,
):
    """Compute scaled dot-product attention (jax.nn.dot_product_attention).

    ``softmax(scale * Q K^T + bias, masked) V`` per batch and head: ``query`` is
    ``(B, T, N, H)``, ``key`` and ``value`` ``(B, S, K, H)`` with ``N`` a multiple
    of ``K`` (grouped-query attention), or all three without ``B``. ``scale``
    defaults to ``1 / sqrt(H)``. ``bias`` and the boolean ``mask`` broadcast
    against the ``(B, N, T, S)`` logits; ``is_causal`` lets query ``i`` see keys
    ``j <= i``; ``local_window_size=(left, right)`` (or one int for both) keys
    ``i - left <= j <= i + right``; ``query_seq_lengths``/``key_value_seq_lengths``
    (int32, shape ``(B,)``) mask padding (padded query rows give zeros). With
    ``return_residual`` the gradient-stopped logsumexp of the logits, ``(B, T, N)``,
    comes too. ``implementation`` is None or ``"xla"``; ``"cudnn"`` raises
    NotImplementedError.
    """
    if implementation in _NOT_SUPPORTED_IMPLEMENTATIONS:
        raise NotImplementedError(
            f"dot_product_attention: implementation={implementation!r} (cuDNN flash attention) "
            "is not supported; use implementation=None or 'xla'"
        )
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    out_shape = jnp.shape(query)
    query, key, value = (
        _as_4d(nm, t) for nm, t in zip(("query", "key", "value"), (query, key, value), strict=True)
    )
    bias = None if bias is None else _as_4d("bias", bias)
    mask = None if mask is None else _as_4d("mask", mask)
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    b, s, k, h = key.shape
    _check("value", value, (b, s, k, h), key.dtype)
    _check("query", query, (b, -1, -1, h), key.dtype)
    _check("mask", mask, (-1,) * 4, np.bool_)
    _check("query_seq_lengths", q_lengths, (b,), np.int32)
    _check("key_value_seq_lengths", kv_lengths, (b,), np.int32)
    n = query.shape[2]
    if k == 0 or n % k:
        raise ValueError(
            "dot_product_attention: the number of query heads must be a multiple of key/value "
            f"heads, but got {n} vs {k}"
        )
    _check_heads("bias", bias, n)
    _check_heads("mask", mask, n)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    combined = _combined_mask(
        query.shape[1], s, mask, is_causal, q_lengths, kv_lengths, local_window_size
    )
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    out = _attend(query, key, value, bias, combined, scale, q_lengths, return_residual)
    if not return_residual:
        return lax.reshape(out, out_shape)
    encoded, residual = out
    return lax.reshape(encoded, out_shape), lax.reshape(residual, out_shape[:-1])
