"""``jax.experimental.shard_alike`` on 8 devices: JAX 0.10.2's shardings and errors."""

from __future__ import annotations

import numpy as np
import pytest
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.shard_alike import shard_alike
from modjax.sharding import AxisType, NamedSharding
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main


def _pair(x, y):
    return shard_alike(x * 2, y + 1)


def check_the_unsharded_value_takes_the_others_sharding():
    for axis_type in (AxisType.Auto, AxisType.Explicit):
        mesh = jax.make_mesh((8,), ("x",), axis_types=(axis_type,))
        x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))
        a, b = jax.jit(_pair)(x, jnp.ones(16))
        assert a.sharding.spec == b.sharding.spec == P("x")
        np.testing.assert_array_equal(b, np.full(16, 2.0))
    text = jax.jit(_pair).lower(x, jnp.ones(16)).as_text()
    assert text.count("sdy.sharding_group") == 2 and "group_id=0" in text


def check_groups_are_numbered_per_program():
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    x = jax.device_put(jnp.arange(16.0), NamedSharding(mesh, P("x")))

    def two(x, y):
        a, b = shard_alike(x, y)
        c, d = shard_alike(a * 2, b * 3)
        return c + d

    text = jax.jit(two).lower(x, jnp.ones(16)).as_text()
    assert "group_id=0" in text and "group_id=1" in text
    assert jax.jit(two).lower(x, jnp.ones(16)).as_text() == text  # deterministic
    np.testing.assert_array_equal(jax.jit(two)(x, jnp.ones(16)), np.arange(16.0) * 2 + 3)


CHECKS = [
    check_the_unsharded_value_takes_the_others_sharding,
    check_groups_are_numbered_per_program,
]

results, test_on_8_devices = device_tests(__file__, CHECKS)


def test_values_transformations_and_errors():
    a, b = shard_alike({"u": jnp.ones(3)}, {"u": jnp.zeros(3)})
    assert a["u"].tolist() == [1.0, 1.0, 1.0] and b["u"].tolist() == [0.0, 0.0, 0.0]
    grad = jax.grad(lambda x: jnp.sum(shard_alike(x, x * 3)[1]))(jnp.ones(3))
    assert grad.tolist() == [3.0, 3.0, 3.0]
    xs, ys = jax.vmap(shard_alike, in_axes=(0, None))(jnp.ones((2, 3)), jnp.arange(3.0))
    assert xs.shape == ys.shape == (2, 3) and ys.tolist() == [[0.0, 1.0, 2.0]] * 2
    with pytest.raises(ValueError, match="The leaves shapes of `x` and `y` should match"):
        shard_alike(jnp.ones(3), jnp.zeros(4))
    with pytest.raises(ValueError, match="Trees should be equal"):
        shard_alike((jnp.ones(3),), jnp.zeros(3))


if __name__ == "__main__":
    main(CHECKS)
