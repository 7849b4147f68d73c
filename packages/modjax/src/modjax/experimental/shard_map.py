"""``jax.experimental.shard_map``: the former home of ``shard_map`` (from ``modjax.sharding``)."""

from modjax.sharding import shard_map

__all__ = ["shard_map"]
