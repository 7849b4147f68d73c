"""``lax.scaled_dot`` (JAX's ``xla.scaled_dot`` composite: bfloat16 operands times repeated
subchannel scales) and ``nn.scaled_matmul`` (its documented definition, which JAX cannot run
on CPU), ``nn.scaled_dot_general`` and its configs; errors, jit and vmap."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from modjax import lax, nn
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr

RNG = np.random.RandomState(0)
BF16 = np.dtype(ml_dtypes.bfloat16)


def bf16(x):
    return np.asarray(x, np.float32).astype(BF16).astype(np.float32)


def test_scaled_dot_matches_its_definition():
    lhs = RNG.standard_normal((2, 8)).astype(np.float32)
    rhs = RNG.standard_normal((8, 3)).astype(np.float32)
    ls = np.array([[2.0, 0.5], [1.0, 4.0]], np.float32)  # subchannels of 4
    rs = np.array([[1.0, 2.0, 0.5], [0.25, 1.0, 1.0]], np.float32)
    want = (bf16(lhs) * bf16(np.repeat(ls, 4, 1))).astype(BF16).astype(np.float32) @ (
        bf16(rhs) * bf16(np.repeat(rs, 4, 0))
    ).astype(BF16).astype(np.float32)
    for fn in (lax.scaled_dot, jit(lax.scaled_dot, static_argnames="preferred_element_type")):
        out = fn(lhs, rhs, lhs_scale=ls, rhs_scale=rs, preferred_element_type=np.float32)
        assert out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), want, rtol=1e-2, atol=1e-2)
    out = lax.scaled_dot(np.ones((2, 64), np.float32), np.ones((64, 3), np.float32))
    assert out.dtype == BF16 and np.all(np.asarray(out, np.float32) == 64)


def test_scaled_dot_jaxpr_lowering_and_vmap():
    a, b = np.ones((2, 64), np.float32), np.ones((64, 3), np.float32)
    text = str(make_jaxpr(lambda a, b: lax.scaled_dot(a, b))(a, b))
    assert "f8_e8m0fnu[2,1]" in text and "scaled_dot[" in text
    assert "preferred_element_type=bfloat16" in text
    hlo = jit(lambda a, b: lax.scaled_dot(a, b)).lower(a, b).as_text()
    assert 'stablehlo.composite "xla.scaled_dot"' in hlo
    out = vmap(lambda x: lax.scaled_dot(x, b))(np.ones((4, 2, 64), np.float32))
    assert out.shape == (4, 2, 3)
    out3 = lax.scaled_dot(np.ones((3, 2, 64), np.float32), np.ones((3, 64, 5), np.float32))
    assert out3.shape == (3, 2, 5)


def test_scaled_dot_errors():
    a, b = np.ones((2, 64), np.float32), np.ones((64, 3), np.float32)
    with pytest.raises(TypeError, match="0-rank and 1-rank"):
        lax.scaled_dot(np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match="must be divisible by its scale's dim size 3"):
        lax.scaled_dot(a, b, lhs_scale=np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match=r"must be at least 2"):
        lax.scaled_dot(a, b, lhs_scale=np.ones((2, 64), np.float32))
    with pytest.raises(TypeError, match="LHS dim 0 of size 2 does not match scale dim size 1"):
        lax.scaled_dot(a, b, lhs_scale=np.ones((1, 2), np.float32))
    with pytest.raises(TypeError, match="does not match RHS contracting dim"):
        lax.scaled_dot(a, np.ones((32, 3), np.float32))


def test_scaled_matmul_is_its_documented_definition():
    a = np.array([1, 2, 3.0], np.float32).reshape(1, 1, 3)
    s = np.array([0.5], np.float32).reshape(1, 1, 1)
    np.testing.assert_array_equal(nn.scaled_matmul(a, a + 3, s, s), [[[8.0]]])
    lhs = RNG.standard_normal((2, 4, 64)).astype(np.float32)
    rhs = RNG.standard_normal((2, 3, 64)).astype(np.float32)
    ls = RNG.uniform(0.5, 2, (2, 4, 2)).astype(np.float32)
    rs = RNG.uniform(0.5, 2, (2, 3, 2)).astype(np.float32)
    want = np.einsum("bmk,bnk->bmn", lhs * np.repeat(ls, 32, -1), rhs * np.repeat(rs, 32, -1))
    out = jit(nn.scaled_matmul)(lhs, rhs, ls, rs)
    assert out.dtype == np.float32
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-4, atol=1e-4)
    assert nn.scaled_matmul(lhs, rhs, ls, rs, preferred_element_type=BF16).dtype == BF16
    with pytest.raises(ValueError, match="3-dimensional"):
        nn.scaled_matmul(lhs[0], rhs[0], ls[0], rs[0])
    with pytest.raises(ValueError, match="matching batch"):
        nn.scaled_matmul(lhs, rhs[:, :, :32], ls, rs)


def test_scaled_dot_general_and_configs():
    cfg = nn.get_scaled_dot_general_config("mxfp8")
    assert (cfg.mode, cfg.block_size, cfg.global_scale) == ("mxfp8", 32, None)
    assert np.dtype(cfg.data_type) == np.dtype(ml_dtypes.float8_e4m3fn)
    nv = nn.get_scaled_dot_general_config("nvfp4")
    assert nv.block_size == 16 and np.asarray(nv.global_scale).tolist() == [1.0]
    with pytest.raises(ValueError, match="Unsupported mode: x"):
        nn.get_scaled_dot_general_config("x")
    lhs = RNG.standard_normal((2, 4, 64)).astype(np.float32)
    rhs = RNG.standard_normal((2, 3, 64)).astype(np.float32)
    dn = (((2,), (2,)), ((0,), (0,)))
    np.testing.assert_allclose(
        nn.scaled_dot_general(lhs, rhs, dn),
        np.einsum("bmk,bnk->bmn", lhs, rhs),
        rtol=1e-5,
        atol=1e-5,
    )
    with pytest.raises(NotImplementedError, match="cuDNN"):
        nn.scaled_dot_general(lhs, rhs, dn, configs=[cfg] * 3)
