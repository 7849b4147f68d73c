"""What every lax module shares: dtype categories, shape rules, operand conversion
and the small StableHLO helpers the lowering rules are written with.

A primitive's story stays in the module that declares it; this file only holds
the vocabulary those declarations use.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from modjax.lowering import hlo, in_compute_type, ir, ir_constant, ir_type
from modjax.tracecore import dtypes
from modjax.tracecore import source_info as _source_info
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Tracer

# Frames of modjax.lax are never "the user's line" of an equation.
_source_info.register_exclusion(os.path.dirname(os.path.abspath(__file__)))

# --- dtype categories -------------------------------------------------------------------


class Category(NamedTuple):
    """A set of dtype kinds, named as JAX's lax errors name it ("floating", ...)."""

    name: str
    kinds: str  # characters of "b" bool, "i" signed, "u" unsigned, "f" float, "c" complex


BOOL = Category("bool", "b")
INT = Category("integer", "iu")
SIGNED = Category("signedinteger", "i")
FLOAT = Category("floating", "f")
COMPLEX = Category("complexfloating", "c")
NUMBER = Category("number", "iufc")

NUM = (INT, FLOAT, COMPLEX)
ANY = (INT, FLOAT, COMPLEX, BOOL)
INEXACT = (FLOAT, COMPLEX)
INT_OR_BOOL = (INT, BOOL)

_KINDS: dict[Any, str] = {}


def kind(dtype: Any) -> str:
    """Return the one-letter kind of ``dtype``, placing the ml_dtypes types as numpy would.

    ``"b"`` bool, ``"i"`` signed and ``"u"`` unsigned integers, ``"f"`` floats
    (bfloat16 and the float8s included), ``"c"`` complex.
    """
    try:
        return _KINDS[dtype]
    except KeyError:
        pass
    if dtypes.issubdtype(dtype, np.bool_):
        k = "b"
    elif dtypes.issubdtype(dtype, np.signedinteger):
        k = "i"
    elif dtypes.issubdtype(dtype, np.unsignedinteger):
        k = "u"
    elif dtypes.issubdtype(dtype, np.floating):
        k = "f"
    elif dtypes.issubdtype(dtype, np.complexfloating):
        k = "c"
    else:
        k = "?"  # float0 and extended dtypes: no category accepts them
    _KINDS[dtype] = k
    return k


def check_dtype(name: str, aval: ShapedArray, accepted: Sequence[Category], position=None):
    """Raise TypeError unless ``aval``'s dtype is in one of the ``accepted`` categories."""
    k = kind(aval.dtype)
    for category in accepted:  # a plain loop: this runs for every operand of every equation
        if k in category.kinds:
            return
    at = "" if position is None else f" at position {position}"
    names = ", ".join(c.name for c in accepted)
    raise TypeError(
        f"{name} does not accept dtype {dtypes.dtype_name(aval.dtype)}{at}. "
        f"Accepted dtypes{at} are subtypes of {names}."
    )


# jnp functions that promote where the lax primitive does not (for the error tip).
_JNP_TWIN = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "rem": "remainder",
    "pow": "power",
    "max": "maximum",
    "min": "minimum",
    "atan2": "arctan2",
    "and": "bitwise_and",
    "or": "bitwise_or",
    "xor": "bitwise_xor",
    "eq": "equal",
    "ne": "not_equal",
    "lt": "less",
    "le": "less_equal",
    "gt": "greater",
    "ge": "greater_equal",
    "shift_left": "left_shift",
    "shift_right_arithmetic": "right_shift",
    "shift_right_logical": "right_shift",
    "nextafter": "nextafter",
    "select": "where",
    "concatenate": "concatenate",
}


def check_same_dtypes(name: str, avals: Sequence[ShapedArray]) -> None:
    """Raise TypeError unless all ``avals`` have one dtype (weak types may differ)."""
    first = avals[0].dtype
    if all(a.dtype == first for a in avals):
        return
    names = ", ".join(dtypes.dtype_name(a.dtype) for a in avals)
    twin = _JNP_TWIN.get(name)
    tip = (
        f" (Tip: jnp.{twin} is a similar function that does automatic type promotion on inputs)."
        if twin
        else ""
    )
    raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got {names}.{tip}")


def real_dtype(dtype: np.dtype) -> np.dtype:
    """Return the component dtype of a complex dtype, or ``dtype`` itself."""
    if kind(dtype) == "c":
        return np.dtype(np.float32) if dtype == np.complex64 else np.dtype(np.float64)
    return dtype


# --- shapes --------------------------------------------------------------------------------


def broadcast_shapes(name: str, shapes: Sequence[tuple[int, ...]]) -> tuple[int, ...]:
    """Return the shape lax's n-ary ops broadcast ``shapes`` to, or raise TypeError.

    Rank-0 operands broadcast to any shape; other operands must have the same
    rank, and each dimension must agree or be 1 (as JAX's lax does).
    """
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    ranked = [s for s in shapes if s]
    if not ranked:
        return ()
    ranks = {len(s) for s in ranked}
    if len(ranks) != 1:
        raise TypeError(f"{name}: arrays must have the same number of dimensions, got {ranks}")
    out = []
    for sizes in zip(*ranked, strict=True):
        distinct = {d for d in sizes if d != 1}
        if len(distinct) > 1:
            raise TypeError(
                f"{name} got incompatible shapes for broadcasting: {', '.join(map(str, shapes))}."
            )
        out.append(distinct.pop() if distinct else 1)
    return tuple(out)


# --- operands -------------------------------------------------------------------------------

PYTHON_SCALARS = (int, float, complex)


def aval_of(x: Any) -> ShapedArray:
    """Return the abstract value of a tracer, Array, numpy value or Python scalar."""
    if isinstance(x, Tracer):
        return x.aval
    from modjax.tracecore.abstract import get_aval

    try:
        return get_aval(x)
    except TypeError:
        raise TypeError(
            f"Value {x!r} of type {type(x).__name__} is not a valid modjax array (lists "
            "and tuples must be converted with jnp.asarray first)"
        ) from None


def python_scalar_as(x: int | float | complex, dtype: np.dtype) -> np.generic:
    """Return the Python scalar ``x`` as a numpy scalar of ``dtype``.

    Integers wrap around as in C (``1000`` as int8 is ``-24``), after the range
    check JAX applies to Python ints (they must fit the default integer type).
    """
    if type(x) is int:
        default = dtypes.default_int_dtype()
        dtypes.check_int_range(x, default)
        if kind(dtype) in "iu":
            return np.asarray(x, default).astype(dtype)[()]
    with np.errstate(over="ignore", invalid="ignore"):
        if kind(dtype) != "c" and type(x) is complex:
            x = x.real
        return np.asarray(x).astype(dtype)[()]


def convert_weak_scalars(args: tuple) -> tuple:
    """Check the Python scalars among the operands of a lax op, as JAX does.

    A Python scalar is a weakly typed value of its default dtype (``1.0`` is
    float32 with x64 off, ``1`` int32), and lax ops require equal dtypes
    afterwards: ``lax.add(x_f32, 1.0)`` and ``lax.add(x_i32, 1)`` work, while
    ``lax.add(x_f16, 1.0)`` and ``lax.mul(x_i8, 3)`` raise TypeError in the
    primitive's dtype check, exactly as in JAX. A Python int must fit the
    default integer type (OverflowError otherwise). The scalars themselves are
    returned unchanged: binding one gives it its weak default dtype.
    """
    for a in args:
        if type(a) is int:
            dtypes.check_int_range(a, dtypes.default_int_dtype())
    return args


# --- lowering helpers ---------------------------------------------------------------------


def constant(value: Any, dtype: Any) -> ir.Value:
    """Emit a rank-0 constant of ``dtype``."""
    with np.errstate(over="ignore", invalid="ignore"):
        return ir_constant(np.asarray(value).astype(dtype))


def full(value: Any, aval: ShapedArray) -> ir.Value:
    """Emit ``value`` broadcast to ``aval``'s shape and dtype."""
    scalar = constant(value, aval.dtype)
    if not aval.shape:
        return scalar
    return in_compute_type(hlo.broadcast_in_dim(ir_type(aval), scalar, []))


def broadcast_to(x: ir.Value, aval: ShapedArray, shape: tuple[int, ...]) -> ir.Value:
    """Broadcast an operand of lax's n-ary ops (rank 0, or size-1 dims) to ``shape``."""
    if aval.shape == shape:
        return x
    dims = list(range(len(shape))) if aval.shape else []
    return in_compute_type(hlo.broadcast_in_dim(ir_type(aval.update(shape=shape)), x, dims))


_COMPARE_TYPE = {"b": "UNSIGNED", "u": "UNSIGNED", "i": "SIGNED", "f": "FLOAT", "c": "FLOAT"}


def compare(x: ir.Value, y: ir.Value, direction: str, dtype: np.dtype) -> ir.Value:
    """Emit ``stablehlo.compare`` of two same-typed values (EQ, NE, LT, LE, GT, GE)."""
    return hlo.compare(
        x,
        y,
        hlo.ComparisonDirectionAttr.get(direction),
        compare_type=hlo.ComparisonTypeAttr.get(_COMPARE_TYPE[kind(dtype)]),
    )


def convert(x: ir.Value, aval_in: ShapedArray, aval_out: ShapedArray) -> ir.Value:
    """Convert ``x`` to ``aval_out``'s dtype with JAX's rules for bool and complex.

    Complex to real keeps the real part; anything to bool is ``x != 0``.
    """
    if aval_in.dtype == aval_out.dtype:
        return x
    k_in, k_out = kind(aval_in.dtype), kind(aval_out.dtype)
    if k_in == "c" and k_out != "c":
        real = aval_in.update(dtype=real_dtype(aval_in.dtype))
        x = hlo.real(x)
        aval_in = real
        if aval_in.dtype == aval_out.dtype:
            return x
    if k_out == "b" and k_in != "b":
        return compare(x, full(0, aval_in), "NE", aval_in.dtype)
    return hlo.convert(ir_type(aval_out), x)


def reducer_region(op, scalar_dtype: np.dtype, count: int = 1):
    """Add the (empty) body block of a reduce-like op; return it.

    The block takes ``2 * count`` rank-0 arguments of ``scalar_dtype`` (or of
    each dtype when ``scalar_dtype`` is a sequence).
    """
    scalar_types = (
        [ir_type(ShapedArray((), d)) for d in scalar_dtype]
        if isinstance(scalar_dtype, list | tuple)
        else [ir_type(ShapedArray((), scalar_dtype))] * count
    )
    return op.regions[0].blocks.append(*scalar_types, *scalar_types)
