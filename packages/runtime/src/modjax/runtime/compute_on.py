"""``compute_on``: the primitive of ``compute_on2`` and its rules (JAX 0.10.2's ``compute_on_p``).

An equation ``compute_on[jaxpr=... compute_type=... out_memory_spaces=...
compiler_options_json=...]`` applies its program 1:1 to its operands and types
each result in its memory space. Lowered, it is a ``func.call`` of the program
(``@compute_on``) carrying XLA's compute-type frontend attributes, each result
placed in its memory by ``annotate_device_placement``, as JAX emits it. Its
derivative, batching, partial-evaluation and DCE rules are the generic rules of
call primitives, with the memory spaces kept as JAX keeps them: tangents in their
primal's space, residuals in the device's, cotangents in their primal input's.

The API, ``compute_on(compute_type)`` and ``compute_on2``, is at the end (the
metapackage's ``jax.experimental.compute_on`` re-exports it). Equations traced inside
``compute_on(compute_type)`` carry the compute type; lowered, their ops get XLA's
``_xla_compute_type`` frontend attribute (``host`` for ``"device_host"``), as JAX 0.10.2
emits them. The block is part of jit's trace context, so a function is traced again
inside another block. On CPU the program runs as without it.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator

from modjax.autodiff import jvp_rules, transpose_rules
from modjax.autodiff.jvp import _call_jvp_jaxpr, jvp_call_rule
from modjax.autodiff.tangents import Zero, is_undefined_primal
from modjax.autodiff.transpose import _call_transpose_jaxpr, transpose_call_rule
from modjax.batching.api import _flatten_axes
from modjax.batching.higher_order import register_call_batching
from modjax.lowering import register_lowering
from modjax.lowering._mlir import _XLA_COMPUTE_TYPES, annotate_device_placement, ir, string_attr
from modjax.lowering.lowering import call_lowering
from modjax.runtime.dispatch import apply_primitive
from modjax.runtime.memory import space_memory_kind
from modjax.tracecore import config, core
from modjax.tracecore import source_info as source_info_util
from modjax.tracecore.abstract import MemorySpace
from modjax.tracecore.call import register_call_rules
from modjax.tracecore.jaxpr import ClosedJaxpr, subjaxprs
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.tracing import arg_aval, convert_constvars_jaxpr, trace_to_jaxpr
from modjax.tracecore.tree_util import tree_flatten, tree_map, tree_unflatten
from modjax.tracecore.wrapped_fun import debug_info, flatten_fun_nokwargs, wrap_init

__all__ = ["compute_on", "compute_on2", "compute_on_p"]

compute_on_p = core.Primitive("compute_on")
compute_on_p.multiple_results = True

_DEVICE = MemorySpace.Device


def _abstract_eval(*in_avals, jaxpr: ClosedJaxpr, out_memory_spaces, **_):
    return [
        a.update(memory_space=s) if getattr(a, "memory_space", s) is not s else a
        for a, s in zip(jaxpr.out_avals, out_memory_spaces, strict=True)
    ]


def _update_params(params, in_map, out_map, new_jaxpr, new_spaces=None):
    """Rebuild the params for a new program; new results are in ``new_spaces`` (else Device)."""
    spaces = params["out_memory_spaces"]
    fresh = iter(new_spaces or ())
    return {
        **params,
        "jaxpr": new_jaxpr,
        "out_memory_spaces": tuple(
            spaces[i] if i is not None else next(fresh, _DEVICE) for i in out_map
        ),
    }


def _jvp(primals, tangents, **params):
    # the tangent of each result is in the result's memory space
    nonzeros = tuple(type(t) is not Zero for t in tangents)
    _, _, out_nonzeros = _call_jvp_jaxpr(params["jaxpr"], nonzeros)
    spaces = [s for s, nz in zip(params["out_memory_spaces"], out_nonzeros, strict=True) if nz]

    def update(p, in_map, out_map, new_jaxpr):
        return _update_params(p, in_map, out_map, new_jaxpr, spaces)

    return jvp_call_rule(compute_on_p, primals, tangents, update_params=update, **params)


def _transpose(cts, *args, **params):
    # the cotangent of each linear operand is in that operand's memory space
    linear = tuple(is_undefined_primal(a) for a in args)
    out_zeros = tuple(type(ct) is Zero for ct in cts)
    # the program is transposed on its cotangents' types, as JAX's: one in another memory
    # space than the program's result (a result put in host memory) is its ValueError
    for ct, aval in zip(cts, params["jaxpr"].out_avals, strict=True):
        got = None if type(ct) is Zero else core.to_aval(ct)
        if got is not None and getattr(got, "memory_space", _DEVICE) is not aval.memory_space:
            raise ValueError(
                f"Expected cotangent type {aval.str_short()} but got {got.str_short()}"
            )
    _, _, in_zeros = _call_transpose_jaxpr(params["jaxpr"], linear, out_zeros)
    lin_spaces = [
        getattr(a.aval, "memory_space", _DEVICE) for a, lin in zip(args, linear, strict=True) if lin
    ]
    spaces = [s for s, z in zip(lin_spaces, in_zeros, strict=True) if not z]

    def update(p, in_map, out_map, new_jaxpr):
        return _update_params(p, in_map, out_map, new_jaxpr, spaces)

    return transpose_call_rule(compute_on_p, cts, *args, update_params=update, **params)


def _holds_compute_on(jaxpr) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive is compute_on_p:
            return True
        if any(_holds_compute_on(getattr(j, "jaxpr", j)) for j in subjaxprs(eqn.params)):
            return True
    return False


def _lowering(ctx, *args, jaxpr, compute_type, out_memory_spaces, compiler_options_json):
    """A call of ``@compute_on`` marked with the compute type; results placed in their memory."""
    if _holds_compute_on(jaxpr.jaxpr):
        raise ValueError("Nesting `compute_on` with different compute types is not allowed.")
    outs = call_lowering(ctx, *args, jaxpr=jaxpr, name="compute_on")
    if compute_type.startswith("gpu_stream:"):
        attrs = {
            "_xla_stream_annotation": string_attr(compute_type.split(":", 1)[1]),
            "inlineable": string_attr("false"),
        }
    else:
        attrs = {"_xla_compute_type": string_attr(_XLA_COMPUTE_TYPES[compute_type])}
    if compiler_options_json is not None:
        attrs["backend_config"] = string_attr(compiler_options_json)
    elif compute_type == "device":
        attrs["inlineable"] = string_attr("false")
    if outs:
        owner = outs[0].owner
        call = owner if isinstance(owner, ir.Operation) else owner.operation
        call.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(attrs)
    return [
        annotate_device_placement(out, space_memory_kind(space))
        for out, space in zip(outs, out_memory_spaces, strict=True)
    ]


compute_on_p.def_abstract_eval(_abstract_eval)
compute_on_p.def_impl(lambda *args, **params: apply_primitive(compute_on_p, *args, **params))
register_call_rules(compute_on_p, update_params=_update_params)
jvp_rules[compute_on_p] = _jvp
transpose_rules[compute_on_p] = _transpose
register_call_batching(
    compute_on_p,
    lambda params, in_dims, out_dims, new_jaxpr: {
        **params,
        "jaxpr": new_jaxpr,
    },
)
register_lowering(compute_on_p, _lowering)


def _parse_spaces(text: str) -> tuple:
    names = [n.strip() for n in text.strip().strip("()").split(",") if n.strip()]
    return tuple(MemorySpace[n.removeprefix("MemorySpace.")] for n in names)


# The printed equation reads back (its memory spaces are printed as MemorySpace.Host).
register_param_parser(compute_on_p, "out_memory_spaces", _parse_spaces)


# --- the API: jax.experimental.compute_on ---------------------------------------------------

_COMPUTE_TYPES = ("device_host", "device", "tpu_sparsecore")

# jit keys its traces on the block's compute type (JAX's compute_on_context_manager).
_context = config.make_user_context(None)


@contextlib.contextmanager
def compute_on(compute_type: str) -> Iterator[None]:
    """Trace the block's computations for ``compute_type`` (``jax.experimental.compute_on``).

    ``compute_type`` is ``"device_host"``, ``"device"``, ``"tpu_sparsecore"`` or
    ``"gpu_stream:<n>"``; anything else is JAX's ValueError, a non-string its
    TypeError. Usable as a decorator of a jitted function, as in JAX.
    """
    _check_compute_type(compute_type)
    with _context(compute_type), source_info_util.compute_type(compute_type):
        yield


def _check_compute_type(compute_type) -> None:
    if not isinstance(compute_type, str):
        raise TypeError("`compute_on`'s compute_type argument must be a string.")
    if compute_type not in _COMPUTE_TYPES and not compute_type.startswith("gpu_stream:"):
        raise ValueError(
            f"Invalid compute type {compute_type}. Current supported values are "
            "`device_host`, `device`, `tpu_sparsecore`, and `gpu_stream:#`."
        )


def compute_on2(f=None, *, compute_type, out_memory_spaces, compiler_options=None):
    """Run ``f`` for ``compute_type``, its results in ``out_memory_spaces`` (``compute_on2``).

    The counterpart of ``jax.experimental.compute_on.compute_on2``: returns a
    function that traces ``f`` (inside ``compute_on(compute_type)``, so its
    operations carry the compute type) into one ``compute_on`` equation whose
    results are typed and placed in the memory spaces ``out_memory_spaces`` names
    (a ``jax.memory.Space`` or a pytree prefix of ``f``'s results).
    ``compiler_options`` (a JSON-able dict) becomes the call's ``backend_config``.
    Without ``f``, returns a decorator. Bad compute types raise ``compute_on``'s
    errors; a nested ``compute_on2`` raises JAX's ValueError when lowered.
    """
    kwargs = {
        "compute_type": compute_type,
        "out_memory_spaces": out_memory_spaces,
        "compiler_options": compiler_options,
    }
    if f is None:
        return lambda g: compute_on2(g, **kwargs)
    _check_compute_type(compute_type)
    options_json = None if compiler_options is None else json.dumps(compiler_options)

    def wrapped(*args):  # named so, as JAX's (a jit of it lowers to @jit_wrapped)
        args_flat, in_tree = tree_flatten(args)
        info = debug_info(f, args, {})
        flat_fun, out_tree = flatten_fun_nokwargs(wrap_init(f, info), in_tree)
        with compute_on(compute_type):
            jaxpr, consts = trace_to_jaxpr(flat_fun, [arg_aval(x) for x in args_flat])
        treedef = out_tree.val
        spaces = _flat_spaces(treedef, out_memory_spaces)
        # closed-over values become leading operands, seen by the enclosing trace
        closed = ClosedJaxpr(convert_constvars_jaxpr(jaxpr), ())
        outs = compute_on_p.bind(
            *consts,
            *args_flat,
            jaxpr=closed,
            compute_type=compute_type,
            out_memory_spaces=tuple(spaces),
            compiler_options_json=options_json,
        )
        return tree_unflatten(treedef, outs)

    return wrapped


def _flat_spaces(treedef, out_memory_spaces) -> list:
    """One memory space per result leaf, broadcasting the prefix tree (JAX's ``flatten_axes``)."""
    # flatten_axes reads int (and None) leaves: the spaces go through it as their indices
    members = list(MemorySpace)
    codes = tree_map(
        lambda s: members.index(s) if isinstance(s, MemorySpace) else s, out_memory_spaces
    )
    leaves = tree_unflatten(treedef, [object() for _ in range(treedef.num_leaves)])
    flat = _flatten_axes("compute_on out_memory_spaces", leaves, codes)
    return [members[c] if type(c) is int else c for c in flat]
