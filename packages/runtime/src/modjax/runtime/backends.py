"""Backends: the jaxlib clients that own the devices (the counterpart of ``jax._src.xla_bridge``).

A backend is made by a *factory* registered under a platform name with a
priority; the client is created the first time it is asked for. The CPU factory
ships here; a plugin (a GPU backend, say) joins with
``register_backend_factory("cuda", make_client, priority=200)``. The default
backend is the registered platform of highest priority whose factory succeeds.
"""

from __future__ import annotations

import logging
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

from modjax.lowering import make_context
from modjax.tracecore.config import config

from . import _xla

__all__ = [
    "Backend",
    "Device",
    "register_backend_factory",
    "get_backend",
    "backends",
    "default_backend",
    "devices",
    "local_devices",
    "device_count",
    "local_device_count",
    "process_index",
    "process_count",
    "process_indices",
    "default_device",
    "default_device_option",
    "num_cpu_devices",
    "platforms",
]

logger = logging.getLogger(__name__)

Backend = _xla.Client
Device = _xla.Device


def _check_num_cpu_devices(value: Any) -> None:
    if type(value) is not int or (value < 1 and value != -1):
        raise ValueError(
            f"num_cpu_devices must be a positive int or -1 (the default), got {value!r}"
        )
    if "cpu" in _backends and value not in (-1, _backends["cpu"].device_count()):
        raise RuntimeError(
            "num_cpu_devices must be set before the CPU backend is created (before the first "
            "use of devices, arrays or jit); it is already created with "
            f"{_backends['cpu'].device_count()} devices"
        )


def _cpu_device_count(value: int) -> int | None:
    # -1: JAX's "the default": one device, or XLA_FLAGS' --xla_force_host_platform_device_count.
    return None if value == -1 else value


class _Factory:
    __slots__ = ("name", "factory", "priority", "fail_quietly")

    def __init__(self, name, factory, priority, fail_quietly):
        self.name = name
        self.factory = factory
        self.priority = priority
        self.fail_quietly = fail_quietly


_factories: dict[str, _Factory] = {}
_backends: dict[str, Backend] = {}
_failed: dict[str, str] = {}
_lock = threading.RLock()
_default: list[Backend] = []  # the default backend once chosen (a list: a cheap "maybe" cell)


def register_backend_factory(
    name: str,
    factory: Callable[[], Backend],
    *,
    priority: int = 0,
    fail_quietly: bool = False,
) -> None:
    """Register ``factory()`` as the maker of the backend for platform ``name``.

    Counterpart of ``jax._src.xla_bridge.register_backend_factory``. Higher
    ``priority`` wins the default backend; with ``fail_quietly`` a factory that
    raises only logs, so a missing accelerator does not break CPU programs.
    Register before the first backend is created.
    """
    with _lock:
        if _backends:
            logger.warning(
                "backend factory %r registered after backends were initialized; it is only "
                "used when asked for by name",
                name,
            )
        _factories[name] = _Factory(name, factory, priority, fail_quietly)


def _quiet_native_logs() -> None:
    # The client logs device lines at INFO level from C++; keep warnings and
    # errors, as JAX does, unless the user chose a level with TF_CPP_MIN_LOG_LEVEL.
    if "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
        _xla.quiet_native_logs()


def _make_cpu_client() -> Backend:
    from .distributed import cpu_client_options

    return _xla.make_cpu_client(_cpu_device_count(num_cpu_devices.value), **cpu_client_options())


register_backend_factory("cpu", _make_cpu_client, priority=0)

num_cpu_devices = config.define_option(
    "num_cpu_devices",
    -1,
    env_var="MODJAX_NUM_CPU_DEVICES",
    parse=int,
    validator=_check_num_cpu_devices,
    help="How many devices the CPU backend exposes (jax_num_cpu_devices); -1: one, or "
    "XLA_FLAGS' --xla_force_host_platform_device_count.",
)


def _check_default_device(value: Any) -> None:
    if value is not None and not isinstance(value, str | Device):
        raise ValueError(
            "jax.default_device must be passed either a Device object (e.g. "
            "`jax.devices('cpu')[0]`) or a platform name string like 'cpu' or 'gpu', "
            f"got: {value!r}"
        )


default_device_option = config.define_option(
    "default_device",
    None,
    validator=_check_default_device,
    help="The device (or platform name) uncommitted computations and transfers use.",
    trace_context=True,  # part of jit's keys: where a program runs
)

platforms = config.define_typed_option(
    "platforms",
    None,
    str,
    env_var="MODJAX_PLATFORMS",
    help="Comma-separated platforms to initialize, in order of preference (e.g. 'cpu'); "
    "read when the first backend is created. None or '': every registered one.",
    optional=True,
)

platform_name = config.define_typed_option(
    "platform_name",
    "",
    str,
    help="The one platform to use (JAX's older spelling of jax_platforms).",
)


def _requested_platforms() -> list[str] | None:
    """The platforms ``jax_platforms`` (or ``jax_platform_name``) asks for, in order; None: any."""
    text = platforms.value or platform_name.value
    if not text:
        return None
    return [name.strip() for name in text.split(",") if name.strip()]


def _create(name: str) -> Backend:
    entry = _factories.get(name)
    if entry is None:  # JAX's messages
        known = sorted(_factories)
        if name == "gpu":
            raise RuntimeError(
                "Unknown backend: 'gpu' requested, but no platforms that are instances of gpu "
                f"are present. Platforms present are: {','.join(known)}"
            )
        raise RuntimeError(f"Unknown backend {name}. Available backends are {known}")
    if name in _failed:
        raise RuntimeError(f"Backend '{name}' failed to initialize: {_failed[name]}")
    _quiet_native_logs()
    try:
        client = entry.factory()
    except Exception as err:
        _failed[name] = f"{type(err).__name__}: {err}"
        raise RuntimeError(f"Backend '{name}' failed to initialize: {err}") from err
    _backends[name] = client
    # Every program a backend runs is lowered first; the first lowering loads jaxlib's
    # MLIR dialects (30-40 ms). Loading them with the client, as JAX does at import,
    # keeps that one-time cost out of the first jitted call.
    make_context()
    return client


def backends() -> dict[str, Backend]:
    """Create every registered backend that can be created and return them by platform.

    Counterpart of ``jax._src.xla_bridge.backends``; failures of factories
    registered with ``fail_quietly`` are logged and skipped.
    """
    with _lock:
        requested = _requested_platforms()
        if requested is not None:
            for name in requested:
                if name in _backends:
                    continue
                try:
                    _create(name)
                except RuntimeError as err:
                    raise RuntimeError(
                        f"Unable to initialize backend '{name}': {err} (set "
                        "MODJAX_PLATFORMS='' or jax_platforms to None to automatically "
                        "choose an available backend)"
                    ) from None
            return {name: _backends[name] for name in requested}
        for name, entry in sorted(_factories.items(), key=lambda kv: -kv[1].priority):
            if name in _backends or name in _failed:
                continue
            try:
                _create(name)
            except RuntimeError as err:
                if not entry.fail_quietly:
                    raise
                logger.info("skipping backend %r: %s", name, err)
        return dict(_backends)


def _default_backend() -> Backend:
    if _default:
        return _default[0]
    with _lock:
        if not _default:
            available = backends()
            if not available:
                raise RuntimeError("no backend could be initialized")
            if _requested_platforms() is not None:  # the first one asked for wins
                best = next(iter(available))
            else:
                best = max(available, key=lambda n: _factories[n].priority)
            _default.append(available[best])
    return _default[0]


def get_backend(platform: str | Backend | None = None) -> Backend:
    """Return the client for ``platform`` ("cpu", ...), creating it on first use.

    Counterpart of ``jax.extend.backend.get_backend``. ``None`` gives the
    default backend; a client passed in is returned as is.
    """
    if platform is None:
        return _default_backend()
    if not isinstance(platform, str):
        return platform
    client = _backends.get(platform)
    if client is not None:
        return client
    with _lock:
        client = _backends.get(platform)
        return client if client is not None else _create(platform)


def default_backend() -> str:
    """Return the platform name of the default backend (``jax.default_backend``)."""
    return _default_backend().platform


def devices(backend: str | Backend | None = None) -> list[Device]:
    """Return all devices of ``backend`` (default: the default backend), like ``jax.devices``."""
    return get_backend(backend).devices()


def local_devices(
    process_index: int | None = None,
    backend: str | Backend | None = None,
    host_id: int | None = None,
):
    """Return the devices of ``backend`` attached to this process (``jax.local_devices``).

    ``host_id`` is the old name of ``process_index`` (a warning says so, as in JAX).
    """
    if host_id is not None:
        warnings.warn(
            "The argument to jax.local_devices has been renamed from `host_id` to "
            "`process_index`. This alias will eventually be removed; please update your code.",
            stacklevel=2,
        )
        process_index = host_id
    client = get_backend(backend)
    index = client.process_index() if process_index is None else process_index
    return [d for d in client.devices() if d.process_index == index]


def device_count(backend: str | Backend | None = None) -> int:
    """Return how many devices ``backend`` has across all processes (``jax.device_count``)."""
    return get_backend(backend).device_count()


def local_device_count(backend: str | Backend | None = None) -> int:
    """Return how many devices this process drives (``jax.local_device_count``)."""
    return get_backend(backend).local_device_count()


def process_index(backend: str | Backend | None = None) -> int:
    """Return this process's index in a multi-process run (``jax.process_index``)."""
    return get_backend(backend).process_index()


def process_count(backend: str | Backend | None = None) -> int:
    """Return how many processes take part (``jax.process_count``)."""
    client = get_backend(backend)
    return max(d.process_index for d in client.devices()) + 1


def process_indices(backend: str | Backend | None = None) -> list[int]:
    """Return the indices of every process of the run (``jax.process_indices``)."""
    return list(range(process_count(backend)))


def default_device() -> Device:
    """Return the device computations and transfers use when none is given.

    ``jax_default_device`` (``with jax.default_device(d):``) chooses it: a Device,
    or a platform name whose first local device is used; otherwise it is the
    default backend's first local device.
    """
    chosen = default_device_option.value
    if chosen is None:
        return _default_backend().local_devices()[0]
    if isinstance(chosen, str):
        return get_backend(chosen).local_devices()[0]
    return chosen
