"""The ``rbg`` and ``unsafe_rbg`` key implementations on raw key data (uint32[4]), as JAX's.

Both draw bits with XLA's ``rng_bit_generator`` (``lax.rng_bit_generator``)
from the whole four-word key, so their bits depend on the backend's
generator. A key is two threefry keys side by side: seeding repeats the
threefry seed. ``rbg`` splits and folds each half with threefry; the
cheaper ``unsafe_rbg`` splits by keeping every tenth key of a stream of
``rng_bit_generator`` keys and folds by xoring in the last of ten draws
seeded from the data.
"""

from __future__ import annotations

import math

import numpy as np

from ..lax import elementwise as ew
from ..lax import rng
from ..lax import structural as st
from . import _threefry as tf

__all__ = [
    "rbg_fold_in",
    "rbg_random_bits",
    "rbg_seed",
    "rbg_split",
    "unsafe_rbg_fold_in",
    "unsafe_rbg_split",
]


def rbg_seed(seed):
    """Make rbg key data: the threefry key of ``seed`` twice (JAX's ``_rbg_seed``)."""
    half = tf.threefry_seed(seed)
    return st.concatenate([half, half], 0)


def _halves(key):
    return [st.reshape(st.slice(key, (2 * i,), (2 * i + 2,)), (2,)) for i in range(2)]


def rbg_split(key, shape: tuple[int, ...]):
    """Split rbg key data: each half is split with threefry (JAX's ``_rbg_split``)."""
    shape = tuple(shape)
    parts = [tf.threefry_split(h, shape) for h in _halves(key)]  # each shape + (2,)
    return st.concatenate(parts, len(shape))


def rbg_fold_in(key, data):
    """Fold ``data`` into rbg key data: into each half with threefry (JAX's ``_rbg_fold_in``)."""
    return st.concatenate([tf.threefry_fold_in(h, data) for h in _halves(key)], 0)


def rbg_random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return bits of ``shape`` from XLA's generator keyed by the whole key (JAX's rbg bits)."""
    if bit_width not in tf.UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    return rng.rng_bit_generator(key, tuple(shape), tf.UINT_DTYPES[bit_width])[1]


def unsafe_rbg_split(key, shape: tuple[int, ...]):
    """Split unsafe_rbg key data: every tenth of ``10 * n`` generated keys (as JAX)."""
    shape = tuple(shape)
    num = math.prod(shape)
    _, keys = rng.rng_bit_generator(key, (10 * num, 4), np.uint32)
    picked = st.slice(keys, (0, 0), (10 * num, 4), (10, 1))
    return st.reshape(picked, (*shape, 4))


def unsafe_rbg_fold_in(key, data):
    """Fold into unsafe_rbg key data: xor the last of ten keys drawn from ``data``'s seed."""
    _, draws = rng.rng_bit_generator(rbg_seed(data), (10, 4), np.uint32)
    return ew.bitwise_xor(key, st.reshape(st.slice(draws, (9, 0), (10, 4)), (4,)))
