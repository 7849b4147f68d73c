"""``jax.experimental.buffer_callback`` (modjax-numpy's ``lax.buffer_callback``) and jaxlib's
buffer types: ``Buffer``, ``ExecutionContext``, ``ExecutionStage``."""

from modjax.lax.buffer_callback import buffer_callback
from modjax.runtime._xla import FfiBuffer as Buffer
from modjax.runtime._xla import FfiExecutionContext as ExecutionContext
from modjax.runtime._xla import FfiExecutionStage as ExecutionStage

__all__ = ["Buffer", "ExecutionContext", "ExecutionStage", "buffer_callback"]
