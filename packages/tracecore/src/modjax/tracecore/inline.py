"""Inlining of call-like equations: splice a call's inner program into its caller.

A call-like primitive holds its program in a ``jaxpr`` param (a ClosedJaxpr) and
applies it 1:1 to its operands; ``register_call_rules`` (in ``call.py``) adds a
primitive to ``call_primitives``. Inlining copies the inner equations with fresh
variables and substitutes the call's results by the inner results, so inner
outputs that are literals or inner inputs need no identity equation.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .core import Primitive
from .jaxpr import Atom, ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Var, map_subjaxprs

__all__ = ["call_primitives", "is_call_eqn", "inline_calls"]

# Primitives whose equations are calls: a ``jaxpr`` ClosedJaxpr param applied 1:1.
call_primitives: set[Primitive] = set()


def is_call_eqn(eqn: JaxprEqn) -> bool:
    """Tell whether ``eqn`` applies a registered call-like primitive (jax's ``call_primitive``)."""
    return eqn.primitive in call_primitives


def inline_calls(
    jaxpr: Jaxpr | ClosedJaxpr, predicate: Callable[[JaxprEqn], bool] | None = None
) -> Jaxpr | ClosedJaxpr:
    """Replace call equations by the equations of their inner jaxprs, recursively.

    The counterpart of JAX's inlining of ``closed_call``/``pjit`` equations (``inline=True``
    in ``pe.inline_jaxpr_into_trace``), done as a pass over the jaxpr. Which equations are
    inlined: those ``predicate(eqn)`` accepts; by default every equation of a primitive
    registered with ``register_call_rules`` (``is_call_eqn``); a custom predicate may
    combine both, e.g. ``lambda e: is_call_eqn(e) and e.params["name"] != "keep"``. An
    accepted equation must hold its program in a ``jaxpr`` param applied 1:1 to its
    operands. Calls are inlined at every depth, including inside jaxprs held by other
    primitives. Consts of inlined ClosedJaxprs become consts of the enclosing
    ClosedJaxpr; a call with consts inside a plain ``Jaxpr`` (which has nowhere to put
    them) is left in place. Return the same type as given (the same object if nothing
    was inlined).
    """
    predicate = is_call_eqn if predicate is None else predicate
    memo: dict[int, Any] = {}
    if isinstance(jaxpr, ClosedJaxpr):
        return _inline_closed(jaxpr, predicate, memo)
    new, _ = _inline(jaxpr, None, predicate, memo)
    return new


def _inline_closed(closed: ClosedJaxpr, predicate, memo) -> ClosedJaxpr:
    key = id(closed)
    if key not in memo:
        new, consts = _inline(closed.jaxpr, list(closed.consts), predicate, memo)
        # consts is a list: _inline returns the list it was given.
        memo[key] = (closed, closed if new is closed.jaxpr else ClosedJaxpr(new, consts or []))
    return memo[key][1]


def _inline_nested(jaxpr: Jaxpr | ClosedJaxpr, predicate, memo) -> Jaxpr | ClosedJaxpr:
    if isinstance(jaxpr, ClosedJaxpr):
        return _inline_closed(jaxpr, predicate, memo)
    new, _ = _inline(jaxpr, None, predicate, memo)
    return new


def _inline(jaxpr: Jaxpr, consts: list | None, predicate, memo) -> tuple[Jaxpr, list | None]:
    """Inline calls in ``jaxpr``; hoist inner consts into ``consts`` unless it is None."""
    constvars = list(jaxpr.constvars)
    const_vars_by_id: dict[int, Var] = {}
    if consts is not None:
        consts = list(consts)
        const_vars_by_id = {id(c): v for c, v in zip(consts, constvars, strict=True)}
    subst: dict[Var, Atom] = {}  # results of inlined calls -> what they stand for
    changed = False

    def read(atom: Atom) -> Atom:
        return subst.get(atom, atom) if isinstance(atom, Var) else atom

    def hoist(value, aval) -> Var:
        var = const_vars_by_id.get(id(value))
        if var is None:
            var = const_vars_by_id[id(value)] = Var(aval)
            constvars.append(var)
            consts.append(value)  # type: ignore[union-attr]  # called only when consts is a list
        return var

    new_eqns: list[JaxprEqn] = []
    for eqn in jaxpr.eqns:
        invars = [read(a) for a in eqn.invars]
        if predicate(eqn):
            param = eqn.params.get("jaxpr")
            closed: ClosedJaxpr | None
            new_param: Jaxpr | ClosedJaxpr
            if isinstance(param, ClosedJaxpr):
                closed = new_param = _inline_closed(param, predicate, memo)
            elif isinstance(param, Jaxpr):
                new_param, _ = _inline(param, None, predicate, memo)
                closed = ClosedJaxpr(new_param, ()) if not new_param.constvars else None
            else:
                raise TypeError(
                    f"inline_calls: equation of '{eqn.primitive.name}' was selected for "
                    "inlining but has no 'jaxpr' param holding its program"
                )
            if closed is None or (consts is None and closed.consts):
                # Nowhere to put the inner consts: keep the call, with its program inlined.
                if new_param is not param or _differ(invars, eqn.invars):
                    params = {**eqn.params, "jaxpr": new_param}
                    eqn = eqn.replace(invars=invars, params=params)
                    changed = True
                new_eqns.append(eqn)
                continue
            inner = closed.jaxpr
            if len(inner.invars) != len(invars) or len(inner.outvars) != len(eqn.outvars):
                raise TypeError(
                    f"inline_calls: '{eqn.primitive.name}' applies a jaxpr of "
                    f"{len(inner.invars)} inputs and {len(inner.outvars)} outputs to "
                    f"{len(invars)} operands with {len(eqn.outvars)} results"
                )
            env: dict[Var, Atom] = dict(zip(inner.invars, invars, strict=True))
            for var, value in zip(inner.constvars, closed.consts, strict=True):
                env[var] = hoist(value, var.aval)
            for inner_eqn in inner.eqns:
                outs = [
                    DropVar(v.aval) if isinstance(v, DropVar) else Var(v.aval)
                    for v in inner_eqn.outvars
                ]
                env.update(zip(inner_eqn.outvars, outs, strict=True))
                new_eqns.append(
                    inner_eqn.replace(
                        invars=[env[a] if isinstance(a, Var) else a for a in inner_eqn.invars],
                        outvars=outs,
                    )
                )
            for outer, result in zip(eqn.outvars, inner.outvars, strict=True):
                subst[outer] = env[result] if isinstance(result, Var) else result
            changed = True
            continue
        inner_changed = False

        def visit(sub):
            nonlocal inner_changed
            new = _inline_nested(sub, predicate, memo)
            inner_changed = inner_changed or new is not sub
            return new

        params = map_subjaxprs(eqn.params, visit)
        if inner_changed or _differ(invars, eqn.invars):
            eqn = eqn.replace(invars=invars, params=params if inner_changed else eqn.params)
            changed = True
        new_eqns.append(eqn)

    if not changed:
        return jaxpr, consts
    outvars = [read(a) for a in jaxpr.outvars]
    return jaxpr.replace(constvars=constvars, outvars=outvars, eqns=new_eqns), consts


def _differ(xs: list, ys: list) -> bool:
    return any(x is not y for x, y in zip(xs, ys, strict=True))
