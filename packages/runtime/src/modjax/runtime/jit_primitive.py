"""``jit_p``: the call primitive a jitted function binds under a transformation.

Under an outer jit, ``make_jaxpr``, grad or vmap, calling a jitted function binds
``jit_p`` with its traced program (params ``jaxpr``, consts as leading operands,
``name``, ``donated_invars``, ``keep_unused``, ``inline``, and, when jit was given
any, ``in_shardings``/``out_shardings`` per operand and result): a nested jit is one call
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

import functools

from modjax.autodiff import Zero, is_undefined_primal, jvp_rules, transpose_rules
from modjax.autodiff import register_call_rules as register_autodiff_call_rules
from modjax.autodiff.jvp import _call_jvp_jaxpr, jvp_call_rule
from modjax.autodiff.transpose import _call_transpose_jaxpr, transpose_call_rule
from modjax.batching import axis_primitive_batchers, call_batching_rule, register_call_batching
from modjax.lowering import call_lowering, register_lowering, sharding_constraint
from modjax.tracecore import core
from modjax.tracecore.abstract import physical_aval
from modjax.tracecore.call import check_call_operands, register_call_rules
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, Literal
from modjax.tracecore.jaxpr_cache import JaxprCache
from modjax.tracecore.parse import register_param_defaults
from modjax.tracecore.partial_eval import partial_eval_rules
from modjax.tracecore.pretty import (
    format_param_value,
    register_aliased_jaxpr,
    register_param_order,
    register_param_printer,
)
from modjax.tracecore.state import Ref, register_call_discharge

from .arguments import leaf_aval
from .debugging import disable_jit
from .executable import committed_sharding, compile_jaxpr, one_device_placement
from .executable import placement as _placement
from .extended import checked_run
from .refs import apply_with_refs
from .spmd import SpmdTarget, jaxpr_shardings, one_device_shardings, spmd_target

__all__ = ["jit_p", "jit_update_params", "jit_batching_update_params"]

jit_p = core.Primitive("jit")
jit_p.multiple_results = True


def _jit_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, **_):
    check_call_operands(jit_p, in_avals, jaxpr)
    return jaxpr.out_avals


# Executables of jit equations run eagerly (outside any jit), per jaxpr object: held
# weakly on the jaxpr, so they go with the program (and the closure it came from).
_impl_cache = JaxprCache("jit_impl")
# The shardings a program's equations hold (shard_map's, constraints'), per jaxpr object.
_inner_shardings = JaxprCache("jit_inner_shardings")


def _jit_impl(
    *args,
    jaxpr: ClosedJaxpr,
    name: str,
    donated_invars,
    keep_unused,
    inline,
    in_shardings=None,
    out_shardings=None,
):
    """Run a ``jit`` equation on concrete values: compile its jaxpr (once) and execute it.

    The equation's ``in_shardings``/``out_shardings`` (if any) place the call as
    jit's would.
    """
    if disable_jit.option.value:  # type: ignore[attr-defined]
        return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)
    if any(type(a) is Ref for a in args):
        # A concrete reference operand (the known half of a call split while
        # linearizing): the call is discharged and the reference updated in place.
        params = {"jaxpr": jaxpr, "name": name, "donated_invars": donated_invars}
        params.update(keep_unused=keep_unused, inline=inline)
        if in_shardings is not None:
            params.update(in_shardings=in_shardings, out_shardings=out_shardings)
        return apply_with_refs(jit_p, *args, **params)
    device, committed = _placement(args)
    one_device = None
    # A program without shardings of its own (an equation checkify or a transformation
    # rebuilt) may still hold a shard_map: it runs on that mesh's devices.
    inner = _inner_shardings.get(jaxpr, (), lambda: tuple(jaxpr_shardings(jaxpr.jaxpr)))
    if in_shardings is not None or inner:
        target = spmd_target(
            args,
            in_shardings,
            out_shardings,
            inner,
            committed_of=committed_sharding,
        )
        if target is not None:
            device, committed = target, True
        else:
            one_device = one_device_shardings(in_shardings, out_shardings)
            if one_device is not None:
                device, committed = one_device_placement(args, inner, in_shardings, out_shardings)
    avals = tuple(leaf_aval(x) for x in args)
    executable = _impl_cache.get(
        jaxpr,
        (avals, device, committed, donated_invars, keep_unused, one_device),
        lambda: compile_jaxpr(
            jaxpr,
            device,
            name=name,
            donated=donated_invars,
            keep_unused=keep_unused,
            committed=committed,
            one_device_shardings=None if isinstance(device, SpmdTarget) else one_device,
        ),
    )
    return checked_run(executable, jaxpr, args, executable.place(args))


def jit_update_params(params, in_map, out_map, new_jaxpr):
    """Rebuild a jit equation's params for a new program (``in_map``/``out_map``: old positions).

    New operands and results (residuals, tangents, cotangents) are neither
    donated nor given a sharding.
    """
    donated = params["donated_invars"]
    new = {
        **params,
        "jaxpr": new_jaxpr,
        "donated_invars": tuple(False if i is None else donated[i] for i in in_map),
    }
    if "in_shardings" in params:
        ins, outs = params["in_shardings"], params["out_shardings"]
        new["in_shardings"] = tuple(None if i is None else ins[i] for i in in_map)
        new["out_shardings"] = tuple(None if i is None else outs[i] for i in out_map)
    return new


def _constrain(ctx, values, avals, shardings):
    """Constrain ``values`` to ``shardings`` (None: left alone) in a partitioned module."""
    mctx = ctx.module_ctx
    if mctx.partitioning != "shardy":
        return list(values)
    out = []
    for value, aval, s in zip(values, avals, shardings, strict=True):
        if s is not None and getattr(s, "_sdy_mesh", None) is not None:
            ndim = len(physical_aval(aval).shape)  # a key array's stored values: more dims
            text = s._to_sdy_sharding(ndim, mctx.sdy_mesh_name(s._sdy_mesh))
            value = sharding_constraint(value, text.removeprefix("#sdy.sharding"))
        out.append(value)
    return out


def _jit_lowering(ctx, *args, in_shardings=None, out_shardings=None, **params):
    """A ``func.call`` of the program; its shardings constrain operands and results.

    As JAX annotates a nested jit's arguments and results, so the partitioner
    lays them out as the inner jit's ``in_shardings``/``out_shardings`` say.
    """
    if in_shardings is not None:
        args = tuple(_constrain(ctx, args, ctx.avals_in, in_shardings))
    outs = call_lowering(ctx, *args, **params)
    if out_shardings is not None:
        outs = _constrain(ctx, outs, ctx.avals_out, out_shardings)
    return outs


jit_p.def_abstract_eval(_jit_abstract_eval)
jit_p.def_impl(_jit_impl)
register_call_rules(jit_p, update_params=jit_update_params)
register_lowering(jit_p, _jit_lowering)

# JAX's text of a jit equation: name first, flags only when set, the program's
# variables named after the equation's (the parser restores the flags).
register_param_order(jit_p, ("name",))
register_aliased_jaxpr(jit_p, "jaxpr")
register_param_printer(
    jit_p, "donated_invars", lambda flags: format_param_value(flags) if any(flags) else None
)
for _flag in ("inline", "keep_unused"):
    register_param_printer(jit_p, _flag, lambda flag: "True" if flag else None)
register_param_defaults(
    jit_p, lambda n: {"donated_invars": (False,) * n, "inline": False, "keep_unused": False}
)


def _discharge_params(params, n, jaxpr):
    """Params of a jit equation whose program was discharged (references crossing the call).

    The ``n`` consts become leading operands; each reference gets an extra result
    (its final value) after the others: none of them has a sharding.
    """
    new = {
        **params,
        "jaxpr": jaxpr,
        "donated_invars": (False,) * n + tuple(params["donated_invars"]),
    }
    if "in_shardings" in params:
        outs = tuple(params["out_shardings"])
        new["in_shardings"] = (None,) * n + tuple(params["in_shardings"])
        new["out_shardings"] = outs + (None,) * (len(jaxpr.out_avals) - len(outs))
    return new


# References crossing the call: its program is discharged, consts first (tracecore's state).
register_call_discharge(jit_p, _discharge_params)


# --- autodiff's and batching's rules (runtime sees both) -------------------------------------


def jit_batching_update_params(params, in_dims, out_dims, new_jaxpr, spmd_axis_name=None):
    """Batching's updater: consts of the batched program are new leading operands.

    Each sharding gains the batch dimension, unsplit, or split over the vmap's
    ``spmd_axis_name`` (JAX's rule for a jit under vmap).
    """
    donated = params["donated_invars"]
    extra = len(in_dims) - len(donated)
    new = {**params, "jaxpr": new_jaxpr, "donated_invars": (False,) * extra + tuple(donated)}
    if "in_shardings" in params:
        ins = (None,) * extra + tuple(params["in_shardings"])
        new["in_shardings"] = tuple(
            _batch_sharding(s, d, a, spmd_axis_name)
            for s, d, a in zip(ins, in_dims, new_jaxpr.in_avals, strict=True)
        )
        new["out_shardings"] = tuple(
            _batch_sharding(s, d, a, spmd_axis_name)
            for s, d, a in zip(params["out_shardings"], out_dims, new_jaxpr.out_avals, strict=True)
        )
    return new


def _batch_sharding(sharding, dim, aval, spmd_axis_name):
    if sharding is None or dim is None or not hasattr(sharding, "_with_batch_dim"):
        return sharding
    return sharding._with_batch_dim(dim, len(aval.shape), spmd_axis_name)


def _jit_batching(axis_data, args, dims, **params):
    updater = functools.partial(jit_batching_update_params, spmd_axis_name=axis_data.spmd_name)
    return call_batching_rule(jit_p, updater, axis_data, args, dims, **params)


def _jit_jvp(primals, tangents, **params):
    """JVP of a jit equation; as in JAX, tangents are laid out like their primals."""
    if "in_shardings" not in params:
        return jvp_call_rule(jit_p, primals, tangents, update_params=jit_update_params, **params)
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    _, _, out_nonzeros = _call_jvp_jaxpr(params["jaxpr"], nonzeros)  # cached: the rule's own
    ins, outs = params["in_shardings"], params["out_shardings"]

    def update(p, in_map, out_map, new_jaxpr):
        new = jit_update_params(p, in_map, out_map, new_jaxpr)
        n_primal_ins = len(in_map) - sum(nonzeros)
        new["in_shardings"] = new["in_shardings"][:n_primal_ins] + tuple(
            s for s, nz in zip(ins, nonzeros, strict=True) if nz
        )
        new["out_shardings"] = tuple(outs) + tuple(
            s for s, nz in zip(outs, out_nonzeros, strict=True) if nz
        )
        return new

    return jvp_call_rule(jit_p, primals, tangents, update_params=update, **params)


def _jit_transpose(cts, *args, **params):
    """Transpose of a jit equation; cotangents are laid out like the values they stand for."""
    if "in_shardings" not in params:
        return transpose_call_rule(jit_p, cts, *args, update_params=jit_update_params, **params)
    linear = tuple(is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is Zero for ct in cts)
    _, _, in_zeros = _call_transpose_jaxpr(params["jaxpr"], linear, out_zeros)  # cached
    ins, outs = params["in_shardings"], params["out_shardings"]

    def update(p, in_map, out_map, new_jaxpr):
        new = jit_update_params(p, in_map, out_map, new_jaxpr)
        n_cts = sum(not z for z in out_zeros)
        new["in_shardings"] = new["in_shardings"][: len(in_map) - n_cts] + tuple(
            s for s, z in zip(outs, out_zeros, strict=True) if not z
        )
        lin_ins = [s for s, lin in zip(ins, linear, strict=True) if lin]
        new["out_shardings"] = tuple(s for s, z in zip(lin_ins, in_zeros, strict=True) if not z)
        return new

    return transpose_call_rule(jit_p, cts, *args, update_params=update, **params)


register_autodiff_call_rules(jit_p, jit_update_params)
jvp_rules[jit_p] = _jit_jvp
transpose_rules[jit_p] = _jit_transpose
register_call_batching(jit_p, jit_batching_update_params)
axis_primitive_batchers[jit_p] = _jit_batching

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
