"""Small helpers of Pallas kernels: ``when``, ``loop``, ``cdiv``, ``run_scoped``, ...

All are compositions of modjax's lax and reference operations, so kernels using
them work under ``jit``, ``vmap`` and inside ``pallas_call``'s grid loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from modjax import lax, tree_util
from modjax import numpy as jnp
from modjax.lax.state import new_ref

__all__ = [
    "align_to",
    "broadcast_to",
    "cdiv",
    "debug_print",
    "empty",
    "empty_like",
    "empty_ref_like",
    "loop",
    "multiple_of",
    "next_power_of_2",
    "reciprocal",
    "run_scoped",
    "strides_from_shape",
    "uninitialized_value",
    "when",
]


def uninitialized_value(shape: Sequence[int], dtype: Any):
    """What interpret mode puts in unwritten outputs and padding, as JAX's does.

    NaN for inexact dtypes, the smallest value for integers, False for booleans,
    so reads of such elements are easy to spot.
    """
    dtype = np.dtype(dtype)
    if np.issubdtype(dtype, np.inexact):
        fill: Any = np.nan
    elif np.issubdtype(dtype, np.integer):
        fill = np.iinfo(dtype).min
    elif dtype == np.bool_:
        fill = False
    else:
        raise NotImplementedError(f"pallas_call: no uninitialized value for dtype {dtype}")
    return jnp.full(tuple(shape), fill, dtype)


def when(condition: Any, /) -> Callable[[Callable[[], None]], None]:
    """Decorator: run the decorated function now if ``condition`` holds.

    A Python bool decides at trace time; an array condition runs the body under
    ``lax.cond`` (its writes to references are kept only where the condition holds).
    """

    def _wrapped(f: Callable[[], None]) -> None:
        if isinstance(condition, bool):
            if condition:
                f()
        else:
            lax.cond(condition, f, lambda: None)

    return _wrapped


def _is_concrete_int(x: Any) -> bool:
    return isinstance(x, (int, np.integer))


def loop(
    lower: Any,
    upper: Any,
    *,
    init_carry: Any = None,
    step: Any = 1,
    unroll: int | bool | None = None,
) -> Callable[[Callable[..., Any]], Any]:
    """Decorator: run the body for ``lower, lower + step, ...`` below ``upper`` (a fori_loop)."""
    if all(map(_is_concrete_int, (lower, upper, step))):
        lower, upper, step, zero = int(lower), int(upper), int(step), 0
    else:
        idx_type = jnp.result_type(lower, upper, step)
        lower, upper, step = (lax.convert_element_type(v, idx_type) for v in (lower, upper, step))
        zero = jnp.array(0, dtype=idx_type)

    def decorator(body: Callable[..., Any]) -> Any:
        if init_carry is None:

            def body_fn(idx, carry):
                body(lower + idx * step)
                return carry
        else:

            def body_fn(idx, carry):
                return body(lower + idx * step, carry)

        kwargs = {} if unroll is None else {"unroll": unroll}
        return lax.fori_loop(zero, cdiv(upper - lower, step), body_fn, init_carry, **kwargs)

    return decorator


def cdiv(a: Any, b: Any) -> Any:
    """Ceiling division of ``a`` by ``b`` (ints give an int, arrays an array)."""
    if _is_concrete_int(a) and _is_concrete_int(b):
        return (int(a) + int(b) - 1) // int(b)
    return lax.div(a + (b - 1), b)


def align_to(a: Any, alignment: Any) -> Any:
    """Round ``a`` up to a multiple of ``alignment``."""
    return cdiv(a, alignment) * alignment


def strides_from_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Row-major strides, in elements, of an array of ``shape``."""
    size = int(np.prod(shape))
    strides = []
    for s in shape:
        size = size // s
        strides.append(int(size))
    return tuple(strides)


def next_power_of_2(x: int) -> int:
    """The smallest power of two at least ``x``."""
    if x < 0:
        raise ValueError("`next_power_of_2` requires a non-negative integer.")
    return 1 if x == 0 else 2 ** (x - 1).bit_length()


def multiple_of(x: Any, values: Sequence[int] | int) -> Any:
    """A compiler hint that ``x`` is a multiple of ``values``; returns ``x`` unchanged."""
    del values
    return x


def reciprocal(x: Any, *, approx: bool = False, full_range: bool = True) -> Any:
    """``1 / x`` (``approx`` rounds the input through bfloat16, as JAX's lowering does)."""
    del full_range
    if approx:
        return jnp.reciprocal(jnp.asarray(x).astype(jnp.bfloat16)).astype(jnp.float32)
    return jnp.reciprocal(x)


def debug_print(fmt: str, *args: Any) -> None:
    """Print from inside a kernel (``jax.debug.print`` with ``{}`` placeholders)."""
    from modjax import debug

    debug.print(fmt, *args)


def empty(shape: Any, dtype: Any, *, out_sharding: Any = None) -> Any:
    """An array of ``shape`` and ``dtype`` whose contents are not to be relied on."""
    return lax.empty(shape, dtype, out_sharding=out_sharding)


def empty_like(x: Any) -> Any:
    """``empty`` of each leaf's shape and dtype, in ``x``'s pytree structure."""
    return tree_util.tree_map(lambda leaf: empty(leaf.shape, leaf.dtype), x)


def empty_ref_like(x: Any) -> Any:
    """A new reference of ``x``'s shape and dtype (a ``MemoryRef`` or ``ShapeDtypeStruct``)."""
    from modjax.experimental.pallas.memory import MemoryRef, MemorySpace
    from modjax.tracecore.abstract import ShapeDtypeStruct

    if isinstance(x, MemoryRef):
        space = x.memory_space
    elif isinstance(x, ShapeDtypeStruct):
        space = MemorySpace.ANY
    else:
        raise ValueError(f"empty_ref_like does not support {type(x)}")
    del space  # memory spaces mean nothing to modjax's references
    return new_ref(empty_like(x))


def broadcast_to(a: Any, shape: tuple[int, ...]) -> Any:
    """``jnp.broadcast_to`` (Pallas' own primitive for it lowers the same in interpret mode)."""
    a = jnp.asarray(a)
    if a.shape == tuple(shape):
        return a
    return jnp.broadcast_to(a, shape)


def run_scoped(f: Callable[..., Any], *types: Any, collective_axes: Any = (), **kw_types: Any):
    """Call ``f`` with new references of the given types (anything with shape and dtype).

    The references live for the call only; their initial contents are the
    uninitialized value (NaN, the smallest integer, False).
    """
    if collective_axes not in ((), None):
        raise NotImplementedError(
            "jax.experimental.pallas.run_scoped with collective_axes is not implemented in "
            "modjax yet"
        )

    def alloc(t: Any) -> Any:
        return new_ref(uninitialized_value(t.shape, t.dtype))

    is_type = lambda t: hasattr(t, "shape") and hasattr(t, "dtype")  # noqa: E731
    refs = tree_util.tree_map(alloc, types, is_leaf=is_type)
    kw_refs = tree_util.tree_map(alloc, kw_types, is_leaf=is_type)
    return f(*refs, **kw_refs)


def dot(
    a: Any,
    b: Any,
    trans_a: bool = False,
    trans_b: bool = False,
    allow_tf32: bool | None = None,
    precision: Any = None,
) -> Any:
    """The product of 2-D arrays, optionally transposed (ints give int32, else float32/64)."""
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError("`a` and `b` must be 2D arrays.")
    if allow_tf32 is not None:
        if precision is not None:
            raise ValueError("Only one of allow_tf32 and precision can be specified")
        precision = lax.Precision.HIGH if allow_tf32 else lax.Precision.HIGHEST
    dtype = jnp.promote_types(a.dtype, b.dtype)
    if jnp.issubdtype(dtype, jnp.integer):
        out_dtype: Any = jnp.int32
    elif dtype == jnp.float64:
        out_dtype = jnp.float64
    else:
        out_dtype = jnp.float32
    dims = (((0 if trans_a else 1,), (1 if trans_b else 0,)), ((), ()))
    return lax.dot_general(
        a, b, dimension_numbers=dims, precision=precision, preferred_element_type=out_dtype
    )
