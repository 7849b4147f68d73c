"""Meshes of devices with named axes (``jax.sharding.Mesh``), and the current mesh.

A :class:`Mesh` is an n-d array of devices whose axes have names. Meshes are
interned: constructing an equal mesh again returns the same object, so
shardings built on it compare and hash cheaply. ``with mesh:``,
:func:`set_mesh` and :func:`use_abstract_mesh` set the mesh that ``P``-only
APIs (``shard_map(mesh=None)``, ``with_sharding_constraint(x, P(...))``) use.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import enum
import math
import threading
from collections.abc import Sequence

import numpy as np

from modjax import runtime
from modjax.runtime import _xla
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.sharding_types import context_mesh_sharding

__all__ = [
    "AbstractDevice",
    "AxisType",
    "Mesh",
    "AbstractMesh",
    "make_mesh",
    "set_mesh",
    "get_mesh",
    "use_mesh",
    "use_abstract_mesh",
    "get_abstract_mesh",
]


class AxisType(enum.Enum):
    """How the compiler treats a mesh axis (``jax.sharding.AxisType``)."""

    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__


@dataclasses.dataclass(frozen=True, slots=True)
class AbstractDevice:
    """The kind of device a mesh is over, without the devices (``jax.sharding.AbstractDevice``).

    An ``AbstractMesh`` made from a concrete mesh carries one (its devices'
    ``device_kind``, ``num_cores`` and ``platform``); an ``AbstractMesh`` built
    by hand has none unless given ``abstract_device=``.
    """

    device_kind: str
    num_cores: int | None
    platform: str

    def __repr__(self) -> str:
        return self._repr

    @property
    def _repr(self) -> str:
        return (
            f"AbstractDevice(device_kind={self.device_kind}, num_cores={self.num_cores}, "
            f"platform={self.platform})"
        )


def _axis_types(axis_types, n: int, default: AxisType) -> tuple[AxisType, ...]:
    if axis_types is None:
        return (default,) * n
    if isinstance(axis_types, AxisType):
        axis_types = (axis_types,) * n
    types = tuple(axis_types)
    if len(types) != n or not all(isinstance(t, AxisType) for t in types):
        raise ValueError(
            f"Number of axis names ({n}) should match the number of axis_types "
            f"({len(types)}), each an AxisType: got {axis_types!r}"
        )
    return types


def _axis_names(axis_names) -> tuple[str, ...]:
    if isinstance(axis_names, str):
        return (axis_names,)
    names = tuple(axis_names)
    if len(set(names)) != len(names):
        raise ValueError(f"Mesh axis names must be unique, got {names}")
    return names


def _shape_str(names, sizes, types) -> str:
    return ", ".join(f"'{n}': {s}" for n, s in zip(names, sizes, strict=True))


class _MeshBase:
    """What a Mesh and an AbstractMesh share: axis names, sizes and types."""

    axis_names: tuple[str, ...]
    axis_sizes: tuple[int, ...]
    axis_types: tuple[AxisType, ...]

    @property
    def shape(self) -> collections.OrderedDict:
        """The axis sizes by name, in mesh order."""
        return collections.OrderedDict(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def shape_tuple(self) -> tuple[tuple[str, int], ...]:
        return tuple(zip(self.axis_names, self.axis_sizes, strict=True))

    @property
    def size(self) -> int:
        """The number of devices; 0 for a mesh without axes (JAX's)."""
        return math.prod(self.axis_sizes) if self.axis_names else 0

    @property
    def empty(self) -> bool:
        return self.size == 0

    def axis_size(self, name: str) -> int:
        """Return the size of axis ``name`` (KeyError naming the mesh if absent)."""
        try:
            return self.axis_sizes[self.axis_names.index(name)]
        except ValueError:
            raise KeyError(f"axis {name!r} is not in the mesh {self.axis_names}") from None

    def _all_axes_are(self, *kinds: AxisType) -> bool:
        # False for a mesh without axes, as JAX's.
        return bool(self.axis_types) and all(t in kinds for t in self.axis_types)

    @property
    def are_all_axes_auto(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Auto``."""
        return self._all_axes_are(AxisType.Auto)

    @property
    def are_all_axes_explicit(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Explicit``."""
        return self._all_axes_are(AxisType.Explicit)

    @property
    def are_all_axes_manual(self) -> bool:
        """Whether the mesh has axes and every one is ``AxisType.Manual``."""
        return self._all_axes_are(AxisType.Manual)

    @property
    def _are_all_axes_auto_or_manual(self) -> bool:
        return self._all_axes_are(AxisType.Auto, AxisType.Manual)

    @property
    def _are_all_axes_explicit_or_manual(self) -> bool:
        return self._all_axes_are(AxisType.Explicit, AxisType.Manual)

    @property
    def _any_axis_auto(self) -> bool:
        return AxisType.Auto in self.axis_types

    @property
    def _any_axis_auto_or_manual(self) -> bool:
        return AxisType.Auto in self.axis_types or AxisType.Manual in self.axis_types

    @property
    def _any_axis_explicit(self) -> bool:
        return AxisType.Explicit in self.axis_types

    @property
    def _any_axis_manual(self) -> bool:
        return AxisType.Manual in self.axis_types

    @property
    def explicit_axes(self) -> tuple[str, ...]:
        return tuple(
            n
            for n, t in zip(self.axis_names, self.axis_types, strict=True)
            if t is AxisType.Explicit
        )

    @property
    def auto_axes(self) -> tuple[str, ...]:
        return tuple(
            n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t is AxisType.Auto
        )

    @property
    def manual_axes(self) -> tuple[str, ...]:
        return tuple(
            n for n, t in zip(self.axis_names, self.axis_types, strict=True) if t is AxisType.Manual
        )


class Mesh(_MeshBase):
    """An n-d array of devices with named axes (``jax.sharding.Mesh``).

    ``Mesh(devices, axis_names, axis_types=None)``: ``devices`` is an array (or
    nested sequence) of devices whose number of dimensions equals the number
    of names. Axis types default to ``AxisType.Auto``. Used as a context
    manager, the mesh becomes the current one for the block.
    """

    _interned: dict[tuple, Mesh] = {}
    _lock = threading.Lock()

    def __new__(cls, devices=(), axis_names=(), axis_types=None):
        array = np.array(devices, dtype=object) if not isinstance(devices, np.ndarray) else devices
        names = _axis_names(axis_names)
        if array.size == 0 and not names:
            array = np.array([], dtype=object)
        elif array.ndim != len(names):
            raise ValueError(
                f"Mesh requires the ndim of its first argument (`devices`) to equal the length "
                f"of its second argument (`axis_names`), but got devices.ndim == {array.ndim} "
                f"and len(axis_names) == {len(names)}."
            )
        types = _axis_types(axis_types, len(names), AxisType.Auto)
        flat = tuple(array.flat)
        if len(set(flat)) != len(flat):
            raise ValueError(f"Mesh devices must be distinct, got {list(flat)}")
        key = (flat, array.shape if names else (), names, types)
        self = cls._interned.get(key)
        if self is not None:
            return self
        self = super().__new__(cls)
        # A 0-d array of one device is a mesh without axes that is not empty (JAX's scalar mesh).
        scalar = not names and array.ndim == 0 and array.item() is not None
        self.devices = array if names or scalar else np.array([], dtype=object)
        self._scalar = scalar
        self.devices.flags.writeable = False
        self.axis_names = names
        self.axis_sizes = tuple(array.shape) if names else ()
        self.axis_types = types
        self._flat_devices_tuple = flat
        self._hash = hash(key)
        self._key = key
        self._token = None
        with cls._lock:
            return cls._interned.setdefault(key, self)

    def __init__(self, devices=(), axis_names=(), axis_types=None):
        pass  # built once, in __new__

    def __reduce__(self):
        return (Mesh, (self.devices, self.axis_names, self.axis_types))

    def __eq__(self, other) -> bool:
        return self is other or (isinstance(other, Mesh) and self._key == other._key)

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.empty:
            return "Mesh(axis_sizes=(), axis_names=())"
        types = ", ".join(repr(t) for t in self.axis_types)
        return (
            f"Mesh(axis_sizes={self.axis_sizes}, axis_names={self.axis_names}, "
            f"axis_types=({types}{',' if len(self.axis_types) == 1 else ''}))"
        )

    def __str__(self) -> str:
        if self.empty:
            return "Mesh()"
        types = ", ".join(repr(t) for t in self.axis_types)
        comma = "," if len(self.axis_types) == 1 else ""
        return (
            f"Mesh({_shape_str(self.axis_names, self.axis_sizes, self.axis_types)}, "
            f"axis_types=({types}{comma}))"
        )

    def __enter__(self) -> Mesh:
        _stack().append((self, self.abstract_mesh))
        return self

    def __exit__(self, *exc) -> None:
        _stack().pop()

    @property
    def device_ids(self) -> np.ndarray:
        """The ids of the devices, in the mesh's shape."""
        return np.vectorize(lambda d: d.id, otypes=[int])(self.devices)

    @property
    def local_devices(self) -> list:
        """The mesh's devices this process drives."""
        return [d for d in self._flat_devices_tuple if d.process_index == d.client.process_index()]

    @property
    def local_mesh(self) -> Mesh:
        """The mesh itself when every device is local (multi-process local meshes: not yet)."""
        if len(self.local_devices) != self.size:
            raise NotImplementedError("Mesh.local_mesh of a mesh spanning processes")
        return self

    @property
    def is_multi_process(self) -> bool:
        return len(self.local_devices) != self.size

    @property
    def _internal_device_list(self) -> _xla.DeviceList:
        lst = getattr(self, "_device_list", None)
        if lst is None:
            lst = self._device_list = _xla.DeviceList(self._flat_devices_tuple)
        return lst

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh without its devices: names, sizes and types."""
        am = getattr(self, "_abstract", None)
        if am is None:
            first = self._flat_devices_tuple[0] if self._flat_devices_tuple else None
            device = (
                None
                if first is None
                else AbstractDevice(
                    first.device_kind, getattr(first, "num_cores", None), first.platform
                )
            )
            am = self._abstract = AbstractMesh(
                self.axis_sizes, self.axis_names, axis_types=self.axis_types,
                abstract_device=device,
            )  # fmt: skip
        return am

    def update_axis_types(self, axis_types: dict) -> Mesh:
        """Return the mesh with some axes' types changed (``{name: AxisType}``)."""
        return self.update(axis_types=_updated_types(self, axis_types))

    def update(self, devices=None, axis_names=None, axis_types=None) -> Mesh:
        """Return the mesh with the given devices, names or types in place of its own."""
        return Mesh(
            self.devices if devices is None else devices,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
        )

    @property
    def size(self) -> int:
        """The number of devices: 1 for a scalar mesh, 0 for the empty one."""
        return 1 if self._scalar else super().size

    @property
    def is_scalar(self) -> bool:
        """Whether the mesh has no axes and one device."""
        return self._scalar


class AbstractMesh(_MeshBase):
    """A mesh's shape, names and axis types without devices (``jax.sharding.AbstractMesh``)."""

    def __init__(self, axis_sizes=(), axis_names=(), axis_types=None, *, abstract_device=None):
        self.axis_sizes = tuple(int(s) for s in axis_sizes)
        self.axis_names = _axis_names(axis_names)
        if len(self.axis_sizes) != len(self.axis_names):
            raise ValueError(
                f"AbstractMesh: {len(self.axis_sizes)} axis sizes for "
                f"{len(self.axis_names)} axis names"
            )
        self.axis_types = _axis_types(axis_types, len(self.axis_names), AxisType.Auto)
        self.abstract_device = abstract_device

    def _key(self):
        return (self.axis_sizes, self.axis_names, self.axis_types, self.abstract_device)

    def __eq__(self, other) -> bool:
        return isinstance(other, AbstractMesh) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        types = ", ".join(repr(t) for t in self.axis_types)
        comma = "," if len(self.axis_types) == 1 else ""
        shape = (
            "()" if self.empty else _shape_str(self.axis_names, self.axis_sizes, self.axis_types)
        )
        device = self.abstract_device
        kind = (
            ""
            if device is None
            else f", device_kind={device.device_kind}, num_cores={device.num_cores}, "
            f"platform={device.platform}"
        )
        return f"AbstractMesh({shape}, axis_types=({types}{comma}){kind})"

    __str__ = __repr__

    @property
    def abstract_mesh(self) -> AbstractMesh:
        return self

    def update(self, axis_sizes=None, axis_names=None, axis_types=None, **kwargs) -> AbstractMesh:
        """Return the abstract mesh with the given sizes, names or types in place of its own."""
        kwargs.setdefault("abstract_device", self.abstract_device)
        return AbstractMesh(
            self.axis_sizes if axis_sizes is None else axis_sizes,
            self.axis_names if axis_names is None else axis_names,
            self.axis_types if axis_types is None else axis_types,
            **kwargs,
        )

    def update_axis_types(self, axis_types: dict) -> AbstractMesh:
        """Return the abstract mesh with some axes' types changed (``{name: AxisType}``)."""
        return self.update(axis_types=_updated_types(self, axis_types))

    # What only a mesh of devices has: JAX's AbstractMesh refuses these with ValueError.
    devices = property(lambda self: _no_devices("devices"))
    device_ids = property(lambda self: _no_devices("device_ids"))
    local_devices = property(lambda self: _no_devices("local_devices"))
    local_mesh = property(lambda self: _no_devices("local_mesh"))
    is_multi_process = property(lambda self: _no_devices("is_multi_process"))


def _no_devices(name: str):
    raise ValueError(f"AbstractMesh does not implement {name}")


def _updated_types(mesh: _MeshBase, axis_types: dict) -> tuple[AxisType, ...]:
    return tuple(
        axis_types.get(n, t) for n, t in zip(mesh.axis_names, mesh.axis_types, strict=True)
    )


# --- the current mesh ---------------------------------------------------------------------------


class _State(threading.local):
    def __init__(self):
        self.stack: list[tuple[Mesh | None, AbstractMesh | None]] = []


_state = _State()
_global: list[tuple[Mesh | None, AbstractMesh | None]] = [(None, None)]


def _stack() -> list:
    return _state.stack


def _current() -> tuple[Mesh | None, AbstractMesh | None]:
    return _state.stack[-1] if _state.stack else _global[0]


def get_mesh() -> Mesh:
    """Return the current concrete mesh, or an empty ``Mesh()`` (``jax.sharding.get_mesh``)."""
    mesh = _current()[0]
    return mesh if mesh is not None else Mesh()


def get_abstract_mesh() -> AbstractMesh:
    """Return the current abstract mesh, or an empty one (``jax.sharding.get_abstract_mesh``)."""
    am = _current()[1]
    return am if am is not None else AbstractMesh()


def current_mesh() -> Mesh | None:
    """Return the current concrete mesh, or None when none is set."""
    return _current()[0]


def _sync_context() -> None:
    """Tell tracing and the runtime the current mesh (tracecore's ``context_mesh_sharding``).

    Values made under it are typed on it and placed on its devices, replicated, as in JAX.
    """
    mesh = _current()[0]
    if mesh is None or mesh.empty:
        context_mesh_sharding.set(None)
        return
    from .named_sharding import NamedSharding  # noqa: PLC0415 - it imports this module
    from .partition_spec import PartitionSpec  # noqa: PLC0415

    if mesh.explicit_axes:
        ShapedArray.sharded_types_seen = True
    context_mesh_sharding.set(NamedSharding(mesh, PartitionSpec()))


class set_mesh:  # noqa: N801 - a function that may also be used in ``with``
    """Make ``mesh`` the current mesh (``jax.set_mesh``).

    Called alone it sets the mesh for the whole program; used as ``with
    set_mesh(mesh):`` it sets it for the block and restores the previous one.
    """

    def __init__(self, mesh: Mesh):
        if not isinstance(mesh, Mesh):
            raise TypeError(f"set_mesh expects a Mesh, got {type(mesh).__name__}")
        self._previous = _global[0]
        _global[0] = (mesh, mesh.abstract_mesh)
        self.mesh = mesh
        _sync_context()

    def __enter__(self) -> Mesh:
        return self.mesh

    def __exit__(self, *exc) -> None:
        _global[0] = self._previous
        _sync_context()


@contextlib.contextmanager
def use_mesh(mesh: Mesh):
    """Make ``mesh`` the current mesh inside the block (``jax.sharding.use_mesh``)."""
    _stack().append((mesh, mesh.abstract_mesh))
    _sync_context()
    try:
        yield mesh
    finally:
        _stack().pop()
        _sync_context()


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh):
    """Make ``mesh`` the current abstract mesh in the block (``jax.sharding.use_abstract_mesh``)."""
    if not isinstance(mesh, AbstractMesh):
        raise ValueError(f"use_abstract_mesh expects an AbstractMesh, got {type(mesh).__name__}")
    _stack().append((_current()[0], mesh))
    try:
        yield mesh
    finally:
        _stack().pop()


def make_mesh(
    axis_shapes: Sequence[int],
    axis_names: Sequence[str],
    axis_types: Sequence[AxisType] | None = None,
    *,
    devices: Sequence | None = None,
) -> Mesh:
    """Build a mesh of ``axis_shapes`` from the first devices (``jax.make_mesh``).

    As in JAX 0.10, axes are ``AxisType.Explicit`` unless ``axis_types`` says
    otherwise.
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    names = _axis_names(axis_names)
    if len(axis_shapes) != len(names):
        raise ValueError(
            f"Number of axis names ({len(names)}) should match the number of axis_shapes "
            f"({len(axis_shapes)})"
        )
    pool = list(devices) if devices is not None else runtime.devices()
    size = math.prod(axis_shapes)
    if size > len(pool):
        raise ValueError(
            f"Number of devices {len(pool)} must be >= the product of mesh_shape {axis_shapes}"
        )
    array = np.empty(len(pool[:size]), dtype=object)
    array[:] = pool[:size]
    types = _axis_types(axis_types, len(names), AxisType.Explicit)
    return Mesh(array.reshape(axis_shapes), names, axis_types=types)
