"""Check every rule of a primitive against its implementation (no JAX counterpart).

modjax-runtime's ``modjax.runtime.testing`` (the lowest package that sees every rule
table and ``jit``), re-exported: ``check_primitive(prim, cases)`` runs hypothesis over
inputs and checks each rule the primitive has against its eager implementation.
Needs ``modjax[testing]`` (hypothesis).
"""

from modjax.runtime.testing import (
    MODES,
    Case,
    RuleCheckError,
    check_primitive,
    default_cases,
    rules_of,
)

__all__ = ["Case", "MODES", "RuleCheckError", "check_primitive", "default_cases", "rules_of"]
