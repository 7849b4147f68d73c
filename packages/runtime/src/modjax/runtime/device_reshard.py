"""Moving an Array to another sharding by copies between devices, never through the host.

What ``device_put(x, sharding)`` does with a device Array whose placement
differs from ``sharding`` (JAX 0.10's ``_device_put_sharding_impl`` and
``_array_shard_arg`` take the same routes):

* same devices in the same order (any meshes): a jitted identity with
  ``out_shardings`` (XLA's partitioner moves the pieces with collectives);
* the same number of devices otherwise (another order, other devices): each
  piece is first copied by position onto the target's devices (jaxlib's
  ``copy_array_to_devices_with_sharding``; the source's mesh moved onto those
  devices: ``_on_devices``), then, if the layout differs, resharded there by
  the jitted identity (a program over two meshes of the same devices);
* different numbers of devices: the target's pieces are taken from the
  source's pieces that hold exactly them (``batched_device_put`` of device
  buffers: copies between devices); where none does, the whole array is
  assembled on one source device (a jitted identity to the replicated
  layout), copied to every target device and split there by the jitted
  identity. JAX fetches the array to the host in that last case.

Another memory kind (``pinned_host``, ``unpinned_host``): with the same devices
and layout, one copy into that memory; otherwise the array moves in the
default memory and is then copied into the target's.
"""

from __future__ import annotations

from typing import Any

from . import _xla
from .sharding import Sharding, SingleDeviceSharding, typed_aval

__all__ = ["reshard_between_devices", "jitted_identity"]

_identities: dict[Sharding, Any] = {}


def _identity(x):
    return x


def jitted_identity(sharding: Sharding):
    """Return the cached ``jit(lambda x: x, out_shardings=sharding)``."""
    fn = _identities.get(sharding)
    if fn is None:
        from .jit import jit  # noqa: PLC0415 - jit's modules import the array module

        if len(_identities) >= 256:
            _identities.clear()
        fn = _identities[sharding] = jit(_identity, out_shardings=sharding)
    return fn


def _on(x, sharding: Sharding):
    """Run the jitted identity to ``sharding`` over ``x``'s own devices (``x`` committed)."""
    return jitted_identity(sharding)(x if x._committed else x._rewrap_committed(True))


def _is_multi(s: Sharding) -> bool:
    return type(s) is not SingleDeviceSharding


def _rewrap(x, base_aval, sharding: Sharding, committed: bool):
    """Return ``x``'s buffers as an Array on ``sharding``, typed as an Array there is."""
    aval = typed_aval(base_aval, sharding)
    if aval is x.aval and x._sharding is sharding and x._committed == committed:
        return x
    return _xla.ArrayImpl(aval, sharding, list(x._arrays), committed, True)


def _copy_by_position(x, sharding: Sharding):
    """Copy piece ``i`` of ``x`` to device ``i`` of ``sharding`` (which has ``x``'s layout)."""
    return _xla.copy_to_devices(x, sharding)


def _key(index, shape) -> tuple:
    return tuple(s.indices(n) for s, n in zip(index, shape, strict=True))


def _pieces(x, target: Sharding, devices) -> list | None:
    """Return, per target device, a source buffer holding exactly its piece (None if one lacks)."""
    shape = x.shape
    by_index: dict[tuple, list] = {}
    for shard in x.addressable_shards:
        by_index.setdefault(_key(shard.index, shape), []).append(shard.data)
    wanted = target.devices_indices_map(shape)
    out = []
    for device in devices:
        candidates = by_index.get(_key(wanted[device], shape))
        if not candidates:
            return None
        here = [b for b in candidates if b.devices() == {device}]
        out.append(here[0] if here else candidates[-1])
    return out


def _whole(x):
    """Return a single-device Array holding all of ``x``, on one of ``x``'s devices."""
    source = x._sharding
    if _is_multi(source) and not source.is_fully_replicated:
        x = _on(x, source._replicated())
    return x._arrays[0]


def _default_kind(sharding: Sharding) -> str:
    return sharding._device_assignment[0].default_memory().kind


def _change_memory(x, sharding: Sharding, aval, committed: bool):
    """Return ``x`` on ``sharding``, whose memory kind differs from ``x``'s.

    Same devices and layout: one copy into the other memory (jaxlib's
    ``copy_array_to_devices_with_sharding``, as JAX). Otherwise the array moves
    in the default memory, then is copied into the target's.
    """
    source = x._sharding
    ndim = len(x.shape)
    same_place = sharding.with_memory_kind(source.memory_kind)
    if source._device_assignment == same_place._device_assignment and (
        source is same_place or source.is_equivalent_to(same_place, ndim)
    ):
        return _rewrap(_copy_by_position(x, sharding), aval, sharding, committed)
    default = _default_kind(source)
    if source.memory_kind != default:
        here = source.with_memory_kind(default)
        x = _rewrap(_copy_by_position(x, here), aval, here, True)
    moved = reshard_between_devices(x, sharding.with_memory_kind(default), True)
    if sharding.memory_kind == default:
        return _rewrap(moved, aval, sharding, committed)
    return _rewrap(_copy_by_position(moved, sharding), aval, sharding, committed)


def reshard_between_devices(x, sharding: Sharding, committed: bool):
    """Return the device Array ``x`` placed on ``sharding`` without a host round trip."""
    source = x._sharding
    aval = x.aval.update(sharding=None) if x.aval.type_sharding is not None else x.aval
    if source.memory_kind != sharding.memory_kind:
        return _change_memory(x, sharding, aval, committed)
    if (
        _is_multi(source)
        and _is_multi(sharding)
        and source._device_assignment == sharding._device_assignment
    ):
        out = _on(x, sharding)
    elif _is_multi(source) and _is_multi(sharding) and source.num_devices == sharding.num_devices:
        moved = source._on_devices(sharding._device_assignment)
        out = _rewrap(_copy_by_position(x, moved), aval, moved, True)
        if moved is not sharding:
            out = _on(out, sharding)
    else:
        devices = list(sharding._addressable_device_assignment)
        pieces = _pieces(x, sharding, devices)
        if pieces is not None:
            out = _xla.batched_device_put(
                typed_aval(aval, sharding), sharding, pieces, devices, committed=committed
            )
        elif not _is_multi(sharding):
            out = _copy_by_position(_whole(x), sharding)
        else:
            whole = _whole(x)
            replicated = sharding._replicated()
            out = _xla.batched_device_put(
                typed_aval(aval, replicated),
                replicated,
                [whole] * len(devices),
                devices,
                committed=True,
            )
            if replicated is not sharding:
                out = _on(out, sharding)
    return _rewrap(out, aval, sharding, committed)
