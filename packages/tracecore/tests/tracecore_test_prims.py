"""A tiny primitive set with numpy implementations, as a DSL author would write it."""

from __future__ import annotations

import contextlib

import numpy as np

from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray


def _result_aval(*avals: ShapedArray) -> ShapedArray:
    shape = np.broadcast_shapes(*(a.shape for a in avals))
    strong = [a for a in avals if not a.weak_type]
    dtype = (strong or avals)[0].dtype
    return ShapedArray(shape, dtype, weak_type=not strong)


def _as_array(x, dtype):
    return np.asarray(x, dtype=dtype)


def _elementwise(name: str, fn) -> core.Primitive:
    prim = core.Primitive(name)

    def impl(*args):
        aval = _result_aval(*(core.to_aval(a) for a in args))
        out = fn(*(_as_array(a, aval.dtype) for a in args))
        return np.asarray(out, dtype=aval.dtype)

    prim.def_impl(impl)
    prim.def_abstract_eval(_result_aval)
    return prim


sin_p = _elementwise("test_sin", np.sin)
cos_p = _elementwise("test_cos", np.cos)
exp_p = _elementwise("test_exp", np.exp)
neg_p = _elementwise("test_neg", np.negative)
add_p = _elementwise("test_add", np.add)
sub_p = _elementwise("test_sub", np.subtract)
mul_p = _elementwise("test_mul", np.multiply)

# Two outputs: the sum and the difference of two operands.
sumdiff_p = core.Primitive("test_sumdiff")
sumdiff_p.multiple_results = True
sumdiff_p.def_impl(lambda x, y: [np.asarray(x + y), np.asarray(x - y)])
sumdiff_p.def_abstract_eval(lambda x, y: [_result_aval(x, y), _result_aval(x, y)])

UNARY = {"sin": sin_p, "cos": cos_p, "exp": exp_p, "neg": neg_p}
BINARY = {"add": add_p, "sub": sub_p, "mul": mul_p}
NUMPY = {
    "sin": np.sin,
    "cos": np.cos,
    "exp": np.exp,
    "neg": np.negative,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
}

_OPERATORS = {
    "__add__": lambda x, y: add_p.bind(x, y),
    "__radd__": lambda x, y: add_p.bind(y, x),
    "__sub__": lambda x, y: sub_p.bind(x, y),
    "__rsub__": lambda x, y: sub_p.bind(y, x),
    "__mul__": lambda x, y: mul_p.bind(x, y),
    "__rmul__": lambda x, y: mul_p.bind(y, x),
    "__neg__": lambda x: neg_p.bind(x),
}


@contextlib.contextmanager
def operators():
    """Give tracers ``+ - *`` and unary ``-`` for the duration of a block."""
    saved = dict(core.tracer_operators)
    for name, fn in _OPERATORS.items():
        core.register_tracer_operator(name, fn)
    try:
        yield
    finally:
        core.tracer_operators.clear()
        core.tracer_operators.update(saved)
