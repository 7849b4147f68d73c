"""Transformation rules of ``cond_p``: JVP, partial evaluation, transpose, batching and DCE.

``cond_p.bind(index, *operands, branches=...)`` (see ``conditionals``) runs one of
several programs that share a signature. Every rule transforms all branches the
same way and then makes them agree again: the union of nonzero tangents, of
unknown outputs, of nonzero cotangents and of batched outputs is forced on every
branch (zeros or broadcasts where a branch has none), so the new ``cond_p`` is
well typed. The index is an integer: it has no tangent, is never linear, and is
known whenever anything is (an unknown index stages the whole equation).

Derived branches are memoized per tuple of branches and flags, so the eager
executables keyed on the ``branches`` param are compiled once per program.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

from modjax.autodiff import (
    Zero,
    is_undefined_primal,
    jvp_jaxpr,
    jvp_rules,
    stop_gradient,
    tangent_aval,
    transpose_jaxpr,
    transpose_rules,
)
from modjax.batching import (
    AxisData,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    bdim_at_front,
    uses_axis_primitives,
)
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.dce import dce_closed_jaxpr, dce_rules, eqn_has_effects, has_effects
from modjax.tracecore.effects import effects_by_name
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, JaxprEqn, Var
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.partial_eval import partial_eval_jaxpr, partial_eval_rules
from modjax.tracecore.pvary import pvary_p
from modjax.tracecore.sharding_types import order_axes
from modjax.tracecore.state import ref_effect
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .. import elementwise as ew
from .. import structural
from .._rules import zeros
from .common import Traced, jaxpr_with_leading_inputs, join_consts
from .conditionals import cond_p, join_out_types

__all__: list[str] = []

# Derived branch tuples, keyed weakly on the first branch (the others are in the key).
_derived = JaxprCache("cond_rules")


def _memo(branches: tuple[ClosedJaxpr, ...], key: Hashable, compute: Callable, consts_at=None):
    """Derive ``compute()`` once per ``branches`` and ``key``.

    ``consts_at`` is the position in the result of consts to be hoisted into operands;
    a result whose consts hold tracers is not kept.
    """

    def cacheable(value) -> bool:
        return consts_at is None or not has_tracers(value[consts_at])

    return _derived.get(branches[0], (branches[1:], key), compute, cacheable)


def _hoist_and_join(closeds: Sequence[ClosedJaxpr]) -> tuple[tuple, tuple[ClosedJaxpr, ...]]:
    """Turn each program's consts into leading operands shared by all of them.

    ``cond_p`` branches hold no consts: return the joined consts (to pass before the
    operands) and the branches, all taking every const, with weak types joined.
    """
    traced = [
        Traced(ClosedJaxpr(convert_constvars_jaxpr(c.jaxpr), ()), list(c.consts), None)
        for c in closeds
    ]
    consts, jaxprs = join_consts(traced)
    return tuple(consts), tuple(join_out_types(list(jaxprs)))


def _trace(fun: Callable, in_avals: Sequence[ShapedArray], debug_info=None) -> ClosedJaxpr:
    jaxpr, consts = trace_to_jaxpr(wrap_init(fun, debug_info), list(in_avals))
    return ClosedJaxpr(jaxpr, consts)


def _any_columns(rows: Sequence[Sequence[bool]]) -> list[bool]:
    return [any(column) for column in zip(*rows, strict=True)]


# --- JVP ----------------------------------------------------------------------------------


def _jvp_branches(branches, nonzeros: tuple):
    """JVP every branch with the same output tangents: those nonzero in any branch."""

    def compute():
        out_nz = _any_columns([jvp_jaxpr(b, nonzeros)[1] for b in branches])
        jvps = [jvp_jaxpr(b, nonzeros, instantiate=out_nz)[0] for b in branches]
        consts, joined = _hoist_and_join(jvps)
        return consts, joined, tuple(out_nz)

    return _memo(branches, ("jvp", nonzeros), compute, consts_at=0)


def _cond_jvp(primals, tangents, *, branches):
    """Differentiate ``cond_p``: a ``cond_p`` of the branches' JVPs (JAX's ``_cond_jvp``)."""
    index, *ops = primals
    op_tangents = tangents[1:]  # the index is an integer: no tangent
    nonzeros = tuple(type(t) is not Zero for t in op_tangents)
    consts, jvp_branches, out_nz = _jvp_branches(branches, nonzeros)
    nz_tangents = [t for t in op_tangents if type(t) is not Zero]
    outs = cond_p.bind(index, *consts, *ops, *nz_tangents, branches=jvp_branches)
    n_out = len(branches[0].out_avals)
    primals_out, nz_out = outs[:n_out], iter(outs[n_out:])
    tangents_out = [
        next(nz_out) if nz else Zero(tangent_aval(a))
        for a, nz in zip(branches[0].out_avals, out_nz, strict=True)
    ]
    return primals_out, tangents_out


# --- partial evaluation ---------------------------------------------------------------------


class _Split:
    """How the branches of one cond split into a known cond and an unknown cond.

    The known cond takes the known operands and returns the known outputs and the
    ``slots`` (new residuals, typed; each branch fills its own and zeros the rest).
    The unknown cond takes ``(index, *operands[op_res], *slots, *unknown operands)``:
    ``op_res`` are the known operands some branch's unknown side reads directly.
    """

    __slots__ = ("known", "staged", "out_unknowns", "op_res", "slots")

    def __init__(self, known, staged, out_unknowns, op_res, slots):
        self.known, self.staged = known, staged
        self.out_unknowns, self.op_res, self.slots = out_unknowns, op_res, slots


def _split_branches(branches, ops_uk: tuple, saveable) -> _Split:
    """Partially evaluate every branch with the same unknown inputs and outputs."""
    out_uk = _any_columns([partial_eval_jaxpr(b, ops_uk, False, saveable)[2] for b in branches])
    splits = [partial_eval_jaxpr(b, ops_uk, out_uk, saveable) for b in branches]
    n_known = len(out_uk) - sum(out_uk)
    known_ops = [i for i, u in enumerate(ops_uk) if not u]

    # Each residual is a known operand (read by the unknown cond directly) or a new
    # value: new ones share typed slots across branches, since only one branch runs.
    op_res: dict[int, None] = {}
    slots: list[ShapedArray] = []
    placements = []  # per branch: ("op", operand index) or ("slot", slot index) per residual
    for known, _, _, num_res in splits:
        where_invar = {v: known_ops[k] for k, v in enumerate(known.jaxpr.invars)}
        free_slots: dict[ShapedArray, list[int]] = {}
        for k, a in enumerate(slots):
            free_slots.setdefault(a, []).append(k)
        placed = []
        for atom in known.jaxpr.outvars[n_known : n_known + num_res]:
            if isinstance(atom, Var) and atom in where_invar:
                op_res[where_invar[atom]] = None
                placed.append(("op", where_invar[atom]))
                continue
            free = free_slots.get(atom.aval)
            if free:
                placed.append(("slot", free.pop(0)))
            else:
                slots.append(atom.aval)
                placed.append(("slot", len(slots) - 1))
        placements.append(placed)
    op_res_list = sorted(op_res)

    known_branches, staged_branches = [], []
    for b, (known, unknown, _, _), placed in zip(branches, splits, placements, strict=True):
        known_branches.append(_known_branch(known, n_known, placed, slots))
        res_avals = [b.in_avals[i] for i in op_res_list] + list(slots)
        positions = [
            op_res_list.index(j) if kind == "op" else len(op_res_list) + j for kind, j in placed
        ]
        staged_branches.append(jaxpr_with_leading_inputs(unknown, res_avals, positions))
    for j in (*known_branches, *staged_branches):
        assert not j.consts, "cond partial eval: branches derived from const-free ones"
    return _Split(
        tuple(join_out_types(known_branches)),
        tuple(join_out_types(staged_branches)),
        tuple(out_uk),
        tuple(op_res_list),
        tuple(slots),
    )


def _known_branch(known: ClosedJaxpr, n_known: int, placed, slots) -> ClosedJaxpr:
    """Make a branch's known program return its known outputs and every residual slot."""
    mine = {j: k for k, (kind, j) in enumerate(placed) if kind == "slot"}
    if len(mine) == len(placed) == len(slots) and all(mine[j] == j for j in mine):
        return known

    def fun(*args):
        outs = eval_jaxpr(known.jaxpr, known.consts, *args)
        res = outs[n_known:]
        filled = [res[mine[j]] if j in mine else zeros(a) for j, a in enumerate(slots)]
        return [*outs[:n_known], *filled]

    return _trace(fun, known.in_avals, known.jaxpr.debug_info)


def _cond_partial_eval(eqn: JaxprEqn, unknowns: list[bool], saveable):
    """Split a cond into a known cond (run now) and an unknown one (JAX's cond pe rule).

    The known cond returns the known outputs and the residuals of whichever branch
    ran; the unknown cond takes the index (a residual), the residuals and the
    unknown operands, and runs the same branch's unknown part.
    """
    index_uk, *ops_uk = unknowns
    n_out = len(eqn.outvars)
    if index_uk:  # which branch runs is not known yet: stage the whole equation
        return None, eqn, [True] * n_out
    if not any(ops_uk):
        # Called only under a ``saveable`` policy: as for a first-order equation, a
        # cond the policy won't save is recomputed by the unknown side.
        if saveable is None or eqn_has_effects(eqn) or saveable(eqn):
            return eqn, None, [False] * n_out
        return eqn, eqn, [False] * n_out
    branches = eqn.params["branches"]
    ops_uk = tuple(ops_uk)
    if saveable is None:
        split = _memo(branches, ("pe", ops_uk), lambda: _split_branches(branches, ops_uk, None))
    else:  # policies are made afresh per equation: never cached
        split = _split_branches(branches, ops_uk, saveable)

    index, *ops = eqn.invars
    slot_vars = [Var(a) for a in split.slots]
    known_outvars = [v for v, u in zip(eqn.outvars, split.out_unknowns, strict=True) if not u]
    known_eqn = None
    if known_outvars or slot_vars or any(has_effects(b) for b in split.known):
        known_eqn = eqn.replace(
            invars=[index, *(x for x, u in zip(ops, ops_uk, strict=True) if not u)],
            outvars=known_outvars + slot_vars,
            params={**eqn.params, "branches": split.known},
        )
    unknown_outvars = [v for v, u in zip(eqn.outvars, split.out_unknowns, strict=True) if u]
    if not unknown_outvars and not any(has_effects(b) for b in split.staged):
        return known_eqn, None, list(split.out_unknowns)
    staged_eqn = eqn.replace(
        invars=[
            index,
            *(ops[i] for i in split.op_res),
            *slot_vars,
            *(x for x, u in zip(ops, ops_uk, strict=True) if u),
        ],
        outvars=unknown_outvars,
        params={**eqn.params, "branches": split.staged},
    )
    return known_eqn, staged_eqn, list(split.out_unknowns)


# --- transpose ------------------------------------------------------------------------------


def _transpose_branches(branches, linear: tuple, out_zeros: tuple):
    """Transpose every branch; all return the cotangents nonzero in any branch."""

    def compute():
        transposed = [transpose_jaxpr(b, linear, out_zeros) for b in branches]
        ct_nz = [not z for z in map(all, zip(*(zs for _, zs in transposed), strict=True))]
        lin_avals = [
            tangent_aval(a) for a, lin in zip(branches[0].in_avals, linear, strict=True) if lin
        ]
        padded = [_pad_cotangents(t, zs, ct_nz, lin_avals) for t, zs in transposed]
        consts, joined = _hoist_and_join(padded)
        return consts, joined, tuple(ct_nz)

    return _memo(branches, ("transpose", linear, out_zeros), compute, consts_at=0)


def _pad_cotangents(t: ClosedJaxpr, zeros_mask, ct_nz, lin_avals) -> ClosedJaxpr:
    """Make a transposed branch return the cotangents ``ct_nz`` asks for (zeros if it has none)."""
    mine = [not z for z in zeros_mask]
    if mine == list(ct_nz):
        return t

    def fun(*args):
        outs = iter(eval_jaxpr(t.jaxpr, t.consts, *args))
        return [
            next(outs) if have else zeros(a)
            for have, want, a in zip(mine, ct_nz, lin_avals, strict=True)
            if want or have
        ]

    return _trace(fun, t.in_avals)


def _vary_like(ct, aval):
    """Cast ``ct`` to vary over the manual axes ``aval`` varies over (a ``pvary``)."""
    missing = getattr(aval, "vma", frozenset()) - getattr(core.to_aval(ct), "vma", frozenset())
    return pvary_p.bind(ct, axes=order_axes(missing)) if missing else ct


def _cond_transpose(cts, index, *args, branches):
    """Transpose ``cond_p`` w.r.t. its linear operands: a cond of transposed branches."""
    if is_undefined_primal(index):
        raise ValueError("cond: the branch index cannot be linear")
    linear = tuple(is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is Zero for ct in cts)
    results: list = [None] * (1 + len(args))
    if all(out_zeros):
        return results
    consts, t_branches, ct_nz = _transpose_branches(branches, linear, out_zeros)
    if not any(ct_nz):
        return results
    nonlinear = [a for a, lin in zip(args, linear, strict=True) if not lin]
    nz_cts = [ct for ct in cts if type(ct) is not Zero]
    # Inside a shard_map body with varying types, a cotangent may be invariant where its
    # primal varies (a seed broadcast by sum's transpose): cast it as the branches take it.
    ct_avals = t_branches[0].in_avals[len(consts) + len(nonlinear) :]
    nz_cts = [_vary_like(ct, a) for ct, a in zip(nz_cts, ct_avals, strict=True)]
    outs = iter(cond_p.bind(index, *consts, *nonlinear, *nz_cts, branches=t_branches))
    nz = iter(ct_nz)
    for i, lin in enumerate(linear):
        if lin and next(nz):
            results[1 + i] = next(outs)
    return results


# --- batching -------------------------------------------------------------------------------


def _batch_branches(branches, axis_data: AxisData, op_dims: tuple):
    """Batch every branch with the same in dims; an output batched in any is batched at 0."""

    def compute():
        first = [batch_jaxpr_axis(b, axis_data, op_dims)[1] for b in branches]
        out_inst = tuple(
            0 if any(d is not None for d in column) else None for column in zip(*first, strict=True)
        )
        pairs = [batch_jaxpr_axis(b, axis_data, op_dims, out_inst) for b in branches]
        assert all(dims == out_inst for _, dims in pairs)
        consts, joined = _hoist_and_join([j for j, _ in pairs])
        return consts, joined, out_inst

    return _memo(branches, ("batch", axis_data, op_dims), compute, consts_at=0)


def _broadcast_to(x, aval_like):
    """Broadcast a batch-sized vector ``x`` along axis 0 of ``aval_like``'s shape."""
    shape = tuple(aval_like.shape)
    if len(shape) == 1:
        return x
    return structural.broadcast_in_dim(x, shape, (0,))


def _unbatchable_effect(branches) -> str | None:
    """Name the effect JAX refuses in a cond with a batched index, or None.

    JAX refuses references' ("State") and io_callback's ("IO") effects; the others,
    ``debug.print``'s among them, run in every branch, for every lane.
    """
    effects = {e for b in branches for e in b.effects}
    if ref_effect in effects:
        return "State"
    io = {effects_by_name.get("IO"), effects_by_name.get("OrderedIO")}
    return "IO" if effects & io else None


def _cond_batched_index(axis_data: AxisData, index, index_dim, ops, op_dims, branches):
    """A cond whose index is batched: run every branch batched, pick lanes with select_n.

    Each branch sees, in the lanes where it is not picked, its operands behind a
    stop_gradient, so that reverse mode never flows through a branch's value
    that was not taken (a NaN there would poison the gradient; JAX issue 1052).
    """
    kind = _unbatchable_effect(branches)
    if kind is not None:
        raise NotImplementedError(
            f"{kind} effect not supported in vmap-of-cond (a cond with a batched predicate "
            "or index runs every branch, so its effects cannot run once)."
        )
    size = axis_data.size
    index = bdim_at_front(index, index_dim, size)
    index = ew.clamp(np.int32(0), index, np.int32(len(branches) - 1))
    ops = [bdim_at_front(x, d, size) for x, d in zip(ops, op_dims, strict=True)]
    in_dims = (0,) * len(ops)
    per_branch = []
    for i, branch in enumerate(branches):
        batched, _ = batch_jaxpr_axis(branch, axis_data, in_dims, True)
        taken = ew.eq(index, np.int32(i))
        guarded = [
            ew.select_n(_broadcast_to(taken, batched.in_avals[k]), stop_gradient(x), x)
            for k, x in enumerate(ops)
        ]
        per_branch.append(eval_jaxpr(batched.jaxpr, batched.consts, *guarded))
    outs = [
        ew.select_n(_broadcast_to(index, batched.out_avals[k]), *cases)
        for k, cases in enumerate(zip(*per_branch, strict=True))
    ]
    return outs, [0] * len(outs)


def _cond_batcher(axis_data: AxisData, args, dims, *, branches):
    """Batch ``cond_p`` (JAX's ``_cond_batching_rule``).

    An unbatched index keeps one cond of batched branches; a batched index turns the
    cond into a select of all branches' results.
    """
    if all(d is None for d in dims) and not any(uses_axis_primitives(b.jaxpr) for b in branches):
        outs = cond_p.bind(*args, branches=branches)
        return outs, [None] * len(outs)
    index, *ops = args
    index_dim, *op_dims = dims
    if index_dim is not None:
        return _cond_batched_index(axis_data, index, index_dim, ops, op_dims, branches)
    consts, batched, out_dims = _batch_branches(branches, axis_data, tuple(op_dims))
    outs = cond_p.bind(index, *consts, *ops, branches=batched)
    return outs, list(out_dims)


# --- DCE ------------------------------------------------------------------------------------


def _dce_branches(branches, used_outputs: tuple):
    """Prune every branch to the used outputs; all keep the operands any branch reads."""

    def compute():
        used_ops = _any_columns([dce_closed_jaxpr(b, used_outputs)[1] for b in branches])
        pruned = tuple(dce_closed_jaxpr(b, used_outputs, instantiate=used_ops)[0] for b in branches)
        return pruned, tuple(used_ops)

    return _memo(branches, ("dce", used_outputs), compute)


def _cond_dce(used_outputs: list[bool], eqn: JaxprEqn):
    """Drop the outputs nobody uses and the operands no branch reads (JAX's cond DCE rule).

    A cond that has effects stays, even when none of its outputs is used.
    """
    branches = eqn.params["branches"]
    if not any(used_outputs) and not any(has_effects(b) for b in branches):
        return [False] * len(eqn.invars), None
    pruned, used_ops = _dce_branches(branches, tuple(used_outputs))
    if all(p is b for p, b in zip(pruned, branches, strict=True)) and all(used_outputs):
        return [True] * len(eqn.invars), eqn
    index, *ops = eqn.invars
    new_eqn = eqn.replace(
        invars=[index, *(x for x, u in zip(ops, used_ops, strict=True) if u)],
        outvars=[v for v, u in zip(eqn.outvars, used_outputs, strict=True) if u],
        params={**eqn.params, "branches": pruned},
    )
    return [True, *used_ops], new_eqn


jvp_rules[cond_p] = _cond_jvp
partial_eval_rules[cond_p] = _cond_partial_eval
transpose_rules[cond_p] = _cond_transpose
axis_primitive_batchers[cond_p] = _cond_batcher
dce_rules[cond_p] = _cond_dce
