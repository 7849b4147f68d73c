"""``Exported``, ``export``, ``deserialize`` and calling an Exported (``jax.export``).

``export(jit(f))(*specs)`` traces ``f`` for the argument types, lowers it to a
StableHLO module whose public ``main`` takes the flat arguments, and keeps the
module as a portable artifact with the calling convention JAX 0.10 uses
(version 10: no token or dimension arguments for a single-platform module
without shape polymorphism). ``Exported.call`` applies the artifact through the
primitive ``call_exported`` (eagerly, under jit, and under grad through the
function's exported VJP, as JAX does), whoever exported it: modjax or JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from modjax.autodiff import custom_vjp, vjp
from modjax.lowering import lower_jaxpr_to_module, platform_lowering_rules, register_lowering
from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import ShapedArray, ShapeDtypeStruct
from modjax.tracecore.jaxpr import subjaxprs
from modjax.tracecore.tree_util import tree_flatten, tree_unflatten

from ..backends import default_backend
from ..dispatch import apply_primitive
from ..jit import jit
from . import artifact, serialization, symbolic
from .shape_poly import DimExpr, bind_dim_vars, check_one_scope, evaluate_shape

__all__ = [
    "DisabledSafetyCheck",
    "Exported",
    "export",
    "deserialize",
    "call",
    "call_exported_p",
    "default_export_platform",
    "minimum_supported_calling_convention_version",
    "maximum_supported_calling_convention_version",
]

minimum_supported_calling_convention_version = 9
maximum_supported_calling_convention_version = 10
# The version export writes, JAX 0.10's default (`jax_export_calling_convention_version`).
_CALLING_CONVENTION_VERSION = 10
_KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


class SymbolicShapedArray:
    """The aval of an Exported's argument or result whose shape has symbolic dimensions."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: tuple, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype
        self.weak_type = False

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def str_short(self, short_dtypes: bool = False) -> str:
        name = (
            dtypes.short_dtype_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        )
        return f"{name}[{','.join(str(d) for d in self.shape)}]"

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, SymbolicShapedArray)
            and other.shape == self.shape
            and other.dtype == self.dtype
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapedArray({self.str_short()})"


class DisabledSafetyCheck:
    """A safety check of calling an Exported that the exporter turned off (JAX's same name).

    ``platform()``: call on a platform the function was not exported for;
    ``custom_call(target)``: allow a custom call target outside the stable set
    (export records it; modjax does not restrict targets);
    ``shape_assertions()``: kept for compatibility, as in JAX it disables nothing.
    """

    __slots__ = ("_impl",)

    def __init__(self, _impl: str):
        self._impl = _impl

    @classmethod
    def platform(cls) -> DisabledSafetyCheck:
        """Allow calling on a platform the function was not exported for."""
        return cls("platform")

    @classmethod
    def custom_call(cls, target_name: str) -> DisabledSafetyCheck:
        """Allow the custom call ``target_name``."""
        return cls(f"custom_call:{target_name}")

    @classmethod
    def shape_assertions(cls) -> DisabledSafetyCheck:
        """A no-op, as in JAX."""
        return cls("shape_assertions")

    def is_custom_call(self) -> str | None:
        """Return the custom call's target, or None for other checks."""
        return self._impl[len("custom_call:") :] if self._impl.startswith("custom_call:") else None

    def __str__(self) -> str:
        return self._impl

    __repr__ = __str__

    def __eq__(self, other) -> bool:
        return isinstance(other, DisabledSafetyCheck) and other._impl == self._impl

    def __hash__(self) -> int:
        return hash(self._impl)


def _make_aval(shape: tuple, dtype):
    if any(isinstance(d, DimExpr) for d in shape):
        return SymbolicShapedArray(shape, dtype)
    return ShapedArray(shape, dtype)


@dataclasses.dataclass(frozen=True, eq=False, repr=False)
class Exported:
    """A function lowered to StableHLO, with what is needed to call it (``jax.export.Exported``).

    Compared and hashed by identity. ``in_avals``/``out_avals`` are the flat
    argument and result types (shapes may hold symbolic dimensions),
    ``in_tree``/``out_tree`` their pytree structures (``in_tree`` is that of
    ``(args, kwargs)``), ``mlir_module_serialized`` the module as a StableHLO
    portable artifact.
    """

    fun_name: str
    in_tree: Any
    in_avals: tuple
    out_tree: Any
    out_avals: tuple
    in_shardings_hlo: tuple
    out_shardings_hlo: tuple
    nr_devices: int
    platforms: tuple[str, ...]
    ordered_effects: tuple
    unordered_effects: tuple
    disabled_safety_checks: tuple
    mlir_module_serialized: bytes
    calling_convention_version: int
    module_kept_var_idx: tuple[int, ...]
    uses_global_constants: bool
    _get_vjp: Callable[[Exported], Exported] | None = None

    def mlir_module(self, serialized: bool = True) -> Any:
        """Return the module's StableHLO text, or with ``serialized=False`` the MLIR module.

        (``Exported.mlir_module``.)
        """
        if serialized:
            return artifact.module_text(self.mlir_module_serialized)
        return artifact.module_object(self.mlir_module_serialized)

    def has_vjp(self) -> bool:
        """Tell whether this Exported can give its VJP (``Exported.has_vjp``)."""
        return self._get_vjp is not None

    def vjp(self) -> Exported:
        """Return the exported VJP (``Exported.vjp``).

        It takes the primal arguments and a cotangent per output, and returns the
        cotangents of the arguments. A ValueError when none is available.
        """
        if self._get_vjp is None:
            raise ValueError("No VJP is available")
        return self._get_vjp(self)

    def serialize(self, vjp_order: int = 0) -> bytearray:
        """Return the bytes of this Exported in JAX's format (``Exported.serialize``).

        ``vjp_order`` levels of VJPs are included, so that the deserialized
        function can be differentiated that many times.
        """
        return serialization.serialize(self, vjp_order=vjp_order)

    def call(self, *args, **kwargs):
        """Call the exported function on arrays of the exported types (``Exported.call``)."""
        return call(self)(*args, **kwargs)

    def __str__(self) -> str:
        ins = ", ".join(a.str_short() for a in self.in_avals)
        outs = ", ".join(a.str_short() for a in self.out_avals)
        return f"Exported(fun_name={self.fun_name}, in_avals=({ins}), out_avals=({outs}))"

    __repr__ = __str__


def default_export_platform() -> str:
    """Return the platform export lowers for by default (``jax.export.default_export_platform``)."""
    return default_backend()


def _check_platforms(platforms) -> tuple[str, ...]:
    if platforms is None:
        return (default_export_platform(),)
    if isinstance(platforms, str):
        platforms = (platforms,)
    platforms = tuple(platforms)
    for p in platforms:
        if p not in _KNOWN_PLATFORMS:
            raise ValueError(f"Unsupported platform {p!r}; known platforms: {_KNOWN_PLATFORMS}")
    if len(set(platforms)) != len(platforms):
        raise ValueError(f"export: platforms {platforms} name one platform twice")
    return platforms


def _check_platform_independent(jaxpr, platforms: tuple[str, ...]) -> None:
    """Refuse a program that lowers differently on the platforms (one module serves them all)."""
    if platforms == ("cpu",):
        return
    specific = {p for platform in platforms for p in platform_lowering_rules.get(platform, {})}
    for eqn in jaxpr.eqns:
        if eqn.primitive in specific:
            raise NotImplementedError(
                f"export for platforms {platforms}: {eqn.primitive.name} lowers differently "
                "per platform (modjax exports one module for all platforms)"
            )
        for sub in subjaxprs(eqn.params):
            _check_platform_independent(getattr(sub, "jaxpr", sub), platforms)


def export(fun_jit: Callable, *, platforms: Sequence[str] | None = None, disabled_checks=()):
    """Return a function of argument specs that exports ``fun_jit`` (``jax.export.export``).

    ``fun_jit`` must come from ``jit``; the returned function takes arrays or
    ``ShapeDtypeStruct``s (any pytree, keyword arguments too) and gives an
    :class:`Exported`. ``platforms`` defaults to the default backend's.
    """
    if not callable(getattr(fun_jit, "trace", None)):
        raise ValueError(f"Function to be exported must be the result of `jit` but is: {fun_jit}")
    platforms = _check_platforms(platforms)
    disabled_checks = tuple(disabled_checks)
    for check in disabled_checks:
        if not isinstance(check, DisabledSafetyCheck):
            raise TypeError(f"disabled_checks must hold DisabledSafetyCheck values, got {check!r}")

    def do_export(*args_specs, **kwargs_specs) -> Exported:
        leaves, tree = tree_flatten((args_specs, kwargs_specs))
        specs = [x for x in leaves if isinstance(x, ShapeDtypeStruct)]
        check_one_scope([x.shape for x in specs], getattr(fun_jit, "__name__", "<function>"))
        names = symbolic.dim_variables(specs)
        if names:

            def trace(sizes):
                args, kwargs = tree_unflatten(
                    tree, [symbolic.concrete_spec(x, sizes) for x in leaves]
                )
                return fun_jit.trace(*args, **kwargs)

            traced, closed, shapes, literals = symbolic.trace_symbolic(trace, names)
            if len(closed.jaxpr.invars) != len(leaves):
                raise NotImplementedError("export with symbolic dimensions and static arguments")
            module, context, out_shapes = symbolic.lower_symbolic(
                closed, shapes, literals, names, _module_name(traced._fn.name)
            )
            in_avals = tuple(
                _make_aval(_symbolic_shape(shapes[id(v)]), v.aval.dtype)
                for v in closed.jaxpr.invars
            )
            out_avals = tuple(
                _make_aval(_symbolic_shape(shape), a.dtype)
                for shape, a in zip(out_shapes, closed.out_avals, strict=True)
            )
        else:
            traced = fun_jit.trace(*args_specs, **kwargs_specs)  # type: ignore[attr-defined]
            closed = traced.jaxpr
            lowered = lower_jaxpr_to_module(
                closed, module_name=_module_name(traced._fn.name), platform=platforms[0]
            )
            module, context = lowered.module, lowered.context
            in_avals = tuple(closed.in_avals)
            out_avals = tuple(a.strip_weak_type() for a in closed.out_avals)
        name, in_tree, out_tree = traced._fn.name, traced._call.in_tree, traced._traced.out_tree
        if getattr(closed.jaxpr, "effects", None):
            raise NotImplementedError(f"export of a function with effects {closed.jaxpr.effects}")
        _check_platform_independent(closed.jaxpr, platforms)
        if len(platforms) > 1:
            artifact.add_platform_index(module, context)
        # JAX marks multi-platform modules as shape polymorphic too: the index is a
        # global constant that callers resolve before compiling.
        global_constants = bool(names) or len(platforms) > 1
        artifact.mark_for_export(module, context, symbolic=global_constants)
        return Exported(
            fun_name=name,
            in_tree=in_tree,
            in_avals=in_avals,
            out_tree=out_tree,
            out_avals=out_avals,
            in_shardings_hlo=(None,) * len(in_avals),
            out_shardings_hlo=(None,) * len(out_avals),
            nr_devices=1,
            platforms=platforms,
            ordered_effects=(),
            unordered_effects=(),
            disabled_safety_checks=disabled_checks,
            mlir_module_serialized=artifact.serialize_module(module, context),
            calling_convention_version=_CALLING_CONVENTION_VERSION,
            module_kept_var_idx=tuple(range(len(in_avals))),
            uses_global_constants=global_constants,
            _get_vjp=partial(_export_vjp, fun_jit),
        )

    return do_export


def _symbolic_shape(shape) -> tuple:
    """Turn the variable names of a lowered shape into DimExprs."""
    return tuple(DimExpr(d) if isinstance(d, str) else d for d in shape)


def _module_name(name: str) -> str:
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name)
    return f"jit_{cleaned}"


def _export_vjp(fun_jit, primal: Exported) -> Exported:
    """Export the VJP of ``fun_jit`` at ``primal``'s types: (*args, *out_cts) -> in_cts."""
    in_tree, n_in = primal.in_tree, len(primal.in_avals)

    def flat(*leaves):
        args, kwargs = tree_unflatten(in_tree, leaves)
        return tree_flatten(fun_jit(*args, **kwargs))[0]

    def fun_vjp(*args_and_cts):
        _, pullback = vjp(flat, *args_and_cts[:n_in])
        return pullback(list(args_and_cts[n_in:]))

    fun_vjp.__name__ = f"vjp_{primal.fun_name}"
    specs = [ShapeDtypeStruct(a.shape, a.dtype) for a in (*primal.in_avals, *primal.out_avals)]
    return export(jit(fun_vjp), platforms=primal.platforms)(*specs)


def deserialize(blob: bytes | bytearray) -> Exported:
    """Read an Exported from the bytes of ``serialize`` (``jax.export.deserialize``).

    The bytes must be trusted: running the module may run any custom call.
    """
    return _from_fields(serialization.deserialize_fields(blob))


def _from_fields(fields: dict) -> Exported:
    kwargs = serialization.exported_kwargs(fields, _make_aval)
    vjp_fields = kwargs.pop("vjp_fields")
    version = kwargs["calling_convention_version"]
    if not (
        minimum_supported_calling_convention_version
        <= version
        <= maximum_supported_calling_convention_version
    ):
        raise NotImplementedError(
            f"The exported function '{kwargs['fun_name']}' uses calling convention version "
            f"{version}, outside the supported range "
            f"[{minimum_supported_calling_convention_version}.."
            f"{maximum_supported_calling_convention_version}]"
        )
    get_vjp = None if vjp_fields is None else (lambda _: _from_fields(vjp_fields))
    kwargs["disabled_safety_checks"] = tuple(
        DisabledSafetyCheck(c) for c in kwargs["disabled_safety_checks"]
    )
    return Exported(**kwargs, _get_vjp=get_vjp)


# --- calling ------------------------------------------------------------------------------

call_exported_p = core.Primitive("call_exported")
call_exported_p.multiple_results = True


def call(exported: Exported) -> Callable:
    """Return a function applying ``exported`` to arrays (``jax.export.call``).

    The arguments must have the exported pytree structure (ValueError
    otherwise); reverse-mode differentiation uses ``exported.vjp()``.
    """
    if not isinstance(exported, Exported):
        raise ValueError(f"The exported argument must be an export.Exported. Found {exported}.")

    @custom_vjp
    def f_flat(*args_flat):
        return call_exported_p.bind(*args_flat, exported=exported)

    def f_flat_fwd(*args_flat):
        return f_flat(*args_flat), args_flat

    def f_flat_bwd(args_flat, cts_out):
        return tuple(call(exported.vjp())(*args_flat, *cts_out))

    f_flat.defvjp(f_flat_fwd, f_flat_bwd)

    def f_imported(*args, **kwargs):
        _platform_index(exported, default_backend())  # JAX's ValueError, before tracing
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != exported.in_tree:
            raise ValueError(
                "The invocation args and kwargs must have the same pytree structure as when "
                f"the function '{exported.fun_name}' was exported: called with {in_tree}, "
                f"exported with {exported.in_tree}"
            )
        return tree_unflatten(exported.out_tree, f_flat(*leaves))

    return f_imported


def _call_abstract_eval(*avals, exported: Exported):
    what = f"call of the exported function '{exported.fun_name}'"
    if len(avals) != len(exported.in_avals):
        raise ValueError(f"{what}: {len(avals)} arguments, expected {len(exported.in_avals)}")
    for i, (aval, expected) in enumerate(zip(avals, exported.in_avals, strict=True)):
        if aval.dtype != expected.dtype:
            raise TypeError(
                f"{what}: argument {i} has dtype {dtypes.dtype_name(aval.dtype)}, expected "
                f"{dtypes.dtype_name(expected.dtype)}"
            )
    env = bind_dim_vars([a.shape for a in exported.in_avals], [a.shape for a in avals], what)
    return [ShapedArray(evaluate_shape(a.shape, env), a.dtype) for a in exported.out_avals]


def _platform_index(exported: Exported, platform: str) -> int | None:
    if platform not in exported.platforms:
        if DisabledSafetyCheck.platform() in exported.disabled_safety_checks:
            return 0 if len(exported.platforms) > 1 else None
        raise ValueError(
            f"Function '{exported.fun_name}' was exported for platforms "
            f"'{exported.platforms}' but it is used on '{(platform,)}'."
        )
    return exported.platforms.index(platform) if len(exported.platforms) > 1 else None


def _call_lowering(ctx, *operands, exported: Exported):
    if exported.nr_devices != 1:
        raise NotImplementedError(f"calling an Exported for {exported.nr_devices} devices")
    kept = exported.module_kept_var_idx
    text = artifact.specialize(
        exported.mlir_module_serialized,
        [ctx.avals_in[i] for i in kept],
        ctx.avals_out,
        platform_index=_platform_index(exported, ctx.module_ctx.platform),
        name=exported.fun_name,
    )
    return artifact.inline_module(ctx.module_ctx, text, [operands[i] for i in kept], ctx.avals_out)


call_exported_p.def_abstract_eval(_call_abstract_eval)
call_exported_p.def_impl(partial(apply_primitive, call_exported_p))
register_lowering(call_exported_p, _call_lowering)
