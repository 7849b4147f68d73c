"""The transformation rules of ``while_p`` (jax's while_loop rules in lax/control_flow/loops.py).

Registered here:

* JVP (``jvp_rules``): a while over the primal and the nonzero tangent carries.
  A carry whose tangent the body makes nonzero gets a nonzero (instantiated)
  tangent from the start, by fixpoint; the body also reads the tangents of its
  consts. The cond reads ``(*cond_consts, *carry, *carry_tangents)`` and ignores
  the tangents.
* partial evaluation (``partial_eval_rules``): when some operands are unknown
  (tangents under ``linearize``), the carries that do not depend on unknown ones
  (by fixpoint), provided the predicate depends on known values only, are
  computed now by a while over those carries alone; the unknown outputs come from
  a staged while that recomputes the whole loop, as JAX does. Nothing inside the
  loop is saved for reverse mode, which is why
* transpose (``transpose_rules``) raises JAX's error: reverse mode needs ``scan``.
* batching (``axis_primitive_batchers``, so that named-axis collectives in the
  programs see the vmapped axis): batched carries by fixpoint; with a batched
  predicate the loop runs while any lane's predicate holds, and the body freezes
  the finished lanes with ``select_n`` (every carry is then batched).
* DCE (``dce_rules``): carries that neither the cond, a used output nor a needed
  carry reads go (by fixpoint), with the consts nothing reads any more.

The programs derived from a loop's jaxprs are memoized on those jaxprs, so that
the same loop transformed again binds the same programs (and eager calls reuse
their executables).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from modjax.autodiff import Zero, jvp_jaxpr, jvp_rules, tangent_aval, transpose_rules
from modjax.batching import (
    AxisData,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    matchaxis,
    uses_axis_primitives,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval
from modjax.tracecore.dce import dce_closed_jaxpr, dce_jaxpr, dce_rules, has_effects
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, JaxprEqn, Var
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.partial_eval import partial_eval_jaxpr, partial_eval_rules
from modjax.tracecore.state import AbstractRef
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .. import elementwise as ew
from .. import structural as st
from .._rules import instantiate
from ..reductions import reduce_or
from .loops import while_p

__all__: list[str] = []

# Derived loop programs, weakly on the body (or cond) jaxpr they come from.
_derived = JaxprCache("while_rules")


def _split(seq: Sequence, cond_nconsts: int, body_nconsts: int) -> tuple[list, list, list]:
    """Split operands (or flags about them) into cond consts, body consts and carries."""
    seq = list(seq)
    n = cond_nconsts + body_nconsts
    return seq[:cond_nconsts], seq[cond_nconsts:n], seq[n:]


def _fixpoint(flags: list[bool], grow: Callable[[list[bool]], tuple[object, list[bool]]]):
    """Grow carry ``flags`` until ``grow(flags)`` marks no new carry; return both results.

    ``grow(flags) -> (result, out_flags)`` derives a body under ``flags``; a carry
    marked in ``out_flags`` must be marked on entry too. Each round marks at least
    one more carry, so ``len(flags) + 1`` rounds suffice.
    """
    for _ in range(len(flags) + 1):
        result, out = grow(flags)
        new = [a or b for a, b in zip(flags, out, strict=True)]
        if new == flags:
            return flags, result
        flags = new
    raise AssertionError("while: the carry fixpoint did not converge")


def _hoisted(closed: ClosedJaxpr) -> tuple[ClosedJaxpr, tuple]:
    """Return ``closed`` with its consts turned into leading inputs, and those consts."""
    if not closed.consts:
        return closed, ()
    return ClosedJaxpr(convert_constvars_jaxpr(closed.jaxpr), ()), tuple(closed.consts)


def _no_tracers(*positions: int) -> Callable[[tuple], bool]:
    """Return a ``cacheable`` test: the consts at ``positions`` of a value hold no tracer."""
    return lambda value: not any(has_tracers(value[i]) for i in positions)


# --- JVP -------------------------------------------------------------------------------------


def _jvp_body(body: ClosedJaxpr, nb: int, bconst_nz: tuple, carry_nz_in: tuple):
    """Differentiate the body for the given nonzero tangents, forcing carries by fixpoint.

    Return the nonzero carry tangents and the JVP body taking ``(*hoisted_consts,
    *body_consts, *body_const_tangents, *carry, *carry_tangents)`` (only nonzero
    tangents), with its hoisted consts.
    """

    def compute():
        def grow(carry_nz):
            jvp, out_nz = jvp_jaxpr(body, [*bconst_nz, *carry_nz], instantiate=carry_nz)
            return jvp, out_nz

        carry_nz, jvp = _fixpoint(list(carry_nz_in), grow)
        jvp, consts = _hoisted(jvp)
        invars = jvp.jaxpr.invars
        nh, nc, nbt = len(consts), len(carry_nz), sum(bconst_nz)
        primal_bconsts = invars[: nh + nb]
        carry = invars[nh + nb : nh + nb + nc]
        bconst_t = invars[nh + nb + nc : nh + nb + nc + nbt]
        carry_t = invars[nh + nb + nc + nbt :]
        reordered = jvp.jaxpr.replace(
            invars=[*primal_bconsts, *bconst_t, *carry, *carry_t], debug_info=None
        )
        return tuple(carry_nz), ClosedJaxpr(reordered, ()), consts

    return _derived.get(body, ("jvp", nb, bconst_nz, carry_nz_in), compute, _no_tracers(2))


def _with_ignored_inputs(closed: ClosedJaxpr, avals: Sequence[ShapedArray]) -> ClosedJaxpr:
    """Return ``closed`` taking extra trailing inputs of ``avals`` that it does not read."""

    def compute():
        extra = [Var(a) for a in avals]
        jaxpr = closed.jaxpr.replace(invars=[*closed.jaxpr.invars, *extra], debug_info=None)
        return ClosedJaxpr(jaxpr, closed.consts)

    key = ("ignored", tuple((a.shape, a.dtype, a.weak_type) for a in avals))
    return _derived.get(closed, key, compute)


def _while_jvp(primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """Differentiate a while loop in forward mode (jax's ``_while_loop_jvp``)."""
    cconsts, bconsts, init = _split(primals, cond_nconsts, body_nconsts)
    _, bconst_t, init_t = _split(tangents, cond_nconsts, body_nconsts)
    bconst_nz = tuple(type(t) is not Zero for t in bconst_t)
    carry_nz_in = tuple(type(t) is not Zero for t in init_t)
    carry_nz, body_jvp, hoisted = _jvp_body(body_jaxpr, body_nconsts, bconst_nz, carry_nz_in)
    # A differentiated reference the body uses gets its tangent writes even when no
    # carry has a tangent.
    ref_nz = any(
        nz and type(to_aval(c)) is AbstractRef for c, nz in zip(bconsts, bconst_nz, strict=True)
    )
    if not any(carry_nz) and not ref_nz:
        outs = while_p.bind(
            *primals,
            cond_jaxpr=cond_jaxpr,
            body_jaxpr=body_jaxpr,
            cond_nconsts=cond_nconsts,
            body_nconsts=body_nconsts,
        )
        return outs, [Zero(tangent_aval(to_aval(p))) for p in outs]
    carry_avals = body_jaxpr.out_avals
    t_avals = [tangent_aval(a) for a, nz in zip(carry_avals, carry_nz, strict=True) if nz]
    cond_jvp = _with_ignored_inputs(cond_jaxpr, t_avals)
    nz_bconst_t = [t for t in bconst_t if type(t) is not Zero]
    carry_t = [instantiate(t) for t, nz in zip(init_t, carry_nz, strict=True) if nz]
    outs = while_p.bind(
        *cconsts,
        *hoisted,
        *bconsts,
        *nz_bconst_t,
        *init,
        *carry_t,
        cond_jaxpr=cond_jvp,
        body_jaxpr=body_jvp,
        cond_nconsts=cond_nconsts,
        body_nconsts=len(hoisted) + body_nconsts + len(nz_bconst_t),
    )
    n = len(init)
    primals_out, nz_out = outs[:n], iter(outs[n:])
    tangents_out = [
        next(nz_out) if nz else Zero(tangent_aval(a))
        for a, nz in zip(carry_avals, carry_nz, strict=True)
    ]
    return primals_out, tangents_out


# --- partial evaluation and transpose ----------------------------------------------------


def _drop_residuals(known: ClosedJaxpr, n_out: int) -> ClosedJaxpr:
    """Keep the first ``n_out`` outputs of a known jaxpr (not its residuals), and all inputs."""
    used = [i < n_out for i in range(len(known.jaxpr.outvars))]
    pruned, _ = dce_closed_jaxpr(known, used, instantiate=True)
    return pruned


def _known_body(body: ClosedJaxpr, bconst_uk: tuple, carry_uk_in: tuple):
    """Find the unknown carries (by fixpoint) and the body over the known ones only.

    Return ``(carry_unknowns, known_body)``; the known body takes the known body
    consts and known carries and returns the known carries.
    """

    def compute():
        def grow(carry_uk):
            known, _, out_uk, _ = partial_eval_jaxpr(
                body, [*bconst_uk, *carry_uk], instantiate=carry_uk
            )
            return known, out_uk

        carry_uk, known = _fixpoint(list(carry_uk_in), grow)
        return tuple(carry_uk), _drop_residuals(known, carry_uk.count(False))

    return _derived.get(body, ("pe", bconst_uk, carry_uk_in), compute)


def _known_cond(cond: ClosedJaxpr, cconst_uk: tuple, carry_uk: tuple):
    """Return whether the predicate is unknown, and else the cond over known inputs only."""

    def compute():
        known, _, (pred_uk,), _ = partial_eval_jaxpr(cond, [*cconst_uk, *carry_uk])
        return pred_uk, None if pred_uk else _drop_residuals(known, 1)

    return _derived.get(cond, ("pe", cconst_uk, carry_uk), compute)


def _recomputed(eqn: JaxprEqn, saveable) -> bool:
    """Tell whether a known loop must run again on the unknown side (a remat policy)."""
    return saveable is not None and not _loop_has_effects(eqn.params) and not saveable(eqn)


def _loop_has_effects(params) -> bool:
    return has_effects(params["cond_jaxpr"]) or has_effects(params["body_jaxpr"])


def _while_partial_eval(eqn: JaxprEqn, unknowns: list[bool], saveable):
    """Split a while loop into a known loop and a staged one (jax's ``_while_partial_eval``).

    The known loop computes the carries that depend on known operands only, when
    the predicate does too; the staged loop is the whole loop again (known operands
    become residuals) and also gives the known carries, so no residual of them is needed.
    As in JAX, effects of the body run in both loops (a ``debug.print`` of a known
    value prints when ``linearize`` runs and again when its linear function does).
    """
    p = eqn.params
    cond_nconsts, body_nconsts = p["cond_nconsts"], p["body_nconsts"]
    n_out = len(eqn.outvars)
    if not any(unknowns):
        return eqn, eqn if _recomputed(eqn, saveable) else None, [False] * n_out
    cconst_uk, bconst_uk, carry_uk = _split(unknowns, cond_nconsts, body_nconsts)
    carry_uk, known_body = _known_body(p["body_jaxpr"], tuple(bconst_uk), tuple(carry_uk))
    pred_uk, known_cond = _known_cond(p["cond_jaxpr"], tuple(cconst_uk), carry_uk)
    if pred_uk or all(carry_uk):
        return None, eqn, [True] * n_out
    cconsts, bconsts, carry = _split(eqn.invars, cond_nconsts, body_nconsts)

    def known(atoms, flags):
        return [a for a, uk in zip(atoms, flags, strict=True) if not uk]

    known_cconsts, known_bconsts = known(cconsts, cconst_uk), known(bconsts, bconst_uk)
    known_eqn = eqn.replace(
        invars=[*known_cconsts, *known_bconsts, *known(carry, carry_uk)],
        outvars=known(eqn.outvars, carry_uk),
        params=dict(
            p,
            cond_jaxpr=known_cond,
            body_jaxpr=known_body,
            cond_nconsts=len(known_cconsts),
            body_nconsts=len(known_bconsts),
        ),
    )
    return known_eqn, eqn, list(carry_uk)


_REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)


def _while_transpose(cts, *args, **params):
    """Refuse to transpose a while loop, with JAX's message (``_while_transpose_error``)."""
    raise ValueError(_REVERSE_MODE_ERROR)


# --- batching --------------------------------------------------------------------------------


def _batched_aval(aval: ShapedArray, size: int) -> ShapedArray:
    batched = ShapedArray(
        (size, *aval.shape), aval.dtype, aval.weak_type, vma=getattr(aval, "vma", frozenset())
    )
    if type(aval) is AbstractRef:  # a batched reference holds every example's array
        return aval.update(batched)  # type: ignore[return-value]
    return batched


def _dims(flags) -> tuple:
    return tuple(0 if b else None for b in flags)


def _batch_body(body: ClosedJaxpr, axis_data: AxisData, bconst_b: tuple, carry_b_in: tuple):
    """Batch the body (everything at axis 0), forcing carries batched by fixpoint."""

    def compute():
        def grow(carry_b):
            batched, out_dims = batch_jaxpr_axis(
                body, axis_data, _dims([*bconst_b, *carry_b]), _dims(carry_b)
            )
            return batched, [d is not None for d in out_dims]

        carry_b, batched = _fixpoint(list(carry_b_in), grow)
        return tuple(carry_b), batched

    return _derived.get(body, ("batch", axis_data, bconst_b, carry_b_in), compute)


def _select_lanes(pred, new, old):
    """Take ``new`` in the lanes (axis 0) where ``pred`` holds, ``old`` elsewhere."""
    shape = to_aval(new).shape
    return ew.select_n(st.broadcast_in_dim(pred, shape, (0,)), old, new)


def _traced(fun: Callable, avals: Sequence[ShapedArray]) -> tuple[ClosedJaxpr, tuple]:
    jaxpr, consts = trace_to_jaxpr(wrap_init(fun), list(avals))
    return _hoisted(ClosedJaxpr(jaxpr, consts))


def _batch_lanes(cond_b: ClosedJaxpr, body_b: ClosedJaxpr, ncc: int, nbc: int, avals):
    """Build the loop of a batched predicate from the batched cond and body.

    The cond is true while some lane's predicate holds; the body (taking the cond
    consts before its own) advances the lanes whose predicate holds and keeps the
    others. ``avals`` are the batched ``(*cond_consts, *body_consts, *carry)``.
    """
    cc_avals, bc_avals, carry_avals = _split(avals, ncc, nbc)

    def cond(*args):
        (pred,) = eval_jaxpr(cond_b.jaxpr, cond_b.consts, *args)
        return [reduce_or(pred, (0,))]

    def body(*args):
        cc, bc, carry = _split(args, ncc, nbc)
        (pred,) = eval_jaxpr(cond_b.jaxpr, cond_b.consts, *cc, *carry)
        new = eval_jaxpr(body_b.jaxpr, body_b.consts, *bc, *carry)
        return [_select_lanes(pred, n, o) for n, o in zip(new, carry, strict=True)]

    new_cond, cond_consts = _traced(cond, [*cc_avals, *carry_avals])
    new_body, body_consts = _traced(body, avals)
    return new_cond, cond_consts, new_body, body_consts


def _batch_loop(cond, body, axis_data, ncc, nbc, batched: tuple):
    """Plan the batched loop for operands ``batched`` (at axis 0); see ``_while_batching``.

    Return ``(carry_batched, pred_batched, cond, cond_consts, body, body_consts)``,
    the programs without consts (hoisted to the leading operands given).
    """

    def compute():
        cconst_b, bconst_b, init_b = _split(batched, ncc, nbc)
        carry_b, body_b = _batch_body(body, axis_data, tuple(bconst_b), tuple(init_b))
        cond_b, (pred_dim,) = batch_jaxpr_axis(cond, axis_data, _dims([*cconst_b, *carry_b]))
        if pred_dim is None:
            new_cond, cond_consts = _hoisted(cond_b)
            new_body, body_consts = _hoisted(body_b)
            return carry_b, False, new_cond, cond_consts, new_body, body_consts
        # Lanes finish at different steps: every carry must be batched to be frozen.
        carry_b = (True,) * len(carry_b)
        _, body_b = _batch_body(body, axis_data, tuple(bconst_b), carry_b)
        cond_b, _ = batch_jaxpr_axis(cond, axis_data, _dims([*cconst_b, *carry_b]))
        size = axis_data.size
        in_avals = [*cond.in_avals[:ncc], *body.in_avals]
        flags = [*cconst_b, *bconst_b, *carry_b]
        avals = [_batched_aval(a, size) if b else a for a, b in zip(in_avals, flags, strict=True)]
        parts = _batch_lanes(cond_b, body_b, ncc, nbc, avals)
        return (carry_b, True, *parts)

    return _derived.get(body, ("loop", cond, axis_data, ncc, batched), compute, _no_tracers(3, 5))


def _while_batching(
    axis_data: AxisData, args, dims, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts
):
    """Batch a while loop (jax's ``_while_loop_batching_rule``).

    Batched operands move to axis 0. A predicate that stays unbatched runs the
    batched body as is; a batched one runs until every lane is done.
    """
    params = {
        "cond_jaxpr": cond_jaxpr,
        "body_jaxpr": body_jaxpr,
        "cond_nconsts": cond_nconsts,
        "body_nconsts": body_nconsts,
    }
    if all(d is None for d in dims) and not (
        uses_axis_primitives(cond_jaxpr.jaxpr) or uses_axis_primitives(body_jaxpr.jaxpr)
    ):
        outs = while_p.bind(*args, **params)
        return outs, [None] * len(outs)
    batched = tuple(d is not None for d in dims)
    carry_b, pred_b, cond, cond_consts, body, body_consts = _batch_loop(
        cond_jaxpr, body_jaxpr, axis_data, cond_nconsts, body_nconsts, batched
    )
    size = axis_data.size
    cconsts, bconsts, init = _split(
        [matchaxis(size, d, None if d is None else 0, x) for x, d in zip(args, dims, strict=True)],
        cond_nconsts,
        body_nconsts,
    )
    init_dims = _split(dims, cond_nconsts, body_nconsts)[2]
    init = [
        matchaxis(size, None if d is None else 0, 0 if b else None, x)
        for x, d, b in zip(init, init_dims, carry_b, strict=True)
    ]
    if pred_b:  # the body reads the cond consts too
        bconsts = [*cconsts, *bconsts]
    outs = while_p.bind(
        *cond_consts,
        *cconsts,
        *body_consts,
        *bconsts,
        *init,
        cond_jaxpr=cond,
        body_jaxpr=body,
        cond_nconsts=len(cond_consts) + cond_nconsts,
        body_nconsts=len(body_consts) + len(bconsts),
    )
    return outs, list(_dims(carry_b))


# --- DCE -------------------------------------------------------------------------------------


def _pruned_loop(cond: ClosedJaxpr, body: ClosedJaxpr, ncc: int, nbc: int, used_outputs: tuple):
    """Find the carries that stay (by fixpoint) and prune cond and body to them.

    Return ``(used_carries, cond, cond_used_inputs, body, body_used_inputs)``.
    """

    def compute():
        _, cond_reads = dce_jaxpr(cond.jaxpr, [True])

        def grow(used):
            _, reads = dce_jaxpr(body.jaxpr, used)
            return None, reads[nbc:]

        start = [u or c for u, c in zip(used_outputs, cond_reads[ncc:], strict=True)]
        used, _ = _fixpoint(start, grow)
        new_body, body_used = dce_closed_jaxpr(body, used, instantiate=[False] * nbc + used)
        new_cond, cond_used = dce_closed_jaxpr(cond, [True], instantiate=[False] * ncc + used)
        return used, new_cond, cond_used, new_body, body_used

    return _derived.get(body, ("dce", cond, ncc, nbc, used_outputs), compute)


def _while_dce(used_outputs: list[bool], eqn: JaxprEqn):
    """Drop unused carries and consts of a while loop (jax's ``_while_dce_rule``).

    A carry stays when its output is used, the cond reads it or the body needs it
    to compute a carry that stays (by fixpoint). A loop with effects stays whole.
    """
    p = eqn.params
    cond, body = p["cond_jaxpr"], p["body_jaxpr"]
    ncc, nbc = p["cond_nconsts"], p["body_nconsts"]
    if _loop_has_effects(p):
        return [True] * len(eqn.invars), eqn
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    used, new_cond, cond_used, new_body, body_used = _pruned_loop(
        cond, body, ncc, nbc, tuple(used_outputs)
    )
    used_inputs = [*cond_used[:ncc], *body_used[:nbc], *used]
    if all(used_inputs) and new_body is body and new_cond is cond:
        return used_inputs, eqn
    cconsts, bconsts, carry = _split(eqn.invars, ncc, nbc)

    def keep(atoms, flags):
        return [a for a, u in zip(atoms, flags, strict=True) if u]

    outvars = [v if u else DropVar(v.aval) for v, u in zip(eqn.outvars, used_outputs, strict=True)]
    invars = [*keep(cconsts, cond_used[:ncc]), *keep(bconsts, body_used[:nbc]), *keep(carry, used)]
    new_eqn = eqn.replace(
        invars=invars,
        outvars=keep(outvars, used),
        params=dict(
            p,
            cond_jaxpr=new_cond,
            body_jaxpr=new_body,
            cond_nconsts=sum(cond_used[:ncc]),
            body_nconsts=sum(body_used[:nbc]),
        ),
    )
    return used_inputs, new_eqn


jvp_rules[while_p] = _while_jvp
partial_eval_rules[while_p] = _while_partial_eval
transpose_rules[while_p] = _while_transpose
axis_primitive_batchers[while_p] = _while_batching
dce_rules[while_p] = _while_dce
