"""Ahead-of-time stages of a jitted function (``jax.stages``): Traced, Lowered, Compiled.

``jit(f).trace(*args)`` traces for the arguments' types (values or
ShapeDtypeStructs) and gives :class:`Traced`; ``.lower()`` gives the StableHLO
module (:class:`Lowered`), lowered eagerly so that errors surface there; and
``.compile()`` the XLA program (:class:`Compiled`), which is shared with the
jitted function's own cache. ``jit(f).eval_shape(*args)`` is here too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tokens import AbstractToken
from modjax.tracecore.tree_util import tree_unflatten

from .arguments import CallArgs, committed_of, leaf_aval
from .array import ArrayImpl
from .backends import Device
from .executable import Executable
from .executable import placement as _placement
from .sharding import SingleDeviceSharding

if TYPE_CHECKING:
    from .jit_function import JitFunction, TracedProgram

__all__ = [
    "Compiled",
    "Lowered",
    "Traced",
    "aot_lower",
    "aot_trace",
    "jit_eval_shape",
    "shape_structs",
]


def _spec_placement(leaves) -> tuple[Device, bool]:
    """Choose the device of an AOT compilation: from Arrays, else ShapeDtypeStruct shardings."""
    device, committed = _placement([x for x in leaves if type(x) is ArrayImpl])
    if not committed:
        for x in leaves:
            if isinstance(x, ShapeDtypeStruct) and isinstance(x.sharding, SingleDeviceSharding):
                return x.sharding._device, True
    return device, committed


class Traced:
    """A function traced for given argument types (``jax.stages.Traced``).

    ``jaxpr`` is the ClosedJaxpr; ``out_info`` the output ShapeDtypeStructs;
    ``lower()`` gives the :class:`Lowered` module.
    """

    def __init__(self, fn: JitFunction, call: CallArgs, traced: TracedProgram, device, committed):
        self._fn = fn
        self._call = call
        self._traced = traced
        self._device = device
        self._committed = committed

    @property
    def jaxpr(self) -> ClosedJaxpr:
        return self._traced.closed

    @property
    def in_avals(self):
        return self._traced.in_avals

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, shape_structs(self._traced.closed.out_avals))

    def lower(self) -> Lowered:
        """Lower the traced program to StableHLO."""
        return Lowered(self._fn, self._call, self._traced, self._device, self._committed)


class Lowered:
    """A function lowered to a StableHLO module (``jax.stages.Lowered``).

    ``as_text()`` prints the module, ``compiler_ir()`` returns it and
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

    def as_text(self, debug_info: bool = False) -> str:
        """Return the StableHLO text of the module (``Lowered.as_text``)."""
        return self._module.as_text(debug_info=debug_info)

    def compiler_ir(self, dialect: str = "stablehlo"):
        """Return the MLIR module (``Lowered.compiler_ir``)."""
        if dialect != "stablehlo":
            raise ValueError(f"only the 'stablehlo' dialect is available, not {dialect!r}")
        return self._module.module

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, shape_structs(self._traced.closed.out_avals))

    def compile(self) -> Compiled:
        """Compile the module with XLA (``Lowered.compile``)."""
        executable, _ = self._fn.executable(
            self._call, self._traced.in_avals, self._device, self._committed, self._program
        )
        return Compiled(self._fn, self._call, self._traced, executable)


class Compiled:
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
        call = CallArgs(self._fn, args, kwargs)
        if call.in_tree != self._call.in_tree:
            raise TypeError(
                "Function compiled with input pytree does not match the input pytree it was "
                f"called with: compiled for {self._call.in_tree}, called with {call.in_tree}"
            )
        if call.statics != self._call.statics:
            raise TypeError("Compiled program called with different static arguments")
        avals = tuple(leaf_aval(x) for x in call.leaves)
        if avals != self._traced.in_avals:
            names = self._traced.arg_names or ()
            lines = [
                f"Argument '{names[i] if i < len(names) else i}' compiled with "
                f"{want.str_short()} and called with {got.str_short()}"
                for i, (want, got) in enumerate(zip(self._traced.in_avals, avals, strict=True))
                if want != got
            ]
            raise TypeError(
                "Argument types differ from the types for which this computation was "
                "compiled. The mismatches are:\n" + "\n".join(lines)
            )
        leaves = self._executable.place(call.leaves)
        return self._traced.out_tree.unflatten(self._executable.run(leaves))

    def as_text(self) -> str:
        """Return the optimized HLO text XLA compiled (``Compiled.as_text``)."""
        return self._executable.as_text()

    def cost_analysis(self) -> dict[str, Any]:
        """Return XLA's cost estimate: flops, bytes accessed, ... (``Compiled.cost_analysis``)."""
        return self._executable.cost_analysis()

    @property
    def out_info(self):
        return tree_unflatten(self._traced.out_tree, shape_structs(self._traced.closed.out_avals))


def _prepare_aot(fn: JitFunction, args, kwargs):
    call = CallArgs(fn, args, kwargs)
    in_avals = tuple(leaf_aval(x) for x in call.leaves)
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
