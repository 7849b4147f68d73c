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


def _global_shape(sharding: Sharding, local_shape: tuple[int, ...]) -> tuple[int, ...]:
    """Infer the global shape from this process's share: scale each dimension by how many
    distinct pieces all devices hold along it over how many this process's devices hold."""
    probe = tuple(n * len(sharding._device_assignment) for n in local_shape)
    index_map = sharding.devices_indices_map(probe)
    local = set(sharding._addressable_device_assignment)
    out = []
    for i, n in enumerate(local_shape):
        starts_all = {index_map[d][i].indices(probe[i])[0] for d in index_map}
        starts_local = {index_map[d][i].indices(probe[i])[0] for d in index_map if d in local}
        out.append(n * len(starts_all) // len(starts_local))
    return tuple(out)


def make_array_from_process_local_data(sharding: Sharding, local_data, global_shape=None):
    """Build a global Array from this process's data (``jax.make_array_from_process_local_data``).

    ``local_data`` is the part of the global array this process's devices hold
    (the bounding box of their pieces); ``global_shape`` is inferred when not given.
    In one process the local data is the whole array.
    """
    local_data = np.asarray(local_data)
    if sharding.is_fully_addressable:
        if global_shape is not None and tuple(global_shape) != local_data.shape:
            raise ValueError(
                f"make_array_from_process_local_data: global_shape {tuple(global_shape)} "
                f"differs from the local data's shape {local_data.shape} in a single-process "
                "sharding"
            )
        return runtime.device_put(local_data, sharding)
    shape = (
        tuple(global_shape)
        if global_shape is not None
        else _global_shape(sharding, local_data.shape)
    )
    index_map = sharding.addressable_devices_indices_map(shape)
    starts = [min(index_map[d][i].indices(n)[0] for d in index_map) for i, n in enumerate(shape)]

    def local_piece(index):
        shifted = tuple(
            slice(s.indices(n)[0] - o, s.indices(n)[1] - o)
            for s, n, o in zip(index, shape, starts, strict=True)
        )
        return local_data[shifted]

    return make_array_from_callback(shape, sharding, local_piece)
