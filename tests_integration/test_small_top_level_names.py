"""jax.ds, jax.ops, jax.memory and jax.version as JAX 0.10.2 has them.

Expected values are JAX 0.10.2's answers to the same calls (``/work/jaxref/bin/python``).
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp

X = jnp.arange(10)


def test_ds_indexes_static_and_dynamic_windows_as_jax():
    assert X[jax.ds(1, 3, 2)].tolist() == [1, 3, 5]
    assert X[jax.ds(1, 3)].tolist() == [1, 2, 3]
    assert X[jax.ds(None)].tolist() == list(range(10)) and jax.ds(None) == slice(None)
    assert X[jax.ds(4)].tolist() == [0, 1, 2, 3]
    assert X[jax.ds(8, 3)].tolist() == [7, 8, 9]  # a window past the end moves back inside
    assert X[jax.ds(-2, 2)].tolist() == [8, 9]
    assert X[jax.ds(8, 3, 2)].tolist() == [8, 9, 9]  # strided: each index clamps
    window = jax.jit(lambda x, i: x[jax.ds(i, 3)])
    assert window(X, 8).tolist() == [7, 8, 9] and window(X, 2).tolist() == [2, 3, 4]
    assert jax.jit(lambda x, i: x[jax.ds(i, 3, 2)])(X, 8).tolist() == [8, 9, 9]
    y = jnp.arange(12).reshape(3, 4)
    assert jax.jit(lambda y, i: y[1, jax.ds(i, 2)])(y, 1).tolist() == [5, 6]
    out = jax.jit(lambda y, i: y[jax.ds(i, 2), None, 1:])(y, 1)
    assert out.tolist() == [[[5, 6, 7]], [[9, 10, 11]]]
    pick = jax.jit(lambda y, i: y[jax.ds(i, 2), jnp.array([0, 3])])(y, 1)
    assert pick.tolist() == [[4, 7], [8, 11]]
    assert jax.vmap(lambda i: X[jax.ds(i, 2)])(jnp.arange(3)).tolist() == [[0, 1], [1, 2], [2, 3]]
    grad = jax.grad(lambda x, i: x[jax.ds(i, 2)].sum())(jnp.arange(5.0), 1)
    assert grad.tolist() == [0.0, 1.0, 1.0, 0.0, 0.0]
    with pytest.raises(TypeError, match="slice_sizes must be less than or equal"):
        jnp.arange(3)[jax.ds(0, 5)]


def test_ds_in_index_updates_drops_a_window_out_of_bounds_as_jax():
    assert X.at[jax.ds(2, 3)].set(0).tolist() == [0, 1, 0, 0, 0, 5, 6, 7, 8, 9]
    update = jax.jit(lambda x, i: x.at[jax.ds(i, 3)].set(0))
    assert update(X, 2).tolist() == [0, 1, 0, 0, 0, 5, 6, 7, 8, 9]
    assert update(X, 8).tolist() == list(range(10))


DATA = jnp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
IDS = jnp.array([0, 2, 0, -1])  # -1 is out of range: dropped
JAX_SEGMENTS = {
    "segment_sum": ([[6.0, 8.0], [0.0, 0.0], [3.0, 4.0]], 0.0),
    "segment_prod": ([[5.0, 12.0], [1.0, 1.0], [3.0, 4.0]], 1.0),
    "segment_max": ([[5.0, 6.0], [-np.inf, -np.inf], [3.0, 4.0]], -np.inf),
    "segment_min": ([[1.0, 2.0], [np.inf, np.inf], [3.0, 4.0]], np.inf),
}


@pytest.mark.parametrize("name", sorted(JAX_SEGMENTS))
def test_segment_reductions_match_jax(name):
    fn = getattr(jax.ops, name)
    expected, empty = JAX_SEGMENTS[name]
    assert fn(DATA, IDS).tolist() == expected
    assert fn(DATA, IDS, num_segments=4).tolist() == [*expected, [empty, empty]]
    assert fn(DATA, IDS, 3, bucket_size=2).tolist() == expected


def test_segment_reductions_under_transformations_and_their_errors():
    assert jax.ops.segment_max(jnp.array([1, 5, 2]), jnp.array([0, 0, 2]), 3).tolist() == [
        5,
        np.iinfo(np.int32).min,
        2,
    ]
    assert jax.jit(lambda d, i: jax.ops.segment_sum(d, i, 3))(DATA, IDS).tolist() == [
        [6.0, 8.0],
        [0.0, 0.0],
        [3.0, 4.0],
    ]
    grad = jax.grad(lambda d: jax.ops.segment_sum(d, IDS, 3).sum())(DATA)
    assert grad.tolist() == [[1.0, 1.0], [1.0, 1.0], [1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(jax.errors.ConcretizationTypeError, match="num_segments"):
        jax.jit(lambda d, i: jax.ops.segment_sum(d, i))(DATA, IDS)
    with pytest.raises(ValueError, match="non-negative"):
        jax.ops.segment_sum(DATA, IDS, -1)


def test_memory_spaces_and_version():
    space = jax.memory.Space
    assert [s.name for s in space] == ["Device", "Host", "Any"]
    assert repr(space.Host) == "MemorySpace.Host" and {space.Device: 1}[space.Device] == 1
    assert isinstance(jax.version.__version__, str) and jax.version._version
    assert jax.version.__version_info__[:2] == tuple(
        int(p) for p in jax.version.__version__.split(".")[:2]
    )


def _matmul_sin(x, w):
    return jnp.sin(x @ w)


def test_fwd_and_bwd_split_vjp_and_compile_the_backward_pass_once():
    x, w, ct = jnp.arange(16.0).reshape(4, 4) / 10, jnp.ones((4, 4)) / 2, jnp.ones((4, 4))
    fwd, bwd = jax.fwd_and_bwd(_matmul_sin, argnums=(0, 1))
    expected_y, pullback = jax.vjp(_matmul_sin, x, w)
    y, residuals = fwd(x, w)
    grads = bwd(residuals, ct)
    assert np.allclose(y, expected_y)
    for got, want in zip(grads, pullback(ct), strict=True):
        assert np.allclose(got, want)
    for i in range(3):
        bwd(fwd(x + i, w)[1], ct)
    assert bwd._cache_size() == 1 and fwd._cache_size() == 1
    fwd1, bwd1 = jax.fwd_and_bwd(
        lambda x, w: (_matmul_sin(x, w), 7), argnums=1, has_aux=True, jitted=False
    )
    y, residuals, aux = fwd1(x, w)
    assert aux == 7 and np.allclose(bwd1(residuals, ct), pullback(ct)[1])


def _tripled(x):
    return x * 3


def test_monitoring_reports_tracing_lowering_and_compiling_with_jax_event_names(tmp_path):
    from modjax import monitoring

    seen: list = []

    def on_duration(event, duration, **kwargs):
        seen.append(("duration", event, kwargs.get("fun_name"), duration >= 0))

    def on_span(event, start, end, **kwargs):
        seen.append(("span", event, kwargs.get("fun_name"), end >= start))

    def on_event(event, **kwargs):
        seen.append(("event", event))

    monitoring.register_event_duration_secs_listener(on_duration)
    monitoring.register_event_time_span_listener(on_span)
    monitoring.register_event_listener(on_event)
    try:
        x = jnp.ones(7)  # a shape no other test compiles for _tripled
        with jax.config.option("compilation_cache_dir")(str(tmp_path)):
            jax.jit(_tripled)(x)
            jax.clear_caches()
            jax.jit(_tripled)(x)  # from the disk cache this time
    finally:
        monitoring.unregister_event_duration_listener(on_duration)
        monitoring.unregister_event_time_span_listener(on_span)
        monitoring.unregister_event_listener(on_event)
    assert ("duration", "/jax/core/compile/jaxpr_trace_duration", "_tripled", True) in seen
    assert (
        "span",
        "/jax/core/compile/jaxpr_to_mlir_module_duration",
        "jit(_tripled)",
        True,
    ) in seen
    assert ("duration", "/jax/core/compile/backend_compile_duration", "jit(_tripled)", True) in seen
    assert ("event", "/jax/compilation_cache/compile_requests_use_cache") in seen
    assert ("event", "/jax/compilation_cache/cache_misses") in seen
    assert ("event", "/jax/compilation_cache/cache_hits") in seen
    with pytest.raises(ValueError, match="not a registered listener"):
        monitoring.unregister_event_listener(on_event)
