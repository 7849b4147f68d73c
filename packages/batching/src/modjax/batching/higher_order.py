"""Batching programs held by higher-order primitives: ``batch_jaxpr`` and the call rule.

``batch_jaxpr`` traces a ClosedJaxpr through a BatchTrace into a new ClosedJaxpr
that takes and returns batched values. It is memoized on the jaxpr object
(weakly), the batch dims and the axis, so a call-like primitive applied many times
to the same program under vmap (jit's primitive in a loop, say) is batched once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.call import call_p
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, Jaxpr, subjaxprs
from modjax.tracecore.jaxpr_cache import JaxprCache, has_tracers
from modjax.tracecore.state import AbstractRef
from modjax.tracecore.tracing import convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.wrapped_fun import wrap_init

from .batch_trace import AxisData, axis_primitive_batchers, batch_subtrace
from .primitives import canonicalize_axis, matchaxis

__all__ = [
    "batch_jaxpr",
    "batch_jaxpr_axis",
    "call_batching_rule",
    "register_call_batching",
    "clear_caches",
    "uses_axis_primitives",
]


# Batched programs, by (axis, in dims, out dims); whether a program uses named-axis
# primitives. Keyed weakly on the jaxpr: see tracecore's jaxpr_cache.
_batched_jaxprs = JaxprCache("batch")
_axis_use = JaxprCache("axis_use")


def clear_caches() -> None:
    """Forget every batched jaxpr, to release memory or in tests (like jax.clear_caches)."""
    _batched_jaxprs.clear()
    _axis_use.clear()


def _batched_aval(aval: ShapedArray, dim: int, size: int) -> ShapedArray:
    shape = list(aval.shape)
    shape.insert(dim, size)
    # The varying manual axes stay (a shard_map body batched by vmap keeps its types).
    vma = getattr(aval, "vma", frozenset())
    batched = ShapedArray(tuple(shape), aval.dtype, aval.weak_type, vma=vma)
    if type(aval) is AbstractRef:  # a batched reference holds every example's array
        return aval.update(batched)  # type: ignore[return-value]
    return batched


def _normalize_out_dims(spec, n: int) -> tuple:
    if spec is None or spec is False:
        return (None,) * n
    if spec is True:
        return (0,) * n
    if isinstance(spec, int):
        return (spec,) * n
    spec = tuple(spec)
    if len(spec) != n:
        raise ValueError(f"batch_jaxpr: {len(spec)} out_dims_instantiate entries for {n} outputs")
    return tuple(0 if d is True else None if d is False else d for d in spec)


def _trace_batched(closed: ClosedJaxpr, axis_data: AxisData, in_dims: tuple, out_inst: tuple):
    in_avals = [
        aval if d is None else _batched_aval(aval, d, axis_data.size)
        for aval, d in zip(closed.in_avals, in_dims, strict=True)
    ]
    out_dims_box: list = []

    def batched_fun(*args):
        run = partial(eval_jaxpr, closed.jaxpr, closed.consts)
        vals, dims = batch_subtrace(run, axis_data, in_dims, args)
        out_dims = []
        for i, (dst, dim) in enumerate(zip(out_inst, dims, strict=True)):
            if dst is not None:
                ndim = len(to_aval(vals[i]).shape) + (dim is None)
                dst = canonicalize_axis(dst, ndim)
                vals[i] = matchaxis(axis_data.size, dim, dst, vals[i])
                dim = dst
            out_dims.append(dim)
        out_dims_box.append(tuple(out_dims))
        return vals

    jaxpr, consts = trace_to_jaxpr(wrap_init(batched_fun, closed.jaxpr.debug_info), in_avals)
    return ClosedJaxpr(jaxpr, consts), out_dims_box[0]


def batch_jaxpr_axis(
    closed_jaxpr: ClosedJaxpr,
    axis_data: AxisData,
    in_dims: Sequence[int | None],
    out_dims_instantiate: Any = None,
) -> tuple[ClosedJaxpr, tuple[int | None, ...]]:
    """Batch ``closed_jaxpr`` along the axis ``axis_data`` (jax's batch_jaxpr_axes).

    Like ``batch_jaxpr``, for rules that already hold the ``AxisData`` of the
    vmap being applied (axis-aware rules receive it as their first argument),
    so that named-axis primitives in the program see their axis.
    """
    n_in = len(closed_jaxpr.in_avals)
    if len(in_dims) != n_in:
        raise ValueError(f"batch_jaxpr: {len(in_dims)} in_dims for a jaxpr of {n_in} inputs")
    dims = tuple(
        None if d is None else canonicalize_axis(d, len(aval.shape) + 1)
        for d, aval in zip(in_dims, closed_jaxpr.in_avals, strict=True)
    )
    out_inst = _normalize_out_dims(out_dims_instantiate, len(closed_jaxpr.out_avals))
    key = (axis_data, dims, out_inst)
    return _batched_jaxprs.get(
        closed_jaxpr,
        key,
        lambda: _trace_batched(closed_jaxpr, axis_data, dims, out_inst),
        lambda value: not has_tracers(value[0].consts),
    )


def batch_jaxpr(
    closed_jaxpr: ClosedJaxpr,
    axis_size: int,
    in_dims: Sequence[int | None],
    out_dims_instantiate: Any = None,
    *,
    axis_name: Any = None,
    spmd_axis_name: Any = None,
) -> tuple[ClosedJaxpr, tuple[int | None, ...]]:
    """Return ``closed_jaxpr`` batched along an axis of ``axis_size`` (jax's batch_jaxpr).

    ``in_dims[i]`` is the batch axis of input ``i`` in the batched program (None:
    unbatched). ``out_dims_instantiate`` says where outputs must be batched: None
    or False leaves each output as its rules made it (possibly unbatched), an
    int (True meaning 0) forces that batch axis, moving or broadcasting; give one
    value for all outputs or a sequence with one per output. Returns the batched
    ClosedJaxpr (it may have consts) and the batch dim of each output. Results
    are cached on the jaxpr's identity, the dims and the axis.
    """
    spmd = (
        None
        if spmd_axis_name is None
        else tuple(spmd_axis_name)
        if isinstance(spmd_axis_name, tuple | list)
        else (spmd_axis_name,)
    )
    axis_data = AxisData(axis_name, int(axis_size), spmd)
    return batch_jaxpr_axis(closed_jaxpr, axis_data, in_dims, out_dims_instantiate)


# --- call-like primitives ------------------------------------------------------------------


def uses_axis_primitives(jaxpr: Jaxpr) -> bool:
    """Tell whether ``jaxpr`` (or a jaxpr inside it) binds a first-order axis-aware primitive.

    Batching rules of higher-order primitives ask this before leaving an equation with
    no batched operand alone: a program that reads a named axis must see the vmap.
    Memoized per jaxpr object.
    """

    def scan() -> bool:
        for eqn in jaxpr.eqns:
            inner = list(subjaxprs(eqn.params))
            if inner:
                if any(
                    uses_axis_primitives(j.jaxpr if isinstance(j, ClosedJaxpr) else j)
                    for j in inner
                ):
                    return True
            elif eqn.primitive in axis_primitive_batchers:
                return True
        return False

    return _axis_use.get(jaxpr, None, scan)


def _batched_call_jaxpr(closed: ClosedJaxpr, axis_data: AxisData, dims: tuple):
    """Batch a call's program once per (jaxpr, dims, axis); hoist consts to operands."""

    def compute():
        batched, out_dims = batch_jaxpr_axis(closed, axis_data, dims)
        consts = batched.consts
        if consts:
            batched = ClosedJaxpr(convert_constvars_jaxpr(batched.jaxpr), ())
        return batched, consts, out_dims

    return _batched_jaxprs.get(
        closed, ("call", axis_data, dims), compute, lambda value: not has_tracers(value[1])
    )


def call_batching_rule(
    prim: Primitive,
    update_params: Callable | None,
    axis_data: AxisData,
    args,
    dims,
    **params,
):
    """Batch a call-like equation (jax's BatchTrace.process_call).

    Bind ``prim`` on the batched version of its ``jaxpr`` param.

    The inner program is batched once per (jaxpr, batch dims, axis) and cached.
    Outputs keep the batch dims the inner rules gave them (unbatched ones stay
    unbatched). A program with no batched operand is left alone unless it uses
    named-axis primitives (``axis_index``, collectives), which must see this axis.
    Consts of the batched program become leading operands (inner programs have none);
    ``update_params(params, in_dims, out_dims, new_jaxpr)`` rebuilds other params,
    where ``in_dims`` has a leading None for each such operand.
    """
    closed = params["jaxpr"]
    if all(d is None for d in dims) and not uses_axis_primitives(closed.jaxpr):
        outs = prim.bind(*args, **params)
        return outs, [None] * len(outs)
    dims = tuple(dims)
    batched, consts, out_dims = _batched_call_jaxpr(closed, axis_data, dims)
    if consts:
        args = [*consts, *args]
        dims = (None,) * len(consts) + dims
    if update_params is None:
        new_params = dict(params, jaxpr=batched)
    else:
        new_params = update_params(params, dims, out_dims, batched)
    return prim.bind(*args, **new_params), list(out_dims)


def register_call_batching(prim: Primitive, update_params: Callable | None = None) -> None:
    """Give call-like ``prim`` its vmap rule (jax's process_call for call primitives).

    ``prim`` applies its ``jaxpr`` param 1:1 to its operands.

    The runtime registers jit's primitive this way; tracecore's ``call_p`` is
    registered here. See ``call_batching_rule`` for ``update_params``.
    """
    axis_primitive_batchers[prim] = partial(call_batching_rule, prim, update_params)


register_call_batching(call_p)
