"""DLPack interchange (``jax.dlpack``): ``from_dlpack`` and ``is_supported_dtype``."""

from __future__ import annotations

from modjax import numpy as _jnp
from modjax.tracecore import dtypes

__all__ = ["from_dlpack", "is_supported_dtype"]

# The element types DLPack can describe and jaxlib exchanges (as JAX 0.10), by name so
# that importing this module does not load the narrow dtypes (bfloat16).
_SUPPORTED_NAMES = frozenset(
    "bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 "
    "float16 bfloat16 float32 float64 complex64 complex128".split()
)


def from_dlpack(external_array, device=None, copy=None):
    """Make an Array from a DLPack-exporting array (jax.dlpack.from_dlpack).

    As ``jax.numpy.from_dlpack``, with ``device`` and ``copy`` also positional.
    """
    return _jnp.from_dlpack(external_array, device=device, copy=copy)


def is_supported_dtype(dtype) -> bool:
    """Return whether DLPack can exchange arrays of ``dtype`` (jax.dlpack.is_supported_dtype)."""
    return dtypes.np_dtype(dtype).name in _SUPPORTED_NAMES
