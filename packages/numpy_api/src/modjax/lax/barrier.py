"""``optimization_barrier``: values XLA may not move computations across."""

from __future__ import annotations

from functools import partial

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import hlo, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.core import Primitive
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

__all__ = ["optimization_barrier", "optimization_barrier_p"]

optimization_barrier_p = Primitive("optimization_barrier")
optimization_barrier_p.multiple_results = True
optimization_barrier_p.def_abstract_eval(lambda *avals: list(avals))
optimization_barrier_p.def_impl(partial(apply_primitive, optimization_barrier_p))


def _lowering(ctx, *operands):
    return list(hlo.OptimizationBarrierOp(list(operands)).results)


def _jvp(primals, tangents):
    # The tangents get a barrier of their own, so the derivative is held in place too.
    live = [i for i, t in enumerate(tangents) if type(t) is not Zero]
    tangents_out = list(tangents)
    if live:
        held = optimization_barrier_p.bind(*(tangents[i] for i in live))
        for i, t in zip(live, held, strict=True):
            tangents_out[i] = t
    return optimization_barrier_p.bind(*primals), tangents_out


def _transpose(cts, *operands):
    # The identity: each cotangent flows back unchanged.
    return [ct if is_undefined_primal(x) else None for ct, x in zip(cts, operands, strict=True)]


def _batch(args, dims):
    return optimization_barrier_p.bind(*args), list(dims)


register_lowering(optimization_barrier_p, _lowering)
jvp_rules[optimization_barrier_p] = _jvp
transpose_rules[optimization_barrier_p] = _transpose
batching_rules[optimization_barrier_p] = _batch


def optimization_barrier(operand):
    """Return ``operand`` (any pytree of arrays) unchanged, with a barrier XLA does not
    move computations across (jax.lax.optimization_barrier): work that reads the
    outputs is not scheduled before the inputs are all computed."""
    leaves, treedef = tree_flatten(operand)
    return tree_unflatten(treedef, optimization_barrier_p.bind(*leaves))
