"""A few test primitives, as a DSL author on top of modjax.runtime would write them.

Each has a numpy-free abstract evaluation, a StableHLO lowering rule and, as
its eager ``impl``, ``apply_primitive``: so they run on device eagerly and
under jit. ``operators()`` makes ``+``, ``*``, ``-x`` of Arrays and tracers
bind them (through tracecore's shared operator table).
"""

from __future__ import annotations

import contextlib
import functools

from modjax.lowering import hlo, ir_type, register_lowering
from modjax.runtime.dispatch import apply_primitive
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray


def _broadcast(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    # 0-d operands broadcast; otherwise the shapes must agree.
    full = [s for s in shapes if s]
    if any(s != full[0] for s in full):
        raise TypeError(f"incompatible shapes for an elementwise op: {shapes}")
    return full[0] if full else ()


def _result_aval(*avals: ShapedArray) -> ShapedArray:
    strong = [a for a in avals if not a.weak_type]
    dtype = (strong or avals)[0].dtype
    return ShapedArray(_broadcast(*(a.shape for a in avals)), dtype, weak_type=not strong)


def _elementwise(name: str, hlo_fn) -> core.Primitive:
    prim = core.Primitive(name)

    def lowering(ctx, *operands):
        out_aval = ctx.avals_out[0]
        args = []
        for value, aval in zip(operands, ctx.avals_in, strict=True):
            if aval.dtype != out_aval.dtype:
                value = hlo.convert(ir_type(aval.update(dtype=out_aval.dtype)), value)
            if aval.shape != out_aval.shape:
                value = hlo.broadcast_in_dim(ir_type(out_aval), value, [])
            args.append(value)
        return hlo_fn(*args)

    prim.def_abstract_eval(_result_aval)
    prim.def_impl(functools.partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


add_p = _elementwise("rt_add", hlo.add)
mul_p = _elementwise("rt_mul", hlo.multiply)
sub_p = _elementwise("rt_sub", hlo.subtract)
sin_p = _elementwise("rt_sin", hlo.sine)
neg_p = _elementwise("rt_neg", hlo.negate)

# Two results: the sum and the difference.
sumdiff_p = core.Primitive("rt_sumdiff")
sumdiff_p.multiple_results = True
sumdiff_p.def_abstract_eval(lambda x, y: [_result_aval(x, y), _result_aval(x, y)])
sumdiff_p.def_impl(functools.partial(apply_primitive, sumdiff_p))
register_lowering(sumdiff_p, lambda ctx, x, y: (hlo.add(x, y), hlo.subtract(x, y)))

# A primitive with a param: multiply by a Python constant fixed at bind time.
scale_p = core.Primitive("rt_scale")
scale_p.def_abstract_eval(lambda x, *, factor: x)
scale_p.def_impl(functools.partial(apply_primitive, scale_p))


def _scale_lowering(ctx, x, *, factor):
    from modjax.lowering import ir_constant

    aval = ctx.avals_in[0]
    const = ir_constant(factor, aval.dtype)
    return hlo.multiply(x, hlo.broadcast_in_dim(ir_type(aval), const, []))


register_lowering(scale_p, _scale_lowering)


def sin(x):
    return sin_p.bind(x)


def add(x, y):
    return add_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def scale(x, factor):
    return scale_p.bind(x, factor=factor)


_OPERATORS = {
    "__add__": lambda x, y: add_p.bind(x, y),
    "__radd__": lambda x, y: add_p.bind(y, x),
    "__sub__": lambda x, y: sub_p.bind(x, y),
    "__rsub__": lambda x, y: sub_p.bind(y, x),
    "__mul__": lambda x, y: mul_p.bind(x, y),
    "__rmul__": lambda x, y: mul_p.bind(y, x),
    "__neg__": lambda x: neg_p.bind(x),
}
_ATTRIBUTES = {
    "sin": lambda x: functools.partial(sin_p.bind, x),
    "double": lambda x: add_p.bind(x, x),
}


@contextlib.contextmanager
def operators(exclusive: bool = False):
    """Give Arrays and tracers ``+ - *``, unary ``-``, ``.sin()`` and ``.double`` in a block.

    With ``exclusive``, every other registration is removed for the block.
    """
    saved_ops, saved_attrs = dict(core.tracer_operators), dict(core.tracer_attributes)
    if exclusive:
        core.tracer_operators.clear()
        core.tracer_attributes.clear()
    for name, fn in _OPERATORS.items():
        core.register_tracer_operator(name, fn)
    for name, fn in _ATTRIBUTES.items():
        core.register_tracer_attribute(name, fn)
    try:
        yield
    finally:
        core.tracer_operators.clear()
        core.tracer_operators.update(saved_ops)
        core.tracer_attributes.clear()
        core.tracer_attributes.update(saved_attrs)
