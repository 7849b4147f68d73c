"""Compiling StableHLO modules, cached in memory and on disk.

The counterpart of JAX's ``compiler`` and ``compilation_cache`` modules.

``compile_or_get_cached`` looks a module up in memory, then (when a cache
directory is configured) on disk, and only then compiles it with the jaxlib
client. Entries are keyed by the sha256 of the module text, the serialized
compile options (which hold the device assignment), the backend's platform and
version and the jaxlib version. A disk entry is a small header (magic, payload
length, payload sha256) followed by the client's serialized executable; one
that is truncated, corrupt or refused by the client is ignored and rewritten.
Writes go to a temporary file renamed into place, so readers never see half an
entry.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import struct
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from modjax.tracecore import monitoring
from modjax.tracecore.config import config

from . import _xla
from .backends import Device

__all__ = [
    "compile_or_get_cached",
    "compile_options_for",
    "cache_key",
    "clear_caches",
    "stats",
    "compilation_cache_dir",
    "log_compiles",
    "enable_compilation_cache",
    "persistent_cache_min_compile_time_secs",
    "persistent_cache_min_entry_size_bytes",
    "raise_persistent_cache_errors",
]

logger = logging.getLogger(__name__)


def _optional_path(value: Any) -> None:
    if value is not None and not isinstance(value, str | os.PathLike):
        raise TypeError(f"compilation_cache_dir must be a path or None, got {value!r}")


compilation_cache_dir = config.define_option(
    "compilation_cache_dir",
    None,
    env_var="MODJAX_COMPILATION_CACHE_DIR",
    parse=lambda text: text or None,
    validator=_optional_path,
    help="Directory of the persistent compilation cache; None disables it.",
)

log_compiles = config.define_bool_option(
    "log_compiles",
    False,
    env_var="MODJAX_LOG_COMPILES",
    help="Log each compilation (function, cause, time) at WARNING level (jax_log_compiles).",
)


def _non_negative(value: Any) -> None:
    if not isinstance(value, int | float) or value < 0:
        raise ValueError(f"expected a non-negative number of seconds, got {value!r}")


persistent_cache_min_compile_time_secs = config.define_option(
    "persistent_cache_min_compile_time_secs",
    0.0,
    env_var="MODJAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
    parse=float,
    validator=_non_negative,
    help="Only executables that took at least this long to compile are written to disk.",
)

persistent_cache_min_entry_size_bytes = config.define_typed_option(
    "persistent_cache_min_entry_size_bytes",
    0,
    int,
    help="Only executables whose serialized size is at least this many bytes are written "
    "to disk (0: any size).",
)

enable_compilation_cache = config.define_bool_option(
    "enable_compilation_cache",
    True,
    help="If False, the persistent compilation cache is neither read nor written.",
)

raise_persistent_cache_errors = config.define_bool_option(
    "raise_persistent_cache_errors",
    False,
    help="Raise errors reading or writing the persistent cache instead of warning.",
)

#: Counters for tests and benchmarks: compiles done, and hits in memory and on disk.
stats = {"compiles": 0, "memory_hits": 0, "disk_hits": 0, "disk_writes": 0, "disk_errors": 0}

# The executables in memory, least recently used first. Bounded: each loaded
# executable keeps a few memory mappings of its machine code, a process may hold
# only vm.max_map_count (65530) of them, and XLA's compiler crashes the process
# when it cannot map more, so a long-lived process (a test run, a server tracing
# many shapes) must let old executables go. Those a jitted function still holds
# stay alive with it.
_memory: OrderedDict[str, Any] = OrderedDict()
_MEMORY_LIMIT = 1024
_lock = threading.Lock()

_MAGIC = b"MODJAX-XLA-EXE-1\n"
_HEADER = struct.Struct("<Q32s")  # payload length, payload sha256


def clear_caches() -> None:
    """Forget every executable held in memory (the disk cache is untouched)."""
    with _lock:
        _memory.clear()


def compile_options_for(
    devices: Sequence[Device], compiler_options: Mapping[str, Any] | None = None
) -> _xla.CompileOptions:
    """Return compile options running one program replica on each of ``devices`` in order.

    A module with several partitions (SPMD) gets ``num_partitions`` devices instead;
    see ``compile_or_get_cached``. ``compiler_options``: XLA's flags by name.
    """
    return _xla.compile_options(
        [d.id for d in devices],
        spmd_partitioning=len(devices) > 1,
        compiler_options=compiler_options,
    )


def cache_key(module_text: str, options: _xla.CompileOptions, backend) -> str:
    """Return the hex sha256 naming a compiled module in the caches.

    It covers the module text, the serialized compile options, the backend's
    platform and platform version and the jaxlib version.
    """
    digest = hashlib.sha256()
    for part in (
        module_text.encode(),
        _xla.serialize_compile_options(options),
        backend.platform.encode(),
        str(backend.platform_version).encode(),
        _xla.jaxlib_version.encode(),
    ):
        digest.update(struct.pack("<Q", len(part)))
        digest.update(part)
    return digest.hexdigest()


def _entry_path(directory: str | os.PathLike, key: str) -> Path:
    return Path(directory) / f"{key}.xla"


def _read_entry(path: Path) -> bytes | None:
    """Return the payload of a disk entry, or None if absent, short or corrupt."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as err:
        logger.warning("persistent compilation cache: cannot read %s: %s", path, err)
        return None
    head = len(_MAGIC) + _HEADER.size
    if len(data) < head or not data.startswith(_MAGIC):
        return None
    length, checksum = _HEADER.unpack_from(data, len(_MAGIC))
    payload = data[head:]
    if len(payload) != length or hashlib.sha256(payload).digest() != checksum:
        return None
    return payload


def _write_entry(path: Path, payload: bytes) -> None:
    """Write a disk entry atomically: a temporary file in the same folder, then a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    header = _MAGIC + _HEADER.pack(len(payload), hashlib.sha256(payload).digest())
    fd, tmp = tempfile.mkstemp(prefix=f".{path.stem[:16]}-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(header)
            f.write(payload)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class CompileResult:
    """What ``compile_or_get_cached`` did: ``source`` is "memory", "disk" or "compiled"."""

    __slots__ = ("executable", "source", "seconds", "key")

    def __init__(self, executable, source: str, seconds: float, key: str):
        self.executable = executable
        self.source = source
        self.seconds = seconds
        self.key = key


def compile_or_get_cached(
    lowered,
    devices: Sequence[Device],
    compile_options: _xla.CompileOptions | None = None,
    *,
    with_info: bool = False,
):
    """Return a loaded executable of ``lowered`` (a LoweredModule) for ``devices``.

    Counterpart of JAX's ``compiler.compile_or_get_cached``: look in memory, then
    in the persistent cache when ``compilation_cache_dir`` is set, else compile
    with the devices' client and remember the result in both. With
    ``with_info=True`` return a CompileResult telling where the executable came
    from and how long it took. A module with host callbacks, or naming objects
    kept alive by address, is always compiled (with its callables), never cached.
    """
    start = time.perf_counter()
    devices = list(devices)
    backend = devices[0].client
    options = compile_options if compile_options is not None else compile_options_for(devices)
    host_callbacks = list(getattr(lowered, "host_callbacks", ()))
    if host_callbacks or getattr(lowered, "keepalive", None):
        # The Python callables are not part of the module's text (or are named in it
        # only by an address a later program may reuse), so no cache may hand this
        # executable to another program (JAX skips its caches too).
        executable = _xla.compile_and_load(
            backend, lowered.module, devices, options, host_callbacks=host_callbacks
        )
        stats["compiles"] += 1
        return _result(with_info, executable, "compiled", start, "")
    text = lowered.as_text()
    key = cache_key(text, options, backend)
    # Device ids are in the options (and so in the key) only as numbers: two
    # clients in one process must not share executables.
    memory_key = f"{key}:{id(backend)}"
    with _lock:
        executable = _memory.get(memory_key)
        if executable is not None:
            _memory.move_to_end(memory_key)
    if executable is not None:
        stats["memory_hits"] += 1
        return _result(with_info, executable, "memory", start, key)

    directory = compilation_cache_dir.value if enable_compilation_cache.value else None
    if directory is not None:
        monitoring.record_event("/jax/compilation_cache/compile_requests_use_cache")
        path = _entry_path(directory, key)
        payload = _read_entry(path)
        if payload is None:
            monitoring.record_event("/jax/compilation_cache/cache_misses")
        if payload is not None:
            try:
                executable = _xla.deserialize_executable(backend, payload, devices, options)
            except Exception as err:  # a stale or foreign entry: recompile and rewrite it
                stats["disk_errors"] += 1
                if raise_persistent_cache_errors.value:
                    raise
                logger.warning("persistent compilation cache: ignoring entry %s: %s", path, err)
            else:
                stats["disk_hits"] += 1
                monitoring.record_event("/jax/compilation_cache/cache_hits")
                _remember(memory_key, executable)
                return _result(with_info, executable, "disk", start, key)
        elif path.exists():
            stats["disk_errors"] += 1
            logger.warning("persistent compilation cache: ignoring corrupt entry %s", path)

    compile_start = time.perf_counter()
    fun_name = _jit_name(getattr(lowered, "module_name", ""))
    with monitoring.timed("/jax/core/compile/backend_compile_duration", fun_name):
        executable = _xla.compile_and_load(backend, lowered.as_bytecode(), devices, options)
    compile_seconds = time.perf_counter() - compile_start
    stats["compiles"] += 1
    _remember(memory_key, executable)
    if directory is not None and compile_seconds >= persistent_cache_min_compile_time_secs.value:
        try:
            payload = _xla.serialize_executable(backend, executable)
            if len(payload) >= persistent_cache_min_entry_size_bytes.value:
                _write_entry(_entry_path(directory, key), payload)
                stats["disk_writes"] += 1
        except Exception as err:  # a full disk or a read-only folder must not fail the program
            if raise_persistent_cache_errors.value:
                raise
            logger.warning("persistent compilation cache: cannot write %s: %s", directory, err)
    return _result(with_info, executable, "compiled", start, key)


def _remember(memory_key: str, executable) -> None:
    with _lock:
        _memory[memory_key] = executable
        while len(_memory) > _MEMORY_LIMIT:
            _memory.popitem(last=False)


def _jit_name(module_name: str) -> str:
    """``jit(f)`` for a module named ``jit_f`` (JAX's ``fun_name`` in compile events)."""
    return f"jit({module_name[4:]})" if module_name.startswith("jit_") else module_name


def _result(with_info: bool, executable, source: str, start: float, key: str):
    if not with_info:
        return executable
    return CompileResult(executable, source, time.perf_counter() - start, key)
