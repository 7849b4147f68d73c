"""Image patches and unshared convolutions, built on ``conv_general_dilated``:
``conv_general_dilated_patches`` and ``conv_general_dilated_local``.

Patches are a grouped convolution with a one-hot kernel (each output feature copies one
input feature at one window position); a locally connected layer contracts those
patches with a kernel that has its own weights at every output position.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._common import aval_of
from .convolution import conv_dimension_numbers, conv_general_dilated
from .dot import dot_general
from .precision import canonicalize_precision
from .structural import transpose

__all__ = ["conv_general_dilated_local", "conv_general_dilated_patches"]


def _moveaxis(x, sources: Sequence[int], destinations: Sequence[int]):
    """``x`` with axes ``sources`` moved to ``destinations`` (numpy.moveaxis)."""
    ndim = aval_of(x).ndim
    order = [i for i in range(ndim) if i not in sources]
    for dest, src in sorted(zip(destinations, sources, strict=True)):
        order.insert(dest, src)
    return x if order == list(range(ndim)) else transpose(x, tuple(order))


def conv_general_dilated_patches(
    lhs,
    filter_shape: Sequence[int],
    window_strides: Sequence[int],
    padding,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers=None,
    precision=None,
    preferred_element_type=None,
):
    """Extract the patches a convolution's windows see (jax.lax.conv_general_dilated_patches).

    The result has the convolution's output layout; its feature dimension holds each
    window flattened, input feature first (``C * prod(filter_shape)`` entries, ordered
    ``(c, *window position)``). Arguments as ``conv_general_dilated``'s, with
    ``filter_shape`` giving the window's spatial size.
    """
    aval = aval_of(lhs)
    filter_shape = tuple(int(d) for d in filter_shape)
    numbers = conv_dimension_numbers(aval.shape, (1, 1, *filter_shape), dimension_numbers)
    lhs_spec, rhs_spec, _ = numbers
    size = math.prod(filter_shape)
    channels = aval.shape[lhs_spec[1]]
    # One output feature per (channel, window position): a one-hot kernel, grouped by channel.
    eye = np.eye(size, dtype=aval.dtype)
    kernel = np.broadcast_to(eye, (channels, size, size)).reshape(channels * size, 1, *filter_shape)
    kernel = np.moveaxis(kernel, (0, 1), (rhs_spec[0], rhs_spec[1]))
    return conv_general_dilated(
        lhs,
        np.ascontiguousarray(kernel),
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=numbers,
        precision=None if precision is None else (precision, "default"),
        feature_group_count=channels,
        preferred_element_type=preferred_element_type,
    )


def conv_general_dilated_local(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    filter_shape: Sequence[int],
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers=None,
    precision=None,
):
    """Convolve with separate weights at every output position (jax.lax.conv_general_dilated_local).

    A locally connected layer: ``rhs`` has the output's spatial shape in its
    spatial dimensions, and its input-feature dimension holds the flattened patches
    (``C * prod(filter_shape)``, as ``conv_general_dilated_patches`` orders them).
    Other arguments as ``conv_general_dilated``'s; ``precision`` is one ``Precision``
    (or a pair, of which the first applies to the patches).
    """
    canonical = canonicalize_precision(precision)
    if canonical is None:
        lhs_precision = None
    elif isinstance(canonical, tuple) and len(canonical) == 2:
        lhs_precision = canonical[0]
    else:
        raise ValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
    patches = conv_general_dilated_patches(
        lhs,
        filter_shape,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers,
        precision=lhs_precision,
    )
    _, rhs_spec, out_spec = conv_dimension_numbers(
        aval_of(lhs).shape, (1, 1, *tuple(filter_shape)), dimension_numbers
    )
    # contract the patch features; every spatial position is a batch dimension
    out_spatial = list(out_spec[2:])
    rhs_spatial = [
        rhs_spec[2:][k] for k in sorted(range(len(out_spatial)), key=lambda k: out_spatial[k])
    ]
    numbers = (((out_spec[1],), (rhs_spec[1],)), (tuple(sorted(out_spatial)), tuple(rhs_spatial)))
    out = dot_general(patches, rhs, numbers, precision=precision)
    ndim = aval_of(out).ndim
    return _moveaxis(out, (ndim - 2, ndim - 1), (out_spec[0], out_spec[1]))
