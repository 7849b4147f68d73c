"""modjax.random's philox2x32, philox4x32 and threefry4x32 key implementations.

Known answers come from JAX 0.10.2 (random_more_impls_reference.json; the script
that recorded them is kept in it under ``recorded_with``, since modjax never
imports jax): seeds (x64 off and on), split, fold_in, bits of every width,
samplers, a tree of key operations, the default implementation option, key
reprs, jaxpr text and error messages. The hash primitives are also checked
against small NumPy versions of the Random123 algorithms written here, and
jit against eager, vmap against a loop.
"""

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modjax import numpy as jnp
from modjax import random
from modjax.batching import vmap
from modjax.random import _philox, _prng
from modjax.random import _threefry4x32 as tf4
from modjax.runtime import jit
from modjax.tracecore.config import config, enable_x64
from modjax.tracecore.tracing import make_jaxpr

REF = json.loads(pathlib.Path(__file__).with_name("random_more_impls_reference.json").read_text())
IMPLS = ["philox2x32", "philox4x32", "threefry4x32"]
KEY_SHAPES = {"philox2x32": (1,), "philox4x32": (2,), "threefry4x32": (4,)}


def _value(spec):
    kind, value = spec
    return value if kind == "int" else np.dtype(kind).type(value)


def _kwargs(kwargs):
    out = {}
    for name, v in kwargs.items():
        out[name] = np.asarray(v["array"], v["dtype"]) if isinstance(v, dict) else v
    if "shape" in out:
        out["shape"] = tuple(out["shape"])
    if "dtype" in out:
        out["dtype"] = jnp.dtype(out["dtype"])
    return out


def _split_arg(shape):
    return tuple(shape) if isinstance(shape, list) else shape


def _seed_of(case):
    """The seed a case starts from: its own, or 3 (the tree of operations')."""
    seed = case.get("seed", 3)
    return _value(seed) if isinstance(seed, list) else seed


def _traced_seed(case):
    """The case's seed as the array ``key`` makes of it (to pass it to a jitted program)."""
    seed = _seed_of(case)
    if isinstance(seed, int):  # as key() converts Python ints: through int64, wrapping
        return np.int64(seed).astype(jnp.dtype(int))
    return seed


def _compute(case, seed, k):
    """Return what ``case`` records, computed with modjax from ``seed`` or its key ``k``."""
    impl, op = case["impl"], case["op"]
    if op == "seed":
        return [random.key_data(random.key(seed, impl=impl)), random.PRNGKey(seed, impl=impl)]
    if op == "default":
        with config.option("jax_default_prng_impl")(impl):
            return [random.PRNGKey(seed), random.key_data(random.key(seed))]
    if op == "split":
        return [random.key_data(random.split(k, _split_arg(case["shape"])))]
    if op == "fold_in":
        return [random.key_data(random.fold_in(k, _value(case["data"])))]
    if op == "bits":
        return [random.bits(k, tuple(case["shape"]), np.dtype(case["dtype"]))]
    if op == "sample":
        return [getattr(random, case["fn"])(k, **_kwargs(case["kwargs"]))]
    assert op == "nested"
    t = random.split(random.fold_in(random.split(k)[1], 5), 4)[2]
    return [random.key_data(t), random.bits(t, (4,))]


def _expected(case):
    # As objects: 64-bit words stay exact; the shape keeps zero-size ones.
    out = np.asarray(case["out"], dtype=object).reshape(case["out_shape"])
    return [case["key"], out] if case["op"] == "nested" else [out]


def _compare(case, outs):
    expected = _expected(case)
    if case["op"] in ("seed", "default"):
        expected = expected * 2  # key data and legacy PRNGKey data agree
    for out, want in zip(outs, expected, strict=True):
        out = np.asarray(out)
        if case["op"] == "sample":
            assert str(out.dtype) == case["dtype"], case
            out = out.astype(np.float64) if out.dtype.kind == "f" or out.dtype.kind == "V" else out
        want = np.asarray(want).astype(out.dtype)
        np.testing.assert_array_equal(out, want, err_msg=str(case))


def _cases(impl, x64):
    return [c for c in REF["cases"] if c["impl"] == impl and c["x64"] == x64]


# Eagerly, each key operation and sampler compiles one program per signature, shared by the
# cases (XLA compiles threefry4x32's 20 unrolled rounds slowly: one program of every case
# would take minutes). Jit's agreement is checked below, and on the seeds here.


@pytest.mark.parametrize("x64", [False, True], ids=["x32", "x64"])
@pytest.mark.parametrize("impl", IMPLS)
def test_known_answers(impl, x64):
    with enable_x64(x64):
        cases = _cases(impl, x64)
        for case in cases:
            seed = _seed_of(case)
            _compare(case, _compute(case, seed, random.key(seed, impl=impl)))
        # Seeds traced under jit (one program per seed dtype).
        seeded = jit(lambda s: _compute({"impl": impl, "op": "seed"}, s, None))
        for case in cases:
            if case["op"] == "seed":
                _compare(case, seeded(_traced_seed(case)))


@pytest.mark.parametrize("impl", IMPLS)
def test_texts(impl):
    texts = REF["texts"][impl]
    k = random.key(0, impl=impl)
    assert repr(k) == texts["repr"]
    assert repr(random.split(k, 2)) == texts["repr_split"]
    assert str(make_jaxpr(lambda k: random.bits(k, (3,)))(k)) == texts["jaxpr_bits"]
    assert random.key_impl(k) == texts["key_impl"] and str(k.dtype) == texts["dtype"]
    assert random.key_dtype(impl) == k.dtype
    data = random.key_data(random.split(k, (2, 3)))
    assert data.shape == (2, 3, *KEY_SHAPES[impl])
    wrapped = random.wrap_key_data(data, impl=impl)
    assert wrapped.dtype == k.dtype and bool(jnp.all(wrapped == random.split(k, (2, 3))))


def test_error_texts():
    with pytest.raises(ValueError) as err:
        random.key(0, impl="philox")
    assert str(err.value) == REF["texts"]["unrecognized"]
    with pytest.raises(ValueError) as err:
        config.update("jax_default_prng_impl", "philox")
    # modjax names the option first; the list of values is JAX's.
    assert REF["texts"]["config_choices"].split(", got")[0] in str(err.value)
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(2,\\)"):
        random.wrap_key_data(np.zeros(3, np.uint32), impl="philox4x32")


# --- transformations -----------------------------------------------------------------------------


def _ops(k):
    """Key operations and samplers on one key (typed); one chain of two hashes (compiles are
    slow for chains of threefry4x32's hash, as in JAX)."""
    return [
        random.key_data(random.split(k, 3)),
        random.key_data(random.fold_in(k, 9)),
        random.bits(k, (2, 3)),
        random.bits(k, (), jnp.uint8),
        random.uniform(k, (4,)),
        random.randint(k, (3,), 0, 100),
        random.bits(k, (0,)),
        random.bits(random.split(k)[1], (2,)),
    ]


def _same(a, b):
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


@pytest.mark.parametrize("impl", IMPLS)
def test_jit_matches_eager(impl):
    k = random.key(21, impl=impl)
    _same(jit(_ops)(k), _ops(k))
    seeded = jit(lambda s: random.bits(random.key(s, impl=impl), (3,)))
    _same([seeded(21)], [random.bits(k, (3,))])


@pytest.mark.parametrize("impl", IMPLS)
def test_vmap_matches_loop(impl):
    keys = random.split(random.key(4, impl=impl), 3)
    batched = vmap(_ops)(keys)
    for i in range(3):
        _same([b[i] for b in batched], _ops(keys[i]))
    seeds = np.asarray([0, -1, 7], np.int32)
    by_seed = vmap(lambda s: random.key_data(random.key(s, impl=impl)))(seeds)
    for i, s in enumerate(seeds):
        _same([by_seed[i]], [random.key_data(random.key(s, impl=impl))])
    # fold_in batched over the data too, and key arrays of shape (3,) drawn from at once.
    folded = vmap(random.fold_in)(keys, np.arange(3, dtype=np.uint32))
    for i in range(3):
        _same([random.key_data(folded[i])], [random.key_data(random.fold_in(keys[i], i))])
    bits = vmap(lambda k: random.bits(k, (2,)))(keys)
    _same([_prng.random_bits_p.bind(keys, bit_width=32, shape=(2,))], [bits])


@pytest.mark.parametrize("impl", IMPLS)
def test_default_impl_for_legacy_keys(impl):
    with config.option("jax_default_prng_impl")(impl):
        legacy = random.PRNGKey(3)
        assert legacy.dtype == np.uint32 and legacy.shape == KEY_SHAPES[impl]
        typed = random.key(3)
        assert str(typed.dtype) == REF["texts"][impl]["dtype"]
        # A raw key is taken as the default implementation's data.
        _same([random.uniform(legacy, (2,))], [random.uniform(typed, (2,))])
        _same([random.split(legacy)], [random.key_data(random.split(typed))])


# --- the hash primitives against NumPy versions of Random123's algorithms ------------------------

_M = 2**32


def _np_philox2x32(k0, x0, x1):
    for r in range(10):
        if r:
            k0 = (k0 + 0x9E3779B9) % _M
        p = 0xD256D193 * x0
        x0, x1 = (p >> 32) ^ x1 ^ k0, p % _M
    return x0, x1


def _np_philox4x32(k0, k1, x0, x1, x2, x3):
    for r in range(10):
        if r:
            k0, k1 = (k0 + 0x9E3779B9) % _M, (k1 + 0xBB67AE85) % _M
        p0, p1 = 0xD2511F53 * x0, 0xCD9E8D57 * x2
        x0, x1, x2, x3 = (p1 >> 32) ^ x1 ^ k0, p1 % _M, (p0 >> 32) ^ x3 ^ k1, p0 % _M
    return x0, x1, x2, x3


_R4 = [(10, 26), (11, 21), (13, 27), (23, 5), (6, 20), (17, 11), (25, 10), (18, 20)]


def _np_threefry4x32(k0, k1, k2, k3, x0, x1, x2, x3):
    def rotl(v, d):
        return ((v << d) | (v >> (32 - d))) % _M

    ks = [k0, k1, k2, k3, k0 ^ k1 ^ k2 ^ k3 ^ 0x1BD11BDA]
    x = [(a + b) % _M for a, b in zip([x0, x1, x2, x3], ks, strict=False)]
    for r in range(20):
        pairs = [(0, 1), (2, 3)] if r % 2 == 0 else [(0, 3), (2, 1)]
        for (a, b), d in zip(pairs, _R4[r % 8], strict=True):
            x[a] = (x[a] + x[b]) % _M
            x[b] = rotl(x[b], d) ^ x[a]
        if r % 4 == 3:
            s = r // 4
            x = [(v + ks[(s + 1 + i) % 5]) % _M for i, v in enumerate(x)]
            x[3] = (x[3] + s + 1) % _M
    return tuple(x)


HASHES = {
    "philox2x32": (_philox.philox2x32, _np_philox2x32, 1, 2),
    "philox4x32": (_philox.philox4x32, _np_philox4x32, 2, 4),
    "threefry4x32": (tf4.threefry4x32, _np_threefry4x32, 4, 4),
}
_hash_programs = {name: jit(fun) for name, (fun, *_) in HASHES.items()}


@pytest.mark.parametrize("name", IMPLS)
@settings(max_examples=10, deadline=None)
@given(data=st.data())
def test_hash_matches_numpy(name, data):
    fun, reference, num_keys, num_counters = HASHES[name]
    word = st.integers(0, _M - 1)
    keys = [np.uint32(data.draw(word)) for _ in range(num_keys)]
    counters = [np.asarray(data.draw(st.lists(word, min_size=3, max_size=3)), np.uint32)]
    counters = [counters[0] + np.uint32(i) for i in range(num_counters)]  # shape (3,) each
    outs = _hash_programs[name](*keys, *counters)
    wide = [np.asarray(v, np.uint64).astype(object) for v in (*keys, *counters)]
    expected = reference(*wide)
    for out, want in zip(outs, expected, strict=True):
        np.testing.assert_array_equal(np.asarray(out), np.asarray(want, np.uint64))


@pytest.mark.parametrize("name", IMPLS)
def test_hash_primitive(name):
    fun, _, num_keys, num_counters = HASHES[name]
    prim = {"philox2x32": _philox.philox2x32_p, "philox4x32": _philox.philox4x32_p}.get(
        name, tf4.threefry4x32_p
    )
    assert prim.name == name
    impl = _prng.prngs[name]
    raw = random.key_data(random.key(0, impl=name))
    # As in JAX, the hash shows in the jaxpr of the implementation's own functions.
    assert f" = {name} " in str(make_jaxpr(lambda k: impl.random_bits(k, 32, (3,)))(raw))
    # Broadcasting (rank-0 operands) and batching over a key word.
    counters = [np.arange(4, dtype=np.uint32) + np.uint32(i) for i in range(num_counters)]
    key_rows = np.asarray([[1] * num_keys, [2**32 - 1] * num_keys], np.uint32)
    batched = vmap(lambda k: fun(*k, *counters))(key_rows)
    for row in range(2):
        _same([b[row] for b in batched], fun(*key_rows[row], *counters))
    with pytest.raises(TypeError, match=f"Arguments to {name} must have uint32 type"):
        prim.bind(np.int32(0), *[np.uint32(0)] * (num_keys + num_counters - 1))
    with pytest.raises(TypeError, match=f"{name}_p expects"):
        prim.bind(np.uint32(0))
    with pytest.raises(TypeError, match=name):
        fun(*[np.zeros(2, np.uint32)] * num_keys, *[np.zeros(3, np.uint32)] * num_counters)
