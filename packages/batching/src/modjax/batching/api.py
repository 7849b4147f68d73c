"""``vmap``: the user-facing vectorizing map, with JAX's in_axes/out_axes conventions."""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.tracecore import source_info
from modjax.tracecore.core import Tracer, to_aval
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.traceback_util import api_boundary
from modjax.tracecore.tree_util import (
    axis_spec_prefix_error,
    keystr,
    leaf_stand_ins,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import (
    check_callable,
    debug_info,
    flatten_fun,
    wrap_init,
    wraps_transform,
)

from .batch_trace import AxisData, batch_subtrace
from .primitives import canonicalize_axis, matchaxis

__all__ = ["vmap"]


def _is_axis_leaf(x) -> bool:
    return x is None or type(x) is int


def _check_axis_spec(spec, name: str) -> None:
    bad = [
        leaf
        for leaf in tree_leaves(spec, is_leaf=lambda x: x is None)
        if not (leaf is None or type(leaf) is int)
    ]
    if bad:
        raise TypeError(
            f"vmap {name} must be an int, None, or (nested) container with those types as "
            f"leaves, but got {spec}."
        )


def _vmap_docstring(fun) -> str:
    """JAX's docstring of a vmapped function (``{fun}`` is filled in with its name)."""
    doc = (
        "Vectorized version of {fun}. Takes similar arguments as {fun} but with additional "
        "array axes over which {fun} is mapped."
    )
    own = getattr(fun, "__doc__", None)
    if isinstance(own, str) and own:
        doc += "\n\nOriginal documentation:\n\n" + own.replace("{", "{{").replace("}", "}}")
    return doc


def vmap(
    fun: Callable,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Any = None,
    axis_size: int | None = None,
    spmd_axis_name: Any = None,
    sum_match: bool = False,
) -> Callable:
    """Return a version of ``fun`` mapped over an axis of its arguments (jax.vmap).

    ``in_axes`` gives, for each positional argument, the axis to map over: an
    int (negative counts from the end), None (not mapped), or a pytree prefix of
    the arguments with those as leaves; a top-level list is read as a tuple.
    Keyword arguments are always mapped over axis 0. ``out_axes`` likewise says
    where the mapped axis goes in each output (None only for unmapped outputs;
    an unmapped output with an int is broadcast). ``axis_name`` names the axis
    for ``axis_index`` and collectives; ``axis_size`` gives the size when no
    argument is mapped (and must agree with mapped arguments otherwise).
    ``spmd_axis_name`` is recorded in the axis data for sharding-aware rules.
    With ``sum_match``, a mapped output whose ``out_axes`` is None is summed over
    the mapped axis instead of being an error.
    """
    check_callable(fun)
    if spmd_axis_name is not None and not isinstance(spmd_axis_name, tuple):
        spmd_axis_name = (spmd_axis_name,)
    if isinstance(in_axes, list):
        # A prefix of the argument tuple is never a list; read it as the tuple meant.
        in_axes = tuple(in_axes)
    if not (in_axes is None or type(in_axes) in (int, tuple)):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
            f"positional arguments passed to the function, but got {in_axes}."
        )
    _check_axis_spec(in_axes, "in_axes")
    _check_axis_spec(out_axes, "out_axes")

    def vmap_f(*args, **kwargs):
        if isinstance(in_axes, tuple) and len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                "positional arguments passed to the function, but got "
                f"len(in_axes)={len(in_axes)}, len(args)={len(args)}"
            )
        args_flat, in_tree = tree_flatten((args, kwargs))
        n_pos = len(tree_leaves(args))
        in_axes_flat = _flatten_axes("vmap in_axes", args, in_axes) + [0] * (len(args_flat) - n_pos)
        size = _mapped_axis_size(fun, args, kwargs, args_flat, in_axes_flat, axis_size)
        in_dims = [
            None if d is None else _canonical_in_axis(x, d)
            for x, d in zip(args_flat, in_axes_flat, strict=True)
        ]
        flat_fun, out_tree = flatten_fun(wrap_init(fun, debug_info(fun, args, kwargs)), in_tree)
        axis_data = AxisData(axis_name, size, spmd_axis_name)
        with source_info.transform_name("vmap"):
            vals, dims = batch_subtrace(flat_fun.call_wrapped, axis_data, in_dims, args_flat)
            treedef = out_tree.val
            out_tree_value = leaf_stand_ins(treedef.unflatten([0] * treedef.num_leaves))
            dests = _flatten_axes("vmap out_axes", out_tree_value, out_axes)
            outs = [
                _match_output(axis_data, i, val, dim, dst, treedef, sum_match)
                for i, (val, dim, dst) in enumerate(zip(vals, dims, dests, strict=True))
            ]
        return tree_unflatten(treedef, outs)

    return wraps_transform(fun, _vmap_docstring(fun))(api_boundary(vmap_f))


# --- axis specs as prefixes of pytrees ------------------------------------------------


def _flatten_axes(name: str, full, axes) -> list:
    """Return one axis per leaf of ``full``, broadcasting the prefix tree ``axes`` (None a leaf).

    Where ``axes`` is not a prefix of ``full``, raise JAX's ValueError listing every
    place where they differ (``prefix_errors``).
    """
    axis_leaves, axis_def = tree_flatten(axes, is_leaf=_is_axis_leaf)
    try:
        subtrees = axis_def.flatten_up_to(full)
    except ValueError:
        raise axis_spec_prefix_error(name, axes, leaf_stand_ins(full)) from None
    return [
        axis
        for axis, subtree in zip(axis_leaves, subtrees, strict=True)
        for _ in range(tree_structure(subtree).num_leaves)
    ]


# --- the mapped size ------------------------------------------------------------------------


def _shape(x) -> tuple:
    if isinstance(x, Tracer | np.ndarray | np.generic):
        return x.shape
    return np.shape(x)


def _canonical_in_axis(x, axis: int) -> int:
    return axis + len(_shape(x)) if axis < 0 else axis


def _axis_length(x, axis: int) -> int:
    try:
        to_aval(x)
    except TypeError:
        raise TypeError(
            f"vmap was requested to map its argument along axis {axis}, but the argument "
            f"{x!r} of type {type(x)} is not an array"
        ) from None
    shape = _shape(x)
    if not -len(shape) <= axis < len(shape):
        min_rank = axis + 1 if axis >= 0 else -axis
        raise ValueError(
            f"vmap was requested to map its argument along axis {axis}, which implies that "
            f"its rank should be at least {min_rank}, but is only {len(shape)} (its shape is "
            f"{shape})"
        )
    return shape[axis]


def _mapped_axis_size(fun, args, kwargs, args_flat, in_axes_flat, axis_size) -> int:
    if not args_flat:
        if axis_size is not None:
            return axis_size
        raise ValueError(
            "vmap wrapped function must be passed at least one argument containing an array "
            f"or axis_size must be specified, got empty *args={args} and **kwargs={kwargs}"
        )
    sizes = [
        None if d is None else _axis_length(x, d)
        for x, d in zip(args_flat, in_axes_flat, strict=True)
    ]
    distinct = {s for s in sizes if s is not None}
    if axis_size is not None:
        distinct.add(axis_size)
    if len(distinct) == 1:
        return distinct.pop()
    if not distinct:
        raise ValueError(
            "vmap must have at least one non-None value in in_axes or axis_size must be specified"
        )
    raise ValueError(
        _inconsistent_sizes_message(fun, args, kwargs, args_flat, in_axes_flat, sizes, axis_size)
    )


def _inconsistent_sizes_message(fun, args, kwargs, args_flat, in_axes_flat, sizes, axis_size):
    try:
        params = list(inspect.signature(fun).parameters)
    except (TypeError, ValueError):
        params = None

    def arg_name(path) -> str:
        i = path[0].idx
        if params is None or i >= len(params):
            return f"args{keystr(path)}"
        return f"argument {params[i]}{keystr(path[1:])}"

    def type_str(x) -> str:
        try:
            return to_aval(x).str_short()
        except TypeError:
            return "unknown"

    names = [f"{arg_name(p)} of type {type_str(x)}" for p, x in tree_flatten_with_path(args)[0]]
    names += [
        f"kwargs{keystr(p)} of type {type_str(x)}" for p, x in tree_flatten_with_path(kwargs)[0]
    ]
    counts = Counter(s for s in sizes if s is not None).most_common()
    lines = ["vmap got inconsistent sizes for array axes to be mapped:"]
    if axis_size is not None:
        lines.append(f"  * the `axis_size` argument was {axis_size};")
    for rank, (size, count) in enumerate(counts):
        i = sizes.index(size)
        example = f"axis {in_axes_flat[i]} of {names[i]}"
        if count == 1:
            lines.append(f"  * one axis had size {size}: {example};")
        elif rank == 0:
            lines.append(f"  * most axes ({count} of them) had size {size}, e.g. {example};")
        else:
            lines.append(f"  * some axes ({count} of them) had size {size}, e.g. {example};")
    return "\n".join(lines)[:-1]


# --- outputs ------------------------------------------------------------------------------


def _match_output(axis_data: AxisData, i: int, val, dim, dst, treedef, sum_match=False):
    try:
        aval = to_aval(val)
    except TypeError:
        raise TypeError(
            f"Output from batched function {val!r} with type {type(val)} is not a valid JAX type"
        ) from None
    if type(aval) is AbstractToken:
        return val  # a token is never batched, and stands for every member (as in JAX)
    if dst is None:
        if dim is None:
            return val
        if sum_match:
            return _sum_over(val, dim)
        if axis_data.name is not None:
            raise ValueError(
                f"vmap has mapped output (axis_name={axis_data.name}) but out_axes is {dst}"
            )
        tree = tree_unflatten(treedef, list(range(treedef.num_leaves)))
        path = next(p for p, leaf in tree_flatten_with_path(tree)[0] if leaf == i)
        raise ValueError(
            f"at vmap out_axes{keystr(path)}, got axis spec {dst} but output was batched on "
            f"axis {dim}"
        )
    ndim = len(aval.shape) + (dim is None)
    return matchaxis(axis_data.size, dim, canonicalize_axis(dst, ndim), val)


def _sum_over(val, axis: int):
    """``val`` summed over ``axis``, with the array library's ``sum`` (vmap's ``sum_match``)."""
    try:
        total = val.sum
    except AttributeError:
        raise NotImplementedError(
            f"vmap(sum_match=True) sums a mapped output with its .sum method, which "
            f"{type(val).__name__} lacks (import modjax.numpy to give arrays one)"
        ) from None
    return total(axis)
