"""Shapes, joins, selection and products: ``reshape``, ``transpose``, ``where``, ``matmul``, ...

Shape errors raise TypeError where JAX does (a bad reshape, a bad matmul
contraction), ValueError for bad axes.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np
from modjax import lax
from modjax.lax._common import kind

from . import _util
from ._util import (
    ARRAY_TYPES,
    aval,
    canonical_dtype,
    canonicalize_axis,
    check_arraylike,
    convert,
    promote_args,
    promote_dtypes,
    shape_of,
)

__all__ = [
    "astype",
    "broadcast_shapes",
    "broadcast_to",
    "clip",
    "concatenate",
    "copy",
    "dot",
    "expand_dims",
    "matmul",
    "moveaxis",
    "ndim",
    "ravel",
    "reshape",
    "shape",
    "size",
    "squeeze",
    "stack",
    "swapaxes",
    "transpose",
    "where",
]


def _array(a: Any, name: str):
    check_arraylike(name, a)
    if isinstance(a, ARRAY_TYPES):
        return a
    from ._creation import asarray

    return asarray(a)


def shape(a: Any) -> tuple[int, ...]:
    """Return the shape of ``a`` (jax.numpy.shape)."""
    return shape_of(a)


def ndim(a: Any) -> int:
    """Return the number of dimensions of ``a`` (jax.numpy.ndim)."""
    return len(shape_of(a))


def size(a: Any, axis: int | None = None) -> int:
    """Return the number of elements of ``a``, or along ``axis`` (jax.numpy.size)."""
    s = shape_of(a)
    return math.prod(s) if axis is None else s[canonicalize_axis(axis, len(s))]


def _new_shape(new: Any, size_: int, old: tuple[int, ...]) -> tuple[int, ...]:
    dims = [operator.index(d) for d in new] if isinstance(new, Sequence) else [operator.index(new)]
    unknown = [i for i, d in enumerate(dims) if d == -1]
    if len(unknown) > 1:
        raise TypeError(
            f"can only specify one unknown axis size with a `-1` value, got {tuple(dims)}"
        )
    if any(d < -1 for d in dims):
        raise TypeError(f"reshape new sizes must be non-negative or -1, got {tuple(dims)}")
    if unknown:
        known = math.prod(d for d in dims if d != -1)
        if known == 0 or size_ % known:
            raise TypeError(
                f"cannot reshape array of shape {old} (size {size_}) into shape "
                f"{tuple(dims)} because the product of specified axis sizes ({known}) does not "
                f"evenly divide {size_}"
            )
        dims[unknown[0]] = size_ // known
    if math.prod(dims) != size_:
        shape_text = dims[0] if len(dims) == 1 and not isinstance(new, Sequence) else tuple(dims)
        raise TypeError(
            f"cannot reshape array of shape {old} (size {size_}) into shape {shape_text} "
            f"(size {math.prod(dims)})"
        )
    return tuple(dims)


def reshape(a: Any, shape: Any = None, order: str = "C", *, newshape: Any = None, copy=None):  # noqa: A002
    """Give ``a`` a new shape with as many elements; one size may be -1 (jax.numpy.reshape)."""
    if shape is None:
        shape = newshape
    if shape is None:
        raise TypeError("reshape() missing the required argument 'shape'")
    a = _array(a, "reshape")
    av = aval(a)
    dims = _new_shape(shape, av.size, av.shape)
    if order == "C":
        return lax.reshape(a, dims)
    if order == "F":
        return transpose(lax.reshape(transpose(a), dims[::-1]))
    raise NotImplementedError(f"reshape order={order!r} is not supported")


def ravel(a: Any, order: str = "C"):
    """Flatten ``a`` to one dimension (jax.numpy.ravel)."""
    return reshape(a, (-1,), order)


def transpose(a: Any, axes: Sequence[int] | None = None):
    """Permute the axes of ``a``; reverse them by default (jax.numpy.transpose)."""
    a = _array(a, "transpose")
    n = aval(a).ndim
    if axes is None:
        perm = tuple(range(n - 1, -1, -1))
    else:
        perm = tuple(canonicalize_axis(ax, n) for ax in axes)
        if sorted(perm) != list(range(n)):
            raise ValueError(f"axes {tuple(axes)} don't match array of dimension {n}")
    return lax.transpose(a, perm)


def swapaxes(a: Any, axis1: int, axis2: int):
    """Interchange two axes of ``a`` (jax.numpy.swapaxes)."""
    a = _array(a, "swapaxes")
    n = aval(a).ndim
    perm = list(range(n))
    i, j = canonicalize_axis(axis1, n), canonicalize_axis(axis2, n)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, tuple(perm))


def moveaxis(a: Any, source: int | Sequence[int], destination: int | Sequence[int]):
    """Move axes of ``a`` to new positions, the others keeping their order (jax.numpy.moveaxis)."""
    a = _array(a, "moveaxis")
    n = aval(a).ndim
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    src = [canonicalize_axis(s, n) for s in src]
    dst = [canonicalize_axis(d, n) for d in dst]
    if len(src) != len(dst):
        raise ValueError(
            "`source` and `destination` arguments must have the same number of elements"
        )
    order = [i for i in range(n) if i not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        order.insert(d, s)
    return lax.transpose(a, tuple(order))


def squeeze(a: Any, axis: int | Sequence[int] | None = None):
    """Remove size-1 axes of ``a`` (all of them, or those of ``axis``) (jax.numpy.squeeze)."""
    a = _array(a, "squeeze")
    s = aval(a).shape
    if axis is None:
        axes = tuple(i for i, d in enumerate(s) if d == 1)
    else:
        axes = _util.canonicalize_axes(axis, len(s))
        for ax in axes:
            if s[ax] != 1:
                raise ValueError(
                    "cannot select an axis to squeeze out which has size not equal to one, got "
                    f"shape={s} and dimensions={axes}"
                )
    return lax.squeeze(a, axes)


def expand_dims(a: Any, axis: int | Sequence[int]):
    """Insert size-1 axes at the positions ``axis`` of the result (jax.numpy.expand_dims)."""
    a = _array(a, "expand_dims")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return lax.expand_dims(a, axes)


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """Return the shape that ``shapes`` broadcast to (jax.numpy.broadcast_shapes)."""
    try:
        return _util.broadcast_shapes("broadcast_shapes", *[tuple(s) for s in shapes])
    except TypeError as e:
        raise ValueError(str(e)) from None


def broadcast_to(array: Any, shape: Any):
    """Broadcast ``array`` to ``shape`` with numpy's rules (jax.numpy.broadcast_to)."""
    array = _array(array, "broadcast_to")
    shape = (operator.index(shape),) if not isinstance(shape, Sequence) else tuple(shape)
    return _util.broadcast_to(array, tuple(operator.index(d) for d in shape))


def concatenate(arrays: Sequence, axis: int | None = 0, dtype: Any = None):
    """Join ``arrays`` along an existing ``axis``, promoting dtypes (jax.numpy.concatenate)."""
    arrays = [_array(a, "concatenate") for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to concatenate.")
    if axis is None:
        arrays = [ravel(a) for a in arrays]
        axis = 0
    arrays = promote_dtypes(*arrays)
    if dtype is not None:
        arrays = [convert(a, canonical_dtype(dtype)) for a in arrays]
    n = aval(arrays[0]).ndim
    if n == 0:
        raise ValueError("Zero-dimensional arrays cannot be concatenated.")
    return lax.concatenate(arrays, canonicalize_axis(axis, n))


def stack(arrays: Sequence, axis: int = 0, dtype: Any = None):
    """Join ``arrays`` of one shape along a new ``axis`` (jax.numpy.stack)."""
    arrays = [_array(a, "stack") for a in arrays]
    if not arrays:
        raise ValueError("Need at least one array to stack.")
    shapes = {aval(a).shape for a in arrays}
    if len(shapes) != 1:
        raise ValueError("All input arrays must have the same shape.")
    n = aval(arrays[0]).ndim + 1
    axis = canonicalize_axis(axis, n)
    return concatenate([lax.expand_dims(a, (axis,)) for a in arrays], axis, dtype)


def where(condition: Any, x: Any = None, y: Any = None, /, *, size=None, fill_value=None):
    """Pick ``x`` where ``condition`` is true and ``y`` elsewhere, broadcasting (jax.numpy.where).

    The one-argument form (the indices of true elements) needs a dynamic
    shape and is not supported yet.
    """
    if x is None and y is None:
        raise NotImplementedError(
            "jnp.where(condition) (the indices of nonzero elements) is not supported yet: its "
            "shape depends on the data"
        )
    if x is None or y is None:
        raise ValueError(
            "Either both or neither of the x and y arguments should be provided to jnp.where"
        )
    check_arraylike("where", condition, x, y)
    x, y = promote_dtypes(x, y)
    shapes = [shape_of(condition), shape_of(x), shape_of(y)]
    out_shape = _util.broadcast_shapes("where", *shapes)
    cond_aval = aval(condition)
    if cond_aval.dtype != np.bool_:
        condition = lax.ne(condition, np.zeros((), cond_aval.dtype))
    condition, x, y = (_util.broadcast_to(v, out_shape) for v in (condition, x, y))
    return lax.select_n(condition, y, x)


def clip(
    arr: Any = None,
    /,
    min: Any = None,
    max: Any = None,
    *,
    a: Any = None,
    a_min: Any = None,
    a_max: Any = None,
):  # noqa: A002
    """Limit the values of ``arr`` to ``[min, max]`` (either may be None) (jax.numpy.clip)."""
    arr = a if arr is None else arr
    min = a_min if min is None else min  # noqa: A001
    max = a_max if max is None else max  # noqa: A001
    check_arraylike("clip", arr)
    if min is not None:
        arr = lax.max(*promote_args("clip", arr, min))
    if max is not None:
        arr = lax.min(*promote_args("clip", arr, max))
    return arr


def astype(x: Any, dtype: Any, /, *, copy: bool = False, device=None):
    """Convert ``x`` to ``dtype`` (jax.numpy.astype); the result is strongly typed."""
    x = _array(x, "astype")
    return lax.convert_element_type(x, canonical_dtype(dtype))


def copy(a: Any, order: str | None = None):
    """Return a copy of ``a`` (jax.numpy.copy)."""
    return lax.copy(_array(a, "copy"))


# --- products --------------------------------------------------------------------------------


def _product_operands(name: str, a: Any, b: Any):
    check_arraylike(name, a, b)
    a, b = promote_dtypes(_array(a, name), _array(b, name))
    dtype = aval(a).dtype
    preferred = None if kind(dtype) == "b" else dtype
    return a, b, preferred


def matmul(a: Any, b: Any, *, precision=None, preferred_element_type=None):
    """Matrix product with numpy's broadcasting of leading (batch) dimensions (jax.numpy.matmul).

    1-d operands are treated as a row (left) or column (right) vector, and
    their added dimension is removed from the result.
    """
    a, b, preferred = _product_operands("matmul", a, b)
    if preferred_element_type is not None:
        preferred = canonical_dtype(preferred_element_type)
    sa, sb = aval(a).shape, aval(b).shape
    for i, s in enumerate((sa, sb)):
        if not s:
            raise ValueError(
                f"matmul input operand {i} must have ndim at least 1, but it has ndim 0"
            )
    a_vec, b_vec = len(sa) == 1, len(sb) == 1
    if a_vec:
        a = lax.expand_dims(a, (0,))
    if b_vec:
        b = lax.expand_dims(b, (1,))
    sa, sb = aval(a).shape, aval(b).shape
    try:
        batch = _util.broadcast_shapes("matmul", sa[:-2], sb[:-2])
    except TypeError:
        raise ValueError(
            f"Incompatible types for matmul arguments: {aval(a).str_short()} and "
            f"{aval(b).str_short()}"
        ) from None
    nb = len(batch)
    a = _util.broadcast_to(a, batch + sa[-2:])
    b = _util.broadcast_to(b, batch + sb[-2:])
    batch_dims = tuple(range(nb))
    out = lax.dot_general(
        a,
        b,
        (((nb + 1,), (nb,)), (batch_dims, batch_dims)),
        precision=precision,
        preferred_element_type=preferred,
    )
    squeeze_dims = (nb,) * a_vec + (nb + 1,) * b_vec
    if squeeze_dims:
        out = lax.squeeze(out, squeeze_dims)
    return out


def dot(a: Any, b: Any, *, precision=None, preferred_element_type=None):
    """Compute a dot product with numpy's rules (jax.numpy.dot).

    Scalars multiply; otherwise ``a``'s last axis is contracted.

    For N-d ``a`` and M-d ``b`` (M >= 2) the contraction is with ``b``'s
    second-to-last axis.
    """
    a, b, preferred = _product_operands("dot", a, b)
    if preferred_element_type is not None:
        preferred = canonical_dtype(preferred_element_type)
    na, nb = aval(a).ndim, aval(b).ndim
    if na == 0 or nb == 0:
        from ._ufuncs import multiply

        return multiply(a, b)
    contract_b = 0 if nb == 1 else nb - 2
    return lax.dot_general(
        a,
        b,
        (((na - 1,), (contract_b,)), ((), ())),
        precision=precision,
        preferred_element_type=preferred,
    )
