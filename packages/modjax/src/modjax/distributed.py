"""``jax.distributed``: run one program over many processes (from ``modjax.runtime``)."""

from modjax.runtime.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
