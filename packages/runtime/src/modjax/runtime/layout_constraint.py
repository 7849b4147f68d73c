"""``with_layout_constraint``: ask XLA for a value's memory layout inside a program.

``layout_constraint_p`` is the identity on values; lowered, it is XLA's
``LayoutConstraint`` custom call with the requested layout as its result layout
(as JAX lowers it), so XLA lays the value out that way where it is computed.
Eagerly an Array already in that layout is returned as is; modjax's Arrays
always have the default layout, so asking eagerly for another one is refused.
"""

from __future__ import annotations

from modjax.autodiff.tangents import deflinear
from modjax.batching import axis_primitive_batchers
from modjax.lowering import register_lowering
from modjax.lowering._mlir import custom_call, ir_type
from modjax.tracecore import core
from modjax.tracecore.core import to_aval
from modjax.tracecore.tree_util import tree_broadcast, tree_flatten, tree_leaves, tree_unflatten

from .array import ArrayImpl, device_put
from .layout import Layout

__all__ = ["layout_constraint_p", "with_layout_constraint"]

layout_constraint_p = core.Primitive("layout_constraint")
layout_constraint_p.def_abstract_eval(lambda x, *, layout: x)


def _impl(x, *, layout):
    if type(x) is not ArrayImpl:
        x = device_put(x)  # the primitive itself takes host data too (rule checks do)
    if x.format.layout == layout or layout.major_to_minor == tuple(range(x.ndim)):
        return x  # the default (row-major) layout is every Array's
    raise NotImplementedError(
        f"with_layout_constraint to {layout} outside jit: modjax's Arrays only have the "
        "default layout (under jit, XLA applies the layout inside the program)"
    )


def _lowering(ctx, x, *, layout):
    (aval,) = ctx.avals_in
    (out,) = custom_call(
        "LayoutConstraint",
        [ir_type(ctx.avals_out[0])],
        [x],
        api_version=1,
        legacy_backend_config="",
        # XLA ignores the operand's layout here; the result's is the constraint.
        operand_layouts=[list(range(aval.ndim))],
        result_layouts=[list(layout.major_to_minor[::-1])],
    )
    return out


def _batching(axis_data, args, dims, *, layout):
    (x,), (d,) = args, dims
    if d is None:
        return layout_constraint_p.bind(x, layout=layout), None
    # The batch dimension is numbered 0 and goes at position d of the order, as JAX's.
    order = [m + 1 for m in layout.major_to_minor]
    order.insert(d, 0)
    return layout_constraint_p.bind(x, layout=layout.update(major_to_minor=tuple(order))), d


layout_constraint_p.def_impl(_impl)
register_lowering(layout_constraint_p, _lowering)
deflinear(
    layout_constraint_p, lambda ct, x, *, layout: [layout_constraint_p.bind(ct, layout=layout)]
)
axis_primitive_batchers[layout_constraint_p] = _batching


def with_layout_constraint(x, layouts):
    """Constrain the memory layout of each leaf of ``x`` (JAX's ``with_layout_constraint``).

    ``layouts`` is a Layout or a prefix tree of them; each must order as many
    dimensions as its leaf has. The values are unchanged.
    """
    leaves, tree = tree_flatten(x)
    try:
        flat = tree_leaves(
            tree_broadcast(layouts, x, is_leaf=lambda v: isinstance(v, Layout)),
            is_leaf=lambda v: isinstance(v, Layout),
        )
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"with_layout_constraint layouts must be a tree prefix of the value: {err}"
        ) from None
    if any(not isinstance(layout, Layout) for layout in flat):
        raise ValueError(
            "layouts passed to `with_layout_constraint` must be of type `Layout`. Got "
            f"{[type(layout) for layout in flat]}"
        )
    eager = isinstance(core.current_trace(), core.EvalTrace)
    for leaf, layout in zip(leaves, flat, strict=True):
        if eager and type(leaf) is not ArrayImpl:
            raise ValueError(
                "with_layout_constraint in eager mode can only be applied to jax.Arrays. Got "
                f"{type(leaf)}"
            )
        try:
            layout.check_compatible_aval(to_aval(leaf).shape)
        except ValueError as err:
            raise ValueError(
                "One of with_layout_constraint arguments is incompatible with its layout "
                f"annotation {layout}: {err}"
            ) from None
    outs = [
        layout_constraint_p.bind(leaf, layout=layout)
        for leaf, layout in zip(leaves, flat, strict=True)
    ]
    return tree_unflatten(tree, outs)
