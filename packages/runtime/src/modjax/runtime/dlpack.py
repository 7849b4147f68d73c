"""DLPack interchange on jaxlib: the two calls that export and import buffers.

modjax.numpy's ``from_dlpack`` and ``Array.__dlpack__`` build on these; keeping the
jaxlib calls here means a jaxlib upgrade touches the runtime only.
"""

from __future__ import annotations

import numpy as np

from . import _xla
from .array import Array, aval_of
from .sharding import single_device_sharding

__all__ = ["StridesNotSupported", "buffer_to_capsule", "capsule_to_array"]


def buffer_to_capsule(buffer: Array, dtype: np.dtype, stream):
    """Export a single-device buffer as a DLPack capsule (BufferError for dtypes DLPack lacks)."""
    try:
        return _xla.buffer_to_dlpack(buffer, stream)
    except _xla.JaxRuntimeError as err:
        if "UNIMPLEMENTED" in str(err):
            raise BufferError(f"__dlpack__: dtype {dtype} has no DLPack equivalent") from None
        raise


class StridesNotSupported(Exception):
    """jaxlib imports only compact (possibly transposed) DLPack tensors."""


def capsule_to_array(capsule, device, dl_type: int, copy: bool | None) -> Array:
    """Import a DLPack capsule as an Array on ``device``, sharing memory when it can."""
    try:
        buffer = _xla.dlpack_to_buffer(capsule, device, dl_type, copy)
    except _xla.JaxRuntimeError as err:
        if "aligned" in str(err) and copy is False:
            raise ValueError(
                "from_dlpack: the source buffer is not aligned as XLA requires, so it must be "
                "copied, but copy=False; pass copy=None or copy=True"
            ) from None
        if "striding" in str(err):
            raise StridesNotSupported(str(err)) from None
        raise
    # A copy is made asynchronously: finish it before the producer may write its memory.
    buffer.block_until_ready()
    aval = buffer.aval
    if aval is None:  # jaxlib leaves it unset without jax installed: read it off the buffer
        host, _ = buffer._single_device_array_to_np_array_did_copy()
        aval = aval_of(host.shape, host.dtype, False)
    return buffer._rewrap_with_aval_and_sharding(aval, single_device_sharding(device))
