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
from modjax.experimental.compute_on import compute_on

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
