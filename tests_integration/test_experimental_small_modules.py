"""Small jax.experimental modules: profiler, control_deps, topologies, buffer_callback,
key_reuse."""

from __future__ import annotations

import numpy as np
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


def _add_one(ctx, out, x):
    np.asarray(out)[...] = np.asarray(x) + 1


def test_buffer_callback_fills_results_in_place_as_jax():
    from modjax.experimental.buffer_callback import Buffer, ExecutionContext, buffer_callback

    seen = []

    def two(ctx, out, a, b=None):
        seen.append((type(ctx), type(out[0])))
        np.asarray(out[0])[...] = np.asarray(a) * 2
        np.asarray(out[1])[...] = np.asarray(b).sum()

    x = jnp.array(41, dtype=jnp.int32)
    add_one = buffer_callback(_add_one, jax.ShapeDtypeStruct(x.shape, x.dtype))
    assert int(add_one(x)) == 42 and int(jax.jit(add_one)(x)) == 42
    shapes = (jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((), jnp.float32))
    doubled, total = buffer_callback(two, shapes)(jnp.arange(3.0), b=jnp.ones(4))
    assert doubled.tolist() == [0.0, 2.0, 4.0] and float(total) == 4.0
    assert seen == [(ExecutionContext, Buffer)]
    scalar = jax.ShapeDtypeStruct((), jnp.float32)
    for method in ("sequential", "expand_dims", "broadcast_all", "legacy_vectorized"):
        batched = jax.vmap(buffer_callback(_add_one, scalar, vmap_method=method))
        assert batched(jnp.arange(3.0)).tolist() == [1.0, 2.0, 3.0]
    in_place = buffer_callback(
        _add_one, jax.ShapeDtypeStruct((2,), jnp.float32), input_output_aliases={0: 0}
    )
    assert jax.jit(in_place)(jnp.ones(2)).tolist() == [2.0, 2.0]


def test_buffer_callback_errors_as_jax():
    from modjax.experimental.buffer_callback import buffer_callback

    scalar = jax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(ValueError, match="Buffer callbacks do not support JVP"):
        jax.grad(buffer_callback(_add_one, scalar, vmap_method="sequential"))(1.0)
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(buffer_callback(_add_one, scalar))(jnp.arange(3.0))
    with pytest.raises(ValueError, match="output index 1 outside the range"):
        buffer_callback(_add_one, scalar, input_output_aliases={0: 1})(1.0)
    with pytest.raises(RuntimeError, match="must not return any values"):
        buffer_callback(lambda ctx, out, v: 3, scalar)(1.0)


def test_key_reuse_module_is_importable_and_the_check_is_the_config_option():
    import modjax.experimental.key_reuse as key_reuse

    assert key_reuse.__all__ == []  # JAX 0.10.2's module has no public names either
    with jax.debug_key_reuse(True):
        key = jax.random.key(0)
        jax.random.normal(key)
        with pytest.raises(jax.errors.KeyReuseError):
            jax.random.normal(key)
