"""checkpoint (remat): choose which forward values reverse mode saves, recompute the rest.

``checkpoint(f)`` binds ``remat`` with ``f``'s jaxpr and a *policy*. The JVP of
``remat`` is a ``remat`` of the JVP'ed jaxpr; when reverse mode splits that
equation into known (forward) and unknown (tangent) parts, the split is made by
tracecore's ``partial_eval_jaxpr`` machinery with the policy as its ``saveable``
predicate: values the policy refuses to save are recomputed inside the unknown
``remat``, from the inputs or from values it does save. Transposing that
``remat`` gives a ``remat`` that holds the recomputation and the backward pass.

A policy is ``policy(primitive, *in_avals, **params) -> bool`` (JAX's signature):
may the outputs of this equation be saved as residuals? The default policy of
``checkpoint`` is ``nothing_saveable``.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from modjax.tracecore.call import check_call_operands
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_call_rule, dce_rules
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, JaxprEqn
from modjax.tracecore.partial_eval import partial_eval_call_rule, partial_eval_rules
from modjax.tracecore.pretty import register_param_printer
from modjax.tracecore.state import register_call_discharge
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun, infer_nums_and_names, wrap_init

from .jvp import jvp_call_rule
from .tangents import jvp_rules, transpose_rules
from .transpose import transpose_call_rule

__all__ = [
    "Offloadable",
    "Recompute",
    "RecomputeType",
    "Saveable",
    "SaveableType",
    "checkpoint",
    "remat",
    "remat_p",
    "name_p",
    "checkpoint_name",
    "checkpoint_policies",
    "dot_primitives",
    "everything_saveable",
    "nothing_saveable",
    "dots_saveable",
    "checkpoint_dots",
    "dots_with_no_batch_dims_saveable",
    "save_only_these_names",
    "save_any_names_but_these",
    "save_anything_except_these_names",
    "offload_dot_with_no_batch_dims",
    "save_and_offload_only_these_names",
    "save_from_both_policies",
]

# The matrix-multiply-like primitives the dot policies save. autodiff knows no array
# library: the package declaring dot_general (numpy_api) adds it here.
dot_primitives: set[Primitive] = set()


# --- policies ---------------------------------------------------------------------------


def everything_saveable(*_, **__) -> bool:
    """Save every residual, as if ``checkpoint`` were not used (checkpoint_policies)."""
    return True


def nothing_saveable(*_, **__) -> bool:
    """Save nothing but the inputs; recompute everything (the default; checkpoint_policies)."""
    return False


def dots_saveable(prim, *_, **__) -> bool:
    """Save the results of matrix multiplications, ``dot_primitives`` (checkpoint_policies)."""
    return prim in dot_primitives


checkpoint_dots = dots_saveable


def dots_with_no_batch_dims_saveable(prim, *_, **params) -> bool:
    """Save results of matrix multiplications without batch dimensions (checkpoint_policies).

    Batch dimensions are read from a ``dimension_numbers`` param shaped like
    dot_general's, ``((lhs_contract, rhs_contract), (lhs_batch, rhs_batch))``; a dot
    primitive without that param has none.
    """
    if prim not in dot_primitives:
        return False
    dims = params.get("dimension_numbers")
    if dims is None:
        return True
    (_, _), (lhs_batch, rhs_batch) = dims
    return not lhs_batch and not rhs_batch


class _NamePolicy:
    """A policy on the names given with ``checkpoint_name`` (printable, comparable)."""

    def __init__(self, kind: str, names: frozenset[str], save_named: bool, save_other: bool):
        self.kind, self.names = kind, names
        self.save_named, self.save_other = save_named, save_other

    def __call__(self, prim, *_, **params) -> bool:
        if prim is name_p:
            return (params["name"] in self.names) == self.save_named
        return self.save_other

    def __eq__(self, other) -> bool:
        return isinstance(other, _NamePolicy) and (self.kind, self.names) == (
            other.kind,
            other.names,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.names))

    def __repr__(self) -> str:
        return f"{self.kind}({', '.join(sorted(self.names))})"


def save_only_these_names(*names: str) -> Callable:
    """Save only the values named by one of ``names`` with ``checkpoint_name`` (same in JAX)."""
    return _NamePolicy("save_only_these_names", frozenset(names), True, False)


def save_any_names_but_these(*names: str) -> Callable:
    """Save only named values, except those named by one of ``names`` (same in JAX)."""
    return _NamePolicy("save_any_names_but_these", frozenset(names), False, False)


def save_anything_except_these_names(*names: str) -> Callable:
    """Save every value except those named by one of ``names`` (same name in JAX)."""
    return _NamePolicy("save_anything_except_these_names", frozenset(names), False, True)


def offload_dot_with_no_batch_dims(offload_src: str, offload_dst: str) -> Callable:
    """Offload what ``dots_with_no_batch_dims_saveable`` saves; recompute the rest (same in JAX).

    Offloading saves the value (see ``Offloadable``): the residuals are those of
    ``dots_with_no_batch_dims_saveable``.
    """

    def policy(prim, *args, **params):
        if dots_with_no_batch_dims_saveable(prim, *args, **params):
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def save_and_offload_only_these_names(
    *, names_which_can_be_saved, names_which_can_be_offloaded, offload_src, offload_dst
) -> Callable:
    """Save the values named in one list and offload those named in the other (same in JAX).

    Every other value is recomputed; a name in both lists is a ValueError.
    """
    saved, offloaded = set(names_which_can_be_saved), set(names_which_can_be_offloaded)
    if saved & offloaded:
        raise ValueError(
            "The names should be exclusive and should not intersect in "
            "`names_which_can_be_saved` and `names_which_can_be_offloaded`. Got "
            f"names_which_can_be_saved={saved}, names_which_can_be_offloaded={offloaded} "
            f"and the intersection={saved & offloaded}"
        )

    def policy(prim, *_, **params):
        if prim is name_p and params["name"] in saved:
            return Saveable
        if prim is name_p and params["name"] in offloaded:
            return Offloadable(src=offload_src, dst=offload_dst)
        return Recompute

    return policy


def save_from_both_policies(policy_1: Callable, policy_2: Callable) -> Callable:
    """Save what either of two boolean policies saves (same in JAX).

    A policy answering anything but a bool (``Saveable``, ``Offloadable``) is a
    ValueError, as in JAX: combine such policies in a function of your own.
    """

    def policy(prim, *args, **params):
        out1, out2 = policy_1(prim, *args, **params), policy_2(prim, *args, **params)
        if not (isinstance(out1, bool) and isinstance(out2, bool)):
            raise ValueError(
                f"The return value of the policies should be a boolean. Got: {out1} and "
                f"{out2}. Please write a custom policy function directly, rather than using "
                "this helper function."
            )
        return out1 or out2

    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=checkpoint_dots,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    offload_dot_with_no_batch_dims=offload_dot_with_no_batch_dims,
    save_only_these_names=save_only_these_names,
    save_any_names_but_these=save_any_names_but_these,
    save_anything_except_these_names=save_anything_except_these_names,
    save_from_both_policies=save_from_both_policies,
    save_and_offload_only_these_names=save_and_offload_only_these_names,
)


class RecomputeType:
    """The type of ``Recompute``, a policy's answer "recompute this value" (jax.ad_checkpoint)."""

    def __repr__(self) -> str:
        return "Recompute"


class SaveableType:
    """The type of ``Saveable``, a policy's answer "save this value" (jax.ad_checkpoint)."""

    def __repr__(self) -> str:
        return "Saveable"


#: A policy's answer: recompute the value in the backward pass (as returning False).
Recompute = RecomputeType()
#: A policy's answer: save the value as a residual (as returning True).
Saveable = SaveableType()


class Offloadable(NamedTuple):
    """A policy's answer: save the value in memory ``dst`` (jax.ad_checkpoint.Offloadable).

    ``src``/``dst`` are memory kinds ("device", "pinned_host"). modjax's devices
    have one memory, so an offloadable value is saved where it is: the same
    residuals and results, without the memory saving offloading brings.
    """

    src: str
    dst: str


def _policy_saves(answer) -> bool:
    """Read a policy's answer (bool, Recompute, Saveable or Offloadable); TypeError otherwise."""
    if isinstance(answer, bool | np.bool_):
        return bool(answer)
    if isinstance(answer, SaveableType | Offloadable):
        return True
    if isinstance(answer, RecomputeType):
        return False
    message = (
        "Value returned by a remat policy should be a bool or `ad_checkpoint.Recompute`, "
        "`ad_checkpoint.Saveable` or `ad_checkpoint.Offloadable(...)`. "
        f"Got {answer} of type {type(answer)}."
    )
    if answer is Offloadable:
        message += " Did you return `Offloadable` instead of an instantiated `Offloadable(...)`?"
    raise TypeError(message)


def _saveable(policy: Callable | None) -> Callable[[JaxprEqn], bool]:
    """Adapt a policy to tracecore's ``saveable(eqn)`` predicate."""
    policy = policy or nothing_saveable

    def saveable(eqn: JaxprEqn) -> bool:
        answer = policy(eqn.primitive, *[a.aval for a in eqn.invars], **eqn.params)
        return _policy_saves(answer)

    return saveable


# --- checkpoint_name --------------------------------------------------------------------

name_p = Primitive("name")
name_p.def_impl(lambda x, *, name: x)
name_p.def_abstract_eval(lambda x, *, name: x)
# The tangent is not named: policies speak about primal values.
jvp_rules[name_p] = lambda primals, tangents, *, name: (
    name_p.bind(primals[0], name=name),
    tangents[0],
)
transpose_rules[name_p] = lambda ct, x, *, name: [ct]


def checkpoint_name(x, name: str):
    """Name ``x`` (every leaf of a pytree) for ``checkpoint`` policies (checkpoint_name).

    It is the identity on values; ``save_only_these_names(name)`` and friends refer to it.
    """
    return tree_map(functools.partial(name_p.bind, name=name), x)


# --- remat_p ----------------------------------------------------------------------------

remat_p = Primitive("remat")
remat_p.multiple_results = True


def _remat_impl(*args, jaxpr: ClosedJaxpr, prevent_cse, policy):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _remat_abstract_eval(*in_avals, jaxpr: ClosedJaxpr, prevent_cse, policy):
    check_call_operands(remat_p, in_avals, jaxpr)
    return jaxpr.out_avals


def _remat_partial_eval(eqn: JaxprEqn, unknowns, saveable):
    # The enclosing policy does not reach inside: this remat's own policy decides.
    return partial_eval_call_rule(eqn, unknowns, _saveable(eqn.params["policy"]))


remat_p.def_impl(_remat_impl)
remat_p.def_abstract_eval(_remat_abstract_eval)
jvp_rules[remat_p] = functools.partial(jvp_call_rule, remat_p)
transpose_rules[remat_p] = functools.partial(transpose_call_rule, remat_p)
partial_eval_rules[remat_p] = _remat_partial_eval
dce_rules[remat_p] = dce_call_rule
# References the checkpointed function writes: its program is discharged (consts first).
register_call_discharge(remat_p, lambda params, n_leading, jaxpr: {**params, "jaxpr": jaxpr})


def _policy_text(policy) -> str:
    return "None" if policy is None else getattr(policy, "__name__", None) or repr(policy)


register_param_printer(remat_p, "policy", _policy_text)


def checkpoint(
    fun: Callable,
    *,
    prevent_cse: bool = True,
    policy: Callable | None = None,
    static_argnums: int | Sequence[int] = (),
    static_argnames: str | Sequence[str] = (),
    concrete: bool | None = None,
) -> Callable:
    """Make ``fun`` recompute its intermediates in reverse mode (jax.checkpoint / jax.remat).

    Under ``grad``/``vjp`` only the values that ``policy`` calls saveable are stored
    by the forward pass (by default none: only the inputs); everything else is
    recomputed during the backward pass. ``static_argnums`` and ``static_argnames``
    are passed to ``fun`` as Python values; ``prevent_cse`` asks the compiler not to
    merge the recomputation with the forward pass. ``concrete`` was removed in JAX
    0.10: giving it raises NotImplementedError, as there.
    """
    if concrete is not None:
        raise NotImplementedError(
            "The `concrete` option to `jax.checkpoint` was deprecated in JAX v0.8.2, and "
            "removed in JAX v0.10.0. In its place please use `static_argnums`; for details "
            "refer to https://docs.jax.dev/en/latest/jep/11830-new-remat-checkpoint.html."
        )
    given = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    static, _ = infer_nums_and_names(fun, given, names)  # names given by position too

    @functools.wraps(fun)
    def fun_remat(*args, **kwargs):
        nargs = len(args)
        if any(not -nargs <= i < nargs for i in given):
            raise ValueError(
                "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take "
                "integer values greater than or equal to `-len(args)` and less than "
                f"`len(args)`, but got {given}, while `len(args)` = {nargs}"
            )
        static_pos = {i % nargs if i < 0 else i for i in static} if nargs else set()
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_pos)
        static_kwargs = {k: v for k, v in kwargs.items() if k in names}
        kwargs = {k: v for k, v in kwargs.items() if k not in names}

        def bound(*dyn, **kw):
            it = iter(dyn)
            full = [args[i] if i in static_pos else next(it) for i in range(nargs)]
            return fun(*full, **kw, **static_kwargs)

        args_flat, in_tree = tree_flatten((dyn_args, kwargs))
        info = debug_info(fun, args, kwargs, static_argnums=tuple(static_pos))
        flat_fun, out_tree = flatten_fun(wrap_init(bound, info), in_tree)
        jaxpr, consts = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in args_flat])
        closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ())
        outs = remat_p.bind(
            *consts, *args_flat, jaxpr=closed, prevent_cse=prevent_cse, policy=policy
        )
        return tree_unflatten(out_tree.val, outs)

    return fun_remat


remat = checkpoint
