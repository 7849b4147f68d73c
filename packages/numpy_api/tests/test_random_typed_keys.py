"""Typed keys as an extended dtype (key<fry>) and key reuse checking, as in JAX 0.10.2.

Expected jaxpr lines, data and error messages were observed with JAX 0.10.2
(``jax.random.split(jax.random.key(0), 3)`` has the data in ``KS_DATA``).
"""

import numpy as np
import pytest

from modjax import lax, random
from modjax import numpy as jnp
from modjax.batching import vmap
from modjax.random import _key_reuse
from modjax.runtime import device_put, devices, jit
from modjax.tracecore import dtypes
from modjax.tracecore.core import KeyReuseError
from modjax.tracecore.tracing import make_jaxpr
from modjax.tracecore.tree_util import tree_leaves

KS_DATA = np.array(
    [[1797259609, 2579123966], [928981903, 3453687069], [4146024105, 2718843009]], np.uint32
)


def _data(keys):
    return np.asarray(random.key_data(keys))


@pytest.fixture(scope="module")
def ks():
    return random.split(random.key(0), 3)


def test_key_avals_in_jaxprs_as_jax_prints_them():
    k = random.key(0)
    cases = [
        (lambda k: random.split(k), k, "b:key<fry>[2] = random_split[shape=(2,)] a"),
        (lambda k: random.fold_in(k, 3), k, "b:key<fry>[] = random_fold_in a 3:u32[]"),
        (random.key_data, k, "b:u32[2] = random_unwrap a"),
        (random.wrap_key_data, random.key_data(k), "b:key<fry>[] = random_wrap[impl=fry] a"),
        (lambda k: random.bits(k, (2,)), k, "random_bits[bit_width=32 shape=(2,)] a"),
    ]
    for fun, arg, line in cases:
        text = str(make_jaxpr(fun)(arg))
        assert line in " ".join(text.split()), text
    assert "a:key<fry>[]." in str(make_jaxpr(random.normal)(k))
    assert "random_seed[impl=fry]" in str(make_jaxpr(lambda s: random.key(s))(np.int32(1)))


def test_key_array_is_an_array_and_one_pytree_leaf(ks):
    k = random.key(0)
    assert k.shape == () and ks.shape == (3,) and ks.ndim == 1 and ks.size == 3
    assert str(ks.dtype) == "key<fry>" and dtypes.issubdtype(ks.dtype, dtypes.extended)
    assert dtypes.issubdtype(ks.dtype, random._keys.prng_key)
    assert not dtypes.issubdtype(np.dtype(np.uint32), random._keys.prng_key)
    assert tree_leaves(k) == [k] and tree_leaves({"a": ks})[0] is ks
    assert repr(ks) == f"Array((3,), dtype=key<fry>) overlaying:\n{KS_DATA}"
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)


def test_structural_operations_on_keys_match_jax(ks):
    k = random.key(0)
    np.testing.assert_array_equal(_data(ks[1]), KS_DATA[1])
    np.testing.assert_array_equal(_data(ks[::-1]), KS_DATA[::-1])
    np.testing.assert_array_equal(_data(ks[1:]), KS_DATA[1:])
    np.testing.assert_array_equal(_data(jnp.flip(ks)), KS_DATA[::-1])
    np.testing.assert_array_equal(_data(ks.reshape(3, 1)), KS_DATA[:, None])
    np.testing.assert_array_equal(_data(jnp.concatenate([ks, ks])), np.concatenate([KS_DATA] * 2))
    np.testing.assert_array_equal(_data(jnp.stack([k, k])), np.zeros((2, 2), np.uint32))
    np.testing.assert_array_equal(_data(jnp.broadcast_to(k, (2,))), np.zeros((2, 2), np.uint32))
    mixed = jnp.where(jnp.array([True, False, True]), ks, k)
    np.testing.assert_array_equal(_data(mixed), [KS_DATA[0], [0, 0], KS_DATA[2]])
    np.testing.assert_array_equal(_data(ks[jnp.array([0, 2])]), KS_DATA[[0, 2]])
    np.testing.assert_array_equal(_data(jit(lambda k, i: k[i])(ks, 1)), KS_DATA[1])
    np.testing.assert_array_equal(_data(ks.T), KS_DATA)
    np.testing.assert_array_equal(_data(jnp.take(ks, jnp.array([1, 2]))), KS_DATA[1:])
    k1 = random.key(1)
    np.testing.assert_array_equal(_data(ks.at[0].set(k1)), [[0, 1], KS_DATA[1], KS_DATA[2]])
    np.testing.assert_array_equal(
        _data(ks.at[jnp.array([0, 2])].set(k1)), [[0, 1], KS_DATA[1], [0, 1]]
    )
    # Out of bounds, take fills the data with the uint32 maximum (as JAX does).
    np.testing.assert_array_equal(_data(jnp.take(ks, jnp.array([5]))), [[2**32 - 1] * 2])
    assert [np.asarray(_data(x)).tolist() for x in ks] == KS_DATA.tolist()


def test_keys_through_jit_vmap_scan_cond_and_device_put(ks):
    k = random.key(0)
    out = jit(lambda k: random.split(k, 3))(k)
    assert str(out.dtype) == "key<fry>"
    np.testing.assert_array_equal(_data(out), KS_DATA)
    # in_axes counts the key axes only: -1 is the last key axis.
    np.testing.assert_array_equal(_data(vmap(lambda a: a, in_axes=-1)(ks)), KS_DATA)
    bits = vmap(lambda a: random.bits(a, (2,)))(ks)
    np.testing.assert_array_equal(bits, np.stack([random.bits(x, (2,)) for x in ks]))
    picked = lax.cond(True, lambda a: a, lambda a: random.split(a, 3)[0], k)
    np.testing.assert_array_equal(_data(picked), [0, 0])
    last, draws = lax.scan(lambda c, x: (random.fold_in(c, 1), random.bits(x)), k, ks)
    assert str(last.dtype) == "key<fry>" and draws.shape == (3,)
    np.testing.assert_array_equal(draws, [random.bits(x) for x in ks])
    placed = device_put(ks, devices()[0])
    assert str(placed.dtype) == "key<fry>" and placed.committed
    np.testing.assert_array_equal(_data(placed), KS_DATA)


def test_repeated_jit_calls_rebuild_key_arrays_on_the_fast_path():
    # From the second call on, jaxlib's C++ path passes the data and rebuilds the keys.
    step = jit(lambda k: (random.split(k, 3), random.bits(k)))
    for _ in range(3):
        keys, bits = step(random.key(0))
        assert str(keys.dtype) == "key<fry>" and keys.shape == (3,)
        np.testing.assert_array_equal(_data(keys), KS_DATA)
        assert bits.dtype == np.uint32


def test_arithmetic_on_keys_raises_jax_type_errors():
    k = random.key(0)
    with pytest.raises(TypeError, match="add does not accept dtypes key<fry>, int32"):
        k + 1  # noqa: B018
    with pytest.raises(TypeError, match="add does not accept dtype key<fry> at position 0"):
        jit(lambda a: a + a)(k)
    with pytest.raises(TypeError, match="lt does not accept dtype key<fry>"):
        k < k  # noqa: B015
    with pytest.raises(TypeError, match="key array cannot be converted to boolean"):
        bool(k)


# --- key reuse checking ------------------------------------------------------------------------


@pytest.fixture()
def checking():
    with _key_reuse.debug_key_reuse(True):
        yield


def test_eager_reuse_names_both_lines(checking):
    k = random.key(0)
    random.normal(k)
    with pytest.raises(KeyReuseError, match="Previously-consumed key") as info:
        random.uniform(k)
    message = str(info.value)
    assert message.count("test_random_typed_keys.py") == 2
    k2 = random.key(1)
    random.split(k2)
    with pytest.raises(KeyReuseError, match="passed to random_split"):
        random.split(k2)
    k3 = random.key(2)
    random.fold_in(k3, 1)  # as in JAX, fold_in does not consume its key
    random.fold_in(k3, 2)
    random.normal(k3)


def test_jit_reuse_is_found_when_tracing(checking):
    def twice(k):
        return random.normal(k) + random.uniform(k)

    with pytest.raises(KeyReuseError, match="already consumed") as info:
        jit(twice)(random.key(0))
    assert "test_random_typed_keys.py" in str(info.value)


def test_correct_programs_pass_the_checker(checking):
    a, b = random.split(random.key(7))
    random.normal(a)
    random.normal(b)
    k = random.key(3)
    random.normal(random.clone(k))
    random.normal(k)
    legacy = random.PRNGKey(5)  # legacy keys are not checked, as in JAX
    random.normal(legacy)
    random.normal(legacy)
    random.key_data(k)  # reading the data consumes nothing

    def steps(key):
        def body(c, _):
            c, sub = random.split(c)
            return c, random.normal(sub)

        return lax.scan(body, key, None, length=3)[1]

    assert jit(steps)(random.key(9)).shape == (3,)


def test_loops_consuming_a_closed_over_key_raise(checking):
    def bad(key):
        return lax.scan(lambda c, _: (c, random.normal(key)), 0, None, length=3)

    with pytest.raises(KeyReuseError, match="scan body function leads to key reuse"):
        jit(bad)(random.key(10))


def test_checking_off_allows_reuse():
    k = random.key(0)
    random.normal(k)
    random.normal(k)
    assert not _key_reuse.debug_key_reuse.value
