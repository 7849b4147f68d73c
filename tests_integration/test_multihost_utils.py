"""``jax.experimental.multihost_utils`` in one process, against JAX 0.10.2's answers.

The multi-process behaviour is checked by ``test_distributed.py`` (two processes).
"""

from __future__ import annotations

import numpy as np

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental import multihost_utils as mh
from modjax.sharding import PartitionSpec as P


def test_gathers_and_broadcasts_are_numpy_arrays_of_this_process():
    out = mh.process_allgather({"a": jnp.arange(3), "b": 2.0})
    assert type(out["a"]) is np.ndarray and out["a"].tolist() == [[0, 1, 2]]
    assert out["b"].tolist() == [2.0]
    assert mh.process_allgather(jnp.arange(3), tiled=True).tolist() == [0, 1, 2]
    assert mh.process_allgather(jnp.ones((2, 2))).shape == (1, 2, 2)
    assert mh.process_allgather(np.float32(1.0), tiled=True) == 1.0
    out = mh.broadcast_one_to_all({"a": jnp.arange(3.0), "b": 1})
    assert type(out["a"]) is np.ndarray and out["a"].tolist() == [0.0, 1.0, 2.0]
    assert type(out["b"]) is np.ndarray and out["b"] == 1
    assert mh.broadcast_one_to_all(jnp.arange(3), is_source=False).tolist() == [0, 1, 2]


def test_barriers_and_checks_pass_alone():
    assert mh.sync_global_devices("step") is None
    mh.assert_equal({"s": 1.0, "v": np.ones((2, 2))})
    assert mh.reached_preemption_sync_point(3) is False


def test_host_local_and_global_arrays_are_the_same_in_one_process():
    mesh = jax.make_mesh((1,), ("x",))
    g = mh.host_local_array_to_global_array(jnp.arange(4.0), mesh, P("x"))
    assert g.tolist() == [0.0, 1.0, 2.0, 3.0] and g.sharding.spec == P("x")
    back = mh.global_array_to_host_local_array(g, mesh, P("x"))
    assert back.tolist() == g.tolist() and back.sharding == g.sharding
    tree = mh.host_local_array_to_global_array(
        {"a": np.ones(2), "b": (np.zeros(3),)}, mesh, {"a": P("x"), "b": P()}
    )
    assert tree["a"].sharding.spec == P("x") and tree["b"][0].sharding.spec == P()
