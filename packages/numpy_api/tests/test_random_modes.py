"""The threefry schemes (``jax_threefry_partitionable`` on and off) and ``jax_random_seed_offset``.

Known answers come from JAX 0.10.2 (random_modes_reference.json; the script that recorded
them is kept in it as text, under ``recorded_with``, since modjax never imports jax).
"""

import json
import pathlib

import numpy as np
import pytest

from modjax import random
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.config import config, enable_x64

REF = json.loads(pathlib.Path(__file__).with_name("random_modes_reference.json").read_text())
partitionable = random._threefry.threefry_partitionable


def _data(x):
    return np.asarray(random.key_data(x) if str(x.dtype).startswith("key") else x)


def _run(name, args, keys):
    s, *rest = args
    k = keys[s]
    if name == "split":
        (n,) = rest
        return random.split(k, n if isinstance(n, int) else tuple(n))
    if name == "fold_in":
        return random.fold_in(k, rest[0])
    if name == "bits":
        shape, dt = rest
        return random.bits(k, tuple(shape), dt)
    if name in ("uniform", "normal"):
        return getattr(random, name)(k, tuple(rest[0]))
    if name == "rbg_split":
        return random.split(random.key(s, impl="rbg"), rest[0])
    if name == "jit_split_vmap":
        return jit(vmap(random.split))(random.split(k, rest[0]))
    if name == "randint":
        shape, lo, hi = rest
        return random.randint(k, tuple(shape), lo, hi)
    with enable_x64(True):
        if name == "bits64":
            return random.bits(k, tuple(rest[0]), "uint64")
        return random.uniform(k, tuple(rest[0]), "float64")  # uniform64


def _check(records):
    for name, args, expected in records:
        actual = _data(_run(name, args, {args[0]: random.key(args[0])}))
        want = np.asarray(expected, dtype=actual.dtype)
        np.testing.assert_array_equal(actual, want, err_msg=f"{name}{args}")


@pytest.mark.parametrize("on", [True, False], ids=["partitionable", "original"])
def test_threefry_schemes_match_jax(on):
    with partitionable(on):
        _check(REF["partitionable" if on else "original"])
    assert partitionable.value is True


def test_the_scheme_is_read_when_tracing_and_caches_follow_it():
    k = random.key(0)
    split = jit(lambda k: random.split(k))
    on = _data(split(k))
    with partitionable(False):
        off = _data(split(k))
        assert _data(random.split(k)).tolist() == off.tolist()
    assert not np.array_equal(on, off)
    np.testing.assert_array_equal(_data(split(k)), on)
    config.update("jax_threefry_partitionable", False)
    try:
        np.testing.assert_array_equal(_data(split(k)), off)
    finally:
        config.update("jax_threefry_partitionable", True)


def test_seed_offset_matches_jax():
    config.update("jax_random_seed_offset", 5)
    try:
        for name, args, expected in REF["seed_offset"]:
            if name == "key":
                out = random.key(args[0])
            elif name == "PRNGKey":
                out = random.PRNGKey(args[0])
            elif name == "jit_key":
                out = jit(random.key)(args[0])
            elif name == "key_rbg":
                out = random.key(args[0], impl="rbg")
            elif name == "normal":
                out = random.normal(random.key(args[0]), tuple(args[1]))
            else:  # vmap_key
                out = vmap(random.key)(np.asarray(args[0], np.int32))
            actual = _data(out)
            np.testing.assert_array_equal(actual, np.asarray(expected, actual.dtype), name)
    finally:
        config.update("jax_random_seed_offset", 0)
    np.testing.assert_array_equal(_data(jit(random.key)(0)), [0, 0])
    for (cls, message), bad in zip(REF["seed_offset_errors"], (2.5, "3"), strict=True):
        with pytest.raises(ValueError) as info:
            config.update("jax_random_seed_offset", bad)
        assert (type(info.value).__name__, str(info.value)) == (cls, message)


def test_legacy_prng_key_and_enable_custom_prng_as_jax():
    # Messages and outcomes observed with JAX 0.10.2.
    legacy = (
        "Legacy uint32 key array passed as key to jax.random function. Please create keys "
        "using jax.random.key(). If use of a raw key array was intended, set "
        'jax_legacy_prng_key="allow".'
    )
    raw = random.PRNGKey(0)
    try:
        config.update("jax_legacy_prng_key", "error")
        with pytest.raises(ValueError) as info:
            random.split(raw)
        assert str(info.value) == legacy
        random.normal(random.key(0))  # typed keys are fine
        config.update("jax_legacy_prng_key", "warn")
        with pytest.warns(UserWarning) as record:
            assert random.key_data(raw).dtype == np.uint32
        assert str(record[0].message) == legacy
        config.update("jax_legacy_prng_key", "allow")
        config.update("jax_enable_custom_prng", True)
        assert str(random.PRNGKey(0).dtype) == "key<fry>"
        with pytest.warns(FutureWarning, match="Raw arrays as random keys"):
            assert str(random.split(raw).dtype) == "key<fry>"
    finally:
        config.update("jax_legacy_prng_key", "allow")
        config.update("jax_enable_custom_prng", False)
    assert random.split(raw).dtype == np.uint32
    with pytest.raises(ValueError):
        config.update("jax_legacy_prng_key", "bad")
