"""Dead-code elimination of jaxprs.

One backward sweep: an equation is kept when one of its outputs is used or it
has an effect. Higher-order primitives register a rule in ``dce_rules`` to prune
their inner programs (the generic call rule drops the call's unused outputs and
operands); an equation without a rule that holds jaxprs is kept whole, with its
inner jaxprs cleaned of dead code that their outputs do not need.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .core import Primitive
from .jaxpr import ClosedJaxpr, Jaxpr, JaxprEqn, Literal, Var, map_subjaxprs
from .jaxpr_cache import JaxprCache, has_tracers

__all__ = [
    "DceRule",
    "dce_rules",
    "dce_jaxpr",
    "dce_jaxpr_consts",
    "dce_closed_jaxpr",
    "dce_call_rule",
    "has_effects",
    "filter_debug_info",
    "eqn_has_effects",
    "ParamsUpdater",
    "default_params_updater",
]

# rule(used_outputs, eqn) -> (used_inputs, new_eqn or None). ``used_inputs`` is indexed
# like ``eqn.invars`` and says which of them ``new_eqn`` reads; ``new_eqn`` may bind
# fewer outputs than ``eqn`` (only used ones need to stay) or be None to drop it.
DceRule = Callable[[list[bool], JaxprEqn], tuple[list[bool], JaxprEqn | None]]
dce_rules: dict[Primitive, DceRule] = {}

# updater(params, in_map, out_map, new_jaxpr) -> params for a call-like equation whose
# operands / results were rearranged by a pass: ``in_map[i]`` is the index of the
# original operand that new operand ``i`` is (None for a new one, e.g. a residual), and
# likewise ``out_map`` for results. Call-like primitives whose params describe their
# operands (shardings, donation) register one with ``register_call_rules``.
ParamsUpdater = Callable[[dict, list, list, ClosedJaxpr], dict]


def default_params_updater(params: dict, in_map, out_map, new_jaxpr: ClosedJaxpr) -> dict:
    """Return ``params`` with the ``jaxpr`` param replaced by ``new_jaxpr``.

    The default ``ParamsUpdater`` (jax's ``pe.partial_eval_jaxpr_custom_rules`` take a
    ``params_updater`` playing the same role).
    """
    return {**params, "jaxpr": new_jaxpr}


def has_effects(jaxpr: Jaxpr | ClosedJaxpr) -> bool:
    """Tell whether running ``jaxpr`` has an effect at any depth (jax's ``jaxpr.effects``)."""
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    return any(eqn.effects for eqn in jaxpr.eqns)


def eqn_has_effects(eqn: JaxprEqn) -> bool:
    """Tell whether ``eqn`` has an effect: its primitive's or its jaxprs' (``pe.has_effects``)."""
    return bool(eqn.effects)


def dce_jaxpr(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool]]:
    """Prune ``jaxpr`` to the outputs marked used; return it and which invars it reads.

    Counterpart of jax's ``pe.dce_jaxpr``. The new jaxpr returns only the outputs
    where ``used_outputs`` is True and keeps only the equations they need, plus
    every effectful one. Its invars are those it reads, and also those where
    ``instantiate`` (a bool for all, or one per invar) is True; the returned list
    says, per original invar, whether it is an invar of the new jaxpr. Constvars
    are all kept (see ``dce_jaxpr_consts`` to prune them too).
    """
    new_jaxpr, _, used_inputs = _dce(jaxpr, used_outputs, instantiate, prune_consts=False)
    return new_jaxpr, used_inputs


def dce_jaxpr_consts(
    jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[Jaxpr, list[bool], list[bool]]:
    """Like ``dce_jaxpr`` but prune unused constvars too (jax's ``pe.dce_jaxpr_consts``).

    Return the new jaxpr, which constvars it keeps and which invars it keeps.
    """
    return _dce(jaxpr, used_outputs, instantiate, prune_consts=True)


def dce_closed_jaxpr(
    jaxpr: ClosedJaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
) -> tuple[ClosedJaxpr, list[bool]]:
    """Apply ``dce_jaxpr`` to a ClosedJaxpr, dropping the consts it no longer reads.

    Return the new ClosedJaxpr and which invars it keeps (jax's ``pe.dce_jaxpr`` on the
    inner jaxpr, with the consts filtered alongside).
    """
    new_jaxpr, used_consts, used_inputs = _dce(
        jaxpr.jaxpr, used_outputs, instantiate, prune_consts=True
    )
    if new_jaxpr is jaxpr.jaxpr:
        return jaxpr, used_inputs
    consts = [c for c, used in zip(jaxpr.consts, used_consts, strict=True) if used]
    return ClosedJaxpr(new_jaxpr, consts), used_inputs


def _dce(jaxpr: Jaxpr, used_outputs, instantiate, *, prune_consts: bool):
    used_outputs = list(used_outputs)
    if len(used_outputs) != len(jaxpr.outvars):
        raise ValueError(
            f"dce_jaxpr: used_outputs has {len(used_outputs)} entries for "
            f"{len(jaxpr.outvars)} outputs"
        )
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * len(jaxpr.invars)
    instantiate = list(instantiate)
    if len(instantiate) != len(jaxpr.invars):
        raise ValueError(
            f"dce_jaxpr: instantiate has {len(instantiate)} entries for {len(jaxpr.invars)} inputs"
        )

    used: set[Var] = set()
    outvars = [v for v, u in zip(jaxpr.outvars, used_outputs, strict=True) if u]
    used.update(v for v in outvars if not isinstance(v, Literal))

    new_eqns: list[JaxprEqn] = []
    changed = len(outvars) != len(jaxpr.outvars)
    for eqn in reversed(jaxpr.eqns):
        eqn_used = [v in used for v in eqn.outvars]
        rule = dce_rules.get(eqn.primitive, _default_rule)
        used_inputs, new_eqn = rule(eqn_used, eqn)
        if new_eqn is not eqn:
            changed = True
        if new_eqn is None:
            continue
        new_eqns.append(new_eqn)
        used.update(
            v
            for v, u in zip(eqn.invars, used_inputs, strict=True)
            if u and not isinstance(v, Literal)
        )
    new_eqns.reverse()

    used_inputs = [v in used or inst for v, inst in zip(jaxpr.invars, instantiate, strict=True)]
    used_consts = [v in used or not prune_consts for v in jaxpr.constvars]
    if not changed and all(used_inputs) and all(used_consts):
        return jaxpr, used_consts, used_inputs  # unchanged: keep the object (and its identity)
    invars = [v for v, u in zip(jaxpr.invars, used_inputs, strict=True) if u]
    constvars = [v for v, u in zip(jaxpr.constvars, used_consts, strict=True) if u]
    debug_info = filter_debug_info(jaxpr.debug_info, used_inputs)
    new_jaxpr = Jaxpr(constvars, invars, outvars, new_eqns, debug_info)
    return new_jaxpr, used_consts, used_inputs


def filter_debug_info(debug_info, kept: Sequence[bool]):
    """Keep the argument names of kept invars only (jax's ``DebugInfo.filter_arg_names``)."""
    names = getattr(debug_info, "arg_names", None)
    if names is None or all(kept):
        return debug_info
    if len(names) != len(kept):
        return debug_info._replace(arg_names=None)
    return debug_info._replace(arg_names=tuple(n for n, k in zip(names, kept, strict=True) if k))


def _default_rule(used_outputs: list[bool], eqn: JaxprEqn):
    """Drop an equation nobody reads unless it has an effect; else keep it whole."""
    if not any(used_outputs) and not eqn_has_effects(eqn):
        return [False] * len(eqn.invars), None
    # Without a rule we cannot change the primitive's signature, but dead code inside
    # the jaxprs it holds (whose results all stay) can go.
    changed = False

    def clean(jaxpr):
        nonlocal changed
        new = _dce_keep_signature(jaxpr)
        changed = changed or new is not jaxpr
        return new

    params = map_subjaxprs(eqn.params, clean)
    return [True] * len(eqn.invars), eqn.replace(params=params) if changed else eqn


def _dce_keep_signature(jaxpr: Jaxpr | ClosedJaxpr) -> Jaxpr | ClosedJaxpr:
    inner = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    new, _ = dce_jaxpr(inner, [True] * len(inner.outvars), instantiate=True)
    if new is inner:
        return jaxpr
    return jaxpr.replace(jaxpr=new) if isinstance(jaxpr, ClosedJaxpr) else new


# The pruned program of a call is derived once per program and used outputs: the
# caches downstream (the transpose of the call, its executable) key on its identity.
_pruned_calls = JaxprCache("dce_call")


def dce_call_rule(
    used_outputs: list[bool], eqn: JaxprEqn, *, update_params: ParamsUpdater | None = None
) -> tuple[list[bool], JaxprEqn | None]:
    """DCE rule for a call-like equation whose ``jaxpr`` param is applied to its operands.

    Counterpart of jax's ``pe.dce_jaxpr_closed_call_rule``: prune the inner jaxpr to
    the used outputs, drop the operands (and consts) it no longer reads, and drop
    the equation when nothing is used and it has no effect. ``update_params`` fixes
    params that describe operands or results (see ``ParamsUpdater``).
    """
    closed: ClosedJaxpr = eqn.params["jaxpr"]
    if not any(used_outputs) and not has_effects(closed):
        return [False] * len(eqn.invars), None
    new_closed, used_inputs = _pruned_calls.get(
        closed,
        tuple(used_outputs),
        lambda: dce_closed_jaxpr(closed, used_outputs),
        lambda value: not has_tracers(value[0].consts),
    )
    used_inputs = list(used_inputs)
    if new_closed is closed:
        return used_inputs, eqn
    in_map = [i for i, u in enumerate(used_inputs) if u]
    out_map = [i for i, u in enumerate(used_outputs) if u]
    params = (update_params or default_params_updater)(eqn.params, in_map, out_map, new_closed)
    new_eqn = eqn.replace(
        invars=[eqn.invars[i] for i in in_map],
        outvars=[eqn.outvars[i] for i in out_map],
        params=params,
    )
    return used_inputs, new_eqn
