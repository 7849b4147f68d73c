"""``compute_on``: the primitive of ``compute_on2`` and its rules (JAX 0.10.2's ``compute_on_p``).

An equation ``compute_on[jaxpr=... compute_type=... out_memory_spaces=...
compiler_options_json=...]`` applies its program 1:1 to its operands and types
each result in its memory space. Lowered, it is a ``func.call`` of the program
(``@compute_on``) carrying XLA's compute-type frontend attributes, each result
placed in its memory by ``annotate_device_placement``, as JAX emits it. Its
derivative, batching, partial-evaluation and DCE rules are the generic rules of
call primitives, with the memory spaces kept as JAX keeps them: tangents in their
primal's space, residuals in the device's, cotangents in their primal input's.
"""

from __future__ import annotations

from modjax.autodiff import jvp_rules, transpose_rules
from modjax.autodiff.jvp import _call_jvp_jaxpr, jvp_call_rule
from modjax.autodiff.tangents import Zero, is_undefined_primal
from modjax.autodiff.transpose import _call_transpose_jaxpr, transpose_call_rule
from modjax.batching.higher_order import register_call_batching
from modjax.lowering import register_lowering
from modjax.lowering._mlir import _XLA_COMPUTE_TYPES, annotate_device_placement, ir, string_attr
from modjax.lowering.lowering import call_lowering
from modjax.runtime.dispatch import apply_primitive
from modjax.runtime.memory import space_memory_kind
from modjax.tracecore import core
from modjax.tracecore.abstract import MemorySpace
from modjax.tracecore.call import register_call_rules
from modjax.tracecore.jaxpr import ClosedJaxpr, subjaxprs
from modjax.tracecore.parse import register_param_parser

__all__ = ["compute_on_p"]

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
