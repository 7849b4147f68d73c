"""The exceptions modjax raises for user mistakes (the counterpart of ``jax.errors``)."""

from modjax.numpy._indexing import NonConcreteBooleanIndexError
from modjax.tracecore.core import (
    ConcretizationTypeError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
