"""Making sharded Arrays from per-device pieces (``jax.make_array_from_*``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax import runtime
from modjax.runtime import Sharding

__all__ = [
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
]

make_array_from_single_device_arrays = runtime.make_array_from_single_device_arrays


def make_array_from_callback(
    shape: Sequence[int], sharding: Sharding, data_callback: Callable, dtype=None
):
    """Build an Array of ``shape`` asking ``data_callback(index)`` for each device's piece.

    Counterpart of ``jax.make_array_from_callback``: ``index`` is the tuple of
    slices of the global array that the device holds under ``sharding``.
    """
    shape = tuple(shape)
    index_map = sharding.addressable_devices_indices_map(shape)
    pieces = []
    for device in sharding._addressable_device_assignment:
        data = data_callback(index_map[device])
        pieces.append(runtime.device_put(data, device))
    if not pieces and dtype is None:
        raise ValueError("make_array_from_callback: give dtype when no device is addressable")
    return runtime.make_array_from_single_device_arrays(shape, sharding, pieces, dtype=dtype)


def make_array_from_process_local_data(sharding: Sharding, local_data, global_shape=None):
    """Build a global Array from this process's data (``jax.make_array_from_process_local_data``).

    In one process the local data is the whole array.
    """
    local_data = np.asarray(local_data)
    mismatch = global_shape is not None and tuple(global_shape) != local_data.shape
    if mismatch and sharding.is_fully_addressable:
        raise ValueError(
            f"make_array_from_process_local_data: global_shape {tuple(global_shape)} differs "
            f"from the local data's shape {local_data.shape} in a single-process sharding"
        )
    if not sharding.is_fully_addressable:
        raise NotImplementedError(
            "make_array_from_process_local_data over several processes (multi-process runs)"
        )
    return runtime.device_put(local_data, sharding)
