"""Exported <-> bytes in JAX's format (a FlatBuffer of ``schema.SCHEMA``).

``to_fields``/``from_fields`` map an Exported to the schema's nested dicts and
back; ``flatbuf`` does the bytes. The layout of the fields is JAX 0.10's: both
the per-argument aval and sharding vectors of older readers and the
de-duplicated ``unique_avals`` with index vectors that JAX 0.10 prefers, and the
serialization version field set to 3, as JAX writes it.
"""

from __future__ import annotations

import collections
import itertools
import json
from collections.abc import Callable, Sequence
from typing import Any

from modjax.tracecore import dtypes
from modjax.tracecore.tree_util import _kind_of, tree_structure

from . import flatbuf
from .schema import (
    DTYPE_CODES,
    ROOT,
    SCHEMA,
    AbstractValueKind,
    DisabledSafetyCheckKind,
    MemorySpace,
    PyTreeDefKind,
)
from .shape_poly import parse_dim

__all__ = [
    "serialize",
    "deserialize_fields",
    "register_pytree_node_serialization",
    "register_namedtuple_serialization",
]

# What JAX writes in the buffer's version field (it serializes format 11 but
# writes 3 so that readers from before November 2025 accept it).
WRITTEN_SERIALIZATION_VERSION = 3

# node type -> (serialized name, serialize auxdata); serialized name -> (type, deserialize, build)
_serialization_registry: dict[type, tuple[str, Callable[[Any], bytes]]] = {}
_deserialization_registry: dict[str, tuple[type, Callable[[bytes], Any], Callable]] = {}

_CODE_DTYPES = {code: name for name, code in DTYPE_CODES.items()}


def register_pytree_node_serialization(
    nodetype: type,
    *,
    serialized_name: str,
    serialize_auxdata: Callable[[Any], bytes],
    deserialize_auxdata: Callable[[bytes], Any],
    from_children: Callable[[Any, Sequence[Any]], Any] | None = None,
) -> type:
    """Register how a custom pytree node's auxdata is (de)serialized (JAX's same name).

    ``from_children(aux, children)`` rebuilds a node (default: the unflatten
    function given to ``register_pytree_node``). Registering a type or a name
    twice is a ValueError. Returns ``nodetype``, so it works as a decorator.
    """
    if nodetype in _serialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for type `{nodetype}`. Previous "
            f"registration was with serialized_name `{_serialization_registry[nodetype][0]}`."
        )
    if serialized_name in _deserialization_registry:
        raise ValueError(
            f"Duplicate serialization registration for serialized_name `{serialized_name}`. "
            f"Previous registration was for type `{_deserialization_registry[serialized_name][0]}`."
        )
    if from_children is None:
        kind = _kind_of(nodetype)
        if kind is None:
            raise ValueError(
                "If `from_children` is not present, you must call first "
                f"`register_pytree_node` for `{nodetype}`"
            )
        from_children = kind.unflatten
    _serialization_registry[nodetype] = (serialized_name, serialize_auxdata)
    _deserialization_registry[serialized_name] = (nodetype, deserialize_auxdata, from_children)
    return nodetype


def _is_namedtuple(nodetype: type) -> bool:
    fields = getattr(nodetype, "_fields", None)
    return (
        issubclass(nodetype, tuple)
        and isinstance(fields, Sequence)
        and all(isinstance(f, str) for f in fields)
    )


def register_namedtuple_serialization(nodetype: type, *, serialized_name: str) -> type:
    """Register a namedtuple for serialization, its field names as auxdata (JAX's same name)."""
    if not _is_namedtuple(nodetype):
        raise ValueError(
            "Use `export.register_pytree_node_serialization` for types other than "
            "`collections.namedtuple`."
        )

    def from_children(keys, children):
        return nodetype(**dict(zip(keys, children, strict=True)))

    return register_pytree_node_serialization(
        nodetype,
        serialized_name=serialized_name,
        serialize_auxdata=lambda _: json.dumps(nodetype._fields).encode("utf-8"),  # type: ignore[attr-defined]  # a namedtuple class
        deserialize_auxdata=lambda data: json.loads(data.decode("utf-8")),
        from_children=from_children,
    )


def _serialize_ordereddict_keys(keys) -> bytes:
    if not all(isinstance(k, str) for k in keys):
        raise NotImplementedError(
            "Serialization of collections.OrderedDict is supported only when the keys are "
            f"strings. Found keys: {keys}."
        )
    return json.dumps(list(keys)).encode("utf-8")


register_pytree_node_serialization(
    collections.OrderedDict,
    serialized_name="collections.OrderedDict",
    serialize_auxdata=_serialize_ordereddict_keys,
    deserialize_auxdata=lambda data: json.loads(data.decode("utf-8")),
)

# --- pytrees -------------------------------------------------------------------------------

_BUILTIN_KINDS = {
    type(None): PyTreeDefKind.none,
    tuple: PyTreeDefKind.tuple,
    list: PyTreeDefKind.list,
    dict: PyTreeDefKind.dict,
}


def _treedef_fields(treedef) -> dict[str, Any]:
    node = treedef.node_data()
    fields: dict[str, Any] = {}
    children = treedef.children()
    if children:
        fields["children"] = [_treedef_fields(c) for c in children]
    if node is None:
        fields["kind"] = PyTreeDefKind.leaf
        return fields
    nodetype, aux = node
    if nodetype in _BUILTIN_KINDS:
        fields["kind"] = _BUILTIN_KINDS[nodetype]
        if nodetype is dict:
            for key in aux:
                if not isinstance(key, str):
                    raise TypeError(
                        "Serialization is supported only for dictionaries with string keys."
                        f" Found key {key} of type {type(key)}."
                    )
            fields["children_names"] = list(aux)
        return fields
    if nodetype not in _serialization_registry:
        raise ValueError(
            f"Cannot serialize PyTreeDef containing an unregistered type `{nodetype}`. Use "
            "`export.register_pytree_node_serialization` or "
            "`export.register_namedtuple_serialization`."
        )
    name, serialize_aux = _serialization_registry[nodetype]
    data = serialize_aux(aux)
    if not isinstance(data, bytes | bytearray):
        raise ValueError(
            "The custom serialization function for `node_type` must return a `bytes` object. "
            f"It returned a {type(data)}."
        )
    fields.update(kind=PyTreeDefKind.custom, custom_name=name, custom_auxdata=bytes(data))
    return fields


def _tree_from_fields(fields: dict[str, Any], leaves) -> Any:
    kind = fields.get("kind", 0)
    children = [_tree_from_fields(c, leaves) for c in fields.get("children", [])]
    if kind == PyTreeDefKind.leaf:
        return next(leaves)
    if kind == PyTreeDefKind.none:
        return None
    if kind == PyTreeDefKind.tuple:
        return tuple(children)
    if kind == PyTreeDefKind.list:
        return children
    if kind == PyTreeDefKind.dict:
        return dict(zip(fields.get("children_names", []), children, strict=True))
    if kind == PyTreeDefKind.custom:
        name = fields["custom_name"]
        if name not in _deserialization_registry:
            raise ValueError(
                f"Cannot deserialize a PyTreeDef containing an unregistered type `{name}`. Use "
                "`export.register_pytree_node_serialization` or "
                "`export.register_namedtuple_serialization`."
            )
        _, deserialize_aux, build = _deserialization_registry[name]
        return build(deserialize_aux(fields.get("custom_auxdata", b"")), children)
    raise ValueError(f"Cannot deserialize PyTreeDef with unknown kind: {kind}")


def treedef_from_fields(fields: dict[str, Any]):
    """Rebuild a PyTreeDef by building a tree of placeholder leaves and taking its structure."""
    return tree_structure(_tree_from_fields(fields, itertools.repeat(0.0)))


# --- avals -----------------------------------------------------------------------------------


def _aval_fields(aval) -> dict[str, Any]:
    return {
        "kind": AbstractValueKind.shapedArray,
        "shape": [str(d) for d in aval.shape],
        "dtype": DTYPE_CODES[dtypes.dtype_name(aval.dtype)],
        "memory_space": MemorySpace.Device,
    }


def _aval_from_fields(fields: dict[str, Any], make_aval):
    if fields.get("kind", 0) != AbstractValueKind.shapedArray:
        raise NotImplementedError("deserializing an Exported with token arguments or results")
    code = fields.get("dtype", 0)
    if code not in _CODE_DTYPES:
        raise NotImplementedError(f"deserializing an aval of dtype code {code} (PRNG key types)")
    name = _CODE_DTYPES[code]
    dtype = dtypes.float0 if name == "float0" else dtypes.dtype(name)
    return make_aval(tuple(parse_dim(d) for d in fields.get("shape", [])), dtype)


# --- Exported --------------------------------------------------------------------------------


def to_fields(exp, vjp_order: int = 0) -> dict[str, Any]:
    """Return the schema's fields of an Exported (with ``vjp_order`` levels of VJPs)."""
    if any(s is not None for s in (*exp.in_shardings_hlo, *exp.out_shardings_hlo)):
        raise NotImplementedError("serializing an Exported with shardings")
    if exp.ordered_effects or exp.unordered_effects:
        raise NotImplementedError("serializing an Exported with effects")
    unique: dict[Any, int] = {}
    for aval in (*exp.in_avals, *exp.out_avals):
        unique.setdefault(_aval_key(aval), len(unique))
    fields = {
        "serialization_version": WRITTEN_SERIALIZATION_VERSION,
        "function_name": exp.fun_name,
        "in_tree": _treedef_fields(exp.in_tree),
        "in_avals": [_aval_fields(a) for a in exp.in_avals],
        "out_tree": _treedef_fields(exp.out_tree),
        "out_avals": [_aval_fields(a) for a in exp.out_avals],
        "nr_devices": exp.nr_devices,
        "in_shardings": [{} for _ in exp.in_avals],
        "out_shardings": [{} for _ in exp.out_avals],
        "platforms": list(exp.platforms),
        "ordered_effects": [],
        "unordered_effects": [],
        "disabled_checks": [_disabled_check_fields(c) for c in exp.disabled_safety_checks],
        "mlir_module_serialized": exp.mlir_module_serialized,
        "calling_convention_version": exp.calling_convention_version,
        "module_kept_var_idx": list(exp.module_kept_var_idx),
        "uses_global_constants": exp.uses_global_constants,
        "unique_avals": [_aval_fields(a) for a in _unique_avals(exp)],
        "unique_abstract_meshes": [],
        "unique_named_shardings": [],
        "in_avals_idxs": [unique[_aval_key(a)] for a in exp.in_avals],
        "out_avals_idxs": [unique[_aval_key(a)] for a in exp.out_avals],
        "in_shardings_idxs": [0] * len(exp.in_avals),
        "out_shardings_idxs": [0] * len(exp.out_avals),
    }
    if vjp_order > 0:
        if not exp.has_vjp():
            raise ValueError(
                "serialization of an Exported that does not have vjps of high-enough order"
            )
        fields["vjp"] = to_fields(exp.vjp(), vjp_order - 1)
    return fields


def _aval_key(aval):
    return (tuple(str(d) for d in aval.shape), dtypes.dtype_name(aval.dtype))


def _unique_avals(exp) -> list:
    seen: dict[Any, Any] = {}
    for aval in (*exp.in_avals, *exp.out_avals):
        seen.setdefault(_aval_key(aval), aval)
    return list(seen.values())


def serialize(exp, vjp_order: int = 0) -> bytearray:
    """Return the bytes of an Exported in JAX's format (``jax.export.Exported.serialize``)."""
    return bytearray(flatbuf.encode(to_fields(exp, vjp_order), SCHEMA, ROOT))


def deserialize_fields(blob: bytes | bytearray) -> dict[str, Any]:
    """Return the schema's fields of serialized bytes (a ValueError when they are not)."""
    return flatbuf.decode(bytes(blob), SCHEMA, ROOT)


def exported_kwargs(fields: dict[str, Any], make_aval) -> dict[str, Any]:
    """Return the constructor arguments of an Exported read from the schema's fields."""
    for key in ("in_tree", "out_tree", "mlir_module_serialized"):
        if key not in fields:
            raise flatbuf.FlatBufferError(f"the bytes are not a serialized Exported (no {key})")
    for key in ("in_shardings", "out_shardings"):
        for sharding in fields.get(key, []):
            if sharding.get("named_sharding") or sharding.get("hlo_sharding_proto"):
                raise NotImplementedError("deserializing an Exported with shardings")
    if fields.get("unique_named_shardings"):
        raise NotImplementedError("deserializing an Exported with shardings")
    if fields.get("ordered_effects") or fields.get("unordered_effects"):
        raise NotImplementedError("deserializing an Exported with effects")
    unique = [_aval_from_fields(a, make_aval) for a in fields.get("unique_avals", [])]

    def avals(direction: str) -> tuple:
        if fields.get(f"{direction}_avals_idxs"):
            return tuple(unique[i] for i in fields[f"{direction}_avals_idxs"])
        return tuple(_aval_from_fields(a, make_aval) for a in fields.get(f"{direction}_avals", []))

    in_avals, out_avals = avals("in"), avals("out")
    vjp = fields.get("vjp")
    return {
        "fun_name": fields.get("function_name", ""),
        "in_tree": treedef_from_fields(fields["in_tree"]),
        "in_avals": in_avals,
        "out_tree": treedef_from_fields(fields["out_tree"]),
        "out_avals": out_avals,
        "in_shardings_hlo": (None,) * len(in_avals),
        "out_shardings_hlo": (None,) * len(out_avals),
        "nr_devices": fields.get("nr_devices") or fields.get("nr_devices_short") or 1,
        "platforms": tuple(fields.get("platforms", [])),
        "ordered_effects": (),
        "unordered_effects": (),
        "disabled_safety_checks": tuple(
            _disabled_check(c) for c in fields.get("disabled_checks", [])
        ),
        "mlir_module_serialized": fields.get("mlir_module_serialized", b""),
        "calling_convention_version": fields.get("calling_convention_version", 0),
        "module_kept_var_idx": tuple(fields.get("module_kept_var_idx", [])),
        "uses_global_constants": bool(fields.get("uses_global_constants", False)),
        "vjp_fields": vjp,
    }


def _disabled_check_fields(check) -> dict[str, Any]:
    target = check.is_custom_call()
    if target is not None:
        return {"kind": DisabledSafetyCheckKind.custom_call, "custom_call_target": target}
    if str(check) == "platform":
        return {"kind": DisabledSafetyCheckKind.platform}
    raise NotImplementedError(f"serializing DisabledSafetyCheck: {check}")


def _disabled_check(fields: dict[str, Any]) -> str:
    """Return the text form of a DisabledSafetyCheck from its fields."""
    kind = fields.get("kind", 0)
    if kind == DisabledSafetyCheckKind.platform:
        return "platform"
    if kind == DisabledSafetyCheckKind.custom_call:
        return f"custom_call:{fields.get('custom_call_target', '')}"
    raise ValueError(f"Cannot deserialize DisabledSafetyCheck with unknown kind: {kind}")
