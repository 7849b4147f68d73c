"""``vectorize``: numpy.vectorize with gufunc signatures, built on nested vmaps."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Collection

import numpy as np

from modjax.tracecore.core import Tracer

from .api import vmap
from .primitives import expand_dims, squeeze

__all__ = ["vectorize", "parse_gufunc_signature", "register_vectorize_asarray"]

_DIM = r"\w+"
_CORE_DIMS = f"(?:{_DIM}(?:,{_DIM})*)?"
_ARG = rf"\({_CORE_DIMS}\)"
_ARG_LIST = f"{_ARG}(?:,{_ARG})*"
_SIGNATURE = f"^{_ARG_LIST}->{_ARG_LIST}$"


def parse_gufunc_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    """Split a gufunc signature such as ``"(m,n),(n)->(m)"`` into input and output core dims.

    jax.numpy.vectorize's _parse_gufunc_signature.
    """
    if not re.match(_SIGNATURE, signature):
        raise ValueError(f"not a valid gufunc signature: {signature}")
    ins, outs = (
        [tuple(re.findall(_DIM, arg)) for arg in re.findall(_ARG, part)]
        for part in signature.split("->")
    )
    return ins, outs


def _update_dim_sizes(sizes: dict, shape: tuple, core_dims: tuple, context: str, *, is_input):
    n = len(core_dims)
    if is_input and len(shape) < n:
        raise ValueError(
            f"input with shape {shape!r} does not have enough dimensions for all core "
            f"dimensions {core_dims!r} {context}"
        )
    if not is_input and len(shape) != n:
        raise ValueError(
            f"output shape {shape!r} does not match core dimensions {core_dims!r} {context}"
        )
    for dim, size in zip(core_dims, shape[len(shape) - n :], strict=True):
        if sizes.setdefault(dim, size) != size:
            raise ValueError(
                f"inconsistent size for core dimension {dim!r}: {size!r} vs {sizes[dim]!r} "
                f"{context}"
            )


def _check_outputs(func: Callable, sizes: dict, out_core: list, context: str) -> Callable:
    def checked(*args):
        out = func(*args)
        if len(out_core) > 1 and not isinstance(out, tuple):
            raise TypeError(
                "output must be a tuple when multiple outputs are expected, got: "
                f"{out!r}\n{context}"
            )
        outs = out if isinstance(out, tuple) else (out,)
        if len(outs) != len(out_core):
            raise TypeError(
                f"wrong number of output arguments: expected {len(out_core)!r}, got "
                f"{len(outs)!r} {context}"
            )
        known = dict(sizes)
        for o, core in zip(outs, out_core, strict=True):
            _update_dim_sizes(
                known,
                np.shape(o) if not isinstance(o, Tracer) else o.shape,
                core,
                context,
                is_input=False,
            )
        return out

    return checked


def _apply_excluded(func, excluded, args, kwargs):
    if not excluded:
        return func, args, kwargs
    dynamic_args = [a for i, a in enumerate(args) if i not in excluded]
    dynamic_kwargs = {k: v for k, v in kwargs.items() if k not in excluded}
    static_args = [
        (i, args[i]) for i in sorted(e for e in excluded if isinstance(e, int)) if i < len(args)
    ]
    static_kwargs = {k: v for k, v in kwargs.items() if k in excluded}

    def partial_func(*args, **kwargs):
        args = list(args)
        for i, arg in static_args:
            args.insert(i, arg)
        return func(*args, **kwargs, **static_kwargs)

    return partial_func, dynamic_args, dynamic_kwargs


def _as_array(x):
    """``x`` as ``vmap`` takes it: arrays and tracers (anything with an ``aval``) as they
    are, their weak type kept as JAX's ``jnp.asarray`` keeps it; lists become numpy arrays."""
    if isinstance(x, Tracer | np.ndarray | np.generic | bool | int | float | complex):
        return x
    return x if hasattr(x, "aval") else np.asarray(x)


# How ``vectorize`` turns its (non-excluded) arguments into arrays. Batching alone has no
# device arrays, so a DSL built on it gets host values; modjax.numpy installs its
# ``asarray`` here, so that, as JAX's, a vectorized function receives Arrays and a
# Python-scalar argument gives an Array result (``vectorize(lambda x: x)(2.0)``).
_array_conversion: list[Callable] = [_as_array]


def register_vectorize_asarray(rule: Callable) -> None:
    """Make ``vectorize`` convert each argument it maps with ``rule``.

    ``rule`` takes an argument that is neither excluded nor None (a scalar, a
    sequence, a numpy or device array, a tracer) and returns the array the function
    should receive; the default keeps scalars, arrays and tracers as they are and
    makes sequences numpy arrays. No JAX counterpart: JAX's vectorize calls
    ``jnp.asarray``, which modjax.numpy registers here.
    """
    _array_conversion[0] = rule


def vectorize(
    pyfunc: Callable, *, excluded: Collection = frozenset(), signature: str | None = None
):
    """Return ``pyfunc`` vectorized with NumPy broadcasting (jax.numpy.vectorize).

    Without ``signature``, ``pyfunc`` is applied to each scalar element of the
    broadcast arguments; with a gufunc ``signature`` such as ``"(n,m),(m)->(n)"``
    it receives arrays of the core dimensions and loops (through ``vmap``) over
    the leading loop dimensions, broadcast numpy style. Arguments whose position
    (or keyword) is in ``excluded`` are passed through unchanged; keyword
    arguments are not vectorized. Size-1 loop dims are squeezed and mapped with
    ``in_axes=None``, so no operand is materialized at the broadcast size.
    """
    if any(not isinstance(e, str | int) for e in excluded):
        raise TypeError(
            "jax.numpy.vectorize can only exclude integer or string arguments, but "
            f"excluded={excluded!r}"
        )
    if any(isinstance(e, int) and e < 0 for e in excluded):
        raise ValueError(f"excluded={excluded!r} contains negative numbers")

    @functools.wraps(pyfunc)
    def wrapped(*args, **kwargs):
        context = f"on vectorized function with excluded={excluded!r} and signature={signature!r}"
        func, args, kwargs = _apply_excluded(pyfunc, excluded, args, kwargs)
        if signature is not None:
            in_core, out_core = parse_gufunc_signature(signature)
        else:
            in_core, out_core = [()] * len(args), None
        none_args = {i for i, a in enumerate(args) if a is None}
        if none_args:
            if any(in_core[i] != () for i in none_args):
                raise ValueError(f"Cannot pass None at locations {none_args} with {signature=}")
            func, args, _ = _apply_excluded(func, none_args, args, {})
            in_core = [c for i, c in enumerate(in_core) if i not in none_args]
        if kwargs:
            func = functools.partial(func, **kwargs)
        args = [_array_conversion[0](a) for a in args]
        if len(args) != len(in_core):
            raise TypeError(
                f"wrong number of positional arguments: expected {len(in_core)!r}, got "
                f"{len(args)!r} {context}"
            )
        sizes: dict = {}
        loop_shapes = []
        for arg, core in zip(args, in_core, strict=True):
            shape = tuple(np.shape(arg)) if not isinstance(arg, Tracer) else arg.shape
            _update_dim_sizes(sizes, shape, core, context, is_input=True)
            loop_shapes.append(shape[: len(shape) - len(core)])
        loop_shape = np.broadcast_shapes(*loop_shapes)
        if out_core is not None:
            func = _check_outputs(func, sizes, out_core, context)

        squeezed, rev_filled = [], []
        for arg, shape in zip(args, loop_shapes, strict=True):
            rev_filled.append(((1,) * (len(loop_shape) - len(shape)) + shape)[::-1])
            ones = [i for i, s in enumerate(shape) if s == 1]
            squeezed.append(squeeze(arg, ones) if ones else arg)
        dims_to_expand = []
        for negdim, sizes_at in enumerate(zip(*rev_filled, strict=True)):
            in_axes = tuple(None if s == 1 else 0 for s in sizes_at)
            if all(a is None for a in in_axes):
                dims_to_expand.append(len(loop_shape) - 1 - negdim)
            else:
                func = vmap(func, in_axes)
        result = func(*squeezed)
        if not dims_to_expand:
            return result
        if isinstance(result, tuple):
            return tuple(expand_dims(r, dims_to_expand) for r in result)
        return expand_dims(result, dims_to_expand)

    return wrapped
