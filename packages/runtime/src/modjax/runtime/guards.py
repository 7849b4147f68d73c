"""Transfer guards, the Array garbage-collection guard and the thread guard (JAX's options).

The checks themselves are jaxlib's (its ``guard_lib``): every transfer jaxlib
makes consults the level of its direction. This module defines the options
(``jax_transfer_guard_host_to_device``, ``..._device_to_device``,
``..._device_to_host``, ``jax_transfer_guard`` for all three,
``jax_array_garbage_collection_guard``, ``jax_thread_guard``) and mirrors their
values into jaxlib. ``device_put``/``device_get`` mark their transfers explicit,
so ``"disallow"`` stops only implicit ones (a numpy array passed to a jitted
function, a Python scalar in an eager op), as in JAX; ``"disallow_explicit"``
stops both. On CPU, reading an Array into numpy is not a transfer (JAX's answer too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from modjax.tracecore.config import config

from . import _xla

__all__ = [
    "array_garbage_collection_guard",
    "thread_guard",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
]

_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")


def _guard_option(direction: str):
    return config.define_enum_option(
        f"transfer_guard_{direction}",
        None,  # type: ignore[arg-type]  # None: jaxlib's default ("allow")
        _LEVELS,
        help=f"Guard level for {direction.replace('_', '-')} transfers.",
        on_update=lambda level: _xla.set_transfer_guard(direction, level),
        optional=True,
    )


transfer_guard_host_to_device = _guard_option("host_to_device")
transfer_guard_device_to_device = _guard_option("device_to_device")
transfer_guard_device_to_host = _guard_option("device_to_host")
_DIRECTIONS = (
    transfer_guard_host_to_device,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
)


def _set_all(level) -> None:
    for option in _DIRECTIONS:
        option.set(level)


_all_directions = config.define_enum_option(
    "transfer_guard",
    None,  # type: ignore[arg-type]
    _LEVELS,
    help="Guard level for transfers in every direction.",
    on_update=_set_all,
    optional=True,
)


@contextlib.contextmanager
def transfer_guard(new_val: str) -> Iterator[None]:
    """Set the guard level of transfers in every direction inside the block (jax.transfer_guard).

    ``new_val`` is "allow", "log", "disallow", "log_explicit" or
    "disallow_explicit"; a disallowed transfer raises jaxlib's JaxRuntimeError
    ("Disallowed host-to-device transfer: ...").
    """
    with contextlib.ExitStack() as stack:
        for option in _DIRECTIONS:
            stack.enter_context(option(new_val))
        yield


array_garbage_collection_guard = config.define_enum_option(
    "array_garbage_collection_guard",
    None,  # type: ignore[arg-type]
    ("allow", "log", "fatal"),
    help="What happens when the garbage collector frees an Array held in a reference cycle.",
    on_update=_xla.set_array_gc_guard,
    optional=True,
)

thread_guard = config.define_bool_option(
    "thread_guard",
    False,
    help="Raise if a multi-process operation runs on another thread than the guard's.",
    on_update=lambda enabled: _xla.set_thread_guard(bool(enabled)),
)
