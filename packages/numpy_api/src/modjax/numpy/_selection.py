"""Selecting and placing elements: ``where``, ``select``, ``piecewise``, ``clip``, ``choose``,
``compress``, ``extract``, ``place``, ``put``, ``fill_diagonal``.

The placing functions return a new array (modjax arrays are immutable), so,
as JAX, they require ``inplace=False``. Results keep the dtype and weak type of
the array they select from or place into; values are cast to it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind
from modjax.lax.elementwise import _convert_element_type
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

from . import _util
from ._creation import asarray
from ._cumulative import cumsum
from ._eager_jit import compile_on_arrays
from ._indexing import nonzero, scatter_update, take
from ._manipulation import _array, ravel, resize
from ._util import (
    ARRAY_TYPES,
    aval,
    broadcast_all,
    broadcast_to,
    canonicalize_axis,
    check_arraylike,
    convert,
    from_jax_array_protocol,
    promote_args,
    promote_dtypes,
    shape_of,
)

__all__ = [
    "choose",
    "clip",
    "compress",
    "extract",
    "fill_diagonal",
    "piecewise",
    "place",
    "put",
    "select",
    "where",
]


def _like(value: Any, a_aval) -> Any:
    """``value`` cast to the dtype (and weak type) of the array it is placed into."""
    if isinstance(value, ARRAY_TYPES):  # as a scatter into the array would (JAX's place)
        return _convert_element_type(value, a_aval.dtype, a_aval.weak_type)
    return asarray(convert(value, a_aval.dtype, a_aval.weak_type))


def _immutable(name: str) -> ValueError:
    return ValueError(
        f"jax.numpy.{name} cannot modify arrays in-place, because JAX arrays are immutable. "
        "Pass inplace=False to instead return an updated array."
    )


# --- where, select, piecewise, clip ------------------------------------------------------------


def where(condition: Any, x: Any = None, y: Any = None, /, *, size=None, fill_value=None):
    """Pick ``x`` where ``condition`` is true and ``y`` elsewhere, broadcasting (jax.numpy.where).

    The one-argument form returns the indices of nonzero elements (``nonzero``).
    """
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    check_arraylike("where", condition, x, y)  # one of x, y alone is JAX's TypeError
    x, y = promote_dtypes(x, y)
    shapes = [shape_of(condition), shape_of(x), shape_of(y)]
    out_shape = _util.broadcast_shapes(*shapes)
    cond_aval = aval(condition)
    if cond_aval.dtype != np.bool_:
        condition = lax.ne(condition, np.zeros((), cond_aval.dtype))
    if not shapes[0]:  # a scalar condition selects whole cases, as in JAX
        x, y = _util.broadcast_arrays_sharded((x, y), out_shape)
    else:
        condition, x, y = _util.broadcast_arrays_sharded((condition, x, y), out_shape)
    return lax.select_n(condition, y, x)


def select(condlist: Sequence, choicelist: Sequence, default: Any = 0):
    """Pick elementwise the choice of the first true condition, else ``default`` (jax.numpy.select).

    Conditions are converted to bool; choices and ``default`` are promoted
    together and broadcast.
    """
    if len(condlist) != len(choicelist):
        raise ValueError(
            f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})"
        )
    if not condlist:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    condlist = [from_jax_array_protocol(c) for c in condlist]
    values = promote_dtypes(*map(from_jax_array_protocol, (default, *choicelist)))
    conds = [
        c if aval(c).dtype == np.bool_ else lax.ne(c, np.zeros((), aval(c).dtype))
        for c in (_array(c, "select") for c in condlist)
    ]
    # JAX lists the conditions' shapes, then the default's and the choices'.
    shape_out = _util.broadcast_shapes(*[aval(c).shape for c in conds], *map(shape_of, values))
    out = _util.broadcast_to(values[0], shape_out)
    for cond, choice in reversed(list(zip(conds, values[1:], strict=True))):
        out = lax.select_n(
            _util.broadcast_to(cond, shape_out), out, _util.broadcast_to(choice, shape_out)
        )
    return out


def piecewise(x: Any, condlist: Any, funclist: Sequence, *args: Any, **kw: Any):
    """Evaluate a piecewise function of ``x`` (jax.numpy.piecewise).

    Each function of ``funclist`` (or constant) is evaluated on the whole of
    ``x`` and picked where its condition holds, later conditions winning; an
    extra last function gives the value where no condition holds (else 0).
    The result has ``x``'s dtype, strongly typed (as JAX's).
    """
    x = _array(x, "piecewise")
    dtype = aval(x).dtype
    single = isinstance(condlist, bool | np.bool_) or (
        isinstance(condlist, ARRAY_TYPES + (np.ndarray,)) and np.ndim(condlist) == aval(x).ndim
    )
    if single:
        condlist = [condlist]
    conds = list(condlist)
    n = len(conds)
    if len(funclist) not in (n, n + 1):
        raise ValueError(
            f"with {n} condition(s), either {n} or {n + 1} functions are expected, "
            f"got {len(funclist)}"
        )

    def value(f):
        out = f(x, *args, **kw) if callable(f) else f
        return _util.broadcast_to(convert(_array(out, "piecewise"), dtype), aval(x).shape)

    out = value(funclist[n]) if len(funclist) == n + 1 else lax.full_like(x, 0, dtype)
    for cond, f in zip(conds, funclist[:n], strict=False):
        c = _array(cond, "piecewise")
        if aval(c).dtype != np.bool_:
            c = lax.ne(c, np.zeros((), aval(c).dtype))
        out = lax.select_n(_util.broadcast_to(c, aval(x).shape), out, value(f))
    return lax.convert_element_type(out, dtype)  # strongly typed, as JAX's (cast branches)


def clip(arr: Any = None, /, min: Any = None, max: Any = None):  # noqa: A002
    """Limit the values of ``arr`` to ``[min, max]`` (either may be None) (jax.numpy.clip).

    numpy's older names ``a``, ``a_min`` and ``a_max`` are not taken, as in JAX 0.10.
    """
    if arr is None:
        raise ValueError("No input was provided to the clip function.")
    check_arraylike("clip", arr, *(b for b in (min, max) if b is not None))
    if any(b is not None and kind(dtypes.dtype(b)) == "c" for b in (arr, min, max)):
        # JAX refuses rather than use numpy's lexicographic order of complex numbers.
        raise ValueError(
            "jnp.clip received a complex value (the input or min/max): complex numbers "
            "have no ordering; clip their real or imaginary part (jnp.real/jnp.imag)"
        )
    # ``maximum(min, arr)``, then ``minimum(max, ...)``: operands in JAX's order, so its
    # shape errors list them so.
    if min is not None:
        arr = lax.max(*promote_args("clip", min, arr))
    if max is not None:
        arr = lax.min(*promote_args("clip", max, arr))
    return arr


# --- choose ------------------------------------------------------------------------------------

_CHOOSE_MODES = ("raise", "wrap", "clip")


def choose(a: Any, choices: Any, out: None = None, mode: str = "raise"):
    """Pick each element from the choice that ``a`` names at its position (jax.numpy.choose).

    ``a`` and the choices broadcast together; the result has the choices'
    promoted dtype. ``mode="raise"`` checks the indices, so ``a`` must be
    concrete; ``"wrap"`` takes them modulo the number of choices, ``"clip"``
    clamps them.
    """
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    if mode not in _CHOOSE_MODES:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    check_arraylike("choose", a)
    choices = list(choices)
    check_arraylike("choose", *choices)
    if kind(aval(a).dtype) not in "iu":
        raise ValueError(f"jnp.choose: `a` array must be integer typed, got {aval(a).dtype}")
    n = len(choices)
    if n == 0:
        raise ValueError("jnp.choose: invalid entry in choice array (there are no choices)")
    if mode == "raise":
        value = np.asarray(
            concrete_or_error(
                a,
                "The indices of jnp.choose must be concrete with mode='raise'; use mode='wrap' "
                "or mode='clip' under transformations.",
            )
        )
        if np.any((value < 0) | (value >= n)):
            raise ValueError(f"jnp.choose: invalid entry in choice array (there are {n} choices)")
    dtype = dtypes.canonicalize_dtype(dtypes.result_type(*choices))
    arrays = broadcast_all(a, *[lax.convert_element_type(c, dtype) for c in choices])
    index = lax.convert_element_type(arrays[0], np.int32)
    if mode == "wrap":
        index = lax.rem(index, np.int32(n))
        index = lax.select_n(lax.lt(index, np.int32(0)), index, lax.add(index, np.int32(n)))
    else:
        index = lax.clamp(np.int32(0), index, np.int32(n - 1))
    return lax.select_n(index, *arrays[1:])


# --- compress, extract -------------------------------------------------------------------------


def _as_mask(name: str, condition: Any) -> Any:
    shape = shape_of(condition)
    if len(shape) != 1:
        raise ValueError(f"jnp.{name}: condition must be a 1D array, got shape {shape}")
    if aval(condition).dtype == np.bool_:
        return condition
    return lax.ne(condition, lax.full((), 0, aval(condition).dtype))


def compress(
    condition: Any,
    a: Any,
    axis: int | None = None,
    *,
    size: int | None = None,
    fill_value: Any = 0,
    out: None = None,
):
    """Keep the slices of ``a`` along ``axis`` where ``condition`` is true (jax.numpy.compress).

    Without ``size`` the result's length depends on the values, so
    ``condition`` must be concrete (a longer condition may only have False past
    the axis' end). With ``size`` the condition and the axis are cut to the
    shorter of the two and the first ``size`` kept slices are returned, padded
    with ``fill_value``; this traces.
    """
    check_arraylike("compress", condition, a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if axis is None:
        a = ravel(a)
        axis = 0
    a = asarray(a)
    a_aval = aval(a)
    axis = canonicalize_axis(axis, a_aval.ndim)
    length = a_aval.shape[axis]
    mask = _as_mask("compress", condition)
    if size is None:
        keep = np.flatnonzero(
            np.asarray(
                concrete_or_error(
                    mask,
                    "The size argument of jnp.compress must be statically specified to use "
                    "jnp.compress within transformations.",
                )
            )
        )
        if keep.size and keep[-1] >= length:
            raise ValueError(
                f"jnp.compress: condition contains entries that are out of bounds (condition "
                f"of length {shape_of(mask)[0]} for an axis of size {length})"
            )
        return take(a, keep.astype(np.int32), axis=axis)
    length = min(length, shape_of(mask)[0])
    size = operator.index(size)
    if not 0 <= size <= length:
        raise ValueError(
            "jnp.compress: size must be positive and not greater than the size of the array "
            f"axis; got size={size} for a.shape[axis]={length}"
        )
    mask = lax.slice(mask, (0,), (length,))
    (keep,) = nonzero(mask, size=size, fill_value=length)
    picked = take(a, keep, axis=axis, mode="clip")
    valid_shape = [1] * a_aval.ndim
    valid_shape[axis] = size
    valid = lax.reshape(lax.lt(keep, lax.full((), length, aval(keep).dtype)), tuple(valid_shape))
    out_shape = aval(picked).shape
    fill = broadcast_to(_like(fill_value, a_aval), out_shape)
    out = lax.select_n(broadcast_to(valid, out_shape), fill, picked)
    return lax.convert_element_type(out, a_aval.dtype)  # strongly typed, as JAX's with a size


def extract(condition: Any, arr: Any, *, size: int | None = None, fill_value: Any = 0):
    """Return the elements of ``arr`` where ``condition`` is true, flattened (jax.numpy.extract).

    Both are flattened; ``size`` and ``fill_value`` are ``compress``'s.
    """
    check_arraylike("extract", condition, arr)
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


# --- place, put --------------------------------------------------------------------------------


def place(arr: Any, mask: Any, vals: Any, *, inplace: bool = True):
    """Return ``arr`` with the positions where ``mask`` is true set from ``vals`` (jax.numpy.place).

    ``vals`` is used in order and repeated as needed, as numpy's ``place``;
    ``mask`` may be traced. modjax arrays are immutable: pass ``inplace=False``.
    """
    if inplace:
        raise _immutable("place")
    check_arraylike("place", arr, mask, vals)
    arr = asarray(arr)
    a_aval = aval(arr)
    if math.prod(shape_of(mask)) != a_aval.size:
        raise ValueError(
            f"jnp.place: arr and mask must be the same size, got shapes {a_aval.shape} and "
            f"{shape_of(mask)}"
        )
    flat_vals = ravel(_like(vals, a_aval))
    count = aval(flat_vals).shape[0]
    if count == 0:
        raise ValueError("jnp.place: cannot place values from an empty array")
    if a_aval.size == 0:
        return arr
    flat_mask = ravel(mask)
    if aval(flat_mask).dtype != np.bool_:
        flat_mask = lax.ne(flat_mask, lax.full((), 0, aval(flat_mask).dtype))
    # The k-th True of the mask takes vals[k % count].
    rank = lax.sub(cumsum(flat_mask, dtype=np.int32), np.int32(1))
    source = lax.rem(lax.max(rank, np.int32(0)), np.int32(count))
    picked = take(flat_vals, source, mode="clip")
    flat = lax.select_n(flat_mask, ravel(arr), picked)
    return lax.reshape(flat, a_aval.shape)


_PUT_MODES = {None: "clip", "clip": "clip", "wrap": "wrap"}


def put(a: Any, ind: Any, v: Any, mode: str | None = None, *, inplace: bool = True):
    """Return ``a`` with its flattened elements at ``ind`` set to ``v`` (jax.numpy.put).

    ``v`` is repeated (or cut) to the number of indices. With ``mode=None``
    negative indices count from the end and indices still out of range are
    clamped, as JAX's; ``"clip"`` clamps them (negative ones to 0) and
    ``"wrap"`` wraps them; of repeated indices the last write wins. modjax
    arrays are immutable: pass ``inplace=False``.
    """
    if inplace:
        raise _immutable("put")
    if mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    if mode not in _PUT_MODES:
        raise ValueError(f"jnp.put: mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    check_arraylike("put", a, ind, v)
    a = asarray(a)
    a_aval = aval(a)
    if a_aval.ndim == 0:
        raise ValueError("jnp.put: a must have at least one dimension, got a 0-d array")
    if kind(aval(ind).dtype) not in "iu":
        raise TypeError(f"jnp.put: indices must be integers, got {aval(ind).dtype}")
    flat_ind = ravel(ind)
    flat_v = ravel(_like(v, a_aval))
    n_ind, n_v = aval(flat_ind).shape[0], aval(flat_v).shape[0]
    if n_ind == 0 or n_v == 0 or a_aval.size == 0:
        return a
    if n_v != n_ind:
        flat_v = resize(flat_v, (n_ind,))
    flat = ravel(a)
    if _PUT_MODES[mode] == "wrap":
        flat_ind = lax.rem(flat_ind, lax.full((), a_aval.size, aval(flat_ind).dtype))
        if kind(aval(flat_ind).dtype) == "i":
            zero = lax.full((), 0, aval(flat_ind).dtype)
            flat_ind = lax.select_n(
                lax.lt(flat_ind, zero),
                flat_ind,
                lax.add(flat_ind, lax.full((), a_aval.size, aval(flat_ind).dtype)),
            )
    out = scatter_update(
        flat, (flat_ind,), flat_v, "set", mode="clip", wrap_negative_indices=mode is None
    )
    return lax.reshape(out, a_aval.shape)


# --- fill_diagonal -----------------------------------------------------------------------------


def fill_diagonal(a: Any, val: Any, wrap: bool = False, *, inplace: bool = True):
    """Return ``a`` with its main diagonal set to ``val`` (jax.numpy.fill_diagonal).

    ``val`` is repeated as needed. ``a`` is at least 2-d, with all dimensions
    equal beyond two. modjax arrays are immutable: pass ``inplace=False``.
    """
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    check_arraylike("fill_diagonal", a, val)
    a = asarray(a)
    a_aval = aval(a)
    shape = a_aval.shape
    if len(shape) < 2:
        raise ValueError(f"jnp.fill_diagonal: array must be at least 2-d, got shape {shape}")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise ValueError(
            f"jnp.fill_diagonal: all dimensions of input must be of equal length, got {shape}"
        )
    flat_val = ravel(_like(val, a_aval))
    if aval(flat_val).shape[0] == 0:
        raise ValueError("jnp.fill_diagonal: val must not be empty")
    n = min(shape)
    if n == 0:
        return a
    if aval(flat_val).shape[0] != n:
        flat_val = resize(flat_val, (n,))
    diagonal = np.arange(n, dtype=np.int32)
    return scatter_update(a, (diagonal,) * len(shape), flat_val, "set", unique_indices=True)


# Eagerly on device Arrays, one compiled program per signature (as JAX jits these).
compile_on_arrays(
    globals(),
    "clip where choose compress extract fill_diagonal place put",
    values={
        "clip": "min max",
        "where": "x y fill_value",
        "compress": "fill_value",
        "extract": "fill_value",
        "fill_diagonal": "val",
        "place": "vals",
        "put": "ind v",
    },
    statics={"clip": "", "where": "size"},
)
