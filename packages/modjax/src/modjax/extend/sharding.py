"""Shardings for extension authors (``jax.extend.sharding``): ``GSPMDSharding``.

The conversions between shardings and serialized XLA protos are not provided.
"""

from __future__ import annotations

from modjax.sharding import GSPMDSharding

from .._unsupported import Unsupported

__all__ = [
    "GSPMDSharding",
    "get_hlo_sharding_from_serialized_proto",
    "get_op_sharding_from_serialized_proto",
    "get_serialized_proto_from_hlo_sharding",
]

_PROTOS = "serialized OpSharding protos are not exchanged by modjax"
get_hlo_sharding_from_serialized_proto = Unsupported(
    "jax.extend.sharding.get_hlo_sharding_from_serialized_proto", _PROTOS
)
get_op_sharding_from_serialized_proto = Unsupported(
    "jax.extend.sharding.get_op_sharding_from_serialized_proto", _PROTOS
)
get_serialized_proto_from_hlo_sharding = Unsupported(
    "jax.extend.sharding.get_serialized_proto_from_hlo_sharding", _PROTOS
)
