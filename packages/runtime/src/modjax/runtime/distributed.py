"""Many processes, one program: jaxlib's distributed runtime (``jax.distributed``).

``initialize`` connects this process to the coordinator (process 0 also runs
the coordination service); the CPU backend, created afterwards, then spans
every process's devices and exchanges data with jaxlib's Gloo collectives over
TCP. ``devices()`` lists all processes' devices, ``local_devices()`` this
process's; a mesh over all devices makes programs span processes.
"""

from __future__ import annotations

from typing import Any

from . import _xla

__all__ = ["initialize", "shutdown", "is_initialized", "cpu_client_options"]


class _State:
    service: Any = None
    client: Any = None
    process_id: int = 0
    num_processes: int = 1


_state = _State()


def is_initialized() -> bool:
    """Tell whether ``initialize`` connected this process (``jax.distributed.is_initialized``)."""
    return _state.client is not None


def initialize(
    coordinator_address: str | None = None,
    num_processes: int | None = None,
    process_id: int | None = None,
    local_device_ids=None,
    cluster_detection_method: str | None = None,
    initialization_timeout: int = 300,
    heartbeat_timeout_seconds: int = 100,
    shutdown_timeout_seconds: int = 300,
    coordinator_bind_address: str | None = None,
    slice_index: int | None = None,
    partition_index: int | None = None,
) -> None:
    """Join a multi-process run (``jax.distributed.initialize``).

    ``coordinator_address`` is ``host:port`` of process 0, which also starts the
    coordination service there, listening on ``coordinator_bind_address`` (by
    default every interface, at the port of ``coordinator_address``); call it in
    every process before any device, array or jit is used. Cluster auto-detection
    is not supported: give all three arguments (``cluster_detection_method`` may
    only be ``"deactivate"``). ``local_device_ids``, ``slice_index`` and
    ``partition_index`` raise NotImplementedError.
    """
    for name, value in (
        ("local_device_ids", local_device_ids),
        ("slice_index", slice_index),
        ("partition_index", partition_index),
    ):
        if value is not None:
            raise NotImplementedError(f"distributed.initialize({name}=...)")
    if cluster_detection_method not in (None, "deactivate"):
        raise NotImplementedError(
            f"distributed.initialize(cluster_detection_method={cluster_detection_method!r}): "
            "cluster auto-detection is not supported"
        )

    from . import backends

    if is_initialized():
        raise RuntimeError("distributed.initialize should only be called once.")
    if backends._backends:
        raise RuntimeError(
            "distributed.initialize must be called before any JAX computations are executed."
        )
    if coordinator_address is None or num_processes is None or process_id is None:
        raise ValueError(
            "distributed.initialize: give coordinator_address, num_processes and process_id "
            "(cluster auto-detection is not supported)"
        )
    if not 0 <= process_id < num_processes:
        raise ValueError(f"process_id {process_id} is not in [0, {num_processes})")
    port = coordinator_address.rsplit(":", 1)[-1]
    if process_id == 0:
        _state.service = _xla.distributed_service(
            coordinator_bind_address or f"[::]:{port}",
            num_processes,
            heartbeat_timeout=heartbeat_timeout_seconds,
            shutdown_timeout=shutdown_timeout_seconds,
        )
    client = _xla.distributed_client(
        coordinator_address,
        process_id,
        init_timeout=initialization_timeout,
        heartbeat_timeout=heartbeat_timeout_seconds,
        shutdown_timeout=shutdown_timeout_seconds,
        shutdown_on_destruction=False,
        use_compression=True,
    )
    client.connect()
    _state.client = client
    _state.process_id = process_id
    _state.num_processes = num_processes


def shutdown() -> None:
    """Leave the multi-process run (``jax.distributed.shutdown``); a no-op when not in one."""
    if _state.client is not None:
        _state.client.shutdown()
        _state.client = None
    if _state.service is not None:
        _state.service.shutdown()
        _state.service = None


def cpu_client_options() -> dict[str, Any]:
    """The ``make_cpu_client`` arguments that make the CPU backend span the processes."""
    if _state.client is None:
        return {}
    return {
        "distributed_client": _state.client,
        "node_id": _state.process_id,
        "num_nodes": _state.num_processes,
        "collectives": _xla.gloo_collectives(_state.client),
    }
