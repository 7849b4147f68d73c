"""Parameter initializers (the counterpart of ``jax.nn.initializers``).

An initializer is a function ``init(key, shape, dtype=None, out_sharding=None)``;
the factories here (``normal(stddev)``, ``glorot_uniform()``, ...) return
one. They draw with modjax.random, so the same key gives JAX's numbers.
``variance_scaling`` computes fans as JAX does: the receptive field is the
product of the dimensions that are neither input, output nor batch axes.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

import modjax.numpy as jnp
from modjax import random
from modjax.sharding import reshard
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import canonicalize_shape

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]


@runtime_checkable
class Initializer(Protocol):
    """The type of an initializer: ``(key, shape, dtype=None, out_sharding=None) -> Array``."""

    def __call__(self, key: Any, shape: Any, dtype: Any = None, out_sharding: Any = None) -> Any:
        """Return an array of ``shape`` and ``dtype`` drawn with ``key``."""
        raise NotImplementedError


def _dtype(dtype: Any) -> Any:
    return dtypes.default_float_dtype() if dtype is None else dtype


def zeros(key, shape, dtype=None, out_sharding=None):
    """Return an array of zeros; ``key`` is unused (jax.nn.initializers.zeros)."""
    return jnp.zeros(shape, _dtype(dtype), out_sharding=out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    """Return an array of ones; ``key`` is unused (jax.nn.initializers.ones)."""
    return jnp.ones(shape, _dtype(dtype), out_sharding=out_sharding)


def constant(value, dtype=None) -> Initializer:
    """Make an initializer that fills with ``value`` (jax.nn.initializers.constant)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        return jnp.full(shape, value, dtype=_dtype(dtype), out_sharding=out_sharding)

    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """Make an initializer drawing uniformly from [0, scale) (jax.nn.initializers.uniform)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.uniform(key, shape, dtype, out_sharding=out_sharding) * jnp.array(
            scale, dtype
        )

    return init


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """Make an initializer drawing normals of std ``stddev`` (jax.nn.initializers.normal)."""

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        return random.normal(key, shape, dtype, out_sharding=out_sharding) * jnp.array(
            stddev, dtype
        )

    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """Make an initializer of normals truncated to [lower, upper] times ``stddev``.

    The counterpart of jax.nn.initializers.truncated_normal: the bounds are in
    units of the untruncated standard deviation.
    """

    def init(key, shape, dtype=dtype, out_sharding=None):
        dtype = _dtype(dtype)
        sample = random.truncated_normal(key, lower, upper, shape, dtype, out_sharding=out_sharding)
        return sample * jnp.array(stddev, dtype)

    return init


def _prod_over(shape: Sequence[int], axes: int | Sequence[int]) -> int:
    if isinstance(axes, int):
        return shape[axes]
    return math.prod(shape[i] for i in axes)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """Return (fan_in, fan_out) of a weights ``shape`` (JAX's ``_compute_fans``)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional"
            " weights tensor with default in_axis. Must be at least 2D or specify"
            " in_axis explicitly."
        )
    in_size = _prod_over(shape, in_axis)
    out_size = _prod_over(shape, out_axis)
    batch_size = _prod_over(shape, batch_axis)
    receptive_field_size = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive_field_size, out_size * receptive_field_size


def _complex_uniform(key, shape, dtype):
    """Sample uniformly from the complex unit disk scaled to unit variance (JAX's algorithm)."""
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    dtype = np.result_type(real_dtype, np.complex64)
    r = jnp.sqrt(2 * random.uniform(key_r, shape, real_dtype)).astype(dtype)
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    """Sample a complex normal whose modulus is truncated to ``upper`` (JAX's algorithm)."""
    key_r, key_theta = random.split(key)
    real_dtype = np.array(0, dtype).real.dtype
    dtype = np.result_type(real_dtype, np.complex64)
    t = (1 - jnp.exp(jnp.array(-(upper**2), dtype))) * random.uniform(
        key_r, shape, real_dtype
    ).astype(dtype)
    r = jnp.sqrt(-jnp.log(1 - t))
    theta = 2 * np.pi * random.uniform(key_theta, shape, real_dtype).astype(dtype)
    return r * jnp.exp(1j * theta)


# Standard deviations of the standard normal truncated to [-2, 2], real and complex.
_TRUNCATED_STD = 0.87962566103423978
_COMPLEX_TRUNCATED_STD = 0.95311164380491208


def variance_scaling(
    scale, mode, distribution, in_axis=-2, out_axis=-1, batch_axis=(), dtype=None
) -> Initializer:
    """Make an initializer of variance ``scale / fan`` (jax.nn.initializers.variance_scaling).

    ``mode`` picks the fan ("fan_in", "fan_out", "fan_avg", "fan_geo_avg");
    ``distribution`` is "truncated_normal", "normal" or "uniform".
    """

    def draw(key, shape, dtype):
        shape = canonicalize_shape(shape)
        dtype = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = jnp.array(scale / denominator, dtype=dtype)
        real = dtypes.issubdtype(dtype, np.floating)
        if distribution == "truncated_normal":
            if real:
                stddev = jnp.sqrt(variance) / jnp.array(_TRUNCATED_STD, dtype)
                return random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = jnp.sqrt(variance) / jnp.array(_COMPLEX_TRUNCATED_STD, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return random.normal(key, shape, dtype) * jnp.sqrt(variance)
        if distribution == "uniform":
            if real:
                return random.uniform(key, shape, dtype, -1) * jnp.sqrt(3 * variance)
            return _complex_uniform(key, shape, dtype) * jnp.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    def init(key, shape, dtype=dtype, out_sharding=None):
        out = draw(key, shape, dtype)
        return out if out_sharding is None else reshard(out, out_sharding)

    return init


def _scaling(scale, mode, distribution, doc):
    def factory(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(
            scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
            batch_axis=batch_axis, dtype=dtype,
        )  # fmt: skip

    factory.__doc__ = doc
    return factory


glorot_uniform = _scaling(
    1.0,
    "fan_avg",
    "uniform",
    "Make a Glorot uniform initializer (jax.nn.initializers.glorot_uniform).",
)
glorot_normal = _scaling(
    1.0, "fan_avg", "truncated_normal",
    "Make a Glorot truncated-normal initializer (jax.nn.initializers.glorot_normal).",
)  # fmt: skip
lecun_uniform = _scaling(
    1.0,
    "fan_in",
    "uniform",
    "Make a LeCun uniform initializer (jax.nn.initializers.lecun_uniform).",
)
lecun_normal = _scaling(
    1.0, "fan_in", "truncated_normal",
    "Make a LeCun truncated-normal initializer (jax.nn.initializers.lecun_normal).",
)  # fmt: skip
he_uniform = _scaling(
    2.0, "fan_in", "uniform", "Make a He uniform initializer (jax.nn.initializers.he_uniform)."
)
he_normal = _scaling(
    2.0, "fan_in", "truncated_normal",
    "Make a He truncated-normal initializer (jax.nn.initializers.he_normal).",
)  # fmt: skip
xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """Make an initializer of (scaled) orthogonal matrices (jax.nn.initializers.orthogonal).

    The dimensions other than ``column_axis`` are flattened into rows.
    """

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("out_sharding of nn.initializers.orthogonal")
        dtype = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return jnp.zeros(shape, dtype=dtype)
        n_rows, n_cols = math.prod(shape) // shape[column_axis], shape[column_axis]
        q = random.orthogonal(key, n_rows, (), dtype, n_cols)
        q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (shape[column_axis],))
        q = jnp.moveaxis(q, -1, column_axis)
        return jnp.array(scale, dtype) * q

    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """Make a delta-orthogonal initializer for 3-5 d convolution kernels.

    The counterpart of jax.nn.initializers.delta_orthogonal: an orthogonal
    matrix at the kernel's spatial center, zeros elsewhere.
    """

    def init(key, shape, dtype=dtype, out_sharding=None):
        if out_sharding is not None:
            raise NotImplementedError("out_sharding of nn.initializers.delta_orthogonal")
        dtype = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        ortho = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        center = tuple((k - 1) // 2 for k in shape[:-2])
        return jnp.zeros(shape, dtype=dtype).at[center].set(ortho)

    return init
