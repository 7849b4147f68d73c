"""Transposed convolution and the shape helpers of convolutions and windowed reductions.

``conv_transpose`` is a convolution with a dilated input (``lhs_dilation`` = the
strides) and the padding that makes it the gradient-shaped inverse of a strided
convolution; the ``*_shape_tuple`` functions compute output shapes without tracing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ._common import aval_of
from .convolution import conv_dimension_numbers, conv_general_dilated
from .structural import rev
from .windowed import dilate_dim, padtype_to_pads

__all__ = [
    "conv_general_permutations",
    "conv_general_shape_tuple",
    "conv_shape_tuple",
    "conv_transpose",
    "conv_transpose_shape_tuple",
    "reduce_window_shape_tuple",
]

# Layouts conv_transpose assumes by rank when none are given (channels last).
_DEFAULT_LAYOUTS = {
    2: ("NC", "IO", "NC"),
    3: ("NHC", "HIO", "NHC"),
    4: ("NHWC", "HWIO", "NHWC"),
    5: ("NHWDC", "HWDIO", "NHWDC"),
}


def _transpose_padding(k: int, s: int, padding) -> tuple[int, int]:
    """Low and high padding of one dimension of a transposed convolution."""
    if padding == "SAME":
        total = k + s - 2
        low = k - 1 if s > k - 1 else math.ceil(total / 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        low = k - 1
    elif isinstance(padding, tuple):
        # Explicit padding of the forward convolution, mirrored.
        low, high = (k - p - 1 for p in padding)
        total = low + high
    else:
        raise ValueError(f"Invalid padding mode: {padding}")
    return low, total - low


def conv_transpose(
    lhs,
    rhs,
    strides: Sequence[int],
    padding,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers=None,
    transpose_kernel: bool = False,
    precision=None,
    preferred_element_type=None,
    use_consistent_padding: bool = False,
):
    """Transposed (fractionally strided) convolution (jax.lax.conv_transpose).

    ``padding`` is ``"SAME"``/``"VALID"`` (as of the forward convolution this
    inverts) or explicit (low, high) pairs, taken as the forward convolution's
    padding when ``use_consistent_padding`` and as the dilated convolution's
    padding otherwise. ``transpose_kernel`` flips the kernel's spatial axes and
    swaps its in/out channels, giving the gradient of ``conv_general_dilated``.
    """
    la, ra = aval_of(lhs), aval_of(rhs)
    if dimension_numbers is None:
        if la.ndim not in _DEFAULT_LAYOUTS:
            raise ValueError("No 4+ dimensional dimension_number defaults.")
        dimension_numbers = _DEFAULT_LAYOUTS[la.ndim]
    dn = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    kernel_sizes = [ra.shape[d] for d in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    if use_consistent_padding or padding in ("SAME", "VALID"):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else padding
        pads = tuple(
            _transpose_padding(dilate_dim(k, r), s, tuple(p) if not isinstance(p, str) else p)
            for k, r, s, p in zip(kernel_sizes, rhs_dilation, strides, per_dim, strict=True)
        )
    else:
        pads = padding
    if transpose_kernel:
        rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
        perm = list(range(ra.ndim))
        out_axis, in_axis = dn.rhs_spec[0], dn.rhs_spec[1]
        perm[out_axis], perm[in_axis] = perm[in_axis], perm[out_axis]
        rhs = rhs.transpose(perm)
    return conv_general_dilated(
        lhs,
        rhs,
        (1,) * nsp,
        pads,
        lhs_dilation=tuple(strides),
        rhs_dilation=rhs_dilation,
        dimension_numbers=dn,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def _stride_dim(size: int, window: int, stride: int) -> int:
    return max(0, (size - window) // stride + 1) if size >= window else 0


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1) -> tuple:
    """The output shape of an NC.../OI... convolution (jax.lax.conv_shape_tuple)."""
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    if len(pads) != len(lhs_shape) - 2:
        raise TypeError(
            "Wrong number of explicit pads for convolution: expected "
            f"{len(lhs_shape) - 2}, got {len(pads)}."
        )
    padded = [d + lo + hi for d, (lo, hi) in zip(lhs_shape[2:], pads, strict=True)]
    if any(p < 0 for p in padded):
        raise ValueError(
            "Negative padding is larger than the size of the corresponding dimension: "
            f"got padding={pads} for lhs_shape[2:]={tuple(lhs_shape[2:])}"
        )
    space = tuple(map(_stride_dim, padded, rhs_shape[2:], strides))
    batch = lhs_shape[0] // batch_group_count if batch_group_count > 1 else lhs_shape[0]
    return (batch, rhs_shape[0]) + space


def conv_general_permutations(dimension_numbers) -> tuple[tuple[int, ...], ...]:
    """The permutations taking each layout to (N, C, spatial...) order.

    The counterpart of jax.lax.conv_general_permutations.
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for i, (a, b) in enumerate(pairs):
        spec = dimension_numbers[i]
        if not spec.count(a) == spec.count(b) == 1:
            raise TypeError(
                f"convolution dimension_numbers[{i}] must contain the characters '{a}' and "
                f"'{b}' exactly once, got {spec}."
            )
        if len(spec) != len(set(spec)):
            raise TypeError(
                f"convolution dimension_numbers[{i}] cannot have duplicate characters, got {spec}."
            )
    spatial_sets = [set(s) - set(p) for s, p in zip(dimension_numbers, pairs, strict=True)]
    if not spatial_sets[0] == spatial_sets[1] == spatial_sets[2]:
        raise TypeError(
            "convolution dimension_numbers elements must each have the same set of spatial "
            f"characters, got {dimension_numbers}."
        )

    def permutation(spec, pair):
        spatial = [i for i, c in enumerate(spec) if c not in pair]
        if spec is not rhs_spec:
            # Spatial axes of the input and output follow the kernel's order.
            spatial = sorted(spatial, key=lambda i: rhs_spec.index(spec[i]))
        return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)

    return tuple(map(permutation, dimension_numbers, pairs))


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of a convolution with layouts (jax.lax.conv_general_shape_tuple)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    out = conv_shape_tuple(
        tuple(np.take(lhs_shape, lhs_perm)),
        tuple(np.take(rhs_shape, rhs_perm)),
        window_strides,
        padding,
    )
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers):
    """The output shape of ``conv_transpose`` (jax.lax.conv_transpose_shape_tuple)."""
    lhs_perm, rhs_perm, out_perm = conv_general_permutations(dimension_numbers)
    lhs_t = [int(d) for d in np.take(lhs_shape, lhs_perm)]
    rhs_t = [int(d) for d in np.take(rhs_shape, rhs_perm)]
    if isinstance(padding, str):
        padding = [
            _transpose_padding(k, s, padding)
            for k, s in zip(rhs_t[2:], window_strides, strict=True)
        ]
    space = [
        (i - 1) * s - k + 2 + sum(p)
        for i, k, s, p in zip(lhs_t[2:], rhs_t[2:], window_strides, padding, strict=True)
    ]
    out = (lhs_t[0], rhs_t[0], *space)
    return tuple(int(d) for d in np.take(out, np.argsort(out_perm)))


def reduce_window_shape_tuple(
    operand_shape,
    window_dimensions,
    window_strides,
    padding,
    base_dilation=None,
    window_dilation=None,
):
    """The output shape of a windowed reduction (jax.lax.reduce_window_shape_tuple)."""
    if base_dilation is not None:
        operand_shape = tuple(map(dilate_dim, operand_shape, base_dilation))
    if window_dilation is not None:
        window_dimensions = tuple(map(dilate_dim, window_dimensions, window_dilation))
    padded = [d + lo + hi for d, (lo, hi) in zip(operand_shape, padding, strict=True)]
    return tuple(map(_stride_dim, padded, window_dimensions, window_strides))
