"""Experimental APIs (the counterpart of ``jax.experimental``): ``io_callback``."""

from modjax.experimental import compilation_cache
from modjax.lax.callbacks import io_callback

__all__ = ["compilation_cache", "io_callback"]
