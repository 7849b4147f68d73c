"""``dce_sink``: keep values alive through dead-code elimination.

``dce_sink[prevent_mlir_dce]`` has no results and the unordered ``NoDCE`` effect, so
DCE keeps it and the computation of its operand. With ``prevent_mlir_dce`` it also
lowers to XLA's side-effecting ``dce_sink`` custom call, as JAX does, so the compiler
keeps the value too; otherwise it lowers to nothing.
"""

from __future__ import annotations

from modjax.autodiff import jvp_rules
from modjax.batching import batching_rules
from modjax.lowering import custom_call, register_lowering
from modjax.tracecore.core import Primitive
from modjax.tracecore.effects import Effect
from modjax.tracecore.tree_util import tree_leaves

__all__ = ["dce_sink", "dce_sink_p"]

no_dce_effect = Effect("NoDCE")

dce_sink_p = Primitive("dce_sink")
dce_sink_p.multiple_results = True
dce_sink_p.def_impl(lambda x, **_: [])
dce_sink_p.def_abstract_eval(lambda x, **_: [])
dce_sink_p.def_effects(lambda **_: {no_dce_effect})


def _jvp(primals, tangents, **params):
    return dce_sink_p.bind(*primals, **params), []


def _batching(args, dims, **params):
    return dce_sink_p.bind(*args, **params), []


def _lowering(ctx, x, *, prevent_mlir_dce):
    if prevent_mlir_dce:
        layout = tuple(range(ctx.avals_in[0].ndim - 1, -1, -1))
        custom_call(
            "dce_sink", [], [x], has_side_effect=True, operand_layouts=[layout], result_layouts=[]
        )
    return []


jvp_rules[dce_sink_p] = _jvp
batching_rules[dce_sink_p] = _batching
register_lowering(dce_sink_p, _lowering)


def dce_sink(val, *, prevent_mlir_dce: bool = False) -> None:
    """Keep every leaf of ``val`` from being removed as dead code (jax.lax.dce_sink).

    Returns None. With ``prevent_mlir_dce`` the compiled program keeps the values
    too (a side-effecting custom call), not only the traced program.
    """
    for leaf in tree_leaves(val):
        dce_sink_p.bind(leaf, prevent_mlir_dce=bool(prevent_mlir_dce))
