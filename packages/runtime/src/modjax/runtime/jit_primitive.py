"""``jit_p``: the call primitive a jitted function binds under a transformation.

Under an outer jit, ``make_jaxpr``, grad or vmap, calling a jitted function binds
``jit_p`` with its traced program (params ``jaxpr``, consts as leading operands,
``name``, ``donated_invars``, ``keep_unused``, ``inline``): a nested jit is one call
equation, lowered as a ``func.call`` (never compiled on its own). Its eager impl
compiles the jaxpr once per argument signature and runs it.
"""

from __future__ import annotations

from modjax.lowering import call_lowering, register_lowering
from modjax.tracecore import core
from modjax.tracecore.call import check_call_operands, register_call_rules
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.jaxpr_cache import JaxprCache

from .arguments import leaf_aval
from .debugging import disable_jit
from .executable import compile_jaxpr
from .executable import placement as _placement
from .extended import checked_run

__all__ = ["jit_p", "jit_update_params"]

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
    if disable_jit.option.value:
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
