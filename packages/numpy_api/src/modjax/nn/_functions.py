"""Activation functions, softmax and friends of modjax.nn (the counterparts of jax.nn's).

They are written with modjax.numpy and lax, so they trace, jit, vmap and
differentiate through the rules of the primitives they use. ``relu`` and
``relu6`` are ``custom_jvp`` functions as in JAX, whose derivative at the kinks
is 0; ``softmax``/``log_softmax`` subtract the (gradient-stopped) maximum
before exponentiating, so large inputs neither overflow nor lose precision.
"""

from __future__ import annotations

import math
import operator
import warnings
from functools import partial
from typing import Any

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import custom_jvp, stop_gradient
from modjax.numpy._util import aval, canonical_dtype, canonicalize_axis, promote_args_inexact
from modjax.runtime import jit
from modjax.scipy.special import logsumexp
from modjax.tracecore.core import concrete_or_error
from modjax.tracecore.options import softmax_custom_jvp

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]


def _inexact(name: str, x: Any):
    """``x`` as an array of an inexact dtype (integers and bools become the default float)."""
    (x,) = promote_args_inexact(name, x)
    return jnp.asarray(x)


# --- rectifiers -----------------------------------------------------------------------------


@custom_jvp
@jit
def relu(x):
    """Compute the rectified linear unit ``max(x, 0)`` elementwise (jax.nn.relu).

    Its derivative at 0 is 0, as in JAX (a ``custom_jvp``).
    """
    return jnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lax.select_n(jnp.greater(x, 0), lax.full_like(g, 0), g))


@custom_jvp
@jit
def relu6(x):
    """Compute ``min(max(x, 0), 6)`` elementwise (jax.nn.relu6).

    Its derivative is 0 at both kinks (a ``custom_jvp``, as in JAX).
    """
    return jnp.minimum(jnp.maximum(x, 0), 6.0)


relu6.defjvps(
    lambda g, ans, x: lax.select_n(
        jnp.logical_and(jnp.greater(x, 0), jnp.less(x, 6)), lax.full_like(g, 0), g
    )
)


@jit
def leaky_relu(x, negative_slope=0.01):
    """Compute ``x`` for ``x >= 0`` and ``negative_slope * x`` below (jax.nn.leaky_relu)."""
    x = jnp.asarray(x)
    return jnp.where(jnp.greater_equal(x, 0), x, jnp.multiply(negative_slope, x))


@jit
def elu(x, alpha=1.0):
    """Compute the exponential linear unit elementwise (jax.nn.elu)."""
    x = jnp.asarray(x)
    positive = jnp.greater(x, 0)
    # expm1 of large x would overflow in the other branch; the float zero makes an integer
    # x's result a weak float, as in JAX
    safe = jnp.where(positive, 0.0, x)
    return jnp.where(positive, x, jnp.multiply(alpha, jnp.expm1(safe)))


@jit
def celu(x, alpha=1.0):
    """Compute the continuously differentiable ELU elementwise (jax.nn.celu)."""
    x = jnp.asarray(x)
    tail = jnp.multiply(alpha, jnp.expm1(jnp.divide(jnp.minimum(x, 0), alpha)))
    return jnp.add(jnp.maximum(x, 0), tail)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """Compute the scaled exponential linear unit elementwise (jax.nn.selu)."""
    return jnp.multiply(_SELU_SCALE, elu(x, _SELU_ALPHA))


def gelu(x, approximate: bool = True):
    """Compute the Gaussian error linear unit elementwise (jax.nn.gelu).

    ``approximate=True`` uses the tanh approximation, ``False`` the exact
    ``x * Phi(x)`` with ``Phi`` the standard normal CDF.
    """
    x = _inexact("gelu", x)

    # JAX's result is never weak-typed (a Python-scalar input gives a strong float), so
    # the constants are scalars of x's dtype rather than weak Python floats
    def const(c):
        return np.asarray(c, dtype=x.dtype)

    if approximate:
        inner = jnp.multiply(const(math.sqrt(2 / math.pi)), x + const(0.044715) * x**3)
        return jnp.multiply(x, jnp.multiply(const(0.5), jnp.add(const(1.0), jnp.tanh(inner))))
    # JAX's order: (0.5 x) erfc(-x sqrt(1/2)); halving erfc first would flush its tiny values.
    half_x = jnp.multiply(const(0.5), x)
    return jnp.multiply(half_x, lax.erfc(jnp.multiply(jnp.negative(x), const(math.sqrt(0.5)))))


@jit
def hard_tanh(x):
    """Clip ``x`` to [-1, 1] elementwise (jax.nn.hard_tanh)."""
    x = jnp.asarray(x)
    return jnp.where(jnp.greater(x, 1), 1, jnp.where(jnp.less(x, -1), -1, x))


# --- sigmoids and their relatives ---------------------------------------------------------


@partial(jit, inline=True)
def sigmoid(x):
    """Compute the logistic sigmoid ``1 / (1 + exp(-x))`` elementwise (jax.nn.sigmoid)."""
    return lax.logistic(jnp.asarray(x))


@jit
def silu(x):
    """Compute the SiLU (swish) activation ``x * sigmoid(x)`` elementwise (jax.nn.silu)."""
    x = jnp.asarray(x)
    return jnp.multiply(x, sigmoid(x))


swish = silu


@jit
def softplus(x):
    """Compute ``log(1 + exp(x))`` elementwise without overflow (jax.nn.softplus)."""
    return jnp.logaddexp(x, 0)


@jit
def log_sigmoid(x):
    """Compute ``log(sigmoid(x))`` elementwise, stably (jax.nn.log_sigmoid)."""
    return jnp.negative(softplus(jnp.negative(_inexact("log_sigmoid", x))))


@jit
def soft_sign(x):
    """Compute ``x / (|x| + 1)`` elementwise (jax.nn.soft_sign)."""
    x = _inexact("soft_sign", x)
    return jnp.divide(x, jnp.add(jnp.abs(x), 1))


@jit
def hard_sigmoid(x):
    """Compute ``relu6(x + 3) / 6`` elementwise (jax.nn.hard_sigmoid)."""
    return jnp.divide(relu6(jnp.add(x, 3.0)), 6.0)


@jit
def hard_silu(x):
    """Compute ``x * hard_sigmoid(x)`` elementwise (jax.nn.hard_silu)."""
    x = jnp.asarray(x)
    return jnp.multiply(x, hard_sigmoid(x))


hard_swish = hard_silu


@jit
def sparse_plus(x):
    """Compute the sparse plus: 0 below -1, ``x`` above 1, ``(x + 1)**2 / 4`` between.

    (jax.nn.sparse_plus)
    """
    x = jnp.asarray(x)
    middle = jnp.divide(jnp.square(jnp.add(x, 1.0)), 4.0)
    return jnp.where(jnp.less_equal(x, -1.0), 0.0, jnp.where(jnp.greater_equal(x, 1.0), x, middle))


@jit
def sparse_sigmoid(x):
    """Compute the sparse sigmoid ``clip((x + 1) / 2, 0, 1)`` (jax.nn.sparse_sigmoid)."""
    return jnp.multiply(0.5, jnp.clip(jnp.add(x, 1.0), 0.0, 2.0))


@jit
def squareplus(x, b=4):
    """Compute ``(x + sqrt(x**2 + b)) / 2`` elementwise (jax.nn.squareplus)."""
    x = _inexact("squareplus", x)
    return jnp.divide(jnp.add(x, jnp.sqrt(jnp.add(jnp.square(x), b))), 2)


@jit
def mish(x):
    """Compute ``x * tanh(softplus(x))`` elementwise (jax.nn.mish)."""
    x = _inexact("mish", x)
    return jnp.multiply(x, jnp.tanh(softplus(x)))


@custom_jvp
@jit
def log1mexp(x):
    """Compute ``log(1 - exp(-x))`` elementwise, accurately for small and large ``x``.

    (jax.nn.log1mexp)
    """
    x = _inexact("log1mexp", x)
    small = jnp.less(x, math.log(2))
    safe_small = jnp.where(small, x, 1.0)
    safe_large = jnp.where(small, 1.0, x)
    near = jnp.log(jnp.negative(jnp.expm1(jnp.negative(safe_small))))
    far = jnp.log1p(jnp.negative(jnp.exp(jnp.negative(safe_large))))
    return jnp.where(small, near, far)


log1mexp.defjvps(lambda g, ans, x: jnp.divide(g, jnp.expm1(x)))


@jit
def identity(x):
    """Return ``x`` (jax.nn.identity)."""
    return jnp.asarray(x)


def tanh(x, /):
    """Compute the hyperbolic tangent elementwise (jax.nn.tanh, the same as jnp.tanh)."""
    return jnp.tanh(x)


@partial(jit, static_argnames=("axis",))
def glu(x, axis: int = -1):
    """Compute the gated linear unit ``a * sigmoid(b)`` of the halves of ``x`` (jax.nn.glu)."""
    x = jnp.asarray(x)
    size = x.shape[axis]
    if size % 2:
        raise ValueError(f"glu: axis size must be divisible by 2, got shape {x.shape}")
    a, b = jnp.split(x, 2, axis=axis)
    return jnp.multiply(a, sigmoid(b))


# --- softmax and normalization ---------------------------------------------------------------


def _masked_max(x, axis, where):
    if where is None:
        return jnp.max(x, axis=axis, keepdims=True, initial=-math.inf)
    return jnp.max(x, axis=axis, keepdims=True, initial=-math.inf, where=where)


def softmax(x, axis=-1, where=None):
    """Compute ``exp(x) / sum(exp(x))`` along ``axis`` (jax.nn.softmax).

    The maximum is subtracted first (with its gradient stopped; the result
    does not depend on it). Elements masked out by ``where`` get 0. With
    ``jax_softmax_custom_jvp`` on, it is differentiated by its own rule,
    ``y * (dx - sum(y * dx))``, instead of through its operations (as in JAX).
    """
    x = _inexact("softmax", x)
    if softmax_custom_jvp.value:
        return _softmax_custom(axis, x, where)
    return _softmax_plain(x, axis, where)


def _masked_out(x, where):
    """``x`` with the elements ``where`` leaves out set to ``-inf``.

    Masking the input (not only the exponentials) keeps the gradient of a row that
    is masked out entirely at 0: its shifted values are NaN, whose cotangents the
    mask then sends to the constant instead of to ``x``.
    """
    return x if where is None else jnp.where(where, x, -math.inf)


def _softmax_plain(x, axis, where):
    x_max = stop_gradient(_masked_max(x, axis, where))
    unnormalized = jnp.exp(jnp.subtract(_masked_out(x, where), x_max))
    total = jnp.sum(unnormalized, axis=axis, keepdims=True, where=where)
    result = jnp.divide(unnormalized, total)
    if where is not None:
        result = jnp.where(where, result, 0)
    return result


@partial(custom_jvp, nondiff_argnums=(0,))
def _softmax_custom(axis, x, where):
    return _softmax_plain(x, axis, where)


@_softmax_custom.defjvp
def _softmax_custom_jvp(axis, primals, tangents):
    (x, where), (x_dot, _) = primals, tangents
    y = _softmax_custom(axis, x, where)
    total = jnp.sum(jnp.multiply(y, x_dot), axis=axis, keepdims=True, where=where)
    return y, jnp.multiply(y, jnp.subtract(x_dot, total))


@partial(jit, static_argnames=("axis",))
def log_softmax(x, axis=-1, where=None):
    """Compute ``x - logsumexp(x)`` along ``axis``, stably (jax.nn.log_softmax).

    Elements masked out by ``where`` get ``-inf``.
    """
    x = _inexact("log_softmax", x)
    x_max = stop_gradient(_masked_max(x, axis, where))
    shifted = jnp.subtract(_masked_out(x, where), x_max)
    total = jnp.sum(jnp.exp(shifted), axis=axis, keepdims=True, where=where)
    result = jnp.subtract(shifted, jnp.log(total))
    if where is not None:
        result = jnp.where(where, result, -math.inf)
    return result


@partial(jit, static_argnames=("axis", "keepdims"))
def logmeanexp(x, axis=None, where=None, keepdims: bool = False):
    """Compute ``log(mean(exp(x)))`` along ``axis``, stably (jax.nn.logmeanexp)."""
    x = _inexact("logmeanexp", x)
    lse = logsumexp(x, axis=axis, keepdims=keepdims, where=where)
    ones = jnp.ones_like(x) if where is None else jnp.where(where, 1.0, 0.0).astype(x.dtype)
    count = jnp.sum(jnp.broadcast_to(ones, x.shape), axis=axis, keepdims=keepdims)
    return jnp.subtract(lse, jnp.log(count.astype(lse.dtype)))


@partial(jit, static_argnames=("axis", "algorithm"))
def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm: str = "fast"
):
    """Normalize ``x`` to zero mean and unit variance along ``axis`` (jax.nn.standardize).

    ``mean`` and ``variance`` default to the statistics of ``x`` (masked by
    ``where``); ``algorithm="fast"`` computes the variance as ``E[x^2] - E[x]^2``
    clipped at 0, ``"stable"`` as ``E[(x - E[x])^2]``.
    """
    x = _inexact("standardize", x)
    kw = {"axis": axis, "keepdims": True}
    if where is not None:
        kw["where"] = where
    if mean is None:
        mean = jnp.mean(x, **kw)
    if variance is None:
        if algorithm == "stable":
            variance = jnp.mean(jnp.square(jnp.subtract(x, mean)), **kw)
        elif algorithm == "fast":
            # E[x^2] - E[x]^2 can come out slightly negative: clipped at 0 before the rsqrt.
            variance = jnp.clip(jnp.subtract(jnp.mean(jnp.square(x), **kw), jnp.square(mean)), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return jnp.multiply(jnp.subtract(x, mean), lax.rsqrt(jnp.add(variance, epsilon)))


def one_hot(x, num_classes: int, *, dtype=None, axis: int | str = -1):
    """Encode ``x`` as one-hot vectors of ``num_classes`` along a new ``axis`` (jax.nn.one_hot).

    Values outside ``[0, num_classes)`` give all-zero vectors. ``dtype``
    defaults to the default float type. ``axis`` may name a mapped axis (of
    ``vmap`` or ``shard_map``) of size ``num_classes``: each element is then
    compared with its own index along it. Non-integer ``x`` warns, as in JAX.
    """
    num_classes = operator.index(
        concrete_or_error(num_classes, "The error arose in jax.nn.one_hot argument `num_classes`.")
    )
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, np.integer):
        warnings.warn(
            f"jax.nn.one_hot input should be integer-typed; got dtype={x.dtype}",
            DeprecationWarning,
            stacklevel=2,
        )
    dtype = canonical_dtype(float if dtype is None else dtype, "one_hot")
    if not isinstance(axis, (int, np.integer)):
        size = lax.axis_size(axis)
        if num_classes != size:
            raise ValueError(
                f"Expected num_classes to match the size of axis {axis}, "
                f"but {num_classes} != {size}"
            )
        return jnp.asarray(x == lax.axis_index(axis), dtype=dtype)
    axis = canonicalize_axis(axis, x.ndim + 1)
    classes_shape = [1] * x.ndim
    classes_shape.insert(axis, num_classes)
    # JAX compares with an iota of x's dtype, so bool input raises iota's TypeError.
    classes = lax.broadcasted_iota(aval(x).dtype, tuple(classes_shape), axis)
    return jnp.equal(lax.expand_dims(x, (axis,)), classes).astype(dtype)
