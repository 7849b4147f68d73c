"""Test primitives with numpy implementations and their derivative rules.

Written as the author of a DSL would: each primitive is declared, given an impl
and an abstract evaluation rule, then one line per rule table. Binary primitives
broadcast a 0-d operand against the other; their transposes sum it back.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import (
    defbilinear,
    defjvp,
    defjvp2,
    defjvp_zero,
    deflinear,
    is_undefined_primal,
    transpose_rules,
)
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray


def _result_aval(*avals: ShapedArray) -> ShapedArray:
    shape = np.broadcast_shapes(*(a.shape for a in avals))
    strong = [a for a in avals if not a.weak_type]
    dtype = (strong or avals)[0].dtype
    return ShapedArray(shape, dtype, weak_type=not strong)


def _elementwise(name: str, fn) -> core.Primitive:
    prim = core.Primitive(name)

    def impl(*args):
        aval = _result_aval(*(core.to_aval(a) for a in args))
        return np.asarray(fn(*(np.asarray(a, aval.dtype) for a in args)), dtype=aval.dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(_result_aval)
    return prim


sin_p = _elementwise("ad_sin", np.sin)
cos_p = _elementwise("ad_cos", np.cos)
exp_p = _elementwise("ad_exp", np.exp)
log_p = _elementwise("ad_log", np.log)
neg_p = _elementwise("ad_neg", np.negative)
add_p = _elementwise("ad_add", np.add)
sub_p = _elementwise("ad_sub", np.subtract)
mul_p = _elementwise("ad_mul", np.multiply)

# Sum of all elements, to a 0-d array.
sum_p = core.Primitive("ad_sum")
sum_p.def_impl(lambda x: np.asarray(np.sum(x), dtype=core.to_aval(x).dtype))
sum_p.def_abstract_eval(lambda x: ShapedArray((), x.dtype, x.weak_type))

# Broadcast a 0-d array to ``shape``.
broadcast_p = core.Primitive("ad_broadcast")
broadcast_p.def_impl(
    lambda x, *, shape: np.broadcast_to(np.asarray(x, core.to_aval(x).dtype), shape).copy()
)
broadcast_p.def_abstract_eval(lambda x, *, shape: ShapedArray(shape, x.dtype, x.weak_type))

# Matrix product of two 2-d arrays, and the 2-d transpose.
dot_p = core.Primitive("ad_dot")
dot_p.def_impl(
    lambda x, y: np.asarray(np.matmul(x, y), dtype=_dot_aval(*map(core.to_aval, (x, y))).dtype)
)


def _dot_aval(x: ShapedArray, y: ShapedArray) -> ShapedArray:
    if x.ndim != 2 or y.ndim != 2 or x.shape[1] != y.shape[0]:
        raise TypeError(f"ad_dot: bad shapes {x.str_short()} @ {y.str_short()}")
    dtype = x.dtype if not x.weak_type or y.weak_type else y.dtype
    return ShapedArray((x.shape[0], y.shape[1]), dtype)


dot_p.def_abstract_eval(_dot_aval)
transpose_p = core.Primitive("ad_transpose")
transpose_p.def_impl(lambda x: np.ascontiguousarray(np.transpose(x)))
transpose_p.def_abstract_eval(lambda x: ShapedArray(x.shape[::-1], x.dtype, x.weak_type))

# A non-differentiable primitive with an integer output.
floor_int_p = core.Primitive("ad_floor_int")
floor_int_p.def_impl(lambda x: np.asarray(np.floor(x), np.int32))
floor_int_p.def_abstract_eval(lambda x: ShapedArray(x.shape, np.dtype(np.int32)))


# --- user-facing functions --------------------------------------------------------------


def sin(x):
    return sin_p.bind(x)


def cos(x):
    return cos_p.bind(x)


def exp(x):
    return exp_p.bind(x)


def log(x):
    return log_p.bind(x)


def neg(x):
    return neg_p.bind(x)


def add(x, y):
    return add_p.bind(x, y)


def sub(x, y):
    return sub_p.bind(x, y)


def mul(x, y):
    return mul_p.bind(x, y)


def sum_all(x):
    return sum_p.bind(x)


def broadcast(x, shape):
    return broadcast_p.bind(x, shape=tuple(shape))


def dot(x, y):
    return dot_p.bind(x, y)


def transpose(x):
    return transpose_p.bind(x)


def floor_int(x):
    return floor_int_p.bind(x)


# --- rules ------------------------------------------------------------------------------


def _shape(x):
    return core.to_aval(x).shape


def _broadcast_to(g, shape):
    return g if _shape(g) == tuple(shape) else broadcast(g, shape)


def _unbroadcast(ct, aval: ShapedArray):
    return ct if _shape(ct) == aval.shape else sum_all(ct)


def _out_shape(*xs):
    return np.broadcast_shapes(*map(_shape, xs))


defjvp(sin_p, lambda g, x: mul(g, cos(x)))
defjvp(cos_p, lambda g, x: neg(mul(g, sin(x))))
defjvp2(exp_p, lambda g, ans, x: mul(g, ans))
defjvp(log_p, lambda g, x: mul(g, exp(neg(log(x)))))
deflinear(neg_p, lambda ct, x: [neg(ct)])
defjvp(
    add_p,
    lambda g, x, y: _broadcast_to(g, _out_shape(x, y)),
    lambda g, x, y: _broadcast_to(g, _out_shape(x, y)),
)
defjvp(
    sub_p,
    lambda g, x, y: _broadcast_to(g, _out_shape(x, y)),
    lambda g, x, y: _broadcast_to(neg(g), _out_shape(x, y)),
)


def _add_transpose(ct, x, y):
    return [
        _unbroadcast(ct, x.aval) if is_undefined_primal(x) else None,
        _unbroadcast(ct, y.aval) if is_undefined_primal(y) else None,
    ]


def _sub_transpose(ct, x, y):
    return [
        _unbroadcast(ct, x.aval) if is_undefined_primal(x) else None,
        _unbroadcast(neg(ct), y.aval) if is_undefined_primal(y) else None,
    ]


transpose_rules[add_p] = _add_transpose
transpose_rules[sub_p] = _sub_transpose
defbilinear(
    mul_p,
    lambda ct, x, y: _unbroadcast(mul(ct, y), x.aval),
    lambda ct, x, y: _unbroadcast(mul(x, ct), y.aval),
)
deflinear(sum_p, lambda ct, x: [broadcast(ct, x.aval.shape)])
deflinear(broadcast_p, lambda ct, x, *, shape: [sum_all(ct)])
defbilinear(
    dot_p,
    lambda ct, x, y: dot(ct, transpose(y)),
    lambda ct, x, y: dot(transpose(x), ct),
)
deflinear(transpose_p, lambda ct, x: [transpose(ct)])
defjvp_zero(floor_int_p)
