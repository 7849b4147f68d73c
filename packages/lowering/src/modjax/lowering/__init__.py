"""modjax.lowering: jaxprs to StableHLO MLIR modules, with jaxlib's MLIR bindings.

The counterpart of JAX's ``jax.interpreters.mlir``. A primitive's package
registers how it lowers (``register_lowering(p, rule)``); ``lower_jaxpr_to_module``
turns a ClosedJaxpr into a module whose public ``main`` XLA compiles. Rule
authors get the MLIR bindings from here (``ir``, ``hlo`` for StableHLO, ``chlo``,
``func_dialect``), never from jaxlib directly, so a jaxlib upgrade touches one
module (``_mlir.py``).
"""

from ._mlir import (
    channel_handle,
    chlo,
    custom_call,
    dense_bool_array,
    dense_elements,
    dense_int_array,
    dense_int_elements,
    deserialize_portable_artifact,
    dtype_to_ir_type,
    func_dialect,
    hlo,
    i32_attr,
    i64_attr,
    in_compute_type,
    ir,
    ir_attribute,
    ir_constant,
    ir_type,
    ir_types,
    make_context,
    manual_computation,
    module_bytecode,
    refine_polymorphic_shapes,
    sdy_return,
    serialize_portable_artifact,
    sharding_constraint,
    token_type,
    u8_attr,
)
from .host_callbacks import (
    emit_buffer_callback,
    emit_host_callback,
    emit_host_callback_with_token,
)
from .lapack import lapack_target
from .lowering import (
    LoweredModule,
    LoweringError,
    LoweringRuleContext,
    ModuleContext,
    call_jaxpr,
    call_lowering,
    jaxpr_function,
    lower_fun,
    lower_jaxpr_inline,
    lower_jaxpr_to_module,
    lowering_rules,
    platform_lowering_rules,
    region_tokens,
    register_lowering,
    sdy_mesh_symbol,
    set_tokens,
    tokens_in,
)

__all__ = [
    # rule tables and errors
    "lowering_rules",
    "platform_lowering_rules",
    "register_lowering",
    "LoweringError",
    # lowering
    "ModuleContext",
    "LoweringRuleContext",
    "LoweredModule",
    "lower_jaxpr_to_module",
    "sdy_mesh_symbol",
    "lower_jaxpr_inline",
    "call_jaxpr",
    "call_lowering",
    "jaxpr_function",
    "lower_fun",
    "sharding_constraint",
    # effects: tokens of ordered effects, host callbacks
    "tokens_in",
    "set_tokens",
    "region_tokens",
    "token_type",
    "emit_buffer_callback",
    "emit_host_callback",
    "emit_host_callback_with_token",
    "manual_computation",
    "sdy_return",
    "channel_handle",
    # helpers for rule authors
    "make_context",
    "dtype_to_ir_type",
    "ir_type",
    "ir_types",
    "ir_constant",
    "dense_elements",
    "dense_int_array",
    "dense_bool_array",
    "dense_int_elements",
    "i32_attr",
    "i64_attr",
    "u8_attr",
    "custom_call",
    "in_compute_type",
    "ir_attribute",
    "lapack_target",
    "module_bytecode",
    # StableHLO portable artifacts (runtime's export)
    "serialize_portable_artifact",
    "deserialize_portable_artifact",
    "refine_polymorphic_shapes",
    # the MLIR bindings
    "ir",
    "hlo",
    "chlo",
    "func_dialect",
]

__version__ = "0.1.0"
