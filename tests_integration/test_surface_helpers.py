"""Small public names of JAX 0.10.2 added for the public surface: ``lax.square_p`` (``lax.square``
and ``jnp.square`` bind it, as in JAX), ``lax.stop_gradient_p``/``linear_solve_p``,
``jax.fwd_and_bwd``, and ``jax.custom_derivatives``'s ``zero_from_primal``,
``custom_vjp_primal_tree_values`` and call primitives."""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.custom_derivatives import (
    CustomVJPPrimal,
    custom_jvp_call_p,
    custom_vjp_call_p,
    custom_vjp_primal_tree_values,
    zero_from_primal,
)
from modjax.testing import check_primitive


def test_square_is_one_primitive_as_in_jax():
    assert str(jax.make_jaxpr(jnp.square)(1.0)).count("square a") == 1
    assert "mul 2.0" in str(jax.make_jaxpr(jax.grad(jnp.square))(1.0))
    assert int(lax.square(3)) == 9 and complex(lax.square(1.0 + 2j)) == -3 + 4j
    np.testing.assert_array_equal(jnp.square(jnp.array([True, False])), [1, 0])
    np.testing.assert_array_equal(
        jax.jit(jax.vmap(jax.grad(lax.square)))(jnp.arange(3.0)), [0, 2, 4]
    )
    assert "batching" in check_primitive(lax.square_p, max_examples=3)


def test_primitives_exported_under_jax_names():
    assert lax.stop_gradient_p.name == "stop_gradient"
    assert lax.linear_solve_p.name == "custom_linear_solve"
    assert (custom_jvp_call_p.name, custom_vjp_call_p.name) == (
        "custom_jvp_call",
        "custom_vjp_call",
    )


def test_fwd_and_bwd():
    x = jnp.ones((4, 4))
    fwd, bwd = jax.fwd_and_bwd(lambda x, w: x @ w, argnums=(0, 1))
    y, res = fwd(x, 2 * x)
    np.testing.assert_array_equal(y, 8 * np.ones((4, 4)))
    cx, cw = bwd(res, x)
    np.testing.assert_array_equal(cx, 8 * np.ones((4, 4)))
    np.testing.assert_array_equal(cw, 4 * np.ones((4, 4)))
    fwd, bwd = jax.fwd_and_bwd(lambda x, w: (x @ w).sum(), argnums=0, jitted=False)
    _, res = fwd(x, x)
    assert bwd(res, 1.0).shape == (4, 4)  # an int argnums: one cotangent, not a tuple
    fwd, _ = jax.fwd_and_bwd(lambda x: (x.sum(), x * 2), argnums=0, has_aux=True)
    out, _, aux = fwd(x)
    assert float(out) == 16.0 and aux.shape == (4, 4)
    with pytest.raises(TypeError):
        jax.fwd_and_bwd(1, argnums=0)


def test_custom_derivatives_helpers():
    zeros = zero_from_primal({"a": jnp.ones(2), "b": 3})
    np.testing.assert_array_equal(zeros["a"], [0.0, 0.0])
    assert zeros["b"].dtype == jax.dtypes.float0
    symbolic = zero_from_primal(jnp.ones(2), symbolic_zeros=True)
    assert isinstance(symbolic, jax.custom_derivatives.SymbolicZero)
    assert custom_vjp_primal_tree_values((CustomVJPPrimal(1.0, True),)) == (1.0,)
    with pytest.raises(TypeError, match="unexpected leaf type"):
        custom_vjp_primal_tree_values((1.0,))


def test_stage_lifts_values_into_the_trace():
    staged = lax.stage(np.ones(2))
    assert isinstance(staged, jax.Array) and staged.dtype == np.float32
    assert lax.stage(3.0).weak_type
    assert "stage a" in str(jax.make_jaxpr(lambda x: lax.stage(np.ones(2)) + x)(1.0))
    assert float(jax.grad(lambda x: lax.stage(x) * 2)(1.0)) == 2.0
    np.testing.assert_array_equal(jax.jit(jax.vmap(lax.stage))(jnp.arange(3.0)), [0, 1, 2])
    np.testing.assert_array_equal(lax.shape_as_value((2, 3)), [2, 3])
    assert lax.shape_as_value(()).shape == (0,)


def test_dce_sink_keeps_values_through_dce():
    def f(x):
        lax.dce_sink({"a": x * 2, "b": (x,)})
        return x + 1

    text = str(jax.make_jaxpr(f)(1.0))
    assert text.count("dce_sink{NoDCE}[prevent_mlir_dce=False]") == 2 and "mul a 2.0" in text
    assert float(jax.jit(f)(1.0)) == 2.0 and lax.dce_sink(3.0) is None
    assert float(jax.grad(f)(1.0)) == 1.0
    np.testing.assert_array_equal(jax.vmap(f)(jnp.ones(2)), [2.0, 2.0])
    g = jax.jit(lambda x: (lax.dce_sink(x * 3, prevent_mlir_dce=True), x)[1])
    assert "custom_call @dce_sink" in g.lower(1.0).as_text() and float(g(2.0)) == 2.0


def test_linear_call_uses_the_given_transpose():
    from modjax.custom_derivatives import linear_call

    def f(x, y):
        return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, y, x)

    assert float(f(1.0, 2.0)) == 1.5
    assert float(jax.grad(f)(1.0, 2.0)) == 1.5 and float(jax.jit(jax.grad(f))(1.0, 2.0)) == 1.5
    assert float(jax.jvp(lambda x: f(x, 2.0), (1.0,), (1.0,))[1]) == 1.5
    text = str(jax.make_jaxpr(jax.grad(f))(1.0, 2.0))
    assert text.count("linear_call[") == 2 and "num_res=1" in text
    # a transpose other than the true one: reverse mode uses it, forward mode does not
    g = lambda x: linear_call(lambda r, x: 2 * x, lambda r, ct: 10 * ct, (), x)  # noqa: E731
    assert float(jax.grad(g)(1.0)) == 10.0 and float(jax.jvp(g, (1.0,), (1.0,))[1]) == 2.0
    assert float(jax.linear_transpose(g, 1.0)(1.0)[0]) == 10.0
    with pytest.raises(NotImplementedError, match="residual_args"):
        jax.grad(f, argnums=1)(1.0, 2.0)
