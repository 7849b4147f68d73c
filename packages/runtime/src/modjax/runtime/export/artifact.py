"""StableHLO portable artifacts: what export stores, and how a call site reads it back.

An Exported holds its module as a StableHLO portable artifact (versioned VHLO
bytecode), as JAX stores it. To call one, ``specialize`` gives a module whose
public ``main`` takes exactly the caller's static argument types: it wraps the
exported ``main`` (converting arguments to its possibly dynamic types, passing
the platform index when the module was exported for several platforms) and,
when shapes are dynamic, runs jaxlib's shape refinement, which also checks the
module's shape assertions. (The jaxlib calls behind these are modjax.lowering's,
whose ``_mlir`` module is the one place that touches jaxlib's MLIR bindings.)
``inline_module`` then copies that module's functions
into the module being lowered, under fresh private names, and calls its ``main``.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from modjax.lowering import (
    deserialize_portable_artifact,
    func_dialect,
    hlo,
    ir,
    ir_constant,
    ir_types,
    make_context,
    module_bytecode,
    refine_polymorphic_shapes,
    serialize_portable_artifact,
)

__all__ = [
    "serialize_module",
    "module_text",
    "module_object",
    "specialize",
    "inline_module",
    "mark_for_export",
    "add_platform_index",
]

_inlined = itertools.count()


def mark_for_export(module: ir.Module, context: ir.Context, *, symbolic: bool = False) -> None:
    """Give a lowered module the attributes JAX's exported modules carry."""
    with context:
        attrs = module.operation.attributes
        attrs["jax.uses_shape_polymorphism"] = ir.BoolAttr.get(symbolic)
        attrs["mhlo.num_partitions"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)
        attrs["mhlo.num_replicas"] = ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 1)


def add_platform_index(module: ir.Module, context: ir.Context) -> None:
    """Give ``main`` the leading platform index argument of a multi-platform export.

    As in JAX's modules, the argument is an i32 scalar marked
    ``jax.global_constant = "_platform_index"``; the lowering is the same for every
    platform (export checks that), so the index is not read.
    """
    with context, ir.Location.unknown(context):
        table = ir.SymbolTable(module.operation)
        inner = table["main"]
        table.set_symbol_name(inner, "_modjax_platforms_main")
        table.set_visibility(inner, "private")
        inner_type = ir.FunctionType(ir.TypeAttr(inner.attributes["function_type"]).value)
        index_type = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        wrapper = func_dialect.FuncOp(
            "main",
            ir.FunctionType.get([index_type, *inner_type.inputs], list(inner_type.results)),
            ip=ir.InsertionPoint.at_block_begin(module.body),
        )
        wrapper.attributes["sym_visibility"] = ir.StringAttr.get("public")
        no_attrs = ir.DictAttr.get({})
        index_attrs = ir.DictAttr.get({"jax.global_constant": ir.StringAttr.get("_platform_index")})
        wrapper.arg_attrs = ir.ArrayAttr.get([index_attrs] + [no_attrs] * len(inner_type.inputs))
        block = wrapper.add_entry_block()
        with ir.InsertionPoint(block):
            call = func_dialect.CallOp(
                list(inner_type.results),
                ir.FlatSymbolRefAttr.get("_modjax_platforms_main"),
                list(block.arguments)[1:],
            )
            func_dialect.ReturnOp(list(call.results))


def serialize_module(module: ir.Module, context: ir.Context) -> bytes:
    """Return ``module`` as a portable artifact readable by StableHLO consumers 4 weeks old."""
    return serialize_portable_artifact(module, context)


def module_object(serialized: bytes) -> ir.Module:
    """Return a portable artifact as an MLIR module (in a context of its own)."""
    context = make_context()
    with context:
        return deserialize_portable_artifact(serialized, context)


def module_text(serialized: bytes) -> str:
    """Return the StableHLO text of a portable artifact."""
    return str(module_object(serialized))


def _is_dynamic(types) -> bool:
    return any(
        isinstance(t, ir.RankedTensorType) and not ir.RankedTensorType(t).has_static_shape
        for t in types
    )


def specialize(
    serialized: bytes,
    arg_avals: Sequence,
    out_avals: Sequence,
    *,
    platform_index: int | None,
    name: str,
) -> str | bytes:
    """Return a static module (text or bytecode) calling the exported ``main`` on ``arg_avals``.

    ``platform_index`` is passed as the leading argument of a module exported
    for several platforms (None otherwise). Raises ValueError when shape
    refinement fails (for instance a failed shape assertion), naming ``name``.
    """
    context = make_context()
    with context, ir.Location.unknown(context):
        module = deserialize_portable_artifact(serialized, context)
        table = ir.SymbolTable(module.operation)
        inner = table["main"]
        table.set_symbol_name(inner, "_modjax_exported_main")
        table.set_visibility(inner, "private")
        inner_type = ir.FunctionType(ir.TypeAttr(inner.attributes["function_type"]).value)
        in_types = ir_types(arg_avals)
        out_types = ir_types(out_avals)
        wrapper = func_dialect.FuncOp(
            "main",
            ir.FunctionType.get(in_types, out_types),
            ip=ir.InsertionPoint.at_block_begin(module.body),
        )
        wrapper.attributes["sym_visibility"] = ir.StringAttr.get("public")
        block = wrapper.add_entry_block()
        with ir.InsertionPoint(block):
            operands = []
            if platform_index is not None:
                index = ir_constant(platform_index, "int32")
                operands.append(_convert(index, inner_type.inputs[0]))
            for arg, typ in zip(block.arguments, inner_type.inputs[len(operands) :], strict=True):
                operands.append(_convert(arg, typ))
            call = func_dialect.CallOp(
                list(inner_type.results),
                ir.FlatSymbolRefAttr.get("_modjax_exported_main"),
                operands,
            )
            func_dialect.ReturnOp(
                [_convert(r, t) for r, t in zip(call.results, out_types, strict=True)]
            )
        if not _is_dynamic([*inner_type.inputs, *inner_type.results]):
            return str(module)
        bytecode = module_bytecode(module)
    try:
        refined = refine_polymorphic_shapes(bytecode)
    except Exception as e:  # jaxlib raises its own error types
        raise ValueError(f"calling the exported function '{name}': {e}") from e
    return refined


def _convert(value: ir.Value, typ: ir.Type) -> ir.Value:
    return value if value.type == typ else hlo.convert(typ, value)


def inline_module(
    module_ctx, source: str | bytes, operands: Sequence[ir.Value], out_avals: Sequence
) -> list[ir.Value]:
    """Copy a module's functions (text or bytecode) into the one being lowered; call its main."""
    prefix = f"exported{next(_inlined)}_"
    sub = ir.Module.parse(source, module_ctx.context)
    table = ir.SymbolTable(sub.operation)
    funcs = [op for op in sub.body.operations if "sym_name" in op.attributes]
    for op in funcs:
        old = ir.StringAttr(op.attributes["sym_name"]).value
        ir.SymbolTable.replace_all_symbol_uses(old, prefix + old, sub.operation)
        table.set_symbol_name(op, prefix + old)
        table.set_visibility(op, "private")
    # Cloned, not moved: a moved operation would be owned (and freed) twice.
    end = ir.InsertionPoint(module_ctx.module.body)
    for op in funcs:
        op.operation.clone(ip=end)
    call = func_dialect.CallOp(
        ir_types(out_avals), ir.FlatSymbolRefAttr.get(prefix + "main"), list(operands)
    )
    return list(call.results)
