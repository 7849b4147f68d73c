"""PRNG implementations for extension authors (``jax.extend.random``).

``define_prng_impl`` makes an implementation usable as ``random.key(seed,
impl=...)``; the three built-in ones and the threefry hash are modjax.random's.
"""

from __future__ import annotations

from modjax.random._prng import (
    PRNGImpl,
    random_seed_p,
    rbg_prng_impl,
    resolve_prng_impl,
    threefry_prng_impl,
    unsafe_rbg_prng_impl,
)
from modjax.random._threefry import threefry2x32_p
from modjax.random._threefry import threefry_2x32 as _threefry_2x32

__all__ = [
    "define_prng_impl",
    "random_seed",
    "rbg_prng_impl",
    "seed_with_impl",
    "threefry2x32_p",
    "threefry_2x32",
    "threefry_prng_impl",
    "unsafe_rbg_prng_impl",
]


def define_prng_impl(
    *, key_shape, seed, split, random_bits, fold_in, name="<unnamed>", tag="?"
) -> PRNGImpl:
    """Define a PRNG implementation from functions on raw key data (``define_prng_impl``).

    ``seed(s)`` makes a key's data (of ``key_shape``) from a scalar integer,
    ``split(k, shape)`` data of ``shape + key_shape``, ``fold_in(k, d)`` folds a
    uint32 in, ``random_bits(k, bit_width, shape)`` gives unsigned bits.
    """
    return PRNGImpl(name, tag, key_shape, seed, split, fold_in, random_bits)


def threefry_2x32(keypair, count):
    """Hash the uint32 array ``count`` with the raw key ``keypair`` (threefry2x32)."""
    return _threefry_2x32(keypair, count)


def random_seed(seeds, impl):
    """Typed keys of ``impl`` from an integer array of seeds, one key per seed."""
    return random_seed_p.bind(seeds, impl=resolve_prng_impl(impl))


def seed_with_impl(impl, seed):
    """A typed key of ``impl`` from an integer seed (``jax.extend.random.seed_with_impl``)."""
    return random_seed(seed, impl)
