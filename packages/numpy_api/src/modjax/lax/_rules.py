"""Shared helpers of the lax primitives' transformation rules (JVP, transpose, batching).

Each primitive registers its rules next to its declaration, in the module of
its topic; this file holds the few pieces several of those rules share:
constants and zeros of an operand's dtype, the broadcasting of a tangent to a
binary op's result and its inverse for cotangents (``unbroadcast``), and the
batch size of a rule's operands.

The helpers bind lax primitives of every module, so they import them when
called: the modules that declare those primitives import this one.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from modjax.autodiff import Zero
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import to_aval

__all__ = [
    "batch_size",
    "brcast",
    "broadcast_in_dim",
    "const",
    "instantiate",
    "linear_jvp",
    "unbroadcast",
    "zeros",
]


_PYTHON_TYPES = {"b": bool, "i": int, "f": float, "c": complex}


def _scalar(aval: ShapedArray, value):
    """``value`` as a rank-0 constant of ``aval``'s dtype and weak type.

    A weakly typed constant is a Python scalar (weak by nature) when its default
    dtype is ``aval``'s; every other constant is a numpy scalar.
    """
    if aval.weak_type:
        python_type = _PYTHON_TYPES.get(aval.dtype.kind)
        if python_type is not None:
            scalar = python_type(value)
            if dtypes.python_scalar_dtype(scalar) == aval.dtype:
                return scalar
    return np.asarray(value, aval.dtype)[()]


def const(x, value):
    """Return ``value`` as a rank-0 constant of ``x``'s dtype (JAX's ``_const``).

    Weakly typed when ``x`` is (so that derivatives of weakly typed values stay
    weakly typed, as in JAX); no equation is bound either way.
    """
    return _scalar(to_aval(x), value)


def strong_const(x, value):
    """Return ``value`` as a rank-0 constant of ``x``'s dtype, weak only for a weak 0-d ``x``.

    JAX's ``_const`` exactly: derivative rules written with it (``sqrt``'s 0.5,
    ``tan``'s 1, ...) make the tangent of a weakly typed array strong, and of a weakly
    typed scalar weak, as JAX's do; ``const`` keeps every weak ``x`` weak (JAX's
    ``_one``/``full_like``).
    """
    aval = to_aval(x)
    if aval.weak_type and not aval.shape:
        return const(x, value)
    return np.asarray(value, aval.dtype)[()]


def zeros(aval: ShapedArray):
    """Return zeros of type ``aval`` made of lax primitives (lowerable in any program)."""
    zero = _scalar(aval, 0)
    if not aval.shape:
        return zero
    from .structural import broadcast_in_dim_p, typed_like

    # Typed as ``aval`` says (a constant made under jax.set_mesh is typed on the mesh).
    out = broadcast_in_dim_p.bind(zero, shape=aval.shape, broadcast_dimensions=())
    return typed_like(out, aval)


def instantiate(tangent):
    """Return ``tangent``, or lax zeros in place of a symbolic ``Zero``."""
    return zeros(tangent.aval) if type(tangent) is Zero else tangent


def linear_jvp(prim):
    """Return the JVP rule of a primitive linear in all its operands (``deflinear``'s JVP).

    Symbolic zero tangents of some operands become lax zeros.
    """

    def rule(primals, tangents, **params):
        return prim.bind(*primals, **params), prim.bind(*map(instantiate, tangents), **params)

    return rule


def brcast(x, shape: tuple[int, ...]):
    """Broadcast an operand of a binary op (rank 0, or size-1 axes) to the result ``shape``."""
    aval = to_aval(x)
    if aval.shape == shape:
        return x
    from .structural import broadcast_in_dim_p

    dims = tuple(range(len(shape))) if aval.shape else ()
    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def broadcast_in_dim(x, shape: tuple[int, ...], dims: tuple[int, ...]):
    """Bind ``broadcast_in_dim`` (for the rules of modules that cannot import it at load time)."""
    from .structural import broadcast_in_dim_p

    return broadcast_in_dim_p.bind(x, shape=shape, broadcast_dimensions=dims)


def unbroadcast(aval: ShapedArray, ct):
    """Sum the cotangent ``ct`` of a binary op's result back to its operand's type ``aval``.

    The transpose of ``brcast``: axes the operand broadcast (all of them for a
    rank-0 operand, its size-1 axes otherwise) are summed out.
    """
    shape = to_aval(ct).shape
    if shape == aval.shape:
        return ct
    from .reductions import reduce_sum_p
    from .structural import reshape

    if not aval.shape:
        axes = tuple(range(len(shape)))
    else:
        axes = tuple(i for i, (a, c) in enumerate(zip(aval.shape, shape, strict=True)) if a != c)
    return reshape(reduce_sum_p.bind(ct, axes=axes), aval.shape)


def batch_size(args: Sequence, dims: Sequence[int | None]) -> int:
    """Return the size of the batch axis of the batched operands of a batching rule."""
    for x, d in zip(args, dims, strict=True):
        if d is not None:
            return to_aval(x).shape[d]
    raise ValueError("batching rule called without a batched operand")
