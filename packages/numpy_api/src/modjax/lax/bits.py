"""Bit-level and complex-part primitives: popcount, clz, bitcasts, real/imag/conj/complex.

Declared as the other elementwise primitives are (one line per primitive,
then one line per rule table). ``real``, ``imag``, ``conj`` and ``complex``
are linear, so their JVP applies the primitive to the tangent and their
transposes map a cotangent back to the operand's type; ``population_count``,
``clz`` and ``bitcast_convert_type`` have zero derivatives.
"""

from __future__ import annotations

from functools import partial

import numpy as np

from modjax.autodiff import defjvp_zero, deflinear, is_undefined_primal
from modjax.batching import batching_rules, defbroadcasting, defvectorized, moveaxis
from modjax.lowering import hlo, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from . import elementwise as ew
from . import reductions as red
from . import structural as st
from ._common import (
    COMPLEX,
    INT,
    aval_of,
    broadcast_shapes,
    broadcast_to,
    check_same_dtypes,
    convert_weak_scalars,
    full,
    kind,
)
from .elementwise import _hlo_unary, unary_primitive

__all__ = [
    "bitcast_convert_type",
    "bitcast_convert_type_p",
    "clz",
    "clz_p",
    "complex",
    "complex_p",
    "conj",
    "conj_p",
    "imag",
    "imag_p",
    "population_count",
    "population_count_p",
    "real",
    "real_p",
]

_F32, _F64 = np.dtype(np.float32), np.dtype(np.float64)
_C64, _C128 = np.dtype(np.complex64), np.dtype(np.complex128)


def _complex_dtype(dtype: np.dtype) -> np.dtype:
    return _C128 if dtype in (_F64, _C128) else _C64


# --- population_count and clz ----------------------------------------------------------------

population_count_p = unary_primitive("population_count", [INT], _hlo_unary(hlo.popcnt))
clz_p = unary_primitive("clz", [INT], _hlo_unary(hlo.count_leading_zeros))
defjvp_zero(population_count_p)
defjvp_zero(clz_p)
defvectorized(population_count_p)
defvectorized(clz_p)


def population_count(x):
    """Count the set bits of each element of an integer array (jax.lax.population_count)."""
    return population_count_p.bind(x)


def clz(x):
    """Count the leading zero bits of each element of an integer array (jax.lax.clz)."""
    return clz_p.bind(x)


# --- real, imag, conj, complex -------------------------------------------------------------------


def _unbroadcast(aval: ShapedArray, x):
    """Sum ``x`` (a cotangent of a broadcast result) back to the operand's shape ``aval``."""
    shape = aval_of(x).shape
    if shape == aval.shape:
        return x
    if not aval.shape:
        return red.reduce_sum(x, tuple(range(len(shape))))
    dims = tuple(i for i, (a, b) in enumerate(zip(aval.shape, shape, strict=True)) if a != b)
    return st.reshape(red.reduce_sum(x, dims), aval.shape)


def _zeros_like_real(t):
    # Strongly typed, as JAX's np.zeros in these rules: the cotangent of a weak real
    # array through real/imag (lax.conj of a real array) is strong.
    return st.full_like(t, 0, dtype=st.aval_of(t).dtype)


real_p = unary_primitive("real", [COMPLEX], _hlo_unary(hlo.real), result="real")
imag_p = unary_primitive("imag", [COMPLEX], _hlo_unary(hlo.imag), result="real")
deflinear(real_p, lambda t, _: [complex(t, _zeros_like_real(t))])
deflinear(imag_p, lambda t, _: [complex(_zeros_like_real(t), ew.neg(t))])
defvectorized(real_p)
defvectorized(imag_p)


def real(x):
    """Return the real part of a complex array elementwise (jax.lax.real)."""
    return real_p.bind(x)


def imag(x):
    """Return the imaginary part of a complex array elementwise (jax.lax.imag)."""
    return imag_p.bind(x)


def _conj_abstract_eval(aval, *, input_dtype):
    if aval.dtype not in (_F32, _F64) and kind(aval.dtype) != "c":
        raise TypeError(
            f"conj does not accept dtype {dtypes.dtype_name(aval.dtype)}. Accepted dtypes are "
            "subtypes of float32, complexfloating, float64."
        )
    return ShapedArray(aval.shape, _complex_dtype(aval.dtype), aval.weak_type)


def _conj_lowering(ctx, x, *, input_dtype):
    aval_in, aval_out = ctx.avals_in[0], ctx.avals_out[0]
    if kind(aval_in.dtype) == "c":
        return hlo.complex(hlo.real(x), hlo.negate(hlo.imag(x)))
    return hlo.complex(x, full(0, aval_in), results=[ir_type(aval_out)])


def _conj_transpose(t, x, *, input_dtype):
    # conj is its own transpose for complex operands; a real operand gets the real part
    if kind(input_dtype) == "c":
        return [conj(t)]
    return [real(t)]


conj_p = Primitive("conj")
conj_p.def_abstract_eval(_conj_abstract_eval)
conj_p.def_impl(partial(apply_primitive, conj_p))
register_lowering(conj_p, _conj_lowering)
deflinear(conj_p, _conj_transpose)
defvectorized(conj_p)


def conj(x):
    """Return the complex conjugate elementwise; real input gives complex (jax.lax.conj)."""
    return conj_p.bind(x, input_dtype=aval_of(x).dtype)


def _complex_abstract_eval(x, y):
    for i, a in enumerate((x, y)):
        if a.dtype not in (_F32, _F64):
            raise TypeError(
                f"complex does not accept dtype {dtypes.dtype_name(a.dtype)} at position {i}. "
                f"Accepted dtypes at position {i} are subtypes of float32, float64."
            )
    check_same_dtypes("complex", (x, y))
    shape = broadcast_shapes("complex", (x.shape, y.shape))
    return ShapedArray(shape, _complex_dtype(x.dtype), x.weak_type and y.weak_type)


def _complex_lowering(ctx, x, y):
    out = ctx.avals_out[0]
    ax, ay = ctx.avals_in
    return hlo.complex(broadcast_to(x, ax, out.shape), broadcast_to(y, ay, out.shape))


def _complex_transpose(t, x, y):
    x_aval = x.aval if is_undefined_primal(x) else aval_of(x)
    y_aval = y.aval if is_undefined_primal(y) else aval_of(y)
    return [_unbroadcast(x_aval, real(t)), _unbroadcast(y_aval, ew.neg(imag(t)))]


complex_p = Primitive("complex")
complex_p.def_abstract_eval(_complex_abstract_eval)
complex_p.def_impl(partial(apply_primitive, complex_p))
register_lowering(complex_p, _complex_lowering)
deflinear(complex_p, _complex_transpose)
defbroadcasting(complex_p)


def complex(x, y):  # noqa: A001 - JAX's public name
    """Build the complex array ``x + 1j * y`` from two float32/float64 arrays (jax.lax.complex)."""
    return ew._bind_binary(complex_p, x, y)


# --- bitcast_convert_type --------------------------------------------------------------------


def _bitcast_abstract_eval(aval, *, new_dtype):
    old = aval.dtype
    if (kind(old) in "bc" or kind(new_dtype) in "bc") and old != new_dtype:
        raise TypeError(
            "lax.bitcast_convert_type does not support bool or complex values unless the "
            f"operand and destination types match. Got operand dtype={old}, "
            f"new_dtype={new_dtype!r}. Consider using the arr.view() method instead."
        )
    if kind(new_dtype) == "?" or kind(old) == "?":
        raise TypeError(f"lax.bitcast_convert_type cannot convert {old} to {new_dtype}")
    old_bits, new_bits = dtypes.itemsize_bits(old), dtypes.itemsize_bits(new_dtype)
    if old_bits == new_bits:
        shape = aval.shape
    elif old_bits > new_bits:
        shape = (*aval.shape, old_bits // new_bits)
    else:
        ratio = new_bits // old_bits
        if not aval.shape or aval.shape[-1] != ratio:
            last = aval.shape[-1] if aval.shape else "()"
            raise ValueError(
                f"Attempting to convert array of shape {aval.shape} from {old} of size "
                f"{old_bits} bits to {new_dtype} of size {new_bits}, bits but {last} * "
                f"{old_bits} != {new_bits}"
            )
        shape = aval.shape[:-1]
    return ShapedArray(shape, new_dtype, False)


def _bitcast_lowering(ctx, x, *, new_dtype):
    return hlo.bitcast_convert(ir_type(ctx.avals_out[0]), x)


def _bitcast_batching_rule(args, dims, *, new_dtype):
    (x,), (d,) = args, dims
    aval = aval_of(x)
    if (
        dtypes.itemsize_bits(new_dtype) > dtypes.itemsize_bits(aval.dtype)
        and d == len(aval.shape) - 1
    ):
        x, d = moveaxis(x, d, 0), 0  # the last axis is consumed: keep the batch axis elsewhere
    return bitcast_convert_type_p.bind(x, new_dtype=new_dtype), d


bitcast_convert_type_p = Primitive("bitcast_convert_type")
bitcast_convert_type_p.def_abstract_eval(_bitcast_abstract_eval)
bitcast_convert_type_p.def_impl(partial(apply_primitive, bitcast_convert_type_p))
register_lowering(bitcast_convert_type_p, _bitcast_lowering)
defjvp_zero(bitcast_convert_type_p)
batching_rules[bitcast_convert_type_p] = _bitcast_batching_rule


def bitcast_convert_type(operand, new_dtype):
    """Reinterpret the bits of ``operand`` as ``new_dtype`` (jax.lax.bitcast_convert_type).

    Equal widths keep the shape; a narrower ``new_dtype`` adds a trailing axis
    of the width ratio, a wider one consumes a trailing axis of that size.
    Bool and complex values convert only to their own type.
    """
    new_dtype = dtypes.canonicalize_dtype(dtypes.dtype(new_dtype))
    (operand,) = convert_weak_scalars((operand,))
    return bitcast_convert_type_p.bind(operand, new_dtype=new_dtype)
