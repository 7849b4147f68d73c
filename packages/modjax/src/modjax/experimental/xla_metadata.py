"""``jax.experimental.xla_metadata`` (modjax-runtime's ``xla_metadata``)."""

from modjax.runtime.xla_metadata import set_xla_metadata

__all__ = ["set_xla_metadata"]
