"""Listeners for events, durations and scalars (the counterpart of ``jax.monitoring``).

Programs register callbacks; modjax reports its compile pipeline through them,
with JAX's event names: ``/jax/core/compile/jaxpr_trace_duration`` (tracing a
jitted function), ``/jax/core/compile/jaxpr_to_mlir_module_duration`` (lowering)
and ``/jax/core/compile/backend_compile_duration`` (XLA compiling), each as a
scalar (its start time), a duration and a time span with ``fun_name=``; and
``/jax/compilation_cache/compile_requests_use_cache``,
``/jax/compilation_cache/cache_hits`` and ``/jax/compilation_cache/cache_misses``
when the persistent cache is on.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = [
    "clear_event_listeners",
    "record_event",
    "record_event_duration_secs",
    "record_event_time_span",
    "record_scalar",
    "register_event_duration_secs_listener",
    "register_event_listener",
    "register_event_time_span_listener",
    "register_scalar_listener",
    "timed",
    "unregister_event_duration_listener",
    "unregister_event_listener",
    "unregister_event_time_span_listener",
    "unregister_scalar_listener",
]

_event_listeners: list[Callable[..., None]] = []
_duration_listeners: list[Callable[..., None]] = []
_time_span_listeners: list[Callable[..., None]] = []
_scalar_listeners: list[Callable[..., None]] = []


def record_event(event: str, **kwargs: str | int) -> None:
    """Tell every event listener that ``event`` happened (jax.monitoring.record_event)."""
    for callback in list(_event_listeners):
        callback(event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Tell every duration listener that ``event`` took ``duration`` seconds."""
    for callback in list(_duration_listeners):
        callback(event, duration, **kwargs)


def record_event_time_span(
    event: str, start_time: float, end_time: float, **kwargs: str | int
) -> None:
    """Tell every time-span listener that ``event`` ran from ``start_time`` to ``end_time``."""
    for callback in list(_time_span_listeners):
        callback(event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Tell every scalar listener the ``value`` of ``event`` (jax.monitoring.record_scalar)."""
    for callback in list(_scalar_listeners):
        callback(event, value, **kwargs)


def register_event_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, **kwargs)`` on every ``record_event``."""
    _event_listeners.append(callback)


def register_event_duration_secs_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, duration_secs, **kwargs)`` on every recorded duration."""
    _duration_listeners.append(callback)


def register_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, start_time, end_time, **kwargs)`` on every recorded span."""
    _time_span_listeners.append(callback)


def register_scalar_listener(callback: Callable[..., None]) -> None:
    """Call ``callback(event, value, **kwargs)`` on every recorded scalar."""
    _scalar_listeners.append(callback)


def _unregister(listeners: list, callback: Callable[..., None]) -> None:
    if callback not in listeners:
        raise ValueError(f"{callback!r} is not a registered listener")
    listeners.remove(callback)


def unregister_event_listener(callback: Callable[..., None]) -> None:
    """Stop calling an event listener; ValueError if it is not registered."""
    _unregister(_event_listeners, callback)


def unregister_event_duration_listener(callback: Callable[..., None]) -> None:
    """Stop calling a duration listener; ValueError if it is not registered."""
    _unregister(_duration_listeners, callback)


def unregister_event_time_span_listener(callback: Callable[..., None]) -> None:
    """Stop calling a time-span listener; ValueError if it is not registered."""
    _unregister(_time_span_listeners, callback)


def unregister_scalar_listener(callback: Callable[..., None]) -> None:
    """Stop calling a scalar listener; ValueError if it is not registered."""
    _unregister(_scalar_listeners, callback)


def clear_event_listeners() -> None:
    """Unregister every listener of every kind (jax.monitoring.clear_event_listeners)."""
    for listeners in (_event_listeners, _duration_listeners, _time_span_listeners):
        listeners.clear()
    _scalar_listeners.clear()


class timed:
    """Report the block as ``event`` (start-time scalar, duration, span) with ``fun_name``.

    Costs two clock reads when nobody listens.
    """

    __slots__ = ("event", "fun_name", "start")

    def __init__(self, event: str, fun_name: str):
        self.event, self.fun_name = event, fun_name

    def __enter__(self) -> None:
        self.start = time.time()
        if _scalar_listeners:
            record_scalar(self.event, self.start, fun_name=self.fun_name)

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None:
            return
        end = time.time()
        if _duration_listeners:
            record_event_duration_secs(self.event, end - self.start, fun_name=self.fun_name)
        if _time_span_listeners:
            record_event_time_span(self.event, self.start, end, fun_name=self.fun_name)
