"""``scan_p`` under ``vmap`` and under dead-code elimination (jax's scan batching and DCE rules).

Two rules, registered here:

* batching (``axis_primitive_batchers[scan_p]``, so named-axis collectives in the
  body see the vmapped axis): consts are batched at axis 0, carries at axis 0
  (a carry that the body makes batched forces its initial value batched, by
  fixpoint), and the ``xs`` at axis 1, so that each slice the body sees is
  batched at 0; the ``ys`` come out batched one axis past where the body puts them;
* DCE (``dce_rules[scan_p]``): unused ``ys`` go, and so do carries that neither
  a used output nor the computation of a needed carry or ``y`` reads (by
  fixpoint), and the consts and ``xs`` the pruned body no longer reads. A body
  with effects keeps the equation whole.
"""

from __future__ import annotations

from modjax.batching import (
    AxisData,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    matchaxis,
    moveaxis,
    uses_axis_primitives,
)
from modjax.tracecore.dce import dce_closed_jaxpr, dce_rules, has_effects
from modjax.tracecore.jaxpr import ClosedJaxpr, JaxprEqn
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.tracing import convert_constvars_jaxpr

from .loops import scan_p

__all__: list[str] = []

# Batched bodies (consts hoisted), per (axis, counts, batched inputs), weakly on the body.
_batched_bodies = JaxprCache("scan_batch")


def _split3(seq, num_consts: int, num_carry: int) -> tuple[list, list, list]:
    seq = list(seq)
    return seq[:num_consts], seq[num_consts : num_consts + num_carry], seq[num_consts + num_carry :]


# --- batching ------------------------------------------------------------------------------


def _batch_body(
    jaxpr: ClosedJaxpr, axis_data: AxisData, num_consts: int, num_carry: int, in_batched: tuple
):
    """Batch the body once per (axis, batched inputs), forcing carries batched by fixpoint.

    ``in_batched`` says which of the body's ``(*consts, *carry, *x_slices)`` inputs are
    batched (each at axis 0). Return the batched body (without consts), its hoisted
    consts, which carries are batched (at 0) and the batch dims of the ``y`` slices.
    """

    def compute():
        consts_b, carry_b, xs_b = _split3(in_batched, num_consts, num_carry)
        n_ys = len(jaxpr.out_avals) - num_carry
        # Each pass can only turn more carries batched: num_carry + 1 passes reach the fixpoint.
        for _ in range(num_carry + 1):
            in_dims = tuple(0 if b else None for b in (*consts_b, *carry_b, *xs_b))
            out_inst = tuple(0 if b else None for b in carry_b) + (None,) * n_ys
            batched, out_dims = batch_jaxpr_axis(jaxpr, axis_data, in_dims, out_inst)
            new = [b or d is not None for b, d in zip(carry_b, out_dims[:num_carry], strict=True)]
            if new == carry_b:
                break
            carry_b = new
        consts = list(batched.consts)
        if consts:  # a scan body takes its consts as operands: hoist these ones
            batched = ClosedJaxpr(convert_constvars_jaxpr(batched.jaxpr), ())
        return batched, consts, tuple(carry_b), tuple(out_dims[num_carry:])

    key = (axis_data, num_consts, num_carry, in_batched)
    return _batched_bodies.get(jaxpr, key, compute, lambda v: not has_tracers(v[1]))


def _scan_batching_rule(
    axis_data: AxisData, args, dims, *, jaxpr, num_consts, num_carry, linear, **params
):
    """Batch a scan (jax's ``_scan_batching_rule``): carries and consts at 0, ``xs`` at 1.

    ``params`` are the ones the batched scan keeps: length, reverse, unroll, _split_transpose.
    """
    if all(d is None for d in dims) and not uses_axis_primitives(jaxpr.jaxpr):
        outs = scan_p.bind(*args, jaxpr=jaxpr, num_consts=num_consts, num_carry=num_carry,
                           linear=linear, **params)  # fmt: skip
        return outs, [None] * len(outs)
    in_batched = tuple(d is not None for d in dims)
    batched, new_consts, carry_b, y_dims = _batch_body(
        jaxpr, axis_data, num_consts, num_carry, in_batched
    )
    consts, init, xs = _split3(args, num_consts, num_carry)
    consts_d, init_d, xs_d = _split3(dims, num_consts, num_carry)
    size = axis_data.size
    consts = [x if d is None else moveaxis(x, d, 0) for x, d in zip(consts, consts_d, strict=True)]
    # An unbatched init of a carry the body batches is broadcast to the batch.
    init = [matchaxis(size, d, 0 if b else None, x)
            for x, d, b in zip(init, init_d, carry_b, strict=True)]  # fmt: skip
    # Axis 0 is the scanned one; the batch goes next to it, so each slice has it at 0.
    xs = [x if d is None else moveaxis(x, d, 1) for x, d in zip(xs, xs_d, strict=True)]
    outs = scan_p.bind(
        *new_consts,
        *consts,
        *init,
        *xs,
        jaxpr=batched,
        num_consts=len(new_consts) + num_consts,
        num_carry=num_carry,
        linear=(False,) * len(new_consts) + tuple(linear),
        **params,
    )
    carry_dims = [0 if b else None for b in carry_b]
    ys_dims = [None if d is None else d + 1 for d in y_dims]  # stacking adds a leading axis
    return outs, carry_dims + ys_dims


axis_primitive_batchers[scan_p] = _scan_batching_rule


# --- dead-code elimination -----------------------------------------------------------------


def _used_carries(jaxpr: ClosedJaxpr, num_consts: int, num_carry: int, used_outputs) -> list:
    """Return which carries are needed: used outside, or read to compute a needed output."""
    used_carry = list(used_outputs[:num_carry])
    used_ys = list(used_outputs[num_carry:])
    # Each pass can only add carries: num_carry + 1 passes reach the fixpoint.
    for _ in range(num_carry + 1):
        _, used_in = dce_closed_jaxpr(jaxpr, used_carry + used_ys)
        read = used_in[num_consts : num_consts + num_carry]
        new = [a or b for a, b in zip(used_carry, read, strict=True)]
        if new == used_carry:
            break
        used_carry = new
    return used_carry


def _scan_dce_rule(used_outputs: list[bool], eqn: JaxprEqn):
    """Prune a scan's unused ys, carries (by fixpoint), consts and xs (jax's ``_scan_dce_rule``)."""
    params = eqn.params
    jaxpr: ClosedJaxpr = params["jaxpr"]
    num_consts, num_carry = params["num_consts"], params["num_carry"]
    if has_effects(jaxpr):  # an effect runs once per iteration: keep the loop as it is
        return [True] * len(eqn.invars), eqn
    if not any(used_outputs):
        return [False] * len(eqn.invars), None
    used_carry = _used_carries(jaxpr, num_consts, num_carry, used_outputs)
    used_ys = list(used_outputs[num_carry:])
    n_xs = len(eqn.invars) - num_consts - num_carry
    # A kept carry stays an input of the body even where the body ignores it.
    instantiate = [False] * num_consts + used_carry + [False] * n_xs
    new_jaxpr, used_inputs = dce_closed_jaxpr(jaxpr, used_carry + used_ys, instantiate)
    if new_jaxpr is jaxpr:
        return used_inputs, eqn
    used_outs = used_carry + used_ys
    new_params = dict(
        params,
        jaxpr=new_jaxpr,
        num_consts=sum(used_inputs[:num_consts]),
        num_carry=sum(used_carry),
        linear=tuple(lin for lin, u in zip(params["linear"], used_inputs, strict=True) if u),
    )
    new_eqn = eqn.replace(
        invars=[v for v, u in zip(eqn.invars, used_inputs, strict=True) if u],
        outvars=[v for v, u in zip(eqn.outvars, used_outs, strict=True) if u],
        params=new_params,
    )
    return used_inputs, new_eqn


dce_rules[scan_p] = _scan_dce_rule
