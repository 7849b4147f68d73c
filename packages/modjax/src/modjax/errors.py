"""The exceptions modjax raises for user mistakes (the counterpart of ``jax.errors``).

Names, bases and situations are JAX's: ``JAXTypeError`` and ``JAXIndexError``
are the bases of the tracer errors; ``JaxRuntimeError`` is jaxlib's own class
for failures XLA reports at run time (an allocation that does not fit, a buffer
donated twice); ``JaxprTypeError`` comes from ``check_jaxpr`` and the jaxpr parser.
"""

from modjax.numpy._indexing import NonConcreteBooleanIndexError
from modjax.runtime.executable import JaxRuntimeError
from modjax.tracecore.check import JaxprTypeError
from modjax.tracecore.core import (
    ConcretizationTypeError,
    InconclusiveDimensionOperation,
    JAXIndexError,
    JAXTypeError,
    KeyReuseError,
    TracerArrayConversionError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    UnexpectedTracerError,
)

__all__ = [
    "ConcretizationTypeError",
    "InconclusiveDimensionOperation",
    "JAXIndexError",
    "JAXTypeError",
    "JaxRuntimeError",
    "JaxprTypeError",
    "KeyReuseError",
    "NonConcreteBooleanIndexError",
    "TracerArrayConversionError",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "UnexpectedTracerError",
]
