"""jax.experimental.primal_tangent_dtype and EArray, as JAX 0.10.2 has them (and eagerly too).

The printed jaxpr and the jit results were checked against JAX 0.10.2; JAX cannot make
an EArray outside ``jit`` (its result handler fails), modjax can.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental import EArray, primal_tangent_dtype

DT = primal_tangent_dtype(jnp.int8, jnp.float32)
A = np.arange(3, dtype=np.int8)


def roundtrip(a):
    return lax.convert_element_type(lax.convert_element_type(a, DT), jnp.int8)


def test_the_dtype():
    assert str(DT) == repr(DT) == "PrimalTangentDType{i8/f32}"
    assert DT.primal_dtype == np.int8 and DT.tangent_dtype == np.float32
    same, other = primal_tangent_dtype(np.int8, np.float32), primal_tangent_dtype(np.int8, np.half)
    assert same == DT and other != DT and hash(same) == hash(DT)
    assert str(primal_tangent_dtype(np.uint8, np.float32, name="q8")) == "q8"
    assert jax.dtypes.issubdtype(DT, jax.dtypes.extended)


def test_jaxpr_as_jax_prints_it():
    # JAX 0.10.2 prints exactly this.
    assert str(jax.make_jaxpr(roundtrip)(A)) == (
        "{ lambda ; a:i8[3]. let\n"
        "    b:PrimalTangentDType{i8/f32}[3] = to_edtype[\n"
        "      edtype=PrimalTangentDType{i8/f32}\n"
        "    ] a\n"
        "    c:i8[3] = from_edtype[dtype=int8] b\n"
        "  in (c,) }"
    )
    text = jax.jit(roundtrip).lower(A).as_text()
    assert "return %arg0 : tensor<3xi8>" in text  # the data is unchanged


def test_eager_jit_and_vmap():
    e = lax.convert_element_type(A, DT)
    assert isinstance(e, EArray) and e.dtype == DT and e.shape == (3,)
    assert not isinstance(jax.random.key(0), EArray)
    np.testing.assert_array_equal(roundtrip(A), A)
    np.testing.assert_array_equal(jax.jit(roundtrip)(A), A)
    np.testing.assert_array_equal(jax.jit(lambda a: a)(e)._base_array, A)  # through jit
    np.testing.assert_array_equal(jax.vmap(roundtrip)(np.stack([A, -A])), np.stack([A, -A]))


def test_tangents_are_of_the_tangent_dtype():
    """An int8-coded value carries float32 tangents through custom_jvp encode/decode."""

    @jax.custom_jvp
    def encode(x):
        return lax.convert_element_type(x.astype(jnp.int8), DT)

    @encode.defjvp
    def _(primals, tangents):
        (t,) = tangents
        assert t.dtype == np.float32
        return encode(*primals), t

    @jax.custom_jvp
    def decode(e):
        return lax.convert_element_type(e, jnp.int8).astype(jnp.float32)

    @decode.defjvp
    def _(primals, tangents):
        (t,) = tangents
        assert t.dtype == np.float32  # the tangent dtype of DT
        return decode(*primals), t

    f = lambda x: (decode(encode(x)) * x).sum()  # noqa: E731
    x = jnp.arange(3.0)
    np.testing.assert_allclose(jax.grad(f)(x), [0.0, 2.0, 4.0])  # JAX 0.10.2 under jit
    np.testing.assert_allclose(jax.jit(jax.grad(f))(x), [0.0, 2.0, 4.0])


def test_errors():
    with pytest.raises(TypeError, match="holds int8 values, got float32"):
        lax.convert_element_type(jnp.ones(3), DT)
    with pytest.raises(TypeError, match="from_edtype"):
        lax.convert_element_type(lax.convert_element_type(A, DT), jnp.float32)
