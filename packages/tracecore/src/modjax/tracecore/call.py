"""A generic call primitive: apply a ClosedJaxpr held in the ``jaxpr`` param.

It is the model of a higher-order primitive: ``call_p.bind(*args, jaxpr=closed,
name=...)``. Generic passes reach its inner program through the ``subjaxprs``
protocol of ``jaxpr.py``; the rules registered here for partial evaluation, DCE
and inlining are written against the ``jaxpr`` param only, so a higher layer
reuses them for its own call-like primitives (jit's) with ``register_call_rules``.
"""

from __future__ import annotations

from collections.abc import Callable

from .core import Primitive
from .evaluation import eval_jaxpr
from .jaxpr import ClosedJaxpr
from .tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from .tree_util import tree_flatten, tree_unflatten
from .wrapped_fun import debug_info, flatten_fun, wrap_init

__all__ = ["call_p", "call", "call_impl", "call_abstract_eval", "check_call_operands"]

call_p = Primitive("call")
call_p.multiple_results = True


def check_call_operands(primitive: Primitive, in_avals, jaxpr: ClosedJaxpr) -> None:
    """Raise TypeError unless operands match the inner jaxpr's inputs (weak types aside)."""
    expected = jaxpr.in_avals
    if len(in_avals) != len(expected):
        raise TypeError(
            f"{primitive.name}: the inner jaxpr takes {len(expected)} arguments, "
            f"got {len(in_avals)}"
        )
    for i, (got, want) in enumerate(zip(in_avals, expected, strict=True)):
        if got.shape != want.shape or got.dtype != want.dtype:
            raise TypeError(
                f"{primitive.name}: operand {i} has type {got.str_short()} but the inner "
                f"jaxpr expects {want.str_short()}"
            )


def call_impl(*args, jaxpr: ClosedJaxpr, **_):
    """Evaluate a call by evaluating its inner jaxpr."""
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _call_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, **_):
    check_call_operands(call_p, in_avals, jaxpr)
    return jaxpr.out_avals


call_abstract_eval = _call_abstract_eval
call_p.def_impl(call_impl)
call_p.def_abstract_eval(_call_abstract_eval)


def call(fun: Callable, *args, name: str | None = None, **kwargs):
    """Trace ``fun`` to a jaxpr and apply it as one ``call`` equation.

    Inside ``make_jaxpr`` the result is a single ``call[jaxpr={...} name=...]``
    equation holding the inner program; evaluated eagerly it runs ``fun``'s jaxpr.
    """
    args_flat, in_tree = tree_flatten((args, kwargs))
    info = debug_info(fun, args, kwargs)
    flat_fun, out_tree = flatten_fun(wrap_init(fun, info), in_tree)
    jaxpr, consts = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in args_flat])
    # Closed-over values become leading operands, so the inner program has no consts
    # and the enclosing trace sees every value (tracers of outer transforms included).
    closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ())
    outs = call_p.bind(*consts, *args_flat, jaxpr=closed, name=name or info.func_name)
    return tree_unflatten(out_tree.val, outs)


# --- generic rules of call-like primitives (dce.py, partial_eval.py, inline.py) ---------


def register_call_rules(primitive: Primitive, update_params=None) -> None:
    """Register the generic DCE, partial-evaluation and inlining rules for ``primitive``.

    The counterpart of jax registering ``pe.dce_jaxpr_closed_call_rule`` and
    ``pe.closed_call_partial_eval_custom_rule`` for ``closed_call_p`` and ``pjit_p``.

    ``primitive`` must be call-like: its ``jaxpr`` param (a ClosedJaxpr) is applied 1:1
    to its operands and gives its results (like jax's ``closed_call_p`` and ``pjit_p``).
    Passes that drop or add operands and results of such an equation rebuild its
    params with ``update_params(params, in_map, out_map, new_jaxpr)`` (default: only
    the ``jaxpr`` param changes); ``in_map[i]`` is the original operand index of new
    operand ``i`` or None for a new one (a residual), likewise ``out_map`` for results.
    """
    from functools import partial

    from .dce import dce_call_rule, dce_rules
    from .inline import call_primitives
    from .partial_eval import partial_eval_call_rule, partial_eval_rules

    dce_rules[primitive] = partial(dce_call_rule, update_params=update_params)
    partial_eval_rules[primitive] = partial(partial_eval_call_rule, update_params=update_params)
    call_primitives.add(primitive)


__all__ += ["register_call_rules"]
register_call_rules(call_p)
