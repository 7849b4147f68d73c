"""The threefry2x32 bit generator and JAX's algorithms on raw threefry key data.

``threefry2x32_p`` is the Threefry-2x32 block cipher with 20 rounds (Salmon
et al., "Parallel random numbers: as easy as 1, 2, 3", 2011), the hash behind
JAX's default PRNG: it maps a key ``(k1, k2)`` and a counter ``(x1, x2)`` of
uint32 arrays (broadcast against each other) to two uint32 arrays. It lowers
to StableHLO integer ops (add, xor, shifts, or), runs eagerly through
runtime's ``apply_primitive``, batches by broadcasting, and has no derivative
(its integer outputs get ``float0`` zero tangents, as JAX's).

``iota_2x32_shape_p`` numbers the elements of a shape in row-major order as a
64-bit count, returned as two uint32 arrays (high and low words), so the
counters are the same with and without x64.

On top of them, the functions below compute on raw key data (uint32 arrays
whose last axis, of size 2, is one key) exactly as JAX 0.10 does with
``jax_threefry_partitionable`` on (the default; ``threefry_partitionable`` is
that option):

* ``threefry_seed``: a 64-bit seed is split into its high and low words (a
  32-bit seed has a zero high word);
* ``threefry_random_bits``: element ``i`` (row-major) hashes the counter
  ``i``; 32-bit outputs are the xor of the two words, 8/16-bit ones its low
  bits, 64-bit ones the two words side by side;
* ``threefry_split``: key ``i`` of the result is the hash of counter ``i``;
* ``threefry_fold_in``: the hash of the seed made from ``data``.

With the option off, split and bits use JAX's original scheme instead
(``threefry_2x32``): the counters ``0 .. n-1`` (``n`` words) are hashed as two
halves, the first half as the first word of each pair; split takes ``2 * num``
words, bits ``ceil(bit_width * size / 32)`` words, unpacked low bits first for
8/16-bit results and as (high half, low half) for 64-bit ones. Fold-in is the
same in both schemes.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

from modjax.autodiff import defjvp_zero
from modjax.batching import defbroadcasting
from modjax.lowering import hlo, ir_type, lower_fun, register_lowering
from modjax.runtime import apply_primitive, clear_caches
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.config import config
from modjax.tracecore.core import Primitive

from ..lax import elementwise as ew
from ..lax import structural as st
from ..lax._common import aval_of, broadcast_shapes, broadcast_to, constant, full

__all__ = [
    "bits_of_words",
    "iota_2x32_shape",
    "iota_2x32_shape_p",
    "rotate_left",
    "threefry2x32",
    "threefry2x32_p",
    "threefry_2x32",
    "threefry_fold_in",
    "threefry_partitionable",
    "threefry_random_bits",
    "threefry_seed",
    "threefry_split",
    "xor_all",
]

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
UINT_DTYPES = {
    8: np.dtype(np.uint8),
    16: np.dtype(np.uint16),
    32: _U32,
    64: _U64,
}

# --- threefry2x32 ----------------------------------------------------------------------------

# The rotation distances of the two alternating groups of four rounds, and the key-schedule
# parity constant, from the Threefry specification (Random123's threefry.h).
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


def _threefry2x32_abstract_eval(k1, k2, x1, x2):
    avals = (k1, k2, x1, x2)
    if any(a.dtype != _U32 for a in avals):
        raise TypeError(
            f"threefry2x32 requires uint32 arguments, got {[str(a.dtype) for a in avals]}"
        )
    shape = broadcast_shapes("threefry2x32", [a.shape for a in avals])
    return [ShapedArray(shape, _U32)] * 2


def rotate_left(x, distance: int, aval: ShapedArray):
    """Rotate the uint32 words ``x`` left by ``distance`` (1 to 31) bits."""
    left = hlo.shift_left(x, full(distance, aval))
    right = hlo.shift_right_logical(x, full(32 - distance, aval))
    return hlo.or_(left, right)


def _threefry2x32_lowering(ctx, k1, k2, x1, x2):
    aval = ctx.avals_out[0]
    k1, k2, x1, x2 = (
        broadcast_to(v, a, aval.shape) for v, a in zip((k1, k2, x1, x2), ctx.avals_in, strict=True)
    )
    ks = [k1, k2, hlo.xor(hlo.xor(k1, k2), full(_PARITY, aval))]
    x = [hlo.add(x1, ks[0]), hlo.add(x2, ks[1])]
    # Five groups of four rounds; after group i the key schedule injects keys (i+1, i+2)
    # mod 3, the second one plus the group number.
    for group in range(5):
        for distance in _ROTATIONS[group % 2]:
            x[0] = hlo.add(x[0], x[1])
            x[1] = hlo.xor(rotate_left(x[1], distance, aval), x[0])
        x[0] = hlo.add(x[0], ks[(group + 1) % 3])
        x[1] = hlo.add(hlo.add(x[1], ks[(group + 2) % 3]), full(group + 1, aval))
    return x


def _rotate_left_by(x, distance):
    """``x`` rotated left by a uint32 ``distance`` (a traced scalar inside the rolled loop)."""
    left = ew.shift_left(x, distance)
    return ew.bitwise_or(left, ew.shift_right_logical(x, ew.sub(np.uint32(32), distance)))


def _threefry2x32_rolled(k1, k2, x1, x2):
    """The hash as JAX lowers it on CPU: the five groups of rounds as a five-step loop.

    Each step runs one group of four rounds with the rotation distances and keys it
    carries, then passes them on rotated. The program is JAX's, so XLA fuses what
    consumes the bits as it does for JAX (a gradient's reductions then round as JAX's);
    it also compiles faster than the unrolled hash.
    """
    from modjax.numpy import broadcast_shapes, broadcast_to

    from ..lax.control_flow import fori_loop

    # The loop carries the keys and the words at fixed shapes (as JAX's does: there the
    # keys are scalars); batched operands may come with any broadcastable shapes.
    key_shape = broadcast_shapes(k1.shape, k2.shape)
    shape = broadcast_shapes(key_shape, x1.shape, x2.shape)
    k1, k2 = (broadcast_to(k, key_shape) for k in (k1, k2))
    x1, x2 = (broadcast_to(v, shape) for v in (x1, x2))
    ks = [k1, k2, k1 ^ k2 ^ np.uint32(_PARITY)]
    x = [x1 + ks[0], x2 + ks[1]]

    def group(i, state):
        x, ks, rotations = state
        for distance in rotations[0]:
            x = [x[0] + x[1], x[1]]
            x = [x[0], x[0] ^ _rotate_left_by(x[1], distance)]
        step = ew.convert_element_type(i + 1, _U32)
        x = [x[0] + ks[0], x[1] + ks[1] + step]
        return x, ks[1:] + ks[:1], rotations[1:] + rotations[:1]

    rotations = [np.array(r, _U32) for r in _ROTATIONS]
    x, _, _ = fori_loop(0, 5, group, (x, ks[1:] + ks[:1], rotations))
    return x


threefry2x32_p = Primitive("threefry2x32")
threefry2x32_p.multiple_results = True
threefry2x32_p.def_abstract_eval(_threefry2x32_abstract_eval)
threefry2x32_p.def_impl(partial(apply_primitive, threefry2x32_p))
register_lowering(threefry2x32_p, _threefry2x32_lowering)
register_lowering(
    threefry2x32_p, lower_fun(_threefry2x32_rolled, multiple_results=True), platform="cpu"
)
defjvp_zero(threefry2x32_p)
defbroadcasting(threefry2x32_p)


def threefry2x32(k1, k2, x1, x2):
    """Hash counters ``(x1, x2)`` with key ``(k1, k2)`` (JAX's ``prng.threefry2x32_p``).

    All four are uint32 arrays of broadcastable shapes (lax's rule: equal ranks
    with size-1 axes, or rank 0); return the two uint32 output words.
    """
    return tuple(threefry2x32_p.bind(k1, k2, x1, x2))


# --- iota_2x32_shape -------------------------------------------------------------------------


def _iota_2x32_shape_abstract_eval(*, shape):
    return [ShapedArray(shape, _U32)] * 2


def _iota_2x32_shape_lowering(ctx, *, shape):
    aval = ShapedArray(shape, _U64)
    if not shape:
        count = constant(0, _U64)
    else:
        # The row-major index is the sum of each axis' iota times its stride, in 64 bits.
        strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
        count = None
        for d, stride in enumerate(strides):
            term = hlo.iota(ir_type(aval), d)
            if stride != 1:
                term = hlo.multiply(term, full(stride, aval))
            count = term if count is None else hlo.add(count, term)
    out = ir_type(ShapedArray(shape, _U32))
    hi = hlo.convert(out, hlo.shift_right_logical(count, full(32, aval)))
    lo = hlo.convert(out, count)
    return [hi, lo]


iota_2x32_shape_p = Primitive("iota_2x32_shape")
iota_2x32_shape_p.multiple_results = True
iota_2x32_shape_p.def_abstract_eval(_iota_2x32_shape_abstract_eval)
iota_2x32_shape_p.def_impl(partial(apply_primitive, iota_2x32_shape_p))
register_lowering(iota_2x32_shape_p, _iota_2x32_shape_lowering)


def iota_2x32_shape(shape: tuple[int, ...]):
    """Return the row-major index of each element of ``shape`` as (high, low) uint32 words.

    The counterpart of JAX's ``prng.iota_2x32_shape``: a 64-bit iota reshaped to
    ``shape``, split so that it does not depend on x64.
    """
    return tuple(iota_2x32_shape_p.bind(shape=tuple(shape)))


# --- algorithms on raw key data --------------------------------------------------------------

# Defined here, next to its only readers. Programs traced under one setting are stale under
# the other (JAX puts the option in its jit cache key): a change drops every cache.
threefry_partitionable = config.define_bool_option(
    "threefry_partitionable",
    True,
    env_var="MODJAX_THREEFRY_PARTITIONABLE",
    help="Threefry split and random bits by counters that partition (jax_threefry_partitionable).",
    on_update=lambda _value: clear_caches(),
)


def threefry_seed(seed):
    """Make raw threefry key data (uint32[2]) from a scalar integer seed (JAX's ``threefry_seed``).

    The key is ``[seed >> 32, seed & 0xFFFFFFFF]`` taken as uint32: the two
    words of a 64-bit seed, or a zero and the (sign-extended) low word of a
    narrower one.
    """
    aval = aval_of(seed)
    if aval.shape:
        raise TypeError(f"PRNG key seed must be a scalar; got {seed!r}.")
    if dtypes.issubdtype(aval.dtype, dtypes.extended) or aval.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    # A logical shift by the full width gives 0 in XLA, so 32-bit seeds get a zero high word;
    # the conversion to uint32 keeps the low 32 bits (sign-extending narrower types first).
    hi = ew.shift_right_logical(seed, np.asarray(32, aval.dtype)[()])
    words = [ew.convert_element_type(w, _U32) for w in (hi, seed)]
    return st.concatenate([st.reshape(w, (1,)) for w in words], 0)


def _words(key):
    """The two uint32 words of raw keys ``uint32[..., 2]``, each of shape ``key.shape[:-1]``."""
    aval = aval_of(key)
    lead = aval.shape[:-1]
    n = len(lead)
    words = []
    for i in range(2):
        w = st.slice(key, (0,) * n + (i,), lead + (i + 1,))
        words.append(st.reshape(w, lead))
    return words


def threefry_2x32(key, count):
    """Hash the uint32 array ``count`` with one raw key (JAX's ``threefry_2x32``).

    The flattened counts (padded with a zero to an even size) are cut in two
    halves hashed as pairs (first half, second half); the two output words are
    laid end to end, unpadded and given ``count``'s shape.
    """
    k1, k2 = _words(key)
    shape = aval_of(count).shape
    size = math.prod(shape)
    flat = st.reshape(count, (size,))
    if size % 2:
        flat = st.concatenate([flat, np.zeros(1, _U32)], 0)
    half = (size + size % 2) // 2
    x1, x2 = st.slice(flat, (0,), (half,)), st.slice(flat, (half,), (2 * half,))
    out = st.concatenate(list(threefry2x32(k1, k2, x1, x2)), 0)
    return st.reshape(st.slice(out, (0,), (size,)) if size % 2 else out, shape)


def _random_bits_original(key, bit_width: int, shape: tuple[int, ...]):
    size = math.prod(shape)
    words = -(-bit_width * size // 32)
    if words >= 2**32 - 1:
        raise NotImplementedError(
            "random bits of more than 2**32 - 2 words with jax_threefry_partitionable off"
        )
    bits = threefry_2x32(key, st.iota(_U32, words))
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        hi, lo = (
            ew.convert_element_type(st.slice(bits, (i * size,), ((i + 1) * size,)), dtype)
            for i in range(2)
        )
        if aval_of(hi).dtype != dtype:
            raise TypeError("64-bit random bits need jax_enable_x64")
        bits = ew.bitwise_or(ew.shift_left(hi, np.asarray(32, dtype)[()]), lo)
    elif bit_width in (8, 16):
        # Each word gives 32 // bit_width values, its low bits first.
        per_word = 32 // bit_width
        shifts = ew.mul(np.uint32(bit_width), st.broadcasted_iota(_U32, (per_word, 1), 0))
        parts = ew.shift_right_logical(st.broadcast(bits, (1,)), shifts)
        parts = ew.bitwise_and(np.uint32(np.iinfo(dtype).max), parts)
        bits = st.reshape(parts, (words * per_word,), (1, 0))
        bits = st.slice(ew.convert_element_type(bits, dtype), (0,), (size,))
    return st.reshape(bits, shape)


def threefry_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return uniform random bits of ``shape`` from one raw key (JAX's ``threefry_random_bits``).

    Partitionable scheme: element ``i`` (row-major) is the hash of counter
    ``i``; a 32-bit result is the xor of the two output words, an 8/16-bit
    one its low bits, a 64-bit one (x64 only) the first word above the second.
    With ``jax_threefry_partitionable`` off, JAX's original scheme (see the
    module docstring).
    """
    if bit_width not in UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    shape = tuple(shape)
    if not threefry_partitionable.value:
        return _random_bits_original(key, bit_width, shape)
    if math.prod(shape) > 2**64:
        raise NotImplementedError("random bits array of size exceeding 2 ** 64")
    k1, k2 = _words(key)
    hi, lo = iota_2x32_shape(shape)
    bits1, bits2 = threefry2x32(k1, k2, hi, lo)
    return bits_of_words(bit_width, [bits1, bits2], bits1, bits2)


def bits_of_words(bit_width: int, words, hi=None, lo=None):
    """Return the bits of ``bit_width`` from hashed words, as JAX's counter-based impls do.

    Widths up to 32 take the low bits of the xor of ``words`` (the output
    words); 64-bit ones put ``hi`` above ``lo`` and need x64.
    """
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        wide = [ew.convert_element_type(w, dtype) for w in (hi, lo)]
        if aval_of(wide[0]).dtype != dtype:
            raise TypeError("64-bit random bits need jax_enable_x64")
        return ew.bitwise_or(ew.shift_left(wide[0], np.asarray(32, dtype)[()]), wide[1])
    mixed = xor_all(words)
    return mixed if bit_width == 32 else ew.convert_element_type(mixed, dtype)


def xor_all(words):
    """Return the xor of uint32 words of one shape."""
    out = words[0]
    for w in words[1:]:
        out = ew.bitwise_xor(out, w)
    return out


def _stack_last(words):
    ndim = aval_of(words[0]).ndim
    return st.concatenate([st.expand_dims(w, (ndim,)) for w in words], ndim)


def threefry_split(key, shape: tuple[int, ...]):
    """Split one raw key into keys of ``shape`` (JAX's ``threefry_split``, partitionable).

    Key ``i`` (row-major) of the result is the hash of counter ``i``: data of
    shape ``shape + (2,)``. With ``jax_threefry_partitionable`` off, JAX's original
    split: the hash of the counters ``0 .. 2 * num - 1``, read as pairs.
    """
    if not threefry_partitionable.value:
        num = math.prod(shape)
        return st.reshape(threefry_2x32(key, st.iota(_U32, 2 * num)), (*shape, 2))
    k1, k2 = _words(key)
    hi, lo = iota_2x32_shape(tuple(shape))
    return _stack_last(threefry2x32(k1, k2, hi, lo))


def threefry_fold_in(key, data):
    """Fold the uint32 scalar ``data`` into one raw key (JAX's ``threefry_fold_in``).

    The result is the hash of the counter ``threefry_seed(data)`` under ``key``.
    """
    k1, k2 = _words(key)
    x1, x2 = _words(threefry_seed(data))
    return _stack_last(threefry2x32(k1, k2, x1, x2))
