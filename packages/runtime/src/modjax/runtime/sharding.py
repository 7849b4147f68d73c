"""Shardings: how an array's data is laid out over devices (``jax.sharding``).

jaxlib's runtime (device transfers, result handlers, executables) recognizes
its own C++ sharding classes, and the nanobind classes accept exactly one
base. So each concrete sharding subclasses one C++ class
(``SingleDeviceSharding`` subclasses jaxlib's ``SingleDeviceSharding``; the
sharding package's ``NamedSharding`` subclasses its ``GSPMDSharding``, both
re-exported by ``_xla``) and
joins the Python protocol :class:`Sharding` with :func:`register_sharding`,
which registers it as a virtual subclass and gives it the protocol's default
methods it does not define.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from modjax.tracecore.abstract import MemorySpace, with_type_sharding
from modjax.tracecore.options import remove_size_one_mesh_axis_from_type

from . import _xla
from .backends import Device

__all__ = [
    "Sharding",
    "SingleDeviceSharding",
    "register_sharding",
    "single_device_sharding",
    "Index",
    "register_sharding_spec",
    "as_sharding",
    "is_sharding_like",
    "typed_aval",
]

Index = tuple[slice, ...]


class Sharding(abc.ABC):
    """The protocol every modjax sharding follows (``jax.sharding.Sharding``).

    A concrete sharding provides the abstract members; the others have
    defaults here that :func:`register_sharding` copies onto it.
    """

    # Hooks of a sharding on a mesh (modjax.sharding's), which the SPMD path calls:
    # declared for readers and the type checker, not defined, so that a sharding
    # without a mesh has none of them (``getattr(s, "_sdy_mesh", None)``).
    _sdy_mesh: Any
    _replicated: Callable[[], Sharding]
    _from_hlo_sharding: Callable[[Any, int], Sharding]
    _to_sdy_sharding: Callable[..., Any]  # (ndim, mesh symbol="mesh") -> "#sdy.sharding<...>"
    _on_devices: Callable[[Sequence[Device]], Sharding]  # the layout over other devices

    # --- what a concrete sharding defines ---------------------------------------------

    @property
    @abc.abstractmethod
    def device_set(self) -> set[Device]:
        """The set of devices this sharding spans."""

    @property
    @abc.abstractmethod
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""

    @property
    @abc.abstractmethod
    def memory_kind(self) -> str | None:
        """The memory the data lives in ("device", "pinned_host", ...)."""

    @property
    @abc.abstractmethod
    def _device_assignment(self) -> tuple[Device, ...]:
        """The devices in the order the compiled program numbers them."""

    @abc.abstractmethod
    def _to_xla_hlo_sharding(self, num_dimensions: int) -> _xla.HloSharding:
        """The XLA HloSharding of an array of ``num_dimensions`` dimensions."""

    @abc.abstractmethod
    def devices_indices_map(self, global_shape: tuple[int, ...]) -> Mapping[Device, Index]:
        """Map each device to the index (a tuple of slices) of the data it holds."""

    @abc.abstractmethod
    def with_memory_kind(self, kind: str) -> Sharding:
        """Return the same sharding in memory ``kind``."""

    # --- defaults ---------------------------------------------------------------------

    @property
    def num_devices(self) -> int:
        """How many devices the sharding spans."""
        return len(self.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        """Whether this process drives every device of the sharding."""
        return all(d.process_index == d.client.process_index() for d in self.device_set)

    @property
    def addressable_devices(self) -> set[Device]:
        """The devices of the sharding this process drives."""
        return {d for d in self.device_set if d.process_index == d.client.process_index()}

    @property
    def _addressable_device_assignment(self) -> tuple[Device, ...]:
        return tuple(
            d for d in self._device_assignment if d.process_index == d.client.process_index()
        )

    def addressable_devices_indices_map(self, global_shape) -> Mapping[Device, Index]:
        """Like ``devices_indices_map``, restricted to this process's devices."""
        local = self.addressable_devices
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if d in local}

    def shard_shape(self, global_shape: tuple[int, ...]) -> tuple[int, ...]:
        """Return the shape of one shard of an array of ``global_shape``."""
        if self.is_fully_replicated:
            return tuple(global_shape)
        index = next(iter(self.devices_indices_map(global_shape).values()))
        return tuple(len(range(*s.indices(n))) for s, n in zip(index, global_shape, strict=True))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Tell whether ``other`` places data on the same devices in the same way."""
        return (
            self._device_assignment == other._device_assignment
            and self.memory_kind == other.memory_kind
            and self._to_xla_hlo_sharding(ndim) == other._to_xla_hlo_sharding(ndim)
        )

    def check_compatible_aval(self, aval_shape: tuple[int, ...]) -> None:  # noqa: B027
        """Raise ValueError if an array of ``aval_shape`` cannot have this sharding."""


_DEFAULTS = [
    name
    for name, value in vars(Sharding).items()
    if not name.startswith("__") and not getattr(value, "__isabstractmethod__", False)
]


def register_sharding(cls: type) -> type:
    """Make ``cls`` a :class:`Sharding`: register it and give it the protocol's defaults.

    Use as a class decorator on a subclass of one of jaxlib's C++ sharding classes.
    """
    for name in _DEFAULTS:
        if not any(name in vars(base) for base in cls.__mro__ if base is not object):
            setattr(cls, name, vars(Sharding)[name])
    missing = [
        name
        for name, value in vars(Sharding).items()
        if getattr(value, "__isabstractmethod__", False)
        and not any(name in vars(base) for base in cls.__mro__[:-1])
    ]
    if missing:
        raise TypeError(f"{cls.__name__} does not implement the Sharding protocol: {missing}")
    Sharding.register(cls)
    return cls


@register_sharding
class SingleDeviceSharding(_xla.SingleDeviceSharding):
    """All of the array on one device (``jax.sharding.SingleDeviceSharding``).

    There is one instance per device and memory kind: constructing it again
    returns the same object. So equality and hashing are by identity, which
    jaxlib's C++ dispatch evaluates without calling back into Python.
    """

    _instances: dict[tuple, SingleDeviceSharding] = {}

    def __new__(cls, device: Device, *, memory_kind: str | None = None):
        key = (device, memory_kind)
        self = cls._instances.get(key)
        if self is None:
            self = _xla.SingleDeviceSharding.__new__(cls)
            _xla.SingleDeviceSharding.__init__(self, device, memory_kind=memory_kind)
            canonical = (device, self._memory_kind)
            self = cls._instances.setdefault(canonical, self)
            cls._instances[key] = self
        return self

    def __init__(self, device: Device, *, memory_kind: str | None = None):
        pass  # initialized once, by __new__

    def __reduce__(self):
        return functools.partial(SingleDeviceSharding, memory_kind=self._memory_kind), (
            self._device,
        )

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r}, memory_kind={self._memory_kind})"

    @property
    def device(self) -> Device:
        """The one device holding the data."""
        return self._device

    @functools.cached_property
    def device_set(self) -> set[Device]:
        return {self._device}

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    @property
    def num_devices(self) -> int:
        return 1

    @functools.cached_property
    def _device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    @property
    def _addressable_device_assignment(self) -> tuple[Device, ...]:
        return (self._device,)

    is_fully_replicated = True

    @property
    def is_fully_addressable(self) -> bool:
        return self._device.process_index == self._device.client.process_index()

    @property
    def addressable_devices(self) -> set[Device]:
        return self.device_set if self.is_fully_addressable else set()

    def with_memory_kind(self, kind: str) -> SingleDeviceSharding:
        return SingleDeviceSharding(self._device, memory_kind=kind)

    def devices_indices_map(self, global_shape) -> Mapping[Device, Index]:
        return {self._device: (slice(None),) * len(global_shape)}

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        return tuple(global_shape)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> _xla.HloSharding:
        return _xla.replicated_hlo_sharding()


def single_device_sharding(device: Device, memory_kind: str | None = None) -> SingleDeviceSharding:
    """Return the SingleDeviceSharding of ``device`` (the one instance there is)."""
    return SingleDeviceSharding(device, memory_kind=memory_kind)


# Types whose values stand for a sharding where one is expected (jit's in/out_shardings,
# device_put): a higher package's PartitionSpec, resolved against the current mesh.
_spec_resolvers: dict[type, Callable[[Any, str], Sharding]] = {}


def register_sharding_spec(cls: type, resolve: Callable[[Any, str], Sharding]) -> None:
    """Let values of ``cls`` stand for the Sharding ``resolve(value, where)`` gives at call time.

    ``where`` names the use for error messages: ``"device_put"``, ``"in_shardings"``
    or ``"out_shardings"``.
    """
    _spec_resolvers[cls] = resolve


def is_sharding_like(x: Any) -> bool:
    """Tell whether ``x`` is None, a Sharding or a value standing for one."""
    return x is None or isinstance(x, Sharding) or type(x) in _spec_resolvers


def as_sharding(x: Any, where: str):
    """Return the Sharding ``x`` stands for in ``where`` (None and Shardings unchanged)."""
    resolve = _spec_resolvers.get(type(x))
    return x if resolve is None else resolve(x, where)


_typed_avals: dict[tuple, Any] = {}


_HOST, _DEVICE = MemorySpace.Host, MemorySpace.Device


def typed_aval(aval, sharding):
    """Return ``aval`` with the sharding in its type that an Array on ``sharding`` has.

    A sharding over explicit mesh axes gives its ``_type_sharding`` (JAX's
    ``aval.type_sharding``, padded to the rank); any other gives None. Shared per
    (aval, sharding).
    """
    # The memory space in the type: pinned_host memory is Host, any other Device (as JAX).
    space = _HOST if sharding.memory_kind == "pinned_host" else _DEVICE
    if (
        type(sharding) is SingleDeviceSharding
        and aval.type_sharding is None
        and getattr(aval, "memory_space", space) is space
    ):
        return aval
    # The type depends on remove_size_one_mesh_axis_from_type too.
    key = (aval, sharding, remove_size_one_mesh_axis_from_type.value)
    out = _typed_avals.get(key)
    if out is None:
        typed = getattr(sharding, "_type_sharding", None)
        out = with_type_sharding(aval, typed)
        if getattr(out, "memory_space", space) is not space:
            out = out.update(memory_space=space)
        _typed_avals[key] = out
    return out
