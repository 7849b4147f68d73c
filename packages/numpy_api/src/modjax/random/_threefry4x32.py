"""The ``threefry4x32`` key implementation, as JAX's (jax._src.random.threefry4x32).

Threefry-4x32 (Random123, Salmon et al. 2011) hashes a counter of four uint32
words under a four-word key in 20 rounds of add-rotate-xor, injecting the
key schedule (the key words and their xor with the Skein parity constant)
every four rounds. The hash primitive is ``threefry4x32`` (key ``k0 .. k3``,
counter ``x0 .. x3``).

On raw key data (``uint32[4]``):

* seed: the seed's (high, low) words are the key's first two words (the
  rest zeros) hashing an all-zero counter; the key is the four output words;
* split: key ``i`` (row-major) hashes the counter ``(0, 0, high, low)`` of
  ``i``;
* fold-in: the data is the counter's last word, the others zeros;
* bits: element ``i`` hashes the counter ``(high, low, 0, 0)`` of ``i``; up
  to 32 bits: the low bits of the xor of the four output words; 64 bits:
  words 0 ^ 2 above words 1 ^ 3.
"""

from __future__ import annotations

import numpy as np

from modjax.lowering import hlo
from modjax.tracecore.abstract import ShapedArray

from ..lax import elementwise as ew
from ..lax import structural as st
from ..lax._common import full
from . import _counter_prng as cp
from . import _threefry as tf

__all__ = [
    "threefry4x32",
    "threefry4x32_fold_in",
    "threefry4x32_p",
    "threefry4x32_random_bits",
    "threefry4x32_seed",
    "threefry4x32_split",
]

# Random123's R_32x4 rotation distances, one pair per round (repeating every eight rounds),
# and the Skein key-schedule parity constant.
_ROTATIONS = ((10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20))
_PARITY = 0x1BD11BDA
_ROUNDS = 20


def _mix(a, b, distance: int, aval: ShapedArray):
    """One mix of a word pair: ``a += b``, then ``b`` rotated and xored with the new ``a``."""
    a = hlo.add(a, b)
    return a, hlo.xor(a, cp.rotate_left(b, distance, aval))


def _threefry4x32_rounds(words, aval: ShapedArray):
    keys, x = words[:4], list(words[4:])
    parity = full(_PARITY, aval)
    for k in keys:
        parity = hlo.xor(parity, k)
    schedule = [*keys, parity]
    x = [hlo.add(w, k) for w, k in zip(x, keys, strict=True)]
    for r in range(_ROUNDS):
        rot0, rot1 = _ROTATIONS[r % 8]
        # Even rounds mix the pairs (0, 1) and (2, 3), odd ones (0, 3) and (2, 1).
        first, second = ((0, 1), (2, 3)) if r % 2 == 0 else ((0, 3), (2, 1))
        x[first[0]], x[first[1]] = _mix(x[first[0]], x[first[1]], rot0, aval)
        x[second[0]], x[second[1]] = _mix(x[second[0]], x[second[1]], rot1, aval)
        if r % 4 == 3:
            # Injection s adds schedule words s+1 .. s+4 (mod 5), and s+1 to the last word.
            s = r // 4
            x = [hlo.add(w, schedule[(s + 1 + i) % 5]) for i, w in enumerate(x)]
            x[3] = hlo.add(x[3], full(s + 1, aval))
    return x


threefry4x32_p = cp.hash_primitive("threefry4x32", 8, 4, _threefry4x32_rounds)


def threefry4x32(k0, k1, k2, k3, x0, x1, x2, x3):
    """Hash the counter ``(x0 .. x3)`` under the key ``(k0 .. k3)`` (JAX's ``threefry4x32_p``).

    All are uint32 arrays of broadcastable shapes (lax's rule); return the four
    output words.
    """
    return tuple(threefry4x32_p.bind(k0, k1, k2, k3, x0, x1, x2, x3))


_ZERO = np.uint32(0)


def threefry4x32_seed(seed):
    """Make threefry4x32 key data from a scalar integer seed (JAX's ``threefry4x32_seed``)."""
    hi, lo = cp.seed_words(seed)
    return cp.stack_words(threefry4x32(hi, lo, *[_ZERO] * 6))


def threefry4x32_split(key, shape: tuple[int, ...]):
    """Split threefry4x32 key data into keys of ``shape`` (JAX's ``threefry4x32_split``)."""
    shape = tuple(shape)
    zeros = st.full(shape, 0, cp.U32)
    counts = tf.iota_2x32_shape(shape)
    return cp.stack_words(threefry4x32(*cp.key_words(key, 4), zeros, zeros, *counts))


def threefry4x32_fold_in(key, data):
    """Fold the uint32 scalar ``data`` into threefry4x32 key data (JAX's threefry4x32_fold_in)."""
    return cp.stack_words(threefry4x32(*cp.key_words(key, 4), _ZERO, _ZERO, _ZERO, data))


def threefry4x32_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return bits of ``shape`` from threefry4x32 key data (JAX's ``threefry4x32_random_bits``)."""
    shape = cp.check_bits_request("threefry4x32", key, (4,), bit_width, shape)
    zeros = st.full(shape, 0, cp.U32)
    out = threefry4x32(*cp.key_words(key, 4), *tf.iota_2x32_shape(shape), zeros, zeros)
    if bit_width != 64:
        return tf.bits_of_words(bit_width, out)
    hi, lo = (ew.bitwise_xor(out[i], out[i + 2]) for i in (0, 1))
    return tf.bits_of_words(bit_width, out, hi, lo)
