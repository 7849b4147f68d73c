"""Neural-network layers as (init_fun, apply_fun) pairs (``jax.example_libraries.stax``).

``init_fun(rng, input_shape) -> (output_shape, params)`` and
``apply_fun(params, inputs, **kwargs) -> outputs``; combinators (``serial``,
``parallel``, ``FanOut``, ...) compose pairs into pairs.
"""

from __future__ import annotations

import functools
import operator

from modjax import lax, random
from modjax import numpy as jnp
from modjax.nn import (
    elu,
    gelu,
    leaky_relu,
    log_softmax,
    relu,
    selu,
    sigmoid,
    softmax,
    softplus,
    standardize,
)
from modjax.nn.initializers import glorot_normal, normal, ones, zeros

__all__ = [
    "AvgPool",
    "BatchNorm",
    "Conv",
    "Conv1DTranspose",
    "ConvTranspose",
    "Dense",
    "Dropout",
    "Elu",
    "Exp",
    "FanInConcat",
    "FanInSum",
    "FanOut",
    "Flatten",
    "Gelu",
    "GeneralConv",
    "GeneralConvTranspose",
    "Identity",
    "LeakyRelu",
    "LogSoftmax",
    "MaxPool",
    "Relu",
    "Selu",
    "Sigmoid",
    "Softmax",
    "Softplus",
    "SumPool",
    "Tanh",
    "elementwise",
    "elu",
    "gelu",
    "glorot",
    "glorot_normal",
    "leaky_relu",
    "log_softmax",
    "logsoftmax",
    "normal",
    "ones",
    "parallel",
    "randn",
    "relu",
    "selu",
    "serial",
    "shape_dependent",
    "sigmoid",
    "softmax",
    "softplus",
    "standardize",
    "zeros",
]

# Older spellings stax keeps.
glorot = glorot_normal
randn = normal
logsoftmax = log_softmax

# Default initializers (made once: they are stateless functions).
_GLOROT = glorot_normal()
_NORMAL = normal()
_SMALL_NORMAL = normal(1e-6)


def Dense(out_dim, W_init=_GLOROT, b_init=_NORMAL):
    """A fully connected layer ``x @ W + b`` (stax.Dense)."""

    def init_fun(rng, input_shape):
        k1, k2 = random.split(rng)
        params = W_init(k1, (input_shape[-1], out_dim)), b_init(k2, (out_dim,))
        return input_shape[:-1] + (out_dim,), params

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(rhs_spec, lhs_spec, filter_shape, input_shape, out_chan):
    sizes = iter(filter_shape)
    channels = input_shape[lhs_spec.index("C")]
    return [out_chan if c == "O" else channels if c == "I" else next(sizes) for c in rhs_spec]


def _conv_layer(
    shape_tuple, apply, dimension_numbers, out_chan, filter_shape, strides, padding, W_init, b_init
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    strides = strides or (1,) * len(filter_shape)
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(rhs_spec, lhs_spec, filter_shape, input_shape, out_chan)
        output_shape = shape_tuple(input_shape, kernel_shape, strides, padding, dimension_numbers)
        bias_shape = [out_chan if c == "C" else 1 for c in out_spec]
        k1, k2 = random.split(rng)
        return output_shape, (W_init(k1, kernel_shape), b_init(k2, bias_shape))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return apply(inputs, W, strides, padding, dimension_numbers) + b

    return init_fun, apply_fun


def GeneralConv(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_SMALL_NORMAL,
):
    """A convolution with the given layouts (stax.GeneralConv)."""

    def apply(x, w, strides, padding, dn):
        one = (1,) * len(filter_shape)
        return lax.conv_general_dilated(x, w, strides, padding, one, one, dimension_numbers=dn)

    return _conv_layer(
        lax.conv_general_shape_tuple,
        apply,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


def GeneralConvTranspose(
    dimension_numbers,
    out_chan,
    filter_shape,
    strides=None,
    padding="VALID",
    W_init=None,
    b_init=_SMALL_NORMAL,
):
    """A transposed convolution with these layouts (stax.GeneralConvTranspose)."""

    def apply(x, w, strides, padding, dn):
        return lax.conv_transpose(x, w, strides, padding, dimension_numbers=dn)

    return _conv_layer(
        lax.conv_transpose_shape_tuple,
        apply,
        dimension_numbers,
        out_chan,
        filter_shape,
        strides,
        padding,
        W_init,
        b_init,
    )


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))
Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


def BatchNorm(
    axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True, beta_init=zeros, gamma_init=ones
):
    """Normalize over ``axis`` with learned shift and scale (stax.BatchNorm)."""
    axis = (axis,) if jnp.isscalar(axis) else tuple(axis)

    def init_fun(rng, input_shape):
        shape = tuple(d for i, d in enumerate(input_shape) if i not in axis)
        k1, k2 = random.split(rng)
        beta = beta_init(k1, shape) if center else ()
        gamma = gamma_init(k2, shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        expand = tuple(None if i in axis else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if scale:
            z = gamma[expand] * z
        if center:
            z = z + beta[expand]
        return z

    return init_fun, apply_fun


def elementwise(fun, **fun_kwargs):
    """A parameterless layer applying ``fun`` to its input (stax.elementwise)."""
    return (lambda rng, input_shape: (input_shape, ())), (
        lambda params, inputs, **kwargs: fun(inputs, **fun_kwargs)
    )


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


def _non_spatial_axes(spec, ndim):
    return (0, ndim - 1) if spec is None else (spec.index("N"), spec.index("C"))


def _average(window_shape, strides, padding):
    def rescale(outputs, inputs, spec):
        axes = _non_spatial_axes(spec, inputs.ndim)
        spatial = tuple(d for i, d in enumerate(inputs.shape) if i not in axes)
        one = jnp.ones(spatial, dtype=inputs.dtype)
        counts = lax.reduce_window(one, 0.0, lax.add, window_shape, strides, padding)
        for i in sorted(axes):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None
        full_window, full_strides = tuple(window_shape), tuple(strides)
        for i in sorted(_non_spatial_axes(spec, len(window_shape) + 2)):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            ones_ = (1,) * len(full_window)
            shape = lax.reduce_window_shape_tuple(
                input_shape, full_window, full_strides, pads, ones_, ones_
            )
            return shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides, padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.0)
AvgPool = _pooling_layer(lax.add, 0.0, _average)


def _flatten():
    def init_fun(rng, input_shape):
        return (input_shape[0], functools.reduce(operator.mul, input_shape[1:], 1)), ()

    return init_fun, lambda params, inputs, **kwargs: jnp.reshape(inputs, (inputs.shape[0], -1))


#: Flatten all but the leading (batch) dimension (stax.Flatten).
Flatten = _flatten()
#: The identity layer (stax.Identity).
Identity = (lambda rng, input_shape: (input_shape, ())), (lambda params, inputs, **kw: inputs)


def FanOut(num):
    """Copy the input ``num`` times, for ``parallel`` (stax.FanOut)."""
    return (lambda rng, input_shape: ([input_shape] * num, ())), (
        lambda params, inputs, **kwargs: [inputs] * num
    )


#: Sum a list of inputs (stax.FanInSum).
FanInSum = (
    (lambda rng, input_shape: (input_shape[0], ())),
    (lambda params, inputs, **kwargs: sum(inputs)),
)


def FanInConcat(axis=-1):
    """Concatenate a list of inputs along ``axis`` (stax.FanInConcat)."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        size = sum(shape[ax] for shape in input_shape)
        return input_shape[0][:ax] + (size,) + input_shape[0][ax + 1 :], ()

    return init_fun, lambda params, inputs, **kwargs: jnp.concatenate(inputs, axis)


def Dropout(rate, mode="train"):
    """Keep each input with probability ``rate``, scaled by ``1/rate`` (stax.Dropout).

    Only in ``mode="train"``; otherwise the identity.
    """

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng")
        if rng is None:
            raise ValueError(
                "Dropout layer requires apply_fun to be called with a PRNG key argument. That "
                "is, instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, "
                "inputs, rng)` where `rng` is a PRNG key (e.g. from `jax.random.key`)."
            )
        if mode != "train":
            return inputs
        keep = random.bernoulli(rng, rate, inputs.shape)
        return jnp.where(keep, inputs / rate, 0)

    return (lambda rng, input_shape: (input_shape, ())), apply_fun


def _split_or_none(rng, n):
    return random.split(rng, n) if rng is not None else (None,) * n


def serial(*layers):
    """Compose layers one after another (stax.serial)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, param = init(layer_rng, input_shape)
            params.append(param)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rngs = _split_or_none(kwargs.pop("rng", None), len(layers))
        for fun, param, rng in zip(apply_funs, params, rngs, strict=True):
            inputs = fun(param, inputs, rng=rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layers to the matching entries of a list of inputs (stax.parallel)."""
    init_funs, apply_funs = zip(*layers, strict=True) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, len(layers))
        results = [init(r, s) for init, r, s in zip(init_funs, rngs, input_shape, strict=True)]
        return tuple(s for s, _ in results), tuple(p for _, p in results)

    def apply_fun(params, inputs, **kwargs):
        rngs = _split_or_none(kwargs.pop("rng", None), len(layers))
        return [
            f(p, x, rng=r, **kwargs)
            for f, p, x, r in zip(apply_funs, params, inputs, rngs, strict=True)
        ]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built from the input shape by ``make_layer(shape)`` (stax.shape_dependent)."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
