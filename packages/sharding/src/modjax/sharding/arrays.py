"""Making sharded Arrays from per-device pieces (``jax.make_array_from_*``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from modjax import runtime
from modjax.runtime import Sharding, _xla
from modjax.runtime.sharding import as_sharding, is_sharding_like, single_device_sharding
from modjax.tracecore.tree_util import tree_flatten, tree_leaves, tree_structure, tree_unflatten

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


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """Build a global Array from this process's data (``jax.make_array_from_process_local_data``).

    ``local_data`` is the part of the global array this process's devices hold
    (the bounding box of their pieces); ``global_shape`` is inferred when not given.
    As in JAX, ``local_data`` may be a pytree, with ``sharding`` (a Sharding, a
    Device, or a PartitionSpec on the current mesh) and ``global_shape`` (a tuple or
    None) pytree prefixes of it. In one process the local data is the whole array
    and this is ``device_put`` (so it also works under jit, on tracers).
    """
    leaves, treedef = tree_flatten(local_data)
    shardings = _prefix_leaves(sharding, local_data, _is_sharding_leaf)
    shapes = _prefix_leaves(global_shape, local_data, lambda s: s is None or isinstance(s, tuple))
    if runtime.process_count() == 1:
        for shape, data in zip(shapes, leaves, strict=True):
            if shape is not None and shape != np.shape(data):
                raise ValueError(
                    "When calling `make_array_from_process_local_data` on a single process, "
                    "global_shape should be None or equal to local_data.shape.Got "
                    f"global_shape={shape} and local_data.shape={np.shape(data)}."
                )
        out = [runtime.explicit_device_put(d, s) for d, s in zip(leaves, shardings, strict=True)]
    else:
        out = [
            _from_process_local_data(s, np.asarray(d), shape)
            for d, s, shape in zip(leaves, shardings, shapes, strict=True)
        ]
    return tree_unflatten(treedef, out)


def _is_sharding_leaf(x) -> bool:
    return isinstance(x, _xla.Device) or is_sharding_like(x)


def _prefix_leaves(prefix, tree, is_leaf) -> list:
    """One entry of the pytree prefix ``prefix`` per leaf of ``tree`` (JAX's broadcast_prefix)."""
    if is_leaf(prefix):
        return [prefix] * len(tree_leaves(tree))
    subtrees = tree_structure(prefix, is_leaf=is_leaf).flatten_up_to(tree)
    entries = tree_leaves(prefix, is_leaf=is_leaf)
    return [e for e, sub in zip(entries, subtrees, strict=True) for _ in tree_leaves(sub)]


def _from_process_local_data(sharding, local_data: np.ndarray, global_shape):
    """One global Array from this process's part of it, over several processes."""
    if isinstance(sharding, _xla.Device):
        sharding = single_device_sharding(sharding)
    sharding = as_sharding(sharding, "device_put")
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
