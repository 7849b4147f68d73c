"""Convolutions: the ``conv_general_dilated`` primitive and ``conv``, ``conv_with_general_padding``,
``ConvDimensionNumbers``/``conv_dimension_numbers`` built on it.

``conv_general_dilated`` is XLA's convolution: window strides, explicit or
``"SAME"``/``"VALID"`` padding, lhs (input) and rhs (kernel) dilation,
feature groups (grouped and depthwise convolutions) and batch groups, any
layout through dimension numbers. It is bilinear: each operand's transpose is
another convolution (of the cotangent with the kernel, or of the input with
the cotangent). Under ``vmap`` the batch is folded into the feature groups,
the batch dimension or the kernel's output features, as JAX does.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Sequence
from functools import partial
from typing import NamedTuple

import numpy as np

from modjax.autodiff import defbilinear
from modjax.batching import batching_rules, moveaxis
from modjax.lowering import hlo, ir, ir_type, lower_fun, register_lowering
from modjax.runtime import apply_primitive
from modjax.sharding import reshard
from modjax.sharding.constraint import operation_out_sharding
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

from ._common import aval_of, check_same_dtypes, kind, real_dtype
from .precision import canonicalize_precision, format_precision, parse_precision, precision_pair
from .structural import unsharded_in_type
from .windowed import conv_vjp_lhs_padding, dilate_dim, padtype_to_pads

__all__ = [
    "ConvDimensionNumbers",
    "ConvGeneralDilatedDimensionNumbers",
    "conv",
    "conv_dimension_numbers",
    "conv_general_dilated",
    "conv_general_dilated_p",
    "conv_with_general_padding",
]


class ConvDimensionNumbers(NamedTuple):
    """Where each logical dimension of a convolution lives (jax.lax.ConvDimensionNumbers).

    ``lhs_spec`` is (batch, feature, spatial...) axes of the input, ``rhs_spec``
    (output feature, input feature, spatial...) axes of the kernel, ``out_spec``
    (batch, feature, spatial...) axes of the output.
    """

    lhs_spec: tuple[int, ...]
    rhs_spec: tuple[int, ...]
    out_spec: tuple[int, ...]


def _spec_from_string(spec: str, pair: tuple[str, str], rhs: str) -> tuple[int, ...]:
    spatial = [i for i, c in enumerate(spec) if c not in pair]
    if spec is not rhs:  # spatial dimensions are matched to the kernel's by letter
        spatial.sort(key=lambda i: rhs.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1]), *spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """Return ``dimension_numbers`` as ConvDimensionNumbers (jax.lax.conv_dimension_numbers).

    ``None`` means NCHW input, OIHW kernel, NCHW output (for any number of
    spatial dimensions); a triple of strings such as ``("NHWC", "HWIO",
    "NHWC")`` names each axis (``N``/``C`` batch/feature, ``O``/``I`` kernel
    features, other letters spatial, matched between the three by letter).
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    if len(lhs_shape) != len(rhs_shape):
        raise TypeError(
            "convolution requires lhs and rhs ndim to be equal, got "
            f"{len(lhs_shape)} and {len(rhs_shape)}."
        )
    ndim = len(lhs_shape)
    if dimension_numbers is None:
        iota = tuple(range(ndim))
        return ConvDimensionNumbers(iota, iota, iota)
    if not isinstance(dimension_numbers, tuple | list) or len(dimension_numbers) != 3:
        raise TypeError(
            "conv dimension_numbers must be None, a ConvDimensionNumbers or a triple of "
            f"strings or int tuples, got {dimension_numbers!r}"
        )
    if all(isinstance(s, str) for s in dimension_numbers):
        lhs, rhs, out = dimension_numbers
        for spec, pair, what in ((lhs, "NC", "lhs"), (rhs, "OI", "rhs"), (out, "NC", "out")):
            if len(spec) != ndim:
                raise TypeError(
                    f"convolution {what} spec {spec!r} must have {ndim} letters, one per "
                    f"dimension of the operands of shapes {tuple(lhs_shape)}, {tuple(rhs_shape)}"
                )
            if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1:
                raise TypeError(
                    f"convolution {what} spec {spec!r} must contain {pair[0]!r} and {pair[1]!r} "
                    "exactly once"
                )
            if len(set(spec)) != len(spec):
                raise TypeError(f"convolution {what} spec {spec!r} repeats a letter")
        spatial = [set(s) - set(p) for s, p in ((lhs, "NC"), (rhs, "OI"), (out, "NC"))]
        if not spatial[0] == spatial[1] == spatial[2]:
            raise TypeError(
                "convolution spatial dimensions must use the same letters in lhs, rhs and out "
                f"specs, got {dimension_numbers}"
            )
        return ConvDimensionNumbers(
            _spec_from_string(lhs, ("N", "C"), rhs),
            _spec_from_string(rhs, ("O", "I"), rhs),
            _spec_from_string(out, ("N", "C"), rhs),
        )
    try:
        specs = [tuple(operator.index(d) for d in spec) for spec in dimension_numbers]
    except TypeError:
        raise TypeError(
            f"conv dimension_numbers must hold integers, got {dimension_numbers!r}"
        ) from None
    for spec in specs:
        if sorted(spec) != list(range(ndim)):
            raise TypeError(
                f"convolution dimension numbers {spec} must be a permutation of range({ndim})"
            )
    return ConvDimensionNumbers(*specs)


#: What ``conv_general_dilated`` accepts as ``dimension_numbers`` (jax.lax's type alias).
ConvGeneralDilatedDimensionNumbers = None | ConvDimensionNumbers | tuple[str, str, str]


# --- the primitive -----------------------------------------------------------------------------


def _check_multiple(name: str, o: int, count: int, what: str) -> None:
    if o % count:
        raise ValueError(
            f"{name} rhs output feature dimension size must be a multiple of {what}, but {o} is "
            f"not a multiple of {count}."
        )


def _conv_shape(
    name,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    ndim = lhs.ndim
    if rhs.ndim != ndim:
        raise TypeError(  # JAX's text
            f"convolution requires lhs and rhs ndim to be equal, got {ndim} and {rhs.ndim}."
        )
    if ndim < 2:
        raise TypeError(f"{name} requires operands of rank at least 2, got {lhs.str_short()}")
    for spec in dimension_numbers:
        if sorted(spec) != list(range(ndim)):
            raise TypeError(
                f"{name} dimension numbers {tuple(dimension_numbers)} are not permutations of "
                f"range({ndim})"
            )
    nsp = ndim - 2
    n, c = lhs.shape[lhs_spec[0]], lhs.shape[lhs_spec[1]]
    o, i = rhs.shape[rhs_spec[0]], rhs.shape[rhs_spec[1]]
    # JAX's checks of the group counts, in its order and with its texts.
    fgc, bgc = feature_group_count, batch_group_count
    if fgc <= 0:
        raise ValueError(f"{name} feature_group_count must be a positive integer, got {fgc}.")
    if c % fgc:
        raise ValueError(
            f"{name} feature_group_count must divide lhs feature dimension size, but {fgc} does "
            f"not divide {c}."
        )
    if c // fgc != i:
        raise ValueError(
            f"{name} lhs feature dimension size divided by feature_group_count must equal the "
            f"rhs input feature dimension size, but {c} // {fgc} != {i}."
        )
    _check_multiple(name, o, fgc, "feature_group_count")
    if bgc <= 0:
        raise ValueError(f"{name} batch_group_count must be a positive integer, got {bgc}.")
    if bgc > 1 and n % bgc:
        raise ValueError(
            f"{name} batch_group_count must divide lhs batch dimension size, but {bgc} does not "
            f"divide {n}."
        )
    _check_multiple(name, o, bgc, "batch_group_count")
    if feature_group_count > 1 and batch_group_count > 1:
        raise ValueError(
            "At most one of batch_group_count and feature_group_count may be > 1, got "
            f"batch_group_count={batch_group_count} and feature_group_count={feature_group_count}"
        )
    if len(window_strides) != nsp:
        raise ValueError(
            f"{name} window and window_strides must have the same number of dimensions, but "
            f"got {nsp} and {len(window_strides)}"
        )
    for what, values in (
        ("padding", padding),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if len(values) != nsp:
            raise TypeError(
                f"{name} {what} must have one entry per spatial dimension ({nsp}), got "
                f"{tuple(values)}"
            )
    for what, values in (
        ("window_strides", window_strides),
        ("lhs_dilation", lhs_dilation),
        ("rhs_dilation", rhs_dilation),
    ):
        if any(v <= 0 for v in values):
            raise ValueError(f"{name} {what} must be positive, got {tuple(values)}")
    spatial = []
    for k in range(nsp):
        size = dilate_dim(lhs.shape[lhs_spec[2 + k]], lhs_dilation[k]) + sum(padding[k])
        window = dilate_dim(rhs.shape[rhs_spec[2 + k]], rhs_dilation[k])
        if size < 0:
            raise ValueError(
                f"{name}: padding {tuple(padding)} makes a spatial dimension of the lhs of shape "
                f"{lhs.shape} negative"
            )
        spatial.append(0 if size < window else (size - window) // window_strides[k] + 1)
    out = [0] * ndim
    out[out_spec[0]] = n // batch_group_count
    out[out_spec[1]] = o
    for k in range(nsp):
        out[out_spec[2 + k]] = spatial[k]
    return tuple(out)


def _conv_abstract_eval(lhs, rhs, *, precision, preferred_element_type, **params):
    name = "conv_general_dilated"
    for side, a in (("lhs", lhs), ("rhs", rhs)):
        if kind(a.dtype) not in "iufc":
            raise TypeError(
                f"{name} does not accept {side} dtype {dtypes.dtype_name(a.dtype)}; accepted "
                "dtypes are integers, floats and complex numbers"
            )
    check_same_dtypes(name, [lhs, rhs])
    shape = _conv_shape(name, lhs, rhs, **params)
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    return ShapedArray(shape, lhs.dtype, lhs.weak_type and rhs.weak_type)


def _conv_lowering(
    ctx,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
    preferred_element_type,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out = ctx.avals_out[0]
    numbers = hlo.ConvDimensionNumbers.get(
        input_batch_dimension=lhs_spec[0],
        input_feature_dimension=lhs_spec[1],
        input_spatial_dimensions=list(lhs_spec[2:]),
        kernel_output_feature_dimension=rhs_spec[0],
        kernel_input_feature_dimension=rhs_spec[1],
        kernel_spatial_dimensions=list(rhs_spec[2:]),
        output_batch_dimension=out_spec[0],
        output_feature_dimension=out_spec[1],
        output_spatial_dimensions=list(out_spec[2:]),
    )
    pair = precision_pair(precision)
    nsp = len(window_strides)
    return hlo.ConvolutionOp(
        ir_type(out),
        lhs,
        rhs,
        numbers,
        feature_group_count,
        batch_group_count,
        window_strides=list(window_strides),
        padding=ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(nsp, 2)),
        lhs_dilation=list(lhs_dilation),
        rhs_dilation=list(rhs_dilation),
        window_reversal=[False] * nsp,
        precision_config=ir.ArrayAttr.get([hlo.PrecisionAttr.get(p.name) for p in pair]),
    ).result


conv_general_dilated_p = Primitive("conv_general_dilated")
conv_general_dilated_p.def_abstract_eval(_conv_abstract_eval)
conv_general_dilated_p.def_impl(partial(apply_primitive, conv_general_dilated_p))
register_lowering(conv_general_dilated_p, _conv_lowering)


def _complex_conv_as_real(lhs, rhs, *, preferred_element_type, **params):
    """A complex convolution as three real ones (Gauss's trick), as JAX lowers it on CPU/GPU."""
    from .bits import complex as make_complex
    from .bits import imag, real
    from .elementwise import add, sub

    pet = None if preferred_element_type is None else real_dtype(np.dtype(preferred_element_type))

    def conv(x, y):
        return conv_general_dilated_p.bind(x, y, preferred_element_type=pet, **params)

    x_re, x_im, y_re, y_im = real(lhs), imag(lhs), real(rhs), imag(rhs)
    k1 = conv(add(x_re, x_im), y_re)
    k2 = conv(x_re, sub(y_im, y_re))
    k3 = conv(x_im, add(y_re, y_im))
    return make_complex(sub(k1, k3), add(k1, k2))


_complex_conv_lowering = lower_fun(_complex_conv_as_real)


def _conv_lowering_real_parts(ctx, lhs, rhs, **params):
    # XLA's CPU complex convolution is a slow loop and GPUs have none: JAX (and so
    # modjax, for JAX's bits) lowers it to real convolutions there.
    if kind(ctx.avals_in[0].dtype) == "c":
        return _complex_conv_lowering(ctx, lhs, rhs, **params)
    return _conv_lowering(ctx, lhs, rhs, **params)


for _platform in ("cpu", "cuda"):
    register_lowering(conv_general_dilated_p, _conv_lowering_real_parts, platform=_platform)


def _format_dimension_numbers(d: ConvDimensionNumbers) -> str:
    return (
        f"ConvDimensionNumbers(lhs_spec={d.lhs_spec}, rhs_spec={d.rhs_spec}, out_spec={d.out_spec})"
    )


_DNUMS = re.compile(
    r"\s*ConvDimensionNumbers\(\s*lhs_spec=\(([\d,\s]*)\),\s*rhs_spec=\(([\d,\s]*)\),"
    r"\s*out_spec=\(([\d,\s]*)\)\s*\)\s*"
)


def _parse_dimension_numbers(text: str) -> ConvDimensionNumbers:
    match = _DNUMS.fullmatch(text)
    if match is None:
        raise ValueError(f"expected ConvDimensionNumbers(lhs_spec=..., ...), got {text!r}")
    specs = [tuple(int(v) for v in g.split(",") if v.strip()) for g in match.groups()]
    return ConvDimensionNumbers(*specs)


register_param_printer(conv_general_dilated_p, "dimension_numbers", _format_dimension_numbers)
register_param_parser(conv_general_dilated_p, "dimension_numbers", _parse_dimension_numbers)
register_param_printer(conv_general_dilated_p, "precision", format_precision)
register_param_parser(conv_general_dilated_p, "precision", parse_precision)


# --- transposes ----------------------------------------------------------------------------------


def _reshape(x, shape):
    from .structural import reshape

    return reshape(x, tuple(shape))


def _split(x, axis: int, size: int):
    """Split ``axis`` into ``(size, rest)``, ``size`` major; the new axes are ``axis, axis + 1``."""
    shape = list(aval_of(x).shape)
    rest = shape[axis] // size if size else 0
    return _reshape(x, shape[:axis] + [size, rest] + shape[axis + 1 :])


def _fold(x, src: int, dst: int):
    """Merge axis ``src`` into axis ``dst`` (``src`` major); return the array of rank - 1.

    The merged axis sits where ``dst`` was once ``src`` is removed.
    """
    x = moveaxis(x, src, dst - 1 if src < dst else dst)
    at = dst - 1 if src < dst else dst
    shape = list(aval_of(x).shape)
    return _reshape(x, shape[:at] + [shape[at] * shape[at + 1]] + shape[at + 2 :])


def _rev_spatial(x, spec):
    from .structural import rev

    return rev(x, tuple(spec[2:])) if len(spec) > 2 else x


def _conv_transpose_lhs(
    ct,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
    preferred_element_type,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_aval = lhs.aval
    rhs_aval = aval_of(rhs)
    lhs_sdims = [lhs_aval.shape[d] for d in lhs_spec[2:]]
    rhs_sdims = [rhs_aval.shape[d] for d in rhs_spec[2:]]
    out_sdims = [aval_of(ct).shape[d] for d in out_spec[2:]]
    pads = conv_vjp_lhs_padding(
        lhs_sdims, rhs_sdims, window_strides, out_sdims, padding, lhs_dilation, rhs_dilation
    )
    groups = batch_group_count if batch_group_count > 1 else feature_group_count
    kernel = rhs
    if groups > 1:  # move the groups from the kernel's output features to its input features
        kernel = _split(kernel, rhs_spec[0], groups)
        kernel = _fold(kernel, rhs_spec[0], rhs_spec[1] + (rhs_spec[1] > rhs_spec[0]))
    kernel = _rev_spatial(kernel, rhs_spec)
    ct, kernel = _same_dtype(ct, kernel)
    trans = ConvDimensionNumbers(out_spec, (rhs_spec[1], rhs_spec[0], *rhs_spec[2:]), lhs_spec)
    out = conv_general_dilated_p.bind(
        ct,
        kernel,
        window_strides=tuple(lhs_dilation),
        padding=tuple(pads),
        lhs_dilation=tuple(window_strides),
        rhs_dilation=tuple(rhs_dilation),
        dimension_numbers=trans,
        feature_group_count=groups,
        batch_group_count=1,
        precision=precision,
        preferred_element_type=None,
    )
    if batch_group_count > 1:  # the groups came out as features: they belong to the batch
        out = _split(out, lhs_spec[1], batch_group_count)
        out = _fold(out, lhs_spec[1], lhs_spec[0] + (lhs_spec[0] > lhs_spec[1]))
    return _to_dtype(out, lhs_aval)


def _conv_transpose_rhs(
    ct,
    lhs,
    rhs,
    *,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    dimension_numbers,
    feature_group_count,
    batch_group_count,
    precision,
    preferred_element_type,
):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    lhs_aval = aval_of(lhs)
    rhs_aval = rhs.aval
    lhs_sdims = [lhs_aval.shape[d] for d in lhs_spec[2:]]
    rhs_sdims = [rhs_aval.shape[d] for d in rhs_spec[2:]]
    out_sdims = [aval_of(ct).shape[d] for d in out_spec[2:]]
    pads = []
    for d, k, o, (lo, _), s, ld, rd in zip(
        lhs_sdims,
        rhs_sdims,
        out_sdims,
        padding,
        window_strides,
        lhs_dilation,
        rhs_dilation,
        strict=True,
    ):
        hi = dilate_dim(k, rd) - 1 + dilate_dim(o, s) - dilate_dim(d, ld) - lo
        pads.append((lo, hi))
    trans = ConvDimensionNumbers(
        (lhs_spec[1], lhs_spec[0], *lhs_spec[2:]),
        (out_spec[1], out_spec[0], *out_spec[2:]),
        (rhs_spec[1], rhs_spec[0], *rhs_spec[2:]),
    )
    lhs, ct = _same_dtype(lhs, ct)
    out = conv_general_dilated_p.bind(
        lhs,
        ct,
        window_strides=tuple(rhs_dilation),
        padding=tuple(pads),
        lhs_dilation=tuple(lhs_dilation),
        rhs_dilation=tuple(window_strides),
        dimension_numbers=trans,
        feature_group_count=batch_group_count,
        batch_group_count=feature_group_count,
        precision=precision,
        preferred_element_type=None,
    )
    return _to_dtype(out, rhs_aval)


def _same_dtype(x, y):
    ax, ay = aval_of(x), aval_of(y)
    if ax.dtype == ay.dtype:
        return x, y
    from .elementwise import convert_element_type

    dtype = dtypes.promote_types(ax.dtype, ay.dtype)
    return convert_element_type(x, dtype), convert_element_type(y, dtype)


def _to_dtype(x, aval):
    if aval_of(x).dtype == aval.dtype:
        return x
    from .elementwise import convert_element_type

    return convert_element_type(x, aval.dtype)


defbilinear(conv_general_dilated_p, _conv_transpose_lhs, _conv_transpose_rhs)


# --- batching ----------------------------------------------------------------------------------


def _conv_batch_rule(args, dims, **params):
    lhs, rhs = args
    lhs_dim, rhs_dim = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    size = aval_of(lhs).shape[lhs_dim] if lhs_dim is not None else aval_of(rhs).shape[rhs_dim]
    if size == 0:
        from .structural import full

        lhs_aval = aval_of(lhs) if lhs_dim is None else _drop(aval_of(lhs), lhs_dim)
        rhs_aval = aval_of(rhs) if rhs_dim is None else _drop(aval_of(rhs), rhs_dim)
        out = conv_general_dilated_p.abstract_eval(lhs_aval, rhs_aval, **params)
        return full((0, *out.shape), np.zeros((), out.dtype)), 0
    if lhs_dim is not None:
        lhs = moveaxis(lhs, lhs_dim, 0)
    if rhs_dim is not None:
        rhs = moveaxis(rhs, rhs_dim, 0)
    bind = partial(conv_general_dilated_p.bind, **params)
    if lhs_dim is not None and rhs_dim is not None:
        if bgc > 1:
            lhs = _fold(lhs, 0, lhs_spec[0] + 1)
            new = dict(params, batch_group_count=bgc * size)
        else:
            lhs = _fold(lhs, 0, lhs_spec[1] + 1)
            new = dict(params, feature_group_count=fgc * size)
        rhs = _fold(rhs, 0, rhs_spec[0] + 1)
        out = conv_general_dilated_p.bind(lhs, rhs, **new)
        return _split(out, out_spec[1], size), out_spec[1]
    if lhs_dim is not None:
        if bgc == 1:
            out = bind(_fold(lhs, 0, lhs_spec[0] + 1), rhs)
            return _split(out, out_spec[0], size), out_spec[0]
        # the batch goes inside each batch group: (group, vmap batch, rest)
        n_axis = lhs_spec[0] + 1
        lhs = _split(lhs, n_axis, bgc)
        lhs = _fold(lhs, 0, n_axis + 1)
        lhs = _fold(lhs, n_axis - 1, n_axis)
        out = bind(lhs, rhs)
        return _split(out, out_spec[0], size), out_spec[0]
    groups = fgc * bgc
    o_axis = rhs_spec[0] + 1
    if groups == 1:
        out = bind(lhs, _fold(rhs, 0, o_axis))
        return _split(out, out_spec[1], size), out_spec[1]
    # the batch goes inside each group of output features: (group, vmap batch, rest)
    rhs = _split(rhs, o_axis, groups)
    rhs = _fold(rhs, 0, o_axis + 1)
    rhs = _fold(rhs, o_axis - 1, o_axis)
    out = bind(lhs, rhs)
    f = out_spec[1]
    out = _split(out, f, groups)  # (group, batch * rest)
    out = _split(out, f + 1, size)  # (group, batch, rest)
    out = _fold(out, f, f + 2)  # (batch, group * rest)
    return out, f


def _drop(aval: ShapedArray, axis: int) -> ShapedArray:
    return aval.update(shape=aval.shape[:axis] + aval.shape[axis + 1 :])


batching_rules[conv_general_dilated_p] = _conv_batch_rule


# --- public functions --------------------------------------------------------------------------


def _ints(values, what: str, n: int, default: int = 1) -> tuple[int, ...]:
    if values is None:
        return (default,) * n
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"conv {what} must be a sequence of integers, got {values!r}") from None


def conv_general_dilated(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    lhs_dilation: Sequence[int] | None = None,
    rhs_dilation: Sequence[int] | None = None,
    dimension_numbers=None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision=None,
    preferred_element_type=None,
    out_sharding=None,
):
    """Convolve ``lhs`` with the kernel ``rhs`` as XLA does (jax.lax.conv_general_dilated).

    ``padding`` is ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or ``(low, high)``
    pairs per spatial dimension; ``lhs_dilation`` dilates the input (a
    transposed convolution), ``rhs_dilation`` the kernel (atrous convolution);
    ``dimension_numbers`` gives the layouts (see
    :func:`conv_dimension_numbers`; default NCHW/OIHW/NCHW);
    ``feature_group_count`` makes a grouped convolution and
    ``batch_group_count`` groups the batch (used by the kernel gradient of a
    grouped convolution). ``out_sharding`` (a NamedSharding, or a
    PartitionSpec on the current mesh) is the result's sharding, needed when
    the kernel or the input's feature dimension is split over explicit axes.
    """
    if out_sharding is not None:  # JAX ignores it for operands with no mesh, outside one
        out_sharding = operation_out_sharding(
            out_sharding, "dot_general", [aval_of(lhs), aval_of(rhs)]
        )
    if out_sharding is not None:
        out = conv_general_dilated(
            unsharded_in_type(lhs),
            unsharded_in_type(rhs),
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            dimension_numbers,
            feature_group_count,
            batch_group_count,
            precision,
            preferred_element_type,
        )
        return reshard(out, out_sharding)
    la, ra = aval_of(lhs), aval_of(rhs)
    dnums = conv_dimension_numbers(la.shape, ra.shape, dimension_numbers)
    nsp = la.ndim - 2
    window_strides = _ints(window_strides, "window_strides", nsp)
    lhs_dilation = _ints(lhs_dilation, "lhs_dilation", nsp)
    rhs_dilation = _ints(rhs_dilation, "rhs_dilation", nsp)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            # Which output size a dilated input's "SAME" means is ambiguous: JAX refuses it.
            raise ValueError(
                "String padding is not implemented for transposed convolution using this "
                "op. Please either exactly specify the required padding or use "
                "conv_transpose."
            )
        lhs_sp = [la.shape[d] for d in dnums.lhs_spec[2:]]
        rhs_sp = [
            dilate_dim(ra.shape[d], r)
            for d, r in zip(dnums.rhs_spec[2:], rhs_dilation, strict=True)
        ]
        padding = padtype_to_pads(lhs_sp, rhs_sp, window_strides, padding)
    try:
        padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
    except (TypeError, ValueError):
        raise TypeError(
            "conv padding must be 'SAME', 'SAME_LOWER', 'VALID' or a sequence of (low, high) "
            f"integer pairs, got {padding!r}"
        ) from None
    preferred = (
        None
        if preferred_element_type is None
        else dtypes.check_and_canonicalize_user_dtype(
            preferred_element_type, "conv_general_dilated"
        )
    )
    return conv_general_dilated_p.bind(
        lhs,
        rhs,
        window_strides=window_strides,
        padding=padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        dimension_numbers=dnums,
        feature_group_count=operator.index(feature_group_count),
        batch_group_count=operator.index(batch_group_count),
        precision=canonicalize_precision(precision),
        preferred_element_type=preferred,
    )


def conv(
    lhs, rhs, window_strides: Sequence[int], padding, precision=None, preferred_element_type=None
):
    """Convolve NCHW ``lhs`` with OIHW ``rhs``, no dilation (jax.lax.conv)."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )


def conv_with_general_padding(
    lhs,
    rhs,
    window_strides: Sequence[int],
    padding,
    lhs_dilation,
    rhs_dilation,
    precision=None,
    preferred_element_type=None,
):
    """Convolve NCHW ``lhs`` with OIHW ``rhs`` (jax.lax.conv_with_general_padding).

    ``padding`` and the lhs/rhs dilations are as in :func:`conv_general_dilated`.
    """
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation=lhs_dilation,
        rhs_dilation=rhs_dilation,
        precision=precision,
        preferred_element_type=preferred_element_type,
    )
