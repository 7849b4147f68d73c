"""``jit_p``: the call primitive a jitted function binds under a transformation.

Under an outer jit, ``make_jaxpr``, grad or vmap, calling a jitted function binds
``jit_p`` with its traced program (params ``jaxpr``, consts as leading operands,
``name``, ``donated_invars``, ``keep_unused``, ``inline``): a nested jit is one call
equation, lowered as a ``func.call`` (never compiled on its own). Its eager impl
compiles the jaxpr once per argument signature and runs it.

All of ``jit_p``'s rules are registered here, next to it: tracecore's generic call
rules (DCE, partial evaluation, printing), lowering's ``call_lowering``, autodiff's
JVP/transpose call rules and batching's call rule, each keeping
``donated_invars`` one flag per operand. So ``grad(jit(f))`` is a forward call
and a backward call, ``jit(grad(f))`` one program, and ``vmap(jit(f))`` batches
the inner program once. Partial evaluation never donates to the forward call an
operand that the backward call still reads.
"""

from __future__ import annotations

from modjax.autodiff import register_call_rules as register_autodiff_call_rules
from modjax.batching import register_call_batching
from modjax.lowering import call_lowering, register_lowering
from modjax.tracecore import core
from modjax.tracecore.call import check_call_operands, register_call_rules
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, Literal
from modjax.tracecore.jaxpr_cache import JaxprCache
from modjax.tracecore.partial_eval import partial_eval_rules
from modjax.tracecore.state import register_call_discharge

from .arguments import leaf_aval
from .debugging import disable_jit
from .executable import compile_jaxpr
from .executable import placement as _placement
from .extended import checked_run

__all__ = ["jit_p", "jit_update_params", "jit_batching_update_params"]

jit_p = core.Primitive("jit")
jit_p.multiple_results = True


def _jit_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, **_):
    check_call_operands(jit_p, in_avals, jaxpr)
    return jaxpr.out_avals


# Executables of jit equations run eagerly (outside any jit), per jaxpr object: held
# weakly on the jaxpr, so they go with the program (and the closure it came from).
_impl_cache = JaxprCache("jit_impl")


def _jit_impl(*args, jaxpr: ClosedJaxpr, name: str, donated_invars, keep_unused, inline):
    """Run a ``jit`` equation on concrete values: compile its jaxpr (once) and execute it."""
    if disable_jit.option.value:  # type: ignore[attr-defined]
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
    device, committed = _placement(args)
    avals = tuple(leaf_aval(x) for x in args)
    executable = _impl_cache.get(
        jaxpr,
        (avals, device, committed, donated_invars, keep_unused),
        lambda: compile_jaxpr(
            jaxpr,
            device,
            name=name,
            donated=donated_invars,
            keep_unused=keep_unused,
            committed=committed,
        ),
    )
    return checked_run(executable, jaxpr, args, executable.place(args))


def jit_update_params(params, in_map, out_map, new_jaxpr):
    donated = params["donated_invars"]
    return {
        **params,
        "jaxpr": new_jaxpr,
        "donated_invars": tuple(False if i is None else donated[i] for i in in_map),
    }


jit_p.def_abstract_eval(_jit_abstract_eval)
jit_p.def_impl(_jit_impl)
register_call_rules(jit_p, update_params=jit_update_params)
register_lowering(jit_p, call_lowering)
# References crossing the call: its program is discharged, consts first (tracecore's state).
register_call_discharge(
    jit_p,
    lambda params, n, jaxpr: {
        **params,
        "jaxpr": jaxpr,
        "donated_invars": (False,) * n + tuple(params["donated_invars"]),
    },
)


# --- autodiff's and batching's rules (runtime sees both) -------------------------------------


def jit_batching_update_params(params, in_dims, out_dims, new_jaxpr):
    """Batching's updater: consts of the batched program are new leading operands."""
    donated = params["donated_invars"]
    extra = len(in_dims) - len(donated)
    return {**params, "jaxpr": new_jaxpr, "donated_invars": (False,) * extra + tuple(donated)}


register_autodiff_call_rules(jit_p, jit_update_params)
register_call_batching(jit_p, jit_batching_update_params)

_split_jit = partial_eval_rules[jit_p]  # tracecore's generic rule, registered above


def _jit_partial_eval(eqn, unknowns, saveable):
    """Split a jit equation; never donate to the known call what the unknown call reads.

    A known operand the backward call needs as a residual is passed to it
    directly, so the forward call must leave its buffer alone.
    """
    known, staged, out_unknowns = _split_jit(eqn, unknowns, saveable)
    if known is not None and staged is not None and any(known.params["donated_invars"]):
        read_later = {id(a) for a in staged.invars if type(a) is not Literal}
        donated = tuple(
            d and id(v) not in read_later
            for v, d in zip(known.invars, known.params["donated_invars"], strict=True)
        )
        known = known.replace(params={**known.params, "donated_invars": donated})
    return known, staged, out_unknowns


partial_eval_rules[jit_p] = _jit_partial_eval
