"""State discharge of the control-flow primitives: references used inside their bodies.

A loop body or branch that reads or writes a reference it closes over gets that
reference as a const operand (or, for ``cond``, an operand) of type ``Ref{...}``.
Discharging (tracecore's ``discharge_state``) turns each such reference into a
value the primitive threads through: a ``scan`` or ``while`` carries it (its
final value comes out of the loop), a ``cond`` returns the value each branch
leaves in it. The bodies are discharged in turn, and the consts their discharge
makes (index arrays of writes, say) become leading const operands, so inner
programs keep having no consts of their own.

The rewiring is done on the discharged jaxprs' variables (their order), without
tracing them again.
"""

from __future__ import annotations

import numpy as np

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.jaxpr import ClosedJaxpr, Var
from modjax.tracecore.state import AbstractRef, discharge_rules, discharge_state, eval_discharged
from modjax.tracecore.tracing import convert_constvars_jaxpr

from .conditionals import cond_p
from .loops import scan_p, while_p

__all__: list[str] = []


def _is_ref(atom) -> bool:
    return type(atom.aval) is AbstractRef


def _closed(jaxpr) -> ClosedJaxpr:
    return ClosedJaxpr(jaxpr, ())


# --- scan --------------------------------------------------------------------------------------


def _scan_discharge(eqn, *invals):
    p = eqn.params
    n_consts, n_carry = p["num_consts"], p["num_carry"]
    if any(_is_ref(v) for v in eqn.invars[n_consts : n_consts + n_carry]):
        # lax.scan refuses a body returning a reference (JAX's ValueError): only a
        # hand-built scan equation gets here.
        raise NotImplementedError("scan: a reference as a carry")
    if any(_is_ref(v) for v in eqn.invars[n_consts + n_carry :]):
        return _scanned_refs_discharge(eqn, invals)
    refs = [i for i in range(n_consts) if _is_ref(eqn.invars[i])]
    plain = [i for i in range(n_consts) if i not in refs]
    discharged = discharge_state(p["jaxpr"])
    body, hoisted = discharged.jaxpr, list(discharged.consts)
    ins, n_out = body.invars, len(p["jaxpr"].out_avals)
    consts_in = [*(ins[i] for i in plain), *(ins[i] for i in refs)]
    new_body = body.replace(
        constvars=[],
        invars=[*body.constvars, *consts_in, *ins[n_consts:]],
        outvars=[*body.outvars[n_out:], *body.outvars[:n_out]],
    )
    linear = p["linear"]
    new_params = {
        **p,
        "jaxpr": _closed(new_body),
        "num_consts": len(hoisted) + len(plain),
        "num_carry": len(refs) + n_carry,
        "linear": (False,) * (len(hoisted) + len(plain) + len(refs)) + tuple(linear[n_consts:]),
    }
    outs = scan_p.bind(
        *hoisted,
        *(invals[i] for i in plain),
        *(invals[i] for i in refs),
        *invals[n_consts:],
        **new_params,
    )
    new_invals = [None] * len(invals)
    for i, final in zip(refs, outs[: len(refs)], strict=True):
        new_invals[i] = final
    return new_invals, outs[len(refs) :]


def _scanned_refs_discharge(eqn, invals):
    """Discharge a scan over references (``xs`` operands of type ``Ref``), as JAX runs it.

    Iteration ``t`` sees the slice ``ref[t]`` as a reference of its own. The
    discharged scan carries every reference's whole value (scanned and closed over
    alike) and scans the positions ``0..length-1`` (so ``reverse`` visits them
    backwards, and a linear program keeps them as a residual); each step reads
    its slice, runs the discharged body on it and writes its final value back.
    """
    from modjax.tracecore.core import to_aval  # noqa: PLC0415
    from modjax.tracecore.tracing import trace_to_jaxpr  # noqa: PLC0415
    from modjax.tracecore.wrapped_fun import wrap_init  # noqa: PLC0415

    from ..indexing import dynamic_index_in_dim, dynamic_update_index_in_dim  # noqa: PLC0415

    p = eqn.params
    n_consts, n_carry, length = p["num_consts"], p["num_carry"], p["length"]
    body = p["jaxpr"]
    n_out = len(body.out_avals)
    ref_at = [i for i, v in enumerate(eqn.invars) if _is_ref(v)]
    plain_consts = [i for i in range(n_consts) if i not in ref_at]
    plain_xs = [i for i in range(n_consts + n_carry, len(invals)) if i not in ref_at]
    n_plain, n_refs = len(plain_consts), len(ref_at)

    def step(*args):  # (plain consts, refs, carry, plain xs, position) -> (refs, carry, ys)
        consts, refs = args[:n_plain], args[n_plain : n_plain + n_refs]
        carry = args[n_plain + n_refs : n_plain + n_refs + n_carry]
        xs, pos = args[n_plain + n_refs + n_carry : -1], args[-1]
        value = dict(zip(plain_consts, consts, strict=True))
        value.update(zip(plain_xs, xs, strict=True))
        for i, full in zip(ref_at, refs, strict=True):
            value[i] = full if i < n_consts else dynamic_index_in_dim(full, pos, 0, False)
        for k, c in enumerate(carry):
            value[n_consts + k] = c
        inputs = [value[i] for i in range(len(invals))]
        outs, finals = eval_discharged(body.jaxpr, body.consts, inputs)
        new_refs = [
            final if i < n_consts else dynamic_update_index_in_dim(full, final, pos, 0)
            for i, full, final in zip(ref_at, refs, finals, strict=True)
        ]
        return [*new_refs, *outs[:n_carry], *outs[n_carry:n_out]]

    def sliced(i):
        aval = to_aval(invals[i])
        return aval.update(shape=aval.shape[1:])

    avals = [
        *(to_aval(invals[i]) for i in plain_consts),
        *(to_aval(invals[i]) for i in ref_at),
        *(to_aval(invals[n_consts + k]) for k in range(n_carry)),
        *(sliced(i) for i in plain_xs),
        ShapedArray((), np.dtype(np.int32)),
    ]
    jaxpr, consts = trace_to_jaxpr(wrap_init(step, body.jaxpr.debug_info), avals)
    n_lead = len(consts) + n_plain
    n_ops = n_lead + n_refs + n_carry + len(plain_xs) + 1
    new_params = {
        **p,
        "jaxpr": _closed(convert_constvars_jaxpr(jaxpr)),
        "num_consts": n_lead,
        "num_carry": n_refs + n_carry,
        "linear": (False,) * n_ops,
    }
    outs = scan_p.bind(
        *consts,
        *(invals[i] for i in plain_consts),
        *(invals[i] for i in ref_at),
        *(invals[n_consts + k] for k in range(n_carry)),
        *(invals[i] for i in plain_xs),
        np.arange(length, dtype=np.int32),
        **new_params,
    )
    new_invals: list = [None] * len(invals)
    for i, final in zip(ref_at, outs[:n_refs], strict=True):
        new_invals[i] = final
    return new_invals, outs[n_refs:]


# --- while -------------------------------------------------------------------------------------


def _while_discharge(eqn, *invals):
    p = eqn.params
    n_cond, n_body = p["cond_nconsts"], p["body_nconsts"]
    n_consts = n_cond + n_body
    if any(_is_ref(v) for v in eqn.invars[n_consts:]):
        raise NotImplementedError("while_loop: a reference as a carry")
    # Each distinct reference (an outer variable) becomes one carry slot.
    slots: list = []
    for v in eqn.invars[:n_consts]:
        if _is_ref(v) and not any(v is s for s in slots):
            slots.append(v)

    def rewire(closed, first: int, count: int, keep_pred_only: bool):
        dis = discharge_state(closed)
        jaxpr = dis.jaxpr
        operands = eqn.invars[first : first + count]
        ins = jaxpr.invars
        plain = [k for k in range(count) if not _is_ref(operands[k])]
        slot_vars, finals = [], []
        ref_positions = [k for k in range(count) if _is_ref(operands[k])]
        n_out = len(closed.out_avals)
        final_of = dict(zip(ref_positions, jaxpr.outvars[n_out:], strict=True))
        for s in slots:
            k = next((k for k in ref_positions if operands[k] is s), None)
            if k is None:  # this program does not use the reference: pass it through
                var = Var(s.aval.inner_aval)
                slot_vars.append(var)
                finals.append(var)
            else:
                slot_vars.append(ins[k])
                finals.append(final_of[k])
        outs = jaxpr.outvars[:1] if keep_pred_only else [*finals, *jaxpr.outvars[:n_out]]
        new = jaxpr.replace(
            constvars=[],
            invars=[*jaxpr.constvars, *(ins[k] for k in plain), *slot_vars, *ins[count:]],
            outvars=outs,
        )
        return _closed(new), list(dis.consts), plain

    cond, cond_hoisted, cond_plain = rewire(p["cond_jaxpr"], 0, n_cond, True)
    body, body_hoisted, body_plain = rewire(p["body_jaxpr"], n_cond, n_body, False)
    index = {id(v): i for i, v in enumerate(eqn.invars[:n_consts])}
    slot_values = [invals[index[id(s)]] for s in slots]
    outs = while_p.bind(
        *cond_hoisted,
        *(invals[k] for k in cond_plain),
        *body_hoisted,
        *(invals[n_cond + k] for k in body_plain),
        *slot_values,
        *invals[n_consts:],
        cond_jaxpr=cond,
        body_jaxpr=body,
        cond_nconsts=len(cond_hoisted) + len(cond_plain),
        body_nconsts=len(body_hoisted) + len(body_plain),
    )
    new_invals: list = [None] * len(invals)
    for s, final in zip(slots, outs[: len(slots)], strict=True):
        for i, v in enumerate(eqn.invars[:n_consts]):
            if v is s:
                new_invals[i] = final
    return new_invals, outs[len(slots) :]


# --- cond --------------------------------------------------------------------------------------


def _cond_discharge(eqn, index, *operands):
    branches = eqn.params["branches"]
    refs = [k for k, v in enumerate(eqn.invars[1:]) if _is_ref(v)]
    discharged = [discharge_state(b) for b in branches]
    hoisted = [list(d.consts) for d in discharged]
    all_hoisted = [c for cs in hoisted for c in cs]
    new_branches = []
    for i, dis in enumerate(discharged):
        jaxpr = dis.jaxpr
        lead = []
        for j, cs in enumerate(hoisted):  # every branch takes every branch's consts
            lead += jaxpr.constvars if j == i else [Var(_aval(c)) for c in cs]
        new_branches.append(_closed(jaxpr.replace(constvars=[], invars=[*lead, *jaxpr.invars])))
    outs = cond_p.bind(index, *all_hoisted, *operands, branches=tuple(new_branches))
    n_out = len(branches[0].out_avals)
    new_invals: list = [None] * (1 + len(operands))
    for k, final in zip(refs, outs[n_out:], strict=True):
        new_invals[1 + k] = final
    return new_invals, outs[:n_out]


def _aval(x):
    from modjax.tracecore.core import to_aval  # noqa: PLC0415

    return to_aval(x)


discharge_rules[scan_p] = _scan_discharge
discharge_rules[while_p] = _while_discharge
discharge_rules[cond_p] = _cond_discharge
