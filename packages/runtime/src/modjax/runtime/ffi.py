"""Calling compiled C/C++ code from programs through XLA's FFI (jax.ffi).

A handler written against XLA's typed FFI (the headers in :func:`include_dir`) is
registered with :func:`register_ffi_target` and called with :func:`ffi_call`, which
binds one primitive, ``ffi_call``. It lowers to ``stablehlo.custom_call`` with
``api_version = 4`` and the call's keyword arguments as the handler's named
attributes; it runs eagerly (compiled alone, as every primitive), under ``jit``,
and is not differentiable (wrap it in ``custom_jvp``/``custom_vjp``). Registering
goes through runtime's jaxlib boundary; the custom call is built by lowering's MLIR
module. Its batching rule (``vmap_method``) needs lax's ``scan`` and structural
operations, so modjax-numpy registers it, in the public ``modjax.ffi`` (``jax.ffi``),
which re-exports this module's API. ``import modjax.runtime`` does not import this
module: programs that never call C code do not pay for it.
"""

from __future__ import annotations

import ctypes
import functools
import inspect
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

from modjax.autodiff import jvp_rules, transpose_rules
from modjax.lowering import (
    LoweringRuleContext,
    custom_call,
    ir_attribute,
    ir_types,
    register_lowering,
)
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.effects import Effect
from modjax.tracecore.parse import parse_param_value, register_param_parser
from modjax.tracecore.pretty import format_param_value, register_param_printer
from modjax.tracecore.tokens import abstract_token, is_token_aval

from . import _xla
from .dispatch import apply_primitive

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

_VMAP_METHODS = ["sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None]  # fmt: skip

#: The effect of an ``ffi_call(has_side_effect=True)``: never removed, unordered.
FfiEffect = Effect("FFI")


# --- registration ------------------------------------------------------------------------------


def register_ffi_target(
    name: str, fn: Any, platform: str = "cpu", api_version: int = 1, **kwargs: Any
) -> None:
    """Register the FFI handler ``fn`` as custom-call target ``name`` (jax.ffi.register_ffi_target).

    ``fn`` is a PyCapsule holding the handler's address (:func:`pycapsule`), or a
    dict from FFI stage names (``"execute"``, ``"instantiate"``, ...) to capsules.
    ``api_version`` 1 is XLA's typed FFI (what :func:`ffi_call` calls), 0 the older
    custom-call API. Extra keyword arguments go to jaxlib's registration.
    """
    _xla.register_custom_call_target(name, fn, platform, api_version, **kwargs)


class TypeRegistration(TypedDict, total=False):
    """A user type for FFI handlers: a ``type_id`` capsule and an optional ``type_info`` one."""

    type_id: Any
    type_info: Any


def register_ffi_type_id(name: str, obj: Any, platform: str = "cpu") -> None:
    """Refuse, as JAX 0.10 does: jaxlib 0.10 registers types with :func:`register_ffi_type`."""
    raise ValueError("register_ffi_type_id is not supported after jaxlib version 381.")


def register_ffi_type(
    name: str, type_registration: TypeRegistration, platform: str = "cpu"
) -> None:
    """Register a user type for FFI handlers' state (jax.ffi.register_ffi_type)."""
    _xla.register_custom_type(name, type_registration, platform)


def register_ffi_target_as_batch_partitionable(name: str) -> None:
    """Declare target ``name`` batch-partitionable to XLA's partitioner (same name in jax.ffi)."""
    _xla.register_custom_call_as_batch_partitionable(name)


_capsule_destructor = ctypes.CFUNCTYPE(None, ctypes.py_object)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = (ctypes.c_void_p, ctypes.c_char_p, _capsule_destructor)


def pycapsule(funcptr) -> Any:
    """Wrap a ctypes function pointer in an unnamed PyCapsule (jax.ffi.pycapsule).

    ``ctypes.cdll.LoadLibrary("./libfoo.so").foo`` becomes what
    :func:`register_ffi_target` takes.
    """
    return _PyCapsule_New(ctypes.cast(funcptr, ctypes.c_void_p), None, _capsule_destructor(0))


def include_dir() -> str:
    """Return the folder of XLA's FFI headers that jaxlib ships (jax.ffi.include_dir).

    Compile a handler with ``-I`` this folder and ``#include "xla/ffi/api/ffi.h"``
    (C++) or ``"xla/ffi/api/c_api.h"`` (C).
    """
    return _xla.jaxlib_include_dir()


# --- layouts --------------------------------------------------------------------------------------


def _minor_to_major(aval, layout) -> tuple[int, ...]:
    """``layout`` in XLA's minor-to-major order (None: row-major; a Layout: its axis order)."""
    if layout is None:
        return tuple(reversed(range(len(getattr(aval, "shape", ())))))
    if hasattr(layout, "major_to_minor"):
        if getattr(layout, "tiling", None) is not None:
            raise ValueError("The FFI does not support layouts with tiling")
        return tuple(layout.major_to_minor[::-1])
    return tuple(int(d) for d in layout)


def _user_layouts(avals, layouts) -> tuple[tuple[int, ...], ...]:
    """ffi_call's layouts (major-to-minor sequences, Layouts or None) in minor-to-major order."""
    return tuple(
        _minor_to_major(
            aval,
            layout if layout is None or hasattr(layout, "major_to_minor") else tuple(layout)[::-1],
        )  # fmt: skip
        for aval, layout in zip(avals, layouts, strict=True)
    )


# --- lowering -------------------------------------------------------------------------------------


def build_ffi_lowering_function(
    call_target_name: str,
    *,
    operand_layouts: Sequence | None = None,
    result_layouts: Sequence | None = None,
    backend_config: Mapping[str, Any] | str | None = None,
    skip_ffi_layout_processing: bool = False,
    **lowering_args: Any,
) -> Callable[..., list]:
    """Return ``rule(ctx, *operands, **attributes) -> results`` emitting the custom call.

    The counterpart of jax.ffi.build_ffi_lowering_function (which returns the op;
    here the rule returns its result values). Layouts are minor-to-major (XLA's
    order), row-major by default; keyword arguments of the rule become the handler's
    attributes, added to ``backend_config``. ``lowering_args`` go to the custom
    call: ``has_side_effect``, ``api_version`` (4 by default),
    ``operand_output_aliases``, ``result_types``.
    """

    def rule(ctx: LoweringRuleContext, *operands, **params):
        kwargs = dict(lowering_args)
        api_version = kwargs.pop("api_version", 4)
        legacy: Any = None  # the old API's backend_config, passed as given
        if api_version >= 4:
            if backend_config is not None and not isinstance(backend_config, dict):
                raise ValueError("When api_version > 4, backend_config must be a dictionary.")
            attributes = {k: ir_attribute(v) for k, v in (backend_config or {}).items()}
            attributes.update({k: ir_attribute(v) for k, v in params.items()})
        else:
            if params:
                raise ValueError(
                    "The use of ffi_call attributes requires a custom call API version of at "
                    f"least 4; got api_version={api_version}."
                )
            attributes, legacy = None, backend_config
        result_types = kwargs.pop("result_types", None)
        if result_types is None:
            result_types = ir_types(ctx.avals_out)
        if not skip_ffi_layout_processing:
            in_layouts = operand_layouts or [None] * len(ctx.avals_in)
            out_layouts = result_layouts or [None] * len(ctx.avals_out)
            kwargs["operand_layouts"] = [
                _minor_to_major(a, lay) for a, lay in zip(ctx.avals_in, in_layouts, strict=True)
            ]
            kwargs["result_layouts"] = [
                _minor_to_major(a, lay) for a, lay in zip(ctx.avals_out, out_layouts, strict=True)
            ]
        return custom_call(
            call_target_name,
            result_types,
            operands,
            attributes=attributes,
            api_version=api_version,
            legacy_backend_config=legacy,
            **kwargs,
        )

    return rule


def ffi_lowering(call_target_name: str, **options: Any) -> Callable[..., list]:
    """Return a lowering rule calling FFI target ``call_target_name`` (jax.ffi.ffi_lowering).

    Register it for a primitive of your own with ``register_lowering(p, rule)``
    (``modjax.interpreters.mlir.register_lowering``); the primitive's params become
    the handler's attributes. The keyword arguments are those of
    :func:`build_ffi_lowering_function` (its signature is this function's).
    """
    emit = build_ffi_lowering_function(call_target_name, **options)

    def rule(ctx: LoweringRuleContext, *operands, **params):
        results = emit(ctx, *operands, **params)
        # A primitive of one result lowers to one value, not a list of one.
        primitive = ctx.primitive
        if primitive is not None and not primitive.multiple_results and len(results) == 1:
            return results[0]
        return results

    return rule


# The same keywords as JAX's: help() and inspect show them, unknown ones raise TypeError.
ffi_lowering.__signature__ = inspect.signature(build_ffi_lowering_function)  # type: ignore[attr-defined]


# --- the primitive -------------------------------------------------------------------------------


class _Attribute:
    """A numpy array or dict attribute, made hashable for the primitive's params."""

    __slots__ = ("value", "_key")

    def __init__(self, value):
        self.value = value
        if isinstance(value, np.ndarray):
            self._key = (value.dtype.str, value.shape, value.tobytes())
        else:
            self._key = tuple(sorted((k, _hashable(k, v)) for k, v in value.items()))

    def __eq__(self, other):
        return type(other) is _Attribute and self._key == other._key

    def __hash__(self):
        return hash(self._key)

    def __repr__(self):
        return repr(self.value)


def _hashable(name: str, value):
    if isinstance(value, np.ndarray | dict):
        return _Attribute(value)
    try:
        hash(value)
    except TypeError as e:
        raise TypeError(f"Non-hashable keyword argument to ffi_call {name}: {value}") from e
    return value


def _unwrap(value):
    return value.value if type(value) is _Attribute else value


ffi_call_p = Primitive("ffi_call")
ffi_call_p.multiple_results = True


@ffi_call_p.def_abstract_eval
def _ffi_call_abstract_eval(*avals, result_avals, **params):
    return list(result_avals)


ffi_call_p.def_effects(lambda has_side_effect, **params: (FfiEffect,) if has_side_effect else ())
ffi_call_p.def_impl(functools.partial(apply_primitive, ffi_call_p))


def _not_differentiable(*args, target_name, **params):
    raise ValueError(
        f"The FFI call to `{target_name}` cannot be differentiated. "
        "You can use `jax.custom_jvp` or `jax.custom_jvp` to add support."
    )


def _ffi_call_jvp(primals, tangents, **params):
    _not_differentiable(**params)


jvp_rules[ffi_call_p] = _ffi_call_jvp
transpose_rules[ffi_call_p] = _not_differentiable


# --- text: the params print as JAX's do and parse back -------------------------------------------

_RESULT_AVAL = re.compile(
    r"ShapedArray\(\s*([A-Za-z0-9_]+)\[([0-9, ]*)\]\s*(,\s*weak_type=True\s*)?\)|AbstractToken\(\)"
)


def _print_result_avals(avals) -> str:
    # JAX prints the reprs: (ShapedArray(float32[3,3]), ShapedArray(int32[])).
    items = [repr(a) for a in avals]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _parse_result_avals(text: str) -> tuple:
    avals: list = []
    body = text.strip()
    if not (body.startswith("(") and body.endswith(")")):
        raise ValueError(f"expected a tuple of ShapedArray(...), got {text!r}")
    body, pos = body[1:-1], 0
    while True:
        rest = body[pos:].lstrip(" ,\n")
        if not rest:
            return tuple(avals)
        match = _RESULT_AVAL.match(rest)
        if match is None:
            raise ValueError(f"expected ShapedArray(dtype[shape]) or AbstractToken(), got {rest!r}")
        if match.group(0) == "AbstractToken()":
            avals.append(abstract_token)
        else:
            name, dims, weak = match.groups()
            shape = tuple(int(d) for d in dims.split(",") if d.strip())
            dtype = parse_param_value(name)  # a dtype's name reads as the dtype
            if not isinstance(dtype, np.dtype):
                raise ValueError(f"unknown dtype {name!r} in {text!r}")
            avals.append(ShapedArray(shape, dtype, weak_type=bool(weak)))
        pos = len(body) - len(rest) + match.end()


def _print_attributes(attributes) -> str:
    return format_param_value(tuple((k, _unwrap(v)) for k, v in attributes))


def _parse_attributes(text: str) -> tuple:
    value = parse_param_value(text)
    if not isinstance(value, tuple):
        raise ValueError(f"expected a tuple of (name, value) pairs, got {text!r}")
    return tuple((k, _hashable(k, v)) for k, v in value)


register_param_printer(ffi_call_p, "result_avals", _print_result_avals)
register_param_parser(ffi_call_p, "result_avals", _parse_result_avals)
register_param_printer(ffi_call_p, "attributes", _print_attributes)
register_param_parser(ffi_call_p, "attributes", _parse_attributes)


def _ffi_call_lowering(
    ctx,
    *operands,
    target_name,
    has_side_effect,
    input_layouts,
    output_layouts,
    input_output_aliases,
    custom_call_api_version,
    legacy_backend_config,
    attributes,
    **params,
):
    rule = ffi_lowering(
        target_name,
        has_side_effect=has_side_effect,
        operand_layouts=input_layouts,
        result_layouts=output_layouts,
        operand_output_aliases=dict(input_output_aliases),
        api_version=custom_call_api_version,
        backend_config=legacy_backend_config,
    )
    return rule(ctx, *operands, **{k: _unwrap(v) for k, v in attributes})


register_lowering(ffi_call_p, _ffi_call_lowering)


# --- ffi_call --------------------------------------------------------------------------------


def _result_avals(results: Sequence) -> tuple:
    avals = []
    for i, result in enumerate(results):
        if is_token_aval(result):
            avals.append(result)
            continue
        if not hasattr(result, "shape") or not hasattr(result, "dtype"):
            raise ValueError(
                "All elements of result_shape_dtypes must have 'shape' and 'dtype' "
                f"attributes. Got {result} at position {i}."
            )
        avals.append(ShapedArray(tuple(int(d) for d in result.shape), np.dtype(result.dtype)))
    return tuple(avals)


def _layouts(avals, layouts, values: str, what: str) -> tuple[tuple[int, ...], ...]:
    """The minor-to-major layouts of ``avals``: row-major, or the ``layouts`` given."""
    if layouts is None:
        return tuple(_minor_to_major(a, None) for a in avals)
    if len(layouts) != len(avals):
        raise ValueError(
            f"The number of {values} ({len(avals)}) must equal the number of {what} "
            f"({len(layouts)})."
        )
    return _user_layouts(avals, layouts)


def _check_aliases(aliases, n_args, in_avals, result_avals, in_layouts, out_layouts):
    checked = []
    for i, o in sorted((int(i), int(o)) for i, o in aliases.items()):
        where = f"input_output_aliases contains the mapping '{i}:{o}'"
        if i >= n_args:
            raise ValueError(f"{where} with input index {i} outside the range [0, {n_args}).")
        if o >= len(result_avals):
            raise ValueError(
                f"{where} with output index {o} outside the range [0, {len(result_avals)})."
            )
        a, r = in_avals[i], result_avals[o]
        if is_token_aval(a) != is_token_aval(r) or (
            not is_token_aval(a) and (a.shape != r.shape or a.dtype != r.dtype)
        ):
            raise ValueError(
                f"{where} referring to an input with abstract value {a.str_short()} and an "
                f"output with a different abstract value {r.str_short()}."
            )
        if in_layouts[i] != out_layouts[o]:
            raise ValueError(
                f"{where} referring to an input with layout {in_layouts[i]} and an output "
                f"with a different layout {out_layouts[o]}."
            )
        checked.append((i, o))
    return tuple(checked)


def ffi_call(
    target_name: str,
    result_shape_dtypes: Any,
    *,
    has_side_effect: bool = False,
    vmap_method: str | None = None,
    input_layouts: Sequence | None = None,
    output_layouts: Any = None,
    input_output_aliases: dict[int, int] | None = None,
    custom_call_api_version: int = 4,
    legacy_backend_config: str | None = None,
) -> Callable[..., Any]:
    """Return a function calling the FFI target ``target_name`` (jax.ffi.ffi_call).

    ``result_shape_dtypes`` is one object with ``shape`` and ``dtype``
    (``ShapeDtypeStruct``), giving one result, or a sequence of them, giving a list
    (a tuple for a tuple); ``modjax.core.abstract_token`` declares a token result.
    The returned function takes the operands positionally; its keyword arguments
    are the handler's named attributes: ``bool``, ``int``
    (``i64``), ``float`` (``f64``), ``str``, numpy scalars of their own dtype, numpy
    arrays and dicts of these. ``has_side_effect`` keeps an unused call; under
    ``vmap``, ``vmap_method`` says how the handler sees the batch (as for
    ``pure_callback``; None makes ``vmap`` an error). Layouts are major-to-minor
    axis orders per operand/result (``[0, 2, 1]``: a batch of column-major
    matrices); ``input_output_aliases`` maps operands to the results that reuse
    their buffers. ``custom_call_api_version < 4`` calls an old-style target, with
    the opaque ``legacy_backend_config`` string and no attributes.
    """
    if vmap_method not in _VMAP_METHODS:
        raise ValueError(
            f"vmap_method must be on of the allowed methods {_VMAP_METHODS}, but got: {vmap_method}"
        )
    multiple = isinstance(result_shape_dtypes, Sequence)
    if multiple:
        result_avals = _result_avals(result_shape_dtypes)
        out_layouts_given = output_layouts
    else:
        result_avals = _result_avals([result_shape_dtypes])
        out_layouts_given = (output_layouts,)
    if custom_call_api_version >= 4 and legacy_backend_config is not None:
        raise ValueError(
            "The use of the legacy_backend_config parameter requires "
            f"custom_call_api_version < 4; got {custom_call_api_version}."
        )

    def call(*args, **attributes):
        in_avals = [to_aval(x) for x in args]
        in_layouts = _layouts(in_avals, input_layouts, "input arguments", "input layouts")
        out_layouts = _layouts(result_avals, out_layouts_given, "outputs", "output layouts")
        aliases = _check_aliases(
            input_output_aliases or {}, len(args), in_avals, result_avals, in_layouts, out_layouts
        )
        attrs = tuple((k, _hashable(k, v)) for k, v in sorted(attributes.items()))
        results = ffi_call_p.bind(
            *args,
            result_avals=result_avals,
            vmap_method=vmap_method,
            target_name=target_name,
            has_side_effect=bool(has_side_effect),
            input_layouts=in_layouts,
            output_layouts=out_layouts,
            input_output_aliases=aliases,
            custom_call_api_version=int(custom_call_api_version),
            legacy_backend_config=legacy_backend_config,
            attributes=attrs,
        )
        if not multiple:
            return results[0]
        return tuple(results) if isinstance(result_shape_dtypes, tuple) else list(results)

    return call
