"""Backends for extension authors (``jax.extend.backend``): runtime's clients by name."""

from __future__ import annotations

from modjax.runtime.backends import backends, get_backend
from modjax.runtime.backends import default_device as get_default_device
from modjax.runtime.backends import register_backend_factory as _register
from modjax.runtime.compile_cache import clear_caches as _clear_compiled

from .._unsupported import Unsupported

__all__ = [
    "backend_xla_version",
    "backends",
    "clear_backends",
    "clear_in_memory_compilation_cache",
    "get_backend",
    "get_compile_options",
    "get_default_device",
    "ifrt_proxy",
    "register_backend_cache",
    "register_backend_factory",
]


def register_backend_factory(
    name: str,
    factory,
    *,
    priority: int = 0,
    fail_quietly: bool = True,
    experimental: bool = False,
    make_topology=None,
    c_api=None,
) -> None:
    """Register ``factory()`` as the client of platform ``name`` (``register_backend_factory``).

    Register before the first backend is created; the highest ``priority`` that
    starts is the default. Experimental backends, topologies and C API plugins
    are not supported (NotImplementedError).
    """
    for option, value in (("experimental", experimental), ("make_topology", make_topology),
                          ("c_api", c_api)):  # fmt: skip
        if value:
            raise NotImplementedError(f"register_backend_factory({option}=...)")
    _register(name, factory, priority=priority, fail_quietly=fail_quietly)


def clear_in_memory_compilation_cache() -> None:
    """Forget the executables compiled in this process (the disk cache stays)."""
    _clear_compiled()


_CLIENTS = "modjax keeps one client per platform for the life of the process"
clear_backends = Unsupported("jax.extend.backend.clear_backends", _CLIENTS)
register_backend_cache = Unsupported("jax.extend.backend.register_backend_cache", _CLIENTS)
backend_xla_version = Unsupported(
    "jax.extend.backend.backend_xla_version", "jaxlib's clients here report no XLA version"
)
get_compile_options = Unsupported(
    "jax.extend.backend.get_compile_options",
    "modjax.runtime.compile_cache.compile_options_for builds compile options from devices",
)
ifrt_proxy = Unsupported("jax.extend.backend.ifrt_proxy", "no IFRT proxy client in modjax")
