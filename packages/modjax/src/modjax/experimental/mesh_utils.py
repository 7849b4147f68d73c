"""``jax.experimental.mesh_utils``: arrays of devices laid out for ``jax.sharding.Mesh``.

On CPU devices (the ones modjax runs on) the layout is the devices' own order, as
JAX's is; ``device_kind_handler_dict`` lets a caller lay out a device kind its own
way, as in JAX.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax.runtime.backends import devices as _all_devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh", "device_kind_handler_dict"]

# device_kind -> handler(mesh_shape, devices, *, contiguous_submeshes) -> array or None
device_kind_handler_dict: dict[str, Callable[..., np.ndarray | None]] = {}


def _axis_sizes(mesh_shape: Sequence[int]) -> tuple[int, ...] | None:
    try:
        return tuple(int(size) for size in mesh_shape)
    except (TypeError, ValueError):
        return None


def create_device_mesh(
    mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    contiguous_submeshes: bool = False,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """Return ``devices`` (default: all) as an array of shape ``mesh_shape`` for a Mesh.

    JAX's ``jax.experimental.mesh_utils.create_device_mesh``. A handler registered in
    ``device_kind_handler_dict`` for the last device's kind decides the layout when it
    returns one; otherwise the devices keep their order (GPU devices sorted by id).
    """
    if devices is None:
        devices = _all_devices()
    shape = _axis_sizes(mesh_shape)
    if shape is None:
        raise ValueError(
            "`mesh_shape` passed to `create_device_mesh` should be a sequence of ints. "
            f"Got {mesh_shape}"
        )
    if math.prod(shape) != len(devices):
        raise ValueError(
            f"Number of devices {len(devices)} must equal the product of mesh_shape {shape}"
        )
    last = devices[-1]
    handler = device_kind_handler_dict.get(last.device_kind)
    if handler is not None:
        laid_out = handler(shape, devices, contiguous_submeshes=contiguous_submeshes)
        if laid_out is not None:
            return laid_out
    if last.platform == "tpu":
        raise NotImplementedError(
            "create_device_mesh: TPU topologies (physical-mesh layouts) are not supported"
        )
    if last.platform == "gpu":
        devices = sorted(devices, key=lambda d: d.id)
    return _object_array(devices).reshape(shape)


def create_hybrid_device_mesh(
    mesh_shape: Sequence[int],
    dcn_mesh_shape: Sequence[int],
    devices: Sequence[Any] | None = None,
    *,
    process_is_granule: bool = False,
    should_sort_granules_by_key: bool = True,
    allow_split_physical_axes: bool = False,
) -> np.ndarray:
    """Return a device array for parallelism within and across slices (or processes).

    JAX's ``jax.experimental.mesh_utils.create_hybrid_device_mesh``: each granule
    (slice, or process with ``process_is_granule``) is laid out as ``mesh_shape`` and
    the granules are tiled as ``dcn_mesh_shape``.
    """
    if devices is None:
        devices = _all_devices()
    attribute = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attribute):
        raise ValueError(
            f"Device {devices[0]} does not have attribute {attribute}. See "
            "`process_is_granule` option."
        )
    by_granule: dict[Any, list] = collections.defaultdict(list)
    for device in devices:
        by_granule[getattr(device, attribute)].append(device)
    keys = sorted(by_granule) if should_sort_granules_by_key else list(by_granule)
    granules = [by_granule[key] for key in keys]
    if np.prod(dcn_mesh_shape) != len(granules):
        raise ValueError(
            f"Number of slices {len(granules)} must equal the product of dcn_mesh_shape "
            f"{dcn_mesh_shape}"
        )
    meshes = [
        create_device_mesh(mesh_shape, granule, allow_split_physical_axes=allow_split_physical_axes)
        for granule in granules
    ]
    tiles = np.arange(len(granules)).reshape(tuple(dcn_mesh_shape))
    return np.block(np.vectorize(lambda i: meshes[i], otypes=[object])(tiles).tolist())


def _object_array(devices: Sequence[Any]) -> np.ndarray:
    # np.asarray could try to look into a device object; fill an object array instead.
    out = np.empty(len(devices), dtype=object)
    out[:] = list(devices)
    return out
