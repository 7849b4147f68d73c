"""``jax.extend.lowering``: the MLIR context type, the lowering rule context and the
registry of upstream dialects (modjax-lowering's)."""

from modjax.lowering import LoweringRuleContext
from modjax.lowering._mlir import JaxIrContext
from modjax.lowering._mlir import upstream_dialects as _upstream_dialects

__all__ = ["JaxIrContext", "LoweringRuleContext", "upstream_dialects"]

#: MLIR's upstream dialects that jaxlib links (an ``ir.DialectRegistry``).
upstream_dialects = _upstream_dialects()
