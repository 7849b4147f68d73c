"""``jax.experimental.sparse.transform``: ``sparsify`` and ``SparseTracer``.

``sparsify(f)`` runs ``f`` on BCOO arguments by interpreting its jaxpr with sparse
rules (``_sparsify_eval``, ``_sparsify_rules``, ``_sparsify_control``);
``sparsify(f, use_tracer=True)`` runs ``f`` under a ``SparseTrace`` instead, whose
tracers (``SparseTracer``) carry sparse or dense values through the same rules.
``todense_p`` (``_todense_primitive``) is the identity on dense arrays; its sparse
rule densifies.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import modjax.experimental.sparse._sparsify_control  # noqa: F401  (registers the rules)
from modjax.experimental.sparse._sparsify_eval import apply_rule, dense_aval, sparsify_interpreted
from modjax.experimental.sparse._sparsify_rules import is_sparse
from modjax.experimental.sparse._todense_primitive import todense_p
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Trace, Tracer, set_current_trace
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

__all__ = ["SparseTrace", "SparseTracer", "sparsify", "todense_p"]


class SparseTracer(Tracer):
    """A value of a ``SparseTrace``: a BCOO or dense array seen as a dense array
    (jax.experimental.sparse.SparseTracer).

    Its ``aval`` is the dense array's (shape and dtype); ``value`` is what it holds.
    """

    __slots__ = ("value", "_aval")

    def __init__(self, trace: SparseTrace, *, value: Any):
        if not isinstance(trace, SparseTrace):
            raise TypeError(f"SparseTracer needs a SparseTrace; got {type(trace).__name__}")
        self._trace = trace
        self.value = value
        self._aval = dense_aval(value)

    @property
    def aval(self) -> ShapedArray:
        return self._aval

    def full_lower(self) -> SparseTracer:
        """Return the tracer itself (JAX's ``full_lower``)."""
        return self

    def _origin(self) -> str:
        kind = type(self.value).__name__ if is_sparse(self.value) else "dense array"
        return f" It is a value of sparsify holding a {kind}."


class SparseTrace(Trace):
    """The trace of ``sparsify(f, use_tracer=True)``: binds by sparse rules under its parent."""

    __slots__ = ()

    def process_primitive(self, primitive, args, params):
        values = [x.value if isinstance(x, SparseTracer) and x._trace is self else x for x in args]
        with set_current_trace(self.parent):
            outs = apply_rule(primitive, values, params)
        tracers = [SparseTracer(self, value=v) for v in outs]
        return tracers if primitive.multiple_results else tracers[0]


def _sparsify_traced(f: Callable) -> Callable:
    @functools.wraps(f)
    def wrapped(*args, **params):
        leaves, in_tree = tree_flatten(args, is_leaf=is_sparse)
        trace = SparseTrace()
        try:
            with set_current_trace(trace):
                tracers = [SparseTracer(trace, value=x) for x in leaves]
                outs = f(*tree_unflatten(in_tree, tracers), **params)
            out_leaves, out_tree = tree_flatten(outs)
            values = [
                x.value if isinstance(x, SparseTracer) and x._trace is trace else x
                for x in out_leaves
            ]
        finally:
            trace.invalidate()
        return tree_unflatten(out_tree, values)

    return wrapped


def sparsify(f: Callable, use_tracer: bool = False) -> Callable:
    """Make ``f`` accept BCOO arrays wherever it takes arrays (jax.experimental.sparse.sparsify).

    Each primitive that meets a sparse operand runs its sparse rule: elementwise
    zero-preserving functions, products, sums, transposes and structural operations
    keep the result sparse, adding a dense array densifies, and a primitive without a
    rule raises NotImplementedError naming it. ``jit``, ``cond``, ``while_loop``,
    ``scan`` (without sparse ``xs``) and ``custom_jvp`` functions are sparsified inside.
    ``use_tracer=True`` runs ``f`` with ``SparseTracer`` values instead of tracing it to a
    jaxpr first. Keyword arguments are passed to ``f`` unchanged (static).
    """
    if use_tracer:
        return _sparsify_traced(f)
    return sparsify_interpreted(f)
