"""Profiling through jaxlib's profiler (the counterpart of ``jax.profiler``).

A trace (``start_trace``/``stop_trace`` or the ``trace`` context manager) is one
jaxlib ``ProfilerSession``: while it runs, jaxlib records the host's threads (XLA
compiling and running, the Python tracer's function calls) and every
``TraceAnnotation`` span; stopping it writes
``<log_dir>/plugins/profile/<timestamp>/<host>.xplane.pb`` (TensorBoard's
profile plugin and ``ProfileData.from_file`` read it) and ``<host>.trace.json.gz``
(Chrome trace events). ``create_perfetto_trace=True`` also writes
``perfetto_trace.json.gz`` there, which https://ui.perfetto.dev opens.

Only one trace runs at a time, as in JAX; a second ``start_trace`` raises
RuntimeError.
"""

from __future__ import annotations

import contextlib
import functools
import gzip
import http.server
import json
import os
import socketserver
import threading
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import _xla
from .backends import backends, get_backend

__all__ = [
    "ProfileData",
    "ProfileEvent",
    "ProfileOptions",
    "ProfilePlane",
    "StepTraceAnnotation",
    "TraceAnnotation",
    "annotate_function",
    "device_memory_profile",
    "register_subprocess",
    "save_device_memory_profile",
    "start_server",
    "start_trace",
    "stop_server",
    "stop_trace",
    "trace",
]

ProfileData = _xla.ProfileData
ProfileEvent = _xla.ProfileEvent
ProfilePlane = _xla.ProfilePlane


class ProfileOptions(_xla.ProfileOptions):
    """What a trace collects: host and Python tracer levels, duration (jax.profiler.ProfileOptions).

    Attributes (jaxlib's): ``host_tracer_level`` (0 off .. 3 verbose; 2 by
    default), ``python_tracer_level`` (1: record Python calls), ``duration_ms``,
    ``start_timestamp_ns``, ``include_dataset_ops``, ``enable_hlo_proto``,
    ``advanced_configuration``, ``raise_error_on_start_failure``.
    """


class TraceAnnotation(_xla.TraceMe):
    """Mark a span ``name`` on the timeline while the block runs (jax.profiler.TraceAnnotation).

    Keyword arguments become the event's metadata (``TraceAnnotation("load", batch=3)``).
    Costs next to nothing when no trace is running.
    """


class StepTraceAnnotation(TraceAnnotation):
    """Mark one step (``step_num=`` its number) on the timeline (jax.profiler.StepTraceAnnotation).

    The profiler's step analysis groups events by these spans.
    """

    def __init__(self, name: str, **kwargs: Any):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: Callable, name: str | None = None, **decorator_kwargs: Any):
    """Make each call of ``func`` a span on the timeline (jax.profiler.annotate_function).

    ``name`` defaults to the function's qualified name; keyword arguments become
    the span's metadata (use ``functools.partial`` to pass them to the decorator).
    """
    label = name or getattr(func, "__qualname__", None) or func.__name__

    @functools.wraps(func)
    def annotated(*args, **kwargs):
        with TraceAnnotation(label, **decorator_kwargs):
            return func(*args, **kwargs)

    return annotated


# --- traces --------------------------------------------------------------------------------


class _Session:
    """The one running trace: jaxlib's session and where it will be written."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.session: Any = None
        self.log_dir = ""
        self.perfetto_trace = False
        self.perfetto_link = False


_current = _Session()


def _version_metadata() -> dict[str, str]:
    from importlib import metadata

    entries = {"jaxlib_version": _xla.jaxlib_version}
    with contextlib.suppress(metadata.PackageNotFoundError):
        entries["modjax_version"] = metadata.version("modjax-runtime")
    for name, backend in backends().items():
        entries[f"{name}_version"] = str(backend.platform_version)
    return entries


def start_trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
) -> None:
    """Start a profile that ``stop_trace`` writes under ``log_dir`` (jax.profiler.start_trace).

    ``create_perfetto_trace`` also writes ``perfetto_trace.json.gz`` for
    https://ui.perfetto.dev; ``create_perfetto_link`` does too, then serves it on
    127.0.0.1:9001, prints the link and blocks until Perfetto has loaded it.
    Raise RuntimeError if a trace is already running.
    """
    with _current.lock:
        if _current.session is not None:
            raise RuntimeError(
                "Profile has already been started. Only one profile may be run at a time."
            )
        get_backend()  # the client's threads exist before the session starts recording
        _xla.profiler_metadata(None)
        _xla.profiler_metadata(_version_metadata())
        options = profiler_options if profiler_options is not None else ProfileOptions()
        _current.session = _xla.ProfilerSession(options)
        _current.log_dir = os.fspath(log_dir)
        _current.perfetto_link = create_perfetto_link
        _current.perfetto_trace = create_perfetto_trace or create_perfetto_link


def stop_trace() -> None:
    """Stop the running trace and write it to its ``log_dir`` (jax.profiler.stop_trace).

    Raise RuntimeError if no trace is running.
    """
    with _current.lock:
        session = _current.session
        if session is None:
            raise RuntimeError("No profile started")
        try:
            session.stop_and_export(_current.log_dir)
            perfetto = _write_perfetto_trace(_current.log_dir) if _current.perfetto_trace else None
            if perfetto is not None and _current.perfetto_link:
                _serve_to_perfetto(perfetto)
        finally:
            _current.session = None
            _current.perfetto_trace = _current.perfetto_link = False
            _xla.profiler_metadata(None)


@contextmanager
def trace(
    log_dir: os.PathLike | str,
    create_perfetto_link: bool = False,
    create_perfetto_trace: bool = False,
    profiler_options: ProfileOptions | None = None,
):
    """Profile the block and write the trace under ``log_dir`` (jax.profiler.trace).

    The arguments are ``start_trace``'s.
    """
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


def _write_perfetto_trace(log_dir: str) -> Path:
    """Write ``perfetto_trace.json.gz`` beside the newest trace in ``log_dir``; return it."""
    runs = list((Path(log_dir).absolute() / "plugins" / "profile").iterdir())
    newest = max(runs, key=os.path.getmtime)
    found = list(newest.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"Invalid trace folder: {newest}")
    with gzip.open(found[0], "rb") as f:
        events = json.load(f)
    events.pop("metadata", None)  # Perfetto rejects the TensorBoard metadata block
    out = newest / "perfetto_trace.json.gz"
    with gzip.open(out, "wb") as f:
        f.write(json.dumps(events).encode())
    return out


class _PerfettoHandler(http.server.SimpleHTTPRequestHandler):
    """Serve the trace file to ui.perfetto.dev (which fetches it cross-origin)."""

    def end_headers(self):
        self.send_header("Access-Control-Allow-Origin", "*")
        super().end_headers()

    def do_GET(self):
        self.server.last_request = self.path
        super().do_GET()

    def do_POST(self):
        self.send_error(404, "File not found")


def _serve_to_perfetto(path: Path, port: int = 9001) -> None:
    handler = functools.partial(_PerfettoHandler, directory=str(path.parent))
    socketserver.TCPServer.allow_reuse_address = True
    with socketserver.TCPServer(("127.0.0.1", port), handler) as server:
        print(
            f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{path.name}"
        )
        while getattr(server, "last_request", None) != "/" + path.name:
            server.handle_request()


# --- the profiler server -------------------------------------------------------------------

_server: Any = None


def start_server(port: int, requires_backend: bool = True):
    """Serve profiles on ``port`` to TensorBoard's profiler (jax.profiler.start_server).

    Raise ValueError if a server is already running. ``requires_backend``
    (default True) starts the CPU backend first, so its threads are profiled.
    """
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:
        get_backend()
    _server = _xla.profiler_server(port)
    return _server


def stop_server() -> None:
    """Stop the profiler server (jax.profiler.stop_server); ValueError if none runs."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # jaxlib's server stops when its last reference goes


def register_subprocess(pid: int, port: int) -> Callable[[], None]:
    """Profile subprocess ``pid`` (serving on ``port``) too (jax.profiler.register_subprocess).

    Return a function that unregisters it. Raise RuntimeError if it cannot be registered.
    """
    return _xla.profiler_subprocess(pid, port)


# --- device memory ---------------------------------------------------------------------------


def device_memory_profile(backend: str | None = None) -> bytes:
    """Return live device allocations as gzipped pprof (jax.profiler.device_memory_profile).

    Each Array and executable on the backend's devices is a sample, with the
    Python stack where it was allocated; ``pprof`` reads the result.
    """
    return gzip.compress(get_backend(backend).heap_profile())


def save_device_memory_profile(filename: os.PathLike | str, backend: str | None = None) -> None:
    """Write ``device_memory_profile(backend)`` to ``filename``.

    The counterpart of ``jax.profiler.save_device_memory_profile``.
    """
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)
