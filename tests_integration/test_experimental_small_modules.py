"""Small jax.experimental modules: profiler, control_deps and topologies."""

from __future__ import annotations

import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.profiler import get_profiled_instructions_proto


def test_a_cpu_trace_has_an_empty_proto_and_a_missing_one_is_an_error(tmp_path):
    with jax.profiler.trace(str(tmp_path)):
        jax.jit(lambda x: x * 2)(jnp.ones(3)).block_until_ready()
    (run,) = (tmp_path / "plugins" / "profile").iterdir()
    assert get_profiled_instructions_proto(str(run)) == b""  # JAX 0.10.2's answer on CPU
    with pytest.raises(RuntimeError, match="NOT_FOUND"):
        get_profiled_instructions_proto(str(tmp_path / "missing"))


def test_control_dependencies_keep_values_and_reach_the_module():
    from modjax.experimental.control_deps import control_dep, schedule

    def f(x):
        a, b, c = x * 2, x + 1, x - 3
        control_dep(a, b)
        schedule([a, b, c])
        return a + b + c

    assert float(jax.jit(f)(1.0)) == 2.0 and float(f(1.0)) == 2.0
    assert jax.jit(f).lower(1.0).as_text().count("stablehlo.custom_call @control_dep") == 3


def test_topologies_as_jax_on_cpu():
    from modjax.experimental import topologies

    topo = topologies.get_attached_topology()
    assert topo.devices == jax.devices()
    mesh = topologies.make_mesh(topo, (1,), ("x",))
    assert mesh.shape == {"x": 1} and list(mesh.devices.flat) == jax.devices()
    with pytest.raises(RuntimeError, match="JAX TPU support not installed"):
        topologies.get_topology_desc("v4:2x2x1")
    with pytest.raises(NotImplementedError, match="topology not implemented for cpu"):
        topologies.get_topology_desc("", "cpu")
    with pytest.raises(RuntimeError, match="Unknown backend: 'gpu' requested"):
        topologies.get_topology_desc("x", "gpu")
