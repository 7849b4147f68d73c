"""modjax.runtime.export: functions as serialized StableHLO, in JAX's format (``jax.export``).

``export(jit(f))(*specs)`` gives an :class:`Exported`; ``Exported.serialize()``
writes JAX 0.10's FlatBuffer format (read and written by ``flatbuf``, without the
``flatbuffers`` package) and ``deserialize`` reads it back, so artifacts move
between modjax and JAX in both directions. ``Exported.call`` runs one.
"""

from .exported import (
    DisabledSafetyCheck,
    Exported,
    call,
    default_export_platform,
    deserialize,
    export,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from .serialization import register_namedtuple_serialization, register_pytree_node_serialization
from .shape_poly import SymbolicScope, is_symbolic_dim, symbolic_args_specs, symbolic_shape

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
    "SymbolicScope",
]
