"""Calling compiled C/C++ code through XLA's FFI (``jax.ffi``).

The API is modjax-runtime's (``modjax.runtime.ffi``: registration, ``ffi_call`` and its
primitive, lowering, text); this module re-exports it and registers the one rule
runtime cannot: ``ffi_call`` under ``vmap``, which by ``vmap_method`` binds the call
once per element in a ``scan`` (``sequential``, ``sequential_unrolled``) or once on
operands with a leading batch axis (``expand_dims``, ``broadcast_all``,
``legacy_vectorized``), built with lax's operations.
"""

from __future__ import annotations

from modjax.batching import batching_rules
from modjax.lax.callbacks import _sequential
from modjax.lax.structural import broadcast, moveaxis
from modjax.runtime.ffi import (
    _VMAP_METHODS,
    build_ffi_lowering_function,
    ffi_call,
    ffi_call_p,
    ffi_lowering,
    include_dir,
    pycapsule,
    register_ffi_target,
    register_ffi_target_as_batch_partitionable,
    register_ffi_type,
    register_ffi_type_id,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.tokens import is_token_aval

__all__ = [
    "build_ffi_lowering_function",
    "ffi_call",
    "ffi_lowering",
    "include_dir",
    "pycapsule",
    "register_ffi_target",
    "register_ffi_target_as_batch_partitionable",
    "register_ffi_type",
    "register_ffi_type_id",
]


def _batched_layout(layout):
    """A minor-to-major layout with a new leading (major-most) axis."""
    return None if layout is None else (*(d + 1 for d in layout), 0)


def _ffi_call_batching(args, dims, *, vmap_method, result_avals, **params):
    if vmap_method not in _VMAP_METHODS[:-1]:
        raise NotImplementedError(
            "vmap is only supported for the ffi_call primitive when vmap_method is one of "
            "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
            f"'legacy_vectorized'. Got vmap_method={vmap_method!r}."
        )
    if any(map(is_token_aval, result_avals)):
        raise NotImplementedError(f"vmap of ffi_call {params['target_name']!r} with token results")
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    if vmap_method in ("sequential", "sequential_unrolled"):
        params = {**params, "vmap_method": vmap_method, "result_avals": result_avals}
        outs = _sequential(ffi_call_p, args, dims, size, params)
        return list(outs), [0] * len(outs)
    moved = [x if d is None else moveaxis(x, d, 0) for x, d in zip(args, dims, strict=True)]
    params["output_layouts"] = tuple(map(_batched_layout, params["output_layouts"]))
    in_layouts = params["input_layouts"]
    if vmap_method == "legacy_vectorized":
        params["input_layouts"] = tuple(
            lay if d is None else _batched_layout(lay)
            for lay, d in zip(in_layouts, dims, strict=True)
        )
    else:
        lead = size if vmap_method == "broadcast_all" else 1
        moved = [
            broadcast(x, (lead,)) if d is None else x for x, d in zip(moved, dims, strict=True)
        ]
        params["input_layouts"] = tuple(map(_batched_layout, in_layouts))
    batched = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
    outs = ffi_call_p.bind(*moved, vmap_method=vmap_method, result_avals=batched, **params)
    return list(outs), [0] * len(outs)


batching_rules[ffi_call_p] = _ffi_call_batching
