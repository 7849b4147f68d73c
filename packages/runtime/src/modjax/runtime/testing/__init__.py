"""Check every rule of a primitive against its implementation (no JAX counterpart).

``check_primitive(prim, cases)`` runs hypothesis over inputs and checks, for
each rule the primitive has, that it agrees with the primitive's eager
implementation: abstract evaluation, the compiled lowering, the JVP (against
central finite differences), the transpose (the dot-product test against the
JVP), the batching rule (against a loop over the batch) and the printed
equation (it parses back). A failure shrinks to a minimal case and raises
``RuleCheckError`` naming the primitive and the rule at fault.
"""

from ._cases import Case, default_cases
from ._check import MODES, RuleCheckError, check_primitive, rules_of

__all__ = ["Case", "MODES", "RuleCheckError", "check_primitive", "default_cases", "rules_of"]
