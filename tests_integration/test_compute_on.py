"""``jax.experimental.compute_on.compute_on`` as JAX 0.10.2 behaves on CPU.

Equations traced inside the block are marked with XLA's ``_xla_compute_type``
frontend attribute when lowered (the call of a jitted function, the ops of its
body, the broadcasts of scalar operands), as JAX 0.10.2 prints them; the
programs run as without the block. The block is part of jit's trace context,
and the marks survive differentiation. Bad compute types raise JAX's errors.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.compute_on import compute_on, compute_on2

HOST = '{mhlo.frontend_attributes = {_xla_compute_type = "host"}}'


def _body_lines(text: str) -> list[str]:
    """The module's op lines, without SSA names' numbering differences mattering."""
    return [line.strip() for line in text.splitlines() if "=" in line and "stablehlo" in line]


@compute_on("device_host")
@jax.jit
def _double(x):
    return x * 2


def test_a_jitted_function_under_compute_on_is_marked_as_jax_marks_it():
    f = jax.jit(lambda x: _double(x) + 1)
    x = jnp.ones(3)
    np.testing.assert_array_equal(np.asarray(f(x)), np.full(3, 3.0, np.float32))
    text = f.lower(x).as_text()
    # JAX 0.10.2's lines: the call, and in @_double the broadcast of 2.0 and the multiply
    assert f"%0 = call @_double(%arg0) {HOST} : (tensor<3xf32>) -> tensor<3xf32>" in text, text
    assert (
        f"%0 = stablehlo.broadcast_in_dim %cst, dims = [] {HOST} : (tensor<f32>) -> "
        "tensor<3xf32>" in text
    ), text
    assert f"%1 = stablehlo.multiply %arg0, %0 {HOST} : tensor<3xf32>" in text, text
    # the ops outside the block are not marked
    assert text.count("_xla_compute_type") == 3, text
    assert "%2 = stablehlo.add %0, %1 : tensor<3xf32>" in text, text


def test_a_block_inside_jit_marks_its_operations():
    def h(x):
        with compute_on("device_host"):
            y = jnp.sin(x) * x
        return y + 1

    x = jnp.arange(3.0)
    np.testing.assert_allclose(
        np.asarray(jax.jit(h)(x)), np.sin(np.arange(3.0)) * np.arange(3.0) + 1, rtol=1e-6
    )
    lines = _body_lines(jax.jit(h).lower(x).as_text())
    assert lines[0] == f"%0 = stablehlo.sine %arg0 {HOST} : tensor<3xf32>", lines
    assert lines[1] == f"%1 = stablehlo.multiply %0, %arg0 {HOST} : tensor<3xf32>", lines
    assert all("_xla_compute_type" not in line for line in lines[2:]), lines


def test_the_block_is_part_of_the_trace_context():
    f = jax.jit(lambda x: x * 3)
    x = jnp.ones(2)
    assert "_xla_compute_type" not in f.lower(x).as_text()
    with compute_on("device_host"):
        inside = f.lower(x).as_text()
        np.testing.assert_array_equal(np.asarray(f(x)), np.full(2, 3.0, np.float32))
    assert "_xla_compute_type" in inside
    assert "_xla_compute_type" not in f.lower(x).as_text()


def test_differentiation_keeps_the_marks():
    g = jax.jit(jax.grad(lambda x: _double(x).sum()))
    x = jnp.ones(3)
    np.testing.assert_array_equal(np.asarray(g(x)), np.full(3, 2.0, np.float32))
    text = g.lower(x).as_text()
    # JAX 0.10.2: the call of the linearized _double is marked, and so is its body
    assert f"call @_double(%0) {HOST}" in text, text
    assert f"stablehlo.multiply %arg0, %0 {HOST}" in text, text


@pytest.mark.parametrize(
    ("compute_type", "mark"),
    [("device", "dense"), ("tpu_sparsecore", "sparseoffload")],
)
def test_other_compute_types_run_on_cpu(compute_type, mark):
    def h(x):
        with compute_on(compute_type):
            return x * x

    x = jnp.arange(4.0)
    np.testing.assert_array_equal(np.asarray(jax.jit(h)(x)), np.arange(4.0) ** 2)
    assert f'_xla_compute_type = "{mark}"' in jax.jit(h).lower(x).as_text()


def test_bad_compute_types_raise_jax_errors():
    bad = compute_on("foo")
    with pytest.raises(ValueError, match="Invalid compute type foo. Current supported values"):
        bad.__enter__()
    with pytest.raises(TypeError, match="compute_type argument must be a string"):
        compute_on(3).__enter__()  # type: ignore[arg-type]


# --- compute_on2: a compute_on equation with its results' memory spaces ---------------------

HOST_SPACE, DEVICE_SPACE = jax.memory.Space.Host, jax.memory.Space.Device


def _sin_times(a):
    return jnp.sin(a) * a


def test_compute_on2_types_and_places_results_as_jax():
    body = lambda a, b: (a * 2, jnp.sin(b))  # noqa: E731
    f = compute_on2(compute_type="device_host", out_memory_spaces=(HOST_SPACE, DEVICE_SPACE))(body)
    x = np.arange(3.0, dtype=np.float32)
    # JAX 0.10.2's equation and types
    text = str(jax.make_jaxpr(f)(x, x))
    assert "c:f32<host>[3] d:f32[3] = compute_on[" in text, text
    assert "compute_type=device_host" in text and "compiler_options_json=None" in text, text
    assert "out_memory_spaces=(MemorySpace.Host, MemorySpace.Device)" in text, text
    for a, b in (f(x, x), jax.jit(f)(x, x)):
        assert str(jax.typeof(a)) == "float32<host>[3]" and str(jax.typeof(b)) == "float32[3]"
        assert a.sharding.memory_kind == "pinned_host" and b.sharding.memory_kind == "device"
        np.testing.assert_array_equal(np.asarray(a), x * 2)
        np.testing.assert_allclose(np.asarray(b), np.sin(x), rtol=1e-6)
    # JAX 0.10.2's lowering: a marked call of @compute_on, each result placed
    text = jax.jit(f).lower(x, x).as_text()
    lines = [line.strip() for line in text.splitlines()]
    assert (
        f"%0:2 = call @compute_on(%arg0, %arg1) {HOST} : (tensor<3xf32>, tensor<3xf32>) -> "
        "(tensor<3xf32>, tensor<3xf32>)"
    ) in lines, text
    for i, kind in ((0, "pinned_host"), (1, "device")):
        assert (
            f"%{i + 1} = stablehlo.custom_call @annotate_device_placement(%0#{i}) "
            '{backend_config = "", has_side_effect = true, mhlo.frontend_attributes = '
            f'{{_xla_buffer_placement = "{kind}"}}}} : (tensor<3xf32>) -> tensor<3xf32>'
        ) in lines, text
    assert "func.func private @compute_on(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in text
    assert f"%1 = stablehlo.multiply %arg0, %0 {HOST} : tensor<3xf32>" in lines, text
    assert f"%2 = stablehlo.sine %arg1 {HOST} : tensor<3xf32>" in lines, text
    main = jax.jit(f).lower(x, x).as_text().splitlines()[1]
    assert '-> (tensor<3xf32> {mhlo.memory_kind = "pinned_host"}, tensor<3xf32> {mhlo.memory_' in (
        main
    ), main
    # one space for every result; a wrong prefix is JAX's ValueError
    both = compute_on2(body, compute_type="device_host", out_memory_spaces=HOST_SPACE)(x, x)
    assert [o.sharding.memory_kind for o in both] == ["pinned_host", "pinned_host"]
    bad = compute_on2(body, compute_type="device", out_memory_spaces=(DEVICE_SPACE,) * 3)
    with pytest.raises(ValueError, match="out_memory_spaces specification must be a tree prefix"):
        bad(x, x)


@pytest.mark.parametrize(
    ("compute_type", "options", "attrs"),
    [
        ("device", None, '{_xla_compute_type = "dense", inlineable = "false"}'),
        ("gpu_stream:1", None, '{_xla_stream_annotation = "1", inlineable = "false"}'),
        (
            "device_host",
            {"a": 1},
            '{_xla_compute_type = "host", backend_config = "{\\22a\\22: 1}"}',
        ),
    ],
)
def test_compute_on2_call_attributes_as_jax(compute_type, options, attrs):
    g = compute_on2(
        lambda a: a * 2,
        compute_type=compute_type,
        out_memory_spaces=DEVICE_SPACE,
        compiler_options=options,
    )
    x = np.arange(3.0, dtype=np.float32)
    text = jax.jit(g).lower(x).as_text()
    assert text.startswith("module @jit_wrapped"), text
    assert f"%0 = call @compute_on(%arg0) {{mhlo.frontend_attributes = {attrs}}}" in text, text
    np.testing.assert_array_equal(np.asarray(jax.jit(g)(x)), x * 2)


def test_compute_on2_under_transformations_as_jax():
    # JAX 0.10.2's answers: differentiation keeps the results' memory spaces; a result
    # in host memory wants its cotangent there, which the transposed program refuses
    x = np.arange(3.0, dtype=np.float32)
    fd = compute_on2(_sin_times, compute_type="device_host", out_memory_spaces=DEVICE_SPACE)
    fh = compute_on2(_sin_times, compute_type="device_host", out_memory_spaces=HOST_SPACE)
    want = np.sin(x) + x * np.cos(x)
    for g in (jax.grad(lambda v: fd(v).sum())(x), jax.jit(jax.grad(lambda v: fd(v).sum()))(x)):
        assert str(jax.typeof(g)) == "float32[3]"
        np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5)
    for p, t in (
        jax.jvp(fh, (x,), (jnp.ones(3),)),
        jax.jit(lambda a, u: jax.jvp(fh, (a,), (u,)))(x, jnp.ones(3)),
    ):
        assert str(jax.typeof(p)) == str(jax.typeof(t)) == "float32<host>[3]"
        np.testing.assert_allclose(np.asarray(t), want, rtol=1e-5)
    v = jax.jit(jax.vmap(fh))(np.ones((2, 3), np.float32))
    assert str(jax.typeof(v)) == "float32<host>[2,3]" and v.sharding.memory_kind == "pinned_host"
    np.testing.assert_allclose(np.asarray(v), np.full((2, 3), np.sin(1.0)), rtol=1e-6)
    with pytest.raises(ValueError, match=r"got float32\[\], but expected float32<host>\[\]"):
        jax.grad(lambda v: fh(v).sum())(x)
    host_ct = jax.device_put(jnp.ones(3), HOST_SPACE)
    with pytest.raises(ValueError, match=r"^Expected cotangent type float32\[3\] but got float32"):
        jax.vjp(fh, x)[1](host_ct)
    with pytest.raises(ValueError, match=r"^Expected cotangent type float32\[3\] but got float32"):
        jax.jit(jax.grad(lambda v: jax.device_put(fh(v), DEVICE_SPACE).sum()))(x)
    # an unused result is dropped with its memory space (DCE)
    pair = compute_on2(
        lambda b: (b * 2, b + 1),
        compute_type="device_host",
        out_memory_spaces=(HOST_SPACE, DEVICE_SPACE),
    )
    second = jax.jit(lambda a: pair(a)[1])
    assert str(jax.typeof(second(x))) == "float32[3]"
    assert "mhlo.memory_kind" not in second.lower(x).as_text()
    # closed-over values are operands; nesting is JAX's ValueError when lowered
    c = jnp.arange(3.0)
    add = compute_on2(lambda a: a + c, compute_type="device_host", out_memory_spaces=DEVICE_SPACE)
    np.testing.assert_array_equal(np.asarray(jax.jit(add)(x)), x + np.arange(3.0))
    nested = compute_on2(
        lambda a: fd(a) + 1, compute_type="device_host", out_memory_spaces=DEVICE_SPACE
    )
    with pytest.raises(ValueError, match="Nesting `compute_on` with different compute types"):
        jax.jit(nested).lower(x)


def test_compute_on2_equations_parse_back():
    from modjax.tracecore import jaxpr_equal, parse_jaxpr

    f = compute_on2(
        _sin_times,
        compute_type="device_host",
        out_memory_spaces=HOST_SPACE,
        compiler_options={"a": 1},
    )
    closed = jax.make_jaxpr(f)(np.ones(3, np.float32))
    back = parse_jaxpr(str(closed))
    assert jaxpr_equal(back, closed) and str(back) == str(closed), str(closed)
