"""modjax.custom_batching: functions with batching rules of their own (jax.custom_batching)."""

from modjax.batching.custom_batching import custom_vmap
from modjax.lax.control_flow.sequential_vmap import sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
