"""Autodiff rules of ``scan_p``: JVP, partial evaluation (linearize, remat) and transpose.

* JVP: one scan of the body's JVP, whose carry holds the nonzero carry tangents
  (found by fixpoint: a carry whose tangent becomes nonzero in the body needs a
  tangent carry from the start).
* Partial evaluation: the body is split into a known and an unknown body (again a
  fixpoint, on unknown carries). The known scan computes the known carries and ys
  and stacks the per-iteration residuals the unknown body reads; residuals that
  depend only on known consts (loop invariants, with the known work that makes
  them) are computed once, outside the loop, and handed to the unknown scan as
  consts. Residuals that are known operands of the scan (consts, xs) are read
  from there instead of being copied. A ``saveable`` policy reaches the body, so
  ``checkpoint`` policies decide what is stacked and what is recomputed.
* Transpose: a scan in the opposite direction whose carry holds the cotangents
  of the carry and the accumulated cotangents of the linear consts, and whose ys
  are the cotangents of the linear xs. Symbolic zero cotangents stay symbolic
  (a fixpoint finds which carry cotangents can become nonzero).

JAX's counterparts are ``_scan_jvp``, ``_scan_partial_eval_custom`` (with
``_scan_known_hoisting``) and ``_scan_transpose`` in ``lax/control_flow/loops.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from modjax.autodiff import (
    Zero,
    add_tangents,
    is_undefined_primal,
    jvp_jaxpr,
    jvp_rules,
    tangent_aval,
    transpose_jaxpr,
    transpose_rules,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call_p
from modjax.tracecore.core import to_aval
from modjax.tracecore.dce import has_effects
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Var
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.partial_eval import partial_eval_jaxpr, partial_eval_rules
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .._rules import instantiate, zeros
from .loops import scan_p

__all__: list[str] = []


# --- small helpers ------------------------------------------------------------------------


def _split(values: Sequence, sizes: Sequence[int]) -> list[list]:
    """Cut ``values`` into consecutive pieces of ``sizes`` and the rest."""
    out, start = [], 0
    for n in sizes:
        out.append(list(values[start : start + n]))
        start += n
    out.append(list(values[start:]))
    return out


def _pick(values: Sequence, mask: Sequence[bool], keep: bool = True) -> list:
    return [v for v, m in zip(values, mask, strict=True) if bool(m) == keep]


def _stacked(aval: ShapedArray, length: int) -> ShapedArray:
    return aval.update(shape=(length, *aval.shape), sharding=None)


def _without_names(debug_info):
    """Drop argument names that a reordering of the binders would make wrong."""
    if getattr(debug_info, "arg_names", None) is None:
        return debug_info
    return debug_info._replace(arg_names=None)


def _rebind(closed: ClosedJaxpr, invars: list, outvars: list) -> ClosedJaxpr:
    """Return ``closed`` with its binders reordered; its consts become leading invars.

    Scan bodies hold no consts (they print and parse back, and tracers among them
    must be operands the enclosing trace sees), so the caller passes the returned
    consts as leading scan consts.
    """
    j = closed.jaxpr
    new = Jaxpr([], list(j.constvars) + invars, outvars, j.eqns, _without_names(j.debug_info))
    return ClosedJaxpr(new, ())


def _closed_and_consts(jaxpr: Jaxpr, consts: list) -> tuple[ClosedJaxpr, tuple]:
    """Close ``jaxpr`` over nothing: its constvars become leading invars, given back as values."""
    return ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ()), tuple(consts)


def _cacheable(value) -> bool:
    return not has_tracers(value[1])


# --- JVP ----------------------------------------------------------------------------------

_jvp_bodies = JaxprCache("scan_jvp")


def _jvp_body(body: ClosedJaxpr, nonzeros: tuple, num_consts: int, num_carry: int):
    """Return the scan-shaped JVP of ``body``, its leading consts and the output nonzeros.

    The JVP body takes ``(*jvp_consts, *consts, *const_tangents, *carry, *carry_tangents,
    *xs, *x_tangents)`` and returns ``(*carry, *carry_tangents, *ys, *y_tangents)``
    (nonzero tangents only). The carry tangents are found by fixpoint.
    """

    def compute():
        num_ys = len(body.out_avals) - num_carry
        const_nz, carry_nz, xs_nz = _split(nonzeros, [num_consts, num_carry])
        for _ in range(num_carry + 1):
            jvp_closed, out_nz = jvp_jaxpr(
                body, const_nz + carry_nz + xs_nz, [*carry_nz, *[False] * num_ys]
            )
            carry_out_nz = out_nz[:num_carry]
            if carry_out_nz == carry_nz:
                break
            carry_nz = [a or b for a, b in zip(carry_nz, carry_out_nz, strict=True)]
        j = jvp_closed.jaxpr
        n_in = len(body.in_avals)
        primals, tangents = j.invars[:n_in], j.invars[n_in:]
        c, k, x = _split(primals, [num_consts, num_carry])
        ct, kt, xt = _split(tangents, [sum(const_nz), sum(carry_nz)])
        n_out = len(body.out_avals)
        outs, out_tangents = j.outvars[:n_out], j.outvars[n_out:]
        carry_out, ys = outs[:num_carry], outs[num_carry:]
        carry_t, ys_t = out_tangents[: sum(carry_nz)], out_tangents[sum(carry_nz) :]
        new = _rebind(jvp_closed, c + ct + k + kt + x + xt, carry_out + carry_t + ys + ys_t)
        nz = (tuple(const_nz), tuple(carry_nz), tuple(xs_nz))
        return new, tuple(jvp_closed.consts), nz, tuple(out_nz)

    return _jvp_bodies.get(body, (nonzeros, num_consts, num_carry), compute, _cacheable)


def _scan_jvp(primals, tangents, *, jaxpr, length, reverse, unroll, num_consts, num_carry,
              linear, _split_transpose):  # fmt: skip
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    body, body_consts, (const_nz, carry_nz, xs_nz), out_nz = _jvp_body(
        jaxpr, nonzeros, num_consts, num_carry
    )
    consts, init, xs = _split(primals, [num_consts, num_carry])
    const_t, init_t, xs_t = _split(tangents, [num_consts, num_carry])
    lin_c, lin_k, lin_x = _split(linear, [num_consts, num_carry])
    const_t = _pick(const_t, const_nz)
    init_t = [instantiate(t) for t in _pick(init_t, carry_nz)]  # the fixpoint may add some
    xs_t = _pick(xs_t, xs_nz)
    operands = [*body_consts, *consts, *const_t, *init, *init_t, *xs, *xs_t]
    new_linear = (
        [False] * len(body_consts) + lin_c + [True] * len(const_t)
        + lin_k + [True] * len(init_t) + lin_x + [True] * len(xs_t)
    )  # fmt: skip
    outs = scan_p.bind(
        *operands,
        jaxpr=body,
        length=length,
        reverse=reverse,
        unroll=unroll,
        num_consts=len(body_consts) + num_consts + len(const_t),
        num_carry=num_carry + len(init_t),
        linear=tuple(new_linear),
        _split_transpose=_split_transpose,
    )
    num_ys = len(jaxpr.out_avals) - num_carry
    carry, carry_t, ys, ys_t = _split(outs, [num_carry, len(init_t), num_ys])
    primals_out = carry + ys
    nz_iter = iter(carry_t + ys_t)
    tangents_out = [
        next(nz_iter) if nz else Zero(tangent_aval(to_aval(p)))
        for p, nz in zip(primals_out, out_nz, strict=True)
    ]
    return primals_out, tangents_out


jvp_rules[scan_p] = _scan_jvp


# --- partial evaluation -------------------------------------------------------------------


class _ScanSplit(NamedTuple):
    """How a scan equation splits, independent of its atoms (see ``_split_scan``).

    ``known`` is the known scan's body: ``(*loop_consts, *known_carry, *known_xs) ->
    (*known_carry, *known_ys, *stacked_res)``; ``hoist`` (None when there is no
    loop-invariant work) computes ``(*invariant_res, *loop_consts)`` from the known
    consts, outside the loop; without it the loop consts are the known consts.
    ``staged`` is the unknown scan's body: ``(*intensive_res, *unknown_consts,
    *unknown_carry, *unknown_xs, *extensive_res) -> (*unknown_carry, *unknown_ys)``.
    ``intensive`` names each intensive residual (``("const", i)``: known const ``i``;
    ``("hoisted", k)``: invariant residual ``k``), ``extensive`` each extensive one
    (``("xs", i)``: known xs ``i``; ``("ys", j)``: known y ``j`` of the known scan;
    ``("stacked", k)``: stacked residual ``k``).
    """

    in_uk: tuple[bool, ...]
    carry_uk: tuple[bool, ...]
    out_uk: tuple[bool, ...]
    known: ClosedJaxpr
    hoist: ClosedJaxpr | None
    staged: ClosedJaxpr
    intensive: tuple[tuple[str, int], ...]
    extensive: tuple[tuple[str, int], ...]
    num_invariant: int
    num_stacked: int
    known_call: ClosedJaxpr | None


_scan_splits = JaxprCache("scan_partial_eval")


def _body_fixpoint(body: ClosedJaxpr, unknowns, num_consts, num_carry, saveable):
    """Partially evaluate ``body`` with the carries that become unknown made unknown."""
    num_ys = len(body.out_avals) - num_carry
    const_uk, carry_uk, xs_uk = _split(unknowns, [num_consts, num_carry])
    for _ in range(num_carry + 1):
        known, staged, out_uk, num_res = partial_eval_jaxpr(
            body, const_uk + carry_uk + xs_uk, [*carry_uk, *[False] * num_ys], saveable
        )
        if out_uk[:num_carry] == carry_uk:
            return const_uk, carry_uk, xs_uk, known, staged, out_uk, num_res
        carry_uk = [a or b for a, b in zip(carry_uk, out_uk[:num_carry], strict=True)]
    raise AssertionError("scan partial evaluation: the carry fixpoint was not reached")


def _operand_residuals(invars, residuals, n_kc: int, n_kk: int):
    """Name residuals that are known consts or xs (read from the scan's own operands).

    Return ``(kinds, computed)``: ``("const", i)``, ``("xs", i)`` or ``("computed", k)``
    per residual, and the computed ones (made in the loop, or known carries: different
    at every step).
    """
    position = {v: i for i, v in enumerate(invars)}
    kinds: list[tuple[str, int]] = []
    computed: list = []
    for r in residuals:
        i = position.get(r)
        if i is not None and i < n_kc:
            kinds.append(("const", i))
        elif i is not None and i >= n_kc + n_kk:
            kinds.append(("xs", i - n_kc - n_kk))
        else:
            kinds.append(("computed", len(computed)))
            computed.append(r)
    return kinds, computed


def _hoist_invariants(known: ClosedJaxpr, n_kc: int, n_known_out: int, n_res: int):
    """Move the residuals (and known work) that depend on known consts only out of the loop.

    ``known`` returns its known outputs, then ``n_res`` residuals. Return ``(hoist,
    loop, loop_dep)``: ``hoist`` (None if nothing moves) maps the known consts to the
    invariant residuals and the loop's consts; ``loop`` is the new body;
    ``loop_dep[k]`` tells whether residual ``k`` stays in the loop.
    """
    # An effect of the body must run once per iteration, so nothing is hoisted past it.
    if not n_kc or has_effects(known):
        return None, known, [True] * n_res
    n_in = len(known.in_avals)
    hoist, loop, uk, _ = partial_eval_jaxpr(
        known, [False] * n_kc + [True] * (n_in - n_kc), [True] * n_known_out + [False] * n_res
    )
    loop_dep = uk[n_known_out:]
    if not hoist.jaxpr.eqns and all(loop_dep):
        return None, known, loop_dep
    return hoist, loop, loop_dep


def _split_scan(body: ClosedJaxpr, unknowns: tuple, params: dict, saveable, dropped: tuple
                ) -> _ScanSplit:  # fmt: skip
    """Split a scan's body into the known and unknown scans' bodies (see ``_ScanSplit``).

    ``dropped[i]`` says whether the equation's output ``i`` is dropped (a DropVar): a
    residual cannot be read from a dropped y.
    """
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    const_uk, carry_uk, xs_uk, known, staged, out_uk, num_res = _body_fixpoint(
        body, unknowns, num_consts, num_carry, saveable
    )
    n_kc, n_kk = num_consts - sum(const_uk), num_carry - sum(carry_uk)
    kj = known.jaxpr
    n_known_out = len(kj.outvars) - num_res
    known_outs, residuals = kj.outvars[:n_known_out], kj.outvars[n_known_out:]

    kinds, computed = _operand_residuals(kj.invars, residuals, n_kc, n_kk)
    known = ClosedJaxpr(kj.replace(outvars=known_outs + computed), known.consts)
    hoist, known, loop_dep = _hoist_invariants(known, n_kc, n_known_out, len(computed))
    n_loop_dep = sum(loop_dep)
    stacked_kinds = _forward_known_ys(known, n_kk, n_known_out, out_uk[num_carry:], dropped)
    kj = known.jaxpr
    known = ClosedJaxpr(
        kj.replace(outvars=kj.outvars[:n_known_out]
                   + [a for a, k in zip(kj.outvars[n_known_out:], stacked_kinds, strict=True)
                      if k[0] == "stacked"]),
        known.consts,
    )  # fmt: skip
    n_stacked = sum(k[0] == "stacked" for k in stacked_kinds)
    dep_index, hoisted_index = iter(range(len(computed))), iter(range(len(computed)))
    computed_kind = [
        stacked_kinds[next(dep_index)] if dep else ("hoisted", next(hoisted_index))
        for dep in loop_dep
    ]
    kinds = [computed_kind[k] if kind == "computed" else (kind, k) for kind, k in kinds]

    # The staged body takes intensive residuals first, extensive ones last.
    sj = staged.jaxpr
    res_vars, unknown_ins = sj.invars[:num_res], sj.invars[num_res:]
    intensive = [
        (k, v) for k, v in zip(kinds, res_vars, strict=True) if k[0] in ("const", "hoisted")
    ]
    extensive = [
        (k, v) for k, v in zip(kinds, res_vars, strict=True) if k[0] in ("xs", "ys", "stacked")
    ]
    staged = ClosedJaxpr(
        sj.replace(
            invars=[v for _, v in intensive] + unknown_ins + [v for _, v in extensive],
            debug_info=_without_names(sj.debug_info),
        ),
        staged.consts,
    )
    split = _ScanSplit(
        tuple(const_uk + carry_uk + xs_uk),
        tuple(carry_uk),
        tuple(out_uk),
        known,
        hoist,
        staged,
        tuple(k for k, _ in intensive),
        tuple(k for k, _ in extensive),
        len(computed) - n_loop_dep,
        n_stacked,
        None,
    )
    if hoist is None:
        return split
    avals = _pick(body.in_avals, split.in_uk, keep=False)
    n_kk = num_carry - sum(carry_uk)
    avals = avals[: n_kc + n_kk] + [_stacked(a, params["length"]) for a in avals[n_kc + n_kk :]]
    return split._replace(known_call=_known_call(split, params, n_kc, avals))


def _forward_known_ys(known: ClosedJaxpr, n_kk: int, n_known_out: int, ys_uk, dropped):
    """Name each loop-dependent residual: a known y that is the same value, or a new stack.

    A residual that the body also returns as a known y (the stacked hidden states of an
    RNN, say) is read from that y instead of being stacked twice.
    """
    outs = known.jaxpr.outvars
    known_ys_dropped = [d for d, uk in zip(dropped[len(dropped) - len(ys_uk) :], ys_uk,
                                           strict=True) if not uk]  # fmt: skip
    y_of: dict = {}
    for j, (atom, drop) in enumerate(zip(outs[n_kk:n_known_out], known_ys_dropped, strict=True)):
        if isinstance(atom, Var) and not drop:
            y_of.setdefault(atom, j)
    kinds, n_new = [], 0
    for atom in outs[n_known_out:]:
        j = y_of.get(atom)
        if j is not None:
            kinds.append(("ys", j))
        else:
            kinds.append(("stacked", n_new))
            n_new += 1
    return kinds


def _known_call(split: _ScanSplit, params: dict, n_kc: int, in_avals) -> ClosedJaxpr:
    """Return the known side as one program: the hoisted work, then the known scan."""
    hoist = split.hoist

    def known(*args):
        consts, rest = args[:n_kc], args[n_kc:]
        out = eval_jaxpr(hoist.jaxpr, hoist.consts, *consts)
        invariant, loop_consts = out[: split.num_invariant], out[split.num_invariant :]
        outs = scan_p.bind(*loop_consts, *rest, **_known_params(split, params, len(loop_consts)))
        return [*invariant, *outs]

    jaxpr, consts = trace_to_jaxpr(wrap_init(known, None), list(in_avals))
    return ClosedJaxpr(jaxpr, consts)


def _known_params(split: _ScanSplit, params: dict, n_loop_consts: int) -> dict:
    n_kk = len(split.carry_uk) - sum(split.carry_uk)
    n_in = len(split.known.in_avals)
    return dict(params, jaxpr=split.known, num_consts=n_loop_consts, num_carry=n_kk,
                linear=(False,) * n_in)  # fmt: skip


_STATIC = ("num_consts", "num_carry", "length", "reverse", "unroll", "_split_transpose")


def _scan_partial_eval(eqn: JaxprEqn, unknowns, saveable):
    """Split a scan equation into a known scan and an unknown scan (partial_eval_rules).

    Counterpart of JAX's ``_scan_partial_eval_custom``: see the module docstring. The
    known side is a scan, or a ``call`` of the hoisted work and a scan.
    """
    params = eqn.params
    if not any(unknowns):
        # Inside checkpoint: a scan the policy does not save is recomputed whole.
        recompute = saveable is not None and not saveable(eqn)
        return eqn, eqn if recompute else None, [False] * len(eqn.outvars)
    body: ClosedJaxpr = params["jaxpr"]
    unknowns = tuple(unknowns)
    dropped = tuple(isinstance(v, DropVar) for v in eqn.outvars)
    if saveable is None:  # policies are made afresh per equation: split those every time
        key = (unknowns, dropped, *(params[name] for name in _STATIC))
        split = _scan_splits.get(
            body, key, lambda: _split_scan(body, unknowns, params, None, dropped)
        )
    else:
        split = _split_scan(body, unknowns, params, saveable, dropped)
    known_eqn, residuals = _known_eqn(eqn, split)
    return known_eqn, _staged_eqn(eqn, split, residuals), list(split.out_uk)


def _known_eqn(eqn: JaxprEqn, split: _ScanSplit):
    """Return the known equation and the residual atoms ``(intensive, extensive)``."""
    params = eqn.params
    num_consts, length = params["num_consts"], params["length"]
    known_in = _pick(eqn.invars, split.in_uk, keep=False)
    n_kc = num_consts - sum(split.in_uk[:num_consts])
    known_consts = known_in[:n_kc]
    known_xs = known_in[n_kc + len(split.carry_uk) - sum(split.carry_uk) :]
    known_outs = _pick(eqn.outvars, split.out_uk, keep=False)
    stacked_avals = split.known.out_avals[len(known_outs) :]
    stacked = [Var(_stacked(a, length)) for a in stacked_avals]
    invariant = []
    if split.known_call is not None:
        call = split.known_call
        invariant = [Var(a) for a in call.out_avals[: split.num_invariant]]
        known_eqn = eqn.replace(
            primitive=call_p,
            invars=known_in,
            outvars=invariant + known_outs + stacked,
            params={"jaxpr": call, "name": "scan_known"},
        )
    elif known_outs or stacked:
        known_eqn = eqn.replace(
            invars=known_in,
            outvars=known_outs + stacked,
            params=_known_params(split, params, n_kc),
        )
    else:
        known_eqn = None
    known_ys = known_outs[len(split.carry_uk) - sum(split.carry_uk) :]
    source = {"const": known_consts, "hoisted": invariant, "xs": known_xs, "ys": known_ys,
              "stacked": stacked}  # fmt: skip
    intensive = [source[kind][k] for kind, k in split.intensive]
    extensive = [source[kind][k] for kind, k in split.extensive]
    return known_eqn, (intensive, extensive)


def _staged_eqn(eqn: JaxprEqn, split: _ScanSplit, residuals) -> JaxprEqn:
    """Return the unknown scan: residuals around the unknown consts, carries and xs."""
    params = eqn.params
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    intensive, extensive = residuals
    consts, carry, xs = _split(eqn.invars, [num_consts, num_carry])
    const_uk, _, xs_uk = _split(split.in_uk, [num_consts, num_carry])
    lin_c, lin_k, lin_x = _split(params["linear"], [num_consts, num_carry])
    unknown_consts = _pick(consts, const_uk)
    invars = [*intensive, *unknown_consts, *_pick(carry, split.carry_uk), *_pick(xs, xs_uk),
              *extensive]  # fmt: skip
    linear = [False] * len(intensive) + _pick(lin_c, const_uk) + _pick(lin_k, split.carry_uk)
    linear += _pick(lin_x, xs_uk) + [False] * len(extensive)
    return eqn.replace(
        invars=invars,
        outvars=_pick(eqn.outvars, split.out_uk),
        params=dict(params, jaxpr=split.staged, num_consts=len(intensive) + len(unknown_consts),
                    num_carry=sum(split.carry_uk), linear=tuple(linear)),
    )  # fmt: skip


partial_eval_rules[scan_p] = _scan_partial_eval


# --- transpose ----------------------------------------------------------------------------

_transposed_bodies = JaxprCache("scan_transpose")


class _ScanTranspose(NamedTuple):
    """The transposed scan's body and which cotangents it carries and returns.

    ``body`` takes ``(*body_consts, *nonlinear_consts, *const_ct_accumulators,
    *carry_cts, *ys_cts, *nonlinear_xs)`` and returns ``(*const_ct_accumulators,
    *carry_cts, *xs_cts)``, for the linear consts in ``const_nz``, the carries in
    ``carry_nz`` and the linear xs in ``xs_nz`` (the others get zero cotangents).
    """

    body: ClosedJaxpr
    consts: tuple
    const_nz: tuple[bool, ...]
    carry_nz: tuple[bool, ...]
    xs_nz: tuple[bool, ...]


def _transpose_body(body: ClosedJaxpr, lin_c, lin_x, num_carry, carry_nz, ys_nz) -> _ScanTranspose:
    """Transpose ``body`` for the transposed scan, with the nonzero carry cotangents by fixpoint.

    Carries are all linear: a carry cotangent is nonzero if it is nonzero on entry
    (``carry_nz``) or the body makes it so from the nonzero cotangents.
    """
    linear = (*lin_c, *[True] * num_carry, *lin_x)
    n_lc = sum(lin_c)
    carry_nz = list(carry_nz)
    for _ in range(num_carry + 1):
        out_zeros = [not nz for nz in carry_nz] + [not nz for nz in ys_nz]
        t_body, in_zeros = transpose_jaxpr(body, linear, out_zeros)
        in_nz = [not z for z in in_zeros]
        carry_in_nz = in_nz[n_lc : n_lc + num_carry]
        if all(b <= a for a, b in zip(carry_nz, carry_in_nz, strict=True)):
            break
        carry_nz = [a or b for a, b in zip(carry_nz, carry_in_nz, strict=True)]
    const_nz, carry_in_nz, xs_nz = _split(in_nz, [n_lc, num_carry])
    n_nl_c = len(lin_c) - n_lc
    n_acc, n_carry_ct, n_ys_ct = sum(const_nz), sum(carry_nz), sum(ys_nz)
    carry_avals = body.in_avals[len(lin_c) : len(lin_c) + num_carry]
    avals = (
        _pick(body.in_avals[: len(lin_c)], lin_c, keep=False)
        + _pick(_pick(body.in_avals[: len(lin_c)], lin_c), const_nz)
        + _pick(carry_avals, carry_nz)
        + _pick(body.out_avals[num_carry:], ys_nz)
        + _pick(body.in_avals[len(lin_c) + num_carry :], lin_x, keep=False)
    )

    def transposed(*args):
        nl_consts, acc, carry_ct, ys_ct, nl_xs = _split(args, [n_nl_c, n_acc, n_carry_ct, n_ys_ct])
        outs = eval_jaxpr(t_body.jaxpr, t_body.consts, *nl_consts, *nl_xs, *carry_ct, *ys_ct)
        const_cts, carry_cts, xs_cts = _split(outs, [n_acc, sum(carry_in_nz)])
        new_acc = [add_tangents(a, c) for a, c in zip(acc, const_cts, strict=True)]
        carry_iter = iter(carry_cts)
        new_carry = [
            next(carry_iter) if made else zeros(tangent_aval(aval))
            for aval, nz, made in zip(carry_avals, carry_nz, carry_in_nz, strict=True)
            if nz
        ]
        return [*new_acc, *new_carry, *xs_cts]

    jaxpr, consts = trace_to_jaxpr(wrap_init(transposed, None), avals)
    closed, consts = _closed_and_consts(jaxpr, consts)
    return _ScanTranspose(closed, consts, tuple(const_nz), tuple(carry_nz), tuple(xs_nz))


def _scan_transpose(cts, *args, jaxpr, length, reverse, unroll, num_consts, num_carry, linear,
                    _split_transpose):  # fmt: skip
    """Transpose a linear scan into a scan that runs the other way (transpose_rules).

    Counterpart of JAX's ``_scan_transpose``. Consts and xs may mix residuals (known
    values) and linear operands in any order; every carry is treated as linear (a known
    carry operand of a linear scan is zero, and gets no cotangent).
    """
    consts, init, xs = _split(args, [num_consts, num_carry])
    lin_c = tuple(is_undefined_primal(a) for a in consts)
    lin_x = tuple(is_undefined_primal(a) for a in xs)
    ct_carry, ct_ys = cts[:num_carry], cts[num_carry:]
    carry_nz = tuple(type(c) is not Zero for c in ct_carry)
    ys_nz = tuple(type(c) is not Zero for c in ct_ys)
    key = (lin_c, lin_x, num_carry, carry_nz, ys_nz)
    t = _transposed_bodies.get(
        jaxpr,
        key,
        lambda: _transpose_body(jaxpr, lin_c, lin_x, num_carry, carry_nz, ys_nz),
        lambda value: not has_tracers(value.consts),
    )
    results: list = [None] * len(args)
    if not (any(t.const_nz) or any(t.carry_nz) or any(t.xs_nz)):
        return results
    lin_consts = _pick(consts, lin_c)
    acc = [zeros(tangent_aval(c.aval)) for c, nz in zip(lin_consts, t.const_nz, strict=True) if nz]
    carry_ct = [instantiate(c) for c, nz in zip(ct_carry, t.carry_nz, strict=True) if nz]
    ys_ct = _pick(ct_ys, ys_nz)
    nl_consts, nl_xs = _pick(consts, lin_c, keep=False), _pick(xs, lin_x, keep=False)
    operands = [*t.consts, *nl_consts, *acc, *carry_ct, *ys_ct, *nl_xs]
    n_lead = len(t.consts) + len(nl_consts)
    outs = scan_p.bind(
        *operands,
        jaxpr=t.body,
        length=length,
        reverse=not reverse,
        unroll=unroll,
        num_consts=n_lead,
        num_carry=len(acc) + len(carry_ct),
        linear=(False,) * n_lead + (True,) * (len(acc) + len(carry_ct) + len(ys_ct))
        + (False,) * len(nl_xs),
        _split_transpose=_split_transpose,
    )  # fmt: skip
    acc_out, carry_out, xs_out = _split(outs, [len(acc), len(carry_ct)])
    _scatter(results, [i for i, lin in enumerate(lin_c) if lin], t.const_nz, acc_out, args)
    carry_idx = list(range(num_consts, num_consts + num_carry))
    _scatter(results, carry_idx, t.carry_nz, carry_out, args)
    xs_idx = [num_consts + num_carry + i for i, lin in enumerate(lin_x) if lin]
    _scatter(results, xs_idx, t.xs_nz, xs_out, args)
    return results


def _scatter(results: list, positions, nonzeros, values, args) -> None:
    """Write ``values`` to ``results`` at the nonzero ``positions`` of linear ``args``."""
    it = iter(values)
    for pos, nz in zip(positions, nonzeros, strict=True):
        if nz:
            value = next(it)
            if is_undefined_primal(args[pos]):  # a known carry operand gets no cotangent
                results[pos] = value


transpose_rules[scan_p] = _scan_transpose
