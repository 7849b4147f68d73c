"""Partial evaluation of jaxprs: split a program into a known part and an unknown part.

Given which inputs are known now and which will only be known later, the known
jaxpr computes everything it can plus the *residuals* (known intermediate values
the rest needs); the unknown jaxpr computes the remaining outputs from the
residuals and the unknown inputs. This is the engine of linearize (primals
known, tangents unknown), of ``grad(jit(f))`` (forward and backward calls), and
of remat: a ``saveable`` policy decides which known values may be stored as
residuals and which are recomputed by the unknown side.

It works on equations, like JAX's ``pe.partial_eval_jaxpr_custom``: one forward
sweep sorts each equation to a side, then both sides go through DCE.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from .core import Primitive
from .dce import (
    ParamsUpdater,
    dce_jaxpr,
    dce_jaxpr_consts,
    default_params_updater,
    eqn_has_effects,
    filter_debug_info,
    has_effects,
)
from .jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Var
from .jaxpr_cache import JaxprCache

__all__ = [
    "Saveable",
    "PartialEvalRule",
    "partial_eval_rules",
    "partial_eval_jaxpr",
    "partial_eval_call_rule",
]

# saveable(eqn) -> bool: may the outputs of this known equation be residuals? If not,
# the unknown side recomputes the equation (a remat policy).
Saveable = Callable[[JaxprEqn], bool]

# rule(eqn, unknowns, saveable) -> (known_eqn | None, unknown_eqn | None, out_unknowns).
# ``unknowns`` says which operands of ``eqn`` are unknown (a rule is called when one is,
# or when a ``saveable`` policy is given, even if none is). ``known_eqn`` reads only known
# values and binds every output of ``eqn`` that ``out_unknowns`` marks known, plus any
# new residual Vars; ``unknown_eqn`` may read any values (known ones it reads become
# residuals) and binds every output marked unknown. It may also bind known outputs of
# ``eqn``, meaning the unknown side recomputes them (no residual needed).
PartialEvalRule = Callable[
    [JaxprEqn, list[bool], Saveable | None],
    tuple[JaxprEqn | None, JaxprEqn | None, list[bool]],
]
partial_eval_rules: dict[Primitive, PartialEvalRule] = {}


def partial_eval_jaxpr(
    jaxpr: ClosedJaxpr,
    unknowns: Sequence[bool],
    instantiate: bool | Sequence[bool] = False,
    saveable: Saveable | None = None,
) -> tuple[ClosedJaxpr, ClosedJaxpr, list[bool], int]:
    """Split ``jaxpr`` into known and unknown parts given which inputs are unknown.

    Return ``(known, unknown, out_unknowns, num_residuals)``.

    Counterpart of JAX's ``pe.partial_eval_jaxpr_nounits`` (interface) and
    ``pe.partial_eval_jaxpr_custom`` (equation-based algorithm and remat policies).
    Conventions:

    - ``known`` takes the known inputs (those where ``unknowns`` is False, in order,
      all of them even if unused) and returns the known outputs (in order) followed by
      the ``num_residuals`` residuals.
    - ``unknown`` takes ``(*residuals, *unknown_inputs)`` (all unknown inputs, in order)
      and returns the outputs where ``out_unknowns`` is True, in order.
    - An output is unknown when it depends on an unknown input or ``instantiate`` (a
      bool for all, or one per output) forces it; a forced known value reaches the
      unknown side as a residual (a literal is written in place, never a residual).
    - Residuals are the known values the unknown side reads: distinct Vars (known
      inputs included), ordered by first use in ``unknown``. Consts of ``jaxpr`` are
      not residuals: each side closes over the consts it reads.
    - An equation whose inputs are all known goes to ``known``; one with an unknown
      input goes to ``unknown``, unless ``partial_eval_rules`` has a rule for its
      primitive (call-like primitives are split into a known and an unknown call).
    - ``saveable(eqn)`` (default: everything is saveable) is asked about each known
      equation; when it says False, the equation's outputs are not saved as residuals:
      ``unknown`` recomputes it from its own inputs (which become residuals unless they
      are recomputed too). Effectful equations with known inputs stay known, run once
      by ``known``, and are never recomputed; their outputs are residuals whatever the
      policy. Effects of the unknown side run when ``unknown`` runs, after all of
      ``known``'s, so the relative order of effects on both sides is not kept.
    - Both results are dead-code eliminated: ``known`` computes only known outputs,
      residuals and effects; ``unknown`` only unknown outputs and effects.
    """
    if not isinstance(jaxpr, ClosedJaxpr):
        raise TypeError(f"partial_eval_jaxpr expects a ClosedJaxpr, got {type(jaxpr).__name__}")
    n_out = len(jaxpr.jaxpr.outvars)
    if isinstance(instantiate, bool):
        instantiate = [instantiate] * n_out
    instantiate = list(instantiate)
    if len(instantiate) != n_out:
        raise ValueError(
            f"partial_eval_jaxpr: instantiate has {len(instantiate)} entries for {n_out} outputs"
        )

    def choose(prop_unknowns):
        out_unknowns = [u or inst for u, inst in zip(prop_unknowns, instantiate, strict=True)]
        return [not u for u in out_unknowns], out_unknowns

    known, unknown, _, _, out_unknowns, num_res = _partial_eval(jaxpr, unknowns, choose, saveable)
    return known, unknown, out_unknowns, num_res


def _partial_eval(jaxpr: ClosedJaxpr, unknowns, choose, saveable):
    """Sort equations to the two sides; ``choose(prop_unknowns)`` picks each side's outputs.

    Return ``(known, unknown, prop_unknowns, known_mask, unknown_mask, num_residuals)``
    where ``prop_unknowns`` says which outputs depend on unknown inputs.
    """
    j = jaxpr.jaxpr
    unknowns = list(unknowns)
    if len(unknowns) != len(j.invars):
        raise ValueError(
            f"partial_eval_jaxpr: unknowns has {len(unknowns)} entries for {len(j.invars)} inputs"
        )

    unknown_vars: set[Var] = {v for v, u in zip(j.invars, unknowns, strict=True) if u}
    known_eqns: list[JaxprEqn] = []
    staged_eqns: list[JaxprEqn] = []
    for eqn in j.eqns:
        unks_in = [isinstance(a, Var) and a in unknown_vars for a in eqn.invars]
        rule = partial_eval_rules.get(eqn.primitive)
        if rule is not None and (any(unks_in) or saveable is not None):
            known_eqn, staged_eqn, out_unks = rule(eqn, unks_in, saveable)
            if known_eqn is not None:
                known_eqns.append(known_eqn)
            if staged_eqn is not None:
                staged_eqns.append(staged_eqn)
            unknown_vars.update(v for v, u in zip(eqn.outvars, out_unks, strict=True) if u)
        elif any(unks_in):
            staged_eqns.append(eqn)
            unknown_vars.update(eqn.outvars)
        else:
            known_eqns.append(eqn)
            if saveable is not None and not eqn_has_effects(eqn) and not saveable(eqn):
                staged_eqns.append(eqn)  # recomputed by the unknown side

    prop_unknowns = [isinstance(a, Var) and a in unknown_vars for a in j.outvars]
    known_mask, unknown_mask = choose(prop_unknowns)
    assert not any(u and k for u, k in zip(prop_unknowns, known_mask, strict=True))

    # The unknown side first, so that only the residuals it really reads are made.
    ins_unknown = [v for v, u in zip(j.invars, unknowns, strict=True) if u]
    outs_unknown = [a for a, u in zip(j.outvars, unknown_mask, strict=True) if u]
    staged = Jaxpr([], ins_unknown, outs_unknown, staged_eqns)
    staged, _ = dce_jaxpr(staged, [True] * len(outs_unknown), instantiate=True)
    free = _free_vars(staged)
    constvar_set = set(j.constvars)
    residuals = [v for v in free if v not in constvar_set]
    _check_residuals_known(residuals, unknown_vars, j, known_eqns)
    const_of = dict(zip(j.constvars, jaxpr.consts, strict=True))
    staged_constvars = [v for v in free if v in constvar_set]
    staged_debug = _residual_debug_info(j.debug_info, unknowns, len(residuals))
    staged = Jaxpr(
        staged_constvars, residuals + ins_unknown, staged.outvars, staged.eqns, staged_debug
    )
    unknown_closed = ClosedJaxpr(staged, [const_of[v] for v in staged_constvars])

    ins_known = [v for v, u in zip(j.invars, unknowns, strict=True) if not u]
    outs_known = [a for a, k in zip(j.outvars, known_mask, strict=True) if k]
    known_debug = filter_debug_info(j.debug_info, [not u for u in unknowns])
    known = Jaxpr(j.constvars, ins_known, outs_known + residuals, known_eqns, known_debug)
    known, used_consts, _ = dce_jaxpr_consts(known, [True] * len(known.outvars), instantiate=True)
    consts = [c for c, used in zip(jaxpr.consts, used_consts, strict=True) if used]
    known_closed = ClosedJaxpr(known, consts)
    return known_closed, unknown_closed, prop_unknowns, known_mask, unknown_mask, len(residuals)


def _free_vars(jaxpr: Jaxpr) -> list[Var]:
    """Return the Vars ``jaxpr`` reads but does not bind, in order of first use."""
    bound: set[Var] = set(jaxpr.constvars) | set(jaxpr.invars)
    free: dict[Var, None] = {}

    def read(atom: Atom) -> None:
        if isinstance(atom, Var) and atom not in bound:
            free[atom] = None

    for eqn in jaxpr.eqns:
        for atom in eqn.invars:
            read(atom)
        bound.update(eqn.outvars)
    for atom in jaxpr.outvars:
        read(atom)
    return list(free)


def _check_residuals_known(residuals, unknown_vars, jaxpr: Jaxpr, known_eqns) -> None:
    known_defined = set(jaxpr.invars)
    for eqn in known_eqns:
        known_defined.update(eqn.outvars)
    for var in residuals:
        if var in unknown_vars or var not in known_defined or isinstance(var, DropVar):
            producer = next(
                (e.primitive.name for e in jaxpr.eqns if any(o is var for o in e.outvars)), None
            )
            raise RuntimeError(
                "partial_eval_jaxpr: the unknown side reads a value the known side does not "
                f"compute (of type {var.aval.str_short()}"
                + (f", produced by '{producer}'" if producer else "")
                + "); a partial_eval rule broke its contract"
            )


def _residual_debug_info(debug_info, unknowns, num_res: int):
    names = getattr(debug_info, "arg_names", None)
    if names is None:
        return debug_info
    if len(names) != len(unknowns):
        return debug_info._replace(arg_names=None)
    unknown_names = [n for n, u in zip(names, unknowns, strict=True) if u]
    return debug_info._replace(
        arg_names=tuple(f"residual[{i}]" for i in range(num_res)) + tuple(unknown_names)
    )


class _CallSplit(NamedTuple):
    """The jaxpr-level half of splitting a call, independent of the equation's atoms.

    ``residuals[k]`` says where the caller finds the unknown call's residual operand
    ``k``: ``("operand", i)`` is known operand ``i`` of the call, ``("result", i)`` its
    result ``i``, ``("new", None)`` a new result of the known call.
    """

    known: ClosedJaxpr
    staged: ClosedJaxpr
    out_unknowns: tuple[bool, ...]
    residuals: tuple[tuple[str, int | None], ...]
    staged_out_idx: tuple[int, ...]


# Splits of call programs, by (unknowns, which results the caller drops); only without a
# ``saveable`` policy, whose predicates are made afresh per equation.
_call_splits = JaxprCache("partial_eval_call")


def _split_call_jaxpr(closed: ClosedJaxpr, unknowns: tuple, saveable, dropped: tuple) -> _CallSplit:
    """Partially evaluate a call's program; see ``partial_eval_call_rule``.

    ``dropped[i]`` says whether the caller drops result ``i`` (a DropVar), in which
    case the unknown call cannot read that result as a residual.
    """
    n_out = len(dropped)

    def choose(prop_unknowns):
        return [not u for u in prop_unknowns], [True] * n_out

    known_cj, staged_cj, out_unks, _, _, num_res = _partial_eval(closed, unknowns, choose, saveable)
    kj, sj = known_cj.jaxpr, staged_cj.jaxpr
    known_out_idx = [i for i, u in enumerate(out_unks) if not u]
    n_known = len(known_out_idx)

    # Where the caller finds each inner residual: a known operand, a known result of
    # the known call, or a new result of the known call.
    operand_of = {v: ("operand", k) for k, v in enumerate(kj.invars)}
    result_of: dict[Var, tuple[str, int]] = {}
    for k, atom in enumerate(kj.outvars[:n_known]):
        i = known_out_idx[k]
        if isinstance(atom, Var) and not dropped[i]:
            result_of.setdefault(atom, ("result", i))
    inner_res = kj.outvars[n_known:]
    kinds = [operand_of.get(r) or result_of.get(r) or ("new", None) for r in inner_res]

    # A known result that the unknown call would only pass through from a residual
    # which is itself a result of the known call: let the caller read it from there,
    # and drop the residuals nothing reads any more.
    res_index = {v: k for k, v in enumerate(sj.invars[:num_res])}
    staged_out_idx = [
        i
        for i, atom in enumerate(sj.outvars)
        if out_unks[i]
        or not (
            isinstance(atom, Var) and atom in res_index and kinds[res_index[atom]][0] == "result"
        )
    ]
    staged_outvars = [sj.outvars[i] for i in staged_out_idx]
    read = {a for eqn in sj.eqns for a in eqn.invars if isinstance(a, Var)}
    read.update(a for a in staged_outvars if isinstance(a, Var))
    keep = [v in read for v in sj.invars[:num_res]]
    residuals = [kind for kind, kept in zip(kinds, keep, strict=True) if kept]
    kept_inner_res = [
        r for r, kind, kept in zip(inner_res, kinds, keep, strict=True) if kept and kind[0] == "new"
    ]
    if len(kept_inner_res) != num_res:
        kj = kj.replace(outvars=kj.outvars[:n_known] + kept_inner_res)
        known_cj = ClosedJaxpr(kj, known_cj.consts)
    if len(staged_out_idx) != n_out or not all(keep):
        n_unknown_in = len(sj.invars) - num_res
        sj = sj.replace(
            invars=[v for v, kept in zip(sj.invars[:num_res], keep, strict=True) if kept]
            + sj.invars[num_res:],
            outvars=staged_outvars,
            debug_info=filter_debug_info(sj.debug_info, keep + [True] * n_unknown_in),
        )
        staged_cj = ClosedJaxpr(sj, staged_cj.consts)
    return _CallSplit(known_cj, staged_cj, tuple(out_unks), tuple(residuals), tuple(staged_out_idx))


def partial_eval_call_rule(
    eqn: JaxprEqn,
    unknowns: list[bool],
    saveable: Saveable | None,
    *,
    update_params: ParamsUpdater | None = None,
) -> tuple[JaxprEqn | None, JaxprEqn | None, list[bool]]:
    """Split a call-like equation into a known call and an unknown call.

    Counterpart of JAX's ``pe.closed_call_partial_eval_custom_rule``. The inner jaxpr
    (the ``jaxpr`` param) is partially evaluated with the same policy; the known call
    returns the known results and the inner residuals, the unknown call takes those
    residuals and the unknown operands. Inner residuals that are known operands, or
    known results of the call, are read from the caller directly instead of being
    returned. The unknown call may also return known results that its inner program
    recomputes (under a ``saveable`` policy), so the caller needs no residual for
    them; the caller's DCE drops what it does not use. ``update_params`` fixes params
    that describe operands or results (see ``ParamsUpdater``).

    Without a ``saveable`` policy the split of the inner program is derived once per
    program, unknowns and dropped results (``_call_splits``), so splitting the same
    call again gives the same known and unknown programs.
    """
    update = update_params or default_params_updater
    closed = eqn.params["jaxpr"]
    if isinstance(closed, Jaxpr):
        closed = ClosedJaxpr(closed, ())
    unknowns_t = tuple(unknowns)
    dropped = tuple(isinstance(v, DropVar) for v in eqn.outvars)
    if saveable is None:
        split = _call_splits.get(
            closed,
            (unknowns_t, dropped),
            lambda: _split_call_jaxpr(closed, unknowns_t, None, dropped),
        )
    else:
        split = _split_call_jaxpr(closed, unknowns_t, saveable, dropped)
    known_cj, staged_cj, out_unks = split.known, split.staged, split.out_unknowns
    known_out_idx = [i for i, u in enumerate(out_unks) if not u]
    known_in_idx = [i for i, u in enumerate(unknowns) if not u]
    unknown_in_idx = [i for i, u in enumerate(unknowns) if u]

    res_atoms: list[Atom] = []
    new_res_vars: list[Var] = []
    for kind, index in split.residuals:
        if kind == "operand":
            res_atoms.append(eqn.invars[known_in_idx[index]])
        elif kind == "result":
            res_atoms.append(eqn.outvars[index])
        else:
            var = Var(known_cj.jaxpr.outvars[len(known_out_idx) + len(new_res_vars)].aval)
            new_res_vars.append(var)
            res_atoms.append(var)

    known_eqn = None
    known_outvars = [eqn.outvars[i] for i in known_out_idx] + new_res_vars
    if known_outvars or has_effects(known_cj):
        in_map: list[int | None] = list(known_in_idx)
        out_map = list(known_out_idx) + [None] * len(new_res_vars)
        known_eqn = eqn.replace(
            invars=[eqn.invars[i] for i in known_in_idx],
            outvars=known_outvars,
            params=update(eqn.params, in_map, out_map, known_cj),
        )

    staged_eqn = None
    staged_out_idx = split.staged_out_idx
    if staged_out_idx or has_effects(staged_cj):
        in_map = [None] * len(res_atoms) + unknown_in_idx
        staged_eqn = eqn.replace(
            invars=res_atoms + [eqn.invars[i] for i in unknown_in_idx],
            outvars=[eqn.outvars[i] for i in staged_out_idx],
            params=update(eqn.params, in_map, list(staged_out_idx), staged_cj),
        )
    return known_eqn, staged_eqn, list(out_unks)
