"""``buffer_callback``: a host callback that fills its results' device buffers in place.

``buffer_callback(callback, result_shape_dtypes, ...)`` returns a function binding
``buffer_callback_p``; lowered, it is XLA's ``xla_buffer_python_cpu_callback`` (the
buffer variant of the host callback), which calls
``callback(ctx, out, *args, **kwargs)`` with XLA's execution context, the results'
buffers (as the pytree ``result_shape_dtypes``) to overwrite and the arguments'
buffers (as the pytree of the call's arguments), as JAX 0.10's does. Not
differentiable; under vmap it follows ``vmap_method`` as ``pure_callback`` does.
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from modjax.autodiff import jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.lowering import emit_buffer_callback, register_lowering
from modjax.runtime.dispatch import apply_primitive
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.effects import Effect
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

from .callbacks import vmap_method_batching

__all__ = ["buffer_callback", "buffer_callback_p"]

BufferCallbackEffect = Effect("BufferCallback")

buffer_callback_p = Primitive("buffer_callback")
buffer_callback_p.multiple_results = True
buffer_callback_p.def_abstract_eval(lambda *avals, result_avals, **_: list(result_avals))
buffer_callback_p.def_effects(
    lambda *, has_side_effect, **_: (BufferCallbackEffect,) if has_side_effect else ()
)
buffer_callback_p.def_impl(
    lambda *args, **params: apply_primitive(buffer_callback_p, *args, **params)
)


def _lowering(
    ctx, *args, callback, result_avals, in_tree, out_tree, has_side_effect,
    input_output_aliases, **_,
):  # fmt: skip
    def on_host(exec_ctx, *buffers):
        ins, outs = buffers[: in_tree.num_leaves], buffers[in_tree.num_leaves :]
        py_args, py_kwargs = tree_unflatten(in_tree, list(ins))
        if (
            callback(exec_ctx, tree_unflatten(out_tree, list(outs)), *py_args, **py_kwargs)
            is not None
        ):
            raise ValueError("buffer_callback callback must not return any values.")
        return ()

    return emit_buffer_callback(
        ctx,
        on_host,
        args,
        result_avals,
        has_side_effect=has_side_effect,
        operand_output_aliases=dict(input_output_aliases),
    )


def _jvp(*args, **kwargs):
    raise ValueError(
        "Buffer callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks "
        "while taking gradients."
    )


def _transpose(*args, **kwargs):
    raise ValueError(
        "Buffer callbacks do not support transpose. Please use `jax.custom_vjp` to use "
        "callbacks while taking gradients."
    )


register_lowering(buffer_callback_p, _lowering)
jvp_rules[buffer_callback_p] = _jvp
transpose_rules[buffer_callback_p] = _transpose
batching_rules[buffer_callback_p] = functools.partial(vmap_method_batching, buffer_callback_p)


def buffer_callback(
    callback: Callable[..., None],
    result_shape_dtypes: object,
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_output_aliases: dict[int, int] | None = None,
    command_buffer_compatible: bool = False,
):
    """Return a function running ``callback`` on device buffers (JAX's ``buffer_callback``).

    ``callback(ctx, out, *args, **kwargs)`` must overwrite the buffers of ``out`` (a pytree
    shaped as ``result_shape_dtypes``) and return None; ``input_output_aliases`` maps
    flat input indices to the outputs that reuse their buffers. ``command_buffer_compatible``
    only matters on GPU.
    """
    flat_shapes, out_tree = tree_flatten(result_shape_dtypes)
    result_avals = tuple(ShapedArray(tuple(x.shape), x.dtype) for x in flat_shapes)

    def call(*args, **kwargs):
        flat_args, in_tree = tree_flatten((args, kwargs))
        in_avals = [to_aval(x) for x in flat_args]
        aliases = []
        for i, o in sorted((input_output_aliases or {}).items()):
            i, o = int(i), int(o)
            if i >= len(args):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' with input index {i} "
                    f"outside the range [0, {len(args)})."
                )
            if o >= len(result_avals):
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' with output index {o} "
                    f"outside the range [0, {len(result_avals)})."
                )
            a, b = in_avals[i], result_avals[o]
            if a.shape != b.shape or a.dtype != b.dtype:
                raise ValueError(
                    f"input_output_aliases contains the mapping '{i}:{o}' referring to an input "
                    f"with abstract value {a} and an output with a different abstract value {b}."
                )
            aliases.append((i, o))
        outs = buffer_callback_p.bind(
            *flat_args,
            callback=callback,
            result_avals=result_avals,
            in_tree=in_tree,
            out_tree=out_tree,
            vmap_method=vmap_method,
            has_side_effect=has_side_effect,
            input_output_aliases=tuple(aliases),
            command_buffer_compatible=command_buffer_compatible,
        )
        return tree_unflatten(out_tree, outs)

    return call
