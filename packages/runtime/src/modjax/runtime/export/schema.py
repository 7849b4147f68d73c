"""JAX's export schema (``jax/_src/export/serialization.fbs``) as a table for ``flatbuf``.

Field slots and kinds are those of the schema JAX 0.10 reads and writes
(serialization version 11, written with the version number 3 in the buffer,
as JAX does for the sake of old readers). Enum values are JAX's too.
"""

from __future__ import annotations

__all__ = ["SCHEMA", "ROOT", "PyTreeDefKind", "AbstractValueKind", "DTYPE_CODES"]

ROOT = "Exported"

SCHEMA = {
    "PyTreeDef": {
        "kind": (0, "i8"),
        "children": (1, "[table:PyTreeDef]"),
        "children_names": (2, "[string]"),
        "custom_name": (3, "string"),
        "custom_auxdata": (4, "bytes"),
    },
    "AbstractDevice": {
        "device_kind": (0, "string"),
        "num_cores": (1, "u32?"),
        "platform": (2, "string"),
    },
    "AbstractMesh": {
        "axis_sizes": (0, "[u32]"),
        "axis_names": (1, "[string]"),
        "axis_types": (2, "[i8]"),
        "abstract_device": (3, "table:AbstractDevice"),
    },
    "PartitionSpecOneAxis": {"axes": (0, "[string]")},
    "PartitionSpec": {
        "partitions": (0, "[table:PartitionSpecOneAxis]"),
        "reduced": (1, "[string]"),
        "unreduced": (2, "[string]"),
    },
    "NamedSharding": {
        "mesh": (0, "table:AbstractMesh"),
        "spec": (1, "table:PartitionSpec"),
        "memory_kind": (2, "string"),
        "abstract_mesh_idx": (3, "u32"),
    },
    "AbstractValue": {
        "kind": (0, "i8"),
        "shape": (1, "[string]"),
        "dtype": (2, "i8"),
        "memory_space": (3, "i8"),
    },
    "Sharding": {
        "kind": (0, "i8"),
        "hlo_sharding_proto": (1, "bytes"),
        "named_sharding": (2, "table:NamedSharding"),
    },
    "Effect": {"type_name": (0, "string")},
    "DisabledSafetyCheck": {"kind": (0, "i8"), "custom_call_target": (1, "string")},
    "Exported": {
        "serialization_version": (0, "u16"),
        "function_name": (1, "string"),
        "in_tree": (2, "table:PyTreeDef"),
        "in_avals": (3, "[table:AbstractValue]"),
        "out_tree": (4, "table:PyTreeDef"),
        "out_avals": (5, "[table:AbstractValue]"),
        "nr_devices_short": (6, "i16"),
        "in_shardings": (7, "[table:Sharding]"),
        "out_shardings": (8, "[table:Sharding]"),
        "platforms": (9, "[string]"),
        "ordered_effects": (10, "[table:Effect]"),
        "unordered_effects": (11, "[table:Effect]"),
        "disabled_checks": (12, "[table:DisabledSafetyCheck]"),
        "mlir_module_serialized": (13, "bytes"),
        "calling_convention_version": (14, "u16"),
        "module_kept_var_idx": (15, "[u16]"),
        "uses_global_constants": (16, "bool"),
        "vjp": (17, "table:Exported"),
        "nr_devices": (18, "u32"),
        "unique_avals": (19, "[table:AbstractValue]"),
        "unique_abstract_meshes": (20, "[table:AbstractMesh]"),
        "unique_named_shardings": (21, "[table:NamedSharding]"),
        "in_avals_idxs": (22, "[u32]"),
        "out_avals_idxs": (23, "[u32]"),
        "in_shardings_idxs": (24, "[u32]"),
        "out_shardings_idxs": (25, "[u32]"),
    },
}


class PyTreeDefKind:
    leaf, none, tuple, list, dict, custom = range(6)


class AbstractValueKind:
    shapedArray, abstractToken = range(2)


class MemorySpace:
    Missing, Device, Host, Any = range(4)


class DisabledSafetyCheckKind:
    platform, custom_call, shape_assertions = range(3)


# dtype name (as tracecore's dtypes name it) -> the schema's DType code
DTYPE_CODES = {
    "bool": 0,
    "int8": 1,
    "int16": 2,
    "int32": 3,
    "int64": 4,
    "uint8": 5,
    "uint16": 6,
    "uint32": 7,
    "uint64": 8,
    "float16": 9,
    "float32": 10,
    "float64": 11,
    "complex64": 12,
    "complex128": 13,
    "bfloat16": 14,
    "int4": 15,
    "uint4": 16,
    "float8_e4m3b11fnuz": 17,
    "float8_e4m3fn": 18,
    "float8_e4m3fnuz": 19,
    "float8_e5m2": 20,
    "float8_e5m2fnuz": 21,
    "float0": 22,
    "float8_e4m3": 23,
    "float8_e3m4": 24,
    "float8_e8m0fnu": 25,
    "float4_e2m1fn": 26,
}
