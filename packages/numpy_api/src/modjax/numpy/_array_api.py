"""The Python Array API standard's namespace-level pieces (jax.numpy's ``__array_api_version__``).

``modjax.numpy`` is itself the Array API namespace: ``x.__array_namespace__()``
returns it, and the standard's functions live next to numpy's. This module
adds what belongs to the namespace as a whole: the version, the inspection
object of ``__array_namespace_info__()``, and DLPack interchange
(``from_dlpack`` here, ``x.__dlpack__`` in ``_array_methods``).

DLPack goes through runtime's ``dlpack`` module, which holds the jaxlib calls.
"""

from __future__ import annotations

import copy as _copy
import enum
from typing import Any

import numpy as np
from modjax.runtime import Array, Sharding, device_put, local_devices
from modjax.runtime.dlpack import StridesNotSupported, buffer_to_capsule, capsule_to_array
from modjax.tracecore import dtypes
from modjax.tracecore.core import ConcretizationTypeError, Tracer

from ._dtypes import bool_

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    "bool",
    "from_dlpack",
]

#: The revision of the Array API standard that modjax.numpy implements.
__array_api_version__ = "2023.12"

#: Versions ``x.__array_namespace__(api_version=...)`` accepts: the one we implement,
#: the one before it (a subset), and the one JAX 0.10 advertises (so JAX programs that
#: ask for it run unchanged; its additions are tested in the conformance suite).
SUPPORTED_API_VERSIONS = ("2022.12", "2023.12", "2024.12")


# --- __array_namespace_info__ -----------------------------------------------------------------

_STANDARD_DTYPES = (
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float32",
    "float64",
    "complex64",
    "complex128",
)


class ArrayNamespaceInfo:
    """What the namespace offers: devices, dtypes, capabilities (Array API inspection object).

    Returned by ``__array_namespace_info__()``; the counterpart of JAX's
    ``jax.numpy.__array_namespace_info__()`` object.
    """

    __module__ = "modjax.numpy"

    def capabilities(self) -> dict[str, Any]:
        """Return the optional features this namespace supports (Array API ``capabilities``).

        Boolean-mask indexing and functions with data-dependent output shapes work on
        concrete arrays only (not under ``jit``), so both are reported False, as JAX does.
        """
        return {"boolean indexing": False, "data-dependent shapes": False, "max dimensions": 64}

    def default_device(self):
        """Return the default device: None, meaning "uncommitted, on the default device".

        As in JAX, a None ``device=`` argument places a result on the default
        device without committing it (a later ``jit`` may move it).
        """
        return None

    def devices(self) -> list:
        """Return the values accepted as ``device=``: None and every local device."""
        return [None, *local_devices()]

    def default_dtypes(self, *, device=None) -> dict[str, np.dtype]:
        """Return the default dtypes of each kind (64-bit ones with x64 enabled)."""
        _check_device("default_dtypes", device)
        integral = dtypes.default_int_dtype()
        return {
            "real floating": dtypes.default_float_dtype(),
            "complex floating": dtypes.default_complex_dtype(),
            "integral": integral,
            "indexing": integral,
        }

    def dtypes(self, *, device=None, kind=None) -> dict[str, np.dtype]:
        """Return the standard's dtypes available now, by name, optionally of ``kind``.

        ``kind`` is None, an ``isdtype`` kind name ('bool', 'signed integer',
        'unsigned integer', 'integral', 'real floating', 'complex floating',
        'numeric') or a tuple of them. 64-bit dtypes appear only with x64 enabled.
        """
        _check_device("dtypes", device)
        available = {}
        for name in _STANDARD_DTYPES:
            dt = np.dtype(name)
            if dtypes.canonicalize_dtype(dt) == dt:
                available[name] = dt
        if kind is None:
            return available
        kinds = kind if isinstance(kind, tuple) else (kind,)
        for k in kinds:
            if not isinstance(k, str):
                raise TypeError(
                    f"__array_namespace_info__().dtypes: kind must be a string or a tuple of "
                    f"strings, got {k!r}"
                )
            try:
                dtypes.isdtype(np.dtype("bool"), k)
            except ValueError:
                raise ValueError(
                    f"__array_namespace_info__().dtypes: unknown kind {k!r}; expected one of "
                    "'bool', 'signed integer', 'unsigned integer', 'integral', "
                    "'real floating', 'complex floating', 'numeric'"
                ) from None
        return {name: dt for name, dt in available.items() if dtypes.isdtype(dt, kinds)}


def _check_device(what: str, device) -> None:
    if device is not None and device not in local_devices() and not isinstance(device, Sharding):
        raise ValueError(
            f"__array_namespace_info__().{what}: unknown device {device!r}; expected None or "
            f"one of {local_devices()}"
        )


_INFO = ArrayNamespaceInfo()


def __array_namespace_info__() -> ArrayNamespaceInfo:
    """Return the namespace's inspection object (jax.numpy.__array_namespace_info__)."""
    return _INFO


# --- DLPack -------------------------------------------------------------------------------------


class DLDeviceType(enum.IntEnum):
    """DLPack's device type codes (the first element of ``x.__dlpack_device__()``)."""

    kDLCPU = 1
    kDLCUDA = 2
    kDLCUDAHost = 3
    kDLROCM = 10


_PLATFORM_OF_DL_DEVICE = {
    DLDeviceType.kDLCPU: "cpu",
    DLDeviceType.kDLCUDA: "cuda",
    DLDeviceType.kDLCUDAHost: "cuda",
    DLDeviceType.kDLROCM: "rocm",
}
_DL_DEVICE_OF_PLATFORM = {"cpu": DLDeviceType.kDLCPU, "cuda": DLDeviceType.kDLCUDA}
_DL_DEVICE_OF_PLATFORM.update(gpu=DLDeviceType.kDLCUDA, rocm=DLDeviceType.kDLROCM)


def dlpack_device(x: Any) -> tuple[DLDeviceType, int]:
    """Return ``(device type, device id)`` of an Array (``x.__dlpack_device__()``)."""
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"__dlpack_device__: the traced array {x.aval.str_short()} has no device; "
            "DLPack exchanges concrete arrays only (call it outside jit)"
        )
    device = _single_device(x, "__dlpack_device__")
    try:
        dl_type = _DL_DEVICE_OF_PLATFORM[device.platform]
    except KeyError:
        raise BufferError(
            f"__dlpack_device__: arrays on {device.platform} devices have no DLPack device type"
        ) from None
    return dl_type, device.local_hardware_id


def _single_device(x: Array, what: str):
    x._check_if_deleted()
    devices = x.sharding.device_set
    if len(devices) != 1 and not x.is_fully_replicated:
        raise BufferError(
            f"{what}: DLPack exchanges arrays on one device; this array of shape {x.shape} is "
            f"sharded over {len(devices)} devices (gather it first)"
        )
    return x.addressable_shards[0].device


def _device_for(dl_type: int, device_id: int, what: str):
    platform = _PLATFORM_OF_DL_DEVICE.get(dl_type)
    candidates = [d for d in local_devices() if d.platform in (platform, "gpu")] if platform else []
    for d in candidates:
        if d.local_hardware_id == device_id:
            return d
    raise TypeError(
        f"{what}: the array is on DLPack device ({dl_type}, {device_id}), which is not one of "
        f"this process's devices {local_devices()}"
    )


def to_dlpack(x: Any, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export an Array as a DLPack capsule (``x.__dlpack__``, as jax.Array's).

    The capsule is DLPack's unversioned ``"dltensor"``, which every consumer
    accepts whatever ``max_version`` it announces. Without a copy the consumer
    shares the Array's memory: writing through it breaks the Array's
    immutability, as in JAX. ``copy=True`` always copies; ``copy=False`` never
    does (and a ``dl_device`` other than the Array's is then an error).
    """
    if isinstance(x, Tracer):
        raise ConcretizationTypeError(
            f"__dlpack__: the traced array {x.aval.str_short()} has no value to export; "
            "DLPack exchanges concrete arrays only (call it outside jit and transformations)"
        )
    if max_version is not None and tuple(max_version) < (0, 5):
        raise BufferError(f"__dlpack__: DLPack versions below 0.5 are not supported: {max_version}")
    source = _single_device(x, "__dlpack__")
    if dl_device is not None and tuple(dl_device) != tuple(dlpack_device(x)):
        if copy is False:
            raise ValueError(
                f"__dlpack__: dl_device={tuple(dl_device)} needs a copy of the array on "
                f"{source}, but copy=False"
            )
        target = _device_for(dl_device[0], dl_device[1], "__dlpack__")
        x = device_put(x, target)
    elif copy:
        x = _copy.copy(x)
    return buffer_to_capsule(x.addressable_data(0), x.dtype, stream)


def from_dlpack(x: Any, /, *, device=None, copy: bool | None = None) -> Array:
    """Make an Array from a DLPack-exporting array (jax.numpy.from_dlpack).

    ``x`` is any object with ``__dlpack__`` and ``__dlpack_device__`` (a numpy
    array, a modjax Array, a torch tensor, ...) or, beyond JAX, a raw DLPack
    capsule (taken to live on the CPU). The result shares ``x``'s memory when no
    copy is needed or asked for (``copy=None``/``False``); ``copy=True`` always
    copies. ``device`` (a Device or a single-device Sharding) places and
    commits the result; a device other than ``x``'s needs a copy. 64-bit inputs
    become 32-bit unless x64 is enabled, as in ``asarray``. XLA takes compact
    (possibly transposed) tensors only: a strided CPU tensor (a numpy slice with
    steps) is copied into a compact one, unless ``copy=False`` (BufferError).
    """
    if isinstance(device, Sharding):
        devices = device.device_set
        if len(devices) != 1:
            raise ValueError(
                "from_dlpack: a DLPack tensor goes to one device, but the Sharding given spans "
                f"{len(devices)} devices"
            )
        (device,) = devices
    if type(x).__name__ == "PyCapsule":
        capsule, dl_type, device_id = x, DLDeviceType.kDLCPU, 0
    elif hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dl_type, device_id = x.__dlpack_device__()
        capsule = None
    else:
        raise TypeError(
            "from_dlpack: the argument must have __dlpack__ and __dlpack_device__ methods "
            f"(or be a DLPack capsule), got {type(x).__name__}"
        )
    if dl_type not in _PLATFORM_OF_DL_DEVICE:
        raise TypeError(f"from_dlpack: unsupported DLPack device type {dl_type} of {type(x)}")
    source = _device_for(dl_type, device_id, "from_dlpack")
    if device is not None and device != source and copy is False:
        raise ValueError(
            f"from_dlpack: device={device} needs a copy of the data on {source}, but copy=False"
        )
    try:
        out = capsule_to_array(
            x.__dlpack__(stream=None) if capsule is None else capsule, source, dl_type, copy
        )
    except StridesNotSupported as err:
        # Beyond JAX: a strided CPU tensor (a numpy slice with steps) is copied compactly.
        if copy is False or capsule is not None or dl_type != DLDeviceType.kDLCPU:
            raise BufferError(
                f"from_dlpack: XLA imports only compact (possibly transposed) tensors ({err}); "
                "pass copy=None or copy=True to copy a strided CPU tensor"
            ) from None
        compact = np.ascontiguousarray(np.from_dlpack(x))
        out = capsule_to_array(compact.__dlpack__(), source, dl_type, True)
    if copy:
        # jaxlib may alias a suitably aligned CPU buffer even when asked to copy: make
        # the copy ourselves, so later writes to the source never show through.
        out = _copy.copy(out)
        out.block_until_ready()
    canonical = dtypes.canonicalize_dtype(out.dtype)
    if canonical != out.dtype:
        from ._manipulation import astype

        out = astype(out, canonical)
    if device is not None and device != source:
        out = device_put(out, device)
    return out


# The standard's name of the boolean dtype (``jnp.bool``). Defined last: below this line the
# module's ``bool`` is this dtype, not Python's builtin.
bool = bool_  # noqa: A001
