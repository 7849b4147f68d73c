"""Programs over several devices: where their inputs and outputs live, and how they compile.

A single-device computation is placed on a ``Device``. A computation whose
inputs or outputs have multi-device shardings (``modjax.sharding``'s
NamedSharding, jit's ``in_shardings``/``out_shardings``) is placed on an
:class:`SpmdTarget`: the devices in the program's order and one sharding (or
None: XLA chooses) per input and output. Lowering annotates the module with
the shardings in Shardy's dialect (``sdy.sharding`` on ``main``'s arguments and
results, ``sdy.mesh @mesh`` and one more per other mesh over the same
devices), as JAX 0.10 does by default, and XLA's SPMD
partitioner (Shardy) inserts the communication. After compiling, the
shardings XLA chose for unspecified inputs and outputs are read back from the
executable and expressed on the program's mesh.

Everything here works through the Sharding protocol; a multi-device sharding
class (from a higher package) provides ``_to_sdy_sharding(ndim)``,
``_sdy_mesh`` (axis names and sizes), ``_from_hlo_sharding(hlo, ndim)`` and
``_replicated()``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Sequence
from typing import Any

from modjax.tracecore.abstract import with_type_sharding
from modjax.tracecore.jaxpr import Jaxpr

from .backends import Device
from .sharding import Sharding, SingleDeviceSharding

__all__ = [
    "SpmdTarget",
    "spmd_target",
    "jaxpr_shardings",
    "check_same_devices",
    "type_out_shardings",
    "one_device_shardings",
]


class SpmdTarget:
    """Where a multi-device program runs: ``devices``, and per input/output a Sharding or None.

    ``context`` is a multi-device sharding on the program's mesh; it names the
    Shardy mesh and converts XLA's choices back into shardings.
    """

    __slots__ = (
        "devices",
        "in_shardings",
        "out_shardings",
        "context",
        "memory_kinds",
        "_key",
        "_hash",
    )

    def __init__(
        self, devices, in_shardings, out_shardings, context: Sharding, inner_kinds: bool = False
    ):
        self.devices: tuple[Device, ...] = tuple(devices)
        self.in_shardings: tuple[Sharding | None, ...] = tuple(in_shardings)
        self.out_shardings: tuple[Sharding | None, ...] | None = (
            None if out_shardings is None else tuple(out_shardings)
        )
        # The context stands for the default memory: XLA's choices and the consts'
        # sharding are made from it (a pinned_host one would put them in host memory).
        if _other_memory_kind([context]):
            with contextlib.suppress(NotImplementedError):  # a kind without memory kinds
                context = context.with_memory_kind(_kind_default(context))
        self.context = context
        # Whether a sharding (of jit's, or inside the program: ``inner_kinds``) names a
        # memory kind other than the default: then the program's arguments and results
        # carry their memory kinds (JAX's rule).
        self.memory_kinds = (
            inner_kinds
            or _other_memory_kind(self.in_shardings)
            or _other_memory_kind(self.out_shardings or ())
        )
        self._key = (self.devices, self.in_shardings, self.out_shardings)
        self._hash = hash(self._key)

    def __hash__(self) -> int:
        return self._hash

    def __eq__(self, other) -> bool:
        return isinstance(other, SpmdTarget) and self._key == other._key

    def __repr__(self) -> str:
        return f"SpmdTarget({len(self.devices)} devices)"

    @property
    def client(self):
        return self.devices[0].client

    @property
    def replicated(self) -> Sharding:
        return self.context._replicated()

    def with_outputs(self, out_shardings) -> SpmdTarget:
        """Return the target with the given per-output shardings (None entries: XLA's choice)."""
        return SpmdTarget(
            self.devices, self.in_shardings, out_shardings, self.context, self.memory_kinds
        )


def _is_multi(sharding: Sharding | None) -> bool:
    return sharding is not None and type(sharding) is not SingleDeviceSharding


def check_same_devices(shardings: Iterable[tuple[str, Sharding]]) -> Sharding | None:
    """Return a multi-device sharding among ``shardings`` (if any); all must share its devices.

    ``shardings`` holds (description, sharding) pairs; a mismatch raises JAX's
    ValueError naming the two.
    """
    context = None
    context_what = None
    for what, s in shardings:
        if not _is_multi(s):
            continue
        if context is None:
            context, context_what = s, what
        elif s._device_assignment != context._device_assignment:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"{context_what} with device ids {[d.id for d in context._device_assignment]} "
                f"and {what} with device ids {[d.id for d in s._device_assignment]}"
            )
        elif (getattr(s, "_sdy_mesh", None) is None) != (
            getattr(context, "_sdy_mesh", None) is None
        ):
            # Meshes over the same devices may differ (JAX declares one Shardy mesh each);
            # a sharding without a mesh (an XLA-chosen GSPMDSharding) has no Shardy form.
            raise NotImplementedError(
                f"one jitted computation mixing a sharding without a mesh with one on a mesh "
                f"({context_what}: {context!r}, {what}: {s!r})"
            )
    return context


def jaxpr_shardings(jaxpr: Jaxpr) -> list[Sharding]:
    """Return the shardings that equations of ``jaxpr`` (and inner jaxprs) hold as params."""
    found: list[Sharding] = []
    seen: set[int] = set()

    def visit(j):
        if id(j) in seen:
            return
        seen.add(id(j))
        for eqn in j.eqns:
            for value in eqn.params.values():
                _collect(value)

    def _collect(value):
        if isinstance(value, Sharding):
            found.append(value)
        elif isinstance(value, tuple | list):
            for v in value:
                _collect(v)
        elif isinstance(value, Jaxpr):
            visit(value)
        elif hasattr(value, "jaxpr") and isinstance(value.jaxpr, Jaxpr):
            visit(value.jaxpr)

    visit(jaxpr)
    return found


def spmd_target(
    leaves: Sequence[Any],
    in_shardings: Sequence[Sharding | None] | None,
    out_shardings: Sequence[Sharding | None] | None,
    inner: Sequence[Sharding] = (),
    committed_of=None,
) -> SpmdTarget | None:
    """Return the SpmdTarget of a call, or None when it involves no multi-device sharding.

    ``in_shardings`` (per flat argument, None where unspecified) come from jit;
    committed Arrays without one keep their own sharding. ``inner`` holds the
    shardings found inside the program (sharding constraints). A committed
    argument whose sharding differs from its ``in_shardings`` entry raises
    JAX's ValueError.
    """
    n = len(leaves)
    given = list(in_shardings) if in_shardings is not None else [None] * n
    arg_shardings: list[Sharding | None] = []
    pairs = []
    for i, (x, s) in enumerate(zip(leaves, given, strict=True)):
        own = committed_of(x) if committed_of is not None else None
        if s is not None and own is not None and _kind(own) != _kind(s):
            raise ValueError(
                "Memory kinds passed to jax.jit does not match memory kind on the respective "
                f"arg. Got jit memory kind: {_kind(s)}, arg memory kind: {_kind(own)} for arg "
                f"type: {_arg_type(x)}"
            )
        if (
            s is not None
            and own is not None
            and own is not s
            and not _same_placement(own, s, x)
            # one device to another: the argument is moved there (JAX 0.10.2)
            and not (len(own._device_assignment) == 1 == len(s._device_assignment))
        ):
            raise ValueError(
                f"Sharding passed to jit does not match the sharding on the respective "
                f"argument {i}. Got jit sharding: {s!r} and argument sharding: {own!r} for "
                f"argument of shape {getattr(x, 'shape', ())}"
            )
        chosen = s if s is not None else own
        arg_shardings.append(chosen)
        if chosen is not None:
            pairs.append((f"argument {i}", chosen))
    outs = list(out_shardings) if out_shardings is not None else []
    pairs += [(f"out_shardings[{i}]", s) for i, s in enumerate(outs) if s is not None]
    pairs += [("a sharding constraint", s) for s in inner]
    context = check_same_devices(pairs)
    if context is None:
        return None  # a program on one device (``one_device_shardings`` says where)
    for what, s in pairs:
        if type(s) is SingleDeviceSharding and s._device_assignment != context._device_assignment:
            raise ValueError(
                "Received incompatible devices for jitted computation. Got "
                f"{what} on {s._device} and a sharding over "
                f"{len(context._device_assignment)} devices"
            )
    arg_shardings = [None if type(s) is SingleDeviceSharding else s for s in arg_shardings]
    return SpmdTarget(
        context._device_assignment,
        arg_shardings,
        None
        if out_shardings is None
        else [None if type(s) is SingleDeviceSharding else s for s in outs],
        context,
        _other_memory_kind(inner),
    )


def one_device_shardings(
    in_shardings: Sequence[Sharding | None] | None, out_shardings: Sequence[Sharding | None] | None
) -> tuple[tuple | None, tuple | None] | None:
    """Return a one-device program's given (in, out) shardings when one is in another memory.

    Such ``SingleDeviceSharding``s place the arguments and results in their
    memory kinds (as JAX 0.10.2 does); None when all are in the default memory.
    """
    ins = tuple(in_shardings or ())
    outs = tuple(out_shardings or ())
    if not _other_memory_kind(ins) and not _other_memory_kind(outs):
        return None
    return ins or None, outs or None


def _kind(s: Sharding) -> str:
    return s.memory_kind or _kind_default(s)


def _other_memory_kind(shardings) -> bool:
    """Whether one of ``shardings`` (None entries allowed) is in a non-default memory kind."""
    return any(
        s is not None and s.memory_kind is not None and s.memory_kind != _kind_default(s)
        for s in shardings
    )


def _kind_default(s: Sharding) -> str:
    return s._device_assignment[0].default_memory().kind


def _arg_type(x) -> str:
    aval = getattr(x, "aval", None)
    return aval.str_short() if aval is not None else repr(x)


def _same_placement(a: Sharding, b: Sharding, x) -> bool:
    ndim = len(getattr(x, "shape", ()))
    try:
        return a.is_equivalent_to(b, ndim)
    except Exception:  # shardings of different kinds
        return False


def type_out_shardings(
    out_avals, context: Sharding | None = None
) -> tuple[Sharding | None, ...] | None:
    """Return the output shardings a program's types fix (explicit mesh axes), or None if none.

    As in JAX, a result typed over a mesh whose axes are all explicit is laid
    out as its type says; on a mesh with automatic axes too, XLA chooses.
    ``context``: the current mesh's replicated sharding when the program runs there
    for want of committed arguments (``jax.set_mesh``); results with no type are then
    typed on it, replicated, as JAX's are.
    """
    typed = None if context is None else getattr(context, "_type_sharding", None)
    outs: list = []
    for aval in out_avals:
        s = getattr(aval, "type_sharding", None)
        if s is None and typed is not None and hasattr(aval, "shape"):
            s = with_type_sharding(aval, typed).type_sharding
        mesh = getattr(s, "mesh", None)
        outs.append(s if mesh is not None and not mesh.auto_axes else None)
    return None if all(s is None for s in outs) else tuple(outs)
