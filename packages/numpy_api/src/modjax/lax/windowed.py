"""Window reductions: ``reduce_window_sum/max/min``, the generic ``reduce_window``,
and the two primitives behind the derivative of a max/min pool
(``select_and_gather_add`` and its transpose ``select_and_scatter_add``).

A window reduction slides a window (``window_dimensions``, with
``window_strides`` and ``window_dilation``) over the operand after padding it
(``padding`` pairs, or ``"SAME"``/``"VALID"``) and dilating it
(``base_dilation``), and reduces each window with a monoid. All of them lower to
``stablehlo.reduce_window`` with a region; the generic one traces the user's
Python ``computation`` to a jaxpr and lowers that as the region.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax.autodiff import Zero, deflinear, is_undefined_primal, jvp_rules, transpose_rules
from modjax.batching import batching_rules, bdim_at_front
from modjax.lowering import hlo, ir, ir_type, lower_jaxpr_inline, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes, make_jaxpr, tree_util
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, Tracer

from ._common import ANY, NUMBER, aval_of, check_dtype, compare, constant, kind, reducer_region
from .reductions import _extreme, _lexicographic

__all__ = [
    "padtype_to_pads",
    "reduce_window",
    "reduce_window_max_p",
    "reduce_window_min_p",
    "reduce_window_p",
    "reduce_window_sum_p",
    "select_and_gather_add_p",
    "select_and_scatter_add_p",
]


# --- shapes and padding ----------------------------------------------------------------------


def dilate_dim(d: int, dilation: int) -> int:
    """Return the size of a dimension of size ``d`` with ``dilation - 1`` holes between elements."""
    return 0 if d == 0 else 1 + dilation * (d - 1)


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list[tuple[int, int]]:
    """Return explicit ``(low, high)`` pads for ``"SAME"``, ``"SAME_LOWER"`` or ``"VALID"``.

    The counterpart of jax.lax.padtype_to_pads: ``SAME`` pads so the output has
    ``ceil(in / stride)`` elements, the odd element going to the high side
    (``SAME_LOWER``: to the low side).
    """
    if not isinstance(padding, str):
        raise TypeError(f"padding must be a string, got {padding!r}")
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise RuntimeError(
            f"Unrecognized padding type: expected 'VALID', 'SAME', or 'SAME_LOWER', got {padding}."
        )
    # numpy arithmetic, as JAX's: mismatched lengths raise numpy's broadcasting ValueError.
    in_shape, strides = np.asarray(in_shape, np.int64), np.asarray(window_strides, np.int64)
    out = -(-in_shape // strides)
    totals = np.maximum(0, (out - 1) * strides + np.asarray(window_shape, np.int64) - in_shape)
    pads = []
    for total in totals.tolist():
        lo = total // 2 if mode == "SAME" else total - total // 2
        pads.append((lo, total - lo))
    return pads


def window_shape(
    name: str, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
) -> tuple[int, ...]:
    """Return the output shape of a window reduction, or raise TypeError naming ``name``."""
    n = len(shape)
    for what, values in (
        ("window_dimensions", window_dimensions),
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if any(v <= 0 for v in values):
            raise TypeError(
                f"{name} {what} must have every element be strictly positive, got {values}."
            )
    if len(window_dimensions) != n:
        raise TypeError(
            f"{name} got the wrong number of window_dimensions for operand: got operand shape "
            f"{tuple(shape)} with window_dimensions {window_dimensions}."
        )
    # JAX's texts: each length is checked against window_dimensions'.
    for what, values in (
        ("window_strides", window_strides),
        ("base_dilation", base_dilation),
        ("window_dilation", window_dilation),
    ):
        if len(values) != n:
            raise TypeError(
                f"{name} got inconsistent {what} and window_dimensions: got {what} {values} "
                f"and window_dimensions {window_dimensions}."
            )
    if len(padding) != n:
        raise TypeError(
            f"{name} got padding of length {len(padding)} for an operand of rank {n} "
            f"(shape {tuple(shape)}): padding={tuple(padding)}"
        )
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(
        shape,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
        strict=True,
    ):
        padded = dilate_dim(d, bd) + lo + hi
        if padded < 0:
            raise ValueError(
                f"{name}: padding {tuple(padding)} makes a dimension of the operand of shape "
                f"{tuple(shape)} negative"
            )
        span = dilate_dim(w, wd)
        out.append(0 if padded < span else (padded - span) // s + 1)
    return tuple(out)


def _ints(values, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from None


def _window_params(
    shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Normalize the public arguments of a window reduction into hashable params."""
    n = len(shape)
    window_dimensions = _ints(window_dimensions, "window_dimensions")
    window_strides = (1,) * n if window_strides is None else _ints(window_strides, "window_strides")
    base_dilation = (1,) * n if base_dilation is None else _ints(base_dilation, "base_dilation")
    window_dilation = (
        (1,) * n if window_dilation is None else _ints(window_dilation, "window_dilation")
    )
    if isinstance(padding, str):
        # As JAX's: SAME pads for the window as dilated by window_dilation.
        dilated = tuple(map(dilate_dim, window_dimensions, window_dilation))
        padding = tuple(padtype_to_pads(shape, dilated, window_strides, padding))
    else:
        try:
            padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise TypeError(
                f"padding must be 'SAME', 'VALID' or a sequence of (low, high) pairs, got "
                f"{padding!r}"
            ) from None
    return {
        "window_dimensions": window_dimensions,
        "window_strides": window_strides,
        "padding": padding,
        "base_dilation": base_dilation,
        "window_dilation": window_dilation,
    }


def _window_op(
    result_types,
    operands,
    init_values,
    *,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return hlo.ReduceWindowOp(
        result_types,
        operands,
        init_values,
        list(window_dimensions),
        window_strides=list(window_strides),
        base_dilations=list(base_dilation),
        window_dilations=list(window_dilation),
        padding=ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(len(padding), 2)),
    )


def lower_monoid_window(ctx_aval_out, x, dtype, combine, identity, **params) -> ir.Value:
    """Emit a one-operand ``stablehlo.reduce_window`` reducing with ``combine(x, y, dtype)``.

    ``identity`` is the monoid's identity (and the padding value). Also used by
    the cumulative reductions, which are full-length windows.
    """
    op = _window_op([ir_type(ctx_aval_out)], [x], [constant(identity, dtype)], **params)
    block = reducer_region(op, dtype)
    with ir.InsertionPoint(block):
        hlo.return_([combine(*block.arguments, dtype)])
    return op.result


# --- the monoid window reductions -------------------------------------------------------------


def _monoid_abstract_eval(name, accepted, operand, **params):
    check_dtype(name, operand, accepted)
    shape = window_shape("reduce_window", operand.shape, **params)  # JAX's shared texts
    return ShapedArray(shape, operand.dtype, operand.weak_type)


def _monoid_lowering(combine, identity, ctx, x, **params):
    dtype = ctx.avals_in[0].dtype
    return lower_monoid_window(ctx.avals_out[0], x, dtype, combine, identity(dtype), **params)


def _plain(op):
    return lambda x, y, dtype: op(x, y)


def _window_primitive(name, accepted, combine, identity) -> Primitive:
    prim = Primitive(name)
    prim.def_abstract_eval(partial(_monoid_abstract_eval, name, accepted))
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, partial(_monoid_lowering, combine, identity))
    return prim


reduce_window_sum_p = _window_primitive("reduce_window_sum", [NUMBER], _plain(hlo.add), lambda d: 0)
reduce_window_max_p = _window_primitive(
    "reduce_window_max", ANY, _lexicographic(hlo.maximum, "GT"), lambda d: _extreme(d, False)
)
reduce_window_min_p = _window_primitive(
    "reduce_window_min", ANY, _lexicographic(hlo.minimum, "LT"), lambda d: _extreme(d, True)
)


def conv_vjp_lhs_padding(
    in_shape, window_dimensions, window_strides, out_shape, padding, lhs_dilation, rhs_dilation
) -> list[tuple[int, int]]:
    """Return the padding of the cotangent in the transpose of a windowed op w.r.t. its input.

    The windowed op (a convolution, or a window sum: a convolution with a ones
    kernel) reads the input dilated by ``lhs_dilation`` and padded; its
    transpose slides the reversed window over the cotangent dilated by
    ``window_strides``, padded so that every input position sees the outputs it
    contributed to.
    """
    pads = []
    for d, w, s, (lo, _), ld, rd, o in zip(
        in_shape,
        window_dimensions,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        out_shape,
        strict=True,
    ):
        span = dilate_dim(w, rd)
        before = span - lo - 1
        after = dilate_dim(d, ld) + span - 1 - dilate_dim(o, s) - before
        pads.append((before, after))
    return pads


def _reduce_window_sum_transpose(ct, operand, **params):
    assert is_undefined_primal(operand)
    in_shape = operand.aval.shape
    wd, ws = params["window_dimensions"], params["window_strides"]
    bd, wdil = params["base_dilation"], params["window_dilation"]
    ct_aval = aval_of(ct)
    pads = conv_vjp_lhs_padding(in_shape, wd, ws, ct_aval.shape, params["padding"], bd, wdil)
    from .structural import pad

    padded = pad(
        ct,
        np.zeros((), ct_aval.dtype),
        [(lo, hi, s - 1) for (lo, hi), s in zip(pads, ws, strict=True)],
    )
    result = reduce_window_sum_p.bind(
        padded,
        window_dimensions=wd,
        window_strides=bd,
        padding=((0, 0),) * len(in_shape),
        base_dilation=(1,) * len(in_shape),
        window_dilation=wdil,
    )
    return [result]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(prim, select, primals, tangents, **params):
    (x,), (t,) = primals, tangents
    out = prim.bind(x, **params)
    if type(t) is Zero:
        return out, Zero(t.aval)
    return out, select_and_gather_add_p.bind(t, x, select_prim=select, **params)


jvp_rules[reduce_window_max_p] = partial(_chooser_jvp, reduce_window_max_p, "ge")
jvp_rules[reduce_window_min_p] = partial(_chooser_jvp, reduce_window_min_p, "le")


def _window_batch_rule(prim, args, dims, **params):
    """Batch a window op by giving the batch dimension a size-1 window (at axis 0)."""
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True)]
    new = {
        "window_dimensions": (1,) + params["window_dimensions"],
        "window_strides": (1,) + params["window_strides"],
        "padding": ((0, 0),) + params["padding"],
        "base_dilation": (1,) + params["base_dilation"],
        "window_dilation": (1,) + params["window_dilation"],
    }
    rest = {k: v for k, v in params.items() if k not in new}
    return prim.bind(*args, **new, **rest), 0


for _p in (reduce_window_sum_p, reduce_window_max_p, reduce_window_min_p):
    batching_rules[_p] = partial(_window_batch_rule, _p)


# --- select_and_gather_add / select_and_scatter_add ----------------------------------------


def _select_and_gather_add_abstract_eval(tangents, operand, *, select_prim, **params):
    if tangents.dtype != operand.dtype or tangents.shape != operand.shape:
        raise TypeError(
            "select_and_gather_add requires tangents and operand of one shape and dtype, got "
            f"{tangents.str_short()} and {operand.str_short()}"
        )
    shape = window_shape("select_and_gather_add", operand.shape, **params)
    return ShapedArray(shape, tangents.dtype)


def _select_and_gather_add_lowering(ctx, tangents, operand, *, select_prim, **params):
    """A variadic reduce_window over (operand, tangent) pairs keeping the chosen one's tangent."""
    dtype = ctx.avals_in[1].dtype
    out = ctx.avals_out[0]
    init = constant(_extreme(dtype, largest=select_prim == "le"), dtype)
    op = _window_op(
        [ir_type(out), ir_type(out)], [operand, tangents], [init, constant(0, dtype)], **params
    )
    block = reducer_region(op, dtype, count=2)
    direction = "GE" if select_prim == "ge" else "LE"
    with ir.InsertionPoint(block):
        x1, t1, x2, t2 = block.arguments
        pick = compare(x1, x2, direction, dtype)
        hlo.return_([hlo.select(pick, x1, x2), hlo.select(pick, t1, t2)])
    return op.results[1]


select_and_gather_add_p = Primitive("select_and_gather_add")
select_and_gather_add_p.def_abstract_eval(_select_and_gather_add_abstract_eval)
select_and_gather_add_p.def_impl(partial(apply_primitive, select_and_gather_add_p))
register_lowering(select_and_gather_add_p, _select_and_gather_add_lowering)


def _select_and_gather_add_jvp(primals, tangents, *, select_prim, **params):
    (t, x), (dt, _) = primals, tangents
    out = select_and_gather_add_p.bind(t, x, select_prim=select_prim, **params)
    if type(dt) is Zero:
        return out, Zero(dt.aval)
    return out, select_and_gather_add_p.bind(dt, x, select_prim=select_prim, **params)


def _select_and_gather_add_transpose(ct, tangents, operand, *, select_prim, **params):
    assert is_undefined_primal(tangents) and not is_undefined_primal(operand)
    if any(d != 1 for d in params["window_dilation"]):
        raise NotImplementedError(
            "VJP not implemented for select_and_gather (MaxPool) with window dilation, got "
            f"window_dilation={params['window_dilation']}."
        )
    from .structural import pad, slice

    base = params["base_dilation"]
    dilated = any(d != 1 for d in base)
    if dilated:  # pad the holes with the selection's identity: they are never chosen
        dtype = aval_of(operand).dtype
        fill = np.asarray(_extreme(dtype, largest=select_prim == "le"), dtype)
        operand = pad(operand, fill, [(0, 0, d - 1) for d in base])
    result = select_and_scatter_add_p.bind(
        ct,
        operand,
        select_prim=select_prim,
        window_dimensions=params["window_dimensions"],
        window_strides=params["window_strides"],
        padding=params["padding"],
    )
    if dilated:
        shape = aval_of(result).shape
        result = slice(result, (0,) * len(shape), shape, base)
    return [result, None]


jvp_rules[select_and_gather_add_p] = _select_and_gather_add_jvp
transpose_rules[select_and_gather_add_p] = _select_and_gather_add_transpose
batching_rules[select_and_gather_add_p] = partial(_window_batch_rule, select_and_gather_add_p)


def _select_and_scatter_add_abstract_eval(source, operand, *, select_prim, **params):
    n = operand.ndim
    expected = window_shape(
        "select_and_scatter_add",
        operand.shape,
        base_dilation=(1,) * n,
        window_dilation=(1,) * n,
        **params,
    )
    if source.shape != expected or source.dtype != operand.dtype:
        raise TypeError(
            f"select_and_scatter_add requires a source of type "
            f"{dtypes.dtype_name(operand.dtype)}{list(expected)}, got {source.str_short()}"
        )
    return ShapedArray(operand.shape, source.dtype)


def _select_and_scatter_add_lowering(
    ctx, source, operand, *, select_prim, window_dimensions, window_strides, padding
):
    dtype = ctx.avals_in[1].dtype
    scalar = ir_type(ShapedArray((), dtype))
    op = hlo.SelectAndScatterOp(
        ir_type(ctx.avals_out[0]),
        operand,
        source,
        constant(0, dtype),
        window_dimensions=list(window_dimensions),
        window_strides=list(window_strides),
        padding=ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(len(padding), 2)),
    )
    select = op.select.blocks.append(scalar, scalar)
    with ir.InsertionPoint(select):
        direction = "GE" if select_prim == "ge" else "LE"
        hlo.return_([compare(*select.arguments, direction, dtype)])
    scatter = op.scatter.blocks.append(scalar, scalar)
    with ir.InsertionPoint(scatter):
        hlo.return_([hlo.add(*scatter.arguments)])
    return op.result


select_and_scatter_add_p = Primitive("select_and_scatter_add")
select_and_scatter_add_p.def_abstract_eval(_select_and_scatter_add_abstract_eval)
select_and_scatter_add_p.def_impl(partial(apply_primitive, select_and_scatter_add_p))
register_lowering(select_and_scatter_add_p, _select_and_scatter_add_lowering)


def _select_and_scatter_add_transpose(ct, source, operand, *, select_prim, **params):
    assert is_undefined_primal(source) and not is_undefined_primal(operand)
    n = operand.ndim
    gathered = select_and_gather_add_p.bind(
        ct,
        operand,
        select_prim=select_prim,
        base_dilation=(1,) * n,
        window_dilation=(1,) * n,
        **params,
    )
    return [gathered, None]


def _select_and_scatter_add_jvp(primals, tangents, *, select_prim, **params):
    (s, x), (ds, _) = primals, tangents
    out = select_and_scatter_add_p.bind(s, x, select_prim=select_prim, **params)
    if type(ds) is Zero:
        return out, Zero(ds.aval.update(shape=x.shape))
    return out, select_and_scatter_add_p.bind(ds, x, select_prim=select_prim, **params)


def _select_and_scatter_add_batch_rule(args, dims, **params):
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    args = [bdim_at_front(a, d, size) for a, d in zip(args, dims, strict=True)]
    out = select_and_scatter_add_p.bind(
        *args,
        select_prim=params["select_prim"],
        window_dimensions=(1,) + params["window_dimensions"],
        window_strides=(1,) + params["window_strides"],
        padding=((0, 0),) + params["padding"],
    )
    return out, 0


jvp_rules[select_and_scatter_add_p] = _select_and_scatter_add_jvp
transpose_rules[select_and_scatter_add_p] = _select_and_scatter_add_transpose
batching_rules[select_and_scatter_add_p] = _select_and_scatter_add_batch_rule


# --- the generic reduce_window ----------------------------------------------------------------


def _generic_abstract_eval(*avals, jaxpr, **params):
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    for i, (o, v) in enumerate(zip(operands, inits, strict=True)):
        if v.shape:
            raise TypeError(
                f"reduce_window init_values must be scalars, got init value {i} of shape {v.shape}"
            )
        if o.dtype != v.dtype:
            raise TypeError(
                "reduce_window operand and init value dtypes must match, got operand "
                f"{o.str_short()} and init value {v.str_short()} at position {i}"
            )
    if len({o.shape for o in operands}) != 1:
        raise TypeError(
            "reduce_window operands must have the same shape, got "
            f"{', '.join(str(o.shape) for o in operands)}"
        )
    shape = window_shape("reduce_window", operands[0].shape, **params)
    return [ShapedArray(shape, o.dtype) for o in operands]


def _generic_lowering(ctx, *args, jaxpr, **params):
    n = len(args) // 2
    operands, inits = args[:n], args[n:]
    op = _window_op([ir_type(a) for a in ctx.avals_out], operands, inits, **params)
    block = reducer_region(op, [a.dtype for a in ctx.avals_in[:n]])
    with ir.InsertionPoint(block):
        hlo.return_(lower_jaxpr_inline(ctx, jaxpr, list(block.arguments)))
    return op.results


reduce_window_p = Primitive("reduce_window")
reduce_window_p.multiple_results = True
reduce_window_p.def_abstract_eval(_generic_abstract_eval)
reduce_window_p.def_impl(partial(apply_primitive, reduce_window_p))
register_lowering(reduce_window_p, _generic_lowering)


def _generic_batch_rule(args, dims, *, jaxpr, **params):
    n = len(args) // 2
    size = next(a.shape[d] for a, d in zip(args, dims, strict=True) if d is not None)
    operands = [bdim_at_front(a, d, size) for a, d in zip(args[:n], dims[:n], strict=True)]
    inits = list(args[n:])
    if any(d is not None for d in dims[n:]):
        raise NotImplementedError("vmap of reduce_window over batched init_values is not supported")
    new = {
        "window_dimensions": (1,) + params["window_dimensions"],
        "window_strides": (1,) + params["window_strides"],
        "padding": ((0, 0),) + params["padding"],
        "base_dilation": (1,) + params["base_dilation"],
        "window_dilation": (1,) + params["window_dilation"],
    }
    outs = reduce_window_p.bind(*operands, *inits, jaxpr=jaxpr, **new)
    return outs, [0] * len(outs)


batching_rules[reduce_window_p] = _generic_batch_rule


def _generic_jvp(primals, tangents, **params):
    raise NotImplementedError(
        "differentiation of reduce_window with a generic computation is not supported; "
        "use lax.add, lax.max or lax.min as the computation (reduce_window_sum/max/min)"
    )


jvp_rules[reduce_window_p] = _generic_jvp


@functools.lru_cache(maxsize=256)
def _traced_computation(computation: Callable, tree, avals: tuple[ShapedArray, ...]):
    """Trace ``computation(x, y)`` on scalars of ``avals`` (x then y flattened) to a jaxpr.

    Cached per (function, tree, types) so that repeated eager calls share one
    jaxpr object, and with it one compiled program.
    """
    n = len(avals)

    def flat(*args):
        x = tree_util.tree_unflatten(tree, args[:n])
        y = tree_util.tree_unflatten(tree, args[n:])
        out = computation(x, y)
        leaves, out_tree = tree_util.tree_flatten(out)
        if out_tree != tree:
            raise TypeError(
                f"the reduction computation must return the structure of its inputs "
                f"({tree}), got {out_tree}"
            )
        return leaves

    specs = [np.zeros((), a.dtype) for a in avals] * 2
    closed = make_jaxpr(flat)(*specs)
    for out_aval, aval in zip(closed.out_avals, avals, strict=True):
        if out_aval.shape != () or out_aval.dtype != aval.dtype:
            raise TypeError(
                "the reduction computation must return scalars of its inputs' dtypes, got "
                f"{out_aval.str_short()} for {aval.str_short()}"
            )
    return closed


def _monoid_reducer(computation, operand_dtype, init_values):
    """Return the monoid primitive that ``computation`` with these ``init_values`` is, or None.

    That is ``lax.add`` with a concrete zero (numbers), or ``lax.max``/``lax.min``
    with the dtype's least/greatest value as the init.
    """
    from . import elementwise as ew

    if len(init_values) != 1 or isinstance(init_values[0], Tracer):
        return None
    try:
        value = np.asarray(init_values[0])
    except Exception:  # noqa: BLE001 - an Array or anything else: not a constant we know
        return None
    if value.shape or value.dtype == object:
        return None
    k = kind(operand_dtype)
    if computation is ew.add and k in "iufc" and value == 0:
        return reduce_window_sum_p
    if computation is ew.max and value == _extreme(operand_dtype, largest=False):
        return reduce_window_max_p
    if computation is ew.min and value == _extreme(operand_dtype, largest=True):
        return reduce_window_min_p
    return None


def reduce_window(
    operand,
    init_value,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Sequence[int] | None = None,
    padding: str | Sequence[tuple[int, int]] = "VALID",
    base_dilation: Sequence[int] | None = None,
    window_dilation: Sequence[int] | None = None,
):
    """Reduce each window of ``operand`` with ``computation`` (jax.lax.reduce_window).

    ``operand`` and ``init_value`` may be matching pytrees (a variadic
    reduction); ``computation(x, y)`` combines two such trees of scalars. With
    ``lax.add`` and a zero init (or ``lax.max``/``lax.min`` and the dtype's
    extreme) this is ``reduce_window_sum/max/min``, which are differentiable;
    any other computation is traced to a jaxpr and lowered as the reduction
    region. ``padding`` is ``"SAME"``, ``"VALID"`` or ``(low, high)`` pairs.
    """
    flat_operands, tree = tree_util.tree_flatten(operand)
    flat_inits, init_tree = tree_util.tree_flatten(init_value)
    if tree != init_tree:
        raise ValueError(
            "reduce_window: operands and init_values must have the same tree structure, got "
            f"{tree} and {init_tree}"
        )
    if not flat_operands:
        raise ValueError("reduce_window requires at least one operand")
    shape = aval_of(flat_operands[0]).shape
    params = _window_params(
        shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    monoid = _monoid_reducer(computation, aval_of(flat_operands[0]).dtype, flat_inits)
    if monoid is not None:
        out = monoid.bind(flat_operands[0], **params)
        return tree_util.tree_unflatten(tree, [out])
    inits = []
    for o, v in zip(flat_operands, flat_inits, strict=True):
        dtype = aval_of(o).dtype
        if type(v) in (int, float, complex, bool):
            v = np.asarray(v).astype(dtype)
        inits.append(v)
    avals = tuple(ShapedArray((), aval_of(o).dtype) for o in flat_operands)
    jaxpr = _traced_computation(computation, tree, avals)
    outs = reduce_window_p.bind(*flat_operands, *inits, jaxpr=jaxpr, **params)
    return tree_util.tree_unflatten(tree, outs)
