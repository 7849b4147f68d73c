"""What the counter-based implementations philox2x32, philox4x32 and threefry4x32 share.

Each has a hash primitive (``philox2x32``, ``philox4x32``, ``threefry4x32``, as
JAX names them in jaxprs) taking key words then counter words, all uint32 of
broadcastable shapes (lax's rule), and giving as many output words as
counter words. ``hash_primitive`` builds one from a function emitting the
rounds on StableHLO values; the other helpers are the steps their seed,
split, fold-in and bits functions have in common, as JAX's modules write them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import partial

import numpy as np

from modjax.autodiff import defjvp_zero
from modjax.batching import defbroadcasting
from modjax.lowering import hlo, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive

from ..lax import structural as st
from ..lax._common import aval_of, broadcast_shapes, broadcast_to, full
from . import _threefry as tf
from ._threefry import rotate_left

__all__ = [
    "U32",
    "check_bits_request",
    "hash_primitive",
    "key_words",
    "mulhilo",
    "rotate_left",
    "seed_words",
    "stack_words",
]

U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)


def hash_primitive(name: str, num_args: int, num_out: int, rounds: Callable) -> Primitive:
    """Declare the hash primitive ``name``: ``num_args`` uint32 operands, ``num_out`` results.

    ``rounds(words, aval)`` emits the hash on the operands (StableHLO values
    already broadcast to ``aval``, the result's aval) and returns the output
    words. The primitive has no derivative and batches by broadcasting.
    """

    def abstract_eval(*avals):
        if len(avals) != num_args:
            raise TypeError(f"{name}_p expects {num_args} arguments, got {len(avals)}.")
        shape = broadcast_shapes(name, [a.shape for a in avals])
        if any(a.dtype != U32 for a in avals):
            raise TypeError(f"Arguments to {name} must have uint32 type, got {avals}")
        return [ShapedArray(shape, U32)] * num_out

    def lowering(ctx, *operands):
        aval = ctx.avals_out[0]
        words = [
            broadcast_to(v, a, aval.shape) for v, a in zip(operands, ctx.avals_in, strict=True)
        ]
        return list(rounds(words, aval))

    prim = Primitive(name)
    prim.multiple_results = True
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(partial(apply_primitive, prim))
    register_lowering(prim, lowering)
    defjvp_zero(prim)
    defbroadcasting(prim)
    return prim


# --- StableHLO steps of the rounds -----------------------------------------------------------


def mulhilo(multiplier: int, x, aval: ShapedArray):
    """Return the low and high words of the 64-bit product ``multiplier * x`` (uint32 ``x``)."""
    wide = aval.update(dtype=_U64)
    product = hlo.multiply(hlo.convert(ir_type(wide), x), full(multiplier, wide))
    out = ir_type(aval)
    return hlo.convert(out, product), hlo.convert(
        out, hlo.shift_right_logical(product, full(32, wide))
    )


# --- steps of the key functions --------------------------------------------------------------


def key_words(key, n: int):
    """Return the ``n`` uint32 scalar words of one raw key ``uint32[n]``."""
    return [st.reshape(st.slice(key, (i,), (i + 1,)), ()) for i in range(n)]


def seed_words(seed):
    """Return a seed's high and low 32-bit words as uint32 scalars (as JAX's seeds split it).

    They are threefry2x32's key of the seed: a zero high word for seeds of 32
    bits or fewer, the low word sign-extended from narrower types. Raises JAX's
    TypeError for a non-scalar or non-integer seed.
    """
    return key_words(tf.threefry_seed(seed), 2)


def stack_words(words):
    """Stack same-shaped uint32 words along a new last axis (a key's data per element)."""
    ndim = aval_of(words[0]).ndim
    return st.concatenate([st.expand_dims(w, (ndim,)) for w in words], ndim)


def check_bits_request(name: str, key, key_shape: tuple[int, ...], bit_width: int, shape):
    """Raise JAX's errors for bad random-bits arguments; return ``shape`` as a tuple."""
    key_aval = aval_of(key)
    if key_aval.shape != key_shape or key_aval.dtype != U32:
        raise TypeError(f"{name}_random_bits got invalid prng key.")
    if bit_width not in tf.UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    shape = tuple(shape)
    if math.prod(shape) > 2**64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    return shape
