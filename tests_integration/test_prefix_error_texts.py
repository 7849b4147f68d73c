"""Specs that are not pytree prefixes of their values raise JAX 0.10.2's errors.

jit's shardings, shard_map's specs, pmap's and vmap's axes, device_put's devices and
with_sharding_constraint's shardings name the first (or every) place where the spec
and the value differ, in JAX's words (recorded from JAX 0.10.2).
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
from modjax.sharding import Mesh, NamedSharding, PartitionSpec

X = np.ones(4, np.float32)
MESH = Mesh(np.array(jax.devices()[:1]), ("x",))
S = NamedSharding(MESH, PartitionSpec())


def _leaf_types(text: str) -> str:
    return text.replace("modjax.tracecore.tree_util.PytreeLeaf", "jax._src.api_util.PytreeLeaf")


CASES = {
    "jit in_shardings length": (
        lambda: jax.jit(lambda a: a, in_shardings=(S, S))(X),
        "pjit in_shardings specification must be a tree prefix of the positional arguments "
        "tuple. In particular, pjit in_shardings must either be a Sharding, a PartitionSpec, or "
        "a tuple of length equal to the number of positional arguments. But pjit in_shardings "
        "is the wrong length: got a tuple or list of length 2 for an args tuple of length 1.",
    ),
    "jit in_shardings inside": (
        lambda: jax.jit(lambda a, b: a, in_shardings=(None, (None, None)))(X, (X,)),
        "Mismatch details (1 found):\npytree structure error: different lengths of tuple at "
        "key path\n    pjit in_shardings[1]\nAt that key path, the prefix pytree pjit "
        "in_shardings has a subtree of type tuple of length 2, but the full pytree has a "
        "subtree of the same type but of length 1.",
    ),
    "jit out_shardings": (
        lambda: jax.jit(lambda a: a, out_shardings=(S, S))(X),
        "Mismatch details (1 found):\npytree structure error: different types at key path\n"
        "    pjit out_shardings\nAt that key path, the prefix pytree pjit out_shardings has a "
        "subtree of type\n    <class 'tuple'>\nbut at the same key path the full pytree has a "
        "subtree of different type\n    <class 'jax._src.api_util.PytreeLeaf'>.",
    ),
    "with_sharding_constraint": (
        lambda: jax.jit(lambda a, b: jax.lax.with_sharding_constraint((a, b), (S, (S, S))))(X, X),
        "with_sharding_constraint shardings specification must be a tree prefix of the "
        "corresponding value; \n  Mismatch details (1 found):\n  pytree structure error: "
        "different types at key path\n    with_sharding_constraint shardings[1]\nAt that key "
        "path, the prefix pytree with_sharding_constraint shardings has a subtree of type\n"
        "    <class 'tuple'>\nbut at the same key path the full pytree has a subtree of "
        "different type\n    <class 'jax._src.api_util.PytreeLeaf'>.",
    ),
    "device_put": (
        lambda: jax.device_put((X, X), [jax.devices()[0]]),
        "device_put device specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (1 found):\n  pytree structure error: different types at key path\n"
        "    device_put device\nAt that key path, the prefix pytree device_put device has a "
        "subtree of type\n    <class 'list'>\nbut at the same key path the full pytree has a "
        "subtree of different type\n    <class 'tuple'>.",
    ),
    "pmap in_axes": (
        lambda: jax.pmap(lambda a, b: a, in_axes=(0, (0, 0)))(np.ones((1, 2)), (np.ones((1, 2)),)),
        "pytree structure error: different lengths of tuple at key path\n    pmap in_axes[0][1]\n"
        "At that key path, the prefix pytree pmap in_axes has a subtree of type tuple of length "
        "2, but the full pytree has a subtree of the same type but of length 1.\n\nThe 'full "
        "pytree' here is the tuple of arguments passed positionally to the pmapped function, "
        "and the value of `in_axes` must be a tree prefix of that tuple. But it was not a "
        "prefix.\n\nCheck that the value of the `in_axes` argument to `pmap` is a tree prefix "
        "of the tuple of arguments passed positionally to the pmapped function.",
    ),
    "shard_map in_specs": (
        lambda: jax.shard_map(
            lambda a, b: a, mesh=MESH, in_specs=(PartitionSpec("x"),), out_specs=PartitionSpec()
        )(X, X),
        "pytree structure error: different lengths of tuple at key path\n    shard_map in_specs\n"
        "At that key path, the prefix pytree shard_map in_specs has a subtree of type tuple of "
        "length 1, but the full pytree has a subtree of the same type but of length 2.",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_prefix_error_is_jaxs(name):
    fn, message = CASES[name]
    with pytest.raises(ValueError) as info:
        fn()
    assert _leaf_types(str(info.value).split("\n--------------------\n")[0]) == message
