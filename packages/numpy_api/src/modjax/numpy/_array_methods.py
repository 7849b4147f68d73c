"""The rest of ``jax.Array``'s methods and properties, for Arrays and tracers alike.

``_operators`` registers the operators and the commonest methods (``x.T``,
``x.sum()``, ``x.reshape(...)``); this module registers the others in the same
tracecore tables: ``x.real``, ``x.cumsum()``, ``x.sort()``, ``x.nbytes`` on
tracers, ``x.to_device(d)``, and the interchange protocols
(``__array_namespace__``, ``__dlpack__``, ``__dlpack_device__``).

Most methods forward to the ``modjax.numpy`` function of the same name, looked
up when the method is used, so a function added to the namespace later gives
its method at once; until then the attribute is missing with an error naming
the function.
"""

from __future__ import annotations

import functools
import sys
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.runtime import device_put
from modjax.tracecore import core, dtypes
from modjax.tracecore.core import _error_repr, concrete_or_error, concretization_error

from . import _array_api

__all__: list[str] = []


def _numpy_function(method: str, fn_name: str, x: Any):
    fn = getattr(sys.modules[__package__], fn_name, None)
    if fn is None:
        raise AttributeError(
            f"'{type(x).__name__}' object has no attribute '{method}': modjax.numpy.{fn_name} "
            "is not implemented yet"
        )
    return fn


def _method(method: str, fn_name: str | None = None):
    """An attribute getter giving ``modjax.numpy.<fn_name>`` bound to the array."""
    fn_name = fn_name or method

    def get(x):
        return functools.partial(_numpy_function(method, fn_name, x), x)

    return get


def _property(method: str, fn_name: str | None = None):
    """An attribute getter giving ``modjax.numpy.<fn_name>(x)``."""
    fn_name = fn_name or method
    return lambda x: _numpy_function(method, fn_name, x)(x)


def _bound(fn):
    """An attribute getter giving ``fn`` bound to the array."""
    return lambda x: functools.partial(fn, x)


# --- methods written here -------------------------------------------------------------------


def _compress(x):
    """``x.compress(condition, axis)``: jnp.compress takes the condition first."""
    fn = _numpy_function("compress", "compress", x)

    def compress(condition, axis=None, *, out=None, size=None, fill_value=0):
        return fn(condition, x, axis, out=out, size=size, fill_value=fill_value)

    return compress


def _item(x, *args):
    """``x.item()`` of a tracer: its concrete value if known, else ConcretizationTypeError."""
    value = concrete_or_error(x, "This occurred in the item() method of jax.Array")
    return np.asarray(value).item(*args)


def _tolist(x):
    """``x.tolist()`` of a tracer: JAX's ConcretizationTypeError, even for a known value."""
    raise concretization_error(x, f"The tolist() method was called on {_error_repr(x)}.")


def _to_device(x, device, *, stream=None):
    """``x.to_device(device)``: ``device_put`` to a Device or Sharding (jax.Array.to_device)."""
    if stream is not None:
        raise NotImplementedError("Array.to_device: the stream argument is not supported")
    return device_put(x, device)


def _view(x, dtype=None, type=None):  # noqa: A002 - numpy's name
    """``x.view(dtype)``: reinterpret the bits, scaling the last axis (jax.Array.view)."""
    if type is not None:
        raise NotImplementedError("Array.view: the type argument is not supported")
    if dtype is None:
        return x
    old, new = x.dtype, dtypes.canonicalize_dtype(dtypes.dtype(dtype))
    if old == new:
        return x
    if kind(old) == "c" or kind(new) == "c":
        raise NotImplementedError(
            f"Array.view: views from {old} to {new} (complex) are not supported"
        )
    if kind(old) == "b":
        x, old = lax.convert_element_type(x, np.dtype(np.uint8)), np.dtype(np.uint8)
    target = np.dtype(np.uint8) if kind(new) == "b" else new
    old_bits, new_bits = dtypes.itemsize_bits(old), dtypes.itemsize_bits(target)
    if old_bits == new_bits:
        out = lax.bitcast_convert_type(x, target) if old != target else x
    else:
        if not x.shape:
            raise ValueError(
                f"Array.view: cannot view a 0-d array of {old} as {new}: the item sizes differ"
            )
        *lead, last = x.shape
        if old_bits > new_bits:
            out = lax.bitcast_convert_type(x, target)
            out = lax.reshape(out, (*lead, last * (old_bits // new_bits)))
        else:
            ratio = new_bits // old_bits
            if last % ratio:
                raise ValueError(
                    f"Array.view: the last axis of shape {x.shape} ({old}) must be a multiple of "
                    f"{ratio} to be viewed as {new}"
                )
            x = lax.reshape(x, (*lead, last // ratio, ratio))
            out = lax.bitcast_convert_type(x, target)
    if kind(new) == "b":
        out = lax.ne(out, np.zeros((), np.uint8)[()])
    return out


def _byteswap(x):
    """``x.byteswap()``: reverse the bytes of each element (jax.Array.byteswap)."""
    if x.dtype.itemsize == 1:
        return x
    if kind(x.dtype) == "c":
        raise NotImplementedError(f"Array.byteswap: {x.dtype} arrays are not supported")
    as_bytes = lax.bitcast_convert_type(x, np.dtype(np.uint8))  # (..., size)
    return lax.bitcast_convert_type(lax.rev(as_bytes, (as_bytes.ndim - 1,)), x.dtype)


def _flat(x):
    raise NotImplementedError(
        "modjax Arrays do not implement the arr.flat property (neither does JAX): use "
        "arr.flatten() or arr.ravel() instead"
    )


# --- the Array API protocols ----------------------------------------------------------------


def array_namespace(x, /, *, api_version: str | None = None):
    """Return ``modjax.numpy``, the Array API namespace of ``x`` (``x.__array_namespace__``)."""
    if api_version is not None and api_version not in _array_api.SUPPORTED_API_VERSIONS:
        raise ValueError(
            f"__array_namespace__: api_version={api_version!r} is not available; available "
            f"versions are {list(_array_api.SUPPORTED_API_VERSIONS)}"
        )
    return sys.modules[__package__]


def _dlpack(x, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export the array as a DLPack capsule (``jax.Array.__dlpack__``; see ``to_dlpack``)."""
    return _array_api.to_dlpack(
        x, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy
    )


def _dlpack_device(x, /):
    """Return ``(DLPack device type, device id)`` of the array (``jax.Array.__dlpack_device__``)."""
    return _array_api.dlpack_device(x)


# --- registration -----------------------------------------------------------------------------

# Methods and properties that are the modjax.numpy function of the same name.
_METHODS = (
    "argpartition argsort choose conj conjugate copy cumprod cumsum diagonal nonzero ptp repeat "
    "round searchsorted sort take trace"
).split()
_PROPERTIES = ("real", "imag")
_OWN_METHODS = {
    "to_device": _to_device,
    "view": _view,
    "byteswap": _byteswap,
    # Arrays have their own item/tolist (runtime); these serve tracers.
    "item": _item,
    "tolist": _tolist,
}
# Attribute getters: ``fn(x)`` is the attribute's value.
_GETTERS = {
    "compress": _compress,
    # Arrays have their own (runtime); these serve tracers.
    "nbytes": lambda x: x.aval.size * x.aval.dtype.itemsize,
    "itemsize": lambda x: x.aval.dtype.itemsize,
    "flat": _flat,
}
_DUNDERS = {
    "__array_namespace__": array_namespace,
    "__dlpack__": _dlpack,
    "__dlpack_device__": _dlpack_device,
}


def register_array_methods() -> None:
    """Register the methods and properties of this module in tracecore's tables."""
    for name in _METHODS:
        core.register_tracer_attribute(name, _method(name))
    for name in _PROPERTIES:
        core.register_tracer_attribute(name, _property(name))
    for name, fn in _OWN_METHODS.items():
        core.register_tracer_attribute(name, _bound(fn))
    for name, fn in _GETTERS.items():
        core.register_tracer_attribute(name, fn)
    for name, fn in _DUNDERS.items():
        core.register_tracer_operator(name, fn)


register_array_methods()
