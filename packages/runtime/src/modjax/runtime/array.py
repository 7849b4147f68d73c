"""The device array type, ``Array``, and moving data to and from devices.

``Array`` *is* jaxlib's C++ ``ArrayImpl``: the class cannot be subclassed, so
(as JAX does) the Python half of the type is grafted onto it when this module
is imported. Its C++ half holds ``aval`` (our ShapedArray), ``_sharding``, the
per-device buffers and a cached host copy; everything users see (``shape``,
``repr``, numpy conversion, ...) is defined here. Operators and array methods
(``+``, ``@``, ``x[i]``, ``x.T``, ``x.sum()``) are looked up in tracecore's
``tracer_operators`` / ``tracer_attributes`` tables, the same ones tracers
use, so one registration (by modjax.numpy, or a DSL) serves both.

Every Array made here carries a shared ShapedArray per (shape, dtype, weak
type) and a shared sharding per device (see ``aval_of`` and
``single_device_sharding``): the jit fast path keys its cache on their
identities.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from modjax.tracecore import core, dtypes
from modjax.tracecore.abstract import ShapedArray, register_aval_handler, reject_jax_array_protocol
from modjax.tracecore.basearray import Array as AbstractArray
from modjax.tracecore.memory_spaces import memory_space_rules
from modjax.tracecore.tokens import Token
from modjax.tracecore.tree_util import (
    axis_spec_prefix_error,
    leaf_stand_ins,
    tree_flatten,
    tree_leaves,
    tree_structure,
    tree_unflatten,
)

from . import _xla
from .backends import Device, default_device
from .device_reshard import reshard_between_devices
from .layout import Format, Layout
from .memory import MemorySpace, kind_memory_space, space_memory_kind
from .sharding import (
    Sharding,
    SingleDeviceSharding,
    as_sharding,
    is_sharding_like,
    single_device_sharding,
    typed_aval,
)

__all__ = [
    "Array",
    "ArrayImpl",
    "Shard",
    "aval_of",
    "device_put",
    "device_get",
    "block_until_ready",
    "make_array_from_single_device_arrays",
    "is_array",
]

ArrayImpl = _xla.ArrayImpl
Array = ArrayImpl

_COPY = _xla.COPY_DURING_CALL

# --- shared avals ---------------------------------------------------------------------

_avals: dict[tuple, ShapedArray] = {}


def aval_of(shape: tuple[int, ...], dtype: np.dtype, weak_type: bool = False) -> ShapedArray:
    """Return the shared ShapedArray for ``(shape, dtype, weak_type)``."""
    key = (shape, dtype, weak_type)
    aval = _avals.get(key)
    if aval is None:
        aval = ShapedArray(shape, dtype, weak_type)
        aval = _avals[(aval.shape, aval.dtype, aval.weak_type)] = _avals[key] = aval
    return aval


def shared_aval(aval: ShapedArray) -> ShapedArray:
    """Return the shared ShapedArray equal to ``aval``."""
    return aval_of(aval.shape, aval.dtype, aval.weak_type)


# --- moving host data to a device -------------------------------------------------------


def _canonical_host_value(x: Any) -> tuple[np.ndarray, ShapedArray]:
    """Return ``x`` as a numpy array of its canonical dtype, and its aval."""
    if isinstance(x, np.ndarray | np.generic):
        dtype = dtypes.canonicalize_dtype(x.dtype)
        if x.dtype == dtype:
            value = np.asarray(x)
        else:
            with np.errstate(over="ignore"):  # float64 -> float32 saturates, as in JAX
                value = np.asarray(x).astype(dtype)
        return value, aval_of(value.shape, dtype, False)
    if isinstance(x, bool | int | float | complex):
        dtype = dtypes.python_scalar_dtype(x)
        if dtype.kind in "iu":
            dtypes.check_int_range(int(x), dtype)  # type: ignore[arg-type]  # an int here
        return np.asarray(x, dtype), aval_of((), dtype, not isinstance(x, bool))
    if hasattr(x, "__array__") and not isinstance(x, core.Tracer):
        return _canonical_host_value(np.asarray(x))
    reject_jax_array_protocol(x)
    raise TypeError(
        f"Cannot interpret value of type {type(x)} as an abstract array; it does not have a "
        "dtype attribute"
    )


def put_host_value(value: np.ndarray, aval: ShapedArray, sharding: Sharding, committed: bool):
    """Copy the numpy array ``value`` (of ``aval``'s dtype) to the devices of ``sharding``."""
    if value.dtype == dtypes.float0:  # no data: a program takes it as booleans (as in JAX)
        value = np.zeros(value.shape, np.bool_)
        aval = aval.update(dtype=value.dtype)
    aval = typed_aval(aval, sharding)
    if type(sharding) is SingleDeviceSharding:
        devices = [sharding._device]
        values = [value]
    else:
        index_map = sharding.addressable_devices_indices_map(value.shape)
        devices = list(sharding._addressable_device_assignment)
        # jaxlib's batched put of several buffers fails with the copy-during-call
        # semantics (a bad_function_call), so each device gets a copy of its own.
        values = [np.array(value[index_map[d]], copy=True) for d in devices]
        return _xla.batched_device_put(
            aval, sharding, values, devices, committed=committed, enable_x64=True
        )
    return _xla.batched_device_put(
        aval,
        sharding,
        values,
        devices,
        committed=committed,
        host_buffer_semantics=_COPY,
        enable_x64=True,  # dtypes are canonicalized already
    )


def copy_to_sharding(x: Array, sharding: Sharding, committed: bool) -> Array:
    """Return ``x`` placed on ``sharding`` (itself, or a rewrap, when already there).

    Arrays move between devices without the host (``device_reshard``); only an
    array or a target spanning other processes goes through host memory.
    """
    if x._sharding is sharding or (
        x._sharding == sharding and x._sharding._device_assignment == sharding._device_assignment
    ):
        return x if x._committed == committed else x._rewrap_committed(committed)
    if (
        type(sharding) is SingleDeviceSharding
        and type(x._sharding) is SingleDeviceSharding
        and x._sharding.memory_kind == sharding.memory_kind  # else the type changes too
    ):
        copy = _xla.copy_to_devices(x, sharding)
        return copy if copy._committed == committed else copy._rewrap_committed(committed)
    if _on_devices_ok(x._sharding) and _on_devices_ok(sharding):
        return reshard_between_devices(x, sharding, committed)
    return put_host_value(np.asarray(x._value), x.aval, sharding, committed)


def _on_devices_ok(s: Sharding) -> bool:
    # Shardings without a mesh (XLA-chosen GSPMD layouts) cannot annotate a program.
    return s.is_fully_addressable and (
        type(s) is SingleDeviceSharding or getattr(s, "_sdy_mesh", None) is not None
    )


def _shares_buffers(a: Array, b: Array) -> bool:
    # A move between devices may reuse buffers already in place (any of them).
    mine = {x.unsafe_buffer_pointer() for x in a._arrays}
    return any(y.unsafe_buffer_pointer() in mine for y in b._arrays)


def _target_sharding(device_or_sharding) -> tuple[Sharding | None, bool]:
    if device_or_sharding is None:
        return None, False
    if isinstance(device_or_sharding, Device):  # type: ignore[misc]  # jaxlib's Device, untyped
        return single_device_sharding(device_or_sharding), True
    if isinstance(device_or_sharding, Sharding):
        return device_or_sharding, True
    if is_sharding_like(device_or_sharding):
        return as_sharding(device_or_sharding, "device_put"), True
    raise ValueError(  # JAX's class
        "device_put: the target must be None, a Sharding, a Device, a Format, a memory "
        f"Space or a pytree of these, got {device_or_sharding!r}"
    )


def _in_memory(x: Any, kind: str) -> Sharding:
    """The sharding ``device_put(x, memory_space)`` gives ``x``: its own, in memory ``kind``."""
    base = x
    if type(x) is Token:
        base = x._buf
    elif type(x) is not ArrayImpl and isinstance(x, _xla.Array):
        base = x._base_array
    if type(base) is ArrayImpl:
        return base._sharding.with_memory_kind(kind)
    return single_device_sharding(default_device(), kind)


def _moves_memory(device: Any, leaves: list) -> bool:
    """Whether ``device_put(leaves, device)`` under a trace changes a value's memory space.

    Then it is a ``device_put`` equation (its type says the memory, as in JAX
    0.10.2): a memory space target, or a sharding whose memory is not a
    traced value's.
    """
    if isinstance(device, MemorySpace):
        space_memory_kind(device)  # JAX's error for Space.Any
        return True
    if not isinstance(device, Sharding):
        return False
    space = kind_memory_space(device.memory_kind)
    default = device._device_assignment[0].default_memory().kind
    return device.memory_kind not in (None, default) or any(
        getattr(leaf.aval, "memory_space", space) is not space
        for leaf in leaves
        if isinstance(leaf, core.Tracer)
    )


def _records_equation(device: Any, leaves: list) -> bool:
    """Whether ``device_put(leaves, device)`` is a ``device_put`` equation of the current trace.

    Traced values always are. A Sharding target under a trace is one for every
    leaf (concrete ones too: placing them eagerly would run a program inside the
    trace); its type gives the result the sharding's explicit axes, and the
    program runs on the sharding's devices (JAX 0.10.2's rule).
    """
    if isinstance(device, Sharding) and type(core.trace_state.trace) is not core.EvalTrace:
        return True
    if device is None or isinstance(device, Device) or _moves_memory(device, leaves):  # type: ignore[misc]
        return any(isinstance(leaf, core.Tracer) for leaf in leaves)
    return False


def _put_leaf(x: Any, sharding: Sharding | None, committed: bool):
    if type(x) is not ArrayImpl and isinstance(x, _xla.Array):
        # An array of an extended dtype (runtime.extended): place its data.
        return x._with_base(_put_leaf(x._base_array, sharding, committed))
    if type(x) is Token:  # its empty buffer goes there, as a new token
        return Token(_put_leaf(x._buf, sharding, committed))
    if type(x) is ArrayImpl:
        x._check_if_deleted()
        if sharding is None:
            return x
        return copy_to_sharding(x, sharding, committed)
    if isinstance(x, core.Tracer):
        return x  # placement of traced values is decided when the trace is compiled
    value, aval = _canonical_host_value(x)
    if value.dtype == dtypes.float0:
        return value  # as JAX: a float0 value has no data to place, it stays on the host
    if sharding is None:
        sharding = single_device_sharding(default_device())
    if _is_unreduced(sharding):
        # As JAX: placed replicated, then a compiled identity keeps one copy per group
        # of partial sums (zeros on the other devices of the group).
        whole = put_host_value(value, aval, sharding._replicated(), committed)
        return copy_to_sharding(whole, sharding, committed)
    return put_host_value(value, aval, sharding, committed)


def device_put(
    x: Any,
    device: Device | Sharding | MemorySpace | None = None,
    *,
    src: Any = None,
    donate: Any = False,
    may_alias: Any = None,
):
    """Place ``x`` (a pytree of arrays and scalars) on ``device`` (``jax.device_put``).

    ``device`` (or each leaf of ``device``, a pytree prefix of ``x``: one target
    per subtree) is a Device, a Sharding, a memory space (``jax.memory.Space``:
    the same devices and layout in that memory; host values on the default
    device) or None: None leaves Arrays where they
    are and puts host values on the default device *uncommitted* (a later jit
    may move them); an explicit target commits the result to it. numpy arrays
    are copied (never aliased) and their dtype canonicalized; Python scalars
    become weakly typed arrays. With ``donate=True`` the source Arrays are
    deleted once copied; with ``may_alias=False`` the result is always a new
    buffer (by default an Array already in place is returned as it is).
    ``src`` names where ``x`` is (recorded under a trace; eagerly it is known).
    ``src``, ``donate`` and ``may_alias`` may also be pytree prefixes of ``x``.
    """
    leaves, treedef = tree_flatten(x)
    donates = _per_leaf(donate, x, leaves)
    aliases = _per_leaf(may_alias, x, leaves)
    if any(d and a for d, a in zip(donates, aliases, strict=True)):
        raise ValueError("may_alias and donate cannot be True at the same time.")
    copies = [a is not None and not a for a in aliases]
    targets = [device] * len(leaves) if _is_target(device) else _broadcast_targets(device, x)
    if any(_records_equation(t, [leaf]) for t, leaf in zip(targets, leaves, strict=True)) or (
        _is_target(device) and _records_equation(device, leaves)
    ):  # one device_put equation, as JAX records it
        srcs = _per_leaf(src, x, leaves)
        return tree_unflatten(treedef, _bind_put(leaves, targets, srcs, donates, copies))
    if _is_target(device):
        out = _put_leaves(leaves, device)
    else:
        out = [_put_leaves([leaf], t)[0] for leaf, t in zip(leaves, targets, strict=True)]
    for i, (leaf, new) in enumerate(zip(leaves, out, strict=True)):
        if type(leaf) is not ArrayImpl or (new is not leaf and not _shares_buffers(leaf, new)):
            if donates[i] and type(leaf) is ArrayImpl:
                leaf.delete()
            continue
        if copies[i]:
            out[i] = _xla.copy_to_devices(new, new.sharding)
    return tree_unflatten(treedef, out)


def _per_leaf(option: Any, x: Any, leaves: list) -> list:
    """One value of a ``device_put`` option per leaf of ``x`` (the option or a prefix of x)."""
    if not isinstance(option, tuple | list | dict):
        return [option] * len(leaves)
    return _broadcast_targets(option, x)


def _is_target(device: Any) -> bool:
    """Whether ``device`` is one target of ``device_put`` (else a pytree of them)."""
    return (
        device is None
        or isinstance(device, Device | Sharding | MemorySpace)
        or is_sharding_like(device)
        or not isinstance(device, tuple | list | dict)
    )


def _broadcast_targets(prefix: Any, x: Any) -> list:
    """One target per leaf of ``x``, from ``prefix``, a pytree prefix of ``x`` (JAX's rule)."""
    treedef = tree_structure(prefix, is_leaf=lambda t: t is not prefix and _is_target(t))
    try:
        subtrees = treedef.flatten_up_to(x)
    except ValueError:
        raise axis_spec_prefix_error(
            "device_put device",
            prefix,
            leaf_stand_ins(x),
            lambda t: t is not prefix and _is_target(t),
        ) from None
    targets = tree_leaves(prefix, is_leaf=lambda t: t is not prefix and _is_target(t))
    out: list = []
    for target, sub in zip(targets, subtrees, strict=True):
        out.extend([target] * len(tree_leaves(sub)))
    return out


def _bind_put(leaves: list, targets: list, srcs: list, donates: list, copies: list) -> list:
    semantics = tuple(
        CopySemantics.DONATE_INPUT
        if donate
        else CopySemantics.ALWAYS_COPY
        if copy
        else CopySemantics.REUSE_INPUT
        for donate, copy in zip(donates, copies, strict=True)
    )
    return device_put_p.bind(
        *leaves, devices=tuple(targets), srcs=tuple(srcs), copy_semantics=semantics
    )


def _put_leaves(leaves: list, device: Any) -> list:
    if isinstance(device, MemorySpace):
        kind = space_memory_kind(device)
        return [_put_leaf(leaf, _in_memory(leaf, kind), True) for leaf in leaves]
    sharding, committed = _target_sharding(device)
    return [_put_leaf(leaf, sharding, committed) for leaf in leaves]


#: How a device_put treats its input (jaxlib's ``ArrayCopySemantics``, a param of the equation).
CopySemantics = _xla.ArrayCopySemantics

#: ``jax.device_put`` under a trace (JAX's ``device_put_p``): one equation for all the leaves,
#: with one target device (None: where it is), source and copy semantics per leaf; its other
#: rules are in ``device_put_rules.py``. A Sharding target types the result as an Array
#: on it (its explicit axes) and adds its devices to the program's (``jaxpr_shardings``).
device_put_p = core.Primitive("device_put")
device_put_p.multiple_results = True


def _put_memory_spaces(avals, devices, srcs, copy_semantics) -> list:
    """The memory space of each result: the target's (a memory space or a sharding's kind)."""
    out: list[MemorySpace | None] = []
    for aval, target in zip(avals, devices, strict=True):
        if isinstance(target, MemorySpace):
            out.append(target)
        elif isinstance(target, Sharding):
            out.append(kind_memory_space(target.memory_kind))
        else:
            out.append(getattr(aval, "memory_space", None))
    return out


def _put_abstract_eval(*avals, devices, srcs, copy_semantics) -> list:
    spaces = _put_memory_spaces(avals, devices, srcs, copy_semantics)
    # A Sharding target: the type an Array on it has (JAX's: a NamedSharding's explicit
    # axes, any other sharding none), in the memory space of its kind.
    typed = [
        typed_aval(a, d) if isinstance(d, Sharding) and isinstance(a, ShapedArray) else a
        for a, d in zip(avals, devices, strict=True)
    ]
    return [
        a if s is None or a.memory_space is s else a.update(memory_space=s)
        for a, s in zip(typed, spaces, strict=True)
    ]


device_put_p.def_abstract_eval(_put_abstract_eval)
memory_space_rules[device_put_p] = _put_memory_spaces
device_put_p.def_impl(
    lambda *xs, devices, srcs, copy_semantics: [
        device_put(
            x,
            d,
            donate=c == CopySemantics.DONATE_INPUT,
            may_alias=False if c == CopySemantics.ALWAYS_COPY else None,
        )
        for x, d, c in zip(xs, devices, copy_semantics, strict=True)
    ]
)


def explicit_device_put(
    x: Any,
    device: Device | Sharding | MemorySpace | None = None,
    *,
    src: Any = None,
    donate: Any = False,
    may_alias: Any = None,
):
    """``device_put`` as a user calls it: its transfers are *explicit* (``jax.device_put``).

    Transfer guards at "disallow" let explicit transfers through and stop only
    implicit ones (the library's own ``device_put`` calls, such as ``jnp.array``
    of a numpy array, count as implicit, as in JAX).
    """
    with _xla.explicit_transfer("explicit_device_put"):
        return device_put(x, device, src=src, donate=donate, may_alias=may_alias)


def device_get(x: Any):
    """Fetch a pytree of Arrays to the host as numpy arrays (``jax.device_get``).

    Transfers of all leaves start before the first one is waited for; leaves
    that are not Arrays are returned unchanged.
    """
    leaves, treedef = tree_flatten(x)
    with _xla.explicit_transfer("explicit_device_get"):
        for leaf in leaves:
            if type(leaf) is ArrayImpl:
                leaf.copy_to_host_async()
        out = [np.asarray(leaf) if type(leaf) is ArrayImpl else leaf for leaf in leaves]
    return tree_unflatten(treedef, out)


def block_until_ready(x: Any):
    """Wait until every Array in the pytree ``x`` is computed; return ``x``.

    Counterpart of ``jax.block_until_ready``.
    """
    arrays = []
    for leaf in tree_leaves(x):
        if type(leaf) is ArrayImpl:
            arrays.append(leaf)  # a deleted one raises jaxlib's JaxRuntimeError, as in JAX
        elif hasattr(leaf, "block_until_ready") and not isinstance(leaf, core.Tracer):
            leaf.block_until_ready()
    if arrays:
        _xla.batched_block_until_ready(arrays)
    return x


def make_array_from_single_device_arrays(
    shape: Sequence[int], sharding: Sharding, arrays: Sequence[Array], *, dtype=None
) -> Array:
    """Assemble an Array of ``shape`` from one single-device Array per device of ``sharding``.

    Counterpart of ``jax.make_array_from_single_device_arrays``: ``arrays[i]``
    must hold the shard that ``sharding`` places on its device.
    """
    if not arrays and dtype is None:
        raise ValueError("make_array_from_single_device_arrays: give dtype when arrays is empty")
    first = arrays[0] if arrays else None
    # first is None only with no arrays, where dtype is given (checked above).
    aval = aval_of(tuple(shape), first.dtype if dtype is None else np.dtype(dtype), False)  # type: ignore[union-attr]
    return ArrayImpl(typed_aval(aval, sharding), sharding, list(arrays), True, False)


def is_array(x: Any) -> bool:
    """Tell whether ``x`` is a device Array."""
    return type(x) is ArrayImpl


def _device_arrays(x: Array) -> list[tuple[Device, Array]]:
    """Return each of ``x``'s local devices with its piece as a single-device Array.

    jaxlib's ``_arrays`` of a multi-device Array carry no aval and jaxlib's own
    sharding class; each piece is rewrapped with ours.
    """
    if type(x._sharding) is SingleDeviceSharding:
        return [(x._sharding._device, x)]
    out = []
    shard_shape = x._sharding.shard_shape(x.aval.shape)
    aval = aval_of(shard_shape, x.aval.dtype, x.aval.weak_type)
    for piece in x._arrays:
        device = piece.sharding._device
        sharding = single_device_sharding(device, x._sharding.memory_kind)
        out.append(
            (device, ArrayImpl(typed_aval(aval, sharding), sharding, [piece], x._committed, True))
        )
    return out


def _replica_ids(sharding: Sharding, index_map, shape) -> dict:
    """Number the devices holding the same slice 0, 1, ... in the sharding's device order."""
    seen: dict[tuple, int] = {}
    out = {}
    for d in sharding._device_assignment:
        key = tuple(s.indices(n) for s, n in zip(index_map[d], shape, strict=True))
        out[d] = seen.get(key, 0)
        seen[key] = out[d] + 1
    return out


class Shard:
    """One device's piece of an Array (``jax.Shard``): ``device``, ``index`` and ``data``."""

    __slots__ = ("device", "index", "data", "replica_id")

    def __init__(self, device: Device, index, data: Array, replica_id: int = 0):
        self.device = device
        self.index = index
        self.data = data
        self.replica_id = replica_id

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id})"


# --- the Python half of ArrayImpl ---------------------------------------------------------


def _is_unreduced(sharding) -> bool:
    """Whether an array so placed holds partial sums over some mesh axes (``P(unreduced=)``)."""
    return bool(getattr(getattr(sharding, "spec", None), "unreduced", None))


def _not_scalar_message(self, what: str) -> str:
    return f"Only scalar arrays can be converted to {what}; got arr.ndim={self.aval.ndim}"


class _ArrayMethods:
    """Methods and properties grafted onto jaxlib's ArrayImpl (see the module docstring)."""

    __array_priority__ = 100
    # Arrays compare elementwise, like numpy's; they cannot be dict keys.
    __hash__ = None  # type: ignore[assignment]

    # --- metadata (readable even after deletion) ---

    @property
    def shape(self) -> tuple[int, ...]:
        return self.aval.shape

    @property
    def dtype(self) -> np.dtype:
        return self.aval.dtype

    @property
    def weak_type(self) -> bool:
        return self.aval.weak_type

    @property
    def ndim(self) -> int:
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        return math.prod(self.aval.shape)

    @property
    def itemsize(self) -> int:
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.aval.dtype.itemsize

    @property
    def sharding(self) -> Sharding:
        return self._sharding

    @property
    def committed(self) -> bool:
        return self._committed

    @property
    def device(self):
        """The device holding the data, or the sharding when there are several."""
        self._check_if_deleted()
        devices = self._sharding.device_set
        return next(iter(devices)) if len(devices) == 1 else self._sharding

    def devices(self) -> set[Device]:
        """Return the set of devices holding (a part of) the data."""
        self._check_if_deleted()
        return set(self._sharding.device_set)

    @property
    def is_fully_addressable(self) -> bool:
        return self._sharding.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self._sharding.is_fully_replicated

    @property
    def addressable_shards(self) -> list[Shard]:
        """The shards held by this process's devices (``jax.Array.addressable_shards``)."""
        self._check_if_deleted()
        sharding = self._sharding
        index_map = sharding.devices_indices_map(self.aval.shape)
        replicas = _replica_ids(sharding, index_map, self.aval.shape)
        return [Shard(d, index_map[d], a, replicas[d]) for d, a in _device_arrays(self)]

    @property
    def global_shards(self) -> list[Shard]:
        """Every shard, on every device; ``data`` is None for other processes' devices."""
        self._check_if_deleted()
        sharding = self._sharding
        index_map = sharding.devices_indices_map(self.aval.shape)
        replicas = _replica_ids(sharding, index_map, self.aval.shape)
        local = dict(_device_arrays(self))
        return [
            Shard(d, index_map[d], local.get(d), replicas[d]) for d in sharding._device_assignment
        ]

    @property
    def format(self):
        """The data's memory layout and sharding (``jax.Array.format``), a :class:`Format`."""
        if self.is_deleted():
            return Format(None, self._sharding)
        return Format(Layout.from_pjrt_layout(self._pjrt_layout), self._sharding)

    def addressable_data(self, index: int) -> Array:
        """Return the data of this process's ``index``-th shard as a single-device Array."""
        self._check_if_deleted()
        return _device_arrays(self)[index][1]

    # --- state ---

    def _check_if_deleted(self) -> None:
        if self.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}.")

    def _check_and_rearrange(self, arrays, sharding, aval):
        # Called by ArrayImpl's constructor unless told to skip checks: order the
        # single-device arrays like the sharding's devices and check their shapes.
        by_device = {a.sharding._device: a for a in arrays}
        devices = sharding._addressable_device_assignment
        if len(by_device) != len(arrays) or set(by_device) != set(devices):
            raise ValueError(
                f"expected one array on each of the devices {list(devices)}, got arrays on "
                f"{[a.sharding._device for a in arrays]}"
            )
        shard_shape = sharding.shard_shape(aval.shape)
        for a in arrays:
            if a.aval.shape != shard_shape or a.aval.dtype != aval.dtype:
                raise ValueError(
                    f"expected shards of type {aval.dtype}{list(shard_shape)}, got "
                    f"{a.aval.str_short()} on {a.sharding._device}"
                )
        return [by_device[d] for d in devices]

    def _rewrap_committed(self, committed: bool) -> Array:
        return ArrayImpl(self.aval, self._sharding, list(self._arrays), committed, True)

    def copy_to_host_async(self) -> None:
        """Start copying the data to the host, for a later ``np.asarray`` to find ready."""
        self._check_if_deleted()
        if self._npy_value is None:
            for shard in self._arrays:
                shard._copy_single_device_array_to_host_async()

    # --- host value ---

    @property
    def _value(self) -> np.ndarray:
        """The data as a read-only numpy array (cached after the first transfer)."""
        self._check_if_deleted()
        value = self._npy_value  # type: ignore[has-type]
        if value is not None:
            return value
        sharding = self._sharding
        if type(sharding) is SingleDeviceSharding or (
            sharding.is_fully_replicated and len(self._arrays) >= 1
        ):
            value, did_copy = self._single_device_array_to_np_array_did_copy()
            value.flags.writeable = False
            if did_copy:
                self._npy_value = value
            return value
        if not sharding.is_fully_addressable:
            raise RuntimeError(
                "Fetching the value of an Array that spans devices of other processes is not "
                "possible; read its addressable_shards instead"
            )
        for shard in self._arrays:
            shard._copy_single_device_array_to_host_async()
        value = np.empty(self.aval.shape, self.aval.dtype)
        index_map = sharding.devices_indices_map(self.aval.shape)
        for shard in self._arrays:
            value[index_map[shard.sharding._device]] = (
                shard._single_device_array_to_np_array_did_copy()[0]
            )
        value.flags.writeable = False
        self._npy_value = value
        return value

    def __array__(self, dtype=None, copy=None):
        value = self._value
        if copy is False and dtype is not None and np.dtype(dtype) != value.dtype:
            raise ValueError("Unable to avoid copy while creating an array as requested.")
        if copy:
            return np.array(value, dtype=dtype, copy=True)
        return np.asarray(value, dtype=dtype)

    def tolist(self):
        """Return the data as nested Python lists (``np.ndarray.tolist``)."""
        return self._value.tolist()

    def tobytes(self, order="C") -> bytes:
        """Return the raw bytes of the data (``np.ndarray.tobytes``)."""
        return self._value.tobytes(order)

    def item(self, *args):
        """Return one element as a Python scalar (``np.ndarray.item``)."""
        return self._value.item(*args)

    # --- conversions of size-1 arrays ---

    def __bool__(self) -> bool:
        size = self.size
        if size == 0:
            raise ValueError(
                "The truth value of an empty array is ambiguous. Use `array.size > 0` to check "
                "that an array is not empty."
            )
        if size > 1:
            raise ValueError(
                "The truth value of an array with more than one element is ambiguous. "
                "Use a.any() or a.all()"
            )
        return bool(self._value)

    def __int__(self) -> int:
        if self.aval.shape:
            raise TypeError(_not_scalar_message(self, "Python scalars"))
        return int(self._value)

    def __float__(self) -> float:
        if self.aval.shape:
            raise TypeError(_not_scalar_message(self, "Python scalars"))
        return float(self._value)

    def __complex__(self) -> complex:
        if self.aval.shape:
            raise TypeError(_not_scalar_message(self, "Python scalars"))
        return complex(self._value)

    def __index__(self) -> int:
        if self.aval.shape or self.aval.dtype.kind not in "iu":
            raise TypeError("Only integer scalar arrays can be converted to a scalar index.")
        return operator.index(self._value[()])

    # --- sequence protocol ---

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        # One transfer to the host, then a device array per row (indexing on device
        # would need modjax.numpy, and costs a kernel launch per row).
        value = self._value
        aval = aval_of(self.aval.shape[1:], self.aval.dtype, self.aval.weak_type)
        sharding, committed = self._sharding, self._committed
        if type(sharding) is not SingleDeviceSharding:
            sharding = single_device_sharding(next(iter(sharding._device_assignment)))
        return (put_host_value(row, aval, sharding, committed) for row in value)

    # --- printing ---

    def __repr__(self) -> str:
        prefix = "Array("
        weak = ", weak_type=True" if self.aval.weak_type else ""
        dtype_part = f"dtype={dtypes.dtype_name(self.aval.dtype)}{weak})"
        if _is_unreduced(self._sharding):  # partial sums: no value to show without a reduction
            return f"{prefix}shape={self.aval.shape}, {dtype_part[:-1]}, sharding={self._sharding})"
        if not (self._sharding.is_fully_addressable or self._sharding.is_fully_replicated):
            return f"{prefix}shape={self.aval.shape}, {dtype_part}"
        width = np.get_printoptions()["linewidth"]
        if self.size == 0:
            body = f"[], shape={self.aval.shape}"
        else:
            body = np.array2string(
                self._value, prefix=prefix, suffix=",", separator=", ", max_line_width=width
            )
        last_line = len(body) - body.rfind("\n") + 1
        gap = " " if last_line + len(dtype_part) + 1 <= width else " " * len(prefix)
        return f"{prefix}{body},{gap}{dtype_part}"

    def __str__(self) -> str:
        if _is_unreduced(self._sharding):
            return repr(self)
        return str(self._value)

    def __format__(self, spec: str) -> str:
        fn = core.tracer_operators.get("__format__")
        if fn is not None:
            return fn(self, spec)
        if _is_unreduced(self._sharding):
            return repr(self)
        value = self._value
        return format(value[()] if value.ndim == 0 else value, spec)

    # --- pickling and copying ---

    def __reduce__(self):
        return _unpickle_array, (np.array(self._value), self.aval.weak_type)

    def __copy__(self):
        fn = core.tracer_operators.get("__copy__")
        return fn(self) if fn is not None else _device_copy(self)

    def __deepcopy__(self, memo):
        fn = core.tracer_operators.get("__deepcopy__")
        return fn(self, memo) if fn is not None else _device_copy(self)

    # --- everything else: the shared attribute table ---

    def __dir__(self):
        # The table's attributes (sum, reshape, at, ...) are the Array's too, as in JAX.
        return sorted({*object.__dir__(self), *core.tracer_attributes})

    def __getattr__(self, name: str):
        # Reached only when normal lookup fails; dunders are never table entries.
        if name.startswith("__"):
            raise AttributeError(name)
        fn = core.tracer_attributes.get(name)
        if fn is None:
            raise AttributeError(
                _REMOVED_ATTRIBUTES.get(name, f"'Array' object has no attribute '{name}'")
            )
        return fn(self)


# Attributes JAX removed, with the messages its Array gives.
_REMOVED_ATTRIBUTES = {
    "device_buffer": "arr.device_buffer has been deprecated. Use arr.addressable_data(0)",
    "device_buffers": (
        "arr.device_buffers has been deprecated. Use [x.data for x in arr.addressable_shards]"
    ),
}


def _unpickle_array(value: np.ndarray, weak_type: bool) -> Array:
    aval = aval_of(value.shape, dtypes.canonicalize_dtype(value.dtype), weak_type)
    value = value.astype(aval.dtype, copy=False)
    return put_host_value(value, aval, single_device_sharding(default_device()), False)


def _device_copy(x: Array) -> Array:
    x._check_if_deleted()
    if type(x._sharding) is SingleDeviceSharding:
        return _xla.copy_to_devices(x, x._sharding)
    return put_host_value(np.asarray(x._value), x.aval, x._sharding, x._committed)


def _make_operator(name: str, binary: bool):
    table = core.tracer_operators

    def forward_binary(self, other):
        fn = table.get(name)
        return NotImplemented if fn is None else fn(self, other)

    def forward(self, *args, **kwargs):
        fn = table.get(name)
        if fn is not None:
            return fn(self, *args, **kwargs)
        raise TypeError(
            f"operator {name} is not defined for Array: no implementation is registered "
            "(modjax.numpy registers them; a DSL can use register_tracer_operator)"
        )

    chosen = forward_binary if binary else forward
    chosen.__name__ = name
    chosen.__qualname__ = f"Array.{name}"
    chosen.__doc__ = f"Dispatch ``{name}`` through tracecore's ``tracer_operators`` table."
    if name in core.OPERATOR_SIGNATURES:
        chosen.__signature__ = core.OPERATOR_SIGNATURES[name]  # type: ignore[attr-defined]
    return chosen


_OWN = {"__format__", "__copy__", "__deepcopy__"}
_BINARY_OPERATORS = set(core.BINARY_OPERATOR_NAMES)


def _install_operator(name: str, fn) -> None:
    """Make a registered binary operator ``fn`` Array's own method (``x + 1`` is then one
    Python frame fewer than through the forwarder, which reads the table per call); the
    forwarder comes back when ``name`` leaves the table."""
    if name in _BINARY_OPERATORS:
        setattr(ArrayImpl, name, _make_operator(name, True) if fn is None else fn)


# C++ methods of ArrayImpl that crash the process (or raise an obscure error) when
# called on a deleted Array: each gets a Python guard raising JAX's RuntimeError first.
# (block_until_ready raises JAX's own JaxRuntimeError and stays C++, as in JAX.)
_GUARDED_METHODS = (
    "is_ready",
    "clone",
    "platform",
    "on_device_size_in_bytes",
    "unsafe_buffer_pointer",
)


def _guarded(name: str, cpp_method):
    def method(self, *args):
        if self.is_deleted():
            self._check_if_deleted()
        return cpp_method(self, *args)

    method.__name__ = name
    method.__qualname__ = f"Array.{name}"
    method.__doc__ = getattr(cpp_method, "__doc__", None)
    return method


def _graft() -> None:
    for name in _GUARDED_METHODS:
        cpp_method = vars(ArrayImpl)[name]
        if not getattr(cpp_method, "_modjax_guard", False):
            guard = _guarded(name, cpp_method)
            guard._modjax_guard = True
            setattr(ArrayImpl, name, guard)
    layout = vars(ArrayImpl)["_pjrt_layout"]
    if isinstance(layout, property) or hasattr(layout, "__get__"):
        cpp_get = layout.__get__

        def _pjrt_layout(self):
            self._check_if_deleted()
            return cpp_get(self, type(self))

        ArrayImpl._pjrt_layout = property(_pjrt_layout)
    for name, value in vars(_ArrayMethods).items():
        if name in ("__module__", "__dict__", "__weakref__", "__doc__", "__qualname__"):
            continue
        setattr(ArrayImpl, name, value)
    for full in core.OPERATOR_NAMES:
        if full in _OWN:
            continue
        setattr(ArrayImpl, full, _make_operator(full, full in _BINARY_OPERATORS))
    for full, fn in core.tracer_operators.items():
        _install_operator(full, fn)
    core.operator_listeners.append(_install_operator)
    ArrayImpl.__doc__ = (
        "A multidimensional array on one or more devices (``jax.Array``); made by "
        "device_put, jit and eager operations, never constructed directly."
    )


_graft()
register_aval_handler(ArrayImpl, operator.attrgetter("aval"))
# The public ``modjax.Array`` is tracecore's abstract base, which tracers join too;
# the concrete type stays jaxlib's class, so the C++ fast path sees no Python base.
AbstractArray.register(ArrayImpl)
