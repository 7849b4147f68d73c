"""Mutable array references (``jax.Ref``) crossing a jitted call.

A jitted function may take references as arguments or close over them. Its
traced program then has inputs (or consts) of type ``Ref{...}``; XLA has no
mutable values, so the program is discharged (tracecore's ``discharge_state``:
each reference becomes the array it holds and its final value an extra
output), compiled with each reference's input donated to its output (so XLA
updates it in place, JAX's input/output aliasing), and after the run every
reference holds its new array. Such calls take the slow path: the fast paths
key on arrays and would not write the references back.
"""

from __future__ import annotations

from modjax.tracecore.evaluation import jaxpr_as_fun
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.state import AbstractRef, Ref, discharge_state
from modjax.tracecore.tracing import convert_constvars_jaxpr

__all__ = ["takes_refs", "call_with_refs", "check_no_ref_outputs"]


def takes_refs(fn, call, in_avals) -> bool:
    """Tell whether a call of jitted ``fn`` passes or closes over concrete references."""
    if any(type(a) is AbstractRef for a in in_avals):
        return True
    traced = fn.traces.get(
        (call.in_tree, in_avals, call.statics, call.donated, _trace_context())
    ) or fn.trace(call, in_avals)
    return any(type(c) is Ref for c in traced.closed.consts)


def _trace_context():
    from modjax.tracecore.config import config  # noqa: PLC0415

    return config.trace_context()


def _describe(traced, index: int, n_consts: int) -> str:
    if index < n_consts:
        return "a value the function closes over"
    names = traced.arg_names
    i = index - n_consts
    return names[i] if names and i < len(names) and names[i] else f"flat argument {i}"


def call_with_refs(fn, call, in_avals):
    """Run jitted ``fn`` on a call that involves references; write the references back."""
    traced = fn.trace(call, in_avals)
    consts = traced.closed.consts
    values = [*consts, *call.leaves]
    seen: dict[int, int] = {}
    for i, v in enumerate(values):
        if type(v) is Ref:
            first = seen.setdefault(id(v), i)
            if first != i:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {fn.name} for jit the mutable array reference "
                    f"of type {v.aval.str_short()} appeared at both "
                    f"{_describe(traced, first, len(consts))} and "
                    f"{_describe(traced, i, len(consts))}."
                )
    if traced.ref_program is None:
        from .jit import jit  # noqa: PLC0415 - jit imports this module

        flat = ClosedJaxpr(convert_constvars_jaxpr(traced.closed.jaxpr), ())
        positions = tuple(i for i, v in enumerate(flat.jaxpr.invars) if type(v.aval) is AbstractRef)
        run = jaxpr_as_fun(discharge_state(flat))
        run.__name__ = fn.name
        traced.ref_program = (jit(run, donate_argnums=positions), positions)
    program, positions = traced.ref_program
    outs = program(*[v._value if type(v) is Ref else v for v in values])
    n_out = len(outs) - len(positions)
    for i, new in zip(positions, outs[n_out:], strict=True):
        values[i]._value = new
    return traced.out_tree.unflatten(outs[:n_out])


def check_no_ref_outputs(jaxpr, consts, info, in_avals) -> None:
    """Raise JAX's ValueError when a jitted function returns a reference."""
    for out in jaxpr.outvars:
        aval = out.aval
        if type(aval) is not AbstractRef:
            continue
        where = f" at {info.func_src_info}" if info.func_src_info else ""
        if out in jaxpr.invars:
            i = jaxpr.invars.index(out)
            names = info.arg_names
            name = names[i] if names and i < len(names) else f"flat argument {i}"
            origin = f"was passed in as the argument {name}."
        elif out in jaxpr.constvars:
            origin = "was closed over by the function."
        else:
            origin = "was created inside the function."
        raise ValueError(
            f"function {info.func_name}{where} traced for jit returned a mutable array "
            f"reference of type {aval.str_short()}, but mutable array references cannot be "
            f"returned.\n\nThe returned mutable array {origin}"
        )
