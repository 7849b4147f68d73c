"""modjax.sharding: meshes, PartitionSpec, NamedSharding and sharded Arrays (``jax.sharding``)."""

from modjax.runtime import Sharding, SingleDeviceSharding
from modjax.runtime.sharding import single_device_sharding as _single_device_sharding
from modjax.tracecore.abstract import ManualAxisType  # noqa: E402  (jax.sharding's)

from . import collective_lowering  # noqa: F401 - registers the collectives' XLA lowerings
from .arrays import (
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
)
from .constraint import auto_axes, explicit_axes, reshard, with_sharding_constraint
from .mesh import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    Mesh,
    get_abstract_mesh,
    get_mesh,
    make_mesh,
    set_mesh,
    use_abstract_mesh,
    use_mesh,
)
from .named_sharding import (
    AbstractNamedSharding,
    DuplicateSpecError,
    GSPMDSharding,
    IndivisibleError,
    NamedSharding,
)
from .partition_spec import UNCONSTRAINED, P, PartitionSpec
from .pcast import pcast
from .pmap import pmap
from .shard_map import shard_map, shard_map_p
from .smap import smap
from .visualize import inspect_array_sharding, visualize_array_sharding, visualize_sharding


def make_single_device_sharding(device, *, memory_kind=None) -> SingleDeviceSharding:
    """Return the sharding of all of an array on ``device`` (``jax.sharding``'s)."""
    return _single_device_sharding(device, memory_kind)


__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AbstractNamedSharding",
    "AxisType",
    "DuplicateSpecError",
    "GSPMDSharding",
    "IndivisibleError",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "UNCONSTRAINED",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "inspect_array_sharding",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "make_mesh",
    "make_single_device_sharding",
    "pcast",
    "pmap",
    "reshard",
    "set_mesh",
    "shard_map",
    "shard_map_p",
    "smap",
    "use_abstract_mesh",
    "use_mesh",
    "visualize_array_sharding",
    "visualize_sharding",
    "with_sharding_constraint",
]
