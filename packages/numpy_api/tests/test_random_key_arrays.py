"""Typed key arrays in the NumPy surface: creation, ``==``/``!=``, pad, casts and methods.

Each case of ``CASES`` is also a case of random_key_arrays_reference.json, where JAX
0.10.2's outcome is recorded (the script that recorded it is kept in it as text, under
``recorded_with``, since modjax never imports jax): the same dtype, shape and key data, or
the same exception class and message.
"""

import json
import pathlib

import numpy as np
import pytest

from modjax import lax, random
from modjax import numpy as jnp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.tracing import make_jaxpr

REF = json.loads(pathlib.Path(__file__).with_name("random_key_arrays_reference.json").read_text())

k = random.key(0)
ks = random.split(k, 3)
k1 = random.key(1)

# The recording script's table, with modjax's names.
CASES = {
    "zeros_like": lambda: jnp.zeros_like(ks),
    "ones_like": lambda: jnp.ones_like(ks),
    "empty_like": lambda: jnp.empty_like(ks),
    "full_like_key": lambda: jnp.full_like(ks, k1),
    "full_like_int": lambda: jnp.full_like(ks, 7),
    "full_like_float": lambda: jnp.full_like(ks, 2.5),
    "full_like_keys": lambda: jnp.full_like(ks, ks),
    "full_like_shape": lambda: jnp.full_like(ks, k1, shape=(2, 2)),
    "zeros_like_shape": lambda: jnp.zeros_like(ks, shape=(2,)),
    "zeros_like_dtype": lambda: jnp.zeros_like(ks, dtype=jnp.float32),
    "zeros_like_scalar": lambda: jnp.zeros_like(k),
    "full_key": lambda: jnp.full((2,), k1),
    "full_key_dtype": lambda: jnp.full((2,), k1, dtype=k.dtype),
    "full_int_dtype": lambda: jnp.full((2,), 5, dtype=k.dtype),
    "full_keys_bcast": lambda: jnp.full((2, 3), ks),
    "zeros_dtype": lambda: jnp.zeros((2,), dtype=k.dtype),
    "ones_dtype": lambda: jnp.ones((2, 1), dtype=k.dtype),
    "empty_dtype": lambda: jnp.empty((2,), dtype=k.dtype),
    "lax_full_like": lambda: lax.full_like(ks, k1),
    "lax_full": lambda: lax.full((2,), 3, k.dtype),
    "lax_full_like_int": lambda: lax.full_like(ks, 3),
    "jit_zeros_like": lambda: jit(jnp.zeros_like)(ks),
    "jit_full_like": lambda: jit(lambda a, b: jnp.full_like(a, b))(ks, k1),
    "vmap_full_like": lambda: vmap(lambda a, b: jnp.full_like(a, b))(ks, ks),
    "vmap_zeros_like": lambda: vmap(jnp.zeros_like)(ks),
    "rbg_zeros_like": lambda: jnp.zeros_like(random.key(0, impl="rbg")),
    "rbg_ones": lambda: jnp.ones((2,), random.key_dtype("rbg")),
    "eq": lambda: ks == ks,
    "ne": lambda: ks != k,
    "eq_scalar": lambda: k == k1,
    "jit_eq": lambda: jit(lambda a, b: a == b)(ks, ks[::-1]),
    "jit_ne": lambda: jit(lambda a, b: a != b)(ks, ks[0]),
    "jit_eq_bcast": lambda: jit(lambda a, b: a == b)(ks.reshape(3, 1), ks),
    "vmap_eq": lambda: vmap(lambda a, b: a == b)(ks, ks),
    "vmap_eq_closed": lambda: vmap(lambda a: a == ks[1])(ks),
    "vmap_ne_inaxes": lambda: vmap(lambda a, b: a != b, in_axes=(0, None))(ks, ks),
    "jnp_equal": lambda: jnp.equal(ks, k),
    "jnp_not_equal_jit": lambda: jit(jnp.not_equal)(ks, k),
    "eq_int": lambda: ks == 1,
    "ne_int": lambda: ks != 1,
    "jit_eq_int": lambda: jit(lambda a: a == 1)(ks),
    "eq_legacy": lambda: ks == random.key_data(ks),
    "eq_other_impl": lambda: ks == random.key(0, impl="rbg"),
    "jit_eq_other_impl": lambda: jit(lambda a, b: a == b)(ks, random.key(0, impl="rbg")),
    "lax_eq": lambda: lax.eq(ks, ks),
    "lax_ne_jit": lambda: jit(lax.ne)(ks, ks),
    "lt": lambda: ks < ks,
    "array_equal": lambda: jnp.array_equal(ks, ks),
    "array_equal_jit": lambda: jit(jnp.array_equal)(ks, ks[::-1]),
    "isin": lambda: jnp.isin(ks, ks[:1]),
    "where_eq": lambda: jnp.where(ks == k, ks, k1),
    "pad": lambda: jnp.pad(ks, 1),
    "pad_edge": lambda: jnp.pad(ks, 1, mode="edge"),
    "pad_wrap": lambda: jnp.pad(ks, (2, 1), mode="wrap"),
    "pad_reflect": lambda: jnp.pad(ks, 1, mode="reflect"),
    "pad_symmetric": lambda: jnp.pad(ks, 1, mode="symmetric"),
    "pad_empty": lambda: jnp.pad(ks, 1, mode="empty"),
    "pad_mean": lambda: jnp.pad(ks, 1, mode="mean"),
    "pad_linear_ramp": lambda: jnp.pad(ks, 1, mode="linear_ramp"),
    "pad_maximum": lambda: jnp.pad(ks, 1, mode="maximum"),
    "pad_zero": lambda: jnp.pad(ks, 0),
    "pad_edge_jit": lambda: jit(lambda a: jnp.pad(a, 1, mode="edge"))(ks),
    "pad_2d_edge": lambda: jnp.pad(random.split(k, (2, 2)), ((1, 0), (0, 1)), mode="edge"),
    "pad_2d_empty": lambda: jnp.pad(random.split(k, (2, 2)), ((1, 0), (0, 2)), mode="empty"),
    "pad_empty_jit": lambda: jit(lambda a: jnp.pad(a, (0, 2), mode="empty"))(ks),
    "pad_empty_vmap": lambda: vmap(lambda a: jnp.pad(a, 1, mode="empty"))(random.split(k, (2, 2))),
    "pad_constant_float": lambda: jnp.pad(ks, 1, constant_values=1.5),
    "astype_int": lambda: ks.astype(jnp.int32),
    "astype_same": lambda: ks.astype(ks.dtype),
    "convert_to_int": lambda: lax.convert_element_type(ks, jnp.int32),
    "convert_from_uint": lambda: lax.convert_element_type(jnp.zeros(3, "uint32"), k.dtype),
    "convert_jit": lambda: jit(lambda a: lax.convert_element_type(a, jnp.float32))(ks),
    "convert_same": lambda: lax.convert_element_type(ks, k.dtype),
    "method_sum": lambda: ks.sum(),
    "method_sort": lambda: ks.sort(axis=0),
    "method_clip": lambda: ks.clip(0, 1),
    "method_view": lambda: ks.view(),
    "method_real": lambda: ks.real,
    "method_flat": lambda: ks.flat,
    "addressable_data": lambda: ks.addressable_data(0),
    "addressable_shard_data": lambda: ks.addressable_shards[0].data,
    "global_shard_data": lambda: ks.global_shards[0].data,
}
# Where JAX's error message is an accident of its implementation (numpy's "Cannot
# interpret 'key<fry>' as a data type"), modjax's names the operation: the class is compared.
CLASS_ONLY = {"pad_mean", "pad_linear_ramp", "pad_maximum"}


def _encode(r):
    dt = str(r.dtype)
    data = random.key_data(r) if dt.startswith("key") else r
    return [dt, list(r.shape), np.asarray(data).tolist()]


def _outcome(f):
    try:
        return ["ok", _encode(f())]
    except Exception as e:  # noqa: BLE001 - the outcome is compared with JAX's
        return ["err", type(e).__name__, str(e).split("\n")[0]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_key_arrays_match_jax(name):
    outcome, expected = _outcome(CASES[name]), REF["cases"][name]
    if name in CLASS_ONLY:
        assert outcome[:2] == expected[:2] and "key<fry>" in outcome[2], outcome
    else:
        assert outcome == expected


def test_traced_key_comparisons_are_eq_and_ne_on_key_avals():
    # As JAX's jaxprs: one eq/ne equation on the key avals (lowered on the key data).
    assert "c:bool[3] = eq a b" in str(make_jaxpr(lambda a, b: a == b)(ks, ks))
    assert "c:bool[3] = ne a b" in str(make_jaxpr(lambda a, b: a != b)(ks, k))
    text = str(make_jaxpr(jnp.zeros_like)(ks))
    assert "random_wrap[impl=fry]" in text and "u32[3,2]" in text


def test_key_array_metadata_is_every_arrays():
    # JAX 0.10.2: (ks.size, ks.ndim, ks.nbytes, ks.itemsize) == (3, 1, 24, 8).
    assert (ks.size, ks.ndim, ks.nbytes, ks.itemsize) == (3, 1, 24, 8)
    assert (k.size, k.ndim, k.nbytes, k.shape) == (1, 0, 8, ())
    rbg = random.split(random.key(0, impl="rbg"), (2, 2))
    assert (rbg.size, rbg.ndim, rbg.nbytes, rbg.itemsize) == (4, 2, 64, 16)
    assert type(ks).ndim is type(jnp.zeros(1)).ndim  # one property, shared


def test_poisson_needs_threefry_keys_as_in_jax():
    # JAX 0.10.2's error, naming the implementation's tag.
    for impl, tag in (("rbg", "rbg"), ("unsafe_rbg", "urbg")):
        with pytest.raises(NotImplementedError) as info:
            random.poisson(random.key(0, impl=impl), 3.0, (2,))
        assert str(info.value) == (
            f"`poisson` is only implemented for the threefry2x32 RNG, not {tag}"
        )


def test_pad_with_a_key_fills_with_that_key():
    # JAX 0.10.2 fails to lower this (an MLIR error); modjax pads with the key given.
    data = random.key_data(jnp.pad(ks, (1, 2), constant_values=k1))
    expected = np.concatenate([random.key_data(k1)[None]] + [random.key_data(ks)]
                              + [random.key_data(k1)[None]] * 2)  # fmt: skip
    np.testing.assert_array_equal(data, expected)
    with pytest.raises(ValueError, match="from key<rbg> to key<fry>|convert_element_type"):
        jnp.pad(ks, 1, constant_values=random.key(0, impl="rbg"))


def test_jit_closing_over_a_key_array():
    # The key is a constant of the program, passed as its data (it raised TypeError).
    key = random.key(0)
    np.testing.assert_array_equal(jit(lambda: random.normal(key, (3,)))(), random.normal(key, (3,)))
    shifted = jit(lambda x: x + random.uniform(key, (3,)))(jnp.ones(3))
    np.testing.assert_array_equal(shifted, 1 + random.uniform(key, (3,)))
