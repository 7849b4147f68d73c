"""``jax.experimental.shard_alike`` (modjax-sharding's ``shard_alike``)."""

from modjax.sharding.shard_alike import shard_alike

__all__ = ["shard_alike"]
