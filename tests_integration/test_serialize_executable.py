"""jax.experimental.serialize_executable: compiled programs as bytes and back, as JAX 0.10.2.

The answers and messages checked here are JAX 0.10.2's for the same programs.
"""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.serialize_executable import deserialize_and_load, serialize


def _matmul_and_sum(x, y):
    return x @ y, {"s": x.sum()}


@pytest.fixture(scope="module")
def matmul_payload():
    compiled = jax.jit(_matmul_and_sum).lower(jnp.ones((2, 3)), jnp.ones((3, 2))).compile()
    return serialize(compiled)


def test_round_trip_keeps_trees_types_and_results(matmul_payload):
    payload, in_tree, out_tree = matmul_payload
    assert isinstance(payload, bytes)
    assert str(in_tree) == "PyTreeDef(((*, *), {}))"
    assert str(out_tree) == "PyTreeDef((*, {'s': *}))"
    loaded = deserialize_and_load(payload, in_tree, out_tree)
    x, y = np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((3, 2), np.float32)
    product, rest = loaded(x, y)
    np.testing.assert_array_equal(np.asarray(product), x @ y)
    assert float(rest["s"]) == 15.0
    assert loaded.as_text().startswith("HloModule")
    assert str(loaded.out_info[0]).startswith("ShapeDtypeStruct(shape=(2, 2), dtype=float32")


def test_calls_with_other_types_or_trees_are_refused(matmul_payload):
    loaded = deserialize_and_load(*matmul_payload)
    with pytest.raises(TypeError, match="Argument types differ from the types"):
        loaded(jnp.ones((2, 2)), jnp.ones((3, 2)))
    with pytest.raises(TypeError, match="Function compiled with input pytree does not match"):
        loaded(jnp.ones((2, 3)))


def test_statics_are_baked_in_and_donation_and_pruned_arguments_kept():
    scaled = jax.jit(lambda x, *, k: x * k, static_argnames="k").lower(jnp.ones(2), k=3).compile()
    payload, in_tree, out_tree = serialize(scaled)
    assert str(in_tree) == "PyTreeDef(((*,), {}))"  # the static k is not an argument
    loaded = deserialize_and_load(payload, in_tree, out_tree)
    np.testing.assert_array_equal(np.asarray(loaded(jnp.ones(2))), [3.0, 3.0])
    with pytest.raises(TypeError, match="input pytree"):
        loaded(jnp.ones(2), k=3)

    donating = jax.jit(lambda x, y: x + y, donate_argnums=0)
    loaded = deserialize_and_load(*serialize(donating.lower(jnp.ones(2), jnp.ones(2)).compile()))
    a = jnp.ones(2)
    np.testing.assert_array_equal(np.asarray(loaded(a, jnp.ones(2))), [2.0, 2.0])
    assert a.is_deleted()
    assert [i.donated for i in loaded.args_info[0]] == [True, False]

    pruned = jax.jit(lambda x, unused: x * 2).lower(jnp.ones(2), jnp.ones(3)).compile()
    loaded = deserialize_and_load(*serialize(pruned))
    np.testing.assert_array_equal(np.asarray(loaded(jnp.ones(2), jnp.ones(3))), [2.0, 2.0])


def test_closed_over_arrays_and_key_arrays():
    big = np.arange(100000, dtype=np.float32)  # past the size modjax embeds in the program
    compiled = jax.jit(lambda x: x + big).lower(jnp.ones(100000)).compile()
    loaded = deserialize_and_load(*serialize(compiled))
    np.testing.assert_array_equal(np.asarray(loaded(jnp.ones(100000))), big + 1)

    normal = jax.jit(lambda k: jax.random.normal(k, (2,))).lower(jax.random.key(0)).compile()
    loaded = deserialize_and_load(*serialize(normal))
    np.testing.assert_allclose(  # JAX 0.10.2's values
        np.asarray(loaded(jax.random.key(0))), [1.6226422, 2.0252647], rtol=1e-6
    )
    closed_key = jax.random.key(1)

    def shifted_noise(x):
        return jax.random.normal(closed_key, (2,)) + x + big[:2]

    compiled = jax.jit(shifted_noise).lower(jnp.ones(2)).compile()
    loaded = deserialize_and_load(*serialize(compiled))
    np.testing.assert_array_equal(np.asarray(loaded(jnp.ones(2))), shifted_noise(jnp.ones(2)))


def test_key_arrays_pickle_as_jax_keys():
    keys = jax.random.split(jax.random.key(0, impl="rbg"), 3)
    again = pickle.loads(pickle.dumps(keys))
    assert again.dtype == keys.dtype and again.shape == (3,)
    np.testing.assert_array_equal(jax.random.key_data(again), jax.random.key_data(keys))


def test_programs_that_cannot_be_serialized():
    printing = jax.jit(lambda x: jax.debug.print("{}", x) or x).lower(1.0).compile()
    with pytest.raises(ValueError, match="does not support serialization"):
        serialize(printing)
    with pytest.raises(TypeError, match="expects a jax.stages.Compiled"):
        serialize(jax.jit(jnp.sin))
    with pytest.raises(ValueError, match="not a serialized modjax executable"):
        deserialize_and_load(pickle.dumps("other"), None, None)


def test_a_payload_loads_in_another_process(matmul_payload, tmp_path):
    payload, in_tree, out_tree = matmul_payload
    (tmp_path / "program.bin").write_bytes(payload)
    script = textwrap.dedent(
        f"""
        import numpy as np
        import modjax as jax
        from modjax.experimental.serialize_executable import deserialize_and_load
        from modjax.tree_util import tree_structure
        in_tree = tree_structure(((0, 0), {{}}))
        out_tree = tree_structure((0, {{"s": 0}}))
        payload = open({str(tmp_path / "program.bin")!r}, "rb").read()
        product, rest = deserialize_and_load(payload, in_tree, out_tree)(
            np.ones((2, 3), np.float32), np.ones((3, 2), np.float32))
        print(float(product.sum()), float(rest["s"]))
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["12.0", "6.0"]
