"""modjax.random keys: threefry2x32, seeds, split, fold_in, bits, typed and legacy keys, rbg.

Known answers come from JAX 0.10.2 (random_keys_reference.json; the script that
recorded them is kept in it as text, under ``recorded_with``, since modjax never
imports jax); the rest checks that eager, jit,
scan and vmap agree, that key trees do not repeat keys, and JAX's errors.
"""

import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from modjax import lax, random
from modjax import numpy as jnp
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.random import _keys, _prng
from modjax.random._threefry import threefry2x32, threefry2x32_p
from modjax.runtime import eval_shape, jit
from modjax.tracecore import dtypes, jaxpr_equal, parse_jaxpr
from modjax.tracecore.config import config, enable_x64
from modjax.tracecore.tracing import make_jaxpr
from modjax.tracecore.tree_util import tree_leaves, tree_map

REF = json.loads(pathlib.Path(__file__).with_name("random_keys_reference.json").read_text())
SETTINGS = settings(max_examples=8, deadline=None)


def _seed(spec):
    kind, value = spec
    return value if kind == "int" else np.dtype(kind).type(value)


def _eq(actual, expected):
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected, dtype=np.uint64))


# --- known answers ---------------------------------------------------------------------------


def test_issue_known_answers():
    k = random.key(0)
    _eq(random.key_data(k), [0, 0])
    _eq(random.key_data(random.split(k)), [[1797259609, 2579123966], [928981903, 3453687069]])
    _eq(random.key_data(random.fold_in(k, 7)), [2716826189, 292468403])


IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]


def _rows(table, impl):
    return [row[1:] for row in REF[table] if row[0] == impl]


def _check_all(fun, rows):
    """Evaluate ``fun(*row[:-1])`` for every row in one compiled program; compare to row[-1]."""
    outs = jit(lambda: [fun(*row[:-1]) for row in rows])()
    for out, row in zip(outs, rows, strict=True):
        _eq(out, row[-1])


def _check_per_seed(impl, table, fun):
    """Check rows ``[seed, *params, expected]``: one program over all params, run per seed.

    ``fun(key, *params)`` returns a list of results, each compared with the row's
    expected value (so typed and legacy variants share one compiled program).
    """
    by_seed = {}
    for seed, *params, expected in _rows(table, impl):
        by_seed.setdefault(seed, []).append((params, expected))
    params = [p for p, _ in next(iter(by_seed.values()))]
    program = jit(lambda k: [fun(k, *p) for p in params])
    for seed, cases in by_seed.items():
        assert [p for p, _ in cases] == params
        for outs, (_, expected) in zip(program(random.key(seed, impl=impl)), cases, strict=True):
            for out in outs:
                _eq(out, expected)


# Eager calls compile one small program per signature; the tables are checked inside one
# jit per implementation (the eager path runs the same functions, see the agreement tests).


@pytest.mark.parametrize("impl", IMPLS)
def test_seeds(impl):
    def both(spec):
        return [
            random.key_data(random.key(_seed(spec), impl=impl)),
            random.PRNGKey(_seed(spec), impl=impl),
        ]

    outs = jit(lambda: [both(spec) for spec, _ in _rows("seed_x32", impl)])()
    for pair, (_, expected) in zip(outs, _rows("seed_x32", impl), strict=True):
        _eq(pair[0], expected)
        _eq(pair[1], expected)


def test_legacy_seeds_eagerly():
    for spec, expected in _rows("seed_x32", "threefry2x32"):
        legacy = random.PRNGKey(_seed(spec))
        assert legacy.dtype == np.uint32 and legacy.shape == (2,)
        _eq(legacy, expected)


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_seeds_x64(impl):
    with enable_x64(True):
        _check_all(
            lambda spec: random.key_data(random.key(_seed(spec), impl=impl)),
            _rows("seed_x64", impl),
        )


def _num(num):
    return tuple(num) if isinstance(num, list) else num


def _with_legacy(impl, typed_fun, legacy_fun):
    """Both variants for the default implementation, the typed one for the others."""

    def fun(k, *params):
        outs = [typed_fun(k, *params)]
        if impl == "threefry2x32":  # legacy keys are the default implementation's
            outs.append(legacy_fun(random.key_data(k), *params))
        return outs

    return fun


@pytest.mark.parametrize("impl", IMPLS)
def test_split(impl):
    def typed(k, num):
        keys = random.split(k, _num(num))
        assert (
            dtypes.issubdtype(keys.dtype, _keys.prng_key)
            and keys.shape == np.shape(random.key_data(keys))[:-1]
        )
        return random.key_data(keys)

    _check_per_seed(
        impl, "split", _with_legacy(impl, typed, lambda k, num: random.split(k, _num(num)))
    )


@pytest.mark.parametrize("impl", IMPLS)
def test_fold_in(impl):
    fun = _with_legacy(
        impl,
        lambda k, spec: random.key_data(random.fold_in(k, _seed(spec))),
        lambda k, spec: random.fold_in(k, _seed(spec)),
    )
    _check_per_seed(impl, "fold_in", fun)


@pytest.mark.parametrize("impl", IMPLS)
def test_bits(impl):
    def draw(k, shape, dtype):
        return random.bits(k, tuple(shape), np.dtype(dtype))

    def internal(k, shape, dtype):
        return _keys.random_bits(k, np.dtype(dtype).itemsize * 8, tuple(shape))

    def fun(k, shape, dtype):
        outs = _with_legacy(impl, draw, draw)(k, shape, dtype)
        return [*outs, internal(k, shape, dtype)]

    _check_per_seed(impl, "bits", fun)
    out = random.bits(random.key(0, impl=impl), (2, 5), np.uint16)  # eagerly
    assert out.dtype == np.uint16 and out.shape == (2, 5)
    _eq(out, next(r[-1] for r in _rows("bits", impl) if r[:3] == [0, [2, 5], "uint16"]))


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_bits_uint64(impl):
    with enable_x64(True):
        rows = _rows("bits64", impl)
        _check_all(
            lambda seed, shape, dtype: random.bits(
                random.key(seed, impl=impl), tuple(shape), np.uint64
            ),
            rows,
        )
        assert random.bits(random.key(0, impl=impl), (3,), np.uint64).dtype == np.uint64


def test_bits_uint64_without_x64_is_truncated_with_a_warning():
    with pytest.warns(UserWarning, match="not available"):
        out = random.bits(random.key(0), (3,), np.uint64)
    assert out.dtype == np.uint32
    _eq(out, random.bits(random.key(0), (3,)))


def test_nested_tree_of_operations():
    def tree(impl):
        k = random.split(random.fold_in(random.split(random.key(3, impl=impl))[1], 5), 4)[2]
        return random.key_data(k), random.bits(k, (4,))

    outs = jit(lambda: [tree(impl) for impl, _, _ in REF["nested"]])()
    for (data, bits), (_, expected_data, expected_bits) in zip(outs, REF["nested"], strict=True):
        _eq(data, expected_data)
        _eq(bits, expected_bits)
    data, bits = tree("threefry2x32")  # eagerly
    _eq(data, REF["nested"][0][1])
    _eq(bits, REF["nested"][0][2])


def test_rng_bit_generator_known_answers():
    keys = np.arange(8, dtype=np.uint32).reshape(2, 4)
    for dtype, expected in REF["rng_bit_generator"]:
        new_key, out = lax.rng_bit_generator(keys[1], (5,), np.dtype(dtype))
        assert out.dtype == np.dtype(dtype) and new_key.shape == (4,)
        _eq(out, expected)
    new_keys, out = vmap(lambda k: lax.rng_bit_generator(k, (3,)))(keys)
    _eq(new_keys, REF["rng_bit_generator_vmap"][0])
    _eq(out, REF["rng_bit_generator_vmap"][1])


def test_rng_bit_generator_errors_and_uint64_key():
    with pytest.raises(TypeError, match="unsupported dtype"):
        lax.rng_bit_generator(np.zeros(4, np.uint32), (2,), np.int32)
    with pytest.raises(TypeError, match="uint32\\[4\\] or uint64\\[2\\]"):
        lax.rng_bit_generator(np.zeros(3, np.uint32), (2,))
    with enable_x64(True):
        k64 = np.zeros(2, np.uint64)
        _, a = lax.rng_bit_generator(k64, (3,))
        _, b = lax.rng_bit_generator(np.zeros(4, np.uint32), (3,))
        _eq(a, b)  # the same 128-bit state


def test_rng_bit_generator_algorithm_prints_as_jax_and_parses_back():
    def f(k):
        return lax.rng_bit_generator(k, (3,), algorithm=lax.RandomAlgorithm.RNG_PHILOX)

    closed = make_jaxpr(f)(np.zeros(4, np.uint32))
    assert "algorithm=RNG_PHILOX" in str(closed)
    back = parse_jaxpr(str(closed))
    assert back.eqns[0].params["algorithm"] is lax.RandomAlgorithm.RNG_PHILOX
    assert jaxpr_equal(back, closed)


def test_rng_uniform():
    x = lax.rng_uniform(np.float32(2.0), np.float32(3.0), (50,))
    assert x.shape == (50,) and x.dtype == np.float32
    assert np.all((np.asarray(x) >= 2.0) & (np.asarray(x) < 3.0))
    with pytest.raises(ValueError, match="identical dtypes"):
        lax.rng_uniform(np.float32(0), np.int32(1), (2,))
    with pytest.raises(ValueError, match="must be scalars"):
        lax.rng_uniform(np.zeros(2, np.float32), np.float32(1), (2,))


# --- the threefry2x32 primitive ------------------------------------------------------------------


def test_threefry2x32_primitive_broadcasts_and_batches():
    k1, k2 = np.uint32(0), np.uint32(0)
    x1 = np.zeros(2, np.uint32)
    x2 = np.arange(2, dtype=np.uint32)
    y1, y2 = threefry2x32(k1, k2, x1, x2)
    _eq(np.stack([y1, y2], 1), [[1797259609, 2579123966], [928981903, 3453687069]])
    keys = np.asarray([[0, 0], [0, 42]], np.uint32)
    batched = vmap(lambda k: threefry2x32(k[0], k[1], x1, x2))(keys)
    for i in range(2):
        looped = threefry2x32(keys[i, 0], keys[i, 1], x1, x2)
        _eq(batched[0][i], looped[0])
        _eq(batched[1][i], looped[1])
    jaxpr = make_jaxpr(lambda k: random.bits(k, (3,)))(random.PRNGKey(0))
    # As in JAX, the jaxpr shows the key primitive; threefry2x32 is in its lowering.
    assert "random_bits[bit_width=32 shape=(3,)]" in str(jaxpr)


def test_threefry2x32_errors():
    with pytest.raises(TypeError, match="threefry2x32 requires uint32 arguments"):
        threefry2x32_p.bind(np.int32(0), np.uint32(0), np.uint32(0), np.uint32(0))
    with pytest.raises(TypeError, match="threefry2x32"):
        threefry2x32(np.uint32(0), np.uint32(0), np.zeros(2, np.uint32), np.zeros(3, np.uint32))


def test_keys_have_no_derivative_but_samplers_pass_through_jvp():
    def f(x):
        b = random.bits(random.PRNGKey(0), (3,))
        return x * lax.convert_element_type(b, np.float32)

    y, t = jvp(f, (np.float32(2.0),), (np.float32(1.0),))
    _eq(np.asarray(t), np.asarray(random.bits(random.PRNGKey(0), (3,))).astype(np.float32))
    assert grad(lambda x: f(x).sum())(np.float32(1.0)) == pytest.approx(float(np.sum(t)))


# --- eager, jit, scan, vmap agree -----------------------------------------------------------------


def _ops(k):
    """split, fold_in and bits of one key, as arrays of data."""
    a, b = random.split(k)
    c = random.fold_in(b, 3)
    return (
        random.key_data(a),
        random.key_data(c),
        random.bits(c, (5,)),
        random.bits(a, (2,), np.uint8),
    )


def test_eager_jit_scan_agree():
    k = random.key(11)
    eager = _ops(k)
    jitted = jit(_ops)(k)
    _, scanned = lax.scan(lambda c, _: (c, _ops(c)), k, None, length=2)
    for e, j, s in zip(eager, jitted, scanned, strict=True):
        _eq(j, e)
        _eq(s[0], e)
        _eq(s[1], e)


def test_vmap_over_keys_equals_a_loop():
    keys = random.split(random.key(5), 3)
    batched = jit(vmap(_ops))(keys)
    one = jit(_ops)
    for i in range(3):
        for b, e in zip(batched, one(keys[i]), strict=True):
            _eq(b[i], e)
    legacy = random.key_data(keys)
    batched_legacy = jit(vmap(_ops))(legacy)
    for b, e in zip(batched_legacy, batched, strict=True):
        _eq(b, e)


def test_vmap_over_seeds_and_fold_in_data():
    seeds = np.asarray([0, 1, -3], np.int32)
    data = jit(vmap(lambda s: random.key_data(random.key(s))))(seeds)
    for i, s in enumerate(seeds):
        _eq(data[i], random.key_data(random.key(s)))
    folded = jit(vmap(lambda d: random.key_data(random.fold_in(random.key(0), d))))(seeds)
    for i, s in enumerate(seeds):
        _eq(folded[i], random.key_data(random.fold_in(random.key(0), s)))


def test_random_bits_of_a_key_array_is_one_stream_per_key():
    keys = random.split(random.key(2), (2, 3))
    out = jit(lambda k: _keys.random_bits(k, 32, (4,)))(keys)
    assert out.shape == (2, 3, 4)
    _eq(out[1, 2], random.bits(keys[1, 2], (4,)))


@given(ops=st.lists(st.tuples(st.sampled_from(["split", "fold"]), st.integers(0, 5)), max_size=6))
@SETTINGS
def test_split_and_fold_trees_never_repeat_keys(ops):
    keys = [np.asarray(random.key_data(random.key(0)))]
    frontier = random.key(0)
    for op, n in ops:
        if op == "split":
            children = random.split(frontier, n + 2)
            keys += list(np.asarray(random.key_data(children)))
            frontier = children[n % (n + 2)]
        else:
            frontier = random.fold_in(frontier, n)
            keys.append(np.asarray(random.key_data(frontier)))
    # Every split of every key, plus the fold-ins, are all distinct.
    seen = {tuple(int(w) for w in k) for k in keys}
    assert len(seen) == len(keys)


# --- typed key arrays ---------------------------------------------------------------------------


def test_printing_as_jax():
    assert repr(random.key(0)) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    assert str(random.key(0)) == repr(random.key(0))
    assert repr(random.split(random.key(0), 3)).startswith(
        "Array((3,), dtype=key<fry>) overlaying:"
    )
    assert str(random.key(0, impl="rbg").dtype) == "key<rbg>"
    shapes = eval_shape(lambda k: random.split(k, 3), random.key(0))
    assert repr(shapes) == "ShapeDtypeStruct(shape=(3,), dtype=key<fry>)"


def test_key_array_shape_indexing_and_reshape():
    keys = random.split(random.key(0), 6)
    data = np.asarray(random.key_data(keys))
    assert keys.shape == (6,) and keys.ndim == 1 and keys.size == 6 and len(keys) == 6
    _eq(random.key_data(keys[1]), data[1])
    _eq(random.key_data(keys[1:4]), data[1:4])
    _eq(random.key_data(keys[::-2]), data[::-2])
    _eq(random.key_data(keys[..., 2]), data[2])
    grid = keys.reshape(2, 3)
    assert grid.shape == (2, 3)
    _eq(random.key_data(grid[1, 2]), data[5])
    _eq(random.key_data(grid.T), data.reshape(2, 3, 2).transpose(1, 0, 2))
    _eq(random.key_data(grid.ravel()), data)
    assert keys.reshape(-1, 2).shape == (3, 2)
    assert grid[None, 0].squeeze().shape == (3,)
    assert [random.key_data(k).tolist() for k in keys[:2]] == data[:2].tolist()


def test_key_arrays_flow_through_jit_vmap_scan_as_values():
    keys = random.split(random.key(1), 4)
    same = jit(lambda k: k)(keys)
    assert isinstance(same, _keys.PRNGKeyArray) and same.dtype == keys.dtype
    _eq(random.key_data(same), random.key_data(keys))
    split_in_vmap = vmap(lambda k: random.split(k))(keys)
    assert split_in_vmap.shape == (4, 2)
    _eq(random.key_data(split_in_vmap[2]), random.key_data(random.split(keys[2])))

    def step(k, _):
        k, sub = random.split(k)
        return k, sub

    # Keys as scanned-over inputs: one key per iteration, along the leading axis.
    _, drawn = lax.scan(lambda c, k: (c, random.bits(k, (2,))), 0, keys)
    for i in range(4):
        _eq(drawn[i], random.bits(keys[i], (2,)))
    last, subs = lax.scan(step, random.key(1), None, length=3)
    k = random.key(1)
    for i in range(3):
        k, sub = random.split(k)
        _eq(random.key_data(subs[i]), random.key_data(sub))
    _eq(random.key_data(last), random.key_data(k))
    assert tree_map(lambda x: x, keys).shape == (4,)
    assert len(tree_leaves(keys)) == 1


def test_key_equality_and_arithmetic_errors():
    k = random.key(0)
    assert bool(k == random.key(0)) and not bool(k != random.key(0))
    _eq(random.split(k, 3) == random.split(k, 3), [1, 1, 1])
    with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32"):
        k + 1  # noqa: B018
    with pytest.raises(TypeError, match="multiply does not accept dtypes int32, key<fry>"):
        2 * k  # noqa: B018
    with pytest.raises(TypeError, match="add does not accept dtype key<fry> at position 0"):
        k + k  # noqa: B018
    with pytest.raises(TypeError, match="neg does not accept dtype key<fry>"):
        -k  # noqa: B018
    with pytest.raises(TypeError, match="equal does not accept dtypes key<fry>, uint32"):
        k == random.PRNGKey(0)  # noqa: B015
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)


def test_key_dtype_impl_wrap_and_clone():
    k = random.key(3)
    assert dtypes.issubdtype(k.dtype, _keys.prng_key)
    assert dtypes.issubdtype(k.dtype, dtypes.extended)
    assert not dtypes.issubdtype(np.dtype(np.uint32), _keys.prng_key)
    assert random.key_dtype() == k.dtype and str(random.key_dtype("rbg")) == "key<rbg>"
    assert random.key_impl(k) == "threefry2x32"
    assert random.key_impl(random.PRNGKey(0)) == "threefry2x32"
    assert random.key_impl(random.key(0, impl="unsafe_rbg")) == "unsafe_rbg"
    data = random.key_data(k)
    again = random.wrap_key_data(data)
    assert bool(again == k)
    rbg = random.wrap_key_data(np.zeros((2, 4), np.uint32), impl="rbg")
    assert rbg.shape == (2,) and str(rbg.dtype) == "key<rbg>"
    # The primitive bound eagerly on numpy data (as a jaxpr interpreter does) wraps it too.
    bound = _prng.random_wrap_p.bind(np.asarray(data), impl=k.dtype._impl)
    assert bound.dtype == k.dtype and bool(bound == k)
    assert random.key(3, dtype=random.key_dtype("rbg")).dtype == random.key_dtype("rbg")
    copy = random.clone(k)
    assert copy.dtype == k.dtype and bool(copy == k)


def test_default_prng_impl_option():
    with config.option("jax_default_prng_impl")("rbg"):
        k = random.key(0)
        assert str(k.dtype) == "key<rbg>"
        assert random.PRNGKey(0).shape == (4,)
    assert str(random.key(0).dtype) == "key<fry>"
    with pytest.raises(ValueError):
        config.update("jax_default_prng_impl", "philox")


# --- errors as JAX raises them -----------------------------------------------------------------


def test_key_errors():
    with pytest.raises(TypeError, match="expected key_data.shape to end with \\(2,\\)"):
        random.split(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="expected key_data.dtype = uint32; got dtype=int32"):
        random.split(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="unexpected PRNG key type <class 'list'>"):
        random.split([0, 0])
    with pytest.raises(ValueError, match="split accepts a single key, but was given a key array"):
        random.split(random.split(random.key(0)))
    with pytest.raises(ValueError, match="fold_in accepts a single key"):
        random.fold_in(random.split(random.key(0)), 1)
    with pytest.raises(TypeError, match="fold_in accepts a scalar, but was given an array"):
        random.fold_in(random.key(0), np.arange(2))
    with pytest.raises(OverflowError, match="Python integer -1 out of bounds for uint32"):
        random.fold_in(random.key(0), -1)
    with pytest.raises(OverflowError, match="Python integer 4294967296 out of bounds"):
        random.fold_in(random.key(0), 2**32)


def test_seed_errors():
    with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
        random.key(1.0)
    with pytest.raises(TypeError, match="key accepts a scalar seed, but was given an array of"):
        random.key(np.arange(2))
    with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed, but was given a PRNG key"):
        random.PRNGKey(random.key(0))
    with pytest.raises(OverflowError):
        random.key(2**63)
    with pytest.raises(ValueError, match='unrecognized PRNG implementation "philox"'):
        random.key(0, impl="philox")
    with pytest.raises(ValueError, match="Cannot specify both `impl` and `dtype`"):
        random.key(0, impl="rbg", dtype="rbg")
    with pytest.raises(TypeError, match="unrecognized type"):
        random.key(0, impl=3)


def test_bits_errors_and_shapes():
    with pytest.raises(ValueError, match="must be an unsigned int dtype, got int32"):
        random.bits(random.key(0), (2,), np.int32)
    with pytest.raises(ValueError, match="bits accepts a single key"):
        random.bits(random.split(random.key(0)), (2,))
    assert random.bits(random.key(0), 3).shape == (3,)
    assert random.bits(random.key(0), (0, 2)).shape == (0, 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert random.bits(random.key(0)).dtype == np.uint32
    with pytest.raises(TypeError):
        _keys.random_bits(random.key(0), 12, (2,))


def test_traced_seeds_under_jit_match_eager():
    f = jit(lambda s: random.key_data(random.split(random.key(s), 3)))
    for s in [0, 7, -2]:
        _eq(f(np.int32(s)), random.key_data(random.split(random.key(s), 3)))
    g = jit(lambda k, d: random.fold_in(k, d))
    _eq(random.key_data(g(random.key(0), np.int32(7))), [2716826189, 292468403])
    arr = jnp.asarray(np.uint32(7))
    _eq(random.key_data(random.fold_in(random.key(0), arr)), [2716826189, 292468403])
