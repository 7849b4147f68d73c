"""``NamedSharding`` (a mesh and a PartitionSpec) and ``GSPMDSharding`` (an XLA HloSharding).

jaxlib's C++ ``NamedSharding`` cannot be our base: its constructor imports
``jax._src.named_sharding`` (to check the spec), and modjax never has ``jax``.
So :class:`NamedSharding` subclasses jaxlib's C++ ``GSPMDSharding`` instead,
initialized with the mesh's devices and the HloSharding the spec means. The
runtime (device_put, result handlers, the C++ jit fast path) then handles it
natively, hashing and comparing it in C++; ``mesh`` and ``spec`` live on the
Python side. There is one instance per (mesh, spec, memory kind), so the fast
path's equality test is a pointer comparison.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping

import numpy as np

from modjax.runtime import _xla, register_sharding
from modjax.runtime.backends import Device
from modjax.tracecore.abstract import set_unsharded_sharding
from modjax.tracecore.options import remove_size_one_mesh_axis_from_type

from .mesh import AbstractMesh, AxisType, Mesh
from .partition_spec import UNCONSTRAINED, PartitionSpec

__all__ = [
    "NamedSharding",
    "AbstractNamedSharding",
    "GSPMDSharding",
    "DuplicateSpecError",
    "IndivisibleError",
    "concrete_sharding",
]


class DuplicateSpecError(ValueError):
    """A mesh axis used by two dimensions of a PartitionSpec."""


class IndivisibleError(ValueError):
    """An array dimension that its mesh axes do not divide."""


def _check_spec(mesh: Mesh | AbstractMesh, spec: PartitionSpec) -> None:
    seen: set[str] = set()
    for i in range(len(spec)):
        for axis in spec.axes_of(i):
            if axis not in mesh.axis_names:
                raise ValueError(
                    f"Resource axis: {axis} of {spec} is not found in mesh: {mesh.axis_names}."
                )
            if axis in seen:
                raise DuplicateSpecError(
                    "A single NamedSharding spec specification can map every mesh axis to at "
                    f"most one positional dimension, but {spec} has duplicate entries for "
                    f"`{axis}`"
                )
            seen.add(axis)
    for what, axes in (("Unreduced", spec.unreduced), ("Reduced", spec.reduced)):
        if axes:
            _check_unreduced(mesh, spec, what, axes)


def _check_unreduced(mesh, spec: PartitionSpec, what: str, axes: frozenset) -> None:
    """JAX's errors for unreduced/reduced axes: mesh axes, and explicit ones."""
    missing = [a for a in axes if a not in mesh.axis_names]
    if missing:
        raise ValueError(
            f"{what} axes {', '.join(map(str, missing))} is not found in "
            f"mesh.axis_names={mesh.axis_names}. Got pspec={spec}"
        )
    types = dict(zip(mesh.axis_names, mesh.axis_types, strict=True))
    if any(types[a] != AxisType.Explicit for a in axes):
        raise ValueError(
            f"{what} axes can only refer to mesh axes that is of type `Explicit`. Got "
            f"{what.lower()} axes: {axes} and mesh: {mesh}"
        )


def _tiles(mesh, spec: PartitionSpec, ndim: int) -> list[int]:
    """How many pieces each of ``ndim`` dimensions is split into."""
    return [math.prod(mesh.axis_size(a) for a in spec.axes_of(i)) for i in range(ndim)]


def hlo_sharding_string(mesh: Mesh, spec: PartitionSpec, ndim: int) -> str:
    """Return the HloSharding text of ``spec`` on ``mesh`` for an array of ``ndim`` dimensions.

    Devices are numbered by their position in the mesh (the program's device
    assignment is the mesh's devices in order). Unreduced axes are a subgroup
    of the tile assignment (each group holds partial sums), as JAX's HloSharding
    of such a spec; reduced axes are replicated ones.
    """
    tiles = _tiles(mesh, spec, ndim)
    used = [a for i in range(ndim) for a in spec.axes_of(i)]
    partial = [a for a in mesh.axis_names if a in spec.unreduced and mesh.axis_size(a) > 1]
    sums = math.prod(mesh.axis_size(a) for a in partial)
    if math.prod(tiles) == 1 and sums == 1:
        return "{replicated}"
    unused = [a for a in mesh.axis_names if a not in used and a not in partial]
    order = [mesh.axis_names.index(a) for a in used + partial + unused]
    ids = np.arange(mesh.size).reshape(mesh.axis_sizes).transpose(order).reshape(-1)
    replicas = math.prod(mesh.axis_size(a) for a in unused)
    dims = tiles + ([sums] if sums > 1 else []) + ([replicas] if replicas > 1 else [])
    if sums > 1:
        suffix = " last_tile_dims={unreduced" + (", replicated}" if replicas > 1 else "}")
    else:
        suffix = " last_tile_dim_replicate" if replicas > 1 else ""
    return f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, ids))}{suffix}}}"


def _sdy_dim(spec: PartitionSpec, i: int) -> str:
    entry = spec.partitions[i] if i < len(spec) else None
    if entry is UNCONSTRAINED:
        return "{?}"
    return "{" + ", ".join(f'"{a}"' for a in spec.axes_of(i)) + "}"


class _ShardingMethods:
    """Protocol members that NamedSharding and GSPMDSharding compute the same way."""

    @property
    def memory_kind(self) -> str | None:
        return self._memory_kind

    @functools.cached_property
    def device_set(self) -> set[Device]:
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        return len(self._device_assignment)

    @functools.cached_property
    def is_fully_addressable(self) -> bool:
        return all(d.process_index == d.client.process_index() for d in self._device_assignment)

    def devices_indices_map(self, global_shape) -> Mapping[Device, tuple[slice, ...]]:
        """Map each device to the index (a tuple of slices) of the data it holds."""
        return self._indices(tuple(global_shape))

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        """Return the shape of one shard of an array of ``global_shape``."""
        shape = tuple(global_shape)
        tiles = self._tile_counts(len(shape))
        self._check_divisible(shape, tiles)
        return tuple(n // t for n, t in zip(shape, tiles, strict=True))

    def check_compatible_aval(self, aval_shape) -> None:
        """Raise the ValueError JAX raises if ``aval_shape`` cannot have this sharding."""
        shape = tuple(aval_shape)
        self._check_divisible(shape, self._tile_counts(len(shape)))

    def _check_divisible(self, shape, tiles) -> None:
        for i, (n, t) in enumerate(zip(shape, tiles, strict=True)):
            if n % t:
                raise IndivisibleError(
                    f"Sharding {self!r} implies that array axis {i} is partitioned {t} times, "
                    f"but the dimension size is {n} (full shape: {shape}, per-dimension tiling "
                    f"factors: {list(tiles)} should evenly divide the shape)"
                )

    def with_memory_kind(self, kind: str):
        raise NotImplementedError(f"{type(self).__name__}.with_memory_kind: memory kinds")


def _share_methods(cls: type) -> type:
    # nanobind classes take exactly one base, so the shared members are copied.
    for name, value in vars(_ShardingMethods).items():
        if not name.startswith("__") and name not in vars(cls):
            if isinstance(value, functools.cached_property):
                value = functools.cached_property(value.func)
                value.__set_name__(cls, name)
            setattr(cls, name, value)
    return cls


@register_sharding
@_share_methods
class NamedSharding(_xla.GSPMDSharding):
    """A mesh and a PartitionSpec: an array split over named axes (``jax.sharding.NamedSharding``).

    ``NamedSharding(mesh, spec, *, memory_kind=None)``. Constructing an equal
    sharding again returns the same object.
    """

    _interned: dict[tuple, NamedSharding] = {}

    def __new__(cls, mesh, spec: PartitionSpec, *, memory_kind: str | None = None):
        key = (mesh, spec, memory_kind)
        self = cls._interned.get(key)
        if self is not None:
            return self
        if isinstance(mesh, AbstractMesh):
            return AbstractNamedSharding(mesh, spec, memory_kind=memory_kind)
        if not isinstance(mesh, Mesh):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}")
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                f"NamedSharding: spec must be a PartitionSpec, got {type(spec).__name__}: {spec!r}"
            )
        if mesh.empty:
            raise ValueError("NamedSharding: the mesh is empty")
        _check_spec(mesh, spec)
        self = _xla.GSPMDSharding.__new__(cls)
        ndim = max(len(spec), 1)
        hlo = _xla.hlo_sharding_from_string(hlo_sharding_string(mesh, spec, ndim))
        _xla.GSPMDSharding.__init__(self, mesh._flat_devices_tuple, hlo, memory_kind=memory_kind)
        self.mesh = mesh
        self.spec = spec
        self._hlo_cache = {}
        # jaxlib canonicalizes the memory kind (None -> "device"): both keys name one object.
        self = cls._interned.setdefault((mesh, spec, self._memory_kind), self)
        cls._interned[key] = self
        return self

    def __init__(self, mesh, spec, *, memory_kind=None):
        pass  # built once, in __new__

    def __reduce__(self):
        return functools.partial(NamedSharding, memory_kind=self._memory_kind), (
            self.mesh,
            self.spec,
        )

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh}, spec={self.spec}, memory_kind={self._memory_kind})"

    def update(self, *, mesh=None, spec=None, memory_kind=None) -> NamedSharding:
        """Return this sharding with the given fields replaced (``NamedSharding.update``).

        ``spec`` may be a PartitionSpec or a sequence of its entries.
        """
        if spec is not None and not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(
            self.mesh if mesh is None else mesh,
            self.spec if spec is None else spec,
            memory_kind=self._memory_kind if memory_kind is None else memory_kind,
        )

    @property
    def _type_sharding(self) -> NamedSharding | None:
        """The sharding in the type of an Array placed so: the spec's explicit mesh axes.

        None when the mesh has no explicit axis (then types carry no sharding). With
        ``remove_size_one_mesh_axis_from_type`` the axes of size 1 are left out too.
        """
        drop = remove_size_one_mesh_axis_from_type.value
        cache = self.__dict__.setdefault("_type_shardings", {})
        if drop not in cache:
            cache[drop] = self._type_sharding_of(drop)
        return cache[drop]

    def _type_sharding_of(self, drop_size_one: bool) -> NamedSharding | None:
        explicit = set(self.mesh.explicit_axes)
        if drop_size_one:
            explicit = {a for a in explicit if self.mesh.axis_size(a) != 1}
        if not explicit:
            return None
        entries = [
            tuple(a for a in self.spec.axes_of(i) if a in explicit) for i in range(len(self.spec))
        ]
        spec = PartitionSpec(
            *(e if len(e) > 1 else (e[0] if e else None) for e in entries),
            unreduced=frozenset(a for a in self.spec.unreduced if a in explicit),
            reduced=frozenset(a for a in self.spec.reduced if a in explicit),
        )
        return NamedSharding(self.mesh, spec)

    # --- the protocol ---

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self.mesh._flat_devices_tuple

    @functools.cached_property
    def is_fully_replicated(self) -> bool:
        if self.mesh.size > 1 and self.spec.unreduced:
            return False  # partial sums differ from device to device
        return all(math.prod(self.mesh.axis_size(a) for a in self.spec.axes_of(i)) == 1
                   for i in range(len(self.spec)))  # fmt: skip

    def _tile_counts(self, ndim: int) -> list[int]:
        if len(self.spec) > ndim:
            raise ValueError(
                f"One of pjit outputs with pytree key path result was given the sharding of "
                f"{self!r}, which implies that the global size of its dimension "
                f"{len(self.spec) - 1} should be divisible by its partition count, but it has "
                f"only {ndim} dimensions"
            )
        return _tiles(self.mesh, self.spec, ndim)

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> _xla.HloSharding:
        hlo = self._hlo_cache.get(num_dimensions)
        if hlo is None:
            text = hlo_sharding_string(self.mesh, self.spec, num_dimensions)
            hlo = self._hlo_cache[num_dimensions] = _xla.hlo_sharding_from_string(text)
        return hlo

    def _to_sdy_sharding(self, num_dimensions: int, mesh_name: str = "mesh") -> str:
        """Return this sharding as a Shardy attribute on the program's mesh ``@mesh_name``.

        Unreduced axes are Shardy's ``unreduced={...}`` (in the mesh's order); reduced
        axes are only in types (replicated, as JAX lowers them).
        """
        dims = ", ".join(_sdy_dim(self.spec, i) for i in range(num_dimensions))
        partial = [a for a in self.mesh.axis_names if a in self.spec.unreduced]
        extra = ", unreduced={" + ", ".join(f'"{a}"' for a in partial) + "}" if partial else ""
        return f"#sdy.sharding<@{mesh_name}, [{dims}]{extra}>"

    @property
    def _sdy_mesh(self) -> tuple[tuple[str, int], ...]:
        return self.mesh.shape_tuple

    @functools.lru_cache(maxsize=256)  # noqa: B019 - instances are interned and immortal
    def _indices(self, shape: tuple[int, ...]) -> dict[Device, tuple[slice, ...]]:
        if self.spec.unreduced:
            # As JAX 0.10.2: a device's piece is a partial sum, not a slice of the array.
            raise NotImplementedError(
                "device_indices_map doesn't work with unreduced. Please file a bug at "
                "https://github.com/jax-ml/jax/issues"
            )
        ndim = len(shape)
        tiles = self._tile_counts(ndim)
        self._check_divisible(shape, tiles)
        mesh = self.mesh
        out = {}
        for position in itertools.product(*(range(s) for s in mesh.axis_sizes)):
            coord = dict(zip(mesh.axis_names, position, strict=True))
            index = []
            for i in range(ndim):
                axes = self.spec.axes_of(i)
                if not axes:
                    index.append(slice(None))
                    continue
                k = 0
                for a in axes:
                    k = k * mesh.axis_size(a) + coord[a]
                step = shape[i] // tiles[i]
                index.append(slice(k * step, (k + 1) * step))
            out[mesh.devices[position]] = tuple(index)
        return out

    def _from_hlo_sharding(self, hlo: _xla.HloSharding, ndim: int):
        """Return the sharding on this mesh that ``hlo`` (over the mesh's devices) means."""
        return sharding_from_hlo(self.mesh, str(hlo), ndim, self._memory_kind)

    def _replicated(self) -> NamedSharding:
        """Return the fully replicated sharding on the same mesh."""
        return NamedSharding(self.mesh, PartitionSpec(), memory_kind=self._memory_kind)

    def with_memory_kind(self, kind: str) -> NamedSharding:
        return NamedSharding(self.mesh, self.spec, memory_kind=kind)

    def _with_batch_dim(self, dim: int, ndim: int, spmd_axis_name=None) -> NamedSharding:
        """Return this sharding of a value that gained dimension ``dim`` (now rank ``ndim``).

        The new dimension is unsplit, or split over the mesh axes
        ``spmd_axis_name`` (a tuple, from ``vmap``), as JAX batches a jit's shardings.
        """
        entries: list = list(self.spec.partitions) + [None] * (dim - len(self.spec))
        if spmd_axis_name is not None and len(spmd_axis_name) == 1:
            spmd_axis_name = spmd_axis_name[0]
        entries.insert(dim, spmd_axis_name)
        spec = self.spec.update(partitions=entries).stripped()
        return NamedSharding(self.mesh, spec, memory_kind=self._memory_kind)

    def _on_devices(self, devices) -> NamedSharding:
        """Return this layout over ``devices`` instead (device ``i`` takes position ``i``)."""
        flat = np.empty(len(devices), dtype=object)
        flat[:] = list(devices)
        mesh = self.mesh
        moved = Mesh(flat.reshape(mesh.devices.shape), mesh.axis_names, mesh.axis_types)
        return NamedSharding(moved, self.spec, memory_kind=self._memory_kind)


def _candidate_specs(mesh: Mesh, ndim: int):
    """Every spec placing the mesh's non-trivial axes on ``ndim`` dimensions, fewest axes first."""
    axes = [a for a in mesh.axis_names if mesh.axis_size(a) > 1]
    for count in range(len(axes) + 1):
        for chosen in itertools.permutations(axes, count):
            for dims in itertools.product(range(ndim), repeat=count):
                entries: list[list[str]] = [[] for _ in range(ndim)]
                for a, d in zip(chosen, dims, strict=True):
                    entries[d].append(a)
                yield PartitionSpec(*(tuple(e) if e else None for e in entries)).stripped()


@functools.lru_cache(maxsize=4096)
def sharding_from_hlo(mesh: Mesh, hlo_text: str, ndim: int, memory_kind):
    """Return the NamedSharding on ``mesh`` meaning HLO sharding ``hlo_text`` (else GSPMD)."""
    hlo = _xla.hlo_sharding_from_string(hlo_text)
    if hlo.is_replicated():
        return NamedSharding(mesh, PartitionSpec(), memory_kind=memory_kind)
    if hlo.is_tiled() and not hlo.subgroup_types():
        dims = hlo.tile_assignment_dimensions()
        target = (list(dims), list(hlo.tile_assignment_devices()), hlo.replicate_on_last_tile_dim())
        seen = set()
        for spec in _candidate_specs(mesh, ndim):
            if spec in seen:
                continue
            seen.add(spec)
            text = hlo_sharding_string(mesh, spec, ndim)
            cand = _xla.hlo_sharding_from_string(text)
            if cand.is_replicated():
                continue
            got = (
                list(cand.tile_assignment_dimensions()),
                list(cand.tile_assignment_devices()),
                cand.replicate_on_last_tile_dim(),
            )
            if got == target:
                return NamedSharding(mesh, spec, memory_kind=memory_kind)
    return GSPMDSharding(mesh._flat_devices_tuple, hlo, memory_kind=memory_kind)


@register_sharding
@_share_methods
class GSPMDSharding(_xla.GSPMDSharding):
    """A sharding given by an XLA HloSharding over a list of devices (``GSPMDSharding``).

    What a compiled program's output gets when no PartitionSpec on its mesh
    describes XLA's choice.
    """

    def __init__(self, devices, op_sharding, *, memory_kind=None):
        super().__init__(tuple(devices), op_sharding, memory_kind=memory_kind)
        self._devices_tuple = tuple(devices)

    def __repr__(self) -> str:
        return f"GSPMDSharding({self._hlo_sharding}, memory_kind={self._memory_kind})"

    @property
    def _device_assignment(self) -> tuple[Device, ...]:
        return self._devices_tuple

    @functools.cached_property
    def is_fully_replicated(self) -> bool:
        return self._hlo_sharding.is_replicated()

    def _to_xla_hlo_sharding(self, num_dimensions: int) -> _xla.HloSharding:
        return self._hlo_sharding

    def _tile_counts(self, ndim: int) -> list[int]:
        hlo = self._hlo_sharding
        if hlo.is_replicated() or not hlo.is_tiled():
            return [1] * ndim
        return list(hlo.tile_assignment_dimensions())[:ndim]

    def _indices(self, shape: tuple[int, ...]) -> dict[Device, tuple[slice, ...]]:
        hlo = self._hlo_sharding
        if hlo.is_replicated() or not hlo.is_tiled():
            return {d: (slice(None),) * len(shape) for d in self._devices_tuple}
        dims = list(hlo.tile_assignment_dimensions())
        tiles = np.array(hlo.tile_assignment_devices()).reshape(dims)
        out = {}
        for position in itertools.product(*(range(n) for n in dims)):
            device = self._devices_tuple[tiles[position]]
            index = []
            for i, n in enumerate(shape):
                t = dims[i]
                step = -(-n // t)
                index.append(
                    slice(None)
                    if t == 1
                    else slice(position[i] * step, min(n, (position[i] + 1) * step))
                )
            out[device] = tuple(index)
        return out

    def _from_hlo_sharding(self, hlo, ndim: int):
        return GSPMDSharding(self._devices_tuple, hlo, memory_kind=self._memory_kind)

    def _replicated(self) -> GSPMDSharding:
        return GSPMDSharding(
            self._devices_tuple, _xla.replicated_hlo_sharding(), memory_kind=self._memory_kind
        )


class AbstractNamedSharding:
    """A NamedSharding on an AbstractMesh: axes and spec without devices.

    What ``NamedSharding(abstract_mesh, spec)`` returns (JAX's NamedSharding
    allows an AbstractMesh; jaxlib's C++ base needs devices, so this one is a
    plain Python class and ``isinstance(s, NamedSharding)`` is False). It
    stands for the NamedSharding of the same spec on a concrete mesh of that
    shape: :func:`concrete_sharding` finds that mesh where it is used.
    """

    __slots__ = ("mesh", "spec", "memory_kind")

    def __init__(self, mesh: AbstractMesh, spec: PartitionSpec, *, memory_kind=None):
        if not isinstance(spec, PartitionSpec):
            raise TypeError(
                f"NamedSharding: spec must be a PartitionSpec, got {type(spec).__name__}: {spec!r}"
            )
        _check_spec(mesh, spec)
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind

    def __eq__(self, other) -> bool:
        return (
            isinstance(other, AbstractNamedSharding)
            and self.mesh == other.mesh
            and self.spec == other.spec
        )

    def __hash__(self) -> int:
        return hash((self.mesh, self.spec))

    def __repr__(self) -> str:
        kind = "" if self.memory_kind is None else f", memory_kind={self.memory_kind}"
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec}{kind})"

    def with_memory_kind(self, kind: str) -> AbstractNamedSharding:
        """Return this sharding in memory ``kind`` (``Sharding.with_memory_kind``)."""
        return AbstractNamedSharding(self.mesh, self.spec, memory_kind=kind)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device would hold the whole array: the spec splits nothing and
        leaves no partial sums."""
        if self.mesh.size > 1 and self.spec.unreduced:
            return False
        return math.prod(_tiles(self.mesh, self.spec, len(self.spec))) == 1

    def is_equivalent_to(self, other, ndim: int) -> bool:
        """Tell whether ``other`` lays out an array of rank ``ndim`` the same way."""
        return (
            isinstance(other, AbstractNamedSharding)
            and self.mesh == other.mesh
            and [tuple(self.spec.axes_of(i)) for i in range(ndim)]
            == [tuple(other.spec.axes_of(i)) for i in range(ndim)]
        )

    # What needs devices raises JAX's ValueError: an abstract mesh has none.
    def _no_devices(name: str):  # type: ignore[misc]  # a class-body helper, deleted below
        def get(self):
            raise ValueError(f"{name} is not implemented for `jax.sharding.AbstractMesh`.")

        get.__doc__ = f"Raise ValueError: ``{name}`` needs devices, which an AbstractMesh lacks."
        return property(get)

    device_set = _no_devices("device_set")
    addressable_devices = _no_devices("addressable_devices")
    is_fully_addressable = _no_devices("is_fully_addressable")
    _device_assignment = _no_devices("_device_assignment")
    del _no_devices

    def devices_indices_map(self, global_shape):
        """Raise JAX's ValueError: the indices of each device need devices."""
        return self._device_assignment

    def addressable_devices_indices_map(self, global_shape):
        """Raise JAX's ValueError: the indices of each device need devices."""
        return self._device_assignment

    def update(self, *, mesh=None, spec=None, memory_kind=None):
        """Return this sharding with the given fields replaced."""
        if spec is not None and not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        return NamedSharding(
            self.mesh if mesh is None else mesh, self.spec if spec is None else spec
        )

    def shard_shape(self, global_shape) -> tuple[int, ...]:
        """Return the shape of one shard of an array of ``global_shape``."""
        tiles = _tiles(self.mesh, self.spec, len(global_shape))
        return tuple(n // t for n, t in zip(global_shape, tiles, strict=True))

    @property
    def num_devices(self) -> int:
        return self.mesh.size


def concrete_sharding(sharding, like=None, current=None):
    """Return ``sharding`` on a concrete mesh (an AbstractNamedSharding's spec on one of its shape).

    The mesh is ``like``'s (a concrete sharding, e.g. an operand's type) or
    ``current`` (the mesh set with ``set_mesh``) when its abstract mesh matches.
    """
    if not isinstance(sharding, AbstractNamedSharding):
        return sharding
    for candidate in (getattr(like, "mesh", None), current):
        # Shapes, names and types match (an AbstractMesh built by hand has no device kind).
        if (
            isinstance(candidate, Mesh)
            and candidate.abstract_mesh._key()[:3] == (sharding.mesh._key()[:3])
        ):
            return NamedSharding(candidate, sharding.spec)
    raise ValueError(
        f"{sharding!r} is on an AbstractMesh and no concrete mesh of that shape is in "
        "context: enter one with `jax.set_mesh(mesh)`"
    )


@functools.cache
def _unsharded_type_sharding(ndim: int) -> AbstractNamedSharding:
    # JAX's sharding of a type with no mesh: every dimension unsplit, on the empty mesh.
    return AbstractNamedSharding(AbstractMesh(), PartitionSpec(*(None,) * ndim))


set_unsharded_sharding(_unsharded_type_sharding)
