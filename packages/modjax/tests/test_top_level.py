"""Top-level names of ``jax`` that modjax assembles: arrays and devices, names on the
name stack, compile-time evaluation, configuration context managers, stages, dlpack."""

import warnings

import numpy as np
import pytest

import modjax
import modjax as jax
import modjax.core
import modjax.numpy as jnp


def test_live_arrays_copy_to_host_and_typeof():
    x = jnp.arange(3.0)
    assert any(a is x for a in jax.live_arrays())
    tree = {"a": x, "b": [x, 1.0]}
    assert jax.copy_to_host_async(tree) is tree
    assert jax.typeof(x) == modjax.core.ShapedArray((3,), np.float32)
    assert jax.typeof(1.0).weak_type and jax.typeof(1.0).dtype == np.float32
    assert isinstance(jax.devices()[0], jax.Device)
    assert jax.Shard is jax.runtime.Shard and jax.float0 == jax.dtypes.float0


def test_named_call_and_named_scope_name_the_equations():
    named = jax.named_call(lambda x: jnp.sin(x), name="encoder")
    eqn = jax.make_jaxpr(named)(1.0).jaxpr.eqns[0]
    assert eqn.source_info.name_stack[-1] == "encoder"
    with jax.named_scope("block"):
        eqn = jax.make_jaxpr(lambda x: jnp.cos(x))(1.0).jaxpr.eqns[0]
    assert eqn.source_info.name_stack[-1] == "block"
    assert named(0.0) == 0.0
    with pytest.raises(TypeError, match="must be a string"), jax.named_scope(3):
        pass


def test_ensure_compile_time_eval_computes_known_values_under_jit():
    seen = {}

    @jax.jit
    def f(x):
        with jax.ensure_compile_time_eval():
            known = jnp.sin(2.0) * 3
            seen["known"] = type(known)
            traced = x * 2
            seen["traced"] = isinstance(traced, modjax.core.Tracer)
            scale = 2.0 if known > 0 else -1.0  # a Python branch on a computed value
        return traced * scale + known

    np.testing.assert_allclose(f(1.0), 4 + 3 * np.sin(2.0), rtol=1e-6)
    assert seen == {"known": jax.runtime.ArrayImpl, "traced": True}
    jaxpr = jax.make_jaxpr(f)(1.0)
    assert "sin" not in str(jaxpr)


def test_config_context_managers():
    with jax.enable_x64(True):
        assert jnp.ones(2).dtype == np.float64
    assert jnp.ones(2).dtype == np.float32
    with jax.numpy_rank_promotion("raise"), pytest.raises(ValueError):
        jnp.ones((2, 3)) + jnp.ones(3)
    with jax.log_compiles(True):
        assert jax.config.read("log_compiles") is True
    assert jax.config.read("log_compiles") is False


def test_host_spellings_warn_and_environment_info():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert (jax.host_count(), jax.host_id(), jax.host_ids()) == (1, 0, [0])
    assert len(caught) == 3 and "process_" in str(caught[0].message)
    text = jax.print_environment_info(return_string=True)
    assert "jaxlib:" in text and "device info: cpu-1" in text


def test_stages_dlpack_and_compilation_cache(tmp_path):
    traced = jax.jit(lambda x: x + 1).trace(1.0)
    assert isinstance(traced, jax.stages.Traced)
    assert isinstance(traced.lower(), jax.stages.Lowered)
    info = jax.stages.ArgInfo(jax.typeof(jnp.ones(2)), donated=False)
    assert info.shape == (2,) and info.dtype == np.float32
    x = jax.dlpack.from_dlpack(np.arange(3.0))
    assert isinstance(x, jax.Array) and x.tolist() == [0.0, 1.0, 2.0]
    assert jax.dlpack.is_supported_dtype(np.float32) and jax.dlpack.is_supported_dtype("bfloat16")
    assert not jax.dlpack.is_supported_dtype(jax.dtypes.float8_e4m3fn)
    from modjax.experimental.compilation_cache import compilation_cache as cc

    cc.set_cache_dir(tmp_path)
    try:
        assert jax.config.read("compilation_cache_dir") == str(tmp_path)
    finally:
        cc.reset_cache()
    assert jax.config.read("compilation_cache_dir") is None
