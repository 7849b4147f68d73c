"""``custom_gradient``: a function that returns its value and its own VJP rule."""

from __future__ import annotations

from collections.abc import Callable

from modjax.tracecore import ClosedJaxpr, ShapeDtypeStruct, get_aval
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.tracing import make_jaxpr
from modjax.tracecore.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_unflatten,
    treedef_is_leaf,
)

from .custom_derivatives import custom_vjp


class _TracedRule:
    """The VJP rule returned by the user's function, traced to a jaxpr: the residuals
    of ``custom_vjp`` must be arrays, and the rule's closure is not one."""

    def __init__(self, closed, in_tree):
        self.closed = closed
        self.in_tree = in_tree


register_pytree_node(
    _TracedRule,
    lambda rule: (tuple(rule.closed.consts), (rule.closed.jaxpr, rule.in_tree)),
    lambda aux, consts: _TracedRule(ClosedJaxpr(aux[0], list(consts)), aux[1]),
)


def custom_gradient(fun: Callable) -> Callable:
    """Define a function's gradient with the function (jax.custom_gradient).

    ``fun(*args)`` returns ``(value, vjp)`` where ``vjp(cotangent)`` returns the
    cotangents of the positional arguments (a tuple; a single value for one
    argument is accepted).
    """

    @custom_vjp
    def wrapped(*args):
        value, _ = fun(*args)
        return value

    def fwd(*args):
        value, rule = fun(*args)
        value_leaves, out_tree = tree_flatten(value)
        cts = [ShapeDtypeStruct(a.shape, a.dtype) for a in map(get_aval, value_leaves)]
        flat_results = {}

        def flat_rule(*flat_cts):
            results = rule(tree_unflatten(out_tree, list(flat_cts)))
            leaves, flat_results["tree"] = tree_flatten(results)
            return leaves

        closed = make_jaxpr(flat_rule)(*cts)
        return value, _TracedRule(closed, flat_results["tree"])

    def bwd(traced, ct):
        leaves = eval_jaxpr(traced.closed.jaxpr, traced.closed.consts, *tree_flatten(ct)[0])
        results = tree_unflatten(traced.in_tree, leaves)
        return (results,) if treedef_is_leaf(traced.in_tree) else tuple(results)

    wrapped.defvjp(fwd, bwd)
    return wrapped
