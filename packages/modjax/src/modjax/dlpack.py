"""DLPack interchange (``jax.dlpack``): ``from_dlpack`` and ``is_supported_dtype``."""

from __future__ import annotations

import numpy as np

from modjax.numpy import from_dlpack
from modjax.tracecore import dtypes

__all__ = ["from_dlpack", "is_supported_dtype"]

# The element types DLPack can describe and jaxlib exchanges (as JAX 0.10).
_SUPPORTED = frozenset(
    np.dtype(t)
    for t in (
        np.bool_,
        np.int8,
        np.int16,
        np.int32,
        np.int64,
        np.uint8,
        np.uint16,
        np.uint32,
        np.uint64,
        np.float16,
        dtypes.bfloat16,
        np.float32,
        np.float64,
        np.complex64,
        np.complex128,
    )
)


def is_supported_dtype(dtype) -> bool:
    """Return whether DLPack can exchange arrays of ``dtype`` (jax.dlpack.is_supported_dtype)."""
    return np.dtype(dtype) in _SUPPORTED
