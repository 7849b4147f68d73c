"""Image resampling (``jax.image``): ``resize``, ``scale_and_translate``, ``ResizeMethod``.

Each spatial dimension is resampled by a matrix of weights (input pixel × output
pixel) built from a kernel evaluated at the distance between the input pixel and
the output pixel's sample position; the image is then contracted with one matrix
per dimension. Downsampling with ``antialias`` widens the kernel by the inverse
scale, so each output pixel averages all the input pixels it covers.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np

from modjax import lax
from modjax import numpy as jnp
from modjax.runtime import jit
from modjax.tracecore.core import concrete_or_error

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method (jax.image.ResizeMethod).

    NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys, a = -0.5), CUBIC_PYTORCH
    (a = -0.75 with repeated edges, as PyTorch's bicubic), AREA (the average of the
    input pixels an output pixel covers).
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> ResizeMethod:
        """Return the method a name stands for (``"bilinear"`` is LINEAR, ...)."""
        method = _METHOD_NAMES.get(s)
        if method is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return method


_METHOD_NAMES = {
    "nearest": ResizeMethod.NEAREST,
    **dict.fromkeys(("linear", "bilinear", "trilinear", "triangle"), ResizeMethod.LINEAR),
    "lanczos3": ResizeMethod.LANCZOS3,
    "lanczos5": ResizeMethod.LANCZOS5,
    **dict.fromkeys(("cubic", "bicubic", "tricubic"), ResizeMethod.CUBIC),
    **dict.fromkeys(("cubic-pytorch", "bicubic-pytorch"), ResizeMethod.CUBIC_PYTORCH),
    "area": ResizeMethod.AREA,
}


def _triangle(x):
    return jnp.maximum(0.0, 1.0 - x)


def _keys_cubic(x, a):
    near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
    return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))


def _lanczos(x, radius):
    # sinc(x) * sinc(x / radius), with its limit 1 near 0.
    y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
    safe = jnp.where(x > 1e-3, np.pi**2 * x**2, 1.0)
    return jnp.where(x > radius, 0.0, jnp.where(x > 1e-3, y / safe, 1.0))


# method -> (kernel radius, kernel of the distance |x| >= 0); AREA has no kernel.
_KERNELS: dict[ResizeMethod, tuple[int, Callable | None]] = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, partial(_lanczos, radius=3.0)),
    ResizeMethod.LANCZOS5: (5, partial(_lanczos, radius=5.0)),
    ResizeMethod.CUBIC: (2, partial(_keys_cubic, a=-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, partial(_keys_cubic, a=-0.75)),
    ResizeMethod.AREA: (1, None),
}

_TINY = 1000.0 * float(np.finfo(np.float32).eps)


def _weights(size_in, size_out, scale, translation, method, antialias, edge_padding):
    """The (size_in, size_out) resampling matrix of one dimension."""
    radius, kernel = _KERNELS[method]
    inv_scale = 1.0 / scale
    # Where each output pixel's centre falls, in input pixel coordinates.
    sample = (jnp.arange(size_out, dtype=np.float32) + 0.5 - translation) * inv_scale - 0.5
    if kernel is None:
        # AREA: the overlap of output pixel [L, L + 1/scale) with input pixel [j, j + 1).
        left = ((jnp.arange(size_out, dtype=np.float32) - translation) * inv_scale)[None, :]
        start = jnp.arange(size_in, dtype=np.float32)[:, None]
        overlap = jnp.minimum(left + inv_scale, start + 1.0) - jnp.maximum(left, start)
        weights = jnp.maximum(0.0, overlap)
    else:
        widen = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
        pad = 0
        if edge_padding:
            pad = radius
            if antialias:
                static = float(concrete_or_error(scale, "antialiasing with edge padding"))
                pad = math.ceil(radius * max(1.0 / static, 1.0))
        positions = jnp.arange(-pad, size_in + pad, dtype=np.float32)
        weights = kernel(jnp.abs(sample[None, :] - positions[:, None]) / widen)
        if edge_padding:
            # Pixels beyond the edge repeat the edge pixel: fold their weights onto it.
            rows = jnp.clip(positions.astype(np.int32), 0, size_in - 1)
            weights = jnp.zeros((size_in, size_out), np.float32).at[rows].add(weights)
    total = jnp.sum(weights, axis=0, keepdims=True)
    weights = jnp.where(jnp.abs(total) > _TINY, weights / jnp.where(total != 0, total, 1.0), 0.0)
    if not edge_padding:
        inside = (sample >= -0.5) & (sample <= size_in - 0.5)
        weights = jnp.where(inside[None, :], weights, 0.0)
    return weights


def _resample(image, shape, spatial_dims, scales, translations, method, antialias, precision):
    edge_padding = method is ResizeMethod.CUBIC_PYTORCH and not antialias
    for d, scale, translation in zip(spatial_dims, scales, translations, strict=True):
        w = _weights(
            image.shape[d], shape[d], scale, translation, method, antialias, edge_padding
        ).astype(image.dtype)
        # Contract dimension d with the matrix and put the new axis back in its place.
        moved = jnp.tensordot(image, w, axes=([d], [0]), precision=precision)
        image = jnp.moveaxis(moved, -1, d)
    return image


def _as_method(method) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_shape(image, shape, what):
    if len(shape) != image.ndim:
        raise ValueError(
            f"{what}: shape must have length equal to the number of dimensions of x; "
            f" {tuple(shape)} vs {image.shape}"
        )


def _resize_nearest(image, shape):
    for d, (size_in, size_out) in enumerate(zip(image.shape, shape, strict=True)):
        if size_in == size_out:
            continue
        rows = np.floor((np.arange(size_out, dtype=np.float32) + 0.5) * size_in / size_out)
        image = jnp.take(image, rows.astype(np.int32), axis=d)
    return image


@partial(jit, static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    if method is ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = jnp.asarray(image)
    if not jnp.issubdtype(image.dtype, jnp.inexact):
        image = image.astype(jnp.result_type(image.dtype, 1.0))
    dims = tuple(d for d in range(image.ndim) if image.shape[d] != shape[d])
    if method is ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    scales = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scales, [0.0] * len(dims), method, antialias, precision)


def resize(image, shape: Sequence[int], method, antialias: bool = True, precision=None):
    """Resize ``image`` to ``shape`` by resampling (jax.image.resize).

    ``shape`` has one entry per dimension (leave batch and channel sizes as they
    are). ``method`` is a ``ResizeMethod`` or its name. NEAREST keeps the dtype;
    the others give a floating-point result. ``antialias`` smooths when downsampling.
    """
    shape = tuple(int(s) for s in shape)
    _check_shape(jnp.asarray(image), shape, "resize")
    precision = lax.Precision.HIGHEST if precision is None else precision
    return _resize(image, shape, _as_method(method), bool(antialias), precision)


def scale_and_translate(
    image,
    shape: Sequence[int],
    spatial_dims: Sequence[int],
    scale,
    translation,
    method,
    antialias: bool = True,
    precision=None,
):
    """Resample ``image`` to ``shape``, mapping input position x to ``x * scale + translation``
    along each of ``spatial_dims`` (jax.image.scale_and_translate).

    ``scale`` and ``translation`` may be traced; NEAREST is not a method here.
    """
    image = jnp.asarray(image)
    shape = tuple(int(s) for s in shape)
    _check_shape(image, shape, "scale_and_translate")
    method = _as_method(method)
    if method is ResizeMethod.NEAREST:
        raise ValueError("scale_and_translate does not support ResizeMethod.NEAREST")
    if not jnp.issubdtype(image.dtype, jnp.inexact):
        image = image.astype(jnp.result_type(image.dtype, 1.0))
    dims = tuple(d % image.ndim for d in spatial_dims)
    scale, translation = jnp.asarray(scale), jnp.asarray(translation)
    if scale.shape != (len(dims),) or translation.shape != (len(dims),):
        raise ValueError(
            f"scale_and_translate: scale {scale.shape} and translation {translation.shape} "
            f"need one entry per spatial dimension ({len(dims)})"
        )
    precision = lax.Precision.HIGHEST if precision is None else precision
    return _resample(
        image, shape, dims, list(scale), list(translation), method, antialias, precision
    )
