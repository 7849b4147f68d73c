"""``linear_call``: a linear function with the transpose its author gives.

``linear_call[callee, num_callee_consts, num_res, transpose_thunk]`` applies ``callee`` (a
const-free ClosedJaxpr over ``(consts, residuals, linear args)``); its JVP applies it to
the tangents (residuals are not differentiated), and its transpose is another
``linear_call`` whose callee is the user's transpose, so transposing twice gives the
callee back (JAX's construction). ``transpose_thunk()`` returns ``(transpose jaxpr,
its consts)``, traced when first needed. As in JAX there is no batching rule. The
lowering (the callee inlined) needs lowering's table, autodiff's sibling: it is
registered by runtime (``sibling_rules/autodiff_primitives.py``).
"""

from __future__ import annotations

from collections.abc import Callable

from modjax.tracecore.core import Primitive
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import wrap_init

from .tangents import Zero, is_undefined_primal, jvp_rules, transpose_rules, zeros_like_aval

__all__ = ["linear_call", "linear_call_p"]


def _trace(fun: Callable, avals) -> tuple[ClosedJaxpr, list]:
    jaxpr, consts = trace_to_jaxpr(wrap_init(fun), list(avals))
    return ClosedJaxpr(convert_constvars_jaxpr(jaxpr).replace(debug_info=None), ()), consts


def linear_call(fun: Callable, fun_transpose: Callable, residual_args, linear_args):
    """Call ``fun(residual_args, linear_args)``, linear in ``linear_args``, transposed by
    ``fun_transpose(residual_args, cotangent)`` (jax.custom_derivatives.linear_call).

    Reverse mode uses ``fun_transpose`` instead of transposing ``fun``; forward mode
    applies ``fun`` to the tangents. Differentiating with respect to
    ``residual_args`` is not supported (JAX asserts it does not happen).
    """
    res_flat, res_tree = tree_flatten(residual_args)
    lin_flat, lin_tree = tree_flatten(linear_args)
    n_res = len(res_flat)
    out_box: list = []

    def callee_flat(*xs):
        out = fun(
            tree_unflatten(res_tree, list(xs[:n_res])), tree_unflatten(lin_tree, list(xs[n_res:]))
        )
        leaves, tree = tree_flatten(out)
        out_box[:] = [tree]
        return leaves

    avals = [arg_aval(x) for x in (*res_flat, *lin_flat)]
    callee, consts = _trace(callee_flat, avals)
    out_tree = out_box[0]
    res_avals = avals[:n_res]
    cache: list = []

    def transpose_thunk():
        if not cache:

            def transpose_flat(*xs):
                res = tree_unflatten(res_tree, list(xs[:n_res]))
                cts = fun_transpose(res, tree_unflatten(out_tree, list(xs[n_res:])))
                leaves, tree = tree_flatten(cts)
                if tree != lin_tree:
                    raise TypeError(
                        "linear_call: the transpose returns a tree of structure "
                        f"{tree}, but the linear arguments have structure {lin_tree}"
                    )
                return leaves

            cache.append(_trace(transpose_flat, [*res_avals, *callee.out_avals]))
        return cache[0]

    outs = linear_call_p.bind(
        *consts,
        *res_flat,
        *lin_flat,
        callee=callee,
        transpose_thunk=transpose_thunk,
        num_callee_consts=len(consts),
        num_res=n_res,
    )
    return tree_unflatten(out_tree, outs)


def _impl(*args, callee, **_):
    return eval_jaxpr(callee.jaxpr, callee.consts, *args)


def _abstract_eval(*avals, callee, **_):
    return callee.out_avals


def _jvp(primals, tangents, *, callee, transpose_thunk, num_callee_consts, num_res):
    k = num_callee_consts + num_res
    if any(type(t) is not Zero for t in tangents[:k]):
        raise NotImplementedError(
            "linear_call: differentiating with respect to residual_args (or values the "
            "function closes over) is not supported"
        )
    params = {
        "callee": callee,
        "transpose_thunk": transpose_thunk,
        "num_callee_consts": num_callee_consts,
        "num_res": num_res,
    }
    lin = [zeros_like_aval(t.aval) if type(t) is Zero else t for t in tangents[k:]]
    return linear_call_p.bind(*primals, **params), linear_call_p.bind(*primals[:k], *lin, **params)


def _transpose(cts, *args, callee, transpose_thunk, num_callee_consts, num_res):
    transpose, t_consts = transpose_thunk()
    f_consts = args[:num_callee_consts]
    res = args[num_callee_consts : num_callee_consts + num_res]
    ct_avals = transpose.in_avals[len(t_consts) + num_res :]
    cts = [zeros_like_aval(a) if type(c) is Zero else c for c, a in zip(cts, ct_avals, strict=True)]
    out = linear_call_p.bind(
        *t_consts,
        *res,
        *cts,
        callee=transpose,
        transpose_thunk=lambda: (callee, list(f_consts)),
        num_callee_consts=len(t_consts),
        num_res=len(res),
    )
    n_lin = len(args) - num_callee_consts - num_res
    assert all(is_undefined_primal(x) for x in args[num_callee_consts + num_res :])
    return [None] * (num_callee_consts + num_res) + list(out[:n_lin])


linear_call_p = Primitive("linear_call")
linear_call_p.multiple_results = True
linear_call_p.def_impl(_impl)
linear_call_p.def_abstract_eval(_abstract_eval)
jvp_rules[linear_call_p] = _jvp
transpose_rules[linear_call_p] = _transpose
