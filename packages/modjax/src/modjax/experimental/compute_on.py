"""Where a block of a program computes (the counterpart of ``jax.experimental.compute_on``).

Equations traced inside ``compute_on(compute_type)`` carry the compute type;
lowered, their ops get XLA's ``_xla_compute_type`` frontend attribute (``host``
for ``"device_host"``), as JAX 0.10.2 emits them. The block is part of jit's
trace context, so a function is traced again inside another block. On CPU the
program runs as without it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from modjax.tracecore import config
from modjax.tracecore import source_info as source_info_util

__all__ = ["compute_on"]

_COMPUTE_TYPES = ("device_host", "device", "tpu_sparsecore")

# jit keys its traces on the block's compute type (JAX's compute_on_context_manager).
_context = config.make_user_context(None)


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Trace the block's computations for ``compute_type`` (``jax.experimental.compute_on``).

    ``compute_type`` is ``"device_host"``, ``"device"``, ``"tpu_sparsecore"`` or
    ``"gpu_stream:<n>"``; anything else is JAX's ValueError, a non-string its
    TypeError. Usable as a decorator of a jitted function, as in JAX.
    """
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in _COMPUTE_TYPES and not compute_type.startswith("gpu_stream:"):
        raise ValueError(
            f"Invalid compute type {compute_type}. Current supported values are "
            "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`."
        )
    with _context(compute_type), source_info_util.compute_type(compute_type):
        yield
