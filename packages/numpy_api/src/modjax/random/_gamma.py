"""Gamma sampling and the samplers built on it (jax.random's gamma, beta, dirichlet, t, ...).

``random_gamma_p`` draws one Marsaglia-Tsang sample per element of ``a``,
each from its own key (the key split once per element), in a
``while_loop`` that rejects until it accepts. Its JVP is the implicit
(reparameterization) gradient: differentiating ``P(a, x) = u`` at fixed
``u`` gives ``dx/da = -(dP/da) / (dP/dx)``, computed from lax's
``igamma_grad_a`` and the gamma density. Its operands are typed keys and
``a`` (params: ``log_space``), as JAX's; it lowers the sampler on the key
data, like the key primitives. vmap moves the batch to the front
of both operands and binds again: a batched key is split per element, which
is exactly what a loop over the keys does.
"""

from __future__ import annotations

from functools import partial

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import defjvp2
from modjax.batching import batching_rules, bdim_at_front, vmap
from modjax.lowering import lower_fun, register_lowering
from modjax.runtime import apply_primitive, jit
from modjax.tracecore import dtypes
from modjax.tracecore.core import Primitive

from ._continuous import _exponential, _normal_real, _two, _uniform
from ._discrete import _rademacher_impl
from ._keys import split
from ._prng import is_key_dtype, threefry_prng_impl
from ._sampler_args import (
    check_safe_to_cast,
    check_shape,
    float_dtype,
    honours_out_sharding,
    result_shape,
    shape_arg,
    single_key,
)

__all__ = [
    "ball",
    "beta",
    "chisquare",
    "dirichlet",
    "f",
    "gamma",
    "generalized_normal",
    "loggamma",
    "random_gamma_grad",
    "random_gamma_p",
    "t",
]


def _gamma_one(key, alpha, log_space):
    """Draw one Gamma(alpha, 1) sample (or its log) by Marsaglia and Tsang's method."""
    dtype = alpha.dtype

    def c(v):
        return np.array(v, dtype)

    zero, one = c(0), c(1)
    # For alpha < 1, sample Gamma(alpha + 1) and multiply by U**(1/alpha).
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c(1.0 / 3.0))
    cc = lax.div(c(1.0 / 3.0), lax.sqrt(d))

    def reject(state):
        _, x, v, u = state
        squeeze = lax.ge(u, lax.sub(one, lax.mul(c(0.0331), lax.mul(x, x))))
        exact = lax.ge(
            lax.log(u),
            lax.add(lax.mul(x, c(0.5)), lax.mul(d, lax.add(lax.sub(one, v), lax.log(v)))),
        )
        return lax.bitwise_and(squeeze, exact)

    def next_candidate(state):
        def next_x(kxv):
            keys = _two(kxv[0])
            x = _normal_real(keys[1], (), dtype)
            return keys[0], x, lax.add(one, lax.mul(x, cc))

        keys = split(state[0], 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_x, (keys[1], zero, c(-1)))
        u = _uniform(keys[2], 0.0, 1.0, shape=(), dtype=dtype)
        return keys[0], lax.mul(x, x), lax.mul(lax.mul(v, v), v), u

    key, subkey = _two(key)
    _, _, v, _ = lax.while_loop(reject, next_candidate, (key, zero, one, c(2)))
    if log_space:
        # In log space the boost cannot underflow for tiny alpha.
        log_samples = lax.neg(_exponential(subkey, (), dtype))
        log_boost = lax.select(
            boost_mask | (log_samples == 0), zero, lax.mul(log_samples, lax.div(one, alpha_orig))
        )
        return lax.add(lax.add(lax.log(d), lax.log(v)), log_boost)
    samples = 1 - _uniform(subkey, 0.0, 1.0, shape=(), dtype=dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, v), boost)


def _gamma_impl(key, a, *, log_space):
    """Sample every element of ``a`` from its own key: each of ``key``'s keys split per element."""
    a_shape = a.shape
    per_key = int(np.prod(a_shape[key.ndim :], dtype=np.int64))
    keys = key.reshape(-1) if key.ndim else key.reshape(1)
    keys = vmap(lambda k: split(k, per_key))(keys).reshape(-1)
    one = partial(_gamma_one, log_space=log_space)
    if key.dtype._impl is threefry_prng_impl:
        samples = vmap(one)(keys, a.reshape(-1))
    else:
        # JAX samples elementwise in a loop for the other implementations: the bits of rbg
        # keys under vmap differ from one key's, so only the loop gives JAX's numbers.
        samples = lax.map(lambda args: one(*args), (keys, a.reshape(-1)))
    return samples.reshape(a_shape)


def _gamma_abstract_eval(keys, a, *, log_space):
    if not is_key_dtype(keys.dtype):
        raise TypeError(f"random_gamma takes a key array operand, got dtype {keys.dtype}")
    return a


def _gamma_batch_rule(args, dims, *, log_space):
    # Both operands get the batch axis in front.
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    keys, a = (bdim_at_front(x, d, size) for x, d in zip(args, dims, strict=True))
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


def random_gamma_grad(a, x):
    """Return d(sample)/d(a) of Gamma(a, 1) samples ``x`` (jax.lax.random_gamma_grad).

    Implicit differentiation of ``igamma(a, x) = u``: ``-igamma_grad_a(a, x)``
    over the density ``x**(a-1) exp(-x) / Gamma(a)``.
    """
    a, x = jnp.asarray(a), jnp.asarray(x)
    log_density = (a - 1) * lax.log(x) - x - lax.lgamma(a)
    grad = -lax.igamma_grad_a(a, x) * lax.exp(-log_density)
    return jnp.where(x == 0, jnp.zeros_like(grad), grad)


def _gamma_grad(sample, a, *, log_space):
    if log_space:
        # d log(x)/da = (dx/da) / x, with x = 0 (underflow) read as the smallest float.
        x = lax.exp(sample)
        x = jnp.where(x == 0, jnp.full_like(x, dtypes.finfo(x.dtype).tiny), x)
        return random_gamma_grad(a, x) / x
    return random_gamma_grad(a, sample)


random_gamma_p = Primitive("random_gamma")
random_gamma_p.def_abstract_eval(_gamma_abstract_eval)
random_gamma_p.def_impl(partial(apply_primitive, random_gamma_p))
register_lowering(random_gamma_p, lower_fun(_gamma_impl))
defjvp2(random_gamma_p, None, lambda g, ans, key, a, **kw: g * _gamma_grad(ans, a, **kw))
batching_rules[random_gamma_p] = _gamma_batch_rule


def _gamma_sampler(name, key, a, shape, dtype, log_space):
    key = single_key(name, key)
    dtype = float_dtype("gamma", dtype)
    if shape is not None:
        shape = shape_arg(shape)
    return _gamma(key, a, shape, dtype, log_space)


def _gamma_fn(key, a, shape, dtype, log_space):
    if shape is None:
        shape = tuple(np.shape(a))
    else:
        check_shape("gamma", shape, np.shape(a))
    a = lax.convert_element_type(a, dtype)
    if np.shape(a) != shape:
        a = jnp.broadcast_to(a, shape)
    return random_gamma_p.bind(key, a, log_space=log_space)


_gamma = jit(_gamma_fn, static_argnums=(2, 3, 4))


@honours_out_sharding
def gamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Sample Gamma(a, 1) values, differentiable in ``a`` (jax.random.gamma)."""
    return _gamma_sampler("gamma", key, a, shape, dtype, False)


@honours_out_sharding
def loggamma(key, a, shape=None, dtype=None, *, out_sharding=None):
    """Sample the log of Gamma(a, 1) values, accurate for small ``a`` (jax.random.loggamma)."""
    return _gamma_sampler("loggamma", key, a, shape, dtype, True)


@honours_out_sharding
def beta(key, a, b, shape=None, dtype=None, *, out_sharding=None):
    """Sample Beta(a, b) values as a ratio of gamma samples (jax.random.beta)."""
    key = single_key("beta", key)
    dtype = float_dtype("beta", dtype)
    check_safe_to_cast("beta", dtype, a, b)
    shape = result_shape("beta", shape, a, b)
    return _beta(key, a, b, shape, dtype)


def _beta_impl(key, a, b, shape, dtype):
    key_a, key_b = _two(key)
    a = jnp.broadcast_to(lax.convert_element_type(a, dtype), shape)
    b = jnp.broadcast_to(lax.convert_element_type(b, dtype), shape)
    log_gamma_a = _gamma_fn(key_a, a, shape, dtype, True)
    log_gamma_b = _gamma_fn(key_b, b, shape, dtype, True)
    # gamma_a / (gamma_a + gamma_b), scaled by the larger so neither underflows.
    log_max = lax.max(log_gamma_a, log_gamma_b)
    gamma_a = jnp.exp(log_gamma_a - log_max)
    gamma_b = jnp.exp(log_gamma_b - log_max)
    return gamma_a / (gamma_a + gamma_b)


_beta = jit(_beta_impl, static_argnums=(3, 4))


@honours_out_sharding
def dirichlet(key, alpha, shape=None, dtype=None, *, out_sharding=None):
    """Sample Dirichlet(alpha) vectors over the last axis (jax.random.dirichlet)."""
    key = single_key("dirichlet", key)
    dtype = float_dtype("dirichlet", dtype)
    if shape is not None:
        shape = shape_arg(shape)
    if np.ndim(alpha) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {np.ndim(alpha)}")
    if shape is None:
        shape = tuple(np.shape(alpha)[:-1])
    else:
        check_shape("dirichlet", shape, np.shape(alpha)[:-1])
    return _dirichlet(key, alpha, shape, dtype)


def _dirichlet_impl(key, alpha, shape, dtype):
    from modjax.nn import softmax

    alpha = lax.convert_element_type(alpha, dtype)
    # Normalized in log space: small alphas give log-gammas far below 0.
    log_gamma = _gamma_fn(key, alpha, shape + np.shape(alpha)[-1:], dtype, True)
    return softmax(log_gamma, -1)


_dirichlet = jit(_dirichlet_impl, static_argnums=(2, 3))


@honours_out_sharding
def chisquare(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Sample chi-square values with ``df`` degrees of freedom (jax.random.chisquare)."""
    key = single_key("chisquare", key)
    dtype = float_dtype("chisquare", dtype)
    shape = result_shape("chisquare", shape, df)
    check_safe_to_cast("chisquare", dtype, df)
    return _chisquare(key, df, shape, dtype)


def _chisquare_impl(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    log_g = _gamma_fn(key, half_df, shape, dtype, True)
    return lax.mul(jnp.exp(log_g), np.array(2, dtype))


_chisquare = jit(_chisquare_impl, static_argnums=(2, 3))


@honours_out_sharding
def f(key, dfnum, dfden, shape=None, dtype=None, *, out_sharding=None):
    """Sample F-distribution values of ``dfnum`` and ``dfden`` (jax.random.f)."""
    key = single_key("f", key)
    dtype = float_dtype("f", dtype)
    shape = result_shape("f", shape, dfnum, dfden)
    check_safe_to_cast("f", dtype, dfnum, dfden)
    return _f(key, dfnum, dfden, shape, dtype)


def _f_impl(key, dfnum, dfden, shape, dtype):
    dfden = lax.convert_element_type(dfden, dtype)
    dfnum = lax.convert_element_type(dfnum, dtype)
    key_dfd, key_dfn = _two(key)
    chi2_dfn = _chisquare_impl(key_dfn, dfnum, shape, dtype)
    chi2_dfd = _chisquare_impl(key_dfd, dfden, shape, dtype)
    return lax.div(lax.div(chi2_dfn, dfnum), lax.div(chi2_dfd, dfden))


_f = jit(_f_impl, static_argnums=(3, 4))


@honours_out_sharding
def t(key, df, shape=None, dtype=None, *, out_sharding=None):
    """Sample Student's t values with ``df`` degrees of freedom (jax.random.t)."""
    key = single_key("t", key)
    dtype = float_dtype("t", dtype)
    shape = result_shape("t", shape, df)
    check_safe_to_cast("t", dtype, df)
    return _t(key, df, shape, dtype)


def _t_impl(key, df, shape, dtype):
    df = lax.convert_element_type(df, dtype)
    key_n, key_g = _two(key)
    n = _normal_real(key_n, shape, dtype)
    half_df = lax.div(df, np.array(2, dtype))
    g = _gamma_fn(key_g, half_df, shape, dtype, False)
    return n * jnp.sqrt(half_df / g)


_t = jit(_t_impl, static_argnums=(2, 3))


@honours_out_sharding
def generalized_normal(key, p, shape=(), dtype=None, *, out_sharding=None):
    """Sample generalized normal values of power ``p`` (jax.random.generalized_normal)."""
    shape = shape_arg(shape)
    key = single_key("generalized_normal", key)
    dtype = float_dtype("generalized_normal", dtype)
    return _generalized_normal(key, p, shape, dtype)


def _generalized_normal_impl(key, p, shape, dtype):
    keys = split(key, 2)
    g = _gamma_fn(keys[0], lax.convert_element_type(1 / p, dtype), shape, dtype, False)
    r = _rademacher_impl(keys[1], shape, dtype)
    return r * g ** (1 / p)


_generalized_normal = jit(_generalized_normal_impl, static_argnums=(2, 3))


@honours_out_sharding
def ball(key, d, p=2, shape=(), dtype=None, *, out_sharding=None):
    """Sample uniformly from the unit ``p``-norm ball in ``d`` dimensions (jax.random.ball)."""
    from modjax.tracecore.core import concrete_or_error

    shape = shape_arg(shape)
    key = single_key("ball", key)
    dtype = float_dtype("ball", dtype)
    d = int(concrete_or_error(d, "The error occurred in jax.random.ball()"))
    return _ball(key, p, d, shape, dtype)


def _ball_impl(key, p, d, shape, dtype):
    k1, k2 = _two(key)
    g = _generalized_normal_impl(k1, p, (*shape, d), dtype)
    e = _exponential(k2, shape, dtype)
    return g / (((jnp.abs(g) ** p).sum(-1) + e) ** (1 / p))[..., None]


_ball = jit(_ball_impl, static_argnums=(2, 3, 4))
