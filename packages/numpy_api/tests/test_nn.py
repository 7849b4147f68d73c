"""modjax.nn against float64 numpy references: values, derivatives, dtypes, jit and vmap.

References are written from the functions' definitions (``math.erf`` for the
exact GELU); derivatives are compared with central differences of those
references, away from kinks, and with JAX's conventions at the kinks
(``relu'(0) = 0``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax.numpy as jnp
from modjax import nn
from modjax.autodiff import grad, jvp
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore.options import softmax_custom_jvp

_erf = np.vectorize(math.erf)


def _softplus(x):
    return np.logaddexp(x, 0)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _elu(x, alpha=1.0):
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


REFERENCES = {
    "relu": lambda x: np.maximum(x, 0),
    "relu6": lambda x: np.minimum(np.maximum(x, 0), 6),
    "sigmoid": _sigmoid,
    "softplus": _softplus,
    "silu": lambda x: x * _sigmoid(x),
    "swish": lambda x: x * _sigmoid(x),
    "log_sigmoid": lambda x: -_softplus(-x),
    "elu": _elu,
    "selu": lambda x: 1.0507009873554805 * _elu(x, 1.6732632423543772),
    "celu": lambda x: np.maximum(x, 0) + np.expm1(np.minimum(x, 0)),
    "leaky_relu": lambda x: np.where(x >= 0, x, 0.01 * x),
    "hard_tanh": lambda x: np.clip(x, -1, 1),
    "hard_sigmoid": lambda x: np.clip(x + 3, 0, 6) / 6,
    "hard_silu": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "hard_swish": lambda x: x * np.clip(x + 3, 0, 6) / 6,
    "soft_sign": lambda x: x / (np.abs(x) + 1),
    "sparse_plus": lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4)),
    "sparse_sigmoid": lambda x: np.clip((x + 1) / 2, 0, 1),
    "squareplus": lambda x: (x + np.sqrt(x * x + 4)) / 2,
    "mish": lambda x: x * np.tanh(_softplus(x)),
    "gelu": lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    "gelu_exact": lambda x: x * (1 + _erf(x / math.sqrt(2))) / 2,
    "identity": lambda x: x,
    "tanh": np.tanh,
}


def _fn(name):
    if name == "gelu_exact":
        return lambda x: nn.gelu(x, approximate=False)
    return getattr(nn, name)


N = 8
_values = st.lists(st.floats(-8, 8, width=32, allow_subnormal=False), min_size=N, max_size=N).map(
    lambda v: np.asarray(v, np.float32)
)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@given(x=_values)
def test_activation_values_match_numpy(name, x):
    expected = REFERENCES[name](x.astype(np.float64))
    out = _fn(name)(x)
    assert out.dtype == np.float32 and out.shape == x.shape
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(np.asarray(jit(_fn(name))(x)), expected, rtol=2e-6, atol=2e-6)


# points away from every kink (0, +-1, +-3, 6)
GRAD_POINTS = np.array([-4.5, -2.2, -0.6, -0.2, 0.3, 0.8, 2.1, 4.4], np.float32)


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_activation_derivatives_match_central_differences(name):
    ref = REFERENCES[name]
    x = GRAD_POINTS.astype(np.float64)
    h = 1e-6
    numeric = (ref(x + h) - ref(x - h)) / (2 * h)
    atol = 5e-6 if name == "gelu" else 2e-6  # 1 + tanh(u) cancels in float32 for u << 0
    g = grad(lambda v: jnp.sum(_fn(name)(v)))(GRAD_POINTS)
    np.testing.assert_allclose(np.asarray(g), numeric, rtol=2e-5, atol=atol)
    _, t = jvp(_fn(name), (GRAD_POINTS,), (np.ones(N, np.float32),))
    np.testing.assert_allclose(np.asarray(t), numeric, rtol=2e-5, atol=atol)


def test_derivatives_at_the_kinks_follow_jax():
    at = np.array([0.0, 6.0, -3.0, 3.0, -1.0, 1.0], np.float32)

    def d(fn):
        return np.asarray(grad(lambda v: jnp.sum(fn(v)))(at))

    np.testing.assert_array_equal(d(nn.relu)[:1], [0.0])  # relu'(0) = 0 (custom_jvp)
    np.testing.assert_array_equal(d(nn.relu6)[:2], [0.0, 0.0])  # relu6' = 0 at 0 and 6
    np.testing.assert_array_equal(d(nn.leaky_relu)[:1], [1.0])  # x >= 0 takes the identity
    assert float(grad(nn.relu)(np.float32(2.0))) == 1.0
    assert float(grad(nn.relu)(np.float32(-2.0))) == 0.0
    assert float(jit(grad(nn.relu))(np.float32(0.0))) == 0.0


def test_relu_is_a_custom_jvp_like_jax():
    from modjax.tracecore import make_jaxpr

    assert "custom_jvp_call" in str(make_jaxpr(nn.relu)(np.float32(1.0)))
    np.testing.assert_array_equal(
        np.asarray(vmap(nn.relu)(np.array([-1.0, 2.0], np.float32))), [0.0, 2.0]
    )


def test_dtypes_follow_jax():
    i = np.array([-2, 0, 3], np.int32)
    h = np.array([-1.0, 0.0, 2.0], np.float16)
    assert nn.relu(i).dtype == np.int32 and nn.hard_tanh(i).dtype == np.int32
    for name in ["gelu", "softplus", "elu", "relu6", "soft_sign", "mish", "log_sigmoid"]:
        assert getattr(nn, name)(i).dtype == np.float32, name
    for name in sorted(REFERENCES):
        if name != "gelu_exact":
            assert _fn(name)(h).dtype == np.float16, name
        assert _fn(name)(1.0).dtype == np.float32, name
    with pytest.raises(TypeError, match="logistic does not accept dtype int32"):
        nn.sigmoid(i)
    assert nn.softmax(h).dtype == np.float16 and nn.softmax(i).dtype == np.float32


def test_special_values():
    inf, nan = math.inf, math.nan
    x = np.array([inf, -inf, nan, 0.0, -0.0], np.float32)
    np.testing.assert_array_equal(np.asarray(nn.relu(x)), [inf, 0.0, nan, 0.0, 0.0])
    np.testing.assert_array_equal(np.asarray(nn.sigmoid(x))[:2], [1.0, 0.0])
    np.testing.assert_array_equal(np.asarray(nn.softplus(x))[:2], [inf, 0.0])
    np.testing.assert_array_equal(np.asarray(nn.log_sigmoid(x))[:2], [0.0, -inf])
    big = np.array([80.0, -80.0], np.float32)  # no overflow in the stable forms
    np.testing.assert_allclose(np.asarray(nn.softplus(big)), [80.0, math.exp(-80)], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.log_sigmoid(big)), [-math.exp(-80), -80.0], rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.elu(np.float32(100.0))), 100.0)
    np.testing.assert_allclose(
        np.asarray(nn.log1mexp(np.array([1e-3, 0.5, 1.0, 30.0], np.float32))),
        [
            math.log(-math.expm1(-v)) if v < math.log(2) else math.log1p(-math.exp(-v))
            for v in (1e-3, 0.5, 1.0, 30.0)
        ],
        rtol=1e-6,
        atol=1e-20,
    )


# --- softmax and friends ----------------------------------------------------------------


def _softmax_reference(x, axis):
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


@given(
    x=st.lists(st.floats(-50, 50, width=32), min_size=12, max_size=12).map(
        lambda v: np.asarray(v, np.float32).reshape(3, 4)
    ),
    axis=st.sampled_from([-1, 0, 1, (0, 1), None]),
)
def test_softmax_and_log_softmax_match_numpy(x, axis):
    x64 = x.astype(np.float64)
    expected = _softmax_reference(x64, axis)
    np.testing.assert_allclose(np.asarray(nn.softmax(x, axis=axis)), expected, atol=1e-6)
    shift = x64.max(axis, keepdims=True)
    log_expected = x64 - shift - np.log(np.sum(np.exp(x64 - shift), axis, keepdims=True))
    np.testing.assert_allclose(
        np.asarray(nn.log_softmax(x, axis=axis)), log_expected, rtol=1e-5, atol=2e-5
    )
    np.testing.assert_allclose(
        np.asarray(jit(lambda v: nn.softmax(v, axis=axis))(x)), expected, atol=1e-6
    )


def test_softmax_is_stable_and_masks():
    x = np.array([1000.0, 1001.0, 1002.0], np.float32)
    np.testing.assert_allclose(np.asarray(nn.softmax(x)), _softmax_reference(x - 1000, 0))
    mask = np.array([True, False, True])
    out = np.asarray(nn.softmax(np.array([1.0, 2.0, 3.0], np.float32), where=mask))
    np.testing.assert_allclose(out, [1 / (1 + math.e**2), 0.0, math.e**2 / (1 + math.e**2)])
    none = np.asarray(nn.softmax(np.ones(3, np.float32), where=np.zeros(3, bool)))
    np.testing.assert_array_equal(none, [0.0, 0.0, 0.0])
    log = np.asarray(nn.log_softmax(np.array([1.0, 2.0, 3.0], np.float32), where=mask))
    assert log[1] == -math.inf
    np.testing.assert_allclose(log[[0, 2]], np.log(out[[0, 2]]), rtol=1e-6)


def test_softmax_gradient_matches_its_jacobian():
    x = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    w = np.array([1.0, 2.0, -1.0, 0.5], np.float32)
    g = grad(lambda v: jnp.sum(nn.softmax(v) * w))(x)
    s = _softmax_reference(x.astype(np.float64), 0)
    expected = s * (w - np.sum(s * w))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-5, atol=1e-7)
    g = grad(lambda v: jnp.sum(nn.log_softmax(v) * w))(x)
    np.testing.assert_allclose(np.asarray(g), w - s * np.sum(w), rtol=1e-5, atol=1e-6)
    # large inputs: the gradient stays finite
    g = grad(lambda v: nn.softmax(v)[0])(np.array([1000.0, 0.0], np.float32))
    assert np.all(np.isfinite(np.asarray(g)))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_a_row_masked_out_entirely_has_zero_gradient(name):
    # optax's masked cross-entropy: JAX's gradient is 0 there, not NaN.
    fn = getattr(nn, name)
    x = np.array([[10.0, 1.0, -2.0], [1.0, 4.0, 0.2]], np.float32)
    t = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]], np.float32)
    mask = np.array([[True], [False]])
    for custom in (False, True):
        with softmax_custom_jvp(custom):
            g = np.asarray(grad(lambda v: jnp.sum(t * fn(v, -1, mask), where=mask))(x))
        np.testing.assert_array_equal(g[1], [0.0, 0.0, 0.0])
        s = _softmax_reference(x[0].astype(np.float64), 0)
        expected = s * (t[0] - np.sum(s * t[0])) if name == "softmax" else t[0] - s
        np.testing.assert_allclose(g[0], expected, rtol=1e-5, atol=1e-6)


def test_logsumexp_and_logmeanexp():
    x = np.array([[1.0, 2.0, 3.0], [0.0, -1.0, 4.0]], np.float32)
    lse = np.log(np.sum(np.exp(x.astype(np.float64)), axis=1))
    np.testing.assert_allclose(np.asarray(nn.logsumexp(x, axis=1)), lse, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.logmeanexp(x, axis=1)), lse - math.log(3), rtol=1e-6)
    mask = np.array([[True, False, True], [True, True, True]])
    expected = np.log(np.sum(np.where(mask, np.exp(x), 0), axis=1) / mask.sum(axis=1))
    np.testing.assert_allclose(
        np.asarray(nn.logmeanexp(x, axis=1, where=mask)), expected, rtol=1e-6
    )


def test_standardize():
    x = np.array([[1.0, 2.0, 3.0, 10.0], [4.0, 4.0, 5.0, 7.0]], np.float32)
    mean = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5)
    np.testing.assert_allclose(np.asarray(nn.standardize(x)), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.asarray(nn.standardize(x, algorithm="stable")), expected, rtol=1e-5, atol=1e-6
    )
    mask = np.array([True, True, True, False])
    m = x[:, :3].mean(axis=-1, keepdims=True)
    v = x[:, :3].var(axis=-1, keepdims=True)
    np.testing.assert_allclose(
        np.asarray(nn.standardize(x, where=mask)), (x - m) / np.sqrt(v + 1e-5), rtol=1e-5
    )
    out = nn.standardize(x, axis=0, mean=0.0, variance=1.0, epsilon=0.0)
    np.testing.assert_allclose(np.asarray(out), x)
    with pytest.raises(ValueError, match="Unknown algorithm 'slow'. Expected 'fast' or 'stable'"):
        nn.standardize(x, algorithm="slow")
    # E[x^2] - E[x]^2 rounds below 0 here: clipped, as in JAX (not NaN)
    near = np.array([1e4, 1e4 + 1e-3, 1e4], np.float32)
    assert np.isfinite(np.asarray(nn.standardize(near))).all()


def test_one_hot():
    labels = np.array([0, 2, 5, -1, 1])
    out = nn.one_hot(labels, 3)
    assert out.dtype == np.float32 and out.shape == (5, 3)
    expected = np.zeros((5, 3), np.float32)
    for i, label in enumerate(labels):
        if 0 <= label < 3:
            expected[i, label] = 1
    np.testing.assert_array_equal(np.asarray(out), expected)
    out = nn.one_hot(labels, 3, axis=0, dtype=np.int8)
    assert out.dtype == np.int8
    np.testing.assert_array_equal(np.asarray(out), expected.T)
    grid = nn.one_hot(np.array([[0, 1], [2, 0]]), 3, axis=1)
    assert grid.shape == (2, 3, 2)
    np.testing.assert_array_equal(np.asarray(grid)[:, :, 0], [[1, 0, 0], [0, 0, 1]])
    with pytest.warns(DeprecationWarning, match="one_hot input should be integer-typed"):
        np.testing.assert_array_equal(np.asarray(nn.one_hot(np.array([0.0, 2.5]), 3))[1], [0, 0, 0])
    out = jit(lambda v: nn.one_hot(v, 4))(np.array([3, 0]))
    np.testing.assert_array_equal(np.asarray(out), [[0, 0, 0, 1], [1, 0, 0, 0]])
    with pytest.raises(TypeError, match="cannot be interpreted as an integer"):
        nn.one_hot(labels, 2.5)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="iota does not accept"):
        nn.one_hot(np.array([True, False]), 2)
    # a named axis: each element compared with its index along it
    out = vmap(lambda i: nn.one_hot(i, 3, axis="i"), axis_name="i")(np.array([0, 2, 2]))
    np.testing.assert_array_equal(np.asarray(out), [1, 0, 1])
    with pytest.raises(ValueError, match="Expected num_classes to match the size of axis i"):
        vmap(lambda i: nn.one_hot(i, 4, axis="i"), axis_name="i")(np.arange(3))


def test_glu():
    x = np.arange(8, dtype=np.float32).reshape(2, 4) / 4
    a, b = x[:, :2], x[:, 2:]
    np.testing.assert_allclose(np.asarray(nn.glu(x)), a * _sigmoid(b), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(nn.glu(x.T, axis=0)), (a * _sigmoid(b)).T, rtol=1e-6)
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(np.ones(3, np.float32))


def test_vmap_of_activations():
    x = np.linspace(-3, 3, 12, dtype=np.float32).reshape(3, 4)
    for name in ["relu", "gelu", "softplus", "elu", "silu"]:
        out = vmap(_fn(name))(x)
        np.testing.assert_allclose(np.asarray(out), REFERENCES[name](x), rtol=2e-6, atol=1e-6)
    out = vmap(nn.softmax)(x)
    np.testing.assert_allclose(np.asarray(out), _softmax_reference(x, 1), rtol=1e-6)


# --- dot_product_attention ----------------------------------------------------------------------

ATT_B, ATT_T, ATT_S, ATT_H = 2, 4, 5, 3


def _attention_reference(
    q, k, v, bias=None, mask=None, scale=None, causal=False, q_len=None, kv_len=None, window=None
):
    """Attention by its definition, in float64 with loops over batch and heads.

    Masked logits are -0.7 * float32 max, as in JAX (a fully masked row averages the values).
    """
    q, k, v = (np.asarray(t, np.float64) for t in (q, k, v))
    b, t, n, h = q.shape
    s, kh = k.shape[1], k.shape[2]
    scale = 1 / np.sqrt(h) if scale is None else scale
    out = np.zeros_like(q)
    i, j = np.arange(t)[:, None], np.arange(s)[None, :]
    for bi in range(b):
        for head in range(n):
            kv = head // (n // kh)  # grouped-query attention: consecutive query heads share
            logits = scale * q[bi, :, head] @ k[bi, :, kv].T
            if bias is not None:
                logits = logits + np.broadcast_to(bias, (b, n, t, s))[bi, head]
            keep = np.ones((t, s), bool)
            if mask is not None:
                keep &= np.broadcast_to(mask, (b, n, t, s))[bi, head]
            if causal:
                keep &= j <= i
            if window is not None:
                keep &= (j >= i - window[0]) & (j <= i + window[1])
            if q_len is not None:
                keep &= i < q_len[bi]
            if kv_len is not None:
                keep &= j < kv_len[bi]
            logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
            p = np.exp(logits - logits.max(-1, keepdims=True))
            out[bi, :, head] = (p / p.sum(-1, keepdims=True)) @ v[bi, :, kv]
            if q_len is not None:
                out[bi, q_len[bi] :, head] = 0
    return out


def _attention_inputs(n=4, kv_heads=2, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    q = rng.normal(size=(ATT_B, ATT_T, n, ATT_H)).astype(dtype)
    k = rng.normal(size=(ATT_B, ATT_S, kv_heads, ATT_H)).astype(dtype)
    v = rng.normal(size=(ATT_B, ATT_S, kv_heads, ATT_H)).astype(dtype)
    return q, k, v


ATTENTION_OPTIONS = {
    "plain": {},
    "scale": {"scale": 0.3},
    "causal": {"causal": True},
    "lengths": {"q_len": [3, 4], "kv_len": [5, 2]},
    "window": {"window": (1, 0)},
    "window_causal": {"window": (1, 1), "causal": True},
}


@settings(max_examples=examples(12))
@given(
    heads=st.sampled_from([(4, 4), (4, 2), (4, 1)]),
    with_bias=st.booleans(),
    with_mask=st.booleans(),
    option=st.sampled_from(sorted(ATTENTION_OPTIONS)),
    seed=st.integers(0, 2**16),
)
def test_dot_product_attention_matches_numpy(heads, with_bias, with_mask, option, seed):
    n, kh = heads
    q, k, v = _attention_inputs(n, kh, seed=seed)
    rng = np.random.default_rng(seed + 1)
    bias = rng.normal(size=(1, n, ATT_T, ATT_S)).astype(np.float32) if with_bias else None
    mask = rng.random((ATT_B, 1, ATT_T, ATT_S)) < 0.7 if with_mask else None
    ref = dict(ATTENTION_OPTIONS[option])
    kwargs = {
        "scale": ref.get("scale"),
        "is_causal": ref.get("causal", False),
        "local_window_size": ref.get("window"),
    }
    for name, key in (("q_len", "query_seq_lengths"), ("kv_len", "key_value_seq_lengths")):
        if name in ref:
            kwargs[key] = np.array(ref[name], np.int32)
    expected = _attention_reference(q, k, v, bias, mask, **ref)
    eager = nn.dot_product_attention(q, k, v, bias, mask, **kwargs)
    traced = jit(lambda q, k, v: nn.dot_product_attention(q, k, v, bias, mask, **kwargs))(q, k, v)
    for out in (eager, traced):
        assert out.shape == q.shape and out.dtype == np.float32
        np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-5, atol=2e-5)


def test_dot_product_attention_layouts_dtypes_and_residual():
    q, k, v = _attention_inputs(4, 2)
    # without the batch axis
    out = nn.dot_product_attention(q[0], k[0], v[0], implementation="xla")
    np.testing.assert_allclose(np.asarray(out), _attention_reference(q, k, v)[0], rtol=2e-5)
    # int local_window_size means (w, w); an all-masked row averages the values
    out = nn.dot_product_attention(q, k, v, local_window_size=1)
    expected = _attention_reference(q, k, v, window=(1, 1))
    np.testing.assert_allclose(np.asarray(out), expected, rtol=2e-5, atol=2e-5)
    none = np.zeros((1, 1, ATT_T, ATT_S), bool)
    out = nn.dot_product_attention(q, k, v, mask=none)
    averaged = np.repeat(v.mean(1, keepdims=True), ATT_T, 1).repeat(2, 2)
    np.testing.assert_allclose(np.asarray(out), averaged, rtol=2e-5, atol=2e-6)
    # float16/bfloat16: logits in float32, result in the input dtype
    for dtype in (np.float16, jnp.bfloat16):
        low = [jnp.asarray(t, dtype) for t in (q, k, v)]
        out = nn.dot_product_attention(*low, is_causal=True)
        assert out.dtype == np.dtype(dtype)
        expected = _attention_reference(*(np.asarray(t, np.float32) for t in low), causal=True)
        np.testing.assert_allclose(np.asarray(out, np.float32), expected, rtol=0.05, atol=0.05)
    # return_residual: logsumexp of the (scaled, masked) logits per (B, T, N)
    out, residual = nn.dot_product_attention(q, k, v, scale=0.5, return_residual=True)
    logits = 0.5 * np.einsum("btkgh,bskh->btkgs", q.reshape(ATT_B, ATT_T, 2, 2, ATT_H), k)
    expected = np.log(np.exp(logits).sum(-1)).reshape(ATT_B, ATT_T, 4)
    assert residual.shape == (ATT_B, ATT_T, 4) and residual.dtype == np.float32
    np.testing.assert_allclose(np.asarray(residual), expected, rtol=1e-5)


def test_dot_product_attention_errors_as_jax():
    q, k, v = _attention_inputs(4, 2)
    attention = nn.dot_product_attention
    with pytest.raises(ValueError, match="multiple of key/value heads, but got 3 vs 2"):
        attention(q[:, :, :3], k, v)
    with pytest.raises(ValueError, match="query dtype should be float32, but got float16"):
        attention(q.astype(np.float16), k, v)
    with pytest.raises(ValueError, match="value shape should be"):
        attention(q, k, v[:, :4])
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        attention(q, k, v, mask=np.ones((1, 1, ATT_T, ATT_S), np.int32))
    with pytest.raises(ValueError, match="query_seq_lengths shape should be"):
        attention(q, k, v, query_seq_lengths=np.array([1], np.int32))
    with pytest.raises(ValueError, match="1 or 4 heads"):
        attention(q, k, v, np.ones((1, 2, ATT_T, ATT_S), np.float32))
    with pytest.raises(ValueError, match="Unsupported implementation option: foo"):
        attention(q, k, v, implementation="foo")
    with pytest.raises(RuntimeError, match="cuDNN is not detected"):
        attention(q, k, v, implementation="cudnn")


def test_dot_product_attention_grad_and_vmap():
    from modjax.autodiff.testing import check_grads

    q, k, v = _attention_inputs(2, 1, seed=5)
    bias = np.random.default_rng(6).normal(size=(1, 2, ATT_T, ATT_S)).astype(np.float32)

    @jit  # one compilation per derivative program instead of op-by-op dispatch
    def f(q, k, v, bias):
        return nn.dot_product_attention(q, k, v, bias, is_causal=True, scale=0.7)

    check_grads(f, (q, k, v, bias), order=1, modes=("fwd", "rev"), eps=1e-2)
    # vmap over a leading axis of queries and keys against a loop
    qs, ks = np.stack([q, q[::-1]]), np.stack([k, 2 * k])
    out = vmap(lambda q, k: f(q, k, v, bias))(qs, ks)
    loop = np.stack([np.asarray(f(qs[i], ks[i], v, bias)) for i in range(2)])
    np.testing.assert_allclose(np.asarray(out), loop, rtol=1e-5, atol=1e-6)


def test_gelu_result_is_never_weak_typed():
    # JAX 0.10.2: nn.gelu(1.) and nn.gelu(jnp.array(0.5), approximate=False) are strong float32
    # (0.841192 and 0.345731), although a Python scalar input is weak
    approx = nn.gelu(1.0)
    exact = nn.gelu(jnp.array(0.5), approximate=False)
    assert approx.dtype == exact.dtype == np.float32
    assert not approx.weak_type and not exact.weak_type
    np.testing.assert_allclose(approx, 0.8411920070648193, rtol=1e-6)
    np.testing.assert_allclose(exact, 0.3457312285900116, rtol=1e-6)


def test_elu_of_integers_is_a_weak_float():
    # JAX 0.10.2: nn.elu(jnp.array([-2, 0, 3])) is weak float32 [-0.8646647, 0, 3] (selu alike)
    out = nn.elu(jnp.array([-2, 0, 3]))
    assert out.dtype == np.float32 and out.weak_type
    np.testing.assert_allclose(out, [-0.8646647334098816, 0.0, 3.0], rtol=1e-6)
    assert nn.selu(jnp.array([-2, 0, 3])).weak_type
