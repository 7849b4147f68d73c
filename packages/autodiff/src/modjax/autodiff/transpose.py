"""Reverse mode: transposition of linear jaxprs, and the rules of call-like primitives.

``backward_pass`` walks a jaxpr whose linear inputs are ``UndefinedPrimal``s.
Equations that read no linear value (recomputation under ``checkpoint``,
functions of residuals) are evaluated first, in order, and so are the results of
a call that read no linear operand of it (a checkpoint's staged side returns the
primal values it recomputes beside the tangents); then the linear equations
are visited in reverse, each transpose rule turning the cotangents of an
equation's outputs into cotangents of its linear inputs. Cotangents are
accumulated per variable with ``add_any``, and symbolic zeros are never
materialized: an equation whose output cotangents are all zero is skipped.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call_p
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.dce import dce_rules, default_params_updater, eqn_has_effects
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, Literal, Var, subjaxprs
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.state import AbstractRef, discharge_state, has_refs, ref_methods
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .jvp import jvp_call_rule
from .tangents import (
    UndefinedPrimal,
    Zero,
    add_tangents,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    transpose_rules,
)

__all__ = [
    "backward_pass",
    "transpose_jaxpr",
    "transpose_call_rule",
    "register_call_rules",
]


def _check_memory_space(aval, ct) -> None:
    """Raise JAX's ValueError for a cotangent in another memory space than its value's."""
    if type(aval) is not ShapedArray:
        return
    ct_aval = to_aval(ct)
    if getattr(ct_aval, "memory_space", aval.memory_space) is not aval.memory_space:
        raise ValueError(
            f"Expected cotangent type {aval.str_short()} but got {ct_aval.str_short()}"
        )


def backward_pass(jaxpr: Jaxpr, consts: Sequence[Any], args: Sequence[Any], cotangents_out):
    """Transpose ``jaxpr`` with respect to its linear inputs (jax's ``ad.backward_pass``).

    ``args`` gives each invar a value, or ``UndefinedPrimal(aval)`` for a linear input;
    ``cotangents_out`` gives each output a cotangent (``Zero`` or None for zero). Return
    one entry per invar: the cotangent of a linear input (``Zero`` when nothing flowed
    into it), None for the others.
    """
    if has_refs(jaxpr):
        # References in a linear program (the tangents of ones the function made): transpose
        # the pure program state discharge gives, whose reads and writes are slices and
        # scatters with transposes of their own.
        n_lead = 0
        if any(type(v.aval) is AbstractRef for v in jaxpr.constvars):
            # A primal reference read by an equation staged whole (a while loop with
            # effects): discharged as a leading input holding the reference's value.
            args = [*(_held_value(v, c) for v, c in zip(jaxpr.constvars, consts, strict=True)),
                    *args]  # fmt: skip
            n_lead, consts = len(consts), ()
            jaxpr = convert_constvars_jaxpr(jaxpr)
        n_out = len(jaxpr.outvars)
        discharged = discharge_state(ClosedJaxpr(jaxpr, consts), for_transpose=True)
        jaxpr, consts = discharged.jaxpr, discharged.consts
        # The final values of reference inputs come out after the outputs: no cotangent.
        cotangents_out = [*cotangents_out, *[None] * (len(jaxpr.outvars) - n_out)]
        return backward_pass(jaxpr, consts, args, cotangents_out)[n_lead:]
    primal_env: dict[Var, Any] = dict(zip(jaxpr.constvars, consts, strict=True))
    linear: set[Var] = set()
    for var, arg in zip(jaxpr.invars, args, strict=True):
        if is_undefined_primal(arg):
            linear.add(var)
        else:
            primal_env[var] = arg

    def read_primal(atom):
        return atom.val if type(atom) is Literal else primal_env[atom]

    # Forward sweep: evaluate what does not depend on linear inputs.
    linear_eqns = []
    for eqn in jaxpr.eqns:
        lin_in = [type(a) is not Literal and a in linear for a in eqn.invars]
        if any(lin_in):
            linear_eqns.append(eqn)
            primal_outs = _primal_outputs(eqn, lin_in)
            if any(primal_outs):
                # A call that also recomputes primal values (a checkpoint's staged side):
                # those results read no linear input, so run the call pruned to them now.
                _, pruned = dce_rules[eqn.primitive](primal_outs, eqn)
                assert pruned is not None
                with source_info_util.user_context(eqn.source_info):
                    outs = pruned.primitive.bind(*map(read_primal, pruned.invars), **pruned.params)
                primal_env.update(zip(pruned.outvars, outs, strict=True))
            linear.update(v for v, p in zip(eqn.outvars, primal_outs, strict=True) if not p)
            continue
        with source_info_util.user_context(eqn.source_info):
            outs = eqn.primitive.bind(*map(read_primal, eqn.invars), **eqn.params)
        if not eqn.primitive.multiple_results:
            outs = [outs]
        primal_env.update(zip(eqn.outvars, outs, strict=True))

    ct_env: dict[Var, Any] = {}

    check_spaces = ShapedArray.memory_spaces_seen

    def write(var, ct):
        if ct is None or type(ct) is Zero or type(var) is Literal or var not in linear:
            return
        if check_spaces:
            _check_memory_space(var.aval, ct)
        ct_env[var] = add_tangents(ct_env[var], ct) if var in ct_env else ct

    for var, ct in zip(jaxpr.outvars, cotangents_out, strict=True):
        write(var, ct)

    with source_info_util.transform_name("transpose"):
        for eqn in reversed(linear_eqns):
            cts_in = [ct_env.pop(v, None) for v in eqn.outvars]
            if all(ct is None for ct in cts_in):
                continue
            rule = transpose_rules.get(eqn.primitive)
            if rule is None:
                raise NotImplementedError(
                    f"Transpose rule (for reverse-mode differentiation) for "
                    f"'{eqn.primitive.name}' not implemented (register one in "
                    "modjax.autodiff.transpose_rules)"
                )
            args_in = [
                UndefinedPrimal(a.aval)
                if type(a) is not Literal and a in linear
                else read_primal(a)
                for a in eqn.invars
            ]
            if eqn.primitive.multiple_results:
                ct = [
                    Zero(v.aval) if c is None else c
                    for v, c in zip(eqn.outvars, cts_in, strict=True)
                ]
            else:
                ct = cts_in[0]
            # The cotangents' sums (add_any) belong to this equation's place, as in JAX.
            with source_info_util.user_context(eqn.source_info):
                cts_out = rule(ct, *args_in, **eqn.params)
                if len(cts_out) != len(eqn.invars):
                    raise ValueError(
                        f"transpose rule of '{eqn.primitive.name}' returned {len(cts_out)} "
                        f"cotangents for {len(eqn.invars)} operands"
                    )
                for atom, ct_out in zip(eqn.invars, cts_out, strict=True):
                    write(atom, ct_out)

    return [ct_env.get(v, Zero(v.aval)) if v in linear else None for v in jaxpr.invars]


# Transposes of programs, by (linear inputs, zero output cotangents); see jaxpr_cache.
_transposed_jaxprs = JaxprCache("transpose")


def _held_value(var: Var, value):
    """Return the array a reference ``value`` holds (``value`` itself for an array)."""
    if type(var.aval) is not AbstractRef:
        return value
    return ref_methods["get"](value, None)


def _primal_outputs(eqn, lin_in: list[bool]) -> list[bool]:
    """Which results of ``eqn`` (which reads a linear value) depend on no linear operand.

    Only a multi-result call without effects can have such results (the staged side of
    a checkpoint returns the primal values it recomputes beside the tangents).
    """
    rule = dce_rules.get(eqn.primitive)
    n = len(eqn.outvars)
    if (
        rule is None
        or not eqn.primitive.multiple_results
        or n < 2
        or next(subjaxprs(eqn.params), None) is None
        or eqn_has_effects(eqn)
    ):
        return [False] * n
    out = []
    for i in range(n):
        used_inputs, _ = rule([j == i for j in range(n)], eqn)
        out.append(not any(u and lin for u, lin in zip(used_inputs, lin_in, strict=True)))
    return out


def transpose_jaxpr(
    closed: ClosedJaxpr, linear: Sequence[bool], out_zeros: Sequence[bool]
) -> tuple[ClosedJaxpr, list[bool]]:
    """Return the transpose of ``closed`` and which linear inputs get zero cotangents.

    Counterpart of jax's ``ad_checkpoint.transpose_jaxpr``.

    The new jaxpr takes ``(*nonlinear_inputs, *nonzero_output_cotangents)`` (cotangents
    of the outputs where ``out_zeros`` is False) and returns the cotangents of the
    linear inputs, except those that are symbolically zero (the returned mask). The
    result is derived once per ``closed`` object and flags (cached weakly).
    """
    linear, out_zeros = tuple(linear), tuple(out_zeros)
    t_closed, in_zeros = _transposed_jaxprs.get(
        closed,
        (linear, out_zeros),
        lambda: _transpose_jaxpr(closed, linear, out_zeros),
        lambda value: not has_tracers(value[0].consts),
    )
    return t_closed, list(in_zeros)


def _transpose_jaxpr(closed: ClosedJaxpr, linear: tuple, out_zeros: tuple):
    in_avals = [a for a, lin in zip(closed.in_avals, linear, strict=True) if not lin] + [
        tangent_aval(a) for a, z in zip(closed.out_avals, out_zeros, strict=True) if not z
    ]
    n_nonlinear = len(linear) - sum(linear)
    in_zeros: list[bool] = []

    def fun(*args):
        nonlinear, nz_cts = iter(args[:n_nonlinear]), iter(args[n_nonlinear:])
        primals = [
            UndefinedPrimal(a) if lin else next(nonlinear)
            for a, lin in zip(closed.in_avals, linear, strict=True)
        ]
        cts = [None if z else next(nz_cts) for z in out_zeros]
        in_cts = backward_pass(closed.jaxpr, closed.consts, primals, cts)
        lin_cts = [ct for ct, lin in zip(in_cts, linear, strict=True) if lin]
        in_zeros[:] = [type(ct) is Zero for ct in lin_cts]
        return [ct for ct in lin_cts if type(ct) is not Zero]

    jaxpr, consts = trace_to_jaxpr(wrap_init(fun, None), in_avals)
    return ClosedJaxpr(jaxpr, consts), tuple(in_zeros)


def _call_transpose_jaxpr(closed: ClosedJaxpr, linear: tuple, out_zeros: tuple):
    """Return the transpose of a call's program with its consts as leading operands (cached)."""

    def compute():
        t_closed, in_zeros = transpose_jaxpr(closed, linear, out_zeros)
        consts = t_closed.consts
        if consts:
            t_closed = ClosedJaxpr(convert_constvars_jaxpr(t_closed.jaxpr), ())
        return t_closed, tuple(consts), tuple(in_zeros)

    return _transposed_jaxprs.get(
        closed, ("call", linear, out_zeros), compute, lambda value: not has_tracers(value[1])
    )


def transpose_call_rule(primitive: Primitive, cts, *args, update_params=None, **params):
    """Transpose a call-like equation: bind a call of the transposed ``jaxpr`` param.

    Counterpart of jax's ``ad.call_transpose``.

    The new call takes the non-linear operands and the nonzero cotangents and returns
    the nonzero cotangents of the linear operands. Non-linear equations of the inner
    program (recomputation) run inside the new call. ``update_params`` is tracecore's
    ``ParamsUpdater`` (all results and the cotangent operands are new: ``None``). The
    transpose of a program is derived once per program, linear operands and zero
    cotangents.
    """
    closed: ClosedJaxpr = params["jaxpr"]
    linear = tuple(is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is Zero for ct in cts)
    t_closed, consts, in_zeros = _call_transpose_jaxpr(closed, linear, out_zeros)
    nonlinear = [(i, a) for i, (a, lin) in enumerate(zip(args, linear, strict=True)) if not lin]
    nz_cts = [ct for ct in cts if type(ct) is not Zero]
    results: list[Any] = [None] * len(args)
    if not t_closed.out_avals:
        return results
    in_map = [None] * len(consts) + [i for i, _ in nonlinear] + [None] * len(nz_cts)
    out_map = [None] * len(t_closed.out_avals)
    new_params = (update_params or default_params_updater)(params, in_map, out_map, t_closed)
    outs = iter(primitive.bind(*consts, *[a for _, a in nonlinear], *nz_cts, **new_params))
    lin_index = [i for i, lin in enumerate(linear) if lin]
    for i, zero in zip(lin_index, in_zeros, strict=True):
        if not zero:
            results[i] = next(outs)
    return results


def register_call_rules(primitive: Primitive, update_params=None) -> None:
    """Register the generic JVP and transpose rules for a call-like ``primitive``.

    Counterpart of jax's ``ad.primitive_jvps``/``primitive_transposes`` entries of
    ``closed_call_p``.

    The autodiff half of tracecore's ``register_call_rules`` (which gives DCE, partial
    evaluation and inlining): ``primitive``'s ``jaxpr`` param is applied 1:1 to its
    operands. The runtime registers jit's primitive this way.
    """
    jvp_rules[primitive] = functools.partial(jvp_call_rule, primitive, update_params=update_params)
    transpose_rules[primitive] = functools.partial(
        transpose_call_rule, primitive, update_params=update_params
    )


register_call_rules(call_p)
