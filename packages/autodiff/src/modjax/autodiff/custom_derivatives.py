"""custom_jvp and custom_vjp: functions whose derivatives the user writes.

Calling a decorated function traces it to a jaxpr and binds a primitive that
holds that jaxpr together with the user's rule, wrapped as a plain function on
flat lists of values. Every trace handles the primitive with ordinary rules:
evaluation runs the jaxpr, ``make_jaxpr`` records one equation, the JVP trace
calls the rule. Params of the equations (the contract for other transforms,
e.g. a batching rule that wraps the rule functions with ``vmap``):

``custom_jvp_call[call_jaxpr, jvp, num_consts, symbolic_zeros]``
    ``call_jaxpr`` (a ClosedJaxpr without consts) applies to all operands, of which
    the first ``num_consts`` are values the function closed over.
    ``jvp(primals, tangents) -> (primals_out, tangents_out)`` works on flat lists of
    the other operands; tangents are ``Zero`` for unperturbed inputs when
    ``symbolic_zeros``, arrays otherwise; tangents out may be ``Zero``.

``custom_vjp_call[call_jaxpr, fwd, bwd, num_consts, symbolic_zeros]``
    ``fwd(primals, perturbed) -> (primals_out, residuals, residual_tree)`` and
    ``bwd(residual_tree, residuals, cotangents_out) -> cotangents_in`` on flat lists
    (cotangents may be ``Zero``). Its JVP runs ``fwd`` and emits ``custom_lin``, a
    primitive that is linear in the tangents and whose transpose calls ``bwd``:
    reverse mode works, forward mode raises, as in JAX.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from modjax.tracecore import dtypes
from modjax.tracecore.call import check_call_operands
from modjax.tracecore.core import (
    Primitive,
    Tracer,
    UnexpectedTracerError,
    eval_trace,
    set_current_trace,
    to_aval,
    trace_state,
)
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.parse import register_param_defaults
from modjax.tracecore.pretty import register_param_printer
from modjax.tracecore.tracing import (
    JaxprTracer,
    arg_aval,
    convert_constvars_jaxpr,
    trace_to_jaxpr,
)
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten
from modjax.tracecore.wrapped_fun import WrappedFun, infer_nums_and_names, wrap_init

from .api import stop_gradient
from .jvp import JVPTrace, JVPTracer, rules_with_user_code
from .linearize import LinearizeTrace
from .tangents import (
    SymbolicZero,
    Zero,
    add_tangents,
    from_symbolic_zero,
    instantiate_zeros,
    is_undefined_primal,
    jvp_rules,
    tangent_aval,
    to_symbolic_zero,
    transpose_rules,
    zeros_like_aval,
)
from .transpose import transpose_jaxpr

__all__ = [
    "custom_jvp",
    "custom_vjp",
    "custom_jvp_call_p",
    "custom_vjp_call_p",
    "custom_lin_p",
    "CustomVJPPrimal",
    "CustomVJPException",
    "custom_vjp_primal_tree_values",
    "zero_from_primal",
]


def _resolve_kwargs(fun: Callable, args, kwargs, kind: str, name: str) -> tuple:
    """Return the arguments as one positional tuple (defaults filled in)."""
    if not kwargs:
        return tuple(args)
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        bound.apply_defaults()
        if bound.kwargs:
            raise TypeError("keyword arguments could not be resolved to positions")
    except TypeError as e:
        raise TypeError(
            f"The input arguments to the {kind}-decorated function {name} could not be "
            f"resolved to positional-only arguments. Binding failed with the error:\n{e}"
        ) from e
    return tuple(bound.args)


def _is_zero(x) -> bool:
    """A leaf for trees of a rule's tangents: a ``Zero`` or ``SymbolicZero`` (both zeros)."""
    return isinstance(x, Zero)


def _add_rule_tangents(a, b):
    return add_tangents(from_symbolic_zero(a), from_symbolic_zero(b))


def _fun_name(fun) -> str:
    return getattr(fun, "__name__", type(fun).__name__)


def _same_type(a, b) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype


def _types_text(tree, avals) -> str:
    return str(tree_unflatten(tree, [a.str_short() for a in avals])).replace("'", "")


def _trace_call(
    fun_flat: Callable, args_flat, kind: str, binding_trace=None
) -> tuple[ClosedJaxpr, list]:
    """Trace ``fun_flat`` to a const-free jaxpr; closed-over values become leading operands.

    A closed-over tracer must belong to the trace that binds the call
    (``binding_trace``, by default the current one) or one below it: one of a
    transformation the call was handed down from (a JVP that owns none of its
    arguments, or one differentiating it, inside the fwd rule) would escape, so that
    raises UnexpectedTracerError as in JAX.
    """
    jaxpr, consts = trace_to_jaxpr(wrap_init(fun_flat), [arg_aval(x) for x in args_flat])
    if any(isinstance(c, Tracer) for c in consts):
        below = set()
        trace = trace_state.trace if binding_trace is None else binding_trace
        while trace is not None:
            below.add(id(trace))
            trace = trace.parent
        if any(isinstance(c, Tracer) and id(c._trace) not in below for c in consts):
            raise _closed_over_error(kind, fun_flat.__name__)
    jaxpr = convert_constvars_jaxpr(jaxpr)
    return ClosedJaxpr(jaxpr.replace(debug_info=None), ()), consts


def _forward_attr(wrapper, name: str):
    """Attributes a decorator lacks come from the function it wraps (JAX's forward_attr).

    So decorators stack: ``custom_vjp(custom_vmap(f)).def_vmap`` is the inner one's.
    """
    try:
        fun = wrapper.__dict__["fun"]
    except KeyError:
        raise AttributeError(name) from None
    return getattr(fun, name)


class _Named:
    """Base of the rule wrappers: printed in jaxprs as the user's function name."""

    name = "rule"

    def __repr__(self) -> str:
        return self.name


# --- the call primitives, rebindable from JAX's ``get_bind_params`` form ---------------------


class _CallSubfun(WrappedFun):
    """The function of a custom call as JAX's ``get_bind_params`` hands it out.

    Calling it evaluates the call's program on all operands (consts first);
    binding the primitive again with it restores the equation's params.
    """

    __slots__ = ("bind_params",)

    def __init__(self, call_jaxpr: ClosedJaxpr, bind_params: dict):
        super().__init__(functools.partial(eval_jaxpr, call_jaxpr.jaxpr, call_jaxpr.consts))
        self.bind_params = bind_params


class _CustomCallPrimitive(Primitive):
    """A custom-derivative call: its rules travel in params as Python functions.

    As in JAX, ``get_bind_params`` turns the params into ``subfuns`` (the
    function, then the rules) and the other params, and ``bind`` takes that form
    back; interpreters written against JAX (equinox's ``finalise_jaxpr``) call
    ``subfuns[0].call_wrapped(*operands)`` to inline the call.
    """

    rule_names: tuple[str, ...] = ()

    def get_bind_params(self, params: dict) -> dict:
        """Return JAX's bind form of ``params``: ``subfuns`` replaces the program and rules."""
        rest = {k: v for k, v in params.items() if k != "call_jaxpr" and k not in self.rule_names}
        fun = _CallSubfun(params["call_jaxpr"], dict(params))
        rest["subfuns"] = (fun, *(params[name] for name in self.rule_names))
        return rest

    def bind(self, *args, **params):
        """Apply the primitive; params may be in ``get_bind_params``'s form."""
        if "subfuns" in params:
            subfuns = params.pop("subfuns")
            if not subfuns or not isinstance(subfuns[0], _CallSubfun):
                raise TypeError(
                    f"{self.name}: subfuns must come from {self.name}.get_bind_params; "
                    "bind the primitive with its equation's params instead"
                )
            params = {**subfuns[0].bind_params, **params}
        return super().bind(*args, **params)


# --- custom_jvp -------------------------------------------------------------------------

custom_jvp_call_p = _CustomCallPrimitive("custom_jvp_call")
custom_jvp_call_p.multiple_results = True
custom_jvp_call_p.rule_names = ("jvp",)


def _custom_call_impl(*args, call_jaxpr: ClosedJaxpr, **_):
    return eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *args)


def _custom_call_abstract_eval(primitive):
    def abstract_eval(*in_avals, call_jaxpr: ClosedJaxpr, **_):
        check_call_operands(primitive, in_avals, call_jaxpr)
        return call_jaxpr.out_avals

    return abstract_eval


custom_jvp_call_p.def_impl(_custom_call_impl)
custom_jvp_call_p.def_abstract_eval(_custom_call_abstract_eval(custom_jvp_call_p))


def _closed_over_error(kind: str, name: str) -> UnexpectedTracerError:
    return UnexpectedTracerError(
        f"The {kind} function {name} closes over a value that is being differentiated by "
        f"the transformation now applied to it; its derivative rule cannot account for it. "
        "Pass such values as explicit arguments (closure_convert hoists them out)."
    )


def _custom_jvp_call_jvp(primals, tangents, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise _closed_over_error("custom_jvp", jvp.primal_name)
    args, arg_tangents = primals[num_consts:], list(tangents[num_consts:])
    if not symbolic_zeros:
        arg_tangents = [instantiate_zeros(t) for t in arg_tangents]
    return jvp(list(args), arg_tangents)


def _custom_jvp_call_transpose(cts, *args, call_jaxpr, jvp, num_consts, symbolic_zeros):
    # A custom_jvp function applied to linear values: transpose its program.
    linear = [is_undefined_primal(a) for a in args]
    t_closed, in_zeros = transpose_jaxpr(call_jaxpr, linear, [type(c) is Zero for c in cts])
    nonlinear = [a for a, lin in zip(args, linear, strict=True) if not lin]
    outs = iter(
        eval_jaxpr(
            t_closed.jaxpr, t_closed.consts, *nonlinear, *[c for c in cts if type(c) is not Zero]
        )
    )
    zeros = iter(in_zeros)
    return [None if not lin or next(zeros) else next(outs) for lin in linear]


jvp_rules[custom_jvp_call_p] = _custom_jvp_call_jvp
transpose_rules[custom_jvp_call_p] = _custom_jvp_call_transpose
rules_with_user_code.add(custom_jvp_call_p)


class _FlatJVP(_Named):
    """The user's JVP rule as a function of flat lists, with JAX's output checks."""

    def __init__(self, rule, static_args, in_tree, out_tree, out_avals, primal_name):
        self.rule, self.static_args = rule, static_args
        self.in_tree, self.out_tree, self.out_avals = in_tree, out_tree, out_avals
        self.primal_name = primal_name
        self.name = _fun_name(rule)

    def __call__(self, primals, tangents):
        py_primals = tree_unflatten(self.in_tree, primals)
        py_tangents = tree_unflatten(self.in_tree, [to_symbolic_zero(t) for t in tangents])
        pair = self.rule(*self.static_args, py_primals, py_tangents)
        where = f"Custom JVP rule {self.name} for function {self.primal_name}"
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(
                f"{where} must produce a pair (list or tuple of length two) representing "
                f"primal and tangent outputs, but got {pair!r}."
            )
        primals_out, tree = tree_flatten(pair[0])
        tangents_out, tree2 = tree_flatten(pair[1], is_leaf=_is_zero)
        if tree != tree2:
            raise TypeError(
                f"{where} must produce primal and tangent outputs with equal container "
                f"(pytree) structures, but got {tree} and {tree2} respectively."
            )
        avals = [to_aval(p) for p in primals_out]
        if self.out_tree is None:  # the function was not traced: the rule gives the type
            self.out_tree, self.out_avals = tree, avals
        if tree != self.out_tree:
            raise TypeError(
                f"{where} must produce a pair (list or tuple of length two) where the first "
                "element represents the primal output (equal in value to the output of the "
                f"custom_jvp-decorated function {self.primal_name}, and in particular of the "
                "same container/pytree structure), but instead the JVP rule output's first "
                f"element had container/pytree structure:\n    {_types_text(tree, avals)}\n"
                f"while the custom_jvp-decorated function {self.primal_name} had output "
                f"container/pytree structure:\n    {_types_text(self.out_tree, self.out_avals)}."
            )
        if not all(map(_same_type, avals, self.out_avals)):
            raise TypeError(
                f"{where} must produce a pair (list or tuple of length two) where the first "
                "element represents the primal output (equal in value to the output of the "
                f"custom_jvp-decorated function {self.primal_name}, and in particular with "
                "leaves of the same shape/dtype), but instead the JVP rule output's first "
                f"element had shapes/dtypes of:\n    {_types_text(tree, avals)}\n"
                f"while the custom_jvp-decorated function {self.primal_name} had output "
                f"shapes/dtypes of:\n    {_types_text(self.out_tree, self.out_avals)}"
            )
        result = []
        for p_aval, t in zip(avals, tangents_out, strict=True):
            want = tangent_aval(p_aval)
            got = t.aval if isinstance(t, Zero) else to_aval(t)
            if not _same_type(want, got):
                raise TypeError(
                    "Custom JVP rule must produce primal and tangent outputs with "
                    f"corresponding shapes and dtypes. Expected {want.str_short()} (tangent "
                    f"type of {p_aval.str_short()}) but got {got.str_short()}."
                )
            result.append(Zero(want) if want.dtype == dtypes.float0 else from_symbolic_zero(t))
        return primals_out, result


def _stop_gradient_leaves(x):
    # Only tracers, as JAX: a Python float stays one (equinox keeps such leaves static).
    return tree_map(lambda leaf: stop_gradient(leaf) if isinstance(leaf, Tracer) else leaf, x)


def _nondiff_positions(fun: Callable, argnums: Sequence[int], argnames: str | Sequence[str]):
    """The sorted positions of ``argnums`` and of the positional parameters named ``argnames``."""
    names = (argnames,) if isinstance(argnames, str) else tuple(argnames)
    nums, _ = infer_nums_and_names(fun, tuple(argnums), names)
    return tuple(sorted(set(nums)))


class custom_jvp:
    """Make a function whose JVP is given by a rule of the user's (jax.custom_jvp).

    Decorate the function, then define the rule with ``defjvp`` (one rule taking
    ``(primals, tangents)`` tuples and returning ``(primal_out, tangent_out)``) or
    ``defjvps`` (one function per argument). Arguments in ``nondiff_argnums`` are not
    differentiated; they are passed first to the rule.
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: str | Sequence[str] = (),
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.jvp: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __getattr__(self, name: str):
        return _forward_attr(self, name)

    def defjvp(self, jvp: Callable, symbolic_zeros: bool = False) -> Callable:
        """Set the JVP rule ``jvp(*nondiff_args, primals, tangents)`` (custom_jvp.defjvp).

        With ``symbolic_zeros=True`` unperturbed inputs get ``SymbolicZero`` tangents
        (which have ``shape``, ``dtype`` and ``aval``), and the rule may return them.
        Return ``jvp`` so that this can be used as a decorator.
        """
        self.jvp = jvp
        self.symbolic_zeros = symbolic_zeros
        return jvp

    def defjvps(self, *jvps: Callable | None) -> None:
        """Set the JVP from one function per argument (custom_jvp.defjvps).

        ``jvps[i](tangent_i, primal_out, *primals)`` gives the tangent of the output due
        to argument ``i`` (None: that argument has no derivative); they are summed.
        Zero tangents are skipped, so an unperturbed argument costs nothing.
        """
        if self.nondiff_argnums:
            raise TypeError("Can't use ``defjvps`` with ``nondiff_argnums``.")

        def jvp(primals, tangents):
            primal_out = self(*primals)
            total = tree_map(Zero.from_primal_value, primal_out)
            for fn, t in zip(jvps, tangents, strict=False):
                leaves = tree_flatten(t, is_leaf=_is_zero)[0]
                if fn is None or all(isinstance(leaf, Zero) for leaf in leaves):
                    continue
                t = tree_map(instantiate_zeros, t, is_leaf=_is_zero)
                term = fn(t, primal_out, *primals)
                total = tree_map(_add_rule_tangents, total, term, is_leaf=_is_zero)
            return primal_out, total

        self.defjvp(jvp, symbolic_zeros=True)

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.jvp is None:
            raise AttributeError(f"No JVP defined for custom_jvp function {name} using defjvp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_jvp", name)
        trace = _trace_that_binds(tree_flatten(args)[0])
        if trace is eval_trace:
            # Nothing transforms this call: run the function as written, as JAX does (Python
            # control flow on its values works; there is nothing to differentiate).
            with set_current_trace(eval_trace):
                return self.fun(*args)
        nondiff = self.nondiff_argnums
        if nondiff:
            args = tuple(
                _stop_gradient_leaves(a) if i in nondiff else a for i, a in enumerate(args)
            )
        static_args = [args[i] for i in nondiff]
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        args_flat, in_tree = tree_flatten(dyn_args)
        out_tree_cell = []

        def fun_flat(*xs):
            dyn = iter(tree_unflatten(in_tree, xs))
            full = [args[i] if i in nondiff else next(dyn) for i in range(len(args))]
            out_flat, out_tree = tree_flatten(self.fun(*full))
            out_tree_cell.append(out_tree)
            return out_flat

        fun_flat.__name__ = name
        if _differentiated_by(trace, args_flat):
            # As JAX: a JVP runs only the rule (on values that may be concrete, so Python
            # control flow in the function never needs tracing); the function is not traced.
            jvp = _FlatJVP(self.jvp, static_args, in_tree, None, None, name)
            params = {"call_jaxpr": None, "jvp": jvp, "num_consts": 0}
            params["symbolic_zeros"] = self.symbolic_zeros
            outs = trace.process_primitive(custom_jvp_call_p, args_flat, params)
            return tree_unflatten(jvp.out_tree, outs)
        call_jaxpr, consts = _trace_call(fun_flat, args_flat, "custom_jvp", trace)
        out_tree = out_tree_cell[0]
        jvp = _FlatJVP(self.jvp, static_args, in_tree, out_tree, call_jaxpr.out_avals, name)
        outs = custom_jvp_call_p.bind(
            *consts,
            *args_flat,
            call_jaxpr=call_jaxpr,
            jvp=jvp,
            num_consts=len(consts),
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_unflatten(out_tree, outs)


# --- custom_vjp -------------------------------------------------------------------------

custom_vjp_call_p = _CustomCallPrimitive("custom_vjp_call")
custom_vjp_call_p.multiple_results = True
custom_vjp_call_p.rule_names = ("fwd", "bwd")
custom_vjp_call_p.def_impl(_custom_call_impl)
custom_vjp_call_p.def_abstract_eval(_custom_call_abstract_eval(custom_vjp_call_p))

# As JAX's text: num_consts prints only when nonzero (the parser restores a zero).
for _call_p in (custom_jvp_call_p, custom_vjp_call_p):
    register_param_printer(_call_p, "num_consts", lambda n: None if n == 0 else str(n))
    register_param_defaults(_call_p, lambda _: {"num_consts": 0})

custom_lin_p = Primitive("custom_lin")
custom_lin_p.multiple_results = True


class CustomVJPException(Exception):
    """A custom_vjp function was differentiated with respect to a closed-over value."""


def _custom_lin_impl(*args, **params):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


custom_lin_p.def_impl(_custom_lin_impl)
custom_lin_p.def_abstract_eval(lambda *args, out_avals, **params: list(out_avals))


def _custom_vjp_call_jvp(primals, tangents, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros):
    if any(type(t) is not Zero for t in tangents[:num_consts]):
        raise CustomVJPException(
            "Detected differentiation of a custom_vjp function with respect to a closed-over "
            "value. That isn't supported because the custom VJP rule only specifies how to "
            "differentiate the custom_vjp function with respect to explicit input "
            "parameters. Pass the closed-over values as explicit arguments (see "
            "closure_convert)."
        )
    args, arg_tangents = list(primals[num_consts:]), tangents[num_consts:]
    perturbed = [type(t) is not Zero for t in arg_tangents]
    primals_out, res, res_tree = fwd(args, perturbed)
    out_avals = [tangent_aval(to_aval(p)) for p in primals_out]
    lin_mask = [a.dtype != dtypes.float0 for a in out_avals]
    bound = _BoundBwd(bwd, res_tree, out_avals, lin_mask)
    nz_tangents = [t for t in arg_tangents if type(t) is not Zero]
    lin_out = iter(
        custom_lin_p.bind(
            *res,
            *nz_tangents,
            num_res=len(res),
            bwd=bound,
            out_avals=tuple(a for a, m in zip(out_avals, lin_mask, strict=True) if m),
            in_zeros=tuple(not p for p in perturbed),
        )
    )
    tangents_out = [
        next(lin_out) if m else Zero(a) for a, m in zip(out_avals, lin_mask, strict=True)
    ]
    return primals_out, tangents_out


def _custom_lin_transpose(cts, *args, num_res, bwd, out_avals, in_zeros):
    cts_in = bwd(list(args[:num_res]), list(cts))
    nz = [None if type(ct) is Zero else ct for ct, z in zip(cts_in, in_zeros, strict=True) if not z]
    return [None] * num_res + nz


jvp_rules[custom_vjp_call_p] = _custom_vjp_call_jvp
transpose_rules[custom_lin_p] = _custom_lin_transpose
rules_with_user_code.add(custom_vjp_call_p)


class CustomVJPPrimal:
    """What a ``symbolic_zeros`` fwd rule gets per input leaf: ``value`` and ``perturbed``."""

    __slots__ = ("value", "perturbed")

    def __init__(self, value, perturbed: bool):
        self.value = value
        self.perturbed = perturbed

    def __repr__(self) -> str:
        return f"CustomVJPPrimal(value={self.value!r}, perturbed={self.perturbed})"


def custom_vjp_primal_tree_values(tree):
    """Replace each ``CustomVJPPrimal`` leaf by its value (jax.custom_derivatives's helper).

    For ``symbolic_zeros`` fwd rules, whose arguments arrive as such records; any
    other leaf raises TypeError.
    """

    def value(leaf):
        if type(leaf) is not CustomVJPPrimal:
            raise TypeError(f"unexpected leaf type {type(leaf)}")
        return leaf.value

    return tree_map(value, tree)


def zero_from_primal(val, symbolic_zeros: bool = False):
    """Zero tangents for the leaves of ``val`` (jax.custom_derivatives.zero_from_primal).

    Each leaf becomes zeros of its tangent type (float0 for integers and booleans),
    or a ``SymbolicZero`` of that type when ``symbolic_zeros``.
    """

    def zero(x):
        aval = tangent_aval(arg_aval(x))
        return SymbolicZero(aval) if symbolic_zeros else zeros_like_aval(aval)

    return tree_map(zero, val)


class _OutputType:
    """The output tree and avals of a custom_vjp function, shared by its fwd and bwd rules.

    Known from tracing the function, or (under a JVP, where JAX never traces it) from
    the first run of fwd.
    """

    __slots__ = ("tree", "avals")

    def __init__(self, tree=None, avals=None):
        self.tree, self.avals = tree, avals


class _FlatFwd(_Named):
    """The user's fwd rule on flat lists: returns primal outputs, residuals, residual tree."""

    def __init__(self, fwd, static, nargs, in_tree, out: _OutputType, symbolic_zeros, primal):
        self.fwd, self.static, self.nargs = fwd, static, nargs
        self.in_tree, self.out = in_tree, out
        self.symbolic_zeros, self.primal_name = symbolic_zeros, primal
        self.name = _fun_name(fwd)

    out_tree = property(lambda self: self.out.tree)
    out_avals = property(lambda self: self.out.avals)

    def __call__(self, args_flat, perturbed):
        if self.symbolic_zeros:
            args_flat = [CustomVJPPrimal(x, p) for x, p in zip(args_flat, perturbed, strict=True)]
        dyn = iter(tree_unflatten(self.in_tree, args_flat))
        full = [self.static[i] if i in self.static else next(dyn) for i in range(self.nargs)]
        pair = self.fwd(*full)
        where = f"Custom VJP fwd rule {self.name} for function {self.primal_name}"
        what = (
            "must produce a pair (list or tuple of length two) where the first element "
            "represents the primal output (equal to the output of the custom_vjp-decorated "
            f"function {self.primal_name}) and the second element represents residuals (i.e. "
            "values stored from the forward pass for use on the backward pass), but"
        )
        if not isinstance(pair, tuple | list) or len(pair) != 2:
            raise TypeError(
                f"{where} {what} instead of a pair the fwd rule {self.name} produced {pair!r}."
            )
        primals_out, tree = tree_flatten(pair[0])
        res, res_tree = tree_flatten(pair[1])
        avals = [to_aval(p) for p in primals_out]
        if self.out.tree is None:  # the function was not traced: fwd gives the output type
            self.out.tree, self.out.avals = tree, avals
        if tree != self.out_tree:
            raise TypeError(
                f"{where} {what} instead the fwd rule output's first element had "
                f"container/pytree structure:\n    {_types_text(tree, avals)}\nwhile the "
                f"custom_vjp-decorated function {self.primal_name} had output container/pytree "
                f"structure:\n    {_types_text(self.out_tree, self.out_avals)}."
            )
        if not all(map(_same_type, avals, self.out_avals)):
            raise TypeError(
                f"{where} {what} instead the fwd rule output's first element had "
                f"shapes/dtypes of:\n    {_types_text(tree, avals)}\nwhile the "
                f"custom_vjp-decorated function {self.primal_name} had output shapes/dtypes "
                f"of:\n    {_types_text(self.out_tree, self.out_avals)}"
            )
        return primals_out, res, res_tree


class _FlatBwd(_Named):
    """The user's bwd rule on flat lists, with JAX's checks; ``None`` means zero."""

    def __init__(self, bwd, static_args, arg_trees, in_avals, out: _OutputType, symbolic_zeros):
        self.bwd, self.static_args, self.arg_trees = bwd, static_args, arg_trees
        self.in_avals, self.out, self.symbolic_zeros = in_avals, out, symbolic_zeros
        self.name = _fun_name(bwd)

    out_tree = property(lambda self: self.out.tree)

    def __call__(self, res_tree, res, cts_out):
        if self.symbolic_zeros:
            cts_out = [to_symbolic_zero(c) for c in cts_out]
        else:
            cts_out = [instantiate_zeros(c) for c in cts_out]
        py_cts_in = self.bwd(
            *self.static_args,
            tree_unflatten(res_tree, res),
            tree_unflatten(self.out_tree, cts_out),
        )
        n_args = len(self.arg_trees)
        if isinstance(py_cts_in, list) and len(py_cts_in) == n_args:
            py_cts_in = tuple(py_cts_in)
        leaves = _cotangent_leaves(py_cts_in, self.arg_trees)
        if leaves is None:
            in_tree = tree_structure(
                tuple(tree.unflatten([0] * tree.num_leaves) for tree in self.arg_trees)
            )
            raise TypeError(
                "Custom VJP bwd rule must produce an output with the same container (pytree) "
                "structure as the args tuple of the primal function, and in particular must "
                "produce a tuple of length equal to the number of arguments to the primal "
                f"function, but got bwd output structure {tree_structure(py_cts_in)} for "
                f"primal input structure {in_tree}."
            )
        results = []
        for i, (ct, aval) in enumerate(zip(leaves, self.in_avals, strict=True)):
            want = tangent_aval(aval)
            if ct is None or want.dtype == dtypes.float0:
                results.append(Zero(want))
                continue
            got = ct.aval if isinstance(ct, Zero) else to_aval(ct)
            if not _same_type(got, want) and not (
                got.shape == want.shape and got.dtype == dtypes.float0
            ):
                raise ValueError(
                    "Custom VJP bwd rule must produce an output with the same type as the args "
                    f"tuple of the primal function, but at flat output {i} the bwd rule "
                    f"produced an output of type {got.str_short()} corresponding to an input "
                    f"of type {aval.str_short()}"
                )
            results.append(Zero(want) if isinstance(ct, Zero) else ct)
        return results


def _trace_that_binds(leaves):
    """Return the trace a custom call with these argument leaves reaches.

    A JVP or linearize trace that owns none of them hands the call to its parent, as
    its ``process_primitive`` would: under ``grad`` a call on known values reaches the
    eval trace and runs as written, as in JAX.
    """
    trace = trace_state.trace
    while True:
        if type(trace) is JVPTrace:
            own = JVPTracer
        elif type(trace) is LinearizeTrace:
            own = JaxprTracer
        else:
            return trace
        if any(type(x) is own and x._trace is trace for x in leaves):
            return trace
        trace = trace.parent


def _differentiated_by(trace, args_flat) -> bool:
    """Whether ``trace`` is a JVP trace that some argument carries a tangent of."""
    return type(trace) is JVPTrace and any(
        type(x) is JVPTracer and x._trace is trace for x in args_flat
    )


_PRIMAL_LEAF = object()


def _cotangent_leaves(py_cts_in, arg_trees) -> list | None:
    """One cotangent (None: zero) per leaf of the primal arguments, or None on a mismatch.

    As JAX reads a bwd rule's output: a None stands for zeros of the whole subtree of
    the arguments at its place, whatever stands where the arguments have an empty
    subtree (a None) is ignored, and an array may stand for a subtree of one leaf.
    """
    if not isinstance(py_cts_in, tuple) or len(py_cts_in) != len(arg_trees):
        return None
    leaves: list[Any] = []
    for ct, tree in zip(py_cts_in, arg_trees, strict=True):
        dummy = tree.unflatten([_PRIMAL_LEAF] * tree.num_leaves)
        ct_leaves, ct_tree = tree_flatten(ct, is_leaf=lambda x: x is None or isinstance(x, Zero))
        try:
            subtrees = ct_tree.flatten_up_to(dummy)
        except (ValueError, TypeError):
            return None
        for leaf, subtree in zip(ct_leaves, subtrees, strict=True):
            n = tree_structure(subtree).num_leaves
            if leaf is None or n == 0:  # JAX drops a cotangent for an empty subtree too
                leaves.extend([None] * n)
            elif subtree is _PRIMAL_LEAF or n == 1:
                # JAX takes an array where the arguments have a one-leaf node (a flax
                # Param around its value) as that leaf's cotangent.
                leaves.append(leaf)
            else:
                return None  # an array where the arguments have a larger subtree
    return leaves


class _BoundBwd(_Named):
    """``bwd`` with the residual tree of one call; expands cotangents to every output."""

    def __init__(self, bwd: _FlatBwd, res_tree, out_avals, lin_mask):
        self.bwd, self.res_tree, self.out_avals, self.lin_mask = bwd, res_tree, out_avals, lin_mask
        self.name = bwd.name

    def __call__(self, res, lin_cts):
        lin = iter(lin_cts)
        cts = [
            next(lin) if m else Zero(a) for a, m in zip(self.out_avals, self.lin_mask, strict=True)
        ]
        return self.bwd(self.res_tree, res, cts)


class custom_vjp:
    """Make a function whose VJP is given by rules of the user's (jax.custom_vjp).

    Decorate the function, then call ``defvjp(fwd, bwd)``: ``fwd`` takes the
    function's arguments and returns ``(output, residuals)`` (residuals: any pytree);
    ``bwd(residuals, output_cotangent)`` returns a tuple with one cotangent per
    argument (``None`` for zero). Arguments in ``nondiff_argnums`` are passed first to
    ``bwd`` and must not be traced values. Forward mode (``jvp``) is not supported.
    """

    def __init__(
        self,
        fun: Callable,
        nondiff_argnums: Sequence[int] = (),
        nondiff_argnames: str | Sequence[str] = (),
    ):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.nondiff_argnums = _nondiff_positions(fun, nondiff_argnums, nondiff_argnames)
        self.fwd: Callable | None = None
        self.bwd: Callable | None = None
        self.symbolic_zeros = False

    def __get__(self, instance, owner=None):
        return self if instance is None else functools.partial(self, instance)

    def __getattr__(self, name: str):
        return _forward_attr(self, name)

    def defvjp(self, fwd: Callable, bwd: Callable, symbolic_zeros: bool = False) -> None:
        """Set the forward and backward rules (custom_vjp.defvjp).

        With ``symbolic_zeros=True``, ``fwd`` receives ``CustomVJPPrimal(value,
        perturbed)`` leaves and ``bwd`` may receive ``SymbolicZero`` cotangents.
        """
        self.fwd, self.bwd, self.symbolic_zeros = fwd, bwd, symbolic_zeros

    def __call__(self, *args, **kwargs):
        name = _fun_name(self.fun)
        if self.fwd is None or self.bwd is None:
            raise AttributeError(f"No VJP defined for custom_vjp function {name} using defvjp.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vjp", name)
        nondiff = self.nondiff_argnums
        for i in nondiff:
            if any(isinstance(leaf, Tracer) for leaf in tree_flatten(args[i])[0]):
                raise UnexpectedTracerError(
                    "Found a JAX Tracer object passed as an argument to a custom_vjp function "
                    "in a position indicated by nondiff_argnums as non-differentiable. Tracers "
                    "cannot be passed as non-differentiable arguments to custom_vjp functions; "
                    "instead, nondiff_argnums should only be used for arguments that can't be "
                    "or contain JAX tracers, e.g. function-valued arguments. In particular, "
                    "array-valued arguments should typically not be indicated as nondiff_argnums."
                )
        trace = _trace_that_binds(tree_flatten(args)[0])
        static_args = [args[i] for i in nondiff]
        dyn_args = tuple(a for i, a in enumerate(args) if i not in nondiff)
        args_flat, in_tree = tree_flatten(dyn_args)
        if trace is eval_trace:
            # Nothing transforms this call; as JAX's, the function gets its arguments and
            # gives its results through their leaves (new pytree nodes: flax's Variables
            # made inside are not the ones returned).
            dyn = iter(tree_unflatten(in_tree, args_flat))
            full = [args[i] if i in nondiff else next(dyn) for i in range(len(args))]
            with set_current_trace(eval_trace):
                out_flat, out_tree = tree_flatten(self.fun(*full))
            return tree_unflatten(out_tree, out_flat)
        out_tree_cell = []

        def fun_flat(*xs):
            dyn = iter(tree_unflatten(in_tree, xs))
            full = [args[i] if i in nondiff else next(dyn) for i in range(len(args))]
            out_flat, out_tree = tree_flatten(self.fun(*full))
            out_tree_cell.append(out_tree)
            return out_flat

        fun_flat.__name__ = name
        in_avals = [to_aval(x) for x in args_flat]
        static = {i: args[i] for i in nondiff}
        arg_trees = [tree_structure(a) for a in dyn_args]
        if _differentiated_by(trace, args_flat):
            # As JAX: a JVP runs only fwd (on values that may be concrete, so Python control
            # flow in the function never needs tracing); the function is not traced at all.
            out = _OutputType()
            fwd = _FlatFwd(self.fwd, static, len(args), in_tree, out, self.symbolic_zeros, name)
            bwd = _FlatBwd(self.bwd, static_args, arg_trees, in_avals, out, self.symbolic_zeros)
            outs = trace.process_primitive(
                custom_vjp_call_p,
                args_flat,
                {
                    "call_jaxpr": None,
                    "fwd": fwd,
                    "bwd": bwd,
                    "num_consts": 0,
                    "symbolic_zeros": self.symbolic_zeros,
                },
            )
            return tree_unflatten(out.tree, outs)
        call_jaxpr, consts = _trace_call(fun_flat, args_flat, "custom_vjp", trace)
        out = _OutputType(out_tree_cell[0], call_jaxpr.out_avals)
        fwd = _FlatFwd(self.fwd, static, len(args), in_tree, out, self.symbolic_zeros, name)
        bwd = _FlatBwd(self.bwd, static_args, arg_trees, in_avals, out, self.symbolic_zeros)
        out_tree = out.tree
        outs = custom_vjp_call_p.bind(
            *consts,
            *args_flat,
            call_jaxpr=call_jaxpr,
            fwd=fwd,
            bwd=bwd,
            num_consts=len(consts),
            symbolic_zeros=self.symbolic_zeros,
        )
        return tree_unflatten(out_tree, outs)
