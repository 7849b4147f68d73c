"""modjax.runtime: devices, Arrays, jit, eager dispatch and the compile cache on jaxlib.

The layer that runs programs: it owns the jaxlib clients (``backends``), the
device array type (``Array``), placement (``device_put``), ``jit`` and its AOT
stages, the eager path of every primitive (``apply_primitive``) and the
compilation caches. See the package README for the tour and the numbers.
"""

from . import device_put_rules, distributed, guards, sibling_rules  # noqa: F401  (rules; jax.distributed; options)
from .array import (
    Array,
    ArrayImpl,
    Shard,
    block_until_ready,
    device_get,
    device_put,
    device_put_p,
    explicit_device_put,
    is_array,
    make_array_from_single_device_arrays,
)
from .backends import (
    default_backend,
    default_device,
    device_count,
    devices,
    get_backend,
    local_device_count,
    local_devices,
    process_count,
    process_index,
    process_indices,
    register_backend_factory,
)
from .compile_cache import compile_or_get_cached
from .debugging import debug_infs, debug_nans, disable_jit, explain_cache_misses
from .dispatch import apply_primitive
from .executable import effects_barrier
from .extended import ExtendedArray, extended_array_types, register_extended_array_type
from .fwd_and_bwd import fwd_and_bwd
from .jit import Compiled, Lowered, Traced, clear_caches, eval_shape, jit, jit_p
from .sharding import Sharding, SingleDeviceSharding, register_sharding, register_sharding_spec

__all__ = [
    "Array",
    "ArrayImpl",
    "Compiled",
    "ExtendedArray",
    "Lowered",
    "Shard",
    "Sharding",
    "SingleDeviceSharding",
    "Traced",
    "apply_primitive",
    "block_until_ready",
    "clear_caches",
    "debug_infs",
    "debug_nans",
    "disable_jit",
    "explain_cache_misses",
    "compile_or_get_cached",
    "default_backend",
    "default_device",
    "device_count",
    "device_get",
    "device_put",
    "device_put_p",
    "explicit_device_put",
    "devices",
    "effects_barrier",
    "eval_shape",
    "extended_array_types",
    "fwd_and_bwd",
    "get_backend",
    "is_array",
    "jit",
    "jit_p",
    "local_device_count",
    "local_devices",
    "make_array_from_single_device_arrays",
    "process_count",
    "process_indices",
    "process_index",
    "register_backend_factory",
    "register_extended_array_type",
    "register_sharding",
    "register_sharding_spec",
]

__version__ = "0.1.0"
