"""Helpers for programs run by several processes (``jax.experimental.multihost_utils``).

Each function works on pytrees. In a single process the data is already
everywhere, so the answers are computed on the host; with several processes
(``modjax.distributed.initialize``) the values travel through a jitted program
over a mesh of every device, one row of devices per process.
"""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from modjax import distributed
from modjax.runtime import devices, jit, local_device_count, process_count, process_index
from modjax.sharding import Mesh, NamedSharding, PartitionSpec, make_array_from_process_local_data
from modjax.sharding import PartitionSpec as P  # noqa: F401  (JAX's module has it)
from modjax.tracecore.tree_util import (  # noqa: F401  (JAX's module has them)
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

__all__ = [
    "ProcessFailureError",
    "assert_equal",
    "broadcast_one_to_all",
    "global_array_to_host_local_array",
    "host_local_array_to_global_array",
    "process_allgather",
    "reached_preemption_sync_point",
    "sync_global_devices",
]


class ProcessFailureError(Exception):
    """A process of the run failed (JAX's fault-tolerance error; modjax never raises it)."""


def _process_mesh() -> Mesh:
    """All devices, one row per process: axes ('processes', 'local_devices')."""
    grid = np.empty(len(devices()), dtype=object)
    grid[:] = devices()
    return Mesh(grid.reshape(process_count(), local_device_count()), ("processes", "local_devices"))


def _identity(x):
    return x


def _sum_over_processes(x):
    return x.sum(0)


_jitted: dict = {}  # (function, mesh) -> its jit with replicated results, traced once


def _stacked_over_processes(local: np.ndarray):
    """A global array whose row ``i`` is process ``i``'s ``local`` (one more axis)."""
    sharding = NamedSharding(_process_mesh(), PartitionSpec("processes"))
    return make_array_from_process_local_data(sharding, np.expand_dims(local, 0))


def _replicated(fn, x) -> np.ndarray:
    """``fn(x)`` computed over the process mesh, fetched whole on every process."""
    mesh = _process_mesh()
    key = (fn, mesh)
    if key not in _jitted:
        _jitted[key] = jit(fn, out_shardings=NamedSharding(mesh, PartitionSpec()))
    return np.asarray(_jitted[key](x).addressable_data(0))


def _gather_leaf(x, tiled: bool) -> np.ndarray:
    if not getattr(x, "is_fully_addressable", True):  # a global Array spanning processes
        if not tiled:
            raise ValueError(
                "Gathering global non-fully-addressable arrays only supports tiled=True"
            )
        return _replicated(_identity, x)
    local = np.asarray(x)
    if process_count() == 1:
        return local if tiled else np.expand_dims(local, 0)
    stacked = _replicated(_identity, _stacked_over_processes(local))
    if tiled and local.ndim > 0:
        return stacked.reshape(-1, *local.shape[1:])
    return stacked


def process_allgather(in_tree: Any, tiled: bool = False) -> Any:
    """Gather every process's leaves as numpy arrays (``multihost_utils.process_allgather``).

    Each process passes leaves of one shape; the result stacks them along a new
    leading axis (``tiled``: concatenates them along axis 0; scalars are always
    stacked). A global Array spanning processes is gathered whole (``tiled`` only).
    """
    return tree_map(lambda x: _gather_leaf(x, tiled), in_tree)


def broadcast_one_to_all(in_tree: Any, is_source: bool | None = None) -> Any:
    """Give every process the source's leaves, as numpy arrays (``broadcast_one_to_all``).

    The source is process 0 unless ``is_source`` says which process is (exactly one).
    """
    if process_count() == 1:
        return tree_map(np.asarray, in_tree)
    source = process_index() == 0 if is_source is None else bool(is_source)

    def leaf(x):
        local = np.asarray(x)
        mine = local if source else np.zeros_like(local)
        return _replicated(_sum_over_processes, _stacked_over_processes(mine))

    return tree_map(leaf, in_tree)


def assert_equal(in_tree, fail_message: str = "") -> None:
    """Raise AssertionError unless every process holds the same leaves (``assert_equal``)."""
    gathered = process_allgather(in_tree, tiled=True)
    # Concatenated copies of equal leaves read, flattened, as the leaf repeated.
    same = tree_map(
        lambda x, g: np.array_equal(np.tile(np.ravel(x), process_count()), np.ravel(g)),
        in_tree,
        gathered,
    )
    if not all(tree_leaves(same)):
        raise AssertionError(f"{fail_message}. Expected: {gathered}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """Wait until every process reaches this point with the same ``name`` (a barrier)."""
    digest = np.uint32(zlib.crc32(name.encode()))
    assert_equal(digest, f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Tell whether every process reached the step to checkpoint at before preemption.

    modjax has no preemption notices: outside a multi-process run (JAX's answer
    there too) no process is ever preempted. A multi-process run would need
    jaxlib's preemption sync manager, which modjax does not start.
    """
    if not distributed.is_initialized():
        return False
    raise NotImplementedError(
        "multihost_utils.reached_preemption_sync_point in a multi-process run: modjax does "
        "not start jaxlib's preemption sync manager"
    )


def host_local_array_to_global_array(local_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """Make global Arrays on ``global_mesh`` from each process's part (``multihost_utils``).

    ``pspecs`` is a PartitionSpec, or a pytree prefix of ``local_inputs`` with one
    per subtree; each process passes the rows its devices hold.
    """
    return _per_leaf_spec(
        lambda x, spec: make_array_from_process_local_data(
            NamedSharding(global_mesh, spec), np.asarray(x)
        ),
        local_inputs,
        pspecs,
    )


def global_array_to_host_local_array(global_inputs: Any, global_mesh: Mesh, pspecs: Any) -> Any:
    """The part of each global Array this process holds (``multihost_utils``).

    In one process that is the whole Array, on ``global_mesh`` as ``pspecs`` says.
    """
    if process_count() > 1:
        raise NotImplementedError(
            "multihost_utils.global_array_to_host_local_array with several processes"
        )
    return host_local_array_to_global_array(global_inputs, global_mesh, pspecs)


def _per_leaf_spec(fn, tree: Any, pspecs: Any) -> Any:
    if isinstance(pspecs, PartitionSpec) or pspecs is None:
        spec = PartitionSpec() if pspecs is None else pspecs
        return tree_map(lambda x: fn(x, spec), tree)
    return tree_map(
        lambda spec, sub: tree_map(lambda x: fn(x, spec), sub),
        pspecs,
        tree,
        is_leaf=lambda s: isinstance(s, PartitionSpec) or s is None,
    )
