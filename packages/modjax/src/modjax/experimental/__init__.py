"""Experimental APIs (the counterpart of ``jax.experimental``): ``io_callback``."""

from modjax.lax.callbacks import io_callback

__all__ = ["io_callback"]
