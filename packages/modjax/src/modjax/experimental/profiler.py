"""``jax.experimental.profiler``: profiled instructions read back from a written trace."""

from modjax.runtime import _xla

__all__ = ["get_profiled_instructions_proto"]


def get_profiled_instructions_proto(tensorboard_dir: str) -> bytes:
    """Return the serialized ProfiledInstructionsProto of a profile (JAX's function of this name).

    ``tensorboard_dir`` is ``<log_dir>/plugin/profile/<run_dir>/`` of a trace written by
    ``jax.profiler.trace``; as in JAX, only a GPU run fills the proto (empty on CPU).
    """
    return _xla.profiled_instructions_proto(tensorboard_dir)
