"""``eval_shape``: the output shapes and dtypes of a function, without running it."""

from __future__ import annotations

from collections.abc import Callable

from modjax.tracecore.traceback_util import api_boundary
from modjax.tracecore.tracing import arg_aval, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun, wrap_init

from .stages import shape_structs

__all__ = ["eval_shape"]


@api_boundary
def eval_shape(fun: Callable, *args, **kwargs):
    """Return the shapes and dtypes ``fun`` would produce, without running it (``jax.eval_shape``).

    Arguments may be arrays, scalars or ShapeDtypeStructs (pytrees of them); the
    result is a pytree of ShapeDtypeStruct.
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    info = debug_info(fun, args, kwargs)
    flat_fun, out_tree = flatten_fun(wrap_init(fun, info), in_tree)
    jaxpr, _ = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in leaves])
    return tree_unflatten(out_tree.val, shape_structs(jaxpr.out_avals))
