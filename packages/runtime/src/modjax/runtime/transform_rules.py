"""Rules that join the layer-1 packages: autodiff, batching and lowering meet here.

design.md: when a primitive of one layer-1 package needs a rule in a sibling's
table, the registration lives in the lowest package that depends on both, which
is the runtime. Importing ``modjax.runtime`` registers, once:

* ``jit_p``: autodiff's JVP and transpose rules of call-like primitives and
  batching's call rule, with ``donated_invars`` kept one flag per operand. So
  ``grad(jit(f))`` is a forward call and a backward call, ``jit(grad(f))`` one
  program, and ``vmap(jit(f))`` batches the inner program once (cached).
  Partial evaluation never donates an operand that the unknown (backward) call
  still reads.
* StableHLO lowerings of autodiff's primitives (``add_any``, ``zeros_like``,
  ``stop_gradient`` and ``name`` as identities, ``remat`` inline behind an
  optimization barrier when ``prevent_cse``, ``custom_jvp_call`` and
  ``custom_vjp_call`` inline from their ``call_jaxpr``) and of batching's
  (``moveaxis``, ``broadcast_batch``, ``expand_dims``, ``squeeze_dims``,
  ``arange``), with eager impls on the device (``apply_primitive``).
* Batching rules of autodiff's primitives (``add_any``, ``stop_gradient``,
  ``name``, ``remat``, ``custom_jvp_call``, ``custom_vjp_call``) and JVP /
  transpose rules of batching's (all linear but ``arange``/``axis_index``).
* ``sum_batch_p[axis]``: the sum over one axis, which the transpose of
  ``broadcast_batch`` and the batched ``custom_vjp`` backward rule need; neither
  autodiff nor batching has an array library to sum with.
"""

from __future__ import annotations

import functools

import numpy as np

from modjax.autodiff import (
    Zero,
    add_any_p,
    custom_jvp_call_p,
    custom_lin_p,
    custom_vjp_call_p,
    defjvp_zero,
    deflinear,
    name_p,
    remat_p,
    stop_gradient_p,
    tangent_aval,
    zeros_like_p,
)
from modjax.autodiff import register_call_rules as register_autodiff_call_rules
from modjax.batching import (
    AxisData,
    axis_index_p,
    axis_primitive_batchers,
    batch_jaxpr_axis,
    batch_subtrace,
    batching_rules,
    broadcast,
    broadcast_batch_p,
    defvectorized,
    expand_dims_p,
    iota_p,
    matchaxis,
    moveaxis,
    moveaxis_p,
    register_call_batching,
    squeeze_p,
    uses_axis_primitives,
)
from modjax.lowering import (
    dense_int_array,
    hlo,
    ir,
    ir_constant,
    ir_type,
    lower_jaxpr_inline,
    register_lowering,
)
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, physical_aval
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.jaxpr import ClosedJaxpr, Literal
from modjax.tracecore.partial_eval import partial_eval_rules
from modjax.tracecore.tracing import convert_constvars_jaxpr

from .dispatch import apply_primitive
from .jit_primitive import jit_p, jit_update_params

__all__ = ["sum_batch_p", "sum_batch"]


# --- jit's call primitive --------------------------------------------------------------------


def _jit_batching_update_params(params, in_dims, out_dims, new_jaxpr):
    """Batching's updater: consts of the batched program are new leading operands."""
    donated = params["donated_invars"]
    extra = len(in_dims) - len(donated)
    return {**params, "jaxpr": new_jaxpr, "donated_invars": (False,) * extra + tuple(donated)}


register_autodiff_call_rules(jit_p, jit_update_params)
register_call_batching(jit_p, _jit_batching_update_params)

_split_jit = partial_eval_rules[jit_p]  # tracecore's generic rule, registered by jit_primitive.py


def _jit_partial_eval(eqn, unknowns, saveable):
    """Split a jit equation; never donate to the known call what the unknown call reads.

    A known operand the backward call needs as a residual is passed to it
    directly, so the forward call must leave its buffer alone.
    """
    known, staged, out_unknowns = _split_jit(eqn, unknowns, saveable)
    if known is not None and staged is not None and any(known.params["donated_invars"]):
        read_later = {id(a) for a in staged.invars if type(a) is not Literal}
        donated = tuple(
            d and id(v) not in read_later
            for v, d in zip(known.invars, known.params["donated_invars"], strict=True)
        )
        known = known.replace(params={**known.params, "donated_invars": donated})
    return known, staged, out_unknowns


partial_eval_rules[jit_p] = _jit_partial_eval


# --- eager impls on the device ---------------------------------------------------------------


def _device_impl(prim: Primitive, numpy_impl):
    """Run ``prim`` on the device, except on ``float0`` values (numpy's zero-size dtype)."""

    def impl(*args, **params):
        if any(getattr(x, "dtype", None) == dtypes.float0 for x in args):
            return numpy_impl(*args, **params)
        return apply_primitive(prim, *args, **params)

    return impl


for _prim in (add_any_p, moveaxis_p, broadcast_batch_p, expand_dims_p, squeeze_p):
    _prim.def_impl(_device_impl(_prim, _prim._impl))


def _zeros_like_impl(*, aval: ShapedArray):
    if aval.dtype == dtypes.float0:
        return np.zeros(aval.shape, dtypes.float0)
    return apply_primitive(zeros_like_p, aval=aval)


zeros_like_p.def_impl(_zeros_like_impl)
iota_p.def_impl(functools.partial(apply_primitive, iota_p))


# --- lowerings ---------------------------------------------------------------------------------


def _identity_lowering(ctx, x, **_):
    return x


def _add_any_lowering(ctx, x, y):
    if ctx.avals_out[0].dtype == np.bool_:
        return hlo.or_(x, y)
    return hlo.add(x, y)


def _zeros_lowering(ctx, *, aval):
    zero = ir_constant(np.zeros((), aval.dtype if aval.dtype != dtypes.float0 else np.bool_))
    return hlo.broadcast_in_dim(ir_type(ctx.avals_out[0]), zero, dense_int_array([]))


def _remat_lowering(ctx, *operands, jaxpr, prevent_cse, policy):
    # As JAX does, an optimization barrier on the operands keeps XLA from merging the
    # recomputation of the backward pass with the forward pass (common subexpressions).
    if prevent_cse and operands:
        operands = list(hlo.OptimizationBarrierOp(list(operands)).results)
    return lower_jaxpr_inline(ctx, jaxpr, operands)


def _custom_call_lowering(ctx, *operands, call_jaxpr, **_):
    return lower_jaxpr_inline(ctx, call_jaxpr, operands)


def _custom_lin_lowering(ctx, *operands, **_):
    raise TypeError("can't apply forward-mode autodiff (jvp) to a custom_vjp function.")


def _moveaxis_lowering(ctx, x, *, source, destination):
    # The physical rank: an extended dtype's element axes trail and stay in place.
    perm = list(range(len(physical_aval(ctx.avals_in[0]).shape)))
    perm.insert(destination, perm.pop(source))
    return hlo.transpose(x, dense_int_array(perm))


def _broadcast_batch_lowering(ctx, x, *, size, axis):
    out = ctx.avals_out[0]
    dims = [d for d in range(len(physical_aval(out).shape)) if d != axis]
    return hlo.broadcast_in_dim(ir_type(out), x, dense_int_array(dims))


def _reshape_lowering(ctx, x, **_):
    return hlo.reshape(ir_type(ctx.avals_out[0]), x)


def _iota_lowering(ctx, *, size, dtype):
    return hlo.iota(ir_type(ctx.avals_out[0]), 0)


register_lowering(add_any_p, _add_any_lowering)
register_lowering(zeros_like_p, _zeros_lowering)
register_lowering(stop_gradient_p, _identity_lowering)
register_lowering(name_p, _identity_lowering)
register_lowering(remat_p, _remat_lowering)
register_lowering(custom_jvp_call_p, _custom_call_lowering)
register_lowering(custom_vjp_call_p, _custom_call_lowering)
register_lowering(custom_lin_p, _custom_lin_lowering)
register_lowering(moveaxis_p, _moveaxis_lowering)
register_lowering(broadcast_batch_p, _broadcast_batch_lowering)
register_lowering(expand_dims_p, _reshape_lowering)
register_lowering(squeeze_p, _reshape_lowering)
register_lowering(iota_p, _iota_lowering)


# --- sum_batch: the sum over one axis -------------------------------------------------------

sum_batch_p = Primitive("sum_batch")


@sum_batch_p.def_abstract_eval
def _sum_batch_abstract_eval(x, *, axis):
    if not 0 <= axis < len(x.shape):
        raise ValueError(f"sum_batch: axis {axis} out of range for shape {x.shape}")
    return ShapedArray(x.shape[:axis] + x.shape[axis + 1 :], x.dtype, x.weak_type)


def _sum_batch_numpy(x, *, axis):
    aval = to_aval(x)
    return np.zeros(aval.shape[:axis] + aval.shape[axis + 1 :], aval.dtype)


sum_batch_p.def_impl(_device_impl(sum_batch_p, _sum_batch_numpy))


def _sum_batch_lowering(ctx, x, *, axis):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    scalar = ir_type(ShapedArray((), aval_in.dtype))
    op = hlo.ReduceOp(
        [ir_type(aval_out)],
        [x],
        [ir_constant(np.zeros((), aval_in.dtype))],
        dense_int_array([axis]),
    )
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        a, b = block.arguments
        hlo.return_([hlo.or_(a, b) if aval_in.dtype == np.bool_ else hlo.add(a, b)])
    return op.result


def _sum_batch_batching_rule(args, dims, *, axis):
    (x,), (bdim,) = args, dims
    real = axis if axis < bdim else axis + 1
    return sum_batch_p.bind(x, axis=real), bdim - (real < bdim)


register_lowering(sum_batch_p, _sum_batch_lowering)
deflinear(
    sum_batch_p,
    lambda ct, x, *, axis: [broadcast_batch_p.bind(ct, size=x.aval.shape[axis], axis=axis)],
)
batching_rules[sum_batch_p] = _sum_batch_batching_rule


def sum_batch(x, axis: int):
    """Sum ``x`` over ``axis`` (what transposes ``broadcast_batch``; lax.reduce_sum on one axis)."""
    ndim = len(to_aval(x).shape)
    if not -ndim <= axis < ndim:
        raise ValueError(f"sum_batch: axis {axis} out of range for an array of rank {ndim}")
    return sum_batch_p.bind(x, axis=axis % ndim)


# --- derivatives of batching's primitives ----------------------------------------------------

deflinear(
    moveaxis_p,
    lambda ct, x, *, source, destination: [
        moveaxis_p.bind(ct, source=destination, destination=source)
    ],
)
deflinear(broadcast_batch_p, lambda ct, x, *, size, axis: [sum_batch_p.bind(ct, axis=axis)])
deflinear(expand_dims_p, lambda ct, x, *, dimensions: [squeeze_p.bind(ct, dimensions=dimensions)])
deflinear(squeeze_p, lambda ct, x, *, dimensions: [expand_dims_p.bind(ct, dimensions=dimensions)])
defjvp_zero(iota_p)
defjvp_zero(axis_index_p)


# --- batching of autodiff's primitives -------------------------------------------------------


def _add_any_batching_rule(args, dims):
    (x, y), (dx, dy) = args, dims
    if dx == dy:
        return add_any_p.bind(x, y), dx
    if dx is None:
        return add_any_p.bind(broadcast(x, to_aval(y).shape[dy], dy), y), dy
    if dy is None:
        return add_any_p.bind(x, broadcast(y, to_aval(x).shape[dx], dx)), dx
    return add_any_p.bind(x, moveaxis(y, dy, dx)), dx


batching_rules[add_any_p] = _add_any_batching_rule
defvectorized(stop_gradient_p)
defvectorized(name_p)
register_call_batching(remat_p)


def _unbatched_aval(aval: ShapedArray, dim: int | None) -> ShapedArray:
    if dim is None:
        return aval
    return ShapedArray(aval.shape[:dim] + aval.shape[dim + 1 :], aval.dtype, aval.weak_type)


def _at_front(axis_data: AxisData, vals, dims):
    """Force each result batched at axis 0 (broadcasting unbatched ones)."""
    return [matchaxis(axis_data.size, d, 0, v) for v, d in zip(vals, dims, strict=True)]


def _batched_custom_call(axis_data: AxisData, args, dims, call: ClosedJaxpr, num_consts: int):
    """Batch a custom call's program with every batched operand and every result at axis 0.

    Return ``(operands, arg_dims, new_call_jaxpr, num_consts)``; ``arg_dims`` are the
    batch dims (0 or None) of the non-const operands, which the wrapped rules see.
    """
    args = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True)]
    in_dims = tuple(None if d is None else 0 for d in dims)
    batched, _ = batch_jaxpr_axis(call, axis_data, in_dims, True)
    consts = list(batched.consts)
    if consts:
        batched = ClosedJaxpr(convert_constvars_jaxpr(batched.jaxpr), ())
    return [*consts, *args], in_dims[num_consts:], batched, num_consts + len(consts)


class _BatchedJVP:
    """A custom_jvp rule (flat lists) run under vmap: the batched call's ``jvp`` param.

    Primals and tangents are batched at axis 0 where the operand is, and so are all
    the outputs. Symbolic zero tangents stay symbolic.
    """

    def __init__(self, jvp, axis_data: AxisData, arg_dims):
        self.jvp, self.axis_data, self.arg_dims = jvp, axis_data, tuple(arg_dims)
        self.primal_name = getattr(jvp, "primal_name", "function")
        self.name = getattr(jvp, "name", "jvp")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, primals, tangents):
        dims = self.arg_dims
        nonzero = [type(t) is not Zero for t in tangents]
        zero_avals = [
            None if nz else _unbatched_aval(t.aval, d)
            for t, d, nz in zip(tangents, dims, nonzero, strict=True)
        ]
        n = len(primals)
        n_out: list[int] = []
        zero_out: list = []

        def one(*flat):
            ps, ts = list(flat[:n]), iter(flat[n:])
            full = [next(ts) if nz else Zero(a) for nz, a in zip(nonzero, zero_avals, strict=True)]
            p_out, t_out = self.jvp(ps, full)
            n_out.append(len(p_out))
            zero_out[:] = [t.aval if type(t) is Zero else None for t in t_out]
            return list(p_out) + [t for t in t_out if type(t) is not Zero]

        nz_t = [t for t, nz in zip(tangents, nonzero, strict=True) if nz]
        nz_dims = [d for d, nz in zip(dims, nonzero, strict=True) if nz]
        vals, out_dims = batch_subtrace(
            one, self.axis_data, list(dims) + nz_dims, list(primals) + nz_t
        )
        vals = _at_front(self.axis_data, vals, out_dims)
        k = n_out[0]
        p_out, nz_out = vals[:k], iter(vals[k:])
        size = self.axis_data.size
        t_out = [next(nz_out) if a is None else Zero(_batched_aval(a, size)) for a in zero_out]
        return p_out, t_out


def _batched_aval(aval: ShapedArray, size: int) -> ShapedArray:
    return ShapedArray((size, *aval.shape), aval.dtype, aval.weak_type)


def _custom_jvp_call_batcher(axis_data, args, dims, *, call_jaxpr, jvp, num_consts, symbolic_zeros):
    if all(d is None for d in dims) and not uses_axis_primitives(call_jaxpr.jaxpr):
        outs = custom_jvp_call_p.bind(
            *args,
            call_jaxpr=call_jaxpr,
            jvp=jvp,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
        return outs, [None] * len(outs)
    args, arg_dims, batched, num_consts = _batched_custom_call(
        axis_data, args, dims, call_jaxpr, num_consts
    )
    outs = custom_jvp_call_p.bind(
        *args,
        call_jaxpr=batched,
        jvp=_BatchedJVP(jvp, axis_data, arg_dims),
        num_consts=num_consts,
        symbolic_zeros=symbolic_zeros,
    )
    return outs, [0] * len(outs)


class _BatchedFwd:
    """A custom_vjp fwd rule (flat lists) under vmap: outputs and residuals at axis 0."""

    def __init__(self, fwd, axis_data: AxisData, arg_dims):
        self.fwd, self.axis_data, self.arg_dims = fwd, axis_data, tuple(arg_dims)
        self.name = getattr(fwd, "name", "fwd")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, args, perturbed):
        box: list = []

        def one(*xs):
            p_out, res, res_tree = self.fwd(list(xs), perturbed)
            box[:] = [len(p_out), res_tree]
            return list(p_out) + list(res)

        vals, dims = batch_subtrace(one, self.axis_data, list(self.arg_dims), list(args))
        vals = _at_front(self.axis_data, vals, dims)
        k, res_tree = box
        return vals[:k], vals[k:], res_tree


class _BatchedBwd:
    """A custom_vjp bwd rule (flat lists) under vmap.

    Residuals and output cotangents come batched at axis 0; cotangents of operands
    that were not batched are summed over the batch. ``in_avals`` are the tangent
    types of the batched call's (non-const) operands, for symbolic zeros.
    """

    def __init__(self, bwd, axis_data: AxisData, arg_dims, in_avals):
        self.bwd, self.axis_data, self.arg_dims = bwd, axis_data, tuple(arg_dims)
        self.in_avals = tuple(in_avals)
        self.name = getattr(bwd, "name", "bwd")

    def __repr__(self) -> str:
        return f"vmap({self.name})"

    def __call__(self, res_tree, res, cts_out):
        nonzero = [type(c) is not Zero for c in cts_out]
        zero_avals = [
            None if nz else _unbatched_aval(c.aval, 0)
            for c, nz in zip(cts_out, nonzero, strict=True)
        ]
        n_res = len(res)
        zero_in: list = []

        def one(*flat):
            rs, cs = list(flat[:n_res]), iter(flat[n_res:])
            full = [next(cs) if nz else Zero(a) for nz, a in zip(nonzero, zero_avals, strict=True)]
            cts_in = self.bwd(res_tree, rs, full)
            zero_in[:] = [c is None or type(c) is Zero for c in cts_in]
            return [c for c, z in zip(cts_in, zero_in, strict=True) if not z]

        nz_cts = [c for c, nz in zip(cts_out, nonzero, strict=True) if nz]
        vals, dims = batch_subtrace(
            one, self.axis_data, [0] * (n_res + len(nz_cts)), list(res) + nz_cts
        )
        vals = iter(_at_front(self.axis_data, vals, dims))
        results = []
        for zero, d, aval in zip(zero_in, self.arg_dims, self.in_avals, strict=True):
            if zero:
                results.append(Zero(aval))
            elif d is None:
                results.append(sum_batch_p.bind(next(vals), axis=0))
            else:
                results.append(next(vals))
        return results


def _custom_vjp_call_batcher(
    axis_data, args, dims, *, call_jaxpr, fwd, bwd, num_consts, symbolic_zeros
):
    if all(d is None for d in dims) and not uses_axis_primitives(call_jaxpr.jaxpr):
        outs = custom_vjp_call_p.bind(
            *args,
            call_jaxpr=call_jaxpr,
            fwd=fwd,
            bwd=bwd,
            num_consts=num_consts,
            symbolic_zeros=symbolic_zeros,
        )
        return outs, [None] * len(outs)
    args, arg_dims, batched, num_consts = _batched_custom_call(
        axis_data, args, dims, call_jaxpr, num_consts
    )
    outs = custom_vjp_call_p.bind(
        *args,
        call_jaxpr=batched,
        fwd=_BatchedFwd(fwd, axis_data, arg_dims),
        bwd=_BatchedBwd(
            bwd, axis_data, arg_dims, [tangent_aval(to_aval(a)) for a in args[num_consts:]]
        ),
        num_consts=num_consts,
        symbolic_zeros=symbolic_zeros,
    )
    return outs, [0] * len(outs)


axis_primitive_batchers[custom_jvp_call_p] = _custom_jvp_call_batcher
axis_primitive_batchers[custom_vjp_call_p] = _custom_vjp_call_batcher
del _prim
