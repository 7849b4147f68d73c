"""Compiled programs as bytes and back (``jax.experimental.serialize_executable``).

``serialize(compiled)`` gives the bytes of a ``Compiled`` (XLA's serialized
executable and what modjax needs to call it: argument and result types, pruned
arguments, closed-over arrays, donation, ordered effects) with the input and
output tree structures, which are not bytes, returned beside them as JAX does.
``deserialize_and_load(payload, in_tree, out_tree)`` loads it onto a device of
the same kind and returns a ``Compiled`` that takes the same arguments.

A program that calls back into Python (``debug.print``, ``pure_callback``...) and
one sharded over several devices cannot be serialized yet.
"""

from __future__ import annotations

import pickle
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from . import _xla
from .backends import get_backend
from .executable import Executable, device_args
from .spmd import SpmdTarget
from .stages import Compiled

if TYPE_CHECKING:
    from .arguments import CallArgs
    from .jit_function import JitFunction, TracedProgram

__all__ = ["deserialize_and_load", "serialize"]

# Bytes from another layout of this record are refused, not misread.
_FORMAT = "modjax-executable-1"


class _Record(NamedTuple):
    """What a serialized Compiled holds besides its trees."""

    format: str
    executable: bytes
    device_id: int
    in_avals: tuple
    out_avals: tuple
    kept: tuple | None
    consts: tuple
    donated: tuple
    arg_donated: tuple
    committed: bool
    name: str
    ordered_effects: tuple
    arg_names: tuple | None


class _LoadedModule(NamedTuple):
    """The parts of the lowered module an Executable reads when it is called."""

    ordered_effects: tuple
    host_callbacks: tuple = ()


class _FlatCall(NamedTuple):
    """A call's flattened arguments, as ``CallArgs`` has them."""

    leaves: list
    in_tree: Any
    donated: tuple
    statics: tuple = ()


class _OutAvals(NamedTuple):
    out_avals: tuple


class _LoadedProgram(NamedTuple):
    """The parts of a traced program a Compiled reads: types, trees and names."""

    in_avals: tuple
    out_tree: Any
    closed: _OutAvals
    arg_names: tuple | None


class LoadedCompiled(Compiled):
    """A ``Compiled`` made from bytes: called with the (non-static) arguments it was built for.

    It has no jitted function; of its call and program a ``Compiled`` reads only the
    fields ``_FlatCall`` and ``_LoadedProgram`` have, which stand in for them.
    """

    def __init__(self, call: _FlatCall, traced: _LoadedProgram, executable: Executable):
        super().__init__(
            cast("JitFunction", None),
            cast("CallArgs", call),
            cast("TracedProgram", traced),
            executable,
        )


def serialize(compiled: Compiled) -> tuple[bytes, Any, Any]:
    """Return ``(payload, in_tree, out_tree)`` of a compiled program (JAX's ``serialize``).

    ``in_tree`` is the structure of the (positional, keyword) arguments without the
    static ones, ``out_tree`` that of the results; they are not in the payload.
    """
    if not isinstance(compiled, Compiled):
        raise TypeError(f"serialize expects a jax.stages.Compiled, got {type(compiled).__name__}")
    executable = compiled._executable
    if executable.host_callbacks:
        raise ValueError(
            "Compilation does not support serialization: the program calls back into Python "
            "(debug.print, debug.callback, pure_callback or io_callback)"
        )
    if isinstance(executable.device, SpmdTarget):
        raise NotImplementedError("serialize_executable of a program sharded over several devices")
    backend = executable.device.client
    record = _Record(
        format=_FORMAT,
        executable=_xla.serialize_executable(backend, executable.xla),
        device_id=executable.device.id,
        in_avals=tuple(executable.in_avals),
        out_avals=tuple(executable.out_avals),
        kept=executable.kept,
        consts=tuple(executable.const_args),
        donated=tuple(executable.donated),
        arg_donated=tuple(compiled._call.donated),
        committed=bool(executable.handlers_committed),
        name=executable.name,
        ordered_effects=tuple(executable.ordered_effects),
        arg_names=compiled._traced.arg_names,
    )
    return pickle.dumps(record), compiled._call.in_tree, compiled._traced.out_tree


def deserialize_and_load(
    serialized: bytes,
    in_tree: Any,
    out_tree: Any,
    backend: Any = None,
    execution_devices: Sequence[Any] | None = None,
) -> Compiled:
    """Load ``serialize``'s payload and return a callable ``Compiled`` (JAX's).

    ``backend`` (a platform name or client; default the default backend) and
    ``execution_devices`` (default its devices) choose where it runs: the device
    of the id it was compiled for. Do not load bytes you do not trust: a payload
    is unpickled, which can run arbitrary code, as in JAX.
    """
    client = get_backend(backend)
    devices = list(client.devices()) if execution_devices is None else list(execution_devices)
    if devices[0].client is not client:
        raise ValueError(
            "Execution devices belong to a client other than `backend`. Got backend client: "
            f"{(client.platform, client.platform_version)} and execution devices client: "
            f"{(devices[0].client.platform, devices[0].client.platform_version)}"
        )
    record = pickle.loads(serialized)
    if not isinstance(record, _Record) or record.format != _FORMAT:
        raise ValueError("deserialize_and_load: the payload is not a serialized modjax executable")
    by_id = {d.id: d for d in devices}
    if record.device_id not in by_id:
        raise ValueError(
            f"deserialize_and_load: the program was compiled for device {record.device_id}, "
            f"which is not among the execution devices {sorted(by_id)}"
        )
    device = by_id[record.device_id]
    xla = _xla.deserialize_executable(client, record.executable, [device], None)
    executable = Executable(
        xla,
        _LoadedModule(record.ordered_effects),
        device,
        list(record.in_avals),
        list(record.out_avals),
        record.kept,
        tuple(device_args(list(record.consts), device)),
        record.donated,
        record.committed,
        record.name,
        "deserialized",
        0.0,
    )
    program = _LoadedProgram(
        record.in_avals, out_tree, _OutAvals(record.out_avals), record.arg_names
    )
    return LoadedCompiled(_FlatCall([], in_tree, record.arg_donated), program, executable)
