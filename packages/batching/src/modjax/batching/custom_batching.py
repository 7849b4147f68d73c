"""custom_vmap: functions whose batching rule the user writes (jax.custom_batching).

Calling a ``custom_vmap`` function traces it to a jaxpr and binds ``custom_vmap_call``,
a primitive holding that jaxpr and the user's rule:

``custom_vmap_call[call, rule, in_tree, out_tree]``
    ``call`` (a ClosedJaxpr without consts) applies to all operands: first the values
    the function closed over, then its flattened arguments; ``in_tree`` is the
    treedef of ``(consts, args)``, ``out_tree`` that of the results. ``rule(axis_size,
    in_batched, *args) -> (out, out_batched)`` is the user's rule on pytrees, batched
    operands moved to axis 0.

Evaluation runs ``call``; vmap calls the rule (results batched at axis 0). The JVP
rule, which needs autodiff and vmap together, is registered by runtime
(``sibling_rules/custom_vmap.py``); reverse mode is not supported, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import (
    tree_flatten,
    tree_structure,
    tree_unflatten,
    treedef_tuple,
)
from modjax.tracecore.wrapped_fun import wrap_init

from .batch_trace import batching_rules
from .primitives import moveaxis

__all__ = [
    "ClosedRule",
    "call_rule",
    "check_vmap_rule_trees",
    "custom_vmap",
    "custom_vmap_p",
    "maybe_bdim_at_front",
]


def _name(fun) -> str:
    return getattr(fun, "__name__", "<unnamed rule>")


class custom_vmap:  # noqa: N801 - JAX's public name
    """Give a function a batching rule of its own (jax.custom_batching.custom_vmap).

    Under ``vmap`` the rule set with :meth:`def_vmap` runs instead of batching the
    function: ``rule(axis_size, in_batched, *args)`` gets the arguments with their
    batched axis first and a pytree of booleans saying which are batched, and returns
    ``(out, out_batched)``. Elsewhere the function runs as written. ``jvp`` works
    (through the rule); reverse mode does not (wrap in ``custom_vjp``), as in JAX.
    """

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable[..., tuple[Any, Any]] | None = None

    def __getattr__(self, name: str):
        # attributes it lacks come from the wrapped function (as JAX's forward_attr)
        try:
            fun = self.__dict__["fun"]
        except KeyError:
            raise AttributeError(name) from None
        return getattr(fun, name)

    def def_vmap(self, vmap_rule: Callable[..., tuple[Any, Any]]) -> Callable[..., tuple[Any, Any]]:
        """Set the vmap rule (``rule(axis_size, in_batched, *args) -> (out, out_batched)``).

        Return ``vmap_rule`` unchanged, so this works as a decorator.
        """
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = _name(self.fun)
        try:
            signature = inspect.signature(self.fun)
        except (TypeError, ValueError):  # no signature: positional arguments as given
            signature = None
        if signature is not None:
            try:
                bound = signature.bind(*args, **kwargs)
                bound.apply_defaults()
                if bound.kwargs:
                    raise TypeError("keyword arguments could not be resolved to positions")
                args = tuple(bound.args)
            except TypeError as e:
                raise TypeError(
                    "The input arguments to the custom_vmap-decorated function "
                    f"{name} could not be resolved to positional-only arguments. "
                    f"Binding failed with the error:\n{e}"
                ) from e
        if not self.vmap_rule:
            raise AttributeError(
                f"No batching rule defined for custom_vmap function {name} using def_vmap."
            )
        args_flat, args_tree = tree_flatten(args)
        out_box: list = []

        def flat_fun(*xs):
            out = self.fun(*tree_unflatten(args_tree, list(xs)))
            leaves, tree = tree_flatten(out)
            out_box.append(tree)
            return leaves

        jaxpr, consts = trace_to_jaxpr(wrap_init(flat_fun), [arg_aval(x) for x in args_flat])
        call = ClosedJaxpr(convert_constvars_jaxpr(jaxpr).replace(debug_info=None), ())
        in_tree = treedef_tuple((tree_structure(consts), args_tree))
        out_flat = custom_vmap_p.bind(
            *consts,
            *args_flat,
            call=call,
            rule=ClosedRule(self.vmap_rule),
            in_tree=in_tree,
            out_tree=out_box[0],
        )
        return tree_unflatten(out_box[0], out_flat)


class ClosedRule:
    """The user's rule on ``(consts, args)`` operand trees; prints as the user's function."""

    def __init__(self, rule: Callable):
        functools.update_wrapper(self, rule)
        self.rule = rule

    def __call__(self, axis_size, all_in_batched, *all_args):
        _, args = all_args
        consts_batched, in_batched = all_in_batched
        if any(tree_flatten(consts_batched)[0]):
            raise ValueError(
                f"the custom_vmap function of rule {_name(self.rule)} closes over a value "
                "being batched; pass it as an argument instead"
            )
        return call_rule(self.rule, axis_size, in_batched, args)

    def __repr__(self) -> str:
        return repr(self.rule)


def call_rule(rule, axis_size, in_batched, args):
    """Call a vmap rule: the ``in_batched`` tree as a list, the arguments spread."""
    return rule(axis_size, list(in_batched), *args)


def check_vmap_rule_trees(rule, original_out_tree, out_tree, out_batched_tree) -> None:
    """Raise ValueError when a rule's results or batched flags have the wrong structure."""
    if out_tree != out_batched_tree:
        raise ValueError(
            "structure of output value and output batching specification returned by custom "
            f"vmap rule ({_name(rule)}) do not match.\nOutput values: {out_tree}\n"
            f"Batching spec: {out_batched_tree}"
        )
    if out_tree != original_out_tree:
        raise ValueError(
            f"structure of output returned by custom vmap rule ({_name(rule)}) does not match "
            f"that of original custom-vmapped function.\nOriginal output: {original_out_tree}\n"
            f"Rule output: {out_tree}"
        )


def maybe_bdim_at_front(x, bdim):
    """``x`` with its batch axis first; an unbatched ``x`` as it is."""
    return x if bdim is None else moveaxis(x, bdim, 0)


def _impl(*args, call, **_):
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _abstract_eval(*in_avals, call, **_):
    return call.out_avals


def _batching(args, dims, *, call, rule, in_tree, out_tree):
    (axis_size,) = {to_aval(x).shape[d] for x, d in zip(args, dims, strict=True) if d is not None}
    args = [maybe_bdim_at_front(x, d) for x, d in zip(args, dims, strict=True)]
    in_batched = tree_unflatten(in_tree, [d is not None for d in dims])
    out, out_batched = rule(axis_size, in_batched, *tree_unflatten(in_tree, args))
    flat_outs, tree1 = tree_flatten(out)
    flat_batched, tree2 = tree_flatten(out_batched)
    check_vmap_rule_trees(rule, out_tree, tree1, tree2)
    return flat_outs, [0 if b else None for b in flat_batched]


custom_vmap_p = Primitive("custom_vmap_call")
custom_vmap_p.multiple_results = True
custom_vmap_p.def_impl(_impl)
custom_vmap_p.def_abstract_eval(_abstract_eval)
batching_rules[custom_vmap_p] = _batching
