"""Normalization-style functions whose gradients must equal JAX's bit for bit.

Each case is ``make(jnp, lax, nn) -> f``, so that the same source builds the function
under JAX (``normalization_grad_reference_gen.py``) and under modjax (the test).
"""

import numpy as np


def inputs():
    """The input all cases differentiate at: a (32, 8) float32 batch."""
    return np.random.RandomState(0).randn(32, 8).astype(np.float32)


def _weights(shape, seed=1):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _batch_norm(jnp, lax, nn):
    # flax.nnx.BatchNorm's train-mode computation (fast variance, clipped at 0).
    s, b, w = _weights((8,), 2), _weights((8,), 3), _weights((32, 8))

    def f(x):
        mu, mu2 = x.mean((0,)), lax.square(x).mean((0,))
        var = jnp.maximum(0.0, mu2 - lax.square(mu))
        y = x - mu.reshape(1, 8)
        mul = lax.rsqrt(var.reshape(1, 8) + 1e-5) * s.reshape(1, 8)
        return jnp.sum((y * mul + b.reshape(1, 8)) * w)

    return f


def _layer_norm(jnp, lax, nn):
    w = _weights((32, 8))

    def f(x):
        mu = x.mean(-1, keepdims=True)
        var = jnp.maximum(0.0, lax.square(x).mean(-1, keepdims=True) - lax.square(mu))
        return jnp.sum((x - mu) * lax.rsqrt(var + 1e-6) * w)

    return f


def _linear_bn_mlp(jnp, lax, nn):
    # Linear(8, 8) -> BatchNorm -> relu -> Linear(8, 2), a squared-error loss.
    k1, k2 = _weights((8, 8), 4) * 0.3, _weights((8, 2), 5) * 0.3
    target = _weights((32, 2), 6)
    bn = _batch_norm_plain(jnp, lax)

    def f(x):
        h = nn.relu(bn(x @ k1))
        return jnp.mean((h @ k2 - target) ** 2)

    return f


def _batch_norm_plain(jnp, lax):
    def bn(x):
        mu, mu2 = x.mean((0,)), lax.square(x).mean((0,))
        var = jnp.maximum(0.0, mu2 - lax.square(mu))
        return (x - mu.reshape(1, 8)) * lax.rsqrt(var.reshape(1, 8) + 1e-5)

    return bn


def _var(jnp, lax, nn):
    v = _weights((8,))[0]
    return lambda x: jnp.sum(jnp.var(x, 0) * v)


def _var_ddof_keepdims(jnp, lax, nn):
    v = _weights((1, 8))
    return lambda x: jnp.sum(jnp.var(x, 0, ddof=1, keepdims=True) * v)


def _std(jnp, lax, nn):
    v = _weights((32,))
    return lambda x: jnp.sum(jnp.std(x, 1) * v)


def _mean_where(jnp, lax, nn):
    m = _weights((32, 8), 7) > -0.5
    v = _weights((8,))[0]
    return lambda x: jnp.sum(jnp.mean(x, 0, where=m) * v)


def _var_where(jnp, lax, nn):
    m = _weights((32, 8), 7) > -0.5
    v = _weights((8,))[0]
    return lambda x: jnp.sum(jnp.var(x, 0, where=m) * v)


def _standardize(jnp, lax, nn):
    w = _weights((32, 8))
    return lambda x: jnp.sum(nn.standardize(x, axis=0) * w)


def _quotient(jnp, lax, nn):
    w = _weights((32, 8))
    return lambda x: jnp.sum(x / (x[0:1] ** 2 + 1) * w)


def _pow(jnp, lax, nn):
    w = _weights((32, 8))
    return lambda x: jnp.sum(lax.pow(jnp.abs(x) + 0.5, x[:1] * 0.5) * w)


def _nanvar(jnp, lax, nn):
    v = _weights((8,))[0]
    return lambda x: jnp.sum(jnp.nanvar(jnp.where(x > 1.5, jnp.nan, x), 0) * v)


def _layer_norm_var(jnp, lax, nn):
    # equinox's LayerNorm: jnp.var along the last axis. JAX's var is its own jit, whose
    # boundary sets the order in which x's cotangent sums its contributions.
    w = _weights((32, 8))

    def f(x):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.maximum(0.0, jnp.var(x, axis=-1, keepdims=True))
        return jnp.sum((x - mu) * lax.rsqrt(var + 1e-5) * w)

    return f


def _var_times_input(jnp, lax, nn):
    w = _weights((32, 8))
    return lambda x: jnp.sum(jnp.var(x, axis=-1, keepdims=True) * x * w)


CASES = {
    "batch_norm": _batch_norm,
    "layer_norm": _layer_norm,
    "linear_bn_mlp": _linear_bn_mlp,
    "var": _var,
    "var_ddof_keepdims": _var_ddof_keepdims,
    "std": _std,
    "mean_where": _mean_where,
    "var_where": _var_where,
    "standardize": _standardize,
    "quotient": _quotient,
    "pow": _pow,
    "nanvar": _nanvar,
    "layer_norm_var": _layer_norm_var,
    "var_times_input": _var_times_input,
}


# jnp reductions of an int32 array given an integer ``dtype`` (JAX: var's integer
# quotient comes back as a weakly typed float, nanvar's stays an integer).
INT_INPUT = [[1, 2, 7], [4, 5, 9]]
INT_CASES = {
    "var_int32": ("var", "int32", {}),
    "var_int32_axis1": ("var", "int32", {"axis": 1}),
    "var_int16_ddof1_keepdims": ("var", "int16", {"axis": 1, "ddof": 1, "keepdims": True}),
    "var_uint8_where": ("var", "uint8", {"axis": 1, "where": np.array([True, False, True])}),
    "var_bool": ("var", "bool_", {}),
    "std_int32": ("std", "int32", {}),
    "nanvar_int32_axis1": ("nanvar", "int32", {"axis": 1}),
    "nanstd_int32": ("nanstd", "int32", {}),
    "mean_int32_axis1": ("mean", "int32", {"axis": 1}),
    "mean_float16": ("mean", "float16", {}),
    "mean_bool": ("mean", "bool_", {}),
    "nanmean_int32": ("nanmean", "int32", {}),
}
