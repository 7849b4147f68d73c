"""From a ClosedJaxpr to something that runs: prune, lower, compile, and call.

``compile_jaxpr`` is the one place where jit, the eager ``apply_primitive``
and the impl of ``jit_p`` turn a program into an :class:`Executable`. Closed-
over values (the jaxpr's consts) become leading arguments held by the
executable, not constants baked into the module; unused arguments are pruned
unless asked to keep them (donated ones are always kept, so donation always
consumes them).
"""

from __future__ import annotations

import functools
import time
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from modjax.lowering import lower_jaxpr_to_module, sdy_mesh_symbol
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import MemorySpace, ShapedArray, physical_aval
from modjax.tracecore.config import config
from modjax.tracecore.dce import dce_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, subjaxprs
from modjax.tracecore.monitoring import timed
from modjax.tracecore.sharding_types import context_mesh_sharding
from modjax.tracecore.state import discharge_state, has_refs
from modjax.tracecore.tokens import Token
from modjax.tracecore.tracing import convert_constvars_jaxpr

from . import _xla
from .array import (
    ArrayImpl,
    _canonical_host_value,
    copy_to_sharding,
    device_put_p,
    put_host_value,
    shared_aval,
)
from .backends import Device, default_device
from .compile_cache import compile_options_for, compile_or_get_cached
from .extended import ExtendedArray, committed_key_sharding, is_extended_aval, physical, wrap
from .memory import space_memory_kind
from .sharding import Sharding, SingleDeviceSharding, single_device_sharding, typed_aval
from .spmd import SpmdTarget, spmd_target

_DEVICE_SPACE = MemorySpace.Device

__all__ = [
    "Executable",
    "compile_jaxpr",
    "lower_jaxpr",
    "LoweredProgram",
    "module_name_for",
    "JaxRuntimeError",
    "placement",
    "one_device_placement",
    "device_args",
    "raise_if_deleted",
    "runtime_tokens",
    "effects_barrier",
    "no_execution",
]

JaxRuntimeError = _xla.JaxRuntimeError


def module_name_for(name: str) -> str:
    """Return the MLIR module name of a jitted function called ``name`` (``jit_<name>``)."""
    cleaned = "".join(c if c.isalnum() or c == "_" else "_" for c in name.replace(">", ""))
    return f"jit_{cleaned}"


no_execution = config.define_bool_option(
    "no_execution",
    False,
    help="Raise RuntimeError whenever a compiled program would run (tracing and lowering "
    "still work).",
)


class Executable:
    """A compiled program on one device and the recipe to call it with flat arguments.

    ``run(args)`` takes one Array per (unpruned) input of the traced jaxpr,
    already on ``device``, and returns the list of output Arrays. ``call``
    is the fastest way in for callers that already pruned and prepended: it is
    ``xla.execute_sharded`` itself when there is nothing to prune or prepend.
    A program with inputs or outputs of extended dtypes (``extended``) takes
    and gives ExtendedArrays in ``run``; its ``call`` and ``handlers`` work on
    their physical data, so the fast paths leave such programs to ``run``.
    """

    __slots__ = (
        "xla",
        "lowered",
        "device",
        "sharding",
        "in_avals",
        "out_avals",
        "kept",
        "const_args",
        "handlers",
        "donated",
        "name",
        "compile_source",
        "compile_seconds",
        "handlers_committed",
        "call",
        "in_shardings",
        "out_shardings",
        "arg_shardings",
        "ordered_effects",
        "host_callbacks",
        "extended",
        "given_args",
        "float0",
    )

    def __init__(
        self,
        xla,
        lowered,
        device,
        in_avals,
        out_avals,
        kept,
        const_args,
        donated,
        committed,
        name,
        compile_source,
        compile_seconds,
        one_device_shardings=None,
    ):
        self.xla = xla
        self.lowered = lowered
        self.device = device
        self.sharding = single_device_sharding(device)
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.kept = kept
        self.const_args = const_args
        self.donated = donated
        self.name = name
        self.compile_source = compile_source
        self.compile_seconds = compile_seconds
        self.handlers_committed = committed
        n_in = len(const_args) + (len(in_avals) if kept is None else len(kept))
        if isinstance(device, SpmdTarget):
            self.sharding = None
            self.in_shardings, self.out_shardings = _compiled_shardings(
                xla, device, in_avals, out_avals, kept, len(const_args)
            )
            self.handlers_committed = committed = True
        else:
            # jit's shardings in other memory kinds (``one_device_shardings``: per kept
            # input, consts first, and per output; None: by the type) place values there
            given_in, given_out = one_device_shardings or (None, None)
            self.in_shardings = [
                self.sharding if s is None else s for s in given_in or [None] * n_in
            ]
            self.out_shardings = [
                s
                if s is not None
                else self.sharding
                if getattr(a, "memory_space", _DEVICE_SPACE) is _DEVICE_SPACE
                else single_device_sharding(device, space_memory_kind(a.memory_space))
                for a, s in zip(out_avals, given_out or [None] * len(out_avals), strict=True)
            ]
        # One sharding per (unpruned) argument, None for pruned ones: where run's callers
        # put the arguments.
        by_kept = self.in_shardings[len(const_args) :]
        if kept is None:
            self.arg_shardings = list(by_kept)
        else:
            self.arg_shardings = [None] * len(in_avals)
            for i, sh in zip(kept, by_kept, strict=True):
                self.arg_shardings[i] = sh
        # On one device, the arguments jit's shardings put in another memory (else None).
        self.given_args = None
        if self.sharding is not None and one_device_shardings and one_device_shardings[0]:
            self.given_args = [None if sh is self.sharding else sh for sh in self.arg_shardings]
        self.handlers = [
            _float0_result(a)
            if getattr(a, "dtype", None) == dtypes.float0
            else _xla.result_handler(typed_aval(shared_aval(physical_aval(a)), sh), sh, committed)
            for a, sh in zip(out_avals, self.out_shardings, strict=True)
        ]
        # float0 values (the tangents of integers) travel as booleans and come back as
        # numpy zeros, which the fast paths cannot give.
        self.float0 = any(
            getattr(a, "dtype", None) == dtypes.float0 for a in (*in_avals, *out_avals)
        )
        # Ordered effects: ``main`` takes and returns one token each (before the others);
        # ``run`` threads them between calls through ``runtime_tokens``.
        self.ordered_effects = tuple(getattr(lowered, "ordered_effects", ()))
        if self.ordered_effects and self.sharding is None:
            raise NotImplementedError(
                "ordered effects (debug.print(ordered=True), io_callback(ordered=True)) in a "
                "program sharded over several devices"
            )
        if self.ordered_effects:
            token_handler = _xla.result_handler(shared_aval(_TOKEN_AVAL), self.sharding, committed)
            self.handlers = [token_handler] * len(self.ordered_effects) + self.handlers
        # A program calling Python gives a runtime token, so effects_barrier can wait for it.
        self.host_callbacks = bool(getattr(lowered, "host_callbacks", ()))
        execute = xla.execute_sharded
        if self.host_callbacks:
            execute = functools.partial(execute, with_tokens=True)
        self.extended = any(is_extended_aval(a) for a in (*in_avals, *out_avals))
        if self.extended:
            execute = _physical_execute(execute)
        # A closed-over key array is a const whose program input is its data.
        consts = [physical(c) for c in const_args]
        if kept is None and not consts:
            self.call = execute
        elif kept is None:
            self.call = lambda args: execute([*consts, *args])
        else:
            self.call = lambda args: execute([*consts, *[args[i] for i in kept]])

    def place(self, values: Sequence[Any]) -> list[Any]:
        """Return ``values`` (one per argument) placed where this program takes them."""
        if self.sharding is not None:
            placed = device_args(values, self.device)
            if self.given_args is None:
                return placed
            return [
                x if sh is None else _to_sharding(x, sh)
                for x, sh in zip(placed, self.given_args, strict=True)
            ]
        return [
            x if sh is None else _to_sharding(x, sh)
            for x, sh in zip(values, self.arg_shardings, strict=True)
        ]

    def run(self, args: Sequence[ArrayImpl]) -> list[ArrayImpl]:
        """Execute on ``args`` (Arrays placed by ``place``); return the output Arrays."""
        if no_execution.value:  # the fast paths forget their entries when it is set
            raise RuntimeError(
                f"JAX tried to execute function jit({self.name}), but the no_execution "
                "config option is set"
            )
        effects = self.ordered_effects
        if effects:
            args = [runtime_tokens.get(e, self.device) for e in effects] + list(args)
        try:
            results = self.call(args)
        except JaxRuntimeError:
            raise_if_deleted(args)
            raise
        if self.host_callbacks:
            runtime_tokens.set_output(self.device, results.consume_token())
        outs = results.consume_with_handlers(self.handlers)
        if effects:
            for effect, token in zip(effects, outs, strict=False):
                runtime_tokens.set(effect, self.device, token)
            outs = outs[len(effects) :]
        if self.extended:
            outs = [
                wrap(a, o) if is_extended_aval(a) else o
                for a, o in zip(self.out_avals, outs, strict=True)
            ]
        return outs

    def as_text(self) -> str:
        """Return the optimized HLO text of the compiled program."""
        return _xla.hlo_text(self.xla)

    def cost_analysis(self) -> dict[str, Any]:
        """Return XLA's cost estimate (flops, bytes accessed, ...)."""
        return _xla.cost_analysis(self.xla)


# What a token is at run time: an empty bool array (as in JAX).
_TOKEN_AVAL = ShapedArray((0,), np.dtype(bool))


class _RuntimeTokens:
    """The last token of each ordered effect per device (JAX's ``RuntimeTokenSet``).

    A program with an ordered effect takes the token its previous program returned,
    so XLA runs their effects in call order.
    """

    def __init__(self):
        self.tokens: dict[tuple, ArrayImpl] = {}
        # Per device, the runtime token of the last program there that calls Python.
        self.outputs: dict[Device, Any] = {}

    def get(self, effect, device) -> ArrayImpl:
        token = self.tokens.get((effect, device))
        if token is None:
            sharding = single_device_sharding(device)
            token = put_host_value(np.zeros((0,), bool), _TOKEN_AVAL, sharding, False)
        return token

    def set(self, effect, device, token: ArrayImpl) -> None:
        self.tokens[(effect, device)] = token

    def set_output(self, device, token) -> None:
        # Programs on one device run in order, so the last one's token covers the others.
        self.outputs[device] = token

    def block_until_ready(self) -> None:
        """Wait for every effect dispatched so far (``jax.effects_barrier``)."""
        for token in [*self.tokens.values(), *self.outputs.values()]:
            token.block_until_ready()
        self.outputs.clear()


runtime_tokens = _RuntimeTokens()


def effects_barrier() -> None:
    """Wait until every ordered effect dispatched so far has happened (jax.effects_barrier)."""
    runtime_tokens.block_until_ready()


def _physical_execute(execute):
    def call(args):
        return execute([physical(x) for x in args])

    return call


def raise_if_deleted(args: Sequence[Any]) -> None:
    """Raise the RuntimeError JAX raises when one of ``args`` is a deleted Array."""
    for x in args:
        x = physical(x)
        if type(x) is ArrayImpl and x.is_deleted():
            x._check_if_deleted()


def committed_sharding(x: Any) -> Sharding | None:
    if type(x) is ArrayImpl:
        return x._sharding if x._committed else None
    if isinstance(x, ExtendedArray):
        return committed_key_sharding(x)
    return None


def placement(leaves: Iterable[Any]) -> tuple[Device | SpmdTarget, bool]:
    """Choose where a computation on ``leaves`` runs, and whether it is committed.

    Committed Arrays fix the device (two different ones are an error, as in JAX);
    otherwise the computation runs on the current mesh's devices (``jax.set_mesh``)
    or on the default device. A committed Array with
    a multi-device sharding makes it an SPMD program (an :class:`SpmdTarget`)
    over that sharding's devices.
    """
    leaves = list(leaves)
    device = None
    for x in leaves:
        x = physical(x)
        if type(x) is ArrayImpl and x._committed:
            sharding = x._sharding
            if type(sharding) is not SingleDeviceSharding:
                # Its sharding names the devices, also when it is a key array's data.
                inner = (sharding,)
                return spmd_target(leaves, None, None, inner, committed_of=committed_sharding), True
            if device is None:
                device = sharding._device
            elif sharding._device != device:
                raise ValueError(
                    "Received incompatible devices for jitted computation. Got argument on "
                    f"{device} and argument on {sharding._device}; move them with device_put"
                )
    if device is None:
        context = context_mesh_sharding.value
        if context is not None:  # under jax.set_mesh: on the mesh's devices, as JAX
            return spmd_target(leaves, None, None, (context,)), True
        return default_device(), False
    return device, True


def one_device_placement(leaves, inner, ins=None, outs=None) -> tuple[Device | SpmdTarget, bool]:
    """Where a program without multi-device shardings runs (a Device), and if committed.

    A ``SingleDeviceSharding`` inside it (a ``device_put`` to one device) fixes
    its device, as committed arguments do (JAX 0.10.2's rule; two different
    devices are its ValueError). So do jit's ``SingleDeviceSharding``
    ``in_shardings`` (arguments committed elsewhere are moved there, as in JAX)
    and ``out_shardings`` (a committed argument elsewhere is JAX's ValueError).
    """
    given_in = [s for s in ins or () if type(s) is SingleDeviceSharding]
    if given_in:  # arguments with a given sharding go there, wherever they are committed
        leaves = [
            x for x, s in zip(leaves, ins, strict=True) if type(s) is not SingleDeviceSharding
        ]
    device, committed = placement(leaves)
    if isinstance(device, SpmdTarget):  # a committed multi-device argument decides
        return device, committed
    if given_in:
        ids = sorted({s._device.id for s in given_in})
        if len(ids) > 1:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got in_shardings "
                f"on several devices, with device ids {ids}"
            )
        if committed and device != given_in[0]._device:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument with "
                f"device ids [{device.id}] on platform {device.platform.upper()} and "
                f"in_shardings with device ids [{given_in[0]._device.id}] on platform "
                f"{given_in[0]._device.platform.upper()}"
            )
        device, committed = given_in[0]._device, True
    for s in outs or ():
        if type(s) is not SingleDeviceSharding:
            continue
        if committed and s._device != device:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument with "
                f"device ids [{device.id}] on platform {device.platform.upper()} and explicit "
                f"output sharding with device ids [{s._device.id}] on platform "
                f"{s._device.platform.upper()}"
            )
        device, committed = s._device, True
    what = "argument"
    for s in inner:
        if type(s) is not SingleDeviceSharding:
            continue
        if committed and s._device != device:
            raise ValueError(
                f"Received incompatible devices for jitted computation. Got {what} with "
                f"device ids [{device.id}] and device_put inside jit with device ids "
                f"[{s._device.id}]"
            )
        device, committed, what = s._device, True, "device_put inside jit"
    return device, committed


def _to_sharding(x: Any, sharding: Sharding) -> Any:
    if isinstance(x, ExtendedArray):  # a key array: its data goes there, rewrapped
        data = _to_sharding(x._base_array, sharding)
        return x if data is x._base_array else wrap(x.aval, data)
    if type(x) is Token:  # likewise its empty buffer
        data = _to_sharding(x._buf, sharding)
        return x if data is x._buf else Token(data)
    if type(x) is ArrayImpl:
        if x._sharding is sharding:
            return x
        x._check_if_deleted()
        return copy_to_sharding(x, sharding, x._committed)
    value, aval = _canonical_host_value(x)
    return put_host_value(value, aval, sharding, False)


def _float0_result(aval):
    """A result handler giving a float0 output as JAX does: host zeros (it has no data)."""
    return lambda _buffers: np.zeros(aval.shape, dtypes.float0)


def device_args(values: Sequence[Any], device: Device) -> list[ArrayImpl]:
    """Return ``values`` (Arrays, numpy arrays, scalars) as Arrays on ``device``.

    Arrays already there are passed through; others are copied (through the host
    for now), and host values are put with their canonical dtype. The data of
    an ExtendedArray or a Token is placed the same way, and rewrapped.
    """
    sharding = single_device_sharding(device)
    out = []
    for x in values:
        if isinstance(x, ExtendedArray):
            (data,) = device_args([x._base_array], device)
            out.append(x if data is x._base_array else wrap(x.aval, data))
        elif type(x) is Token:
            (data,) = device_args([x._buf], device)
            out.append(x if data is x._buf else Token(data))
        elif type(x) is ArrayImpl:
            if x._sharding is not sharding:
                x._check_if_deleted()
                if x._sharding._device_assignment != (device,):
                    x = copy_to_sharding(x, sharding, x._committed)
            out.append(x)
        else:
            value, aval = _canonical_host_value(x)
            out.append(put_host_value(value, aval, sharding, False))
    return out


class LoweredProgram:
    """A jaxpr pruned and lowered for one device, not yet compiled."""

    __slots__ = (
        "module",
        "device",
        "in_avals",
        "out_avals",
        "kept",
        "const_args",
        "donated",
        "name",
        "one_device_shardings",
    )

    def __init__(
        self,
        module,
        device,
        in_avals,
        out_avals,
        kept,
        const_args,
        donated,
        name,
        one_device_shardings=None,
    ):
        self.module = module  # a modjax.lowering LoweredModule
        self.one_device_shardings = one_device_shardings
        self.device = device
        self.in_avals = in_avals
        self.out_avals = out_avals
        self.kept = kept
        self.const_args = const_args
        self.donated = donated
        self.name = name

    def compile(
        self, committed: bool = False, compiler_options: Mapping[str, Any] | None = None
    ) -> Executable:
        """Compile (or fetch from the caches) and return the Executable.

        ``compiler_options``: XLA's flags by name, as ``Lowered.compile`` takes them.
        """
        start = time.perf_counter()
        target = self.device
        if isinstance(target, SpmdTarget):
            options = _spmd_options(target, self, compiler_options)
            result = compile_or_get_cached(self.module, target.devices, options, with_info=True)
        else:
            options = compile_options_for([target], compiler_options)
            result = compile_or_get_cached(self.module, [target], options, with_info=True)
        seconds = time.perf_counter() - start
        return Executable(
            result.executable,
            self.module,
            self.device,
            self.in_avals,
            self.out_avals,
            self.kept,
            self.const_args,
            self.donated,
            committed,
            self.name,
            result.source,
            seconds,
            self.one_device_shardings,
        )


def lower_jaxpr(
    closed: ClosedJaxpr,
    device: Device,
    *,
    name: str,
    donated: Sequence[bool] | None = None,
    keep_unused: bool = False,
    one_device_shardings: tuple | None = None,
) -> LoweredProgram:
    """Prune ``closed`` and lower it to StableHLO for ``device``.

    ``donated`` has one flag per invar of the jaxpr. The consts of ``closed`` are
    put on ``device`` once and passed before the arguments. Unused arguments
    (donated or not) are pruned unless ``keep_unused``, as in JAX; a donated
    argument that no output can reuse is reported with a UserWarning and left
    alive. On one device, ``one_device_shardings`` (jit's ``SingleDeviceSharding``
    in/out shardings, None entries unspecified, when one names another memory
    kind) puts those arguments and results in their memories.
    """
    if has_refs(closed):  # references made and used inside: a pure program for XLA
        closed = discharge_state(closed)
    closed, embedded = _embed_consts(closed, small_arrays=not isinstance(device, SpmdTarget))
    jaxpr = closed.jaxpr
    n_consts, n_args = len(jaxpr.constvars), len(jaxpr.invars)
    donated = tuple(donated) if donated is not None else (False,) * n_args
    flat = convert_constvars_jaxpr(jaxpr)
    keep = [False] * n_consts + [keep_unused] * n_args
    pruned, used = dce_jaxpr(flat, [True] * len(flat.outvars), instantiate=keep)
    used_consts, used_args = used[:n_consts], used[n_consts:]
    kept = None if all(used_args) else tuple(i for i, u in enumerate(used_args) if u)
    const_values = [c for c, u in zip(closed.consts, used_consts, strict=True) if u]
    kept_donated = [False] * len(const_values) + [
        d for d, u in zip(donated, used_args, strict=True) if u
    ]
    with timed("/jax/core/compile/jaxpr_to_mlir_module_duration", f"jit({name})"):
        if isinstance(device, SpmdTarget):
            const_args = tuple(_to_sharding(c, device.replicated) for c in const_values)
            module = lower_jaxpr_to_module(
                _with_consts(pruned, embedded),
                module_name=module_name_for(name),
                donated_args=kept_donated,
                platform=device.client.platform,
                placement=device,
                **_spmd_annotations(device, pruned, len(const_args), used_args),
            )
        else:
            const_args = tuple(device_args(const_values, device))
            ins, outs = one_device_shardings or (None, None)
            kept_ins = [None] * len(const_values) + [
                s for s, u in zip(ins or [None] * n_args, used_args, strict=True) if u
            ]
            outs = list(outs or [None] * len(pruned.outvars))
            if one_device_shardings is not None:
                one_device_shardings = (kept_ins, outs)
            module = lower_jaxpr_to_module(
                _with_consts(pruned, embedded),
                module_name=module_name_for(name),
                donated_args=kept_donated,
                platform=device.client.platform,
                placement=device,
                **_memory_kind_annotations(
                    device, pruned, kept_ins, outs, one_device_shardings is not None, single=True
                ),
            )
    unusable = [
        aval.str_short()
        for aval, d, alias in zip(
            module.in_avals, kept_donated, module.input_output_aliases, strict=True
        )
        if d and alias is None
    ]
    if unusable:
        warnings.warn(
            f"Some donated buffers were not usable: {', '.join(unusable)}. A donated buffer "
            "is reused only by an output of the same shape and dtype.",
            stacklevel=4,
        )
    return LoweredProgram(
        module,
        device,
        list(jaxpr.in_avals),
        list(jaxpr.out_avals),
        kept,
        const_args,
        donated,
        name,
        None if isinstance(device, SpmdTarget) else one_device_shardings,
    )


# A closed-over array of at most this many bytes is embedded in a one-device program as
# a constant, as JAX embeds every closed-over value: each argument costs the executable
# about a microsecond per call (a jit closing over 20 small arrays: 21 us a call against
# JAX's 5-7 us). Larger ones, and any past the total, stay arguments, so no module
# carries megabytes of data in its text (the compile cache's key).
EMBEDDED_CONST_MAX_BYTES = 64 * 1024
EMBEDDED_CONSTS_MAX_TOTAL_BYTES = 1024 * 1024

# Dtypes XLA cannot take as constants (jaxlib 0.10.2 aborts on them).
_NO_CONSTANT_DTYPES = frozenset({"float6_e2m3fn", "float6_e3m2fn"})


def _embeddable_bytes(value: Any) -> int | None:
    """The bytes of ``value`` if it may be embedded as a constant, else None."""
    if type(value) is ArrayImpl:
        if value.is_deleted() or type(value.sharding) is not SingleDeviceSharding:
            return None
        if value.sharding.memory_kind not in (None, value.sharding.device.default_memory().kind):
            return None
        dtype = value.dtype
    elif type(value) is np.ndarray or isinstance(value, np.generic):
        dtype = value.dtype
    else:
        return None
    if not isinstance(dtype, np.dtype) or dtype.kind not in "biufc":
        return None
    if dtype.name in _NO_CONSTANT_DTYPES:
        return None
    return int(value.nbytes)


def _embed_consts(closed: ClosedJaxpr, small_arrays: bool) -> tuple[ClosedJaxpr, dict]:
    """Split off the consts that the program makes itself instead of taking them.

    A token closed over is lowered to ``stablehlo.create_token`` inside the program
    (as JAX does). With ``small_arrays``, arrays closed over become constants of the
    program too, up to ``EMBEDDED_CONST_MAX_BYTES`` each and
    ``EMBEDDED_CONSTS_MAX_TOTAL_BYTES`` in all. Return ``closed`` without those consts
    (their variables left free) and a dict of them by variable.
    """
    jaxpr = closed.jaxpr
    embedded: dict = {}
    budget = EMBEDDED_CONSTS_MAX_TOTAL_BYTES if small_arrays else 0
    for var, const in zip(jaxpr.constvars, closed.consts, strict=True):
        if type(const) is Token:
            embedded[var] = const
        elif budget:
            size = _embeddable_bytes(const)
            if size is not None and size <= min(EMBEDDED_CONST_MAX_BYTES, budget):
                embedded[var] = const
                budget -= size
    if not embedded:
        return closed, {}
    rest = [
        (v, c) for v, c in zip(jaxpr.constvars, closed.consts, strict=True) if v not in embedded
    ]
    return ClosedJaxpr(
        jaxpr.replace(constvars=[v for v, _ in rest]), [c for _, c in rest]
    ), embedded


def _with_consts(pruned, tokens: dict) -> ClosedJaxpr:
    """The pruned jaxpr to lower, closed over the embedded consts it still uses."""
    if not tokens:
        return ClosedJaxpr(pruned, ())
    used = {id(x) for e in pruned.eqns for x in e.invars} | {id(x) for x in pruned.outvars}
    kept = [v for v in tokens if id(v) in used]
    return ClosedJaxpr(pruned.replace(constvars=kept), [tokens[v] for v in kept])


# --- SPMD programs ----------------------------------------------------------------------------


def _spmd_annotations(target: SpmdTarget, pruned, n_consts: int, used_args) -> dict:
    """The lowering arguments that annotate an SPMD program's module with its shardings.

    Shardings on other meshes over the program's devices name further Shardy
    meshes (``@mesh_0``, ...), declared in the order JAX 0.10 declares them.
    """
    in_avals = [v.aval for v in pruned.invars]
    kept_shardings = [s for s, u in zip(target.in_shardings, used_args, strict=True) if u]
    in_shardings = [target.replicated] * n_consts + kept_shardings
    out_avals = [v.aval for v in pruned.outvars]
    outs = target.out_shardings or [None] * len(out_avals)
    names = {target.context._sdy_mesh: sdy_mesh_symbol(0)}
    for s in (*in_shardings, *outs):
        if s is not None and s._sdy_mesh not in names:
            names[s._sdy_mesh] = sdy_mesh_symbol(len(names))

    def text(s, aval):  # a key array's argument is its data, one dimension more
        if s is None:
            return None
        return s._to_sdy_sharding(len(physical_aval(aval).shape), names[s._sdy_mesh])

    arg_texts = [text(s, a) for s, a in zip(in_shardings, in_avals, strict=True)]
    result_texts = [text(s, a) for s, a in zip(outs, out_avals, strict=True)]
    meshes = list(names)
    return {
        "arg_shardings": arg_texts,
        "result_shardings": result_texts if any(result_texts) else None,
        "num_partitions": len(target.devices),
        "sdy_mesh": meshes[0],
        "sdy_meshes": meshes[1:],
        **_memory_kind_annotations(
            target.devices[0], pruned, in_shardings, outs, target.memory_kinds
        ),
    }


def _in_other_memory(avals) -> bool:
    return any(getattr(a, "memory_space", _DEVICE_SPACE) is not _DEVICE_SPACE for a in avals)


def _moves_memory(jaxpr, default: str) -> bool:
    """Whether ``jaxpr`` (or a jaxpr inside) puts a value in a memory space or another kind."""
    for eqn in jaxpr.eqns:
        if eqn.primitive is device_put_p:
            for target in eqn.params["devices"]:
                if isinstance(target, MemorySpace):
                    return True
                if isinstance(target, Sharding) and target.memory_kind not in (None, default):
                    return True
        for inner in subjaxprs(eqn.params):
            if _moves_memory(getattr(inner, "jaxpr", inner), default):
                return True
    return False


def _memory_kind_annotations(
    device, jaxpr, in_shardings, out_shardings, given_kinds: bool, single: bool = False
) -> dict:
    """The memory kinds of a program's arguments and results, as JAX annotates them.

    Only a program with jit shardings in a memory kind other than the default
    (``given_kinds``), values in another memory space or a ``device_put`` to
    another memory has them: then every argument and result carries
    ``mhlo.memory_kind`` (its sharding's, else its type's memory space's; on one
    device, an argument of the default memory none), and each result given
    another memory kind by its sharding is moved there by
    ``annotate_device_placement``.
    """
    in_avals = [v.aval for v in jaxpr.invars]
    out_avals = [v.aval for v in jaxpr.outvars]
    default = device.default_memory().kind
    if not (
        given_kinds
        or _in_other_memory(in_avals)
        or _in_other_memory(out_avals)
        or _moves_memory(jaxpr, default)
    ):
        return {}

    def kind(s, aval):
        if s is not None and s.memory_kind is not None:
            return s.memory_kind
        space = getattr(aval, "memory_space", _DEVICE_SPACE)
        return default if space is _DEVICE_SPACE else space_memory_kind(space)

    def arg_kind(s, aval):
        if s is None and single and getattr(aval, "memory_space", _DEVICE_SPACE) is _DEVICE_SPACE:
            return None  # as JAX: an argument without a sharding has no memory kind
        return kind(s, aval)

    def placement(s, aval):
        # JAX moves a result given a sharding into its memory kind (and on one device
        # even into the default one, from a value typed in another memory space)
        if s is None:
            return None
        if s.memory_kind not in (None, default):
            return s.memory_kind
        if single and getattr(aval, "memory_space", _DEVICE_SPACE) is not _DEVICE_SPACE:
            return default
        return None

    return {
        "arg_memory_kinds": [arg_kind(s, a) for s, a in zip(in_shardings, in_avals, strict=True)],
        "result_memory_kinds": [kind(s, a) for s, a in zip(out_shardings, out_avals, strict=True)],
        "result_placements": [
            placement(s, a) for s, a in zip(out_shardings, out_avals, strict=True)
        ],
    }


def _spmd_options(target: SpmdTarget, program, compiler_options: Mapping[str, Any] | None = None):
    """Compile options of an SPMD program: partitions, Shardy, and where XLA may choose."""
    n_consts = len(program.const_args)
    ins = [True] * n_consts + [
        s is not None
        for i, s in enumerate(target.in_shardings)
        if program.kept is None or i in program.kept
    ]
    outs = target.out_shardings or [None] * len(program.out_avals)
    return _xla.compile_options(
        [d.id for d in target.devices],
        spmd_partitioning=True,
        shardy=True,
        propagate_to_parameters=[not given for given in ins],
        propagate_to_output=[s is None for s in outs],
        compiler_options=compiler_options,
    )


def _compiled_shardings(xla, target: SpmdTarget, in_avals, out_avals, kept, n_consts: int):
    """Return the shardings of an SPMD executable's kept inputs and its outputs.

    Given ones are kept (the same objects); XLA's choices are read from the
    executable and expressed on the program's mesh.
    """
    context = target.context
    params, outs = _xla.xla_shardings(xla)
    # On one device XLA reports no shardings (None): everything is replicated there.
    if params is None:
        params = [_xla.replicated_hlo_sharding()] * (
            n_consts + (len(in_avals) if kept is None else len(kept))
        )
    if outs is None:
        outs = [_xla.replicated_hlo_sharding()] * len(out_avals)
    kept_idx = range(len(in_avals)) if kept is None else kept
    given_in = [context._replicated()] * n_consts + [target.in_shardings[i] for i in kept_idx]
    # At the data's rank: a key array's has the element's dimensions too.
    in_nd = [0] * n_consts + [len(physical_aval(in_avals[i]).shape) for i in kept_idx]
    in_shardings = [
        s if s is not None else context._from_hlo_sharding(_xla.hlo_sharding(params[j]), nd)
        for j, (s, nd) in enumerate(zip(given_in, in_nd, strict=True))
    ]
    if n_consts:
        in_shardings[:n_consts] = [context._replicated()] * n_consts
    given_out = target.out_shardings or [None] * len(out_avals)
    out_shardings = [
        s
        if s is not None
        else context._from_hlo_sharding(_xla.hlo_sharding(outs[j]), len(physical_aval(a).shape))
        for j, (s, a) in enumerate(zip(given_out, out_avals, strict=True))
    ]
    if target.memory_kinds or _in_other_memory(out_avals) or _in_other_memory(in_avals):
        # XLA's choices in the memory the program left them in (a device_put inside
        # moves values between memories of the same space only: their kinds are typed)
        kinds = xla.get_output_memory_kinds()[0]
        out_shardings = [
            s if s.memory_kind == k else s.with_memory_kind(k)
            for s, k in zip(out_shardings, kinds, strict=True)
        ]
    return in_shardings, out_shardings


def compile_jaxpr(
    closed: ClosedJaxpr,
    device: Device,
    *,
    name: str,
    donated: Sequence[bool] | None = None,
    keep_unused: bool = False,
    committed: bool = False,
    one_device_shardings: tuple | None = None,
) -> Executable:
    """Prune, lower and compile ``closed`` for ``device``; return its Executable.

    See ``lower_jaxpr``; ``committed`` is the committedness of the outputs.
    """
    program = lower_jaxpr(
        closed,
        device,
        name=name,
        donated=donated,
        keep_unused=keep_unused,
        one_device_shardings=one_device_shardings,
    )
    return program.compile(committed)
