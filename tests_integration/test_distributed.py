"""Two processes, 4 CPU devices each, one 8-device mesh (``jax.distributed``).

The test starts two copies of this file as workers on localhost; each joins
the run with ``modjax.distributed.initialize``, builds a global array from its
own rows (``make_array_from_process_local_data``) and runs a ``psum`` under
``shard_map``, a sum with replicated ``out_shardings`` and a sharded matmul.
Both must see all 8 devices, their own 4, and the same, correct results.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import numpy as np
import pytest

_MARK = "MODJAX-DISTRIBUTED:"
A = np.arange(32, dtype=np.float32).reshape(8, 4) / 8
B = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)


def _worker(process_id: int, port: int) -> None:
    import modjax as jax
    from modjax import lax
    from modjax.sharding import (
        Mesh,
        NamedSharding,
        P,
        make_array_from_process_local_data,
        shard_map,
    )

    jax.distributed.initialize(f"127.0.0.1:{port}", num_processes=2, process_id=process_id)
    out = {
        "initialized": jax.distributed.is_initialized(),
        "devices": len(jax.devices()),
        "local": [d.id for d in jax.local_devices()],
        "process_index": jax.process_index(),
        "process_count": jax.process_count(),
    }
    mesh = Mesh(np.array(jax.devices()), ("x",))
    rows = NamedSharding(mesh, P("x"))
    replicated = NamedSharding(mesh, P())
    a = make_array_from_process_local_data(rows, A[4 * process_id : 4 * process_id + 4])
    out["global_shape"] = list(a.shape)
    out["fully_addressable"] = a.is_fully_addressable
    total = shard_map(lambda v: lax.psum(v.sum(0), "x"), mesh=mesh, in_specs=P("x"),
                      out_specs=P())(a)  # fmt: skip
    out["psum"] = np.asarray(total).tolist()
    out["sum"] = float(jax.jit(lambda v: v.sum(), out_shardings=replicated)(a))
    b = jax.device_put(B, replicated)
    out["matmul"] = np.asarray(jax.jit(lambda u, w: u @ w, out_shardings=replicated)(a, b)).tolist()
    from modjax.experimental import multihost_utils as mh

    mine = np.full((2,), process_id, np.int32)
    out["allgather"] = mh.process_allgather({"v": mine, "s": 1.5 * process_id})
    out["allgather"] = {k: v.tolist() for k, v in out["allgather"].items()}
    out["allgather_tiled"] = mh.process_allgather(mine, tiled=True).tolist()
    out["gathered_global"] = mh.process_allgather(a, tiled=True).tolist()
    out["broadcast"] = mh.broadcast_one_to_all(mine + 5).tolist()
    out["broadcast_from_1"] = mh.broadcast_one_to_all(mine + 5, is_source=process_id == 1).tolist()
    mh.sync_global_devices("step")
    mh.assert_equal({"w": np.arange(3.0)})
    try:
        mh.assert_equal(mine, "differs")
    except AssertionError as err:
        out["assert_equal_error"] = str(err).split(".")[0]
    print(_MARK + json.dumps(out), flush=True)
    jax.distributed.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def results():
    port = _free_port()
    env = dict(os.environ, MODJAX_NUM_CPU_DEVICES="4")
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, str(i), str(port)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    outs = []
    for p in procs:
        try:
            stdout, stderr = p.communicate(timeout=240)
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            raise
        lines = [ln for ln in stdout.splitlines() if ln.startswith(_MARK)]
        assert lines, f"worker failed (exit {p.returncode}):\n{stdout[-3000:]}\n{stderr[-3000:]}"
        outs.append(json.loads(lines[-1][len(_MARK) :]))
    return outs


def test_both_processes_see_the_global_devices(results):
    for i, out in enumerate(results):
        assert out["initialized"] and out["devices"] == 8
        assert out["process_index"] == i and out["process_count"] == 2
        assert len(out["local"]) == 4
    assert set(results[0]["local"]).isdisjoint(results[1]["local"])


def test_global_array_from_process_local_rows(results):
    for out in results:
        assert out["global_shape"] == [8, 4] and not out["fully_addressable"]


def test_psum_under_shard_map_across_processes(results):
    for out in results:
        np.testing.assert_allclose(out["psum"], A.sum(0), rtol=1e-6)


def test_replicated_sum_and_sharded_matmul(results):
    for out in results:
        np.testing.assert_allclose(out["sum"], A.sum(), rtol=1e-6)
        np.testing.assert_allclose(out["matmul"], A @ B, rtol=1e-5, atol=1e-6)


def test_multihost_utils_across_processes(results):
    for out in results:
        assert out["allgather"] == {"v": [[0, 0], [1, 1]], "s": [0.0, 1.5]}
        assert out["allgather_tiled"] == [0, 0, 1, 1]
        np.testing.assert_allclose(out["gathered_global"], A, rtol=1e-6)
        assert out["broadcast"] == [5, 5] and out["broadcast_from_1"] == [6, 6]
        assert out["assert_equal_error"] == "differs"


if __name__ == "__main__":
    _worker(int(sys.argv[1]), int(sys.argv[2]))
