"""The batch trace: tracers that carry a batch dimension, rule tables, the axis environment.

A ``BatchTracer`` stands for a stack of ``axis_size`` values: its ``val`` is the
whole batched array and ``batch_dim`` says which axis of it is the batch. Its
aval is the aval of one element (the batch axis removed). ``BatchTrace`` runs
each primitive through a rule of one of two tables:

* ``batching_rules[p](batched_args, batch_dims, **params) -> (out, out_dim)``,
  called only when some operand is batched by this trace;
* ``axis_primitive_batchers[p](axis_data, batched_args, batch_dims, **params)``,
  called for every bind of ``p`` under this trace, batched operands or not, with
  the ``AxisData`` (name, size) of the vmap being applied. Primitives that
  consult axis names (``axis_index``, collectives, call-like primitives whose
  inner program may) go here.

Rules run with the trace's parent as the current trace, on the unpacked values,
so everything they bind lands one level out. ``out_dim`` is an int or
``not_mapped`` (None), a list of them for primitives with multiple results.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple

from modjax.tracecore import source_info
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import (
    Primitive,
    Trace,
    Tracer,
    set_current_trace,
    to_aval,
    trace_state,
)
from modjax.tracecore.leaks import check_leaks, check_tracer_leaks
from modjax.tracecore.state import AbstractRef
from modjax.tracecore.tracing import register_axis_env_binder

__all__ = [
    "not_mapped",
    "AxisData",
    "BatchTracer",
    "BatchTrace",
    "batching_rules",
    "axis_primitive_batchers",
    "axis_frames",
    "axis_names",
    "axis_size",
    "extend_axis_env",
    "batch_subtrace",
]

# Frames of modjax.batching are never "the user's line" of an equation.
source_info.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

not_mapped = None

BatchingRule = Callable[..., tuple[Any, Any]]

batching_rules: dict[Primitive, BatchingRule] = {}
axis_primitive_batchers: dict[Primitive, BatchingRule] = {}


class AxisData(NamedTuple):
    """A vmapped axis: its name (None if unnamed), size and SPMD mesh axis names."""

    name: Any
    size: int
    spmd_name: tuple | None = None


# --- the axis-name environment ----------------------------------------------------------


class _AxisEnv(threading.local):
    def __init__(self):
        self.frames: tuple[AxisData, ...] = ()


_axis_env = _AxisEnv()


def axis_frames() -> tuple[AxisData, ...]:
    """Return the active mapped axes, outermost first (jax.core's axis environment).

    vmap pushes a frame while it traces the mapped function; other mapping
    transforms (shard_map) push theirs with ``extend_axis_env``.
    """
    return _axis_env.frames


def axis_names() -> tuple:
    """Return the names of the active named axes, outermost first (jax.core axis_env names)."""
    return tuple(f.name for f in _axis_env.frames if f.name is not None)


def _unbound(name) -> NameError:
    bound = ", ".join(repr(n) for n in axis_names()) or "none"
    return NameError(
        f"unbound axis name: {name}. The axis names bound here (by vmap or shard_map) are: {bound}."
    )


def axis_size(axis_name) -> int:
    """Return the size of the named mapped axis (jax.lax.axis_size).

    A tuple of names gives the product of their sizes. The innermost binding of
    a name wins. Raise NameError for a name no enclosing vmap binds.
    """
    if isinstance(axis_name, tuple | list):
        size = 1
        for name in axis_name:
            size *= axis_size(name)
        return size
    if axis_name is not None:
        for frame in reversed(_axis_env.frames):
            if frame.name == axis_name:
                return frame.size
    raise _unbound(axis_name)


@contextmanager
def extend_axis_env(axis_data: AxisData):
    """Bind ``axis_data.name`` to its size inside the block (jax.core.extend_axis_env_nd)."""
    env = _axis_env
    saved = env.frames
    env.frames = saved + (axis_data,)
    try:
        yield
    finally:
        env.frames = saved


# make_jaxpr(axis_env=[(name, size), ...]) binds its names here.
register_axis_env_binder(lambda name, size: extend_axis_env(AxisData(name, size)))


# --- tracers and the trace ---------------------------------------------------------------


class BatchTracer(Tracer):
    """A batched value: ``val`` holds all elements, stacked along axis ``batch_dim``."""

    __slots__ = ("val", "batch_dim", "_aval")

    def __init__(self, trace: BatchTrace, val, batch_dim: int):
        self._trace = trace
        self.val = val
        self.batch_dim = batch_dim
        self._aval = None

    @property
    def aval(self) -> ShapedArray:
        """Return the aval of one element: the batched value's, without the batch axis."""
        aval = self._aval
        if aval is None:  # computed once: array functions ask each operand for it
            batched = to_aval(self.val)
            shape, d = batched.shape, self.batch_dim
            # Each example varies over the manual axes the batch does (inside shard_map).
            vma = getattr(batched, "vma", frozenset())
            aval = ShapedArray(
                shape[:d] + shape[d + 1 :], batched.dtype, batched.weak_type, vma=vma
            )
            if type(batched) is AbstractRef:  # a batched reference: a reference per example
                aval = batched.update(aval)  # type: ignore[assignment]
            self._aval = aval
        return aval

    def _origin(self) -> str:
        name = self._trace.axis_data.name
        named = f" (axis_name={name})" if name is not None else ""
        return f" It is a value batched by vmap{named} along axis {self.batch_dim}."

    def _short_repr(self) -> str:
        return f"VmapTracer(aval={self.aval}, batched={to_aval(self.val)})"


class BatchTrace(Trace):
    """The vmap interpreter (jax's BatchTrace): runs batching rules for one mapped axis."""

    __slots__ = ("axis_data",)

    def __init__(self, axis_data: AxisData, parent: Trace | None = None):
        super().__init__(parent)
        self.axis_data = axis_data

    def unpack(self, x) -> tuple[Any, int | None]:
        """Return ``(value, batch_dim)`` of ``x``; anything not ours is unbatched."""
        if type(x) is BatchTracer and x._trace is self:
            return x.val, x.batch_dim
        return x, None

    def process_primitive(self, primitive, args, params):
        """Apply ``primitive``'s batching rule to the unpacked operands, under the parent."""
        vals, dims, batched = [], [], False
        for x in args:
            if type(x) is BatchTracer and x._trace is self:
                vals.append(x.val)
                dims.append(x.batch_dim)
                batched = True
            else:
                vals.append(x)
                dims.append(None)
        axis_rule = axis_primitive_batchers.get(primitive)
        # set_current_trace(self.parent), spelled out: this runs for every batched bind.
        state = trace_state
        saved, state.trace = state.trace, self.parent
        try:
            if axis_rule is not None:
                out, out_dim = axis_rule(self.axis_data, vals, dims, **params)
            elif not batched:
                return primitive.bind(*vals, **params)
            else:
                rule = batching_rules.get(primitive)
                if rule is None:
                    raise NotImplementedError(
                        f"Batching rule for '{primitive.name}' not implemented"
                    )
                out, out_dim = rule(vals, dims, **params)
        finally:
            state.trace = saved
        if primitive.multiple_results:
            return [
                x if d is None else BatchTracer(self, x, d)
                for x, d in zip(out, out_dim, strict=True)
            ]
        return out if out_dim is None else BatchTracer(self, out, out_dim)

    def __repr__(self) -> str:
        return f"BatchTrace(axis_name={self.axis_data.name}, size={self.axis_data.size})"


def batch_subtrace(
    fun: Callable, axis_data: AxisData, in_dims: Sequence[int | None], args: Sequence[Any]
) -> tuple[list[Any], list[int | None]]:
    """Run flat ``fun`` on ``args`` batched along ``in_dims`` (jax's batching.batch_subtrace).

    Return the output values and their batch dims.

    The building block of vmap and of ``batch_jaxpr`` (jax's ``batch_subtrace``):
    a fresh BatchTrace over the current trace, the axis bound in the axis
    environment while ``fun`` runs. Outputs come back unpacked: the batched
    values with their batch dims, or the value itself with ``not_mapped``.
    """
    trace = BatchTrace(axis_data)
    tracers = [
        x if d is None else BatchTracer(trace, x, d) for x, d in zip(args, in_dims, strict=True)
    ]
    try:
        with extend_axis_env(axis_data), set_current_trace(trace):
            outs = fun(*tracers)
        vals, dims = [], []
        for out in outs:
            val, dim = trace.unpack(out)
            vals.append(val)
            dims.append(dim)
    finally:
        trace.invalidate()
    if check_tracer_leaks.value:
        tracers = outs = out = None  # our own references are not leaks
        check_leaks(trace)
    return vals, dims
