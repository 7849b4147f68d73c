"""Evaluating jaxprs: bind each equation's primitive under the current trace."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from . import source_info as source_info_util
from .jaxpr import ClosedJaxpr, Jaxpr, Literal

__all__ = ["eval_jaxpr", "jaxpr_as_fun"]


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args, propagate_source_info: bool = True):
    """Run ``jaxpr`` on ``consts`` and ``args``; return the list of outputs (jax.core.eval_jaxpr).

    Each equation is bound under the current trace, so evaluating inside a
    transformation transforms the program. Derived equations keep the source
    line of the equation they came from.
    """
    if len(consts) != len(jaxpr.constvars) or len(args) != len(jaxpr.invars):
        raise TypeError(
            f"eval_jaxpr: the jaxpr takes {len(jaxpr.constvars)} consts and "
            f"{len(jaxpr.invars)} arguments, got {len(consts)} and {len(args)}"
        )
    env: dict[int, Any] = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[id(var)] = value
    for var, value in zip(jaxpr.invars, args, strict=True):
        env[id(var)] = value

    def read(atom):
        return atom.val if type(atom) is Literal else env[id(atom)]

    for eqn in jaxpr.eqns:
        invals = [read(atom) for atom in eqn.invars]
        if propagate_source_info:
            with source_info_util.user_context(eqn.source_info):
                out = eqn.primitive.bind(*invals, **eqn.params)
        else:
            out = eqn.primitive.bind(*invals, **eqn.params)
        if eqn.primitive.multiple_results:
            for var, value in zip(eqn.outvars, out, strict=True):
                env[id(var)] = value
        else:
            env[id(eqn.outvars[0])] = out
    return [read(atom) for atom in jaxpr.outvars]


def jaxpr_as_fun(closed_jaxpr: ClosedJaxpr):
    """Return a Python function that evaluates ``closed_jaxpr`` (jax.core.jaxpr_as_fun)."""

    def fun(*args):
        return eval_jaxpr(closed_jaxpr.jaxpr, closed_jaxpr.consts, *args)

    return fun
