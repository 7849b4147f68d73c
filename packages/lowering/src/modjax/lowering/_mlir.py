"""Every use of jaxlib's MLIR bindings, behind small functions.

This is the one module that imports ``jaxlib.mlir``: a jaxlib upgrade that moves
or renames something touches only this file. The rest of modjax.lowering, and
the rule authors of higher packages, use ``ir``, ``hlo`` (the StableHLO dialect),
``chlo`` and ``func_dialect`` as re-exported here.

Contexts are expensive to make (about 10 ms with the dialects loaded), so each
thread keeps one (``make_context``) with its caches of element and tensor types.
An MLIR context never frees the attributes it has uniqued, so large constants
embedded in modules would accumulate there forever: once a thread's context has
received more than ``CONTEXT_BYTES_LIMIT`` bytes of constants, the next
top-level lowering starts a fresh context (the old one lives on while modules
built in it are referenced).
"""

from __future__ import annotations

import importlib
import io
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np
from jaxlib.mlir import ir

from modjax.tracecore import dtypes
from modjax.tracecore.abstract import physical_aval
from modjax.tracecore.dtypes import ExtendedDType
from modjax.tracecore.tokens import AbstractToken

__all__ = [
    "ir",
    "hlo",
    "chlo",
    "func_dialect",
    "make_context",
    "dtype_to_ir_type",
    "ir_type",
    "ir_types",
    "dense_elements",
    "ir_constant",
    "dense_int_array",
    "dense_bool_array",
    "dense_int_elements",
    "i32_attr",
    "i64_attr",
    "string_attr",
    "bool_attr",
    "u8_attr",
    "ir_attribute",
    "custom_call",
    "sdy_mesh_op",
    "sharding_attr",
    "sharding_constraint",
    "manual_computation",
    "channel_handle",
    "sdy_return",
    "module_bytecode",
    "serialize_portable_artifact",
    "deserialize_portable_artifact",
    "refine_polymorphic_shapes",
    "register_lapack_targets",
]


class _LazyModule:
    """A jaxlib module imported when first needed: when a context is made, or when an
    attribute read from it is first used.

    The dialect bindings (StableHLO's above all) take longer to import than the rest of
    modjax.lowering together, and a program needs them only once it lowers something.
    Rule modules read attributes at import (``_hlo_unary(hlo.negate)``): before the
    import those come back as :class:`_LazyAttribute`, resolved on first call.
    """

    def __init__(self, name: str):
        self._name = name
        self._module: Any = None

    def load(self) -> Any:
        """Import the module (once) and return it."""
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return self._module

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            return _LazyAttribute(self, attr)
        value = getattr(self._module, attr)
        setattr(self, attr, value)  # later reads are plain attribute reads
        return value

    def __repr__(self) -> str:
        return f"<module {self._name!r}, imported on first use>"


class _LazyAttribute:
    """``module.attr`` of a :class:`_LazyModule` read before its import; resolved when used."""

    __slots__ = ("_owner", "_attr")

    def __init__(self, owner: _LazyModule, attr: str):
        self._owner = owner
        self._attr = attr

    def _resolve(self) -> Any:
        return getattr(self._owner.load(), self._attr)

    def __call__(self, *args, **kwargs):
        return self._resolve()(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resolve(), name)


hlo = _LazyModule("jaxlib.mlir.dialects.stablehlo")
chlo = _LazyModule("jaxlib.mlir.dialects.chlo")
sdy = _LazyModule("jaxlib.mlir.dialects.sdy")
func_dialect = _LazyModule("jaxlib.mlir.dialects.func")
_jax_mlir_ext = _LazyModule("jaxlib.mlir._mlir_libs._jax_mlir_ext")

# Bytes of non-splat constants a thread's context may hold before it is replaced.
CONTEXT_BYTES_LIMIT = 256 * 2**20
# Entries of the tensor-type cache kept per thread before it is emptied.
_TYPE_CACHE_LIMIT = 20_000


# --- contexts ---------------------------------------------------------------------------


def _new_context() -> ir.Context:
    for module in (hlo, chlo, sdy, func_dialect, _jax_mlir_ext):
        module.load()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    for dialect in (hlo, chlo, sdy):
        dialect.register_dialect(context)
    return context


class _ThreadState(threading.local):
    def __init__(self):
        self.context: ir.Context | None = None
        self.element_types: dict[Any, ir.Type] = {}
        self.tensor_types: dict[tuple, ir.RankedTensorType] = {}
        self.embedded_bytes = 0
        self.depth = 0  # nesting of lowerings in progress on this thread


_state = _ThreadState()


def make_context() -> ir.Context:
    """Return this thread's MLIR context with the StableHLO dialects loaded.

    The counterpart of JAX's ``mlir.make_ir_context``, except that the context is
    made once per thread and reused, as are the types created in it.
    """
    context = _state.context
    if context is None:
        context = _state.context = _new_context()
    return context


class lowering_scope:  # noqa: N801 - used like a function in a ``with``
    """Enter this thread's context for one lowering; replace it first if it grew too big."""

    __slots__ = ("context",)

    def __enter__(self) -> ir.Context:
        state = _state
        if state.depth == 0 and state.embedded_bytes > CONTEXT_BYTES_LIMIT:
            state.context = None
            state.element_types = {}
            state.tensor_types = {}
            state.embedded_bytes = 0
        state.depth += 1
        self.context = make_context()
        self.context.__enter__()
        return self.context

    def __exit__(self, *exc):
        _state.depth -= 1
        return self.context.__exit__(*exc)


# --- types --------------------------------------------------------------------------------

_FLOAT_TYPES = {
    "bfloat16": ir.BF16Type,
    "float16": ir.F16Type,
    "float32": ir.F32Type,
    "float64": ir.F64Type,
    "float4_e2m1fn": ir.Float4E2M1FNType,
    "float6_e2m3fn": ir.Float6E2M3FNType,
    "float6_e3m2fn": ir.Float6E3M2FNType,
    "float8_e3m4": ir.Float8E3M4Type,
    "float8_e4m3": ir.Float8E4M3Type,
    "float8_e4m3b11fnuz": ir.Float8E4M3B11FNUZType,
    "float8_e4m3fn": ir.Float8E4M3FNType,
    "float8_e4m3fnuz": ir.Float8E4M3FNUZType,
    "float8_e5m2": ir.Float8E5M2Type,
    "float8_e5m2fnuz": ir.Float8E5M2FNUZType,
    "float8_e8m0fnu": ir.Float8E8M0FNUType,
}


def _make_element_type(dtype: np.dtype, context: ir.Context) -> ir.Type:
    if dtype == np.bool_ or dtype == dtypes.float0:
        # float0 (the tangent type of integers) is lowered as booleans, as in JAX.
        return ir.IntegerType.get_signless(1, context=context)
    name = dtype.name
    if name in _FLOAT_TYPES:
        return _FLOAT_TYPES[name].get(context=context)
    if name == "complex64":
        return ir.ComplexType.get(ir.F32Type.get(context=context))
    if name == "complex128":
        return ir.ComplexType.get(ir.F64Type.get(context=context))
    if name.startswith(("int", "uint")):
        bits = dtypes.itemsize_bits(dtype)
        if name.startswith("u"):
            return ir.IntegerType.get_unsigned(bits, context=context)
        return ir.IntegerType.get_signless(bits, context=context)
    raise TypeError(f"modjax.lowering: no MLIR element type for dtype {dtype}")


def dtype_to_ir_type(dtype: Any) -> ir.Type:
    """Return the MLIR element type of ``dtype`` (jax.interpreters.mlir.dtype_to_ir_type).

    Booleans (and float0) become ``i1``, signed integers signless ``iN``, unsigned
    ones ``uiN``; every float8/float6/float4 type of ml_dtypes is supported.
    The type lives in this thread's context (``make_context``).
    """
    cache = _state.element_types
    ir_t = cache.get(dtype)
    if ir_t is None:
        try:
            np_dtype = np.dtype(dtype)
        except TypeError:
            raise TypeError(f"modjax.lowering: no MLIR element type for dtype {dtype!r}") from None
        ir_t = cache.get(np_dtype)
        if ir_t is None:
            ir_t = cache[np_dtype] = _make_element_type(np_dtype, make_context())
        cache[dtype] = ir_t
    return ir_t


def _tensor_type(shape: tuple[int, ...], dtype: Any) -> ir.RankedTensorType:
    cache = _state.tensor_types
    key = (shape, dtype)
    ir_t = cache.get(key)
    if ir_t is None:
        if len(cache) >= _TYPE_CACHE_LIMIT:
            cache.clear()
        element_type = dtype_to_ir_type(dtype)
        ir_t = cache[key] = ir.RankedTensorType.get(
            shape, element_type, loc=ir.Location.unknown(element_type.context)
        )
    return ir_t


def ir_type(aval) -> ir.Type:
    """Return the tensor type of an abstract value (JAX's ``mlir.aval_to_ir_type``).

    Only shape and dtype count: weak types do not exist in HLO. An aval of an
    extended dtype (a PRNG key) has the type of its data, which tracecore's
    ``physical_element_avals`` table gives for each extended dtype; a token's is
    ``!stablehlo.token``.
    """
    if type(aval) is AbstractToken:
        return hlo.TokenType.get()
    if isinstance(aval.dtype, ExtendedDType):
        aval = physical_aval(aval)
    return _tensor_type(aval.shape, aval.dtype)


def ir_types(avals: Sequence[Any]) -> list[ir.Type]:
    """Return the tensor types of several abstract values."""
    return [ir_type(a) for a in avals]


# --- constants ----------------------------------------------------------------------------

# Dtypes whose constants make XLA abort the process when it compiles them.
_NO_CONSTANTS = frozenset({"float6_e2m3fn", "float6_e3m2fn"})

# Unsigned integer views used to compare elements bit for bit, by item size.
_UINT_OF_SIZE = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _is_uniform(flat: np.ndarray) -> bool:
    """Tell whether every element of a contiguous 1-d array has the same bits."""
    if flat.size <= 1:
        return True
    itemsize = flat.dtype.itemsize
    view_type = _UINT_OF_SIZE.get(itemsize)
    if view_type is None:  # complex128: compare 8-byte halves pairwise
        bits = flat.view(np.uint64).reshape(flat.size, itemsize // 8)
        return bool((bits == bits[0]).all())
    bits = flat.view(view_type)
    first = bits[0]
    # Cheap rejections before the full pass.
    if bits[-1] != first or bits[flat.size // 2] != first:
        return False
    return bool((bits == first).all())


def dense_elements(array: np.ndarray) -> ir.DenseElementsAttr:
    """Return a dense elements attribute holding ``array``'s values (JAX's array attribute).

    The buffer is handed to MLIR as a whole, never element by element; an array
    whose elements are all equal becomes a splat (``dense<1.0> : tensor<1000xf32>``).
    Must be called inside a lowering (or ``with make_context():``).
    """
    if array.dtype == dtypes.float0:
        array = np.zeros(array.shape, np.bool_)
    elif array.dtype.name in _NO_CONSTANTS:
        # XLA aborts the whole process on a constant of these types (jaxlib 0.10.2).
        raise TypeError(f"XLA cannot compile constants of dtype {array.dtype.name}")
    element_type = dtype_to_ir_type(array.dtype)
    shape = array.shape
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.size > 1 and _is_uniform(flat):
        flat = flat[:1]
    else:
        _state.embedded_bytes += flat.nbytes
    return ir.DenseElementsAttr.get(flat, type=element_type, shape=shape)


def ir_constant(value: Any, dtype: Any = None) -> ir.Value:
    """Emit a ``stablehlo.constant`` of ``value``; return its result (JAX's ``mlir.ir_constant``).

    ``value`` is a numpy array, a numpy scalar or a Python scalar; ``dtype``
    converts it first (give it for Python scalars, whose numpy default is 64-bit).
    A broadcast numpy view (a stride of 0, as ``np.broadcast_to`` makes) is
    emitted as its small core plus ``stablehlo.broadcast_in_dim``.
    Must be called at an insertion point inside a lowering.
    """
    array = np.asarray(value, dtype=dtype)
    strides = array.strides
    if array.ndim and array.size > 1 and 0 in strides:
        kept = [axis for axis, stride in enumerate(strides) if stride != 0]
        core = array[tuple(slice(None) if stride != 0 else 0 for stride in strides)]
        return hlo.broadcast_in_dim(
            _tensor_type(array.shape, array.dtype),
            hlo.constant(dense_elements(core)),
            dense_int_array(kept),
        )
    return hlo.constant(dense_elements(array))


# --- attributes ---------------------------------------------------------------------------


def dense_int_array(values: Sequence[int]) -> ir.DenseI64ArrayAttr:
    """Return an ``array<i64: ...>`` attribute (JAX's ``mlir.dense_int_array``).

    This is what StableHLO ops take for dimension lists (broadcast dims,
    permutations, slice bounds, ...).
    """
    return ir.DenseI64ArrayAttr.get([int(v) for v in values])


def dense_bool_array(values: Sequence[bool]) -> ir.DenseBoolArrayAttr:
    """Return an ``array<i1: ...>`` attribute (JAX's ``mlir.dense_bool_array``)."""
    return ir.DenseBoolArrayAttr.get([bool(v) for v in values])


def dense_int_elements(values: Sequence[int]) -> ir.DenseIntElementsAttr:
    """Return a ``dense<...> : tensor<Nxi64>`` attribute (JAX's ``mlir.dense_int_elements``)."""
    array = np.asarray(values, np.int64)
    return ir.DenseElementsAttr.get(array, type=ir.IntegerType.get_signless(64))


def i32_attr(value: int) -> ir.IntegerAttr:
    """Return an ``i32`` integer attribute (JAX's ``mlir.i32_attr``)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(value))


def i64_attr(value: int) -> ir.IntegerAttr:
    """Return an ``i64`` integer attribute (JAX's ``mlir.i64_attr``)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(value))


def string_attr(value: str) -> ir.StringAttr:
    """Return a string attribute."""
    return ir.StringAttr.get(value)


def bool_attr(value: bool) -> ir.BoolAttr:
    """Return a boolean attribute."""
    return ir.BoolAttr.get(bool(value))


def u8_attr(value: int | str) -> ir.IntegerAttr:
    """Return a ``ui8`` attribute; a one-character string gives its code (LAPACK's ``'L'``)."""
    if isinstance(value, str):
        value = ord(value)
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(8), int(value))


def ir_attribute(value: Any) -> ir.Attribute:
    """Return the MLIR attribute of a Python or numpy value (JAX's ``mlir.ir_attribute``).

    What an FFI handler receives as a named attribute: ``bool`` is ``true``/``false``,
    ``int`` an ``i64``, ``float`` an ``f64``, ``str`` a string; a numpy scalar keeps
    its dtype (``np.float32(1.5)`` is ``1.5 : f32``, ``np.uint16(7)`` is ``7 : ui16``);
    a numpy array (0-d included) is a dense elements attribute of its dtype; a dict is
    a dictionary of converted values; an ``ir.Attribute`` is kept. Nothing is
    canonicalized for x64. Raise TypeError naming any other type.
    """
    if isinstance(value, ir.Attribute):
        return value
    if isinstance(value, (bool, np.bool_)):
        return ir.BoolAttr.get(bool(value))
    if isinstance(value, int):
        return i64_attr(value)
    if isinstance(value, float):
        return ir.FloatAttr.get(ir.F64Type.get(), value)
    if isinstance(value, str):
        return ir.StringAttr.get(value)
    if isinstance(value, np.ndarray):
        return dense_elements(value)
    if isinstance(value, np.generic):
        dtype = np.dtype(type(value))
        if dtype.kind in "iu":
            signed = dtype.kind == "i"
            bits = dtype.itemsize * 8
            int_type = (
                ir.IntegerType.get_signless(bits) if signed else ir.IntegerType.get_unsigned(bits)
            )
            return ir.IntegerAttr.get(int_type, int(value))
        if dtype.kind == "f":
            return ir.FloatAttr.get(dtype_to_ir_type(dtype), float(value))
    if isinstance(value, dict):
        return ir.DictAttr.get({str(k): ir_attribute(v) for k, v in value.items()})
    raise TypeError(f"No attribute handler defined for type: {type(value)}")


def _layout_attr(layout: Sequence[int]) -> ir.DenseIntElementsAttr:
    array = np.asarray(list(layout), np.int64).reshape(-1)
    return ir.DenseIntElementsAttr.get(array, type=ir.IndexType.get())


def custom_call(
    target: str,
    result_types: Sequence[ir.Type],
    operands: Sequence[ir.Value],
    *,
    attributes: dict[str, ir.Attribute] | None = None,
    operand_layouts: Sequence[Sequence[int]] | None = None,
    result_layouts: Sequence[Sequence[int]] | None = None,
    operand_output_aliases: dict[int, int] | None = None,
    has_side_effect: bool = False,
    op_attributes: dict[str, ir.Attribute] | None = None,
    api_version: int = 4,
    legacy_backend_config: str | bytes | None = None,
) -> list[ir.Value]:
    """Emit a typed-FFI ``stablehlo.custom_call @target``; return its results (mlir.custom_call).

    ``attributes`` are the handler's named attributes: with ``api_version = 4``
    (XLA's typed FFI) ``backend_config`` is their dictionary. (JAX writes the
    older equivalent, ``api_version = 1`` with an empty ``backend_config`` and
    the dictionary as ``mhlo.backend_config``.) Layouts are minor-to-major
    dimension lists, one per operand/result (``(0, 1)`` for a column-major
    matrix, which makes XLA transpose around the call); ``operand_output_aliases``
    maps operand indices to the results that reuse their buffers. ``op_attributes``
    are added to the op itself (a sharding, say). A target of an older API
    (``api_version < 4``) takes its configuration as the opaque string (or bytes)
    ``legacy_backend_config`` instead of attributes.
    """
    named: dict[str, ir.Attribute] = {
        "call_target_name": ir.StringAttr.get(target),
        "has_side_effect": ir.BoolAttr.get(has_side_effect),
        # Typed FFI (4) takes the attribute dictionary; older versions a string.
        "backend_config": (
            ir.DictAttr.get(dict(attributes or {}))
            if api_version == 4
            else ir.StringAttr.get(legacy_backend_config or "")
        ),
        "api_version": i32_attr(api_version),
        "called_computations": ir.ArrayAttr.get([]),
    }
    if operand_layouts is not None:
        named["operand_layouts"] = ir.ArrayAttr.get([_layout_attr(x) for x in operand_layouts])
    if result_layouts is not None:
        named["result_layouts"] = ir.ArrayAttr.get([_layout_attr(x) for x in result_layouts])
    if operand_output_aliases:
        tupled = len(result_types) > 1
        named["output_operand_aliases"] = ir.ArrayAttr.get(
            [
                hlo.OutputOperandAlias.get(
                    output_tuple_indices=[result] if tupled else [],
                    operand_index=operand,
                    operand_tuple_indices=[],
                )
                for operand, result in operand_output_aliases.items()
            ]
        )
    named.update(op_attributes or {})
    op = hlo.CustomCallOp.build_generic(
        results=list(result_types), operands=list(operands), attributes=named
    )
    return list(op.results)


def annotate_device_placement(value: ir.Value, memory_kind: str) -> ir.Value:
    """Place ``value`` in memory ``memory_kind`` (XLA's ``annotate_device_placement`` call).

    The memory is named by the ``_xla_buffer_placement`` frontend attribute, as
    JAX emits it for a result whose ``out_shardings`` are in another memory kind.
    """
    attrs = {"_xla_buffer_placement": string_attr(memory_kind)}
    (out,) = custom_call(
        "annotate_device_placement",
        [value.type],
        [value],
        has_side_effect=True,
        api_version=1,
        op_attributes={"mhlo.frontend_attributes": ir.DictAttr.get(attrs)},
    )
    return out


#: ``compute_on``'s compute types as XLA's ``_xla_compute_type`` names them.
_XLA_COMPUTE_TYPES = {"device_host": "host", "device": "dense", "tpu_sparsecore": "sparseoffload"}


class _ComputeType(threading.local):
    value: str | None = None


#: The compute type of the equation being lowered (``compute_on``), or None.
lowering_compute_type = _ComputeType()


def in_compute_type(value: ir.Value) -> ir.Value:
    """Mark ``value``'s op with the compute type of the equation being lowered; return it.

    For helpers that emit ops besides a rule's results (JAX marks the broadcasts
    of its ``mlir.broadcast_in_dim`` too); nothing outside ``compute_on``.
    """
    compute_type = lowering_compute_type.value
    if compute_type is not None:
        mark_compute_type([value], compute_type)
    return value


def mark_compute_type(values: Sequence[ir.Value], compute_type: str) -> None:
    """Add ``compute_type`` to the frontend attributes of the ops that define ``values``.

    As JAX marks the ops of an equation traced under ``compute_on``:
    ``_xla_compute_type`` (``"host"`` for ``"device_host"``), or for
    ``"gpu_stream:<n>"`` the stream annotation. Block arguments are left alone.
    """
    if compute_type.startswith("gpu_stream:"):
        attrs = {
            "_xla_stream_annotation": string_attr(compute_type.split(":", 1)[1]),
            "inlineable": string_attr("false"),
        }
    else:
        attrs = {"_xla_compute_type": string_attr(_XLA_COMPUTE_TYPES[compute_type])}
    mark_frontend_attributes(values, attrs)


def mark_frontend_attributes(
    values: Sequence[ir.Value], attrs: dict[str, ir.Attribute], *, keep_existing: bool = False
) -> None:
    """Merge ``attrs`` into ``mhlo.frontend_attributes`` of the ops that define ``values``.

    With ``keep_existing`` an attribute the op already has wins (as JAX merges
    ``set_xla_metadata``'s); otherwise ``attrs`` do. Block arguments are left alone.
    """
    for value in values:
        owner = value.owner
        if isinstance(owner, ir.Block):
            continue
        op = owner if isinstance(owner, ir.Operation) else owner.operation
        old = {}
        if "mhlo.frontend_attributes" in op.attributes:
            old = {a.name: a.attr for a in ir.DictAttr(op.attributes["mhlo.frontend_attributes"])}
        merged = attrs | old if keep_existing else old | attrs
        op.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get(merged)


def xla_metadata_attrs(pairs: Sequence[tuple[str, Any]]) -> dict[str, ir.Attribute]:
    """``set_xla_metadata``'s ``(name, value)`` pairs as string attributes (as JAX writes
    them: ``str`` of the value, bools in lower case)."""
    return {
        name: string_attr(str(value).lower() if isinstance(value, bool) else str(value))
        for name, value in pairs
    }


def u64_attr(value: int) -> ir.IntegerAttr:
    """Return an unsigned 64-bit integer attribute (``5 : ui64``)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_unsigned(64), int(value))


def token_type() -> ir.Type:
    """Return ``!stablehlo.token``, the type that orders side effects."""
    return hlo.TokenType.get()


def create_token() -> ir.Value:
    """Emit ``stablehlo.create_token``: a token made inside the program (JAX's, for a token
    closed over)."""
    return hlo.create_token()


def new_token() -> ir.Value:
    """Emit ``stablehlo.after_all`` of nothing: a token that depends on nothing."""
    return hlo.after_all([])


# jaxlib 0.10's CPU handler of Python host callbacks (typed FFI). Its ``index`` attribute
# picks the callable among the ``host_callbacks`` given to ``compile_and_load``.
_CPU_CALLBACK_TARGET = "xla_ffi_python_cpu_callback"


_MAXIMAL_MESH = "maximal_mesh_0"


def _maximal_sharding(module: ir.Module | None, n_values: int) -> dict[str, ir.Attribute]:
    """The op attribute that puts a callback on device 0 of an SPMD program.

    With ``module`` (Shardy) it declares ``sdy.mesh @maximal_mesh_0 = <[],
    device_ids=[0]>`` once and returns ``sdy.sharding`` per value, else the
    GSPMD ``mhlo.sharding = "{maximal device=0}"`` (a tuple for several results).
    """
    n_values = max(n_values, 1)
    if module is not None:
        symbols = ir.SymbolTable(module.operation)
        if _MAXIMAL_MESH not in symbols:
            with ir.InsertionPoint.at_block_begin(module.body):
                sdy.MeshOp(_MAXIMAL_MESH, ir.Attribute.parse("#sdy.mesh<[], device_ids=[0]>"))
        per_value = ", ".join([f"<@{_MAXIMAL_MESH}, []>"] * n_values)
        return {"sdy.sharding": ir.Attribute.parse(f"#sdy.sharding_per_value<[{per_value}]>")}
    one = "{maximal device=0}"
    text = one if n_values == 1 else "{" + ", ".join([one] * n_values) + "}"
    return {"mhlo.sharding": ir.StringAttr.get(text)}


def replicate_everywhere(value: ir.Value, partitioning: str) -> ir.Value:
    """Constrain ``value`` to be replicated on every device of an SPMD program.

    A callback's result lives on device 0 (maximal sharding); this lets the rest of
    the program (and its outputs) use it anywhere. Shardy: a constraint on the
    module's ``@mesh``; GSPMD: XLA's ``@Sharding`` custom call.
    """
    if partitioning == "shardy":
        rank = len(ir.RankedTensorType(value.type).shape)
        dims = ", ".join(["{}"] * rank)
        return sharding_constraint(value, f"<@mesh, [{dims}]>")
    return custom_call(
        "Sharding",
        [value.type],
        [value],
        op_attributes={"mhlo.sharding": ir.StringAttr.get("{replicated}")},
        api_version=1,
    )[0]


def host_callback_call(
    index: int,
    operands: Sequence[ir.Value],
    result_types: Sequence[ir.Type],
    *,
    has_side_effect: bool,
    maximal: str | None = None,
    module: ir.Module | None = None,
) -> list[ir.Value]:
    """Emit the custom call that runs host callback number ``index``; return its results.

    In an SPMD program XLA needs a sharding on every side-effecting op:
    ``maximal="shardy"`` or ``"gspmd"`` runs the callback once, on device 0 (as
    JAX does for automatically sharded programs); Shardy needs the ``module``.
    """
    attributes = None
    if maximal is not None:
        attributes = _maximal_sharding(module if maximal == "shardy" else None, len(result_types))
    return custom_call(
        _CPU_CALLBACK_TARGET,
        result_types,
        operands,
        attributes={"index": u64_attr(index)},
        has_side_effect=has_side_effect,
        op_attributes=attributes,
    )


_CPU_BUFFER_CALLBACK_TARGET = "xla_buffer_python_cpu_callback"


def buffer_callback_call(
    index: int,
    operands: Sequence[ir.Value],
    result_types: Sequence[ir.Type],
    *,
    has_side_effect: bool,
    operand_output_aliases: dict[int, int] | None = None,
    maximal: str | None = None,
    module: ir.Module | None = None,
) -> list[ir.Value]:
    """Emit XLA's buffer callback of host callback number ``index``; return its results.

    The callback gets XLA's execution context, then the operands' and the results'
    buffers, to fill the results in place (``jax.experimental.buffer_callback``).
    """
    attributes = None
    if maximal is not None:
        attributes = _maximal_sharding(module if maximal == "shardy" else None, len(result_types))
    return custom_call(
        _CPU_BUFFER_CALLBACK_TARGET,
        result_types,
        operands,
        attributes={"index": u64_attr(index)},
        has_side_effect=has_side_effect,
        operand_output_aliases=operand_output_aliases,
        op_attributes=attributes,
    )


# --- modules, functions, locations ---------------------------------------------------------


def sdy_mesh_op(
    module: ir.Module, name: str, axes: Sequence[tuple[str, int]], after: int = 0
) -> None:
    """Declare the Shardy mesh ``@name`` with ``axes`` (name, size) at the top of ``module``.

    ``after`` meshes already declared there stay before it.
    """
    mesh = ", ".join(f'"{axis}"={size}' for axis, size in axes)
    ops = list(module.body.operations)
    point = (
        ir.InsertionPoint.after(ops[after - 1])
        if after and len(ops) >= after
        else ir.InsertionPoint.at_block_begin(module.body)
    )
    with point:
        sdy.MeshOp(name, ir.Attribute.parse(f"#sdy.mesh<[{mesh}]>"))


def sharding_attr(text: str) -> tuple[str, ir.Attribute]:
    """Return the (attribute name, attribute) of an argument/result sharding ``text``.

    ``#sdy.sharding<...>`` is a Shardy sharding; anything else an ``mhlo.sharding``
    (GSPMD HloSharding) string.
    """
    if text.startswith("#sdy."):
        return "sdy.sharding", ir.Attribute.parse(text)
    return "mhlo.sharding", ir.StringAttr.get(text)


def sharding_constraint(value: ir.Value, text: str) -> ir.Value:
    """Emit ``sdy.sharding_constraint`` of ``value`` to the Shardy sharding ``text``.

    ``text`` is the attribute without its ``#sdy.sharding`` prefix, e.g. ``<@mesh, [{"x"}, {}]>``.
    """
    return sdy.ShardingConstraintOp(value, ir.Attribute.parse(f"#sdy.sharding{text}")).result


def sharding_group(value: ir.Value, group_id: int) -> None:
    """Emit ``sdy.sharding_group``: values of one group get the same sharding."""
    sdy.ShardingGroupOp(value, group_id)


def manual_computation(
    operands: Sequence[ir.Value],
    result_types: Sequence[ir.Type],
    body_types: Sequence[ir.Type],
    in_shardings: Sequence[str],
    out_shardings: Sequence[str],
    manual_axes: Sequence[str],
):
    """Emit ``sdy.manual_computation`` (shard_map's op); return it and its body block.

    Shardings are texts like ``<@mesh, [{"x"}, {}]>``. Fill the block, ending it
    with :func:`sdy_return`.
    """
    per_value = lambda texts: ir.Attribute.parse(  # noqa: E731
        "#sdy.sharding_per_value<[" + ", ".join(texts) + "]>"
    )
    axes = ", ".join(f'"{a}"' for a in manual_axes)
    op = sdy.ManualComputationOp(
        list(result_types),
        list(operands),
        per_value(in_shardings),
        per_value(out_shardings),
        ir.Attribute.parse(f"#sdy<manual_axes{{{axes}}}>"),
    )
    block = op.body.blocks.append(*body_types)
    return op, block


def sdy_return(values: Sequence[ir.Value]) -> None:
    """Emit ``sdy.return`` of ``values`` (the end of a manual computation's body)."""
    sdy.ReturnOp(list(values))


def channel_handle(handle: int = 1, kind: int = 1) -> ir.Attribute:
    """Return a StableHLO channel handle (kind 1: device to device)."""
    return hlo.ChannelHandle.get(handle=handle, type=kind)


def new_module(name: str, attributes: dict[str, ir.Attribute]) -> tuple[ir.Module, ir.SymbolTable]:
    """Create an empty module named ``name`` with module attributes; return it and its symbols."""
    module = ir.Module.create()
    op_attributes = module.operation.attributes
    op_attributes["sym_name"] = ir.StringAttr.get(name)
    for key, value in attributes.items():
        op_attributes[key] = value
    return module, ir.SymbolTable(module.operation)


def new_function(
    module: ir.Module,
    symbol_table: ir.SymbolTable,
    name: str,
    in_types: Sequence[ir.Type],
    out_types: Sequence[ir.Type],
    *,
    public: bool,
    arg_attrs: Sequence[dict[str, ir.Attribute]] | None = None,
    result_attrs: Sequence[dict[str, ir.Attribute]] | None = None,
    arg_locs: Sequence[ir.Location] | None = None,
) -> tuple[Any, str, ir.Block]:  # (func_dialect.FuncOp, ...): a lazy module's class
    """Append a ``func.func`` to ``module``; return it, its unique symbol name and its entry block.

    The name is made unique in the module (``f``, ``f_0``, ...).
    """
    with ir.InsertionPoint(module.body):
        fn = func_dialect.FuncOp(name, ir.FunctionType.get(list(in_types), list(out_types)))
    fn.attributes["sym_visibility"] = ir.StringAttr.get("public" if public else "private")
    symbol = ir.StringAttr(symbol_table.insert(fn)).value
    if arg_attrs is not None and any(arg_attrs):
        fn.arg_attrs = ir.ArrayAttr.get([ir.DictAttr.get(dict(a)) for a in arg_attrs])
    if result_attrs is not None and any(result_attrs):
        fn.result_attrs = ir.ArrayAttr.get([ir.DictAttr.get(dict(a)) for a in result_attrs])
    block = fn.add_entry_block(arg_locs=list(arg_locs)) if arg_locs else fn.add_entry_block()
    return fn, symbol, block


def insertion_point(block: ir.Block) -> ir.InsertionPoint:
    """Return an insertion point at the end of ``block`` (use it in a ``with``)."""
    return ir.InsertionPoint(block)


def function_return(values: Sequence[ir.Value]) -> None:
    """Emit ``func.return`` of ``values``."""
    func_dialect.ReturnOp(list(values))


def function_call(symbol: str, out_types: Sequence[ir.Type], operands: Sequence[ir.Value]):
    """Emit ``func.call @symbol(operands)`` and return its results."""
    call = func_dialect.CallOp(list(out_types), ir.FlatSymbolRefAttr.get(symbol), list(operands))
    return list(call.results)


def unknown_location() -> ir.Location:
    """Return the unknown location of this thread's context."""
    return ir.Location.unknown(make_context())


def file_location(name: str, file_name: str, line: int, function_name: str) -> ir.Location:
    """Return ``loc("name"("function"("file":line:0)))``.

    XLA reads the outer name as the op name, the inner one as the user's
    function, and the file location as its line (like JAX's locations).
    """
    loc = ir.Location.file(file_name, line, 0)
    return ir.Location.name(name, childLoc=ir.Location.name(function_name, childLoc=loc))


def name_location(name: str) -> ir.Location:
    """Return ``loc("name")``."""
    return ir.Location.name(name)


def is_value(x: Any) -> bool:
    """Tell whether ``x`` is an MLIR SSA value."""
    return isinstance(x, ir.Value)


def as_value(x: Any) -> ir.Value | None:
    """Return ``x`` if it is a value, the result of a one-result op, else None."""
    if isinstance(x, ir.Value):
        return x
    if isinstance(x, ir.OpView | ir.Operation) and len(x.results) == 1:
        return x.results[0]
    return None


def verify(module: ir.Module) -> str | None:
    """Verify ``module``; return the verifier's diagnostics, or None if it is valid."""
    try:
        module.operation.verify()
    except ir.MLIRError as err:
        return str(err)
    return None


def module_text(module: ir.Module, debug_info: bool = False) -> str:
    """Return the textual StableHLO of ``module`` (with ``loc(...)`` when ``debug_info``)."""
    return module.operation.get_asm(enable_debug_info=debug_info)


def module_bytecode(module: ir.Module) -> bytes:
    """Return ``module`` as MLIR bytecode (what XLA's compile accepts besides text)."""
    buffer = io.BytesIO()
    module.operation.write_bytecode(file=buffer)
    return buffer.getvalue()


# --- StableHLO portable artifacts (what an exported function stores) -----------------------


def serialize_portable_artifact(module: ir.Module, context: ir.Context) -> bytes:
    """Return ``module`` as a portable artifact readable by StableHLO consumers 4 weeks old."""
    from jaxlib import _jax

    target = hlo.get_version_from_compatibility_requirement(
        hlo.StablehloCompatibilityRequirement.WEEK_4
    )
    with context:
        return _jax.mlir.serialize_portable_artifact(module, target)


def deserialize_portable_artifact(serialized: bytes, context: ir.Context) -> ir.Module:
    """Return a portable artifact as an MLIR module of ``context``."""
    from jaxlib import _jax

    return _jax.mlir.deserialize_portable_artifact(serialized, context)


def refine_polymorphic_shapes(bytecode: bytes) -> bytes:
    """Refine a module's dynamic shapes from its ``main``'s static argument types.

    jaxlib's shape refinement also checks the module's shape assertions; it raises
    its own error types when one fails.
    """
    from jaxlib import _jax

    return _jax.mlir.refine_polymorphic_shapes(
        bytecode, enable_shape_assertions=True, validate_static_shapes=True
    )


class JaxIrContext(ir.Context):
    """An MLIR context that loads only the dialects asked for (jax.extend.lowering's).

    ``ir.Context()`` itself loads every dialect linked into jaxlib; this skips its
    constructor for the bare one underneath.
    """

    def __init__(self, *args, **kwargs):
        super(ir.Context, self).__init__(*args, **kwargs)


_upstream: list[ir.DialectRegistry] = []


def upstream_dialects() -> ir.DialectRegistry:
    """Return the registry of MLIR's upstream dialects jaxlib links (func, arith, ...)."""
    if not _upstream:
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        _upstream.append(registry)
    return _upstream[0]


def jaxlib_mlir_module(name: str):
    """Return jaxlib's MLIR module ``jaxlib.mlir.<name>`` (``ir``, ``dialects.stablehlo``, ...).

    For ``jax.extend.mlir``, which hands extension authors jaxlib's own bindings.
    """
    return importlib.import_module(f"jaxlib.mlir.{name}")


def jaxlib_mlir_functions():
    """Return jaxlib's ``_jax.mlir`` functions module (portable artifacts, shape refinement)."""
    from jaxlib import _jax

    return _jax.mlir


# --- XLA custom-call targets -----------------------------------------------------------------


def register_lapack_targets() -> None:
    """Register jaxlib's CPU LAPACK kernels (``jaxlib.cpu._lapack``) with XLA, by name.

    They call the LAPACK scipy bundles (``_lapack.initialize()`` fetches its
    function pointers), so scipy must be importable.
    """
    from jaxlib import xla_client
    from jaxlib.cpu import _lapack

    _lapack.initialize()
    for name, capsule in _lapack.registrations().items():
        # Every ``*_ffi`` entry is a typed-FFI handler (api_version 1 of this call).
        xla_client.register_custom_call_target(
            name, capsule, platform="cpu", api_version=int(name.endswith("_ffi"))
        )
