"""The ``philox2x32`` and ``philox4x32`` key implementations, as JAX's (jax._src.random.philox*).

Philox (Random123, Salmon et al. 2011) hashes a counter of two or four uint32
words under a key of one or two words, in ten rounds of a multiply-high/low
step and xors, the key bumped by Weyl constants between rounds. The hash
primitives are ``philox2x32`` (key ``k0``, counter ``x0, x1``) and
``philox4x32`` (key ``k0, k1``, counter ``x0 .. x3``).

On raw key data (philox2x32: ``uint32[1]``, philox4x32: ``uint32[2]``):

* seed: the counter holds the seed's (high, low) words (philox4x32: as its
  first two words, the rest zeros) under an all-zero key; the key is the
  first output word(s);
* split: key ``i`` (row-major) hashes the counter ``i`` as (high, low) words
  (philox4x32: in its last two words) and keeps the first output word(s);
* fold-in: the data is the counter's last word, the others zeros;
* bits: element ``i`` hashes the counter ``i`` (philox4x32: in its first two
  words); up to 32 bits: the low bits of the xor of all output words;
  64 bits: the first output word above the second.
"""

from __future__ import annotations

import numpy as np

from modjax.lowering import hlo
from modjax.tracecore.abstract import ShapedArray

from ..lax import structural as st
from ..lax._common import full
from . import _counter_prng as cp
from . import _threefry as tf

__all__ = [
    "philox2x32",
    "philox2x32_fold_in",
    "philox2x32_p",
    "philox2x32_random_bits",
    "philox2x32_seed",
    "philox2x32_split",
    "philox4x32",
    "philox4x32_fold_in",
    "philox4x32_p",
    "philox4x32_random_bits",
    "philox4x32_seed",
    "philox4x32_split",
]

# Random123's multipliers of the mulhilo steps and Weyl constants of the key bumps.
_M2X32 = 0xD256D193
_M4X32 = (0xD2511F53, 0xCD9E8D57)
_WEYL = (0x9E3779B9, 0xBB67AE85)
_ROUNDS = 10


def _bump(key_words, aval: ShapedArray):
    """Add each key word's Weyl constant (the key schedule between two rounds)."""
    return [hlo.add(k, full(w, aval)) for k, w in zip(key_words, _WEYL, strict=False)]


def _philox2x32_rounds(words, aval: ShapedArray):
    (k0,), (x0, x1) = words[:1], words[1:]
    for r in range(_ROUNDS):
        if r:
            (k0,) = _bump([k0], aval)
        lo, hi = cp.mulhilo(_M2X32, x0, aval)
        x0, x1 = hlo.xor(hlo.xor(hi, x1), k0), lo
    return x0, x1


def _philox4x32_rounds(words, aval: ShapedArray):
    k = words[:2]
    x0, x1, x2, x3 = words[2:]
    for r in range(_ROUNDS):
        if r:
            k = _bump(k, aval)
        lo0, hi0 = cp.mulhilo(_M4X32[0], x0, aval)
        lo1, hi1 = cp.mulhilo(_M4X32[1], x2, aval)
        x0, x1, x2, x3 = (
            hlo.xor(hlo.xor(hi1, x1), k[0]),
            lo1,
            hlo.xor(hlo.xor(hi0, x3), k[1]),
            lo0,
        )
    return x0, x1, x2, x3


philox2x32_p = cp.hash_primitive("philox2x32", 3, 2, _philox2x32_rounds)
philox4x32_p = cp.hash_primitive("philox4x32", 6, 4, _philox4x32_rounds)


def philox2x32(k0, x0, x1):
    """Hash the counter ``(x0, x1)`` under the key word ``k0`` (JAX's ``philox2x32_p``).

    All are uint32 arrays of broadcastable shapes (lax's rule); return the two
    output words.
    """
    return tuple(philox2x32_p.bind(k0, x0, x1))


def philox4x32(k0, k1, x0, x1, x2, x3):
    """Hash the counter ``(x0 .. x3)`` under the key ``(k0, k1)`` (JAX's ``philox4x32_p``).

    All are uint32 arrays of broadcastable shapes (lax's rule); return the four
    output words.
    """
    return tuple(philox4x32_p.bind(k0, k1, x0, x1, x2, x3))


_ZERO = np.uint32(0)


# --- philox2x32 on raw key data (uint32[1]) ----------------------------------------------------


def philox2x32_seed(seed):
    """Make philox2x32 key data from a scalar integer seed (JAX's ``philox2x32_seed``)."""
    hi, lo = cp.seed_words(seed)
    return cp.stack_words([philox2x32(_ZERO, hi, lo)[0]])


def philox2x32_split(key, shape: tuple[int, ...]):
    """Split philox2x32 key data into keys of ``shape`` (JAX's ``philox2x32_split``)."""
    counts = tf.iota_2x32_shape(tuple(shape))
    (k0,) = cp.key_words(key, 1)
    return cp.stack_words([philox2x32(k0, *counts)[0]])


def philox2x32_fold_in(key, data):
    """Fold the uint32 scalar ``data`` into philox2x32 key data (JAX's ``philox2x32_fold_in``)."""
    (k0,) = cp.key_words(key, 1)
    return cp.stack_words([philox2x32(k0, _ZERO, data)[0]])


def philox2x32_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return bits of ``shape`` from philox2x32 key data (JAX's ``philox2x32_random_bits``)."""
    shape = cp.check_bits_request("philox2x32", key, (1,), bit_width, shape)
    (k0,) = cp.key_words(key, 1)
    out = philox2x32(k0, *tf.iota_2x32_shape(shape))
    return tf.bits_of_words(bit_width, out, *out)


# --- philox4x32 on raw key data (uint32[2]) ----------------------------------------------------


def philox4x32_seed(seed):
    """Make philox4x32 key data from a scalar integer seed (JAX's ``philox4x32_seed``)."""
    hi, lo = cp.seed_words(seed)
    return cp.stack_words(philox4x32(_ZERO, _ZERO, hi, lo, _ZERO, _ZERO)[:2])


def philox4x32_split(key, shape: tuple[int, ...]):
    """Split philox4x32 key data into keys of ``shape`` (JAX's ``philox4x32_split``)."""
    shape = tuple(shape)
    counts = tf.iota_2x32_shape(shape)
    zeros = st.full(shape, 0, cp.U32)
    return cp.stack_words(philox4x32(*cp.key_words(key, 2), zeros, zeros, *counts)[:2])


def philox4x32_fold_in(key, data):
    """Fold the uint32 scalar ``data`` into philox4x32 key data (JAX's ``philox4x32_fold_in``)."""
    out = philox4x32(*cp.key_words(key, 2), _ZERO, _ZERO, _ZERO, data)
    return cp.stack_words(out[:2])


def philox4x32_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return bits of ``shape`` from philox4x32 key data (JAX's ``philox4x32_random_bits``)."""
    shape = cp.check_bits_request("philox4x32", key, (2,), bit_width, shape)
    zeros = st.full(shape, 0, cp.U32)
    out = philox4x32(*cp.key_words(key, 2), *tf.iota_2x32_shape(shape), zeros, zeros)
    return tf.bits_of_words(bit_width, out, out[0], out[1])
