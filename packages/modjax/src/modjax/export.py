"""``jax.export``: functions as serialized StableHLO in JAX's format (from ``modjax.runtime``)."""

from modjax.runtime.export import (
    DisabledSafetyCheck,
    Exported,
    call,
    default_export_platform,
    deserialize,
    export,
    is_symbolic_dim,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
    register_namedtuple_serialization,
    register_pytree_node_serialization,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "call",
    "default_export_platform",
    "deserialize",
    "export",
    "is_symbolic_dim",
    "maximum_supported_calling_convention_version",
    "minimum_supported_calling_convention_version",
    "register_namedtuple_serialization",
    "register_pytree_node_serialization",
    "symbolic_args_specs",
    "symbolic_shape",
]
