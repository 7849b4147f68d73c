"""``precision=`` of lax's contractions: ``Precision`` aliases, ``DotAlgorithm`` and
``DotAlgorithmPreset`` (operand and accumulation types as JAX's CPU lowering picks them,
JAX's ValueError for the algorithms a CPU cannot honour), in jaxpr text, under jit,
grad and vmap. Known answers were recorded from JAX 0.10.2 on CPU.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

X = (np.arange(6.0).reshape(2, 3) / 7).astype(np.float32)
Y = (np.arange(12.0).reshape(3, 4) / 3).astype(np.float32)
EXACT = X.astype(np.float64) @ Y.astype(np.float64)

# lax.dot(a, b, precision=p) in JAX 0.10.2 on CPU: (preset, lhs dtype) -> the result's first row.
RECORDED = {
    ("F16_F16_F16", "float32"): [0.9521484375, 1.0947265625, 1.23828125, 1.380859375],
    ("F16_F16_F16", "bfloat16"): [0.9501953125, 1.0927734375, 1.236328125, 1.3779296875],
    ("BF16_BF16_F32", "float16"): [
        0.9505208730697632,
        1.0930989980697632,
        1.2356771230697632,
        1.3782552480697632,
    ],
}


@pytest.mark.parametrize(("preset", "lhs_dtype"), sorted(RECORDED))
def test_presets_round_operands_and_accumulate_as_jax_cpu_does(preset, lhs_dtype):
    lhs = X.astype(np.dtype(getattr(ml_dtypes, lhs_dtype, lhs_dtype)))
    for fn in (lax.dot, jit(lax.dot, static_argnames="precision")):
        out = fn(lhs, Y, precision=preset)
        assert out.dtype == np.float32
        # the presets' roundings differ by ~1e-3; XLA's summation order by an ulp
        np.testing.assert_allclose(np.asarray(out)[0], RECORDED[preset, lhs_dtype], rtol=1e-6)


@pytest.mark.parametrize(
    "precision",
    [
        "DEFAULT",
        "F32_F32_F32",
        "F64_F64_F64",
        "BF16_BF16_F32_X3",
        "BF16_BF16_F32_X6",
        lax.DotAlgorithmPreset.BF16_BF16_F32,
    ],
)
def test_float32_presets_keep_float32_arithmetic(precision):
    out = lax.dot(X, Y, precision=precision)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), EXACT, rtol=1e-6)


def test_an_accumulation_type_narrower_than_the_result_rounds_the_sums():
    f16 = X.astype(np.float16).astype(np.float32) @ Y.astype(np.float16).astype(np.float32)
    out = lax.dot(X, Y, precision="F16_F16_F16", preferred_element_type=np.float16)
    assert out.dtype == np.float16
    np.testing.assert_allclose(np.asarray(out, np.float32), f16, rtol=2e-3)
    ints = lax.dot(np.ones((2, 3), np.int32), np.ones((3, 2), np.int32), precision="F16_F16_F16")
    assert ints.dtype == np.int32 and np.all(np.asarray(ints) == 3)


def test_the_lowering_converts_operands_and_names_the_algorithm():
    text = jit(lambda a, b: lax.dot(a, b, precision="F16_F16_F16")).lower(X, Y).as_text()
    assert "tensor<2x3xf32>) -> tensor<2x3xf16>" in text
    assert "lhs_precision_type = f16, rhs_precision_type = f16, accumulation_type = f16" in text
    text = jit(lambda a, b: lax.dot(a, b, precision="BF16_BF16_F32_X3")).lower(X, Y).as_text()
    assert "bf16" in text and "num_primitive_operations = 3" in text
    plain = jit(lambda a, b: lax.dot(a, b, precision="DEFAULT")).lower(X, Y).as_text()
    assert "algorithm" not in plain


@pytest.mark.parametrize(
    "precision",
    [
        "BF16_BF16_F32_X9",
        "TF32_TF32_F32",
        "F16_F16_F32",
        lax.DotAlgorithmPreset.ANY_F8_ANY_F8_F32,
        lax.DotAlgorithm(np.float32, np.float32, np.float32),
    ],
)
def test_algorithms_a_cpu_cannot_honour_raise_value_error_when_lowered(precision):
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        lax.dot(X, Y, precision=precision)
    with pytest.raises(ValueError, match="is not supported by dot_general on CPU"):
        jit(lambda a, b: lax.dot(a, b, precision=precision))(X, Y)
    make_jaxpr(lambda a, b: lax.dot(a, b, precision=precision))(X, Y)  # tracing is fine


def test_precision_strings_tuples_and_bad_values():
    assert lax.Precision("highest") is lax.Precision.HIGHEST
    assert lax.Precision("bfloat16_3x") is lax.Precision.HIGH
    assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
    jaxpr = make_jaxpr(lambda a, b: jnp.matmul(a, b, precision=("high", "float32")))(X, Y)
    assert "precision=(Precision.HIGH, Precision.HIGHEST)" in str(jaxpr)
    for bad in ("bogus", "HIGHEST", ("high",), 3):
        with pytest.raises(ValueError, match="Precision argument must be one of"):
            lax.dot(X, Y, precision=bad)


def test_presets_and_algorithms_are_what_jax_exports():
    preset = lax.DotAlgorithmPreset.BF16_BF16_F32
    assert repr(preset) == "DotAlgorithmPreset.BF16_BF16_F32" and str(preset) == "BF16_BF16_F32"
    assert len(lax.DotAlgorithmPreset) == 16
    assert preset.supported_lhs_types == (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float32))
    assert preset.accumulation_type == np.float32
    assert preset.supported_output_types(ml_dtypes.bfloat16, ml_dtypes.bfloat16) == (
        np.dtype(np.float32),
        np.dtype(ml_dtypes.bfloat16),
    )
    assert lax.DotAlgorithmPreset.DEFAULT.supported_lhs_types is None
    alg = lax.DotAlgorithm(jnp.float16, jnp.float16, jnp.float32)
    assert alg == (jnp.float16, jnp.float16, jnp.float32, 1, 1, 1, False)
    assert alg._fields[-1] == "allow_imprecise_accumulation"
    assert hash(alg) == hash(lax.DotAlgorithm(jnp.float16, jnp.float16, jnp.float32))


@pytest.mark.parametrize(
    "precision",
    [
        "BF16_BF16_F32",
        lax.DotAlgorithm(np.float16, np.float16, np.float32, num_primitive_operations=2),
        lax.Precision.HIGHEST,
        None,
    ],
)
def test_precision_prints_and_parses_back(precision):
    closed = make_jaxpr(lambda a, b: lax.dot(a, b, precision=precision))(X, Y)
    text = str(closed)
    if isinstance(precision, str):
        assert "precision=BF16_BF16_F32" in text
    again = parse_jaxpr(text)
    assert str(again) == text
    (eqn,) = again.jaxpr.eqns
    assert eqn.params["precision"] == closed.jaxpr.eqns[0].params["precision"]


def test_algorithms_under_grad_and_vmap():
    def loss(a):
        return jnp.sum(lax.dot(a, Y, precision="BF16_BF16_F32") ** 2)

    want = 2 * (X @ Y) @ Y.T
    np.testing.assert_allclose(np.asarray(grad(loss)(X)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(jit(grad(loss))(X)), want, rtol=1e-5)
    jaxpr = str(make_jaxpr(grad(loss))(X))
    assert jaxpr.count("precision=BF16_BF16_F32") == 2  # the transpose keeps the algorithm
    out = vmap(lambda row: lax.dot(row, Y, precision="F16_F16_F16"))(X)
    np.testing.assert_array_equal(
        np.asarray(out)[0], np.float32(RECORDED["F16_F16_F16", "float32"])
    )
