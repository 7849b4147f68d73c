"""Scaled dot-product attention of modjax.nn (the counterpart of ``jax.nn.dot_product_attention``).

Layouts are JAX's: queries ``(B, T, N, H)``, keys and values ``(B, S, K, H)``
(batch, sequence, heads, head size; the batch axis may be left out). With
fewer key/value heads than query heads (grouped-query attention, ``N = K * G``)
query head ``n`` reads key/value head ``n // G``. Logits are computed in at
least float32 (``preferred_element_type``), masked positions get a large
negative logit rather than -inf (a fully masked row averages the values
instead of producing NaN), and the softmax runs in float32, as in JAX.

The program is JAX's, operation for operation (one attention per member of a query
group, vmapped; the masks and-ed in JAX's order; JAX's einsums), so that XLA
compiles the same program and the results are JAX's bits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import stop_gradient
from modjax.batching import vmap
from modjax.scipy.special import logsumexp

from ._functions import softmax

__all__ = ["dot_product_attention"]


def _as_4d(t: Any):
    """``t`` as an array with leading size-1 axes up to rank 4 (a missing batch, heads...)."""
    t = jnp.asarray(t)
    return jnp.expand_dims(t, tuple(range(4 - t.ndim))) if t.ndim < 4 else t


def _check(name: str, t: Any, shape: tuple[int, ...], dtype) -> None:
    """Raise JAX's ValueError unless ``t`` has ``len(shape)`` axes, ``shape`` and ``dtype``."""
    if t is None:
        return
    if t.ndim != len(shape):
        raise ValueError(f"{name} ndim should be {len(shape)}, but got {t.ndim}")
    if dtype is not None and t.dtype != np.dtype(dtype):
        raise ValueError(f"{name} dtype should be {np.dtype(dtype)}, but got {t.dtype}")
    if any(want not in (-1, got) for want, got in zip(shape, t.shape, strict=True)):
        raise ValueError(f"{name} shape should be {list(shape)}: but got {t.shape}")


def _check_heads(name: str, t: Any, n: int) -> None:
    """A bias or mask has one head (shared) or one per query head."""
    if t is not None and t.shape[1] not in (1, n):
        raise ValueError(
            f"dot_product_attention: {name} of shape {t.shape} must have 1 or {n} heads "
            "(axis 1, the query heads)"
        )


def _large_negative(dtype: np.dtype):
    """The logit of masked positions: large, yet finite once the softmax casts to float32."""
    top = min(float(jnp.finfo(dtype).max), float(jnp.finfo(np.float32).max))
    return jnp.asarray(-0.7 * top, dtype=dtype)


def _window_mask(t: int, s: int, window: tuple[int, int]):
    """Keys ``j`` with ``i - left <= j <= i + right`` for query ``i``, as (1, 1, T, S)."""
    query_pos = jnp.array(range(t))
    key_pos = jnp.array(range(s))
    left, right = window
    left_ok = query_pos[..., None] <= key_pos[..., None, :] + left
    right_ok = query_pos[..., None] >= key_pos[..., None, :] - right
    return jnp.logical_and(right_ok, left_ok)[None, None, :, :]


def _padding_mask(t: int, s: int, q_lengths, kv_lengths):
    """Rows below ``q_lengths`` and columns below ``kv_lengths``, as (B, 1, T, S)."""
    rows = True
    cols = True
    if q_lengths is not None:
        rows = jnp.arange(0, t)[None, :, None] < q_lengths[:, None, None]
    if kv_lengths is not None:
        cols = jnp.arange(0, s)[None, None, :] < kv_lengths[:, None, None]
    return jnp.logical_and(rows, cols)[:, None, :, :]


def _masked(logits, mask, is_causal, q_lengths, kv_lengths, window):
    """``logits`` (B, N, T, S) with every position some mask hides set to a large negative."""
    masks = (mask, q_lengths, kv_lengths, window)
    if not is_causal and all(m is None for m in masks):
        return logits
    # The masks are and-ed in JAX's order onto an all-true mask, so the program is JAX's.
    combined = jnp.ones_like(logits, dtype=bool)
    if mask is not None:
        combined = jnp.logical_and(combined, mask)
    t, s = logits.shape[2], logits.shape[3]
    if is_causal:
        combined = jnp.logical_and(combined, jnp.tril(jnp.ones((t, s), dtype=bool))[None, None])
    if window is not None:
        combined = jnp.logical_and(combined, _window_mask(t, s, window))
    if q_lengths is not None or kv_lengths is not None:
        combined = jnp.logical_and(combined, _padding_mask(t, s, q_lengths, kv_lengths))
    return jnp.where(combined, logits, _large_negative(logits.dtype))


def _attend_one_group(
    query, key, value, bias, mask, is_causal, scale, q_lengths, kv_lengths, window, residual
):
    """Attention of (B, T, N, H) queries with (B, S, N, H) keys and values (one query group)."""
    logits_dtype = jnp.promote_types(query.dtype, np.float32)
    # JAX asks for bfloat16 products accumulated in float32; its float16 request fails on
    # CPU and falls back to the default precision, which is what runs here.
    precision = lax.DotAlgorithmPreset.BF16_BF16_F32 if query.dtype == jnp.bfloat16 else None
    logits = jnp.einsum(
        "BTNH,BSNH->BNTS", query, key, precision=precision, preferred_element_type=logits_dtype
    )
    logits = logits * jnp.array(scale, dtype=logits.dtype)
    if bias is not None:
        logits = (logits + bias).astype(logits.dtype)
    logits = _masked(logits, mask, is_causal, q_lengths, kv_lengths, window).astype(np.float32)
    probs = softmax(logits, axis=-1).astype(key.dtype)
    encoded = jnp.einsum("BNTS,BSNH->BTNH", probs, value)
    if q_lengths is not None:  # padded query rows give zeros
        rows = jnp.arange(0, encoded.shape[1])[None, :] < q_lengths[:, None]
        encoded = encoded * rows[:, :, None, None].astype(encoded.dtype)
    if not residual:
        return encoded
    lse = jnp.transpose(logsumexp(logits, axis=-1).astype(key.dtype), (0, 2, 1))
    return encoded, stop_gradient(lse)


def _grouped(t, k: int, g: int):
    """A (B, N, T, S) bias or mask as (B, K, G, T, S), or (B, 1, G, T, S) for one head."""
    if t is None:
        return None
    tb, tn, tt, ts = t.shape
    if tn == 1:
        return jnp.broadcast_to(t[:, :, None, :, :], (tb, tn, g, tt, ts))
    return jnp.reshape(t, (tb, k, g, tt, ts))


def _attend(
    query, key, value, bias, mask, is_causal, scale, q_lengths, kv_lengths, window, residual
):
    """Grouped-query attention: query head ``n`` of ``N = K * G`` reads key/value head n // G."""
    b, t, n, h = query.shape
    _, _, k, _ = key.shape
    g = n // k
    # One attention per group member g, batched over axis 3 of (B, T, K, G, H), as JAX does.
    per_group = vmap(
        _attend_one_group,
        in_axes=(3, None, None, 2, 2, None, None, None, None, None, None),
        out_axes=3,
    )
    out = per_group(
        jnp.reshape(query, (b, t, k, g, h)),
        key,
        value,
        _grouped(bias, k, g),
        _grouped(mask, k, g),
        is_causal,
        scale,
        q_lengths,
        kv_lengths,
        window,
        residual,
    )
    if not residual:
        return jnp.reshape(out, (b, t, n, h))
    encoded, lse = out
    return jnp.reshape(encoded, (b, t, n, h)), jnp.reshape(lse, (b, t, n))


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
    comes too. ``implementation`` is None or ``"xla"``; ``"cudnn"`` raises JAX's
    RuntimeError on a machine without cuDNN, which every modjax machine is.
    """
    output_shape = jnp.shape(query)
    query, key, value = (_as_4d(t) for t in (query, key, value))
    bias = None if bias is None else _as_4d(bias)
    mask = None if mask is None else _as_4d(mask)
    q_lengths = None if query_seq_lengths is None else jnp.asarray(query_seq_lengths)
    kv_lengths = None if key_value_seq_lengths is None else jnp.asarray(key_value_seq_lengths)
    if isinstance(local_window_size, int):
        local_window_size = (local_window_size, local_window_size)
    b, s, k, h = key.shape
    _check("value", value, (b, s, k, h), key.dtype)
    _check("query", query, (b, -1, -1, h), key.dtype)
    _check("mask", mask, (-1,) * 4, np.bool_)
    _check("bias", bias, (-1,) * 4, None)
    _check("query_seq_lengths", q_lengths, (b,), np.int32)
    _check("key_value_seq_lengths", kv_lengths, (b,), np.int32)
    n = query.shape[2]
    if k == 0 or n % k:
        raise ValueError(
            f"The number of query heads must be a multiple of key/value heads, but got {n} vs {k}"
        )
    _check_heads("bias", bias, n)
    _check_heads("mask", mask, n)
    if implementation == "cudnn":
        raise RuntimeError("cuDNN is not detected.")
    if implementation not in (None, "xla"):
        raise ValueError(f"Unsupported implementation option: {implementation}")
    scale = 1.0 / np.sqrt(h) if scale is None else scale
    out = _attend(
        query,
        key,
        value,
        bias,
        mask,
        is_causal,
        scale,
        q_lengths,
        kv_lengths,
        local_window_size,
        return_residual,
    )
    if not return_residual:
        return jnp.reshape(out, output_shape)
    encoded, residual = out
    return jnp.reshape(encoded, output_shape), jnp.reshape(residual, output_shape[:-1])
