"""What reverse mode saves: ``saved_residuals`` and ``print_saved_residuals`` (jax.ad_checkpoint).

The residuals of ``f`` at some arguments are the values ``vjp`` keeps for the
backward pass (the leaves of the function it returns). Tracing ``vjp(f, *args)``
into a jaxpr shows where each comes from: an argument, a constant, a literal, a
value named with ``checkpoint_name``, or an equation's output with its source
line, which is what a ``checkpoint`` policy changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modjax.tracecore.jaxpr import Literal
from modjax.tracecore.tracing import make_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_structure, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info

from .api import vjp
from .checkpoint import name_p, remat_p

__all__ = ["print_saved_residuals", "saved_residuals"]


def saved_residuals(f: Callable, *args, **kwargs) -> list[tuple[Any, str]]:
    """Return ``(aval, where it comes from)`` for each residual ``vjp(f, *args)`` saves.

    The counterpart of ``jax.ad_checkpoint.saved_residuals``; the descriptions are
    JAX's ("from the argument x", "named 'w' from FILE:LINE (fn)", "output of sin
    from FILE:LINE (fn)", "output of jitted function 'g' from ...").
    """
    leaves, in_tree = tree_flatten((args, kwargs))

    def flat_f(*flat):
        a, kw = tree_unflatten(in_tree, list(flat))
        return f(*a, **kw)

    closed, out_shape = make_jaxpr(lambda *flat: vjp(flat_f, *flat), return_shape=True)(*leaves)
    num_res = tree_structure(out_shape[1]).num_leaves
    jaxpr = closed.jaxpr
    residuals = jaxpr.outvars[len(jaxpr.outvars) - num_res :]
    names = debug_info(f, args, kwargs).arg_names or ()
    return _describe(jaxpr, residuals, names)


def _describe(jaxpr, residuals, arg_names) -> list[tuple[Any, str]]:
    """Describe ``residuals`` in JAX's order: literals, consts, args, eqns."""
    wanted = {v for v in residuals if not isinstance(v, Literal)}
    results = [(v.aval, "from a literal") for v in residuals if isinstance(v, Literal)]
    results += [(v.aval, "from a constant") for v in jaxpr.constvars if v in wanted]
    for i, v in enumerate(jaxpr.invars):
        if v in wanted:
            results.append((v.aval, _argument(i, arg_names)))
    for eqn in jaxpr.eqns:
        for k, v in enumerate(eqn.outvars):
            if v in wanted:
                results.append((v.aval, _output(jaxpr, eqn, k, arg_names)))
    return results


def _argument(i: int, arg_names) -> str:
    name = arg_names[i] if i < len(arg_names) and arg_names[i] else None
    return f"from the argument {name}" if name else f"from the argument at flattened index {i}"


def _output(jaxpr, eqn, k: int, arg_names) -> str:
    """Describe output ``k`` of ``eqn``, looking into a checkpoint's known part (JAX inlines it)."""
    if eqn.primitive is remat_p:
        inner = eqn.params["jaxpr"].jaxpr
        var = inner.outvars[k]
        if isinstance(var, Literal):
            return "from a literal"
        if var in inner.invars:  # passed through: describe what the checkpoint was given
            outer = eqn.invars[inner.invars.index(var)]
            if isinstance(outer, Literal):
                return "from a literal"
            return _defined(jaxpr, outer, arg_names)
        for inner_eqn in inner.eqns:
            if var in inner_eqn.outvars:
                return _output(inner, inner_eqn, inner_eqn.outvars.index(var), ())
        return "from a constant"
    src = str(eqn.source_info.frame) if eqn.source_info and eqn.source_info.frame else ""
    if eqn.primitive is name_p:
        return f"named '{eqn.params['name']}' from {src}"
    if eqn.primitive.name == "jit":  # runtime's call primitive, one layer up
        return f"output of jitted function '{eqn.params.get('name')}' from {src}"
    return f"output of {eqn.primitive.name} from {src}"


def _defined(jaxpr, var, arg_names) -> str:
    """Describe where ``var`` of ``jaxpr`` comes from (an argument, a constant, an equation)."""
    if var in jaxpr.invars:
        return _argument(jaxpr.invars.index(var), arg_names)
    for eqn in jaxpr.eqns:
        if var in eqn.outvars:
            return _output(jaxpr, eqn, eqn.outvars.index(var), arg_names)
    return "from a constant"


def print_saved_residuals(f: Callable, *args, **kwargs) -> None:
    """Print each residual ``vjp(f, *args)`` saves (jax.ad_checkpoint.print_saved_residuals).

    A line is the residual's type and where it comes from, e.g.
    ``f32[2,3] output of sin from model.py:12 (layer)``.
    """
    for aval, source in saved_residuals(f, *args, **kwargs):
        print(f"{aval.str_short(short_dtypes=True)} {source}")
