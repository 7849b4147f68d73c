"""``lax.composite``: a named operation defined by its decomposition (``stablehlo.composite``).

``composite[name, attributes, version, jaxpr]`` holds the decomposition's program; it
evaluates and lowers as ``stablehlo.composite "name"`` whose ``decomposition`` is that
program as a private function, so a compiler that knows the name may replace it. JAX
has no JVP or batching rule for it (it raises); here both apply to the decomposition,
whose derivative and batched form are ordinary programs (a deliberate difference).
"""

from __future__ import annotations

import functools

import numpy as np

from modjax.autodiff import instantiate_zeros, jvp_jaxpr, jvp_rules
from modjax.batching import batch_jaxpr, batching_rules
from modjax.lowering import (
    dtype_to_ir_type,
    hlo,
    i32_attr,
    ir,
    ir_type,
    jaxpr_function,
    register_lowering,
)
from modjax.tracecore.core import Primitive, Tracer, UnexpectedTracerError
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import wrap_init

__all__ = ["composite", "composite_p"]


class HashableArray:
    """A numpy array attribute, hashable by value (a param must be hashable)."""

    def __init__(self, val):
        self.val = np.asarray(val)

    def __repr__(self) -> str:
        return f"HashableArray({self.val!r})"

    def __hash__(self) -> int:
        return hash((self.val.shape, self.val.dtype, self.val.tobytes()))

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, HashableArray)
            and self.val.shape == other.val.shape
            and self.val.dtype == other.val.dtype
            and np.array_equal(self.val, other.val)
        )


def composite(decomposition, name: str, version: int = 0):
    """Return ``decomposition`` as a named composite operation (jax.lax.composite).

    Calling the result traces ``decomposition`` on its positional arguments and binds
    one ``composite`` equation; keyword arguments are the op's attributes (static
    values: numbers, strings, numpy arrays, sequences, dicts; ``None`` ones are left
    out of the StableHLO attributes). It lowers to ``stablehlo.composite`` named
    ``name`` (with ``version``), whose decomposition XLA compiles unless it knows the
    name.
    """

    @functools.wraps(decomposition)
    def wrapped(*args, **kwargs):
        if any(isinstance(v, Tracer) for v in kwargs.values()):
            raise UnexpectedTracerError(
                "Found a JAX Tracer as an attribute in the decomposition for the composite op "
                f"'{name}'. This means that the decomposition function closes over a value "
                "that is involved in a JAX transformation. Any values that aren't explicitly "
                "known at compile time must be explicitly passed as arguments to the "
                "composite.\n\nNote: If you are passing jax arrays as attributes, use numpy "
                "arrays instead."
            )
        flat, in_tree = tree_flatten(args)
        box: list = []

        def flat_fun(*xs):
            out = decomposition(*tree_unflatten(in_tree, list(xs)), **kwargs)
            leaves, tree = tree_flatten(out)
            box[:] = [tree]
            return leaves

        jaxpr, consts = trace_to_jaxpr(wrap_init(flat_fun), [arg_aval(x) for x in flat])
        closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr).replace(debug_info=None), ())
        attributes = []
        for key, value in kwargs.items():
            leaves, tree = tree_flatten(value)
            leaves = tuple(_static(v) for v in leaves)
            attributes.append((key, leaves, tree))
        outs = composite_p.bind(
            *consts, *flat, name=name, attributes=tuple(attributes), version=version, jaxpr=closed
        )
        return tree_unflatten(box[0], outs)

    return wrapped


def _static(value):
    """An attribute leaf as a hashable static value (arrays, device arrays included, by value)."""
    if isinstance(value, np.ndarray) or (
        hasattr(value, "__array__") and not isinstance(value, np.generic | int | float | bool)
    ):
        return HashableArray(np.asarray(value))
    return value


def _impl(*args, jaxpr, **_):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _abstract_eval(*args, jaxpr, **_):
    return jaxpr.out_avals


def _attribute(value) -> ir.Attribute:
    """An MLIR attribute of a composite's attribute value (as JAX converts them)."""
    if isinstance(value, HashableArray):
        value = value.val
    if isinstance(value, bool):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(1), int(value))
    if isinstance(value, int):
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, str | bytes):
        return ir.StringAttr.get(value)
    if isinstance(value, dict):
        return ir.DictAttr.get({k: _attribute(v) for k, v in value.items()})
    if isinstance(value, list | tuple):
        return ir.ArrayAttr.get([_attribute(v) for v in value])
    if isinstance(value, np.dtype):
        return ir.TypeAttr.get(dtype_to_ir_type(value))
    if isinstance(value, np.ndarray | np.generic):
        array = np.asarray(value)
        element = dtype_to_ir_type(array.dtype)
        if array.ndim == 0:
            scalar = array.item()
            if isinstance(element, ir.IntegerType):
                return ir.IntegerAttr.get(element, int(scalar))
            return ir.FloatAttr.get(element, float(scalar))
        return ir.DenseElementsAttr.get(
            np.ascontiguousarray(array), type=element, shape=array.shape
        )
    raise TypeError(f"No attribute handler defined for type: {type(value)}")


def _lowering(ctx, *args, name, attributes, version, jaxpr):
    symbol = jaxpr_function(ctx, jaxpr, name)
    attrs = {}
    for key, leaves, tree in attributes:
        value = tree_unflatten(tree, [v.val if isinstance(v, HashableArray) else v for v in leaves])
        if value is not None:
            attrs[key] = _attribute(value)
    return hlo.CompositeOp(
        [ir_type(a) for a in ctx.avals_out],
        list(args),
        name=ir.StringAttr.get(name),
        decomposition=ir.FlatSymbolRefAttr.get(symbol),
        composite_attributes=ir.DictAttr.get(attrs),
        version=i32_attr(version),
    ).results


def _jvp(primals, tangents, *, jaxpr, **_):
    """Differentiate the decomposition (JAX raises ValueError here)."""
    tangents = [instantiate_zeros(t) for t in tangents]
    jvp_closed, _ = jvp_jaxpr(jaxpr, [True] * len(primals), True)
    outs = eval_jaxpr(jvp_closed.jaxpr, jvp_closed.consts, *primals, *tangents)
    n = len(outs) // 2
    return outs[:n], outs[n:]


def _batching(args, dims, *, jaxpr, **_):
    """Batch the decomposition (JAX has no rule): the batched program, inlined."""
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    closed, _ = batch_jaxpr(jaxpr, size, list(dims), True)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    return outs, [0] * len(outs)


composite_p = Primitive("composite")
composite_p.multiple_results = True
composite_p.def_impl(_impl)
composite_p.def_abstract_eval(_abstract_eval)
register_lowering(composite_p, _lowering)
jvp_rules[composite_p] = _jvp
batching_rules[composite_p] = _batching
