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

__all__ = ["takes_refs", "call_with_refs", "apply_with_refs"]


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


_eager_programs: dict = {}


def apply_with_refs(prim, *args, **params):
    """Run ``prim`` eagerly like ``apply_primitive``, also when operands are references.

    With a concrete Ref among ``args`` (a loop body that closes over one, say), the
    one equation is traced, discharged and compiled with the references donated,
    and each reference then holds its new array. Higher-order primitives whose
    bodies may use references take their eager impl from here.
    """
    from .dispatch import apply_primitive  # noqa: PLC0415

    if not any(type(a) is Ref for a in args):
        return apply_primitive(prim, *args, **params)
    from modjax.tracecore.core import to_aval  # noqa: PLC0415

    # A reference given twice (a while loop's cond and body both close over it) is
    # one input: the program must see one cell.
    first: dict[int, int] = {}
    unique = [first.setdefault(id(a), i) == i for i, a in enumerate(args)]
    where = tuple(first[id(a)] for a in args)
    inputs = [a for a, u in zip(args, unique, strict=True) if u]
    avals = tuple(to_aval(a) for a in inputs)
    key = (prim, tuple(params.items()), avals, where)
    try:
        entry = _eager_programs.get(key)
    except TypeError:  # an unhashable param: compile this once
        key, entry = None, None
    if entry is None:
        entry = _compile_eqn(prim, params, avals, where)
        if key is not None:
            _eager_programs[key] = entry
    program, positions = entry
    outs = program(*[a._value if type(a) is Ref else a for a in inputs])
    n_out = len(outs) - len(positions)
    for i, new in zip(positions, outs[n_out:], strict=True):
        inputs[i]._value = new
    outs = outs[:n_out]
    return outs if prim.multiple_results else outs[0]


def _compile_eqn(prim, params, avals, where):
    from modjax.tracecore.tracing import trace_to_jaxpr  # noqa: PLC0415
    from modjax.tracecore.wrapped_fun import wrap_init  # noqa: PLC0415

    from .jit import jit  # noqa: PLC0415

    slot = {i: k for k, i in enumerate(sorted(set(where)))}

    def one(*xs):
        out = prim.bind(*(xs[slot[w]] for w in where), **params)
        return list(out) if prim.multiple_results else [out]

    jaxpr, consts = trace_to_jaxpr(wrap_init(one), avals)
    positions = tuple(i for i, a in enumerate(avals) if type(a) is AbstractRef)
    run = jaxpr_as_fun(discharge_state(ClosedJaxpr(jaxpr, consts)))
    run.__name__ = prim.name
    return jit(run, donate_argnums=positions), positions
