"""Making arrays: ``array``, ``asarray``, ``zeros``, ``ones``, ``full``, ``arange``, ...

Host data (Python scalars, nested lists, numpy arrays) is converted with numpy
to its canonical dtype (float64 becomes float32 with x64 off) and placed on the
default device with runtime's ``device_put``; arrays and tracers are converted
with lax. A Python scalar makes a weakly typed array, as in JAX.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

import numpy as np
from modjax import lax
from modjax.autodiff.jvp import with_array_values
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.lax.structural import typed_like, vary_like
from modjax.runtime import Array, device_put, jit
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import _invalid_shape_error
from modjax.tracecore.core import concrete_or_error
from modjax.tracecore.sharding_types import context_mesh_sharding

from ._util import (
    ARRAY_TYPES,
    PYTHON_SCALARS,
    aval,
    broadcast_to,
    canonical_dtype,
    check_arraylike,
    convert,
    from_jax_array_protocol,
    shape_of,
    to_inexact,
)

__all__ = [
    "arange",
    "array",
    "asarray",
    "diag",
    "diag_indices",
    "diag_indices_from",
    "diagflat",
    "empty",
    "empty_like",
    "eye",
    "fromfunction",
    "full",
    "full_like",
    "geomspace",
    "identity",
    "index_exp",
    "indices",
    "ix_",
    "linspace",
    "logspace",
    "meshgrid",
    "mgrid",
    "ogrid",
    "ones",
    "ones_like",
    "s_",
    "tri",
    "tril",
    "tril_indices",
    "tril_indices_from",
    "triu",
    "triu_indices",
    "triu_indices_from",
    "vander",
    "zeros",
    "zeros_like",
]


def _host_array(value: Any, dtype: np.dtype | None) -> np.ndarray:
    """Convert host data to a numpy array of its canonical (or the given) dtype.

    numpy values convert with ``astype`` (integers wrap: ``jnp.int8(np.int32(300))``
    is 44); Python data converts with ``np.asarray``, so an out-of-range Python
    int raises OverflowError (``jnp.int8(300)``, ``jnp.array(2**31)``).
    """
    if value is None:
        raise ValueError("None is not a valid value for jnp.array")
    if isinstance(value, np.ndarray | np.generic):
        arr = _checked(np.asarray(value), value)
        if dtype is not None:
            with np.errstate(over="ignore", invalid="ignore"):
                return arr.astype(dtype)
        return _canonical(arr)
    if dtype is not None:
        return np.asarray(value, dtype=dtype)
    if type(value) is int:
        dtypes.check_int_range(value, dtypes.default_int_dtype())
    return _canonical(_checked(np.asarray(value), value))


def _checked(arr: np.ndarray, value: Any) -> np.ndarray:
    try:
        dtypes.dtype(arr.dtype)  # an ml_dtypes array loads the narrow dtypes here
    except TypeError:
        raise TypeError(
            f"Value {value!r} with dtype {arr.dtype} is not a valid modjax array type. Only "
            "arrays of numeric types are supported."
        ) from None
    return arr


def _canonical(arr: np.ndarray) -> np.ndarray:
    canonical = dtypes.canonicalize_dtype(arr.dtype)
    if canonical == arr.dtype:
        return arr
    if arr.dtype.kind in "iu" and arr.size:
        info = np.iinfo(canonical)
        low, high = arr.min(), arr.max()
        if low < info.min or high > info.max:
            bad = high if high > info.max else low
            raise OverflowError(f"Python integer {bad} out of bounds for {canonical}")
    return arr.astype(canonical)


def _nested_leaves(obj: Any) -> list:
    if isinstance(obj, list | tuple):
        return [leaf for item in obj for leaf in _nested_leaves(item)]
    return [obj]


def _from_jax_arrays(obj: Any) -> Any:
    """The nested sequence ``obj`` with each ``__jax_array__`` leaf replaced by its array."""
    if isinstance(obj, list | tuple):
        return [_from_jax_arrays(item) for item in obj]
    return from_jax_array_protocol(obj)


def _stack_nested(obj: Any, dtype: np.dtype) -> Any:
    if isinstance(obj, list | tuple):
        parts = [_stack_nested(item, dtype) for item in obj]
        shapes = {shape_of(p) for p in parts}
        if len(shapes) != 1:
            raise ValueError(
                "setting an array element with a sequence: the nested sequences have "
                f"inhomogeneous shapes {sorted(shapes)}"
            )
        if not parts:
            return np.zeros((0,), dtype)
        return lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)
    return convert(obj, dtype, False)


def _positional_array_options(args: tuple, copy, order, ndmin) -> list:
    """``copy, order, ndmin`` of ``jnp.array`` given (deprecated) as positional arguments."""
    if len(args) > 3:
        raise TypeError(
            f"array() takes at most 5 positional arguments but {len(args) + 2} were given"
        )
    given = [copy, order, ndmin]
    for i, name in enumerate(("copy", "order", "ndmin")):
        if i < len(args) and given[i] != [True, "K", 0][i]:
            raise TypeError(f"array() got multiple values for argument '{name}'")
    warnings.warn(
        "Passing the copy, order, and ndmin arguments to jnp.array positionally is "
        "deprecated. Use keyword arguments instead.",
        DeprecationWarning,
        stacklevel=3,
    )
    return (list(args) + given[len(args) :])[:3]


def array(
    object: Any,
    dtype: Any = None,
    *args: Any,
    copy: bool = True,
    order: str | None = "K",
    ndmin: int = 0,
    device: Any = None,
    out_sharding: Any = None,
):  # noqa: A002
    """Create an array from an array, scalar or nested sequence (jax.numpy.array).

    Python scalars give weakly typed arrays; lists of arrays are stacked; host
    data is placed on the default device, or on ``device`` (a Device or Sharding;
    a NamedSharding is a sharding constraint, as in JAX) when given, or resharded
    to ``out_sharding`` (ignored where JAX 0.10.2 ignores it: see
    :func:`_out_sharding_for`). A Python int out of the default
    integer range raises OverflowError, as in JAX. ``copy``, ``order`` and ``ndmin``
    passed positionally still work, with JAX's DeprecationWarning.
    """
    if args:
        copy, order, ndmin = _positional_array_options(args, copy, order, ndmin)
    out_sharding = _out_sharding_for(object, dtype, copy, ndmin, device, out_sharding)
    named = _named_sharding(device)
    if out_sharding is None and named is None:
        return _placed(_array(object, dtype, copy, order, ndmin, "array"), device, None)
    # As in JAX, the sharding applies before ``ndmin``'s leading dimensions are added.
    out = _array(object, dtype, copy, order, 0, "array")
    out = _placed(out, None, out_sharding) if named is None else _constrained(object, out, named)
    ndim = aval(out).ndim
    if ndmin > ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - ndim)))
    return out


def _check_explicit_axes(out_sharding) -> None:
    """Raise JAX's ValueError for a NamedSharding naming an automatic or manual mesh axis."""
    mesh = getattr(out_sharding, "mesh", None)
    if mesh is None or not hasattr(out_sharding, "spec"):
        return
    from modjax.sharding.constraint import check_explicit_spec  # noqa: PLC0415

    check_explicit_spec(out_sharding.spec, mesh, "jnp.array")


def _out_sharding_for(object, dtype, copy, ndmin, device, out_sharding):  # noqa: A002
    """The ``out_sharding`` that ``jnp.array`` honours, as JAX 0.10.2 does.

    Both ``device`` and ``out_sharding`` raise JAX's ValueError. JAX hands a numpy
    array that needs no copy, cast or new dimensions (``jnp.asarray(np_array)``,
    ``jnp.array(np_array, copy=False)``) to ``device_put`` unchanged, so
    ``out_sharding`` is ignored there (the result is uncommitted, on the default
    device; under ``jit`` a constant of unsharded type). Other host data (lists,
    scalars, copies, casts) outside a mesh context keeps its empty-mesh type too,
    so a ``NamedSharding`` is ignored there as well; Arrays and tracers are always
    resharded.
    """
    if out_sharding is None:
        return None
    _check_explicit_axes(out_sharding)
    if device is not None:
        raise ValueError(
            "Only one of `device` or `out_sharding` can be set. Got "
            f"device={device!r} and out_sharding={out_sharding!r}"
        )
    if (
        isinstance(object, np.ndarray)
        and not copy
        and ndmin <= object.ndim
        and (dtype is None or canonical_dtype(dtype, "array") == object.dtype)
    ):
        return None
    if isinstance(object, ARRAY_TYPES) or any(
        isinstance(leaf, ARRAY_TYPES) for leaf in _nested_leaves(object)
    ):
        return out_sharding
    from modjax.sharding import NamedSharding, get_abstract_mesh  # noqa: PLC0415

    if isinstance(out_sharding, NamedSharding) and get_abstract_mesh().empty:
        return None
    return out_sharding


def _put_host(value: Any):
    """Put host data on the device: eagerly under ``jax.set_mesh``, on the mesh's devices
    replicated (committed, typed on the mesh), as JAX 0.10.2's ``jnp.array`` does; under a
    trace a constant (JAX's has no mesh in its type either)."""
    context = context_mesh_sharding.value
    if context is not None and type(core.trace_state.trace) is core.EvalTrace:
        return device_put(value, context)
    return device_put(value)


def _array(object: Any, dtype: Any, copy: bool, order: str | None, ndmin: int, name: str):  # noqa: A002
    if order not in (None, "K", "A", "C"):
        raise NotImplementedError(f"jnp.array: order={order!r} is not supported")
    dt = None if dtype is None else canonical_dtype(dtype, name)
    if isinstance(object, ARRAY_TYPES):
        out = with_array_values(object) if dt is None else convert(object, dt)
        if copy and out is object and isinstance(object, Array):
            out = lax.copy(object)
    elif type(object) in PYTHON_SCALARS:
        out = _put_host(object) if dt is None else _put_host(_host_array(object, dt))
    elif isinstance(object, list | tuple) and any(
        isinstance(leaf, ARRAY_TYPES) or hasattr(leaf, "__jax_array__")
        for leaf in _nested_leaves(object)
    ):
        object = _from_jax_arrays(object)
        leaves = _nested_leaves(object)
        if dt is None:
            dt = dtypes.result_type(*leaves)
        out = _stack_nested(object, dt)
        if isinstance(out, np.ndarray):
            out = _put_host(out)
        elif aval(out).weak_type:  # a sequence is not weakly typed, whatever it holds (JAX)
            out = _convert_element_type(out, dt, weak_type=False)
    elif hasattr(object, "__jax_array__"):
        return _array(object.__jax_array__(), dtype, copy, order, ndmin, name)
    else:
        if dt is None and isinstance(object, list | tuple):
            leaves = _nested_leaves(object)
            if any(isinstance(leaf, np.ndarray | np.generic) for leaf in leaves):
                # As JAX: the leaves' promoted type, Python scalars weakly typed
                # (``[np.int8(1), 2]`` is int8, where numpy would widen to int64).
                dt = dtypes.canonicalize_dtype(dtypes.result_type(*leaves))
        out = _put_host(_host_array(object, dt))
    ndim = aval(out).ndim
    if ndmin > ndim:
        out = lax.expand_dims(out, tuple(range(ndmin - ndim)))
    return out


def asarray(
    a: Any,
    dtype: Any = None,
    order: str | None = None,
    *,
    copy: bool | None = None,
    device: Any = None,
    out_sharding: Any = None,
):
    """Convert ``a`` to an array, without copying arrays that already fit (jax.numpy.asarray).

    ``device`` (a Device or Sharding) places the result, as the Array API asks (a
    NamedSharding is a sharding constraint, as in JAX: see :func:`_constrained`);
    ``out_sharding`` reshards it, except for a numpy array that needs no cast
    (JAX 0.10.2 ignores it there, eagerly and under jit) and for host data
    outside a mesh context (see :func:`_out_sharding_for`).
    """
    out_sharding = _out_sharding_for(a, dtype, bool(copy), 0, device, out_sharding)
    out = _array(a, dtype, bool(copy), order, 0, "asarray")
    named = _named_sharding(device)
    if named is not None:
        return _constrained(a, out, named)
    return _placed(out, device, out_sharding)


def _named_sharding(device):
    """``device`` when it is a NamedSharding (``jnp.array``'s ``device=`` constrains to it)."""
    if device is None or not hasattr(device, "spec"):
        return None
    from modjax.sharding import NamedSharding  # noqa: PLC0415 - only programs that shard need it

    return device if isinstance(device, NamedSharding) else None


def _constrained(given, out, sharding):
    """``out`` (``jnp.array(given)``) constrained to ``sharding``, as JAX 0.10.2's ``device=``.

    JAX casts with a sharding, which is ``with_sharding_constraint`` eagerly and under
    jit (``modjax.sharding.constraint.constrain_to_device``), except that an Array
    that needs no cast and already has that sharding is returned unchanged (a copy
    made by ``jnp.array`` has its type's sharding, ``P('x', None)`` for ``P('x')``).
    """
    from modjax.sharding.constraint import constrain_to_device  # noqa: PLC0415

    if (
        isinstance(given, Array)
        and isinstance(out, Array)
        and aval(out).dtype == aval(given).dtype
        and aval(out).weak_type == aval(given).weak_type
        and out.sharding == sharding
    ):
        return out
    return constrain_to_device(out, sharding)


def _shape(shape: Any, name: str) -> tuple[int, ...]:
    given = tuple(shape) if isinstance(shape, Sequence) else (shape,)
    try:
        dims = tuple(operator.index(d) for d in given)
    except TypeError:  # a traced or non-integer size: JAX's canonicalize_shape error
        raise _invalid_shape_error(given) from None
    if any(d < 0 for d in dims):
        # JAX's words: the shape reaches lax.broadcast_in_dim there.
        raise TypeError(
            f"broadcast_in_dim shape must have every element be nonnegative, got {dims}."
        )
    return dims


def _dtype_or_default(dtype: Any, name: str) -> np.dtype:
    return dtypes.default_float_dtype() if dtype is None else canonical_dtype(dtype, name)


def _with_out_sharding(out, out_sharding, device, name: str):
    """``out`` resharded to ``out_sharding`` (a NamedSharding, or a PartitionSpec on the mesh).

    ``out_sharding`` is read as JAX 0.10.2 reads it (``placed_out_sharding``: its
    errors name ``name``, the function; a creation has no operand with a mesh).
    """
    if out_sharding is not None:
        from modjax.sharding.constraint import placed_out_sharding  # noqa: PLC0415

        out_sharding = placed_out_sharding(out_sharding, name, out)
    return _placed(out, device, out_sharding)


def _placed(out, device, out_sharding):
    """``out`` resharded to ``out_sharding``, or put on ``device`` (a Device or Sharding)."""
    if out_sharding is not None:
        from modjax.sharding import reshard  # noqa: PLC0415 - only programs that shard need it

        return reshard(out, out_sharding)
    if device is not None:
        return device_put(out, device)
    return out


def zeros(shape: Any, dtype: Any = None, *, device=None, out_sharding=None):
    """Return an array of ``shape`` filled with zeros, float32 by default (jax.numpy.zeros)."""
    out = lax.full(_shape(shape, "zeros"), 0, _dtype_or_default(dtype, "zeros"))
    return _with_out_sharding(out, out_sharding, device, "jnp.zeros")


def ones(shape: Any, dtype: Any = None, *, device=None, out_sharding=None):
    """Return an array of ``shape`` filled with ones, float32 by default (jax.numpy.ones)."""
    out = lax.full(_shape(shape, "ones"), 1, _dtype_or_default(dtype, "ones"))
    return _with_out_sharding(out, out_sharding, device, "jnp.ones")


def empty(shape: Any, dtype: Any = None, *, device=None, out_sharding=None):
    """Return a zero-filled array: XLA has no uninitialized memory (jax.numpy.empty)."""
    out = lax.full(_shape(shape, "empty"), 0, _dtype_or_default(dtype, "empty"))
    return _with_out_sharding(out, out_sharding, device, "jnp.zeros")  # JAX's empty is zeros


def full(shape: Any, fill_value: Any, dtype: Any = None, *, device=None, out_sharding=None):
    """Return an array of ``shape`` filled with ``fill_value`` (jax.numpy.full)."""
    shape = _shape(shape, "full")
    if shape_of(fill_value) == ():
        out = lax.full(shape, fill_value, None if dtype is None else canonical_dtype(dtype, "full"))
        return _with_out_sharding(out, out_sharding, device, "full")
    from ._manipulation import broadcast_to

    out = broadcast_to(asarray(fill_value, dtype=dtype), shape)
    return _with_out_sharding(out, out_sharding, device, "full")


def _like(name: str, a: Any, value: Any, dtype: Any, shape: Any):
    av = aval(from_jax_array_protocol(a))
    dt = av.dtype if dtype is None else canonical_dtype(dtype, name)
    sh = av.shape if shape is None else _shape(shape, name)
    if shape_of(value) != ():
        from ._manipulation import broadcast_to

        out = broadcast_to(asarray(value, dtype=dt), sh)
    else:
        out = lax.full(sh, value, dt)
        if dtype is None and av.weak_type:  # as JAX: the weak type of a weak operand stays
            out = _convert_element_type(out, dt, weak_type=True)
    out = vary_like(out, av)
    sharding = getattr(av, "type_sharding", None)
    if sharding is not None and sh == av.shape:  # JAX's *_like keep the operand's type
        from modjax.sharding import reshard  # noqa: PLC0415 - only programs that shard need it

        return reshard(out, sharding)
    return out


def zeros_like(a: Any, dtype: Any = None, shape: Any = None, *, device=None, out_sharding=None):
    """Return zeros with the shape and dtype of ``a`` (jax.numpy.zeros_like)."""
    out = _like("zeros_like", a, 0, dtype, shape)
    return _with_out_sharding(out, out_sharding, device, "jnp.zeros_like")


def ones_like(a: Any, dtype: Any = None, shape: Any = None, *, device=None, out_sharding=None):
    """Return ones with the shape and dtype of ``a`` (jax.numpy.ones_like)."""
    out = _like("ones_like", a, 1, dtype, shape)
    return _with_out_sharding(out, out_sharding, device, "jnp.ones_like")


def empty_like(prototype: Any, dtype: Any = None, shape: Any = None, *, device=None):
    """Return zeros with the shape and dtype of ``prototype`` (jax.numpy.empty_like)."""
    return _placed(_like("empty_like", prototype, 0, dtype, shape), device, None)


def full_like(
    a: Any, fill_value: Any, dtype: Any = None, shape: Any = None, *, device=None, out_sharding=None
):
    """Return ``fill_value`` broadcast to the shape of ``a``, in its dtype (jax.numpy.full_like)."""
    out = _like("full_like", a, fill_value, dtype, shape)
    return _with_out_sharding(out, out_sharding, device, "full_like")


def _static_scalar(x: Any, name: str):
    value = concrete_or_error(x, f"It arose in the jnp.arange argument {name!r}")
    if isinstance(value, ARRAY_TYPES) or hasattr(value, "__array__"):
        value = np.asarray(value)
    if isinstance(value, np.ndarray):
        if value.ndim:
            raise ValueError(f"jnp.arange: {name} must be a scalar, got shape {value.shape}")
        value = value[()]
    return value


def arange(
    start: Any,
    stop: Any = None,
    step: Any = None,
    dtype: Any = None,
    *,
    device=None,
    out_sharding=None,
):
    """Return evenly spaced values in ``[start, stop)`` by ``step`` (jax.numpy.arange).

    The bounds must be concrete (not traced). The values are computed as
    JAX does, ``start + step * iota`` in the result dtype (in float32 for
    narrower floats, then rounded), which defaults to the promoted type of the
    bounds (int32 or float32 with x64 off).
    ``device`` places the result; ``out_sharding`` reshards it.
    """
    out = _arange(start, stop, step, dtype)
    return _with_out_sharding(out, out_sharding, device, "jnp.arange")


def _arange(start: Any, stop: Any, step: Any, dtype: Any):
    dt = None if dtype is None else canonical_dtype(dtype, "arange")
    start_name = "stop" if stop is None and step is None else "start"
    start = _static_scalar(start, start_name)
    stop = None if stop is None else _static_scalar(stop, "stop")
    step = None if step is None else _static_scalar(step, "step")
    given = [v for v in (start, stop, step) if v is not None]
    if dt is None:
        dt = dtypes.canonicalize_dtype(dtypes.result_type(*given))
    if any(np.iscomplexobj(v) for v in given):
        raise ValueError(
            "Passing complex start/stop/step to jnp.arange is no longer supported"
            " starting in JAX v0.10.0."
        )
    if stop is None:
        start, stop = 0, start
    # JAX's three forms, each an iota in the dtype (complex too): ``start + step * iota``
    # (always both operations: ``0 + -0.`` is ``0.``), ``iota`` and ``start + iota``.
    # The length comes from the bounds' own arithmetic (float32 bounds divide in float32;
    # a zero step fails there as in JAX: ZeroDivisionError, or OverflowError for numpy's inf,
    # with numpy's warning).
    if step is not None:
        # floats narrower than 32 bits step in float32, then round
        work = dt
        if kind(dt) == "f" and dtypes.itemsize_bits(dt) < 32:
            work = np.dtype(np.float32)
        size = max(0, int(np.ceil((stop - start) / step)))
        out = lax.mul(_host_scalar(step, work), lax.iota(work, size))
        out = lax.add(_host_scalar(start, work), out)
        return out if work == dt else lax.convert_element_type(out, dt)
    if start == 0:
        return lax.iota(dt, max(0, int(np.ceil(stop))))  # a TypeError for bool, as JAX's
    size = max(0, int(np.ceil(stop - start)))
    return lax.add(_host_scalar(start, dt), lax.iota(dt, size))


def _host_scalar(value: Any, dtype: np.dtype) -> np.generic:
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(value).astype(dtype)[()]


def _num(num: Any, name: str) -> int:
    num = operator.index(np.asarray(concrete_or_error(num, f"the num argument of {name}")).item())
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    return num


def _linspace_dtypes(name: str, start: Any, stop: Any, dtype: Any) -> tuple[np.dtype, np.dtype]:
    """Return (output dtype, computation dtype) of linspace/logspace/geomspace."""
    promoted = dtypes.canonicalize_dtype(dtypes.result_type(start, stop))
    out = to_inexact(promoted) if dtype is None else canonical_dtype(dtype, name)
    return out, to_inexact(out)


def linspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    retstep: bool = False,
    dtype: Any = None,
    axis: int = 0,
    *,
    device=None,
):
    """Return ``num`` evenly spaced values from ``start`` to ``stop`` (jax.numpy.linspace).

    ``start`` and ``stop`` may be arrays (they broadcast; the samples go along
    ``axis`` of the result) and may be traced. Integer dtypes round down, as
    in JAX and numpy. With ``retstep`` the step is returned too (NaN when
    there is no step). ``device`` (a Device or Sharding) places the samples.
    """
    check_arraylike("linspace", start, stop)
    num = _num(num, "jnp.linspace")
    axis = _static_axis(axis, "jnp.linspace")
    out = _linspace(start, stop, num, endpoint, retstep, _user_dtype(dtype, "linspace"), axis)
    if retstep:
        return _placed(out[0], device, None), out[1]
    return _placed(out, device, None)


# As in JAX, the sequences are jitted programs named _linspace, _logspace and
# _geomspace (their equations show in jaxprs), computed on the device in the
# computation dtype: their values are JAX's bits, not numpy's rounding.
@partial(jit, static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    out_dtype, comp = _linspace_dtypes("linspace", start, stop, dtype)
    start, stop = lax.convert_element_type(start, comp), lax.convert_element_type(stop, comp)
    bshape = np.broadcast_shapes(aval(start).shape, aval(stop).shape)
    start, stop = broadcast_to(start, bshape), broadcast_to(stop, bshape)
    nd = len(bshape)
    axis = axis + nd + 1 if axis < 0 else axis
    if not 0 <= axis <= nd:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {nd + 1}")

    def along(x, count):  # broadcast bound-shaped x to the output with `count` samples
        shape = bshape[:axis] + (count,) + bshape[axis:]
        return lax.broadcast_in_dim(x, shape, tuple(d for d in range(nd + 1) if d != axis))

    div = num - 1 if endpoint else num
    if num > 1:
        step = lax.div(lax.sub(stop, start), _host_scalar(div, comp))
        real = dtypes.finfo(comp).dtype
        shape = bshape[:axis] + (div,) + bshape[axis:]
        t = lax.div(lax.broadcasted_iota(real, shape, axis), _host_scalar(div, real))
        t = lax.convert_element_type(t, comp)
        out = lax.add(
            lax.mul(along(start, div), lax.sub(_host_scalar(1, comp), t)),
            lax.mul(along(stop, div), t),
        )
        if endpoint:
            out = lax.concatenate([out, along(stop, 1)], axis)
    elif num == 1:
        step = lax.full(bshape, np.nan, comp) if endpoint else lax.sub(stop, start)
        out = along(start, 1)
    else:
        step = lax.full((), np.nan, comp)
        out = along(start, 0)
    if kind(out_dtype) in "iu":
        out = lax.floor(out)
    out = lax.convert_element_type(out, out_dtype)
    return (out, step) if retstep else out


def _user_dtype(dtype: Any, name: str) -> Any:
    return None if dtype is None else canonical_dtype(dtype, name)


def _static_axis(axis: Any, name: str) -> int:
    return operator.index(concrete_or_error(axis, f"the axis argument of {name}"))


def logspace(
    start: Any,
    stop: Any,
    num: int = 50,
    endpoint: bool = True,
    base: Any = 10.0,
    dtype: Any = None,
    axis: int = 0,
):
    """Return ``base ** linspace(start, stop, num)`` (jax.numpy.logspace).

    As in JAX, ``base`` broadcasts against the exponents as ``power`` does, and
    integer dtypes truncate the powers (they do not round down first).
    """
    check_arraylike("logspace", start, stop, base)
    num = _num(num, "jnp.logspace")
    axis = _static_axis(axis, "jnp.logspace")
    return _logspace(start, stop, num, endpoint, base, _user_dtype(dtype, "logspace"), axis)


@partial(jit, static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
    from ._ufuncs import power

    out_dtype, comp = _linspace_dtypes("logspace", start, stop, dtype)
    start, stop = lax.convert_element_type(start, comp), lax.convert_element_type(stop, comp)
    exponents = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return lax.convert_element_type(power(base, exponents), out_dtype)


def geomspace(
    start: Any, stop: Any, num: int = 50, endpoint: bool = True, dtype: Any = None, axis: int = 0
):
    """Return ``num`` values evenly spaced on a log scale (jax.numpy.geomspace).

    As in JAX, the values are ``sign * 10 ** linspace(log10(|start|), log10(|stop|))``
    (the ends are not forced to be exact), and a zero end gives NaNs rather than
    numpy's ValueError.
    """
    check_arraylike("geomspace", start, stop)
    num = _num(num, "jnp.geomspace")
    axis = _static_axis(axis, "jnp.geomspace")
    return _geomspace(start, stop, num, endpoint, _user_dtype(dtype, "geomspace"), axis)


@partial(jit, static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
    from ._ufuncs import divide, log10, multiply, sign

    out_dtype, comp = _linspace_dtypes("geomspace", start, stop, dtype)
    start, stop = lax.convert_element_type(start, comp), lax.convert_element_type(stop, comp)
    s = sign(start)
    exponents = (log10(divide(start, s)), log10(divide(stop, s)))
    out = multiply(s, logspace(*exponents, num, endpoint=endpoint))
    ndim = aval(out).ndim
    ax = axis + ndim if axis < 0 else axis
    if not 0 <= ax < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    if ax:
        out = lax.transpose(out, (*range(1, ax + 1), 0, *range(ax + 1, ndim)))
    return lax.convert_element_type(out, out_dtype)


def eye(N: int, M: int | None = None, k: Any = 0, dtype: Any = None, *, device=None):  # noqa: N803
    """Return a 2-D array with ones on the ``k``-th diagonal, zeros elsewhere (jax.numpy.eye).

    ``k`` may be a Python or numpy integer of any size (a diagonal outside the matrix
    gives zeros) or a scalar integer array, traced ones included. ``device`` (a
    Device or Sharding) places the result.
    """
    return _placed(_eye(N, M, k, dtype), device, None)


def _eye(N: Any, M: Any, k: Any, dtype: Any):  # noqa: N803
    n = _eye_dim(N, "N")
    m = n if M is None else _eye_dim(M, "M")
    if n < 0 or m < 0:
        raise ValueError(f"jnp.eye: negative dimensions are not allowed, got N={N} and M={M}")
    out_dtype = _dtype_or_default(dtype, "eye")
    if not isinstance(k, ARRAY_TYPES):
        try:
            offset = operator.index(k)
        except TypeError:
            raise ValueError(f"jnp.eye: k must be a scalar integer; got {k!r}") from None
        # Any diagonal beyond the matrix is empty, so a clamped offset fits int32.
        offset = max(-n, min(offset, m))
        rows = lax.broadcasted_iota(np.int32, (n, m), 0)
        cols = lax.broadcasted_iota(np.int32, (n, m), 1)
        return lax.convert_element_type(lax.eq(lax.add(rows, np.int32(offset)), cols), out_dtype)
    av = aval(k)
    if av.shape != () or kind(av.dtype) not in "iu":
        raise ValueError(f"jnp.eye: k must be a scalar integer; got {k}")
    wide = dtypes.default_int_dtype()
    offset = lax.clamp(np.array(-n, wide), lax.convert_element_type(k, wide), np.array(m, wide))
    rows = lax.broadcasted_iota(wide, (n, m), 0)
    cols = lax.broadcasted_iota(wide, (n, m), 1)
    return lax.convert_element_type(lax.eq(lax.add(rows, offset), cols), out_dtype)


def _eye_dim(d: Any, argname: str) -> int:
    d = concrete_or_error(d, f"argument {argname} of jnp.eye()")
    try:
        return operator.index(d)
    except TypeError:
        raise TypeError(f"jnp.eye: {argname} must be a concrete integer, got {d!r}") from None


def identity(n: int, dtype: Any = None):
    """Return the ``n`` by ``n`` identity matrix (jax.numpy.identity)."""
    return eye(n, dtype=_dtype_or_default(dtype, "identity"))


def tri(N: int, M: int | None = None, k: int = 0, dtype: Any = None):  # noqa: N803
    """Return an ``N`` by ``M`` array of ones at and below the ``k``-th diagonal (jax.numpy.tri).

    The default dtype is float32 even under x64, as JAX's.
    """
    n = operator.index(N)
    m = n if M is None else operator.index(M)
    dtype = np.dtype(np.float32) if dtype is None else canonical_dtype(dtype, "tri")
    return lax.convert_element_type(_tri_mask((n, m), operator.index(k)), dtype)


def _tri_mask(shape: tuple[int, int], k: int):
    rows = lax.broadcasted_iota(np.int32, shape, 0)
    cols = lax.broadcasted_iota(np.int32, shape, 1)
    return lax.ge(lax.add(rows, np.int32(k)), cols)


def _triangle(name: str, m: Any, k: int, lower: bool):
    check_arraylike(name, m)
    m = asarray(m)
    av = aval(m)
    if av.ndim < 2:
        raise ValueError(f"Argument to jax.numpy.{name} must be at least 2D")
    mask = _tri_mask(av.shape[-2:], operator.index(k) - (0 if lower else 1))
    mask = lax.broadcast_in_dim(mask, av.shape, (av.ndim - 2, av.ndim - 1))
    mask = typed_like(mask, av)  # as JAX's, which broadcasts it to m's sharding
    zeros = lax.full_like(m, 0)
    return lax.select_n(mask, zeros, m) if lower else lax.select_n(mask, m, zeros)


def tril(m: Any, k: int = 0):
    """Zero the elements above the ``k``-th diagonal of the last two axes (jax.numpy.tril)."""
    return _triangle("tril", m, k, lower=True)


def triu(m: Any, k: int = 0):
    """Zero the elements below the ``k``-th diagonal of the last two axes (jax.numpy.triu)."""
    return _triangle("triu", m, k, lower=False)


def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy") -> list:
    """Return coordinate arrays from 1-d coordinate vectors (jax.numpy.meshgrid).

    ``indexing="xy"`` (Cartesian) swaps the first two output axes relative to
    ``"ij"`` (matrix); ``sparse`` keeps size-1 axes instead of broadcasting.
    Only ``copy=True`` is supported, as in JAX (arrays are immutable).
    """
    if not copy:
        raise ValueError("jax.numpy.meshgrid only supports copy=True")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    check_arraylike("meshgrid", *xi)
    arrays = [asarray(x) for x in xi]
    if any(aval(x).ndim != 1 for x in arrays):
        raise ValueError(
            "Arguments to jax.numpy.meshgrid must be 1D, got shapes "
            f"{[aval(x).shape for x in arrays]}"
        )
    if not arrays:
        return []
    n = len(arrays)
    sizes = [aval(x).shape[0] for x in arrays]
    positions = list(range(n))
    if indexing == "xy" and n >= 2:
        positions[0], positions[1] = 1, 0
    full_shape = [1] * n
    for i, p in enumerate(positions):
        full_shape[p] = sizes[i]
    out = []
    for x, p in zip(arrays, positions, strict=True):
        shape = (
            tuple(full_shape)
            if not sparse
            else tuple(s if d == p else 1 for d, s in enumerate(full_shape))
        )
        out.append(lax.broadcast_in_dim(x, shape, (p,)))
    return out


def diag(v: Any, k: int = 0):
    """Extract the ``k``-th diagonal of a 2-d ``v``, or put a 1-d ``v`` on it (jax.numpy.diag)."""
    check_arraylike("diag", v)
    v = asarray(v)
    k = operator.index(k)
    av = aval(v)
    if av.ndim == 2:
        from ._products import diagonal

        return diagonal(v, k)
    if av.ndim != 1:
        raise ValueError("diag input must be 1d or 2d")
    n = av.shape[0] + abs(k)
    zero = lax.full_like(v, 0, shape=())  # weakly typed like v, so is the result (as JAX's)
    padded = lax.pad(v, zero, [(0, abs(k), 0)]) if k else v
    axis_of_v = 0 if k >= 0 else 1  # v runs along the rows above the diagonal, else the columns
    values = lax.broadcast_in_dim(padded, (n, n), (axis_of_v,))
    rows = lax.broadcasted_iota(np.int32, (n, n), 0)
    cols = lax.broadcasted_iota(np.int32, (n, n), 1)
    on_diagonal = lax.eq(lax.add(rows, np.int32(k)), cols)
    return lax.select_n(on_diagonal, lax.full_like(values, 0), values)


def diagflat(v: Any, k: int = 0):
    """Build a 2-d array with the flattened ``v`` on the ``k``-th diagonal (jax.numpy.diagflat)."""
    check_arraylike("diagflat", v)
    v = asarray(v)
    out = diag(lax.reshape(v, (aval(v).size,)), k)
    return lax.convert_element_type(out, aval(v).dtype)  # strongly typed, as JAX's


def indices(dimensions: Sequence[int], dtype: Any = None, sparse: bool = False):
    """Return arrays of the indices of a grid of shape ``dimensions`` (jax.numpy.indices).

    Dense: one array of shape ``(len(dimensions), *dimensions)``; sparse: a
    tuple of arrays with size-1 axes except their own.
    """
    dims = tuple(operator.index(d) for d in dimensions)
    dt = dtypes.default_int_dtype() if dtype is None else canonical_dtype(dtype, "indices")
    n = len(dims)
    if sparse:
        return tuple(
            lax.broadcasted_iota(dt, tuple(d if j == i else 1 for j, d in enumerate(dims)), i)
            for i in range(n)
        )
    if n == 0:
        return lax.full((0,), 0, dt)
    parts = [lax.expand_dims(lax.broadcasted_iota(dt, dims, i), (0,)) for i in range(n)]
    return lax.concatenate(parts, 0)


def fromfunction(function: Any, shape: Sequence[int], *, dtype: Any = float, **kwargs: Any):
    """Call ``function`` with one index array per axis of ``shape`` (jax.numpy.fromfunction).

    The index arrays have dtype ``dtype`` (float32 by default, as numpy's
    float64 canonicalized), and ``function`` must work on whole arrays.
    """
    shape = _shape(shape, "fromfunction")
    dt = canonical_dtype(dtype, "fromfunction")
    grids = [lax.broadcasted_iota(dt, shape, i) for i in range(len(shape))] if shape else []
    return function(*grids, **kwargs)


def vander(x: Any, N: int | None = None, increasing: bool = False):  # noqa: N803
    """Return the Vandermonde matrix of a 1-d ``x``: columns of its powers (jax.numpy.vander).

    Each entry is ``power(x, e)`` with the exponent ``e`` in ``x``'s dtype, as in JAX;
    the columns run from ``x**(N-1)`` down to ``x**0`` unless ``increasing``.
    """
    check_arraylike("vander", x)
    x = asarray(x)
    av = aval(x)
    if av.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    n = av.shape[0] if N is None else operator.index(N)
    if n < 0:
        raise ValueError("N must be nonnegative")
    return _vander(x, n, bool(increasing))


@partial(jit, static_argnums=(1, 2))
def _vander(x, n: int, increasing: bool):
    # As JAX: the exponents are an iota in x's own dtype (so a bool x fails as iota
    # does) and one ``power`` of the column against them: lax.pow for inexact x,
    # square-and-multiply for integers. Repeated products round differently.
    from ._ufuncs import power

    exponents = lax.iota(aval(x).dtype, n)
    if not increasing:
        exponents = lax.sub(lax.full_like(exponents, n - 1), exponents)
    return power(lax.expand_dims(x, (1,)), lax.expand_dims(exponents, (0,)))


def _slice_bound(name: str, value: Any, what: str):
    value = concrete_or_error(value, f"slice {what} of jnp.{name}")
    return np.asarray(value)[()] if hasattr(value, "__array__") else value


def slice_range(name: str, item: slice):
    """Return the range an ``r_``/``mgrid`` slice stands for.

    That is ``arange``, or ``linspace`` for a complex step (its magnitude the count).
    """
    start = None if item.start is None else _slice_bound(name, item.start, "start")
    stop = None if item.stop is None else _slice_bound(name, item.stop, "stop")
    step = None if item.step is None else _slice_bound(name, item.step, "step")
    # JAX takes a zero start or step as absent, so ``mgrid[0.:3]`` is ``arange(0, 3)``
    # (int32) and ``mgrid[0:1:0j]`` is ``arange(0, 1)``.
    start = start or 0
    step = step or None
    if np.iscomplexobj(step):
        return linspace(start, stop, int(abs(step)), endpoint=True)
    if stop is None:  # numpy: ``r_[3:]`` is ``arange(3)``
        start, stop = 0, start
    return arange(start, stop, step)


class _IndexGrid:
    """``mgrid`` and ``ogrid``: index with slices to get dense or open coordinate grids."""

    def __init__(self, sparse: bool, name: str):
        self.sparse = sparse
        self.name = name

    def __getitem__(self, key: Any):
        single = isinstance(key, slice)
        slices = (key,) if single else tuple(key)
        pieces = []
        for sl in slices:
            if not isinstance(sl, slice):
                raise TypeError(f"jnp.{self.name} takes slices, got {sl!r}")
            pieces.append(slice_range(self.name, sl))
        if single:
            return pieces[0]
        dt = dtypes.canonicalize_dtype(dtypes.result_type(*[aval(p).dtype for p in pieces]))
        pieces = [lax.convert_element_type(p, dt) for p in pieces]
        grids = meshgrid(*pieces, indexing="ij", sparse=self.sparse)
        if self.sparse:
            return grids
        return lax.concatenate([lax.expand_dims(g, (0,)) for g in grids], 0)


#: ``jnp.mgrid[0:3, 0:2]``: a dense grid, stacked on a new first axis (jax.numpy.mgrid).
mgrid = _IndexGrid(sparse=False, name="mgrid")
#: ``jnp.ogrid[0:3, 0:2]``: a list of open (broadcastable) grids (jax.numpy.ogrid).
ogrid = _IndexGrid(sparse=True, name="ogrid")


def _index_arrays(arrays) -> tuple:
    return tuple(device_put(np.asarray(a).astype(dtypes.default_int_dtype())) for a in arrays)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Return the indices of the lower triangle of an n-by-m array (jax.numpy.tril_indices)."""
    return _index_arrays(np.tril_indices(operator.index(n), operator.index(k), m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple:
    """Return the indices of the upper triangle of an n-by-m array (jax.numpy.triu_indices)."""
    return _index_arrays(np.triu_indices(operator.index(n), operator.index(k), m))


def _shape_2d(name: str, arr: Any) -> tuple[int, int]:
    shape = shape_of(arr)
    if len(shape) != 2:
        raise ValueError(f"{name} requires a 2-d array, got shape {shape}")
    return shape


def tril_indices_from(arr: Any, k: int = 0) -> tuple:
    """Return the indices of the lower triangle of the 2-d ``arr`` (jax.numpy.tril_indices_from)."""
    n, m = _shape_2d("tril_indices_from", arr)
    return tril_indices(n, k, m)


def triu_indices_from(arr: Any, k: int = 0) -> tuple:
    """Return the indices of the upper triangle of the 2-d ``arr`` (jax.numpy.triu_indices_from)."""
    n, m = _shape_2d("triu_indices_from", arr)
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple:
    """Return ``ndim`` copies of ``arange(n)``, the main diagonal (jax.numpy.diag_indices)."""
    n, ndim = operator.index(n), operator.index(ndim)
    if n < 0 or ndim < 0:
        raise ValueError(f"n and ndim must be non-negative, got n={n}, ndim={ndim}")
    return (lax.iota(dtypes.default_int_dtype(), n),) * ndim


def diag_indices_from(arr: Any) -> tuple:
    """Return the indices of the main diagonal of ``arr`` (jax.numpy.diag_indices_from)."""
    shape = shape_of(arr)
    if len(shape) < 2 or len(set(shape)) != 1:
        raise ValueError(f"diag_indices_from needs at least 2 equal dimensions, got shape {shape}")
    return diag_indices(shape[0], len(shape))


def ix_(*args: Any) -> tuple:
    """Return open-mesh index arrays from 1-d sequences, for cross indexing (jax.numpy.ix_)."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        check_arraylike("ix_", a)
        a = asarray(a)
        if aval(a).ndim != 1:
            raise ValueError(
                f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {aval(a).shape}"
            )
        if aval(a).dtype == np.bool_:
            raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
        shape = (1,) * i + (aval(a).shape[0],) + (1,) * (n - i - 1)
        out.append(lax.reshape(a, shape))
    return tuple(out)


#: numpy's index-expression builders (``jnp.s_[1:3]``), as JAX re-exports them.
s_ = np.s_
index_exp = np.index_exp
