"""Loops: ``while_loop`` and ``fori_loop`` on ``while_p``; ``scan`` and ``map`` on ``scan_p``.

``while_p.bind(*cond_consts, *body_consts, *init, cond_jaxpr=, body_jaxpr=,
cond_nconsts=, body_nconsts=)`` iterates ``carry = body(*body_consts, *carry)``
while ``cond(*cond_consts, *carry)`` holds.

``scan_p.bind(*consts, *init, *xs, jaxpr=, length=, reverse=, unroll=,
num_consts=, num_carry=, linear=, _split_transpose=)`` runs ``jaxpr`` (taking
``(*consts, *carry, *x_slices)`` and returning ``(*carry, *y_slices)``) over the
leading axis of the ``xs`` and stacks the ``ys``. Both lower to one
``stablehlo.while``, so an eager call compiles the whole loop once per signature.

The transformation rules live in ``while_rules`` (while_p), ``scan_autodiff``
(scan_p's JVP, partial evaluation and transpose) and ``scan_batching`` (its
batching and DCE); this module declares the primitives, their abstract evaluation (which is
also what ``check_jaxpr`` checks of body and carry types) and their lowering.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from modjax.lowering import (
    hlo,
    ir,
    ir_type,
    ir_types,
    lower_jaxpr_inline,
    region_tokens,
    register_lowering,
    set_tokens,
    token_type,
    tokens_in,
)
from modjax.runtime.refs import apply_with_refs
from modjax.tracecore.abstract import ShapedArray, physical_aval
from modjax.tracecore.core import Primitive, Tracer, concrete_or_error
from modjax.tracecore.effects import ordered_effects
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.parse import register_param_defaults
from modjax.tracecore.pretty import format_param_value, register_param_printer
from modjax.tracecore.state import check_no_ref_outputs
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info

from .._common import compare, constant, kind
from .._rules import strong_const
from . import python_loops
from .common import abstractify, check_carry_type, promote_weak_carry, trace_closed

__all__ = ["while_loop", "fori_loop", "scan", "map", "while_p", "scan_p"]

_I32 = np.dtype(np.int32)


def _types(avals) -> str:
    return ", ".join(a.str_short() for a in avals)


def _all_match(avals, expected) -> bool:
    """Tell whether two lists of avals agree in length, shapes and dtypes (weak types aside).

    The equations' own consistency check: varying manual axes are checked where the
    user's functions are traced (``check_carry_type``); bodies that rules rewrite (a
    shard_map's derivative, say) are traced without them.
    """
    return len(avals) == len(expected) and all(
        _same_type(a, b) for a, b in zip(avals, expected, strict=True)
    )


def _same_type(a, b) -> bool:
    # Tokens have no shape or dtype; their types are simply equal.
    if hasattr(a, "shape") and hasattr(b, "shape"):
        return a.shape == b.shape and a.dtype == b.dtype
    return a == b


def _check_inputs(prim: str, what: str, jaxpr: ClosedJaxpr, avals) -> None:
    ins = jaxpr.in_avals
    if not _all_match(ins, avals):
        raise TypeError(f"{prim}: {what} takes ({_types(ins)}) but is given ({_types(avals)})")


# --- while_p ---------------------------------------------------------------------------------

while_p = Primitive("while")
while_p.multiple_results = True


def _while_abstract_eval(*args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts = args[:cond_nconsts]
    body_consts = args[cond_nconsts : cond_nconsts + body_nconsts]
    carry = args[cond_nconsts + body_nconsts :]
    _check_inputs("while", "cond_jaxpr", cond_jaxpr, [*cond_consts, *carry])
    _check_inputs("while", "body_jaxpr", body_jaxpr, [*body_consts, *carry])
    pred = cond_jaxpr.out_avals
    if len(pred) != 1 or pred[0].shape != () or pred[0].dtype != np.bool_:  # weak bools too
        raise TypeError(f"while: cond_jaxpr must return a boolean scalar, got ({_types(pred)})")
    outs = body_jaxpr.out_avals
    if not _all_match(outs, carry):
        raise TypeError(
            f"while: body_jaxpr returns ({_types(outs)}) for a carry of ({_types(carry)})"
        )
    return list(outs)


def _while_lowering(ctx, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    n_consts = cond_nconsts + body_nconsts
    if ordered_effects(cond_jaxpr.effects):
        raise NotImplementedError(
            "while_loop: ordered effects (ordered debug callbacks, io_callback(ordered=True)) "
            "in cond_fun are not supported; move them into body_fun"
        )
    # Each ordered effect's token is carried by the loop, so iterations stay in order.
    effects = ordered_effects(ctx.effects)
    n = len(effects)
    types = [token_type()] * n + ir_types(ctx.avals_in)
    op = hlo.WhileOp(types, tokens_in(ctx, effects) + list(args))
    cond_block = op.cond.blocks.append(*types)
    with ir.InsertionPoint(cond_block), region_tokens(ctx):
        values = list(cond_block.arguments)[n:]
        (pred,) = lower_jaxpr_inline(ctx, cond_jaxpr, values[:cond_nconsts] + values[n_consts:])
        hlo.return_([pred])
    body_block = op.body.blocks.append(*types)
    with ir.InsertionPoint(body_block), region_tokens(ctx):
        values = list(body_block.arguments)
        set_tokens(ctx, effects, values[:n])
        values = values[n:]
        outs = lower_jaxpr_inline(ctx, body_jaxpr, values[cond_nconsts:])
        hlo.return_(tokens_in(ctx, effects) + values[:n_consts] + list(outs))
    results = list(op.results)
    set_tokens(ctx, effects, results[:n])
    return results[n + n_consts :]


while_p.def_impl(
    functools.partial(python_loops.while_impl, functools.partial(apply_with_refs, while_p))
)
while_p.def_abstract_eval(_while_abstract_eval)
register_lowering(while_p, _while_lowering)


def while_loop(cond_fun: Callable, body_fun: Callable, init_val):
    """Run ``val = body_fun(val)`` while ``cond_fun(val)`` is true (jax.lax.while_loop).

    ``init_val`` is any pytree; ``body_fun`` must return the same pytree of the same
    shapes and dtypes (a weakly typed initial leaf takes the dtype the body gives it).
    ``cond_fun`` returns a boolean scalar. Differentiable in forward mode only.
    """
    return _while_loop(cond_fun, body_fun, init_val, None)


def _while_loop(cond_fun: Callable, body_fun: Callable, init_val, returns_ref):
    """``while_loop``; ``returns_ref(traced_body)`` replaces its check for returned references."""
    if not callable(cond_fun) or not callable(body_fun):
        raise TypeError("lax.while_loop: cond_fun and body_fun arguments should be callable.")
    if python_loops.enabled():
        out = python_loops.eager_while(cond_fun, body_fun, init_val)
        if out is not python_loops.NOT_EAGER:
            return out
    init_flat, in_tree = tree_flatten(init_val)
    avals = [abstractify(x) for x in init_flat]
    cond_in_tree = tree_flatten((init_val,))[1]
    body = trace_closed(body_fun, cond_in_tree, avals)
    if returns_ref is None:
        info = debug_info(body_fun, (init_val,))
        check_no_ref_outputs(body.jaxpr.jaxpr, info, "while_body", body.out_tree, len(body.consts))
    else:
        returns_ref(body)
    if body.out_tree == in_tree and promote_weak_carry(init_flat, avals, body.out_avals):
        avals = [abstractify(x) for x in init_flat]
        body = trace_closed(body_fun, cond_in_tree, avals)
    check_carry_type(
        "while_loop body function",
        in_tree,
        avals,
        body.out_tree,
        body.out_avals,
        _carry_name(body_fun),
    )
    cond = trace_closed(cond_fun, cond_in_tree, avals)
    pred = cond.out_avals
    if cond.out_tree.num_leaves != 1 or pred[0].shape != () or kind(pred[0].dtype) != "b":
        raise TypeError(
            "cond_fun must return a boolean scalar, but got output type(s) "
            f"[{', '.join(repr(a) for a in pred)}]."
        )
    outs = while_p.bind(
        *cond.consts,
        *body.consts,
        *init_flat,
        cond_jaxpr=cond.jaxpr,
        body_jaxpr=body.jaxpr,
        cond_nconsts=len(cond.consts),
        body_nconsts=len(body.consts),
    )
    return tree_unflatten(in_tree, outs)


def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll=None):
    """Run ``val = body_fun(i, val)`` for ``i`` in ``range(lower, upper)`` (jax.lax.fori_loop).

    With concrete bounds the loop is a ``scan`` of ``upper - lower`` steps, so it
    is reverse-mode differentiable; with traced bounds it is a ``while_loop``
    (forward mode only). ``unroll`` (an int or bool) applies to the scan form and
    needs concrete bounds. The bounds must have one dtype (a Python int beside a
    signed integer takes its dtype). As in JAX, the index of the scan form is a
    Python int (weakly typed, whatever the bounds' dtype; float bounds are
    truncated); the while form's index has the bounds' dtype, weak when ``lower`` is.
    """
    if not callable(body_fun):
        raise TypeError("lax.fori_loop: body_fun argument should be callable.")
    dtype = _index_dtype(lower, upper)
    lower_c = _concrete_int(lower)
    upper_c = _concrete_int(upper)
    if lower_c is not None and upper_c is not None:
        from .. import elementwise as ew

        start = lower_c

        def step(loop_carry, _):  # JAX's errors name the carry after this parameter
            i, val = loop_carry
            return (ew.add(i, strong_const(i, 1)), body_fun(i, val)), None

        length = max(upper_c - lower_c, 0)
        check = _fori_ref_check(body_fun, start, init_val, 0)
        unroll = 1 if unroll is None else unroll
        (_, result), _ = _scan(step, (start, init_val), None, length, False, unroll, False, check)
        return result
    if unroll is not None and unroll is not False and unroll != 1:
        raise ValueError(
            "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
        )
    from .. import elementwise as ew

    lower_t = ew.convert_element_type(lower, dtype) if abstractify(lower).dtype != dtype else lower
    upper_t = ew.convert_element_type(upper, dtype) if abstractify(upper).dtype != dtype else upper

    def cond(loop_carry):
        return ew.lt(loop_carry[0], loop_carry[1])

    def body(loop_carry):
        i, hi, val = loop_carry
        # One of the index's own type: a weakly typed index stays weak, as JAX's.
        return ew.add(i, strong_const(i, 1)), hi, body_fun(i, val)

    check = _fori_ref_check(body_fun, lower_t, init_val, 1)
    _, _, result = _while_loop(cond, body, (lower_t, upper_t, init_val), check)
    return result


def _fori_ref_check(body_fun: Callable, lower, init_val, n_extra: int):
    """Check the traced loop body of a fori_loop for returned references (naming ``body_fun``).

    The loop's carry is the index, ``n_extra`` more values (the upper bound) and
    ``init_val``; the arguments are named as ``body_fun``'s parameters.
    """

    def check(traced) -> None:
        info = debug_info(body_fun, (lower, init_val))
        names = info.arg_names
        names = (*names[:1], *[""] * n_extra, *names[1:]) if names else None
        check_no_ref_outputs(
            traced.jaxpr.jaxpr, info, "fori_loop", traced.out_tree, len(traced.consts), names
        )

    return check


def _index_dtype(lower, upper) -> np.dtype:
    """The bounds' common dtype, by JAX's rule: equal, or a weak signed int beside a strong one."""
    a, b = abstractify(lower), abstractify(upper)
    if a.dtype == b.dtype:
        return a.dtype
    if kind(a.dtype) == "i" and kind(b.dtype) == "i" and a.weak_type != b.weak_type:
        return b.dtype if a.weak_type else a.dtype
    raise TypeError(
        "lower and upper arguments to fori_loop must have equal types, "
        f"got {a.dtype.name} and {b.dtype.name}"
    )


def _concrete_int(x):
    """``int(x)`` of a concrete bound; None for a traced one, or one ``int`` refuses (an array)."""
    if isinstance(x, Tracer):
        x = x.to_concrete_value()
        if x is None:
            return None
    try:
        return int(x)
    except TypeError:
        return None  # as JAX: the while form, whose condition then reports the shape


# --- scan_p ----------------------------------------------------------------------------------

scan_p = Primitive("scan")
scan_p.multiple_results = True


def _scan_abstract_eval(
    *args, jaxpr, length, reverse, unroll, num_consts, num_carry, linear, _split_transpose
):
    consts = args[:num_consts]
    carry = args[num_consts : num_consts + num_carry]
    xs = args[num_consts + num_carry :]
    for x in xs:
        if not x.shape or x.shape[0] != length:
            raise TypeError(
                f"scan: a scanned operand of type {x.str_short()} does not have a leading "
                f"axis of the scan's length {length}"
            )
    if len(linear) != len(args):
        raise TypeError(f"scan: linear has {len(linear)} entries for {len(args)} operands")
    x_avals = [x.update(shape=x.shape[1:]) for x in xs]
    _check_inputs("scan", "jaxpr", jaxpr, [*consts, *carry, *x_avals])
    outs = jaxpr.out_avals
    carry_out = outs[:num_carry]
    if not _all_match(carry_out, carry):
        raise TypeError(
            f"scan: the body returns a carry of ({_types(carry_out)}) for a carry of "
            f"({_types(carry)})"
        )
    if any(type(y) is AbstractToken for y in outs[num_carry:]):
        raise TypeError("scan: a token cannot be stacked as an output of the body; carry it")
    ys = [y.update(shape=(length, *y.shape)) for y in outs[num_carry:]]
    return [*carry_out, *ys]


def _i32(value) -> ir.Value:
    return constant(value, _I32)


def _scan_step(ctx, jaxpr, t, reverse, length, consts, carry, xs, ys, x_avals, y_avals):
    """Emit one iteration at step ``t`` (an i32 value); return the new carry and ys."""
    pos = hlo.subtract(_i32(length - 1), t) if reverse else t
    zero = _i32(0)
    x_slices = []
    for x, aval in zip(xs, x_avals, strict=True):
        shape = physical_aval(aval).shape  # a key's data axes come along
        starts = [pos] + [zero] * len(shape)
        piece = hlo.dynamic_slice(x, starts, [1, *shape])
        x_slices.append(hlo.reshape(ir_type(aval), piece))
    outs = lower_jaxpr_inline(ctx, jaxpr, [*consts, *carry, *x_slices])
    new_carry = outs[: len(carry)]
    new_ys = []
    for buf, y, aval in zip(ys, outs[len(carry) :], y_avals, strict=True):
        update = hlo.reshape(ir_type(aval.update(shape=(1, *aval.shape))), y)
        starts = [pos] + [zero] * len(physical_aval(aval).shape)
        new_ys.append(hlo.dynamic_update_slice(buf, update, starts))
    return list(new_carry), new_ys


def _scan_lowering(
    ctx, *args, jaxpr, length, reverse, unroll, num_consts, num_carry, linear, _split_transpose
):
    consts = list(args[:num_consts])
    carry = list(args[num_consts : num_consts + num_carry])
    xs = list(args[num_consts + num_carry :])
    x_avals = [a.update(shape=a.shape[1:]) for a in ctx.avals_in[num_consts + num_carry :]]
    y_avals = [a.update(shape=a.shape[1:]) for a in ctx.avals_out[num_carry:]]
    ys = [_zeros(a) for a in ctx.avals_out[num_carry:]]
    block_len = max(1, min(int(unroll) or length, length)) if length else 1
    n_blocks, remainder = divmod(length, block_len)
    step = functools.partial(_scan_step, ctx, jaxpr, reverse=reverse, length=length,
                             x_avals=x_avals, y_avals=y_avals)  # fmt: skip

    if n_blocks:
        # Each ordered effect's token is carried by the loop, so steps stay in order.
        effects = ordered_effects(ctx.effects)
        n = len(effects)
        n_c, n_k, n_x = len(consts), len(carry), len(xs)
        state = [*tokens_in(ctx, effects), _i32(0), *consts, *carry, *xs, *ys]
        types = [v.type for v in state]
        op = hlo.WhileOp(types, state)
        cond_block = op.cond.blocks.append(*types)
        with ir.InsertionPoint(cond_block):
            i = cond_block.arguments[n]
            hlo.return_([compare(i, _i32(n_blocks), "LT", _I32)])
        body_block = op.body.blocks.append(*types)
        with ir.InsertionPoint(body_block), region_tokens(ctx):
            values = list(body_block.arguments)
            set_tokens(ctx, effects, values[:n])
            values = values[n:]
            i = values[0]
            b_consts = values[1 : 1 + n_c]
            b_carry = values[1 + n_c : 1 + n_c + n_k]
            b_xs = values[1 + n_c + n_k : 1 + n_c + n_k + n_x]
            b_ys = values[1 + n_c + n_k + n_x :]
            base = hlo.multiply(i, _i32(block_len)) if block_len != 1 else i
            for k in range(block_len):
                t = hlo.add(base, _i32(k)) if k else base
                b_carry, b_ys = step(t=t, consts=b_consts, carry=b_carry, xs=b_xs, ys=b_ys)
            new_tokens = tokens_in(ctx, effects)
            hlo.return_([*new_tokens, hlo.add(i, _i32(1)), *b_consts, *b_carry, *b_xs, *b_ys])
        results = list(op.results)
        set_tokens(ctx, effects, results[:n])
        results = results[n:]
        carry = results[1 + n_c : 1 + n_c + n_k]
        ys = results[1 + n_c + n_k + n_x :]
    for k in range(remainder):
        carry, ys = step(t=_i32(n_blocks * block_len + k), consts=consts, carry=carry, xs=xs, ys=ys)
    return [*carry, *ys]


def _zeros(aval: ShapedArray) -> ir.Value:
    from .._common import full

    return full(0, physical_aval(aval))


scan_p.def_impl(
    functools.partial(python_loops.scan_impl, functools.partial(apply_with_refs, scan_p))
)
scan_p.def_abstract_eval(_scan_abstract_eval)
register_lowering(scan_p, _scan_lowering)
# JAX 0.10's scan has neither param: they print only when set (the parser restores them).
register_param_printer(
    scan_p, "linear", lambda flags: format_param_value(flags) if any(flags) else None
)
register_param_printer(scan_p, "_split_transpose", lambda flag: "True" if flag else None)
register_param_defaults(scan_p, lambda n: {"linear": (False,) * n, "_split_transpose": False})


def _leading_length(xs_flat, length):
    shapeless = [str(x) for x in xs_flat if not hasattr(x, "shape")]
    if shapeless:  # Python scalars: JAX names their values
        raise ValueError(
            f"scan got value with no leading axis to scan over: {', '.join(shapeless)}."
        )
    sizes = []
    for x in xs_flat:
        aval = abstractify(x)
        if not aval.shape:
            raise ValueError(
                f"scan got value with no leading axis to scan over: {aval.str_short()}"
            )
        sizes.append(aval.shape[0])
    if length is not None:
        try:
            length = int(concrete_or_error(length, "the `length` argument of scan"))
        except TypeError as e:
            raise TypeError(f"scan's length argument must be a concrete integer: {e}") from e
        if length < 0:
            raise ValueError(f"scan got a negative `length` argument of {length}.")
        if any(s != length for s in sizes):
            raise ValueError(
                f"scan got `length` argument of {length} which disagrees with leading axis "
                f"sizes {sizes}."
            )
        return length
    if not sizes:
        raise ValueError("scan got no values to scan over and `length` not provided.")
    if len(set(sizes)) > 1:
        raise ValueError(
            "scan got values with different leading axis sizes: "
            + ", ".join(str(s) for s in sizes)
            + "."
        )
    return sizes[0]


def _unroll_count(unroll, length: int) -> int:
    # 0 is kept: as in JAX, it unrolls the whole loop (see the lowering's block length).
    if isinstance(unroll, bool):
        return max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
        raise ValueError(f"`unroll` must be a `bool` or a non-negative `int`, got {unroll}.")
    return unroll


def scan(f: Callable, init, xs=None, length=None, reverse: bool = False, unroll=1,
         _split_transpose: bool = False):  # fmt: skip
    """Scan ``f`` over the leading axis of ``xs`` while carrying state (jax.lax.scan).

    ``f(carry, x) -> (carry, y)``; returns ``(final_carry, stacked_ys)``. ``init``,
    ``xs`` and the ``y``s are pytrees; ``xs=None`` needs ``length``. ``reverse``
    scans from the end (the ys keep their positions); ``unroll`` (an int, or
    True for all) inlines that many iterations per loop step. The carry output
    must match ``init`` in structure, shapes and dtypes (weak types aside).
    """
    return _scan(f, init, xs, length, reverse, unroll, _split_transpose, None)


def _scan(f, init, xs, length, reverse, unroll, _split_transpose, returns_ref):
    """``scan``; ``returns_ref(traced_body)`` replaces its check for returned references."""
    if not callable(f):
        raise TypeError("lax.scan: f argument should be callable.")
    xs_flat = tree_flatten(xs)[0]
    length = _leading_length(xs_flat, length)
    if python_loops.enabled():
        out = python_loops.eager_scan(f, init, xs, length, reverse)
        if out is not python_loops.NOT_EAGER:
            return out
    unroll = _unroll_count(unroll, length)
    init_flat, init_tree = tree_flatten(init)
    x_avals = [abstractify(x) for x in xs_flat]
    x_avals = [a.update(shape=a.shape[1:]) for a in x_avals]  # keeps varying manual axes
    in_tree = tree_flatten((init, xs))[1]

    def trace(carry_avals):
        traced = trace_closed(f, in_tree, [*carry_avals, *x_avals])
        if not _is_pair(traced.out_tree):
            outs = tree_unflatten(traced.out_tree, traced.out_avals)
            raise TypeError(f"scan body output must be a pair, got {outs}.")
        carry_tree, y_tree = traced.out_tree.children()
        return traced, carry_tree, y_tree

    carry_avals = [abstractify(x) for x in init_flat]
    traced, carry_tree, y_tree = trace(carry_avals)
    if returns_ref is None:
        info = debug_info(f, (init, xs))
        check_no_ref_outputs(traced.jaxpr.jaxpr, info, "scan", traced.out_tree, len(traced.consts))
    else:  # fori_loop's step: its errors name the user's body
        returns_ref(traced)
    n_carry = len(init_flat)
    carry_out = traced.out_avals[:n_carry]
    if carry_tree == init_tree and promote_weak_carry(init_flat, carry_avals, carry_out):
        carry_avals = [abstractify(x) for x in init_flat]
        traced, carry_tree, y_tree = trace(carry_avals)
        carry_out = traced.out_avals[:n_carry]
    check_carry_type(
        "scan body function", init_tree, carry_avals, carry_tree, carry_out, _carry_name(f)
    )
    operands = [*traced.consts, *init_flat, *xs_flat]
    outs = scan_p.bind(
        *operands,
        jaxpr=traced.jaxpr,
        length=length,
        reverse=bool(reverse),
        unroll=unroll,
        num_consts=len(traced.consts),
        num_carry=n_carry,
        linear=(False,) * len(operands),
        _split_transpose=bool(_split_transpose),
    )
    carry = tree_unflatten(carry_tree, outs[:n_carry])
    ys = tree_unflatten(y_tree, outs[n_carry:])
    return carry, ys


def _is_pair(tree) -> bool:
    example = tree_unflatten(tree, [0] * tree.num_leaves)
    return isinstance(example, tuple | list) and len(example) == 2


def _carry_name(f: Callable) -> str:
    """Name the carry as the body's first parameter is called (JAX's messages do)."""
    import inspect

    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        return "carry"
    return params[0] if params else "carry"


def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001  (jax.lax.map)
    """Apply ``f`` to each slice of ``xs`` along its leading axis (jax.lax.map).

    A ``scan`` with no carry. With ``batch_size``, ``f`` is ``vmap``-ed over
    batches of that many slices, and the remainder is one more ``vmap``-ed call.
    """
    if batch_size is None:
        _, ys = scan(lambda _, x: ((), f(x)), (), xs)
        return ys
    from modjax.batching import vmap

    from .. import structural as st
    from ..indexing import slice_in_dim

    batch_size = int(batch_size)
    if batch_size < 1:
        raise ValueError(f"lax.map: batch_size must be a positive integer, got {batch_size}")
    xs_flat, xs_tree = tree_flatten(xs)
    n = _leading_length(xs_flat, None)
    n_batches, remainder = divmod(n, batch_size)
    main = [slice_in_dim(x, 0, n_batches * batch_size) for x in xs_flat]
    main = [st.reshape(x, (n_batches, batch_size, *abstractify(x).shape[1:])) for x in main]
    _, ys = scan(lambda _, x: ((), vmap(f)(x)), (), tree_unflatten(xs_tree, main))
    ys_flat, ys_tree = tree_flatten(ys)
    ys_flat = [st.reshape(y, (n_batches * batch_size, *abstractify(y).shape[2:])) for y in ys_flat]
    if remainder:
        rest = [slice_in_dim(x, n_batches * batch_size, n) for x in xs_flat]
        rest_ys, _ = tree_flatten(vmap(f)(tree_unflatten(xs_tree, rest)))
        ys_flat = [st.concatenate([a, b], 0) for a, b in zip(ys_flat, rest_ys, strict=True)]
    return tree_unflatten(ys_tree, ys_flat)
