"""Discrete samplers (jax.random's bernoulli, randint, permutation, choice, categorical, ...).

Each follows JAX 0.10's algorithm so the same key gives the same integers:
``randint`` draws two words per value and reduces them modulo the span;
``permutation`` sorts by random 32-bit keys; ``categorical`` takes the argmax
of Gumbel-perturbed logits; ``poisson`` and ``binomial`` loop (Knuth or
inversion for small means, transformed rejection for large ones) in a
``while_loop`` over the whole sample until every element is accepted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.numpy._util import check_arraylike, promote_dtypes_inexact
from modjax.runtime import jit
from modjax.tracecore import dtypes
from modjax.tracecore.core import concrete_or_error

from ._continuous import _uniform
from ._keys import random_bits, split
from ._sampler_args import (
    check_shape,
    float_dtype,
    honours_out_sharding,
    int_dtype,
    result_shape,
    shape_arg,
    single_key,
    user_dtype,
)

__all__ = [
    "bernoulli",
    "binomial",
    "categorical",
    "choice",
    "geometric",
    "multinomial",
    "permutation",
    "poisson",
    "rademacher",
    "randint",
]

_UINT_OF_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


@honours_out_sharding
def bernoulli(key, p=0.5, shape=None, mode="low", *, out_sharding=None):
    """Sample booleans that are True with probability ``p`` (jax.random.bernoulli)."""
    if shape is not None:
        shape = shape_arg(shape)
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    key = single_key("bernoulli", key)
    dtype = dtypes.dtype(p, canonicalize=True)
    if not dtypes.issubdtype(dtype, np.floating):
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {dtype}.")
    p = lax.convert_element_type(p, dtype)
    if shape is None:
        shape = tuple(np.shape(p))
    else:
        check_shape("bernoulli", shape, np.shape(p))
    return _bernoulli(key, p, shape=shape, mode=mode)


def _bernoulli_impl(key, p, *, shape, mode):
    dtype = p.dtype
    if mode == "high":
        both = _uniform(key, 0.0, 1.0, shape=(2, *shape), dtype=dtype)
        # The second draw resolves probabilities below the first's resolution.
        u2 = both[1] * (2.0 ** -dtypes.finfo(dtype).nmant)
        return u2 < p - both[0]
    return _uniform(key, 0.0, 1.0, shape=shape, dtype=dtype) < p


_bernoulli = jit(_bernoulli_impl, static_argnames=("shape", "mode"))


@honours_out_sharding
def rademacher(key, shape=(), dtype=None, *, out_sharding=None):
    """Sample -1 or +1 with equal probability (jax.random.rademacher)."""
    key = single_key("rademacher", key)
    return _rademacher(key, shape_arg(shape), int_dtype(dtype))


def _rademacher_impl(key, shape, dtype):
    # JAX passes the Python float 0.5: with x64 on, its uniform draw is float64's.
    half = np.asarray(0.5, dtypes.dtype(0.5, canonicalize=True))
    coin = _bernoulli_impl(key, half, shape=shape, mode="low").astype(dtype)
    return (2 * coin - 1).astype(dtype)


_rademacher = jit(_rademacher_impl, static_argnums=(1, 2))


# --- integers in a range ----------------------------------------------------------------------


@honours_out_sharding
def randint(key, shape, minval, maxval, dtype=None, *, out_sharding=None):
    """Sample integers uniformly in [minval, maxval) (jax.random.randint)."""
    key = single_key("randint", key)
    dtype = int_dtype(dtype)
    shape = shape_arg(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        raise TypeError(f"randint only accepts integer dtypes, got {dtype}")
    info = dtypes.iinfo(dtype)
    sampling_dtype = dtype
    if info.bits < 32:
        # Narrow types sample in 32 bits, which keeps the modulo bias small.
        sampling_dtype = np.dtype(np.int32)
        minval = jnp.asarray(minval).astype(np.int32).clip(int(info.min), int(info.max))
        maxval = jnp.asarray(maxval).astype(np.int32).clip(int(info.min), int(info.max) + 1)
    check_shape("randint", shape, np.shape(minval), np.shape(maxval))
    check_arraylike("randint", minval, maxval)
    return _randint(key, minval, maxval, shape=shape, dtype=sampling_dtype).astype(dtype)


def _clip_to(val, dtype):
    """Convert integer ``val`` to integer ``dtype``, saturating instead of wrapping."""
    lo = max(int(dtypes.iinfo(dtype).min), int(dtypes.iinfo(val.dtype).min))
    hi = min(int(dtypes.iinfo(dtype).max), int(dtypes.iinfo(val.dtype).max))
    return jnp.clip(val, np.array(lo, val.dtype), np.array(hi, val.dtype)).astype(dtype)


def _randint_impl(key, minval, maxval, *, shape, dtype):
    minval, maxval = jnp.asarray(minval), jnp.asarray(maxval)
    if not dtypes.issubdtype(minval.dtype, np.integer):
        minval = minval.astype(int)
    if not dtypes.issubdtype(maxval.dtype, np.integer):
        maxval = maxval.astype(int)
    # A maxval past the dtype's maximum (randint(..., 0, 256, uint8)) widens the span by one.
    max_in_maxval_type = _clip_to(jnp.array(dtypes.iinfo(dtype).max, dtype), maxval.dtype)
    maxval_out_of_range = lax.gt(maxval, max_in_maxval_type)
    minval = lax.broadcast_to_rank(_clip_to(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(_clip_to(maxval, dtype), len(shape))
    nbits = dtypes.iinfo(dtype).bits
    keys = split(key, 2)
    higher_bits = random_bits(keys[0], nbits, shape)
    lower_bits = random_bits(keys[1], nbits, shape)
    unsigned = np.dtype(_UINT_OF_BITS[nbits])
    span = lax.convert_element_type(maxval - minval, unsigned)
    # An empty range returns minval (span 1), as in JAX.
    span = lax.select(maxval <= minval, lax.full_like(span, 1), span)
    span = lax.select(
        maxval_out_of_range & (maxval > minval), lax.add(span, np.array(1, unsigned)), span
    )
    # (hi * 2**nbits + lo) % span without overflow: 2**nbits % span from its square root.
    multiplier = lax.rem(np.array(2 ** (nbits // 2), unsigned), span)
    multiplier = lax.rem(lax.mul(multiplier, multiplier), span)
    offset = lax.add(lax.mul(lax.rem(higher_bits, span), multiplier), lax.rem(lower_bits, span))
    offset = lax.rem(offset, span)
    return lax.add(minval, lax.convert_element_type(offset, dtype))


_randint = jit(_randint_impl, static_argnames=("shape", "dtype"))


# --- permutations and choices -----------------------------------------------------------------


@honours_out_sharding
def permutation(key, x, axis=0, independent=False, *, out_sharding=None):
    """Permute ``x`` along ``axis`` at random, or ``arange(x)`` (jax.random.permutation)."""
    from modjax.numpy._util import canonicalize_axis

    key = single_key("permutation", key)
    check_arraylike("permutation", x)
    ndim = np.ndim(x) if not hasattr(x, "ndim") else x.ndim
    axis = canonicalize_axis(axis, ndim or 1)
    if not ndim:
        if not dtypes.issubdtype(dtypes.dtype(x), np.integer):
            raise TypeError("x must be an integer or at least 1-dimensional")
        r = int(concrete_or_error(x, "argument x of jax.random.permutation()"))
        return _shuffle(key, jnp.arange(r), axis)
    x = jnp.asarray(x)
    if independent or x.ndim == 1:
        return _shuffle(key, x, axis)
    ind = _shuffle(key, jnp.arange(x.shape[axis]), 0)
    return jnp.take(x, ind, axis, unique_indices=True)


def _shuffle_impl(key, x, axis):
    # Sort by random 32-bit keys; enough rounds (of fresh keys) that ties, which
    # would bias the result, are unlikely: tjablin's heuristic, as in JAX.
    exponent = 3
    uint32max = np.iinfo(np.uint32).max
    num_rounds = int(np.ceil(exponent * np.log(max(1, x.size)) / np.log(uint32max)))
    for _ in range(num_rounds):
        keys = split(key, 2)
        key, subkey = keys[0], keys[1]
        sort_keys = random_bits(subkey, 32, x.shape)
        _, x = lax.sort_key_val(sort_keys, x, axis)
    return x


_shuffle = jit(_shuffle_impl, static_argnums=(2,))


def choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """Sample elements of ``a`` (or ``arange(a)``), weighted by ``p`` (jax.random.choice)."""
    from modjax.numpy._util import canonicalize_axis

    key = single_key("choice", key)
    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    check_arraylike("choice", a)
    arr = jnp.asarray(a)
    if arr.ndim == 0:
        n_inputs = int(concrete_or_error(a, "The error occurred in jax.random.choice()"))
    else:
        axis = canonicalize_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    shape = tuple(shape)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return jnp.zeros(shape, dtype=arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than "
            f"population (size {n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = randint(key, shape, 0, n_inputs)
            result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
        else:
            slices = (slice(None),) * axis + (slice(n_draws),)
            result = permutation(key, n_inputs if arr.ndim == 0 else arr, axis)[slices]
    else:
        check_arraylike("choice", p)
        (p_arr,) = promote_dtypes_inexact(jnp.asarray(p))
        if p_arr.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {p_arr.shape} and a.shape[axis] is {n_inputs}."
            )
        if replace:
            p_cuml = jnp.cumsum(p_arr)
            from ._continuous import uniform

            r = p_cuml[-1] * (1 - uniform(key, shape, dtype=p_cuml.dtype))
            ind = jnp.searchsorted(p_cuml, r).astype(int)
        else:
            # Gumbel top-k: the k largest perturbed log-weights are a weighted
            # sample without replacement.
            g = _gumbel(key, (n_inputs,), p_arr.dtype, mode) + jnp.log(p_arr)
            ind = lax.top_k(g, n_draws)[1].astype(int)
        result = ind if arr.ndim == 0 else jnp.take(arr, ind, axis)
    return result.reshape(
        shape if arr.ndim == 0 else arr.shape[0:axis] + shape + arr.shape[axis + 1 :]
    )


def _gumbel(key, shape, dtype, mode):
    from ._continuous import gumbel

    return gumbel(key, shape, dtype, mode)


@honours_out_sharding
def categorical(key, logits, axis=-1, shape=None, replace=True, mode=None, *, out_sharding=None):
    """Sample category indices from log-probabilities ``logits`` (jax.random.categorical)."""
    key = single_key("categorical", key)
    check_arraylike("categorical", logits)
    logits_arr = jnp.asarray(logits)
    batch_shape = tuple(int(d) for d in np.delete(logits_arr.shape, axis))
    if shape is None:
        shape = batch_shape
    else:
        shape = shape_arg(shape)
        check_shape("categorical", shape, batch_shape)
    shape_prefix = shape[: len(shape) - len(batch_shape)]
    if mode is None:
        mode = "low"
    if replace:
        if axis >= 0:
            axis -= logits_arr.ndim
        logits_shape = list(shape[len(shape) - len(batch_shape) :])
        logits_shape.insert(axis % logits_arr.ndim, logits_arr.shape[axis])
        noise = _gumbel(key, (*shape_prefix, *logits_shape), logits_arr.dtype, mode)
        return jnp.argmax(
            noise + lax.expand_dims(logits_arr, tuple(range(len(shape_prefix)))), axis=axis
        )
    logits_arr = logits_arr + _gumbel(key, logits_arr.shape, logits_arr.dtype, mode)
    k = math.prod(shape_prefix)
    if k > logits_arr.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({logits_arr.shape[axis]})."
        )
    _, indices = lax.top_k(jnp.moveaxis(logits_arr, axis, -1), k)
    dimensions = (indices.ndim - 1, *range(indices.ndim - 1))
    return lax.reshape(indices, shape, dimensions)


@honours_out_sharding
def geometric(key, p, shape=None, dtype=None, *, out_sharding=None):
    """Sample the number of Bernoulli(p) trials up to the first success (jax.random.geometric)."""
    key = single_key("geometric", key)
    dtype = int_dtype(dtype)
    if not dtypes.issubdtype(dtype, np.integer):
        raise ValueError(f"dtype argument to `geometric` must be an int dtype, got {dtype}")
    shape = result_shape("geometric", shape, p)
    check_arraylike("geometric", p)
    return _geometric(key, p, shape, dtype)


def _geometric_impl(key, p, shape, dtype):
    (p,) = promote_dtypes_inexact(p)
    p = jnp.asarray(p)
    u = _uniform(key, 0.0, 1.0, shape=shape, dtype=p.dtype)
    u = jnp.where(u == 0, 1, u)
    log_one_minus_p = jnp.broadcast_to(lax.log1p(-p), shape)
    return (lax.floor(lax.div(lax.log(u), log_one_minus_p)) + 1).astype(dtype)


_geometric = jit(_geometric_impl, static_argnums=(2, 3))


# --- poisson ----------------------------------------------------------------------------------


@honours_out_sharding
def poisson(key, lam, shape=None, dtype=None, *, out_sharding=None):
    """Sample Poisson counts of rate ``lam`` (jax.random.poisson)."""
    key = single_key("poisson", key)
    impl = key.dtype._impl
    if impl.name != "threefry2x32":
        # As JAX: its rejection loop assumes threefry's statistics.
        raise NotImplementedError(
            f"`poisson` is only implemented for the threefry2x32 RNG, not {impl}"
        )
    dtype = int_dtype(dtype)
    shape = tuple(np.shape(lam)) if shape is None else shape_arg(shape)
    if not dtypes.issubdtype(dtype, np.integer):
        # JAX fails in iinfo here; keep its error class and message.
        raise ValueError(f"Invalid integer data type '{dtype.char}'.")
    lam = lax.convert_element_type(jnp.broadcast_to(lam, shape), np.float32)
    return _poisson(key, lam, shape, dtype)


def _poisson_knuth(key, lam, shape, dtype, max_iters):
    def body(carry):
        i, k, rng, log_prod = carry
        keys = split(rng, 2)
        k = lax.select(log_prod > -lam, k + 1, k)
        u = _uniform(keys[1], 0.0, 1.0, shape=shape, dtype=np.dtype(np.float32))
        return i + 1, k, keys[0], log_prod + jnp.log(u)

    def cond(carry):
        i, log_prod = carry[0], carry[3]
        return (log_prod > -lam).any() & (i < max_iters)

    k0 = jnp.zeros(shape, dtype)
    log0 = jnp.zeros(shape, np.float32)
    k = lax.while_loop(cond, body, (0, k0, key, log0))[1]
    return (k - 1).astype(dtype)


def _poisson_rejection(key, lam, shape, dtype, max_iters):
    # Hormann's transformed rejection with squeeze (PTRS).
    log_lam = lax.log(lam)
    b = 0.931 + 2.53 * lax.sqrt(lam)
    a = -0.059 + 0.02483 * b
    inv_alpha = 1.1239 + 1.1328 / (b - 3.4)
    v_r = 0.9277 - 3.6224 / (b - 2)

    def body(carry):
        i, k_out, accepted, rng = carry
        keys = split(rng, 3)
        u = _uniform(keys[1], 0.0, 1.0, shape=shape, dtype=lam.dtype) - 0.5
        v = _uniform(keys[2], 0.0, 1.0, shape=shape, dtype=lam.dtype)
        u_shifted = 0.5 - abs(u)
        k = lax.floor((2 * a / u_shifted + b) * u + lam + 0.43)
        s = lax.log(v * inv_alpha / (a / (u_shifted * u_shifted) + b))
        t = -lam + k * log_lam - lax.lgamma(k + 1)
        accept1 = (u_shifted >= 0.07) & (v <= v_r)
        reject = (k < 0) | ((u_shifted < 0.013) & (v > u_shifted))
        accept = accept1 | (~reject & (s <= t))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond(carry):
        return (~carry[2]).any() & (carry[0] < max_iters)

    k0 = jnp.full(shape, -1, lam.dtype)
    accepted = jnp.zeros(shape, bool)
    return lax.while_loop(cond, body, (0, k0, accepted, key))[1].astype(dtype)


def _poisson_impl(key, lam, shape, dtype):
    use_knuth = jnp.isnan(lam) | (lam < 10)
    lam_knuth = lax.select(use_knuth, lam, jnp.zeros_like(lam))
    lam_rejection = lax.select(use_knuth, jnp.full_like(lam, 1e5), lam)
    # JAX bounds the loops by the largest value of the dtype (in effect: none).
    max_iters = dtype.type(dtypes.iinfo(dtype).max)
    result = lax.select(
        use_knuth,
        _poisson_knuth(key, lam_knuth, shape, dtype, max_iters),
        _poisson_rejection(key, lam_rejection, shape, dtype, max_iters),
    )
    return lax.select(lam == 0, jnp.zeros_like(result), result)


_poisson = jit(_poisson_impl, static_argnums=(2, 3))


# --- binomial and multinomial -----------------------------------------------------------------

_STIRLING_TAIL = (
    0.0810614667953272,
    0.0413406959554092,
    0.0276779256849983,
    0.02079067210376509,
    0.0166446911898211,
    0.0138761288230707,
    0.0118967099458917,
    0.0104112652619720,
    0.00925546218271273,
    0.00833056343336287,
)


def _stirling_approx_tail(k):
    """Return log(k!) minus its Stirling approximation: a table for k <= 9, a series above."""
    table = jnp.array(_STIRLING_TAIL, dtype=k.dtype)
    use_table = k <= 9
    k = lax.clamp(np.array(0.0, k.dtype), k, np.array(9.0, k.dtype))
    kp1sq = (k + 1) * (k + 1)
    approx = (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1)
    k = jnp.floor(k)
    return lax.select(use_table, table[jnp.asarray(k, dtype="int32")], approx)


def _binomial_inversion(key, count, prob, shape, dtype, max_iters):
    log1minusprob = jnp.log1p(-prob)

    def body(carry):
        i, num_geom, geom_sum, rng = carry
        keys = split(rng, 2)
        subkey, rng = keys[0], keys[1]
        num_geom_out = lax.select(geom_sum <= count, num_geom + 1, num_geom)
        u = _uniform(subkey, 0.0, 1.0, shape=shape, dtype=prob.dtype)
        geom = jnp.ceil(jnp.log(u) / log1minusprob)
        return i + 1, num_geom_out, geom_sum + geom, rng

    def cond(carry):
        return (carry[2] <= count).any() & (carry[0] < max_iters)

    zeros = jnp.zeros(shape, prob.dtype)
    k = lax.while_loop(cond, body, (0, zeros, zeros, key))[1]
    return (k - 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype, max_iters):
    # Hormann's transformed rejection for the binomial (BTRS).
    stddev = jnp.sqrt(count * prob * (1 - prob))
    b = 1.15 + 2.53 * stddev
    a = -0.0873 + 0.0248 * b + 0.01 * prob
    c = count * prob + 0.5
    v_r = 0.92 - 4.2 / b
    r = prob / (1 - prob)
    alpha = (2.83 + 5.1 / b) * stddev
    m = jnp.floor((count + 1) * prob)

    def body(carry):
        i, k_out, accepted, rng = carry
        keys = split(rng, 3)
        u = _uniform(keys[1], 0.0, 1.0, shape=shape, dtype=prob.dtype)
        v = _uniform(keys[2], 0.0, 1.0, shape=shape, dtype=prob.dtype)
        u = u - 0.5
        us = 0.5 - jnp.abs(u)
        accept1 = (us >= 0.07) & (v <= v_r)
        k = jnp.floor((2 * a / us + b) * u + c)
        reject = (k < 0) | (k > count)
        v = jnp.log(v * alpha / (a / (us * us) + b))
        ub = (
            (m + 0.5) * jnp.log((m + 1) / (r * (count - m + 1)))
            + (count + 1) * jnp.log((count - m + 1) / (count - k + 1))
            + (k + 0.5) * jnp.log(r * (count - k + 1) / (k + 1))
            + _stirling_approx_tail(m)
            + _stirling_approx_tail(count - m)
            - _stirling_approx_tail(k)
            - _stirling_approx_tail(count - k)
        )
        accept = accept1 | (~reject & (v <= ub))
        return i + 1, lax.select(accept, k, k_out), accepted | accept, keys[0]

    def cond(carry):
        return (~carry[2]).any() & (carry[0] < max_iters)

    k0 = jnp.full(shape, -1, prob.dtype)
    carry = (0, k0, jnp.zeros(shape, bool), key)
    return lax.while_loop(cond, body, carry)[1].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Sample counts of successes in ``n`` trials of probability ``p`` (jax.random.binomial)."""
    key = single_key("binomial", key)
    check_arraylike("binomial", n, p)
    dtype = float_dtype("binomial", dtype)
    if shape is not None:
        shape = shape_arg(shape)
        check_shape("binomial", shape, np.shape(n), np.shape(p))
    else:
        shape = tuple(jnp.broadcast_shapes(np.shape(n), np.shape(p)))
    return _binomial(key, n, p, shape, dtype)


def _binomial_impl(key, count, prob, shape, dtype):
    (prob,) = promote_dtypes_inexact(prob)
    prob = jnp.asarray(prob)
    count = jnp.broadcast_to(lax.convert_element_type(count, prob.dtype), shape)
    prob = jnp.broadcast_to(prob, shape)
    # Sample with q = min(p, 1 - p) and reflect, so both methods see q <= 1/2.
    p_lt_half = prob < 0.5
    q = lax.select(p_lt_half, prob, 1.0 - prob)
    count_nan_or_neg = jnp.isnan(count) | (count < 0.0)
    count_inf = jnp.isinf(count)
    q_is_nan = jnp.isnan(q)
    q_l_0 = q < 0.0
    q = lax.select(q_is_nan | q_l_0, jnp.full_like(q, 0.01), q)
    use_inversion = count_nan_or_neg | (count * q <= 10.0)
    count = jnp.floor(count)
    count_inv = lax.select(use_inversion, count, jnp.zeros_like(count))
    count_btrs = lax.select(use_inversion, jnp.full_like(count, 1e4), count)
    q_btrs = lax.select(use_inversion, jnp.full_like(q, 0.5), q)
    max_iters = dtype.type(dtypes.finfo(dtype).max)
    samples = lax.select(
        use_inversion,
        _binomial_inversion(key, count_inv, q, shape, dtype, max_iters),
        _btrs(key, count_btrs, q_btrs, shape, dtype, max_iters),
    )
    invalid = q_l_0 | q_is_nan | count_nan_or_neg
    samples = lax.select(invalid, jnp.full_like(samples, np.nan, dtype), samples)
    samples = lax.select(count_inf & ~invalid, jnp.full_like(samples, np.inf, dtype), samples)
    return lax.select(
        p_lt_half | count_nan_or_neg | q_is_nan | count_inf,
        samples,
        count.astype(dtype) - samples,
    )


_binomial = jit(_binomial_impl, static_argnums=(3, 4), inline=True)


def multinomial(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Sample counts of ``n`` draws over categories of probabilities ``p`` (jax.random.multinomial).

    A chain of conditional binomials over the categories, in a ``scan``.
    """
    key = single_key("multinomial", key)
    check_arraylike("multinomial", n, p)
    n, p = promote_dtypes_inexact(n, p)
    n, p = jnp.asarray(n), jnp.asarray(p)
    # the counts are cast to any dtype asked for (integers included), as in JAX
    dtype = user_dtype(float if dtype is None else dtype)
    if shape is None:
        shape = p.shape
    shape = tuple(shape)
    n = jnp.broadcast_to(n, shape[:-1])
    p = jnp.broadcast_to(p, shape)

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, ratio.clip(0, 1), dtype=remainder.dtype)
        return remainder - count, count

    p = jnp.moveaxis(p, -1, 0)
    remaining = lax.cumsum(p, 0, reverse=True)
    ratios = p / jnp.where(remaining == 0, 1, remaining)
    keys = split(key, ratios.shape[0])
    _, counts = lax.scan(step, n, (ratios, keys), unroll=unroll)
    return jnp.moveaxis(counts, 0, -1).astype(dtype)
