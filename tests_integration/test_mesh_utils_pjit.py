"""``jax.experimental.mesh_utils`` and the deprecated ``jax.experimental.pjit`` (8 devices).

The answers are JAX 0.10.2's on CPU devices: meshes in the devices' order, JAX's
errors for a wrong device count, a non-integer shape and a missing slice index.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental import mesh_utils
from modjax.sharding import Mesh, NamedSharding
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main


def check_device_mesh_keeps_the_device_order():
    devices = jax.devices()
    mesh = mesh_utils.create_device_mesh((2, 4))
    assert mesh.shape == (2, 4) and mesh.dtype == object
    assert [d.id for d in mesh.reshape(-1)] == [d.id for d in devices]
    sub = mesh_utils.create_device_mesh([2, 2], devices[4:])
    assert [[d.id for d in row] for row in sub] == [[4, 5], [6, 7]]
    x = jax.device_put(
        jnp.arange(16.0).reshape(4, 4), NamedSharding(Mesh(mesh, ("a", "b")), P("a", "b"))
    )
    assert x.sharding.shard_shape(x.shape) == (2, 1)
    assert jnp.sum(x) == 120.0


def check_device_mesh_errors_as_jax():
    with pytest.raises(
        ValueError, match=r"Number of devices 8 must equal the product of mesh_shape \(3, 2\)"
    ):
        mesh_utils.create_device_mesh((3, 2))
    with pytest.raises(ValueError, match="should be a sequence of ints. Got"):
        mesh_utils.create_device_mesh(("a", 2))


def check_hybrid_mesh_tiles_granules():
    mesh = mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1), process_is_granule=True)
    assert mesh.shape == (2, 4)
    assert [d.id for d in mesh.reshape(-1)] == list(range(8))
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mesh_utils.create_hybrid_device_mesh((2, 4), (1, 1))
    with pytest.raises(
        ValueError, match=r"Number of slices 1 must equal the product of dcn_mesh_shape"
    ):
        mesh_utils.create_hybrid_device_mesh((2, 2), (2, 1), process_is_granule=True)


def check_device_kind_handlers_decide_the_layout():
    kind = jax.devices()[0].device_kind
    mesh_utils.device_kind_handler_dict[kind] = lambda shape, devices, **_: np.array(
        devices[::-1], dtype=object
    ).reshape(shape)
    try:
        mesh = mesh_utils.create_device_mesh((8,))
    finally:
        del mesh_utils.device_kind_handler_dict[kind]
    assert [d.id for d in mesh] == list(range(7, -1, -1))


def check_pjit_is_a_deprecated_jit_with_shardings():
    from modjax.experimental import pjit as pjit_module

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pjit = pjit_module.pjit
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    mesh = jax.make_mesh((8,), ("x",))
    sharded = NamedSharding(mesh, P("x"))
    f = pjit(lambda a, b: a * b, sharded, sharded, static_argnums=(1,))
    out = f(jnp.arange(8.0), 3.0)
    assert out.sharding == sharded and out.tolist() == [3.0 * i for i in range(8)]
    with pytest.raises(AttributeError):
        pjit_module.not_a_name  # noqa: B018


CHECKS = [
    check_device_mesh_keeps_the_device_order,
    check_device_mesh_errors_as_jax,
    check_hybrid_mesh_tiles_granules,
    check_device_kind_handlers_decide_the_layout,
    check_pjit_is_a_deprecated_jit_with_shardings,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


def test_one_device_mesh():
    assert mesh_utils.create_device_mesh((1,)).tolist() == jax.devices()


if __name__ == "__main__":
    main(CHECKS)
