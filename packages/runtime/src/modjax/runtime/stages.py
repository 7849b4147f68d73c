"""Ahead-of-time stages of a jitted function (``jax.stages``): Traced, Lowered, Compiled.

``jit(f).trace(*args)`` traces for the arguments' types (values or
ShapeDtypeStructs) and gives :class:`Traced`; ``.lower()`` gives the StableHLO
module (:class:`Lowered`), lowered eagerly so that errors surface there; and
``.compile()`` the XLA program (:class:`Compiled`), which is shared with the
jitted function's own cache. ``jit(f).eval_shape(*args)`` is here too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.evaluation import jaxpr_as_fun
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tree_util import (
    equality_errors_pytreedef,
    keystr,
    tree_flatten,
    tree_unflatten,
)

from . import _xla
from .arguments import CallArgs, committed_of, leaf_aval
from .array import ArrayImpl
from .backends import Device
from .executable import Executable
from .executable import placement as _placement
from .layout import Format, layouts_of
from .sharding import SingleDeviceSharding
from .spmd import SpmdTarget

if TYPE_CHECKING:
    from .jit_function import JitFunction, TracedProgram

__all__ = [
    "ArgInfo",
    "Compiled",
    "Lowered",
    "Traced",
    "aot_lower",
    "aot_trace",
    "jit_eval_shape",
    "shape_structs",
]


@dataclass(frozen=True, slots=True)
class ArgInfo:
    """An argument of a traced, lowered or compiled function: its abstract value and
    whether it is donated (``jax.stages.ArgInfo``)."""

    _aval: Any
    donated: bool

    @property
    def shape(self) -> tuple[int, ...]:
        """The argument's shape."""
        if not hasattr(self._aval, "shape"):
            raise TypeError(f"No shape attribute with aval of type {type(self._aval)}")
        return self._aval.shape

    @property
    def dtype(self):
        """The argument's dtype."""
        if not hasattr(self._aval, "dtype"):
            raise TypeError(f"No dtype attribute with aval of type {type(self._aval)}")
        return self._aval.dtype


class _Stage:
    """What every stage knows of its arguments and results (JAX's ``stages.Stage``).

    The arguments are the pair (positional, keyword) of the call without its
    static arguments, as JAX has them.
    """

    _call: CallArgs
    _traced: TracedProgram

    @property
    def args_info(self):
        """The tree of (positional, keyword) arguments, each an :class:`ArgInfo`."""
        infos = [
            ArgInfo(aval, donated)
            for aval, donated in zip(self._traced.in_avals, self._call.donated, strict=True)
        ]
        return tree_unflatten(self._call.in_tree, infos)

    @property
    def in_tree(self):
        """The tree structure of the pair (positional arguments, keyword arguments)."""
        return self._call.in_tree

    @property
    def in_avals(self):
        """The tree of the arguments' abstract values."""
        return tree_unflatten(self._call.in_tree, list(self._traced.in_avals))

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """The flat indices of the donated argument leaves."""
        return tuple(i for i, donated in enumerate(self._call.donated) if donated)

    @property
    def out_tree(self):
        """The tree structure of the results."""
        return self._traced.out_tree

    @property
    def out_info(self):
        """The tree of the results' ShapeDtypeStructs."""
        return tree_unflatten(self._traced.out_tree, shape_structs(self._traced.closed.out_avals))


def _spec_placement(leaves) -> tuple[Device, bool]:
    """Choose the device of an AOT compilation: from Arrays, else ShapeDtypeStruct shardings."""
    device, committed = _placement([x for x in leaves if type(x) is ArrayImpl])
    if not committed:
        for x in leaves:
            if isinstance(x, ShapeDtypeStruct) and isinstance(x.sharding, SingleDeviceSharding):
                return x.sharding._device, True
    return device, committed


class Traced(_Stage):
    """A function traced for given argument types (``jax.stages.Traced``).

    ``jaxpr`` is the ClosedJaxpr; ``out_info`` the output ShapeDtypeStructs;
    ``lower()`` gives the :class:`Lowered` module; calling it evaluates the jaxpr.
    """

    def __init__(self, fn: JitFunction, call: CallArgs, traced: TracedProgram, device, committed):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._device = device
        self._committed = committed

    @property
    def jaxpr(self) -> ClosedJaxpr:
        """The traced program."""
        return self._traced.closed

    @property
    def fun_name(self) -> str:
        """The name of the traced function."""
        return self._fn.name

    @property
    def out_avals(self):
        """The tree of the results' abstract values."""
        return tree_unflatten(self._traced.out_tree, list(self._traced.closed.out_avals))

    def __call__(self, *args, **kwargs):
        """Evaluate the traced program on the dynamic arguments (statics are bound)."""
        leaves, tree = tree_flatten((args, kwargs))
        if tree != self._call.in_tree:
            raise TypeError(
                "Traced function called with input pytree that does not match the one it "
                f"was traced with: traced with {self._call.in_tree}, called with {tree}"
            )
        return tree_unflatten(self._traced.out_tree, jaxpr_as_fun(self._traced.closed)(*leaves))

    def lower(self, *, lowering_platforms: Sequence[str] | None = None) -> Lowered:
        """Lower the traced program to StableHLO (``Traced.lower``).

        ``lowering_platforms`` may only name the platform the program runs on: lowering
        for another one is not supported yet.
        """
        if lowering_platforms is not None:
            platform = _platform_of(self._device)
            if tuple(lowering_platforms) != (platform,):
                raise NotImplementedError(
                    f"Traced.lower(lowering_platforms={tuple(lowering_platforms)!r}): modjax "
                    f"lowers only for the platform the program runs on, {platform!r}"
                )
        return Lowered(self._fn, self._call, self._traced, self._device, self._committed)


def _devices_of(device) -> list[Device]:
    return list(device.devices) if isinstance(device, SpmdTarget) else [device]


def _platform_of(device) -> str:
    return _devices_of(device)[0].platform


class Lowered(_Stage):
    """A function lowered to a StableHLO module (``jax.stages.Lowered``).

    ``as_text()`` prints the module (or its HLO), ``compiler_ir()`` returns it and
    ``compile()`` gives the :class:`Compiled` program.
    """

    def __init__(self, fn: JitFunction, call: CallArgs, traced: TracedProgram, device, committed):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._device = device
        self._committed = committed
        # Lowered eagerly (as JAX does) so that lowering errors surface here.
        self._program = fn.lower(traced, device)
        self._module = self._program.module

    def _hlo(self):
        return _xla.module_to_xla_computation(self._module.as_bytecode())

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """Return the module as StableHLO text, or as HLO for ``dialect="hlo"``.

        The counterpart of ``jax.stages.Lowered.as_text``.
        """
        if dialect in (None, "stablehlo"):
            return self._module.as_text(debug_info=debug_info)
        if dialect == "hlo":
            return _xla.hlo_module_text(self._hlo(), debug_info=debug_info)
        raise ValueError(f"unknown dialect: {dialect}")

    def compiler_ir(self, dialect: str | None = None):
        """Return the MLIR module, or its HLO XlaComputation for ``dialect="hlo"``.

        The counterpart of ``jax.stages.Lowered.compiler_ir``.
        """
        if dialect in (None, "stablehlo"):
            return self._module.module
        if dialect == "hlo":
            return self._hlo()
        raise ValueError(f"unknown dialect: {dialect}")

    def cost_analysis(self) -> dict[str, Any]:
        """Return XLA's cost estimate of the unoptimized module (``Lowered.cost_analysis``)."""
        backend = _devices_of(self._device)[0].client
        return _xla.hlo_cost_analysis(backend, self._hlo())

    def compile(
        self,
        compiler_options: Mapping[str, Any] | None = None,
        *,
        device_assignment: Sequence[Device] | None = None,
    ) -> Compiled:
        """Compile the module with XLA (``Lowered.compile``).

        ``compiler_options`` are XLA's flags by name (``{"xla_cpu_enable_fast_math":
        True}``), over those given to jit; a program compiled with them is not shared
        with the jitted function's cache. ``device_assignment`` must name the devices
        the program was lowered for.
        """
        if device_assignment is not None:
            given = [d.id for d in device_assignment]
            lowered_for = [d.id for d in _devices_of(self._device)]
            if given != lowered_for:
                platform = _platform_of(self._device).upper()
                raise ValueError(
                    "device_assignment passed to `.compile` must match the device_assignment "
                    "calculated from array shardings and out_shardings. Got device ids passed "
                    f"to compile {given} on platform {platform} and devices ids calculated "
                    f"from array shardings and out_shardings {lowered_for} on platform "
                    f"{platform}"
                )
        if compiler_options:
            merged = {**(self._fn.compiler_options or {}), **compiler_options}
            executable = self._program.compile(self._committed, compiler_options=merged)
        else:
            executable, _ = self._fn.executable(
                self._call, self._traced.in_avals, self._device, self._committed, self._program
            )
        return Compiled(self._fn, self._call, self._traced, executable)


def _pytree_mismatch(given, compiled) -> str:
    """JAX's text for a compiled function called with arguments of another structure."""
    errors = equality_errors_pytreedef(given, compiled)
    lines = [
        "Function compiled with input pytree does not match the input pytree it was called "
        f"with. There are {len(errors)} mismatches, including:"
    ]
    for (first, *rest), thing1, thing2, why in errors:
        base = ("args", "kwargs")[first.idx]
        lines.append(
            f"    * at {base}{keystr(tuple(rest))}, seen {thing2} but now given {thing1}, so {why}"
        )
    return "\n".join(lines)


# JAX lists at most this many mismatched arguments.
_MAX_LISTED_MISMATCHES = 5


def _check_argument_types(compiled, given, names) -> None:
    """Raise JAX's TypeError where an argument's shape or dtype differs from the compiled one
    (weak types and shardings may differ)."""
    errors = [
        f"Argument '{names[i] if i < len(names) else i}' compiled with {want.str_short()} "
        f"and called with {got.str_short()}"
        for i, (want, got) in enumerate(zip(compiled, given, strict=True))
        if (want.shape, want.dtype) != (got.shape, got.dtype)
    ]
    if not errors:
        return
    if len(errors) >= _MAX_LISTED_MISMATCHES:
        count = f"The first {_MAX_LISTED_MISMATCHES} of {len(errors)}"
    else:
        count = "The"
    raise TypeError(
        "Argument types differ from the types for which this computation was compiled. "
        "Perhaps you are calling the compiled executable with a different enable_x64 mode "
        f"than when it was AOT compiled? {count} mismatches are:\n"
        + "\n".join(errors[:_MAX_LISTED_MISMATCHES])
    )


class Compiled(_Stage):
    """A compiled program for fixed argument types (``jax.stages.Compiled``).

    Call it with arguments of exactly those types (a mismatch is a TypeError).
    """

    def __init__(
        self, fn: JitFunction, call: CallArgs, traced: TracedProgram, executable: Executable
    ):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._executable = executable

    def __call__(self, *args, **kwargs):
        """Run the program on the dynamic arguments, as JAX's ``Compiled`` takes them.

        The static arguments were fixed when it was lowered, so they are left out:
        the others keep their order (positional ones shift down) and keywords.
        """
        leaves, in_tree = tree_flatten((args, kwargs))
        if in_tree != self._call.in_tree:
            raise TypeError(_pytree_mismatch(in_tree, self._call.in_tree))
        avals = tuple(leaf_aval(x) for x in leaves)
        if avals != self._traced.in_avals:
            _check_argument_types(self._traced.in_avals, avals, self._traced.arg_names or ())
        leaves = self._executable.place(leaves)
        return self._traced.out_tree.unflatten(self._executable.run(leaves))

    def as_text(self) -> str:
        """Return the optimized HLO text XLA compiled (``Compiled.as_text``)."""
        return self._executable.as_text()

    def cost_analysis(self) -> dict[str, Any]:
        """Return XLA's cost estimate: flops, bytes accessed, ... (``Compiled.cost_analysis``)."""
        return self._executable.cost_analysis()

    def memory_analysis(self):
        """Return XLA's memory estimate: argument, output and temporary sizes...

        The counterpart of ``jax.stages.Compiled.memory_analysis``.
        """
        return _xla.memory_analysis(self._executable.xla)

    def runtime_executable(self):
        """Return jaxlib's loaded executable (``Compiled.runtime_executable``)."""
        return self._executable.xla

    @property
    def input_shardings(self):
        """The tree of the arguments' shardings (None for an argument the program drops)."""
        return tree_unflatten(self._call.in_tree, list(self._executable.arg_shardings))

    @property
    def output_shardings(self):
        """The tree of the results' shardings."""
        return tree_unflatten(self._traced.out_tree, list(self._executable.out_shardings))

    def _layouts(self) -> tuple[list, list]:
        params, outs = layouts_of(self._executable.xla)
        n_tokens = len(self._executable.ordered_effects)
        params = params[len(self._executable.const_args) + n_tokens :]
        kept = self._executable.kept
        if kept is not None:
            by_arg: list = [None] * len(self._traced.in_avals)
            for i, layout in zip(kept, params, strict=True):
                by_arg[i] = layout
            params = by_arg
        return params, outs[n_tokens:]

    @property
    def input_formats(self):
        """The tree of the arguments' Formats: XLA's layout and the sharding of each."""
        layouts, _ = self._layouts()
        return _formats(self._call.in_tree, layouts, self._executable.arg_shardings)

    @property
    def output_formats(self):
        """The tree of the results' Formats: XLA's layout and the sharding of each."""
        _, layouts = self._layouts()
        return _formats(self._traced.out_tree, layouts, self._executable.out_shardings)

    @property
    def out_info(self):
        """The tree of the results' ShapeDtypeStructs, with the shardings they come in."""
        structs = [
            s if type(s) is AbstractToken else s.update(sharding=sharding)
            for s, sharding in zip(
                shape_structs(self._traced.closed.out_avals),
                self._executable.out_shardings,
                strict=True,
            )
        ]
        return tree_unflatten(self._traced.out_tree, structs)


def _formats(tree, layouts, shardings):
    formats = [Format(lay, sh) for lay, sh in zip(layouts, shardings, strict=True)]
    return tree_unflatten(tree, formats)


def _prepare_aot(fn: JitFunction, args, kwargs):
    call = CallArgs(fn, args, kwargs)
    in_avals = call.avals(fn.fun)
    device, committed = _spec_placement(call.leaves)
    if (
        fn.in_shardings is not None
        or fn.out_shardings is not None
        or any(
            committed_of(x) is not None and not isinstance(committed_of(x), SingleDeviceSharding)
            for x in call.leaves
        )
        or fn.trace(call, in_avals).inner_shardings
    ):
        device, committed = fn.placement(call, in_avals)
    return call, in_avals, device, committed


def aot_trace(fn: JitFunction, *args, **kwargs) -> Traced:
    """Trace the jitted function for these arguments (values or ShapeDtypeStructs)."""
    call, in_avals, device, committed = _prepare_aot(fn, args, kwargs)
    return Traced(fn, call, fn.trace(call, in_avals), device, committed)


def aot_lower(fn: JitFunction, *args, **kwargs) -> Lowered:
    """Trace and lower the jitted function for these arguments (values or ShapeDtypeStructs)."""
    return aot_trace(fn, *args, **kwargs).lower()


def shape_structs(avals) -> list:
    # A token stays its aval, AbstractToken() (as JAX's eval_shape gives).
    return [
        a if type(a) is AbstractToken else ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
        for a in avals
    ]


def jit_eval_shape(fn: JitFunction, *args, **kwargs):
    """Return the output ShapeDtypeStructs of the jitted function for these arguments."""
    call, in_avals, _, _ = _prepare_aot(fn, args, kwargs)
    traced = fn.trace(call, in_avals)
    return tree_unflatten(traced.out_tree, shape_structs(traced.closed.out_avals))
