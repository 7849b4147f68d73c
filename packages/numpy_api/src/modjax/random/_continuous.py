"""Continuous samplers built on uniform bits (jax.random's uniform, normal and their transforms).

Every sampler follows JAX 0.10's algorithm step for step, so that the same
key gives the same numbers: ``uniform`` fills the mantissa of a float in
[1, 2) with random bits and subtracts 1; ``normal`` is ``sqrt(2) *
erf_inv(u)`` for ``u`` uniform in (-1, 1); the others transform those two.
The public functions check their arguments eagerly (JAX's errors), then call
a private function compiled once per shape and dtype, as JAX's samplers are
``jit``-decorated: under one compilation XLA fuses ``u * (b - a) + a`` into
one rounding, which the bits of JAX's results depend on.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.runtime import jit
from modjax.tracecore import dtypes

from ._keys import random_bits, split
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
    "cauchy",
    "double_sided_maxwell",
    "exponential",
    "gumbel",
    "laplace",
    "logistic",
    "lognormal",
    "maxwell",
    "multivariate_normal",
    "normal",
    "orthogonal",
    "pareto",
    "rayleigh",
    "triangular",
    "truncated_normal",
    "uniform",
    "wald",
    "weibull_min",
]

_UINT_OF_BITS = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
                 64: np.dtype(np.uint64)}  # fmt: skip


_ONE_F32 = np.float32(1)  # lognormal's default sigma, strongly typed as in JAX


def _const(dtype: np.dtype, value: Any) -> np.ndarray:
    """Return a strongly typed scalar constant of ``dtype`` (JAX's samplers use numpy ones)."""
    return np.array(value, dtype)


# --- uniform and normal: the two samplers all the others build on ----------------------------


@honours_out_sharding
def uniform(key, shape=(), dtype=None, minval=0.0, maxval=1.0, *, out_sharding=None):
    """Sample uniform floats in [minval, maxval) (jax.random.uniform)."""
    key = single_key("uniform", key)
    dtype = float_dtype("uniform", dtype)
    return _uniform(key, minval, maxval, shape=shape_arg(shape), dtype=dtype)


def _uniform_impl(key, minval, maxval, *, shape, dtype):
    finfo = dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    if nbits not in (8, 16, 32, 64):
        raise TypeError(f"uniform only accepts 8-, 16-, 32-, or 64-bit dtypesgot {dtype}.")
    minval = lax.broadcast_to_rank(lax.convert_element_type(minval, dtype), len(shape))
    maxval = lax.broadcast_to_rank(lax.convert_element_type(maxval, dtype), len(shape))
    # Float8 types have fewer mantissa bits than a byte: draw a byte each anyway.
    rng_bits = 8 if nmant < 8 else nbits
    uint = _UINT_OF_BITS[nbits]
    bits = random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        bits = lax.convert_element_type(bits, uint)
    # Random mantissa under the exponent of 1.0: a float uniform in [1, 2).
    mantissa = lax.shift_right_logical(bits, _const(uint, rng_bits - nmant))
    one_bits = _const(dtype, 1.0).view(uint)
    floats = lax.sub(
        lax.bitcast_convert_type(lax.bitwise_or(mantissa, one_bits), dtype), _const(dtype, 1.0)
    )
    scaled = lax.add(lax.mul(floats, lax.sub(maxval, minval)), minval)
    return lax.max(minval, lax.reshape(scaled, shape))


def _uniform(key, minval, maxval, *, shape, dtype):
    """Run the compiled uniform sampler (shared by the samplers that transform it)."""
    check_shape("uniform", shape)
    return _uniform_fn(key, minval, maxval, shape=shape, dtype=dtype)


_uniform_fn = jit(_uniform_impl, static_argnames=("shape", "dtype"))


@honours_out_sharding
def normal(key, shape=(), dtype=None, *, out_sharding=None):
    """Sample standard normal values, real or complex (jax.random.normal)."""
    key = single_key("normal", key)
    shape = shape_arg(shape)
    dtype = float_dtype("normal", dtype, inexact=True)
    return _normal(key, shape=shape, dtype=dtype)


def _normal_impl(key, *, shape, dtype):
    if dtypes.issubdtype(dtype, np.complexfloating):
        real_dtype = np.array(0, dtype).real.dtype
        k_re, k_im = _two(key)
        re = lax.convert_element_type(_normal_real(k_re, shape, real_dtype), dtype)
        im = lax.convert_element_type(_normal_real(k_im, shape, real_dtype), dtype)
        return (re + 1j * im) / _const(dtype, np.sqrt(2))
    return _normal_real(key, shape, dtype)


def _normal_real(key, shape, dtype):
    # u in the open interval (-1, 1), so erf_inv stays finite.
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform(key, lo, _const(dtype, 1.0), shape=shape, dtype=dtype)
    return lax.mul(_const(dtype, np.sqrt(2)), lax.erf_inv(u))


_normal = jit(_normal_impl, static_argnames=("shape", "dtype"))


def _two(key):
    """Split ``key`` in two, as JAX's samplers do for their sub-draws."""
    keys = split(key, 2)
    return keys[0], keys[1]


# --- transforms of uniform --------------------------------------------------------------------


@honours_out_sharding
def truncated_normal(key, lower, upper, shape=None, dtype=None, *, out_sharding=None):
    """Sample standard normal values truncated to (lower, upper) (jax.random.truncated_normal)."""
    if shape is not None:
        shape = shape_arg(shape)
    key = single_key("truncated_normal", key)
    dtype = float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = result_shape("truncated_normal", None, lower, upper)
    else:
        result_shape("truncated_normal", shape, lower, upper)
    return _truncated_normal(key, lower, upper, shape=shape, dtype=dtype)


def _truncated_normal_impl(key, lower, upper, *, shape, dtype):
    sqrt2 = _const(dtype, np.sqrt(2))
    lower = lax.convert_element_type(lower, dtype)
    upper = lax.convert_element_type(upper, dtype)
    a = lax.erf(lower / sqrt2)
    b = lax.erf(upper / sqrt2)
    u = _uniform(key, a, b, shape=shape, dtype=dtype)
    out = sqrt2 * lax.erf_inv(u)
    # Rounding can land on a bound: clip into the open interval (no gradient to the bounds).
    return jnp.clip(
        out,
        lax.nextafter(lax.stop_gradient(lower), _const(dtype, np.inf)),
        lax.nextafter(lax.stop_gradient(upper), _const(dtype, -np.inf)),
    )


_truncated_normal = jit(_truncated_normal_impl, static_argnames=("shape", "dtype"))


def _simple(name, transform):
    """Build a sampler ``name(key, shape=(), dtype=None)`` of ``transform(key, shape, dtype)``."""
    compiled = jit(transform, static_argnums=(1, 2))

    @honours_out_sharding
    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        key = single_key(name, key)
        dtype = float_dtype(name, dtype)
        return compiled(key, shape_arg(shape), dtype)

    sampler.__name__ = sampler.__qualname__ = name
    return sampler


def _cauchy(key, shape, dtype):
    u = _uniform(key, dtypes.finfo(dtype).eps, 1.0, shape=shape, dtype=dtype)
    return lax.tan(lax.mul(_const(dtype, np.pi), lax.sub(u, _const(dtype, 0.5))))


def _exponential(key, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape=shape, dtype=dtype)
    # log1p(-u): the argument of log lies in (0, 1], so the result is finite.
    return lax.neg(lax.log1p(lax.neg(u)))


def _laplace(key, shape, dtype):
    u = _uniform(key, -1.0 + dtypes.finfo(dtype).epsneg, 1.0, shape=shape, dtype=dtype)
    return lax.mul(lax.sign(u), lax.log1p(lax.neg(lax.abs(u))))


def _logistic(key, shape, dtype):
    x = _uniform(key, dtypes.finfo(dtype).tiny, 1.0, shape=shape, dtype=dtype)
    return lax.sub(lax.log(x), lax.log1p(lax.neg(x)))


cauchy = _simple("cauchy", _cauchy)
cauchy.__doc__ = "Sample standard Cauchy values (jax.random.cauchy)."
exponential = _simple("exponential", _exponential)
exponential.__doc__ = "Sample standard exponential values (jax.random.exponential)."
laplace = _simple("laplace", _laplace)
laplace.__doc__ = "Sample standard Laplace values (jax.random.laplace)."
logistic = _simple("logistic", _logistic)
logistic.__doc__ = "Sample standard logistic values (jax.random.logistic)."


@honours_out_sharding
def gumbel(key, shape=(), dtype=None, mode=None, *, out_sharding=None):
    """Sample standard Gumbel values; "high"/"highest" modes resolve tails (jax.random.gumbel)."""
    key = single_key("gumbel", key)
    dtype = float_dtype("gumbel", dtype)
    shape = shape_arg(shape)
    if mode is None:
        mode = "low"
    if mode not in ("highest", "high", "low"):
        raise ValueError(f"Must provide valid mode for gumbel got: {mode}")
    return _gumbel(key, shape=shape, dtype=dtype, mode=mode)


def _gumbel_impl(key, *, shape, dtype, mode):
    info = dtypes.finfo(dtype)
    if dtype == np.float32 and mode == "highest":
        return _gumbel_highest(key, shape)
    if mode in ("high", "highest"):
        both = _uniform(key, 0.0, 1.0, shape=(2, *shape), dtype=dtype)
        high, low = both[0], both[1]
        # Below 0.5 the second draw refines the first by 2**-nmant.
        x = jnp.where(high >= 0.5, high, high + 2.0**-info.nmant * low + info.tiny)
        return -jnp.log(-jnp.log1p(-x))
    return -jnp.log(-jnp.log(_uniform(key, info.tiny, 1.0, shape=shape, dtype=dtype)))


def _gumbel_highest(key, shape):
    """Gumbel in float32 from 64 random bits, each half of (0, 1) resolved to the float."""
    bits = random_bits(key, 32, (2, *shape))
    neg = lax.bitwise_not(bits)
    lo_bits = neg[1]
    carry = jnp.stack(
        [lo_bits == np.uint32(0xFFFFFFFF), jnp.ones_like(lo_bits, dtype=bool)]
    ).astype(np.uint32)
    neg = neg + carry
    flip = bits[0] < np.uint32(1 << 31)
    x = _u64_to_float32(jnp.where(flip, bits, neg))
    return jnp.where(flip, -jnp.log(-jnp.log1p(-x)), -jnp.log(-jnp.log(x)))


def _u64_to_float32(bits):
    """Convert a pair of uint32 words (a 64-bit fraction of 1) to the nearest-below float32."""
    finfo = dtypes.finfo(np.float32)
    hi, lo = bits[0], bits[1]
    hiclz, loclz = lax.clz(hi), lax.clz(lo)
    mantissa = lax.bitwise_or(
        lax.shift_left(hi, hiclz),
        jnp.where(
            hiclz == 32,
            lax.shift_left(lo, loclz),
            lax.shift_right_logical(lo, np.uint32(finfo.bits) - hiclz),
        ),
    )
    mantissa = lax.shift_right_logical(mantissa, np.uint32(finfo.bits - finfo.nmant - 1))
    mantissa = lax.bitwise_and(mantissa, np.uint32((1 << finfo.nmant) - 1))
    exp = lax.shift_left(
        np.uint32(-finfo.minexp) - jnp.where(hiclz == 32, 32 + loclz, hiclz),
        np.uint32(finfo.nmant),
    )
    exp = lax.bitwise_and(exp, np.uint32((1 << (finfo.bits - 2)) - (1 << (finfo.nmant - 1))))
    return lax.bitcast_convert_type(lax.bitwise_or(exp, mantissa), np.float32)


_gumbel = jit(_gumbel_impl, static_argnames=("shape", "dtype", "mode"))


def _shaped(name, args, shape, dtype, names_cast=True):
    """Check the common (key, params..., shape, dtype) signature; return (shape, dtype)."""
    dtype = float_dtype(name, dtype)
    shape = result_shape(name, shape, *args)
    if names_cast:
        check_safe_to_cast(name, dtype, *args)
    return shape, dtype


@honours_out_sharding
def pareto(key, b, shape=None, dtype=None, *, out_sharding=None):
    """Sample Pareto values of shape parameter ``b`` (jax.random.pareto)."""
    key = single_key("pareto", key)
    shape, dtype = _shaped("pareto", (b,), shape, dtype)
    return _pareto(key, b, shape, dtype)


def _pareto_impl(key, b, shape, dtype):
    b = lax.convert_element_type(b, dtype)
    return lax.exp(_exponential(key, shape, dtype) / b)


_pareto = jit(_pareto_impl, static_argnums=(2, 3))


@honours_out_sharding
def rayleigh(key, scale, shape=None, dtype=None, *, out_sharding=None):
    """Sample Rayleigh values of scale ``scale`` (jax.random.rayleigh)."""
    key = single_key("rayleigh", key)
    shape, dtype = _shaped("rayleigh", (scale,), shape, dtype)
    return _rayleigh(key, scale, shape, dtype)


def _rayleigh_impl(key, scale, shape, dtype):
    u = _uniform(key, 0.0, 1.0, shape=shape, dtype=dtype)
    scale = jnp.broadcast_to(jnp.asarray(scale).astype(dtype), shape)
    return lax.mul(scale, lax.sqrt(lax.mul(lax.log(u), _const(dtype, -2))))


_rayleigh = jit(_rayleigh_impl, static_argnums=(2, 3))


@honours_out_sharding
def wald(key, mean, shape=None, dtype=None, *, out_sharding=None):
    """Sample Wald (inverse Gaussian) values of mean ``mean`` (jax.random.wald)."""
    key = single_key("wald", key)
    shape, dtype = _shaped("wald", (mean,), shape, dtype)
    return _wald(key, mean, shape, dtype)


def _wald_impl(key, mean, shape, dtype):
    k1, k2 = _two(key)
    mean = jnp.broadcast_to(jnp.asarray(mean).astype(dtype), shape)
    v = _normal_real(k1, shape, dtype)
    z = _uniform(k2, 0.0, 1.0, shape=shape, dtype=dtype)
    y = lax.integer_pow(v, 2)
    y_sq = lax.integer_pow(y, 2)
    mean_sq = lax.integer_pow(mean, 2)
    sqrt_term = lax.sqrt(4 * mean * y + mean_sq * y_sq)
    x = mean + mean_sq * y / 2 - mean / 2 * sqrt_term
    return lax.select(lax.le(z, mean / (mean + x)), x, mean_sq / x)


_wald = jit(_wald_impl, static_argnums=(2, 3))


def weibull_min(key, scale, concentration, shape=(), dtype=None):
    """Sample Weibull values of ``scale`` and ``concentration`` (jax.random.weibull_min)."""
    key = single_key("weibull_min", key)
    dtype = float_dtype("weibull_min", dtype)
    return _weibull_min(key, scale, concentration, shape_arg(shape), dtype)


def _weibull_min_impl(key, scale, concentration, shape, dtype):
    u = _uniform(key, 0, 1, shape=shape, dtype=dtype)
    return jnp.power(-jnp.log1p(-u), 1.0 / concentration) * scale


_weibull_min = jit(_weibull_min_impl, static_argnums=(3, 4))


@honours_out_sharding
def triangular(key, left, mode, right, shape=None, dtype=None, *, out_sharding=None):
    """Sample triangular values on [left, right] peaking at ``mode`` (jax.random.triangular)."""
    key = single_key("triangular", key)
    dtype = float_dtype("triangular", dtype)
    shape = result_shape("triangular", shape, left, mode, right)
    check_safe_to_cast("triangular", dtype, left, mode, right)
    return _triangular(key, left, mode, right, shape, dtype)


def _triangular_impl(key, left, mode, right, shape, dtype):
    left = jnp.broadcast_to(lax.convert_element_type(left, dtype), shape)
    right = jnp.broadcast_to(lax.convert_element_type(right, dtype), shape)
    mode = jnp.broadcast_to(lax.convert_element_type(mode, dtype), shape)
    fc = (mode - left) / (right - left)
    u = _uniform(key, 0.0, 1.0, shape=shape, dtype=dtype)
    out1 = left + lax.sqrt(u * (right - left) * (mode - left))
    out2 = right - lax.sqrt((1 - u) * (right - left) * (right - mode))
    return lax.select(u < fc, out1, out2)


_triangular = jit(_triangular_impl, static_argnums=(4, 5))


@honours_out_sharding
def lognormal(key, sigma=_ONE_F32, shape=None, dtype=None, *, out_sharding=None):
    """Sample log-normal values, ``exp(sigma * normal)`` (jax.random.lognormal)."""
    key = single_key("lognormal", key)
    dtype = float_dtype("lognormal", dtype, inexact=True)
    shape = result_shape("lognormal", shape, sigma)
    check_safe_to_cast("lognormal", dtype, sigma)
    return _lognormal(key, sigma, shape, dtype)


def _lognormal_impl(key, sigma, shape, dtype):
    sigma = lax.convert_element_type(sigma, dtype)
    return lax.exp(_normal_impl(key, shape=shape, dtype=dtype) * sigma)


_lognormal = jit(_lognormal_impl, static_argnums=(2, 3))


@honours_out_sharding
def maxwell(key, shape=(), dtype=None, *, out_sharding=None):
    """Sample Maxwell-Boltzmann values, the norm of a 3-d normal (jax.random.maxwell)."""
    key = single_key("maxwell", key)
    dtype = float_dtype("maxwell", dtype)
    return _maxwell(key, shape_arg(shape), dtype)


def _maxwell_impl(key, shape, dtype):
    x = _normal_real(key, (*shape, 3), dtype)
    # jnp.linalg.norm of a real vector: sqrt of the sum of squares.
    return jnp.sqrt(jnp.sum(x * x, axis=-1))


_maxwell = jit(_maxwell_impl, static_argnums=(1, 2))


def double_sided_maxwell(key, loc, scale, shape=(), dtype=None):
    """Sample double-sided Maxwell values (jax.random.double_sided_maxwell)."""
    key = single_key("double_sided_maxwell", key)
    dtype = float_dtype("double_sided_maxwell", dtype)
    return _double_sided_maxwell(key, loc, scale, shape_arg(shape), dtype)


def _double_sided_maxwell_impl(key, loc, scale, shape, dtype):
    params_shape = tuple(jnp.broadcast_shapes(np.shape(loc), np.shape(scale)))
    if not shape:
        shape = params_shape
    shape = shape + params_shape
    k_maxwell, k_sign = _two(key)
    magnitude = _maxwell_impl(k_maxwell, shape, dtype)
    from ._discrete import _rademacher_impl

    sign = _rademacher_impl(k_sign, shape, dtype)
    return sign * magnitude * scale + loc


_double_sided_maxwell = jit(_double_sided_maxwell_impl, static_argnums=(3, 4))


# --- samplers that need linear algebra --------------------------------------------------------


def _linalg(name: str, *functions: str):
    """Return modjax.numpy.linalg, or raise NotImplementedError naming what ``name`` needs.

    The samplers need both the numpy function and lax's primitive under it.
    """
    from modjax import lax as lax_module

    linalg = getattr(jnp, "linalg", None)
    lax_linalg = getattr(lax_module, "linalg", None)
    missing = [f for f in functions if not (hasattr(linalg, f) and hasattr(lax_linalg, f))]
    if missing:
        raise NotImplementedError(
            f"jax.random.{name} needs modjax.numpy.linalg.{', '.join(missing)} "
            "(modjax.lax.linalg), which modjax does not implement yet"
        )
    return linalg


_FACTOR_FUNCTION = {"svd": "svd", "eigh": "eigh", "cholesky": "cholesky"}


@honours_out_sharding
def multivariate_normal(
    key, mean, cov, shape=None, dtype=None, method="cholesky", *, out_sharding=None
):
    """Sample normal vectors of ``mean`` and covariance ``cov`` (jax.random.multivariate_normal)."""
    key = single_key("multivariate_normal", key)
    mean, cov = jnp.asarray(mean), jnp.asarray(cov)
    from modjax.numpy._util import promote_dtypes_inexact

    mean, cov = promote_dtypes_inexact(mean, cov)
    if method not in _FACTOR_FUNCTION:
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dtype = mean.dtype if dtype is None else float_dtype("multivariate_normal", dtype)
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(
            f"dtype argument to `multivariate_normal` must be a float dtype, got {dtype}"
        )
    if mean.ndim < 1:
        raise ValueError(
            f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}"
        )
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if cov.shape[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
            f"but got cov.shape == {cov.shape}."
        )
    if shape is None:
        shape = tuple(jnp.broadcast_shapes(mean.shape[:-1], cov.shape[:-2]))
    else:
        shape = shape_arg(shape)
        check_shape("normal", shape, mean.shape[:-1], cov.shape[:-2])
    linalg = _linalg("multivariate_normal", _FACTOR_FUNCTION[method])
    return _multivariate_normal(key, mean, cov, shape, dtype, method, linalg)


def _multivariate_normal_impl(key, mean, cov, shape, dtype, method, linalg):
    if method == "svd":
        u, s, _ = linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = linalg.cholesky(cov)
    samples = _normal_real(key, shape + mean.shape[-1:], dtype)
    product = jnp.einsum("...ij,...j->...i", factor, samples)
    # The mean broadcasts against the samples' batch; rank promotion set to 'raise' by the
    # user must not refuse that (JAX allows it here too).
    mean = jnp.reshape(mean, (1,) * (product.ndim - mean.ndim) + mean.shape)
    return mean + product


_multivariate_normal = jit(_multivariate_normal_impl, static_argnums=(3, 4, 5, 6))


@honours_out_sharding
def orthogonal(key, n, shape=(), dtype=None, m=None, *, out_sharding=None):
    """Sample Haar-random ``n x m`` orthogonal matrices (jax.random.orthogonal)."""
    from modjax.tracecore.core import concrete_or_error

    m_ = n if m is None else m
    shape = shape_arg(shape)
    key = single_key("orthogonal", key)
    dtype = float_dtype("orthogonal", dtype, inexact=True)
    n = int(concrete_or_error(n, "The error occurred in jax.random.orthogonal()"))
    m_ = int(concrete_or_error(m_, "The error occurred in jax.random.orthogonal()"))
    linalg = _linalg("orthogonal", "qr")
    return _orthogonal(key, n, m_, shape, dtype, linalg)


def _orthogonal_impl(key, n, m, shape, dtype, linalg):
    z = _normal_impl(key, shape=(*shape, max(n, m), min(n, m)), dtype=dtype)
    q, r = linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    return jnp.swapaxes(x, -1, -2) if n < m else x


_orthogonal = jit(_orthogonal_impl, static_argnums=(1, 2, 3, 4, 5))
