"""Gradients of normalization-style functions equal JAX 0.10.2's bit for bit.

The derivative rules of ``add``/``sub`` (JAX's JVPs: the op on both tangents), ``max``
/``min`` (JAX's balanced select/div), ``div``'s divisor (``-g x y**-2``), ``sqrt``,
``pow`` and ``rem`` build JAX's derivative programs, and ``mean``/``var``/``nanvar``
JAX's forward formulas (the kept-dims sum divided by the count); the bits of a
BatchNorm-like gradient depend on all of them. The known answers were recorded by
``normalization_grad_reference_gen.py`` from the shared ``normalization_grad_cases.py``.
"""

import builtins
import pathlib
import sys

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax, nn
from modjax.autodiff import grad
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.config import enable_x64

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from cpu_kind import load_reference  # noqa: E402
from normalization_grad_cases import CASES, INT_CASES, INT_INPUT, inputs  # noqa: E402

REFERENCE = load_reference(pathlib.Path(__file__).parent / "normalization_grad_reference.json")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_bits_equal_jax(name):
    f = CASES[name](jnp, lax, nn)
    got = np.asarray(jit(grad(f))(inputs()), np.float32)
    want = np.asarray(REFERENCE[name], np.uint32).view(np.float32).reshape(got.shape)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("name", sorted(INT_CASES))
def test_integer_dtype_reductions_match_jax(name):
    fn, dtype, extra = INT_CASES[name]
    want = REFERENCE["integer_dtype"][name]
    a = jnp.asarray(INT_INPUT, jnp.int32)
    dtype = getattr(jnp, dtype)
    call = lambda: getattr(jnp, fn)(a, dtype=dtype, **extra)  # noqa: E731
    if "error" in want:
        with pytest.raises(getattr(builtins, want["error"])):
            call()
        return
    for result in (call(), jit(lambda a: getattr(jnp, fn)(a, dtype=dtype, **extra))(a)):
        assert str(result.dtype) == want["dtype"]
        assert result.aval.weak_type == want["weak_type"]
        np.testing.assert_array_equal(np.asarray(result), np.asarray(want["value"]))


def _equations(f, *args):
    return [eqn.primitive.name for eqn in make_jaxpr(f)(*args).jaxpr.eqns]


def test_sub_transpose_negates_before_summing():
    # JAX's sub JVP binds sub on both tangents, so the cotangent of the broadcast
    # operand is negated at full size, then summed (not summed, then negated).
    x = inputs()
    names = _equations(grad(lambda x: jnp.sum((x - x.mean(0, keepdims=True)) ** 2)), x)
    neg = names.index("neg")
    assert names[neg + 1] == "reduce_sum"


def test_max_derivative_is_jax_balanced_select():
    names = _equations(grad(lambda x: jnp.sum(jnp.maximum(0.0, x))), inputs())
    assert "convert_element_type" not in names
    assert names.count("select_n") == 2 and "div" in names


def test_mean_keepdims_divides_the_kept_dims_sum():
    names = _equations(lambda x: jnp.mean(x, 0, keepdims=True), inputs())
    assert names == ["reduce_sum", "broadcast_in_dim", "div"]


def test_var_of_integers_with_integer_dtype_is_weak_float_under_x64():
    a = jnp.asarray(INT_INPUT, jnp.int32)
    with enable_x64(True):
        result = jnp.var(a, axis=1, dtype=jnp.int32)
    assert result.dtype == np.float64 and result.aval.weak_type
    np.testing.assert_array_equal(np.asarray(result), [7.0, 4.0])
