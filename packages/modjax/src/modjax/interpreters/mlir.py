"""Lowering rules in JAX's names (jax.interpreters.mlir), on modjax.lowering's table.

``register_lowering(p, rule)`` puts ``rule`` in modjax's ``lowering_rules`` (or the
table of one platform): ``rule(ctx, *operands, **params)`` gets a
``LoweringRuleContext`` (``ctx.avals_in``, ``ctx.avals_out``) and one ``ir.Value`` per
operand. As in JAX, a rule may return a sequence of values for a primitive of one
result (``[value]``, an op's ``results``): registered through this module, it is
accepted. ``lower_fun(f)`` lowers a function written with primitives, and ``ir``
and the attribute helpers build StableHLO directly. JAX's internal lowering
machinery (its module contexts for sharding, constant handlers, ``jaxpr_subcomp``)
has no counterpart and raises NotImplementedError when used.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from modjax.lowering import (
    LoweringRuleContext,
    ModuleContext,
    dense_int_array,
    dense_int_elements,
    dtype_to_ir_type,
    emit_host_callback_with_token,
    i32_attr,
    i64_attr,
    ir,
    ir_attribute,
    ir_constant,
    ir_type,
    make_context,
    token_type,
)
from modjax.lowering import lower_fun as _lower_fun
from modjax.lowering import register_lowering as _register_lowering
from modjax.lowering._mlir import module_bytecode, module_text
from modjax.sharding import Mesh
from modjax.tracecore.core import Primitive

from .._unsupported import Unsupported

__all__ = [
    "AxisContext", "ConstantHandler", "DEVICE_TO_DEVICE_TYPE", "LoweringParameters",
    "LoweringResult", "LoweringRule", "LoweringRuleContext", "Mesh", "MeshAxisName",
    "ModuleContext", "RECV_FROM_HOST_TYPE", "SEND_TO_HOST_TYPE", "SPMDAxisContext",
    "ShapePolyLoweringState", "ShardingContext", "Token", "TokenSet", "Value",
    "aval_to_ir_type", "aval_to_ir_types", "core_call_lowering", "dense_int_array",
    "dense_int_elements", "dtype_to_ir_type", "emit_python_callback", "flatten_ir_types",
    "flatten_ir_values", "i32_attr", "i64_attr", "ir", "ir_attribute", "ir_constant",
    "ir_constants", "ir_tree_registry", "ir_type_handlers", "jaxpr_subcomp", "lower_fun",
    "lower_jaxpr_to_fun", "lower_jaxpr_to_module", "lowerable_effects", "make_ir_context",
    "merge_mlir_modules", "module_to_bytecode", "module_to_string", "register_constant_handler",
    "register_lowering", "shape_tensor", "token_type", "unflatten_ir_values_like_types",
]  # fmt: skip

#: ``rule(ctx, *operands, **params) -> ir.Value or a sequence of them``.
LoweringRule = Callable[..., Any]
Value = ir.Value
#: A token value (``!stablehlo.token``).
Token = ir.Value
MeshAxisName = Any
# XLA's channel types (ChannelHandle's ``type``).
DEVICE_TO_DEVICE_TYPE = 1
SEND_TO_HOST_TYPE = 2
RECV_FROM_HOST_TYPE = 3


def _one_result_as_value(primitive: Primitive, rule: Callable) -> Callable:
    """Wrap a JAX-style rule: a one-result primitive's ``[value]`` becomes ``value``."""

    def wrapped(ctx, *operands, **params):
        out = rule(ctx, *operands, **params)
        if not isinstance(out, ir.Value) and not primitive.multiple_results:
            values = flatten_ir_values(out)
            if len(values) != 1:
                raise ValueError(
                    f"the lowering rule of {primitive.name} returned {len(values)} values for "
                    "a primitive of one result"
                )
            return values[0]
        return out

    wrapped.__name__ = getattr(rule, "__name__", "rule")
    return wrapped


def register_lowering(
    prim: Primitive, rule: Callable, platform: str | None = None, inline: bool = True,
    cacheable: bool = True,
) -> Callable:  # fmt: skip
    """Register ``rule`` as ``prim``'s lowering (jax.interpreters.mlir.register_lowering).

    ``platform`` (``"cpu"``) registers a rule for one platform, preferred there to
    the generic one. ``inline`` and ``cacheable`` are accepted for JAX's signature
    (modjax lowers every rule inline). Returns ``rule``.
    """
    _register_lowering(prim, _one_result_as_value(prim, rule), platform)
    return rule


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """Return a rule lowering ``fun``, written with primitives, inline (``mlir.lower_fun``).

    With ``multiple_results`` (JAX's default) ``fun`` returns a sequence and the rule
    a list of values; otherwise one value.
    """
    return _lower_fun(fun, multiple_results=multiple_results)


def aval_to_ir_type(*args) -> ir.Type:
    """Return the MLIR tensor type of an aval: ``aval_to_ir_type([ctx,] aval)`` (``mlir`` name).

    JAX 0.10 takes the module context first; the aval alone is accepted too.
    """
    return ir_type(args[-1])


def aval_to_ir_types(*args) -> tuple:
    """Return the MLIR types of one aval, a tuple of one type (``mlir.aval_to_ir_types``)."""
    return (ir_type(args[-1]),)


def ir_constants(val: Any, **kwargs: Any) -> tuple:
    """Emit ``val`` as constants; return a tuple of one value (``mlir.ir_constants``)."""
    return (ir_constant(val),)


def flatten_ir_values(xs: Iterable) -> list:
    """Flatten values and sequences of values to one list (``mlir.flatten_ir_values``)."""
    out: list = []
    for x in xs:
        if isinstance(x, ir.Value):
            out.append(x)
        else:
            out.extend(x)
    return out


def flatten_ir_types(xs: Iterable) -> list:
    """Flatten types and sequences of types to one list (``mlir.flatten_ir_types``)."""
    out: list = []
    for x in xs:
        if isinstance(x, ir.Type):
            out.append(x)
        else:
            out.extend(x)
    return out


def unflatten_ir_values_like_types(xs: Iterable, ys: Sequence) -> list:
    """Group flat values ``xs`` as the types ``ys`` are grouped (``mlir`` name)."""
    values = iter(xs)
    out: list = []
    for y in ys:
        if isinstance(y, ir.Type):
            out.append(next(values))
        else:
            out.append([next(values) for _ in y])
    return out


def make_ir_context() -> ir.Context:
    """Return an MLIR context with StableHLO's dialects loaded (``mlir.make_ir_context``).

    modjax keeps one per thread; this returns it.
    """
    return make_context()


def module_to_string(module: ir.Module, enable_debug_info=None) -> str:
    """Return ``module``'s StableHLO text, with locations if asked (``mlir.module_to_string``)."""
    return module_text(module, debug_info=bool(enable_debug_info))


def module_to_bytecode(module: ir.Module) -> bytes:
    """Return ``module`` as MLIR bytecode (``mlir.module_to_bytecode``)."""
    return module_bytecode(module)


def _internal(name: str, why: str) -> Unsupported:
    return Unsupported(f"jax.interpreters.mlir.{name}", why)


_MACHINERY = "part of JAX's own lowering machinery; modjax.lowering has its own"
_SHARDING = "JAX's sharding contexts of a lowering; modjax.lowering takes shardings as arguments"
AxisContext = _internal("AxisContext", _SHARDING)
SPMDAxisContext = _internal("SPMDAxisContext", _SHARDING)
ShardingContext = _internal("ShardingContext", _SHARDING)
ConstantHandler = _internal("ConstantHandler", "constants are numpy arrays in modjax")
register_constant_handler = _internal(
    "register_constant_handler", "constants are numpy arrays in modjax"
)
ir_type_handlers = _internal("ir_type_handlers", "modjax's avals map to types in ir_type")
ir_tree_registry = _internal("ir_tree_registry", _MACHINERY)
LoweringParameters = _internal("LoweringParameters", _MACHINERY)
LoweringResult = _internal("LoweringResult", _MACHINERY)
ShapePolyLoweringState = _internal("ShapePolyLoweringState", "shape polymorphism")
shape_tensor = _internal("shape_tensor", "shape polymorphism")
TokenSet = _internal("TokenSet", "modjax threads tokens with tokens_in/set_tokens")
lowerable_effects = _internal("lowerable_effects", "every modjax effect lowers")
core_call_lowering = _internal(
    "core_call_lowering", "use modjax.lowering.call_lowering (its params name the jaxpr)"
)
jaxpr_subcomp = _internal("jaxpr_subcomp", "use modjax.lowering.lower_jaxpr_inline")
lower_jaxpr_to_fun = _internal("lower_jaxpr_to_fun", "use modjax.lowering.jaxpr_function")
lower_jaxpr_to_module = _internal(
    "lower_jaxpr_to_module", "use modjax.lowering.lower_jaxpr_to_module (its own signature)"
)
merge_mlir_modules = _internal("merge_mlir_modules", _MACHINERY)


def emit_python_callback(
    ctx: LoweringRuleContext,
    callback: Callable,
    token: Any,
    operands: Sequence,
    operand_avals: Sequence,
    result_avals: Sequence,
    *,
    has_side_effect: bool,
    returns_token: bool = True,
    partitioned: bool = False,
    sharding: Any = None,
) -> tuple[list, Any, Callable]:
    """Emit a call of ``callback`` on the host (``mlir.emit_python_callback``).

    ``callback(*numpy_arrays)`` returns one array per aval of ``result_avals``
    (checked when the program runs, with JAX's RuntimeErrors). A ``token`` value
    is threaded through the call. Return ``(results, next_token, host_callable)``,
    as JAX does; pass the callable to ``ctx.module_context.add_keepalive`` if you
    keep it. ``partitioned`` calls (one per shard) and an explicit ``sharding``
    are not supported: in a partitioned program the call runs once, on device 0.
    """
    del operand_avals, returns_token  # XLA's FFI call reads the types of the operands
    if partitioned:
        raise NotImplementedError("emit_python_callback(partitioned=True): per-shard callbacks")
    if sharding is not None:
        raise NotImplementedError("emit_python_callback(sharding=...): callback shardings")
    results, next_token = emit_host_callback_with_token(
        ctx, callback, token, operands, result_avals, has_side_effect=has_side_effect
    )
    return results, next_token, ctx.module_context.host_callbacks[-1]
