"""The ``sparsify`` interpreter: run a jaxpr on a mix of BCOO and dense values.

``sparsify(f)`` traces ``f`` on dense stand-ins (abstract values of each argument's
shape and dtype) to a jaxpr and evaluates it with ``eval_sparse``: an equation whose
operands are all dense is bound as it is; one with a sparse operand goes to its rule
in ``sparse_rules`` (keyed by primitive name; ``sparse_rules_bcsr`` where an operand
is a BCSR), and a primitive with no rule raises
JAX's NotImplementedError naming it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import modjax.numpy as jnp
from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcsr_array import BCSR
from modjax.experimental.sparse._sparsify_bcsr import sparse_rules_bcsr
from modjax.experimental.sparse._sparsify_rules import (
    is_sparse,
    sparse_rules,
    unimplemented_rule_error,
)
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import ShapedArray, get_aval
from modjax.tracecore.jaxpr import DropVar, Jaxpr, Literal
from modjax.tracecore.tracing import trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun_nokwargs, wrap_init

__all__ = ["apply_rule", "dense_aval", "eval_sparse", "sparsify_interpreted"]

_FORMATS = (BCOO, BCSR)


def dense_aval(value: Any) -> ShapedArray:
    """The abstract value of ``value`` as a dense array (a BCOO's shape and data dtype)."""
    if is_sparse(value):
        data = get_aval(value.data)
        return ShapedArray(tuple(value.shape), data.dtype, weak_type=data.weak_type)
    return get_aval(value)


def apply_rule(primitive, values: Sequence[Any], params: dict[str, Any]) -> list[Any]:
    """Bind ``primitive`` on ``values``: by its sparse rule where one of them is sparse."""
    if any(is_sparse(v) for v in values):
        others = [type(v).__name__ for v in values if is_sparse(v) and not isinstance(v, _FORMATS)]
        if others:
            raise NotImplementedError(
                f"sparsify of {primitive.name} with a {others[0]} operand is not implemented "
                "(sparsify takes BCOO and BCSR arrays)"
            )
        table = sparse_rules_bcsr if any(isinstance(v, BCSR) for v in values) else sparse_rules
        rule = table.get(primitive.name)
        if rule is None:
            raise unimplemented_rule_error(primitive.name)
        return list(rule(primitive, *values, **params))
    out = primitive.bind(*values, **params)
    return list(out) if primitive.multiple_results else [out]


def eval_sparse(jaxpr: Jaxpr, consts: Sequence[Any], values: Sequence[Any]) -> list[Any]:
    """Evaluate ``jaxpr`` on ``values`` (BCOO or dense); return its outputs, sparse or dense."""
    env: dict[int, Any] = {}
    for var, value in zip(jaxpr.constvars, consts, strict=True):
        env[id(var)] = value
    for var, value in zip(jaxpr.invars, values, strict=True):
        env[id(var)] = value

    def read(atom):
        return atom.val if type(atom) is Literal else env[id(atom)]

    for eqn in jaxpr.eqns:
        invals = [read(atom) for atom in eqn.invars]
        with source_info_util.user_context(eqn.source_info):
            outs = apply_rule(eqn.primitive, invals, eqn.params)
        for var, value in zip(eqn.outvars, outs, strict=True):
            if not isinstance(var, DropVar):
                env[id(var)] = value
    return [
        jnp.asarray(atom.val) if type(atom) is Literal else env[id(atom)] for atom in jaxpr.outvars
    ]


def sparsify_interpreted(f: Callable) -> Callable:
    """``sparsify(f)`` by tracing ``f`` to a jaxpr and interpreting it with sparse rules."""

    @functools.wraps(f)
    def wrapped(*args, **params):
        leaves, in_tree = tree_flatten(args, is_leaf=is_sparse)
        leaves = [x if is_sparse(x) else jnp.asarray(x) for x in leaves]
        target = functools.partial(f, **params) if params else f
        info = debug_info(f)
        fun, out_tree = flatten_fun_nokwargs(wrap_init(target, info), in_tree)
        jaxpr, consts = trace_to_jaxpr(fun, [dense_aval(x) for x in leaves])
        outs = eval_sparse(jaxpr, consts, leaves)
        return tree_unflatten(out_tree.val, outs)

    return wrapped
