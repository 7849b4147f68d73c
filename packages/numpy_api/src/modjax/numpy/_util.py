"""Argument handling shared by modjax.numpy: type promotion, broadcasting, axes.

Promotion is JAX's (``dtypes.result_type`` with weak types): Python scalars
adopt the dtype of the arrays they meet, ``int8 + 1000`` stays int8. Shapes
broadcast as in numpy, but a mismatch raises TypeError as JAX does.
"""

from __future__ import annotations

import functools
import operator
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind, python_scalar_as
from modjax.lax.elementwise import _convert_element_type, convert_element_type_p
from modjax.runtime import Array, ExtendedArray
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, sharding_entries
from modjax.tracecore.config import enable_x64
from modjax.tracecore.config import numpy_rank_promotion as _rank_promotion
from modjax.tracecore.core import Tracer, eval_trace, trace_state
from modjax.tracecore.sharding_types import elementwise_rule

PYTHON_SCALARS = (bool, int, float, complex)
ARRAY_TYPES = (Array, ExtendedArray, Tracer)
ARRAYLIKE = (Array, ExtendedArray, Tracer, np.ndarray, np.generic, bool, int, float, complex)


def check_arraylike(name: str, *args: Any) -> None:
    """Raise TypeError naming ``name`` if an argument is not an array or scalar (lists are not).

    An object with a ``__jax_array__`` method is array-like, as in JAX (flax's
    ``nnx.Variable``); the helpers that make arrays of arguments call the method.
    """
    for i, a in enumerate(args):
        if not isinstance(a, ARRAYLIKE) and getattr(a, "__jax_array__", None) is None:
            raise TypeError(
                f"{name} requires ndarray or scalar arguments, got {type(a)} at position {i}."
            )


def from_jax_array_protocol(x: Any) -> Any:
    """Return ``x.__jax_array__()`` for an object that has one, else ``x`` (JAX's protocol)."""
    if isinstance(x, ARRAYLIKE):
        return x
    method = getattr(x, "__jax_array__", None)
    return x if method is None else method()


def aval(x: Any):
    """Return the abstract value (shape, dtype, weak type) of an array-like."""
    return lax._common.aval_of(x)


def shape_of(x: Any) -> tuple[int, ...]:
    """Return the shape of an array-like."""
    if type(x) in PYTHON_SCALARS:
        return ()
    if isinstance(x, np.ndarray | np.generic):
        return x.shape
    return x.aval.shape if isinstance(x, Tracer) else aval(x).shape


def canonical_dtype(dtype: Any, name: str | None = None) -> np.dtype:
    """Return the canonical dtype of a dtype the user asked for (``float`` is float32 with x64 off).

    An explicit 64-bit dtype with x64 off warns as JAX does, naming the function ``name``.
    """
    return dtypes.check_and_canonicalize_user_dtype(dtype, name)


def convert(x: Any, dtype: np.dtype, weak_type: bool = False) -> Any:
    """Return ``x`` with dtype ``dtype`` and weak type ``weak_type`` (JAX's promotion).

    A Python scalar whose kind has ``dtype`` as its default stays a Python
    scalar of that kind (``1`` next to a float32 array becomes ``1.0``: a
    literal, and the cheapest eager argument); other Python scalars become numpy
    scalars (integers wrap: ``1000`` as int8 is -24). The conversions are the ones
    JAX's jaxprs hold: a weakly typed tracer of a strong result gets a
    ``convert_element_type`` (its transpose makes the cotangent weak again), a
    numpy array in a traced program is converted there, and 0-d constants are
    converted on the host, into literals, as JAX folds them.
    """
    tp = type(x)
    if tp in PYTHON_SCALARS:
        if tp is bool:
            if dtype == _BOOL:
                return x
            if not weak_type:
                return np.bool_(x).astype(dtype)
            x, tp = int(x), int  # True + a weak float array is weak, as in JAX
        as_python = _PYTHON_TYPE_OF_DEFAULT.get((dtype, enable_x64.value))
        if as_python is not None and _RANK[tp] <= _RANK[as_python]:
            if tp is int:
                dtypes.check_int_range(x, dtypes.default_int_dtype())
            return as_python(x)
        if weak_type:
            return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=True)
        return python_scalar_as(x, dtype)
    if isinstance(x, np.ndarray | np.generic):
        return _convert_numpy(x, dtype, weak_type)
    if x.dtype == dtype and (weak_type or not x.aval.weak_type):
        return x
    if trace_state.trace is eval_trace and dtype != _BOOL:
        # Eagerly a weak operand of a strong result needs nothing: the result type is
        # the same without it, so no dispatch is spent on it. Not so for bools: weak bools
        # (comparisons of weak operands) promote to a strong bool among themselves.
        return x if x.dtype == dtype else _convert_element_type(x, dtype, weak_type)
    if type(x) is Array and x.shape == ():
        return _convert_numpy(np.asarray(x), dtype, weak_type)
    return _convert_element_type(x, dtype, weak_type)


_BOOL = np.dtype(np.bool_)


def _convert_numpy(x: np.ndarray | np.generic, dtype: np.dtype, weak_type: bool) -> Any:
    """Return the numpy value ``x`` as a ``dtype`` value of weak type ``weak_type``."""
    if weak_type:  # np.int32(1) + jnp.asarray(1.0) is weakly typed in JAX too
        as_python = _PYTHON_TYPE_OF_DEFAULT.get((dtype, enable_x64.value))
        if as_python is not None and np.ndim(x) == 0:
            # A Python scalar of the default dtype is the weakly typed literal JAX
            # folds the conversion of a 0-d constant into.
            with np.errstate(over="ignore", invalid="ignore"):
                return as_python(np.asarray(x).astype(dtype)[()])
        return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=True)
    if x.dtype == dtype:
        return x
    if (
        np.ndim(x)
        and trace_state.trace is not eval_trace
        and dtypes.canonicalize_dtype(x.dtype) != dtype  # int64 with x64 off: a host cast
    ):
        # JAX converts a numpy array constant in the program, not on the host.
        return convert_element_type_p.bind(x, new_dtype=dtype, weak_type=False)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(x).astype(dtype)


# The Python scalar type whose (weak) values have a given dtype, per x64 setting.
_PYTHON_TYPE_OF_DEFAULT = {
    (np.dtype(np.int32), False): int,
    (np.dtype(np.float32), False): float,
    (np.dtype(np.complex64), False): complex,
    (np.dtype(np.int64), True): int,
    (np.dtype(np.float64), True): float,
    (np.dtype(np.complex128), True): complex,
}
_RANK = {int: 0, float: 1, complex: 2}


def result_type(*args: Any) -> tuple[np.dtype, bool]:
    """Return JAX's promoted ``(dtype, weak_type)`` of ``args``."""
    return dtypes.result_type(*args, return_weak_type_flag=True)


def promote_dtypes(*args: Any) -> list:
    """Convert ``args`` to their common dtype (JAX's type promotion)."""
    if len(args) == 1:
        return [args[0]]
    dtype, weak = result_type(*args)
    return [convert(a, dtype, weak) for a in args]


def to_inexact(dtype: np.dtype) -> np.dtype:
    """Return ``dtype`` if it is inexact, else the float dtype JAX gives it.

    As JAX's table: 64-bit integers become float64 (float32 without x64), every narrower
    integer and bool float32, also under x64.
    """
    if kind(dtype) in "fc":
        return dtype
    wide = np.dtype(dtype).itemsize == 8
    return dtypes.canonicalize_dtype(np.float64 if wide else np.float32)


def promote_dtypes_inexact(*args: Any) -> list:
    """Convert ``args`` to their common dtype, made inexact (integers become float)."""
    dtype, weak = result_type(*args)
    dtype = to_inexact(dtype)
    return [convert(a, dtype, weak) for a in args]


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """Return numpy's broadcast of ``shapes``; raise JAX's ValueError if they clash.

    As JAX 0.10.2's ``lax.broadcast_shapes``, which jax.numpy calls to align operands
    of different ranks (``jnp.ones((2, 8)) + jnp.ones(2)``: ValueError, eagerly, under
    jit and inside shard_map alike), and which ``where``/``select``/... call on every
    operand; operands of one rank are left to lax, whose TypeError names the operation.
    """
    if len(shapes) == 1:
        return tuple(shapes[0])
    ndim = max(len(s) for s in shapes)
    out = []
    for dims in zip(*[(1,) * (ndim - len(s)) + tuple(s) for s in shapes], strict=True):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise ValueError(
                f"Incompatible shapes for broadcasting: shapes={[tuple(s) for s in shapes]}"
            )
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(x: Any, shape: tuple[int, ...], sharding: Any = None) -> Any:
    """Broadcast ``x`` to ``shape`` with numpy's rules (one ``broadcast_in_dim``).

    ``sharding`` (a type's sharding, from :func:`broadcast_shardings`) is the result's,
    as JAX's ``lax.broadcast_to`` takes it: ``x``'s sharded dimensions must keep their
    axes (JAX's ValueError otherwise), its others take the requested ones (a result
    with no sharding in its type is left so: it matches any).
    """
    s = shape_of(x)
    if sharding is not None:
        entries = _entries(aval(x))
        spec = tuple(sharding.spec) + (None,) * (len(shape) - len(sharding.spec))
        if s == shape and entries == spec:
            return x
        tail = spec[len(shape) - len(s) :] if len(s) <= len(shape) else entries
        if any(e is not None and e != t for e, t in zip(entries, tail, strict=True)):
            raise ValueError(
                f"Incompatible types for broadcasting: input type={aval(x).str_short()} and "
                f"requested type={aval(x).update(shape=shape, sharding=sharding).str_short()}"
            )
        out = broadcast_to(x, shape)
        if aval(out).type_sharding is None or _entries(aval(out)) == spec:
            return out  # an untyped value already matches any sharding
        from modjax.sharding import reshard  # noqa: PLC0415 - only programs that shard need it

        return reshard(out, sharding)
    if s == shape:
        return x
    if len(s) > len(shape):
        raise ValueError(
            f"Cannot broadcast to shape with fewer dimensions: arr_shape={s} shape={shape}"
        )
    if any(a != 1 and a != b for a, b in zip(s[::-1], shape[::-1], strict=False)):
        raise ValueError(  # JAX's text, with the dtype's full name
            f"Incompatible types for broadcasting: input type={_type_text(x, s)} and "
            f"requested type={_type_text(x, shape)}"
        )
    offset = len(shape) - len(s)
    return lax.broadcast_in_dim(x, shape, tuple(range(offset, len(shape))))


def _entries(a) -> tuple:
    """``a``'s sharding entries, each None, a name or a tuple of names (None when untyped)."""
    out = []
    for e in sharding_entries(a):
        axes = (e,) if isinstance(e, str) else tuple(e or ())
        out.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return tuple(out)


def broadcast_arrays_sharded(args: Sequence[Any], shape: tuple[int, ...]) -> list:
    """Broadcast ``args`` to ``shape`` and to their merged sharding (JAX's ``_broadcast_arrays``).

    As in JAX, operands all of one shape are left alone; otherwise each takes the
    sharding :func:`broadcast_shardings` merges from them all.
    """
    shapes = [shape_of(a) for a in args]
    if all(s == shapes[0] for s in shapes):
        return list(args)
    sharding = broadcast_shardings(args, shape) if ShapedArray.sharded_types_seen else None
    return [broadcast_to(a, shape, sharding) for a in args]


def broadcast_shardings(args: Sequence[Any], shape: tuple[int, ...]) -> Any:
    """Return the type sharding of ``args`` broadcast together to ``shape`` (or None).

    JAX's ``lax.broadcast_shardings``: ranks padded with leading unsharded dimensions,
    size-1 dimensions that broadcast contributing nothing, the others merged as an
    elementwise operation merges them.
    """
    avals = [aval(a) for a in args]
    ndim = len(shape)
    padded = [
        a.update(shape=(1,) * (ndim - a.ndim) + a.shape, sharding=_padded(a.type_sharding, ndim))
        for a in avals
    ]
    out = elementwise_rule("broadcast_shardings", padded, ShapedArray(shape, avals[0].dtype))
    return out.type_sharding


def _padded(sharding: Any, ndim: int) -> Any:
    if sharding is None:
        return None
    spec = tuple(sharding.spec)
    return sharding.update(spec=(None,) * (ndim - len(spec)) + spec)


def promote_shapes(name: str, *args: Any) -> list:
    """Give ``args`` a common rank so lax can broadcast them (rank-0 operands stay as they are)."""
    if len(args) < 2:
        return list(args)
    shapes = [shape_of(a) for a in args]
    ranks = {len(s) for s in shapes if s}
    if len(ranks) <= 1:  # lax broadcasts rank 0 and size-1 dimensions itself
        return list(args)
    if _rank_promotion.value != "allow":
        _check_rank_promotion(name, shapes)
    ndim = len(broadcast_shapes(*shapes))
    # Leading 1s only (JAX's broadcast_to_rank): lax broadcasts the size-1 dimensions, so
    # each operand's own computations (and its cotangent's sum) keep its shape, as JAX's.
    return [
        a if not s or len(s) == ndim else broadcast_to(a, (1,) * (ndim - len(s)) + tuple(s))
        for a, s in zip(args, shapes, strict=True)
    ]


def promoting_ranks(fn: Callable) -> Callable:
    """Return ``fn`` run with rank promotion allowed: for modjax's own implementations
    written with numpy broadcasting, which a user's ``jax_numpy_rank_promotion='raise'``
    (or 'warn') is not about (JAX lets its own code promote where it relies on it)."""

    @functools.wraps(fn)
    def promoting(*args: Any, **kwargs: Any) -> Any:
        with _rank_promotion("allow"):
            return fn(*args, **kwargs)

    return promoting


def _check_rank_promotion(name: str, shapes: list) -> None:
    """Warn or raise, as ``numpy_rank_promotion`` says, when operands differ in rank."""
    listed = " ".join(map(str, shapes))
    if _rank_promotion.value == "raise":
        raise ValueError(
            f"Operands could not be broadcast together for {name} on shapes {listed} and with "
            "the config option jax_numpy_rank_promotion='raise'."
        )
    warnings.warn(
        f"Following NumPy automatic rank promotion for {name} on shapes {listed}. Set the "
        "jax_numpy_rank_promotion config option to 'allow' to disable this warning.",
        stacklevel=4,
    )


def promote_binary(name: str, x1: Any, x2: Any):
    """``promote_args`` for two operands, with fast paths for the common cases.

    Two arrays of one dtype and rank (or rank 0) need nothing; an array and a
    Python number of its kind need only the number converted.
    """
    a1 = x1.aval if isinstance(x1, ARRAY_TYPES) else None
    a2 = x2.aval if isinstance(x2, ARRAY_TYPES) else None
    if a1 is not None:
        if a2 is not None:
            if a1.dtype == a2.dtype and (
                len(a1.shape) == len(a2.shape) or not a1.shape or not a2.shape
            ):
                if a1.weak_type and a2.weak_type and a1.dtype == _BOOL:
                    pass  # two weak bools (comparisons' results) promote to a strong bool
                elif a1.weak_type == a2.weak_type or trace_state.trace is eval_trace:
                    return x1, x2
                else:
                    return convert(x1, a1.dtype), convert(x2, a1.dtype)  # the weak made strong
        elif not a1.weak_type and _fits(type(x2), a1.dtype):
            return x1, convert(x2, a1.dtype)
    elif a2 is not None and not a2.weak_type and _fits(type(x1), a2.dtype):
        return convert(x1, a2.dtype), x2
    return promote_args(name, x1, x2)


def _fits(tp: type, dtype: np.dtype) -> bool:
    """Tell whether a Python number of type ``tp`` promotes to ``dtype`` without changing it."""
    k = kind(dtype)
    return (
        (tp is int and k in "iufc") or (tp is float and k in "fc") or (tp is complex and k == "c")
    )


# ``(type of a Python number, dtype, x64)`` -> the Python type ``convert`` makes of such a
# number next to a strongly typed operand of that dtype, for the pairs where it stays a
# Python number: ``x > 0`` on float32 passes ``0.0``. What a call of ``convert`` decides,
# as one lookup for the eager hot path.
NUMBER_OPERAND_TYPE = {
    (tp, dtype, x64): as_python
    for (dtype, x64), as_python in _PYTHON_TYPE_OF_DEFAULT.items()
    for tp in _RANK
    if _fits(tp, dtype)
}


def promote_args(name: str, *args: Any) -> list:
    """Check, promote the dtypes of and rank-align ``args`` for an elementwise op."""
    check_arraylike(name, *args)
    args = tuple(map(from_jax_array_protocol, args))
    try:
        promoted = promote_dtypes(*args)
    except dtypes.TypePromotionError:
        names = [dtypes.dtype(a, canonicalize=True) for a in args]
        if any(isinstance(d, dtypes.ExtendedDType) for d in names):
            # JAX's error for mixing PRNG keys (or another extended dtype) with numbers.
            listed = ", ".join(dtypes.dtype_name(d) for d in names)
            raise TypeError(f"{name} does not accept dtypes {listed}.") from None
        raise
    return promote_shapes(name, *promoted)


def broadcast_all(*args: Any) -> list:
    """Broadcast ``args`` to their common shape (for composites that use ``select_n``)."""
    shape = broadcast_shapes(*[shape_of(a) for a in args])
    return [broadcast_to(a, shape) for a in args]


def promote_args_inexact(name: str, *args: Any) -> list:
    """Like ``promote_args``, converting integers and bools to the default float."""
    check_arraylike(name, *args)
    args = tuple(map(from_jax_array_protocol, args))
    return promote_shapes(name, *promote_dtypes_inexact(*args))


def canonicalize_axis(axis: Any, ndim: int) -> int:
    """Return ``axis`` made non-negative, or raise ValueError if out of bounds (numpy's message)."""
    try:
        axis = operator.index(axis)
    except TypeError:
        raise TypeError(f"axis must be an integer, got {axis!r}") from None
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis + ndim if axis < 0 else axis


def canonicalize_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """Return ``axis`` (None, an int or a sequence) as sorted non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Sequence) and not isinstance(axis, str):
        axes = tuple(canonicalize_axis(a, ndim) for a in axis)
    else:
        axes = (canonicalize_axis(axis, ndim),)
    if len(set(axes)) != len(axes):
        raise ValueError(f"repeated axis in reduction: {axis}")
    return tuple(sorted(axes))


def _type_text(x, shape) -> str:
    return f"{np.dtype(aval(x).dtype).name}[{','.join(map(str, shape))}]"
