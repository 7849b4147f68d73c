"""Operators and methods of tracers and Arrays: ``x + y``, ``x @ y``, ``x[i]``, ``x.T``, ...

Both tracers and runtime's Array look these up in tracecore's
``tracer_operators`` and ``tracer_attributes`` tables, so registering them once
here serves eager and traced code alike. A binary operator whose other operand
is not array-like answers NotImplemented, so Python tries the reflected
operator and then raises its usual TypeError (``x + [1, 2]`` is a TypeError).
"""

from __future__ import annotations

import functools

from modjax.runtime import Array
from modjax.runtime.fast_path_cpp import flags
from modjax.tracecore.config import enable_x64
from modjax.tracecore.core import eval_trace as _eval_trace
from modjax.tracecore.core import register_tracer_attribute, register_tracer_operator
from modjax.tracecore.core import trace_state as _trace_state

from . import _at, _indexing, _manipulation, _reductions, _selection, _ufuncs
from ._ufunc_factories import _NUMBERS, INT_LIMIT
from ._util import ARRAYLIKE, NUMBER_OPERAND_TYPE, from_jax_array_protocol


def _binary_operator(fn, reflected: bool = False):
    fast = getattr(getattr(fn, "_func", fn), "fast_path", None)
    if fast is not None:
        return _compiled_operator(fn, fast, reflected)
    if reflected:

        def op(self, other):
            if not isinstance(other, ARRAYLIKE):
                other = from_jax_array_protocol(other)  # JAX's operators take such objects
                if not isinstance(other, ARRAYLIKE):
                    return NotImplemented
            return fn(other, self)

    else:

        def op(self, other):
            if not isinstance(other, ARRAYLIKE):
                other = from_jax_array_protocol(other)  # JAX's operators take such objects
                if not isinstance(other, ARRAYLIKE):
                    return NotImplemented
            return fn(self, other)

    return op


def _compiled_operator(fn, fast, reflected: bool):
    """``x <op> y`` of a compiled ufunc: an Array and an Array or a Python number go
    straight to jit's C++ fast path (as ``fn``'s dispatch would, one and two frames
    sooner: ``m > 0`` is the most common eager call); anything else takes ``fn``."""

    def op(self, other):
        kind = type(other)
        if type(self) is Array and _trace_state.trace is _eval_trace and not flags.slow:
            operands = None
            if kind is Array:
                operands = (other, self) if reflected else (self, other)
            elif kind in _NUMBERS:
                # _with_number's conversion, inlined: a number of the Array's kind (or a
                # narrower one) is a weakly typed operand of the Array's dtype.
                aval = self.aval
                x64 = enable_x64.value
                as_type = (
                    None if aval.weak_type else NUMBER_OPERAND_TYPE.get((kind, aval.dtype, x64))
                )
                if as_type is not None and (
                    kind is not int or -INT_LIMIT[x64] <= other < INT_LIMIT[x64]
                ):
                    number = as_type(other)
                    operands = (number, self) if reflected else (self, number)
            if operands is not None:
                try:
                    return fast(*operands)
                except Exception:
                    pass  # ``fn`` raises it as the user sees it
        if not isinstance(other, ARRAYLIKE):
            other = from_jax_array_protocol(other)  # JAX's operators take such objects
            if not isinstance(other, ARRAYLIKE):
                return NotImplemented
        return fn(other, self) if reflected else fn(self, other)

    return op


def _named(op, name: str):
    # Arrays take these as their own methods: ``Array.__add__`` reads as such in tracebacks.
    op.__name__ = op.__qualname__ = name
    return op


_BINARY = {
    "add": _ufuncs.add,
    "sub": _ufuncs.subtract,
    "mul": _ufuncs.multiply,
    "truediv": _ufuncs.true_divide,
    "floordiv": _ufuncs.floor_divide,
    "mod": _ufuncs.remainder,
    "divmod": _ufuncs.divmod,
    "pow": _ufuncs.power,
    "matmul": _manipulation.matmul,
    "and": _ufuncs.bitwise_and,
    "or": _ufuncs.bitwise_or,
    "xor": _ufuncs.bitwise_xor,
    "lshift": _ufuncs.left_shift,
    "rshift": _ufuncs.right_shift,
}
_COMPARISONS = {
    "eq": _ufuncs.equal,
    "ne": _ufuncs.not_equal,
    "lt": _ufuncs.less,
    "le": _ufuncs.less_equal,
    "gt": _ufuncs.greater,
    "ge": _ufuncs.greater_equal,
}


def _pow(self, other, modulo=None):
    if modulo is not None:
        raise NotImplementedError("pow() with a modulo argument is not supported")
    if not isinstance(other, ARRAYLIKE):
        other = from_jax_array_protocol(other)  # JAX's operators take such objects
        if not isinstance(other, ARRAYLIKE):
            return NotImplemented
    return _ufuncs.power(self, other)


def _round(self, ndigits=None):
    out = _ufuncs.round(self, ndigits or 0)
    return out if ndigits is not None else _manipulation.astype(out, int)


def register_operators() -> None:
    """Fill tracecore's operator and attribute tables with modjax.numpy's implementations."""
    for name, fn in _BINARY.items():
        register_tracer_operator(f"__{name}__", _named(_binary_operator(fn), f"__{name}__"))
        reflected = _binary_operator(fn, reflected=True)
        register_tracer_operator(f"__r{name}__", _named(reflected, f"__r{name}__"))
    register_tracer_operator("__pow__", _pow)
    for name, fn in _COMPARISONS.items():
        register_tracer_operator(f"__{name}__", _named(_binary_operator(fn), f"__{name}__"))
    unary = {
        "neg": _ufuncs.negative,
        "pos": _ufuncs.positive,
        "abs": _ufuncs.absolute,
        "invert": _ufuncs.invert,
        "trunc": _ufuncs.trunc,
        "floor": _ufuncs.floor,
        "ceil": _ufuncs.ceil,
    }
    for name, fn in unary.items():
        register_tracer_operator(f"__{name}__", fn)
    register_tracer_operator("__round__", _round)
    register_tracer_operator("__getitem__", _indexing.getitem)
    register_tracer_operator("__setitem__", _indexing.setitem)
    register_tracer_attribute("at", _at.at)

    properties = {
        "T": _manipulation.transpose,
        "mT": lambda x: _manipulation.swapaxes(x, -1, -2),
    }
    for name, fn in properties.items():
        register_tracer_attribute(name, fn)
    methods = {
        "all": _reductions.all,
        "any": _reductions.any,
        "argmax": _reductions.argmax,
        "argmin": _reductions.argmin,
        "astype": _manipulation.astype,
        "clip": _selection.clip,
        "dot": _manipulation.dot,
        "max": _reductions.max,
        "mean": _reductions.mean,
        "min": _reductions.min,
        "prod": _reductions.prod,
        "ravel": _manipulation.ravel,
        "flatten": _manipulation.ravel,
        "squeeze": _manipulation.squeeze,
        "std": _reductions.std,
        "sum": _reductions.sum,
        "swapaxes": _manipulation.swapaxes,
        "var": _reductions.var,
        "reshape": _reshape_method,
        "transpose": _transpose_method,
    }
    for name, fn in methods.items():
        register_tracer_attribute(name, functools.partial(functools.partial, fn))


def _reshape_method(x, *shape, order="C"):
    """``x.reshape(2, 3)`` or ``x.reshape((2, 3))``."""
    if len(shape) == 1:
        shape = shape[0]
    return _manipulation.reshape(x, shape, order)


def _transpose_method(x, *axes):
    """``x.transpose()``, ``x.transpose(1, 0)`` or ``x.transpose((1, 0))``."""
    if len(axes) == 1 and not isinstance(axes[0], int):
        axes = axes[0]
    return _manipulation.transpose(x, axes or None)
