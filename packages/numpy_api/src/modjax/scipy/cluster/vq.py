"""Vector quantization in scipy.cluster.vq's names (the counterpart of jax.scipy.cluster.vq)."""

from __future__ import annotations

from typing import Any

import modjax.numpy as jnp
from modjax.numpy._eager_jit import compile_on_arrays
from modjax.numpy._util import check_arraylike, promote_dtypes_inexact

__all__ = ["vq"]


def vq(obs: Any, code_book: Any, check_finite: bool = True):
    """Return each observation's nearest code and its distance (jax.scipy.cluster.vq.vq).

    ``obs`` is ``(M, N)`` (or ``(M,)``) and ``code_book`` ``(K, N)`` (or ``(K,)``);
    distances are Euclidean. ``check_finite`` is accepted and ignored, as in JAX.
    """
    del check_finite
    check_arraylike("scipy.cluster.vq.vq", obs, code_book)
    obs, code_book = (jnp.asarray(x) for x in promote_dtypes_inexact(obs, code_book))
    if obs.ndim != code_book.ndim:
        raise ValueError("Observation and code_book should have the same rank")
    if obs.ndim == 1:
        obs, code_book = obs[:, None], code_book[:, None]
    if obs.ndim != 2:
        raise ValueError("ndim different than 1 or 2 are not supported")
    dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
    code = jnp.argmin(dist, axis=-1)
    return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]


compile_on_arrays(globals(), "vq")
