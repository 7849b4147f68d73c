"""``jax.experimental.topologies``: descriptions of device topologies, and meshes over them.

modjax runs on CPU devices, for which XLA has no topology to describe beyond the
attached devices; a TPU topology needs JAX's TPU support, which modjax has not.
"""

from __future__ import annotations

from collections.abc import Sequence

from modjax.experimental import mesh_utils
from modjax.runtime.backends import Device
from modjax.runtime.backends import devices as _devices
from modjax.sharding import Mesh

__all__ = [
    "Device",
    "TopologyDescription",
    "get_attached_topology",
    "get_topology_desc",
    "make_mesh",
]


class TopologyDescription:
    """The devices of a topology (``jax.experimental.topologies.TopologyDescription``)."""

    def __init__(self, devices: list[Device]):
        self.devices: list[Device] = devices


def get_attached_topology(platform=None) -> TopologyDescription:
    """Return the topology of the attached devices of ``platform`` (default: the default one)."""
    return TopologyDescription(_devices(backend=platform))


def get_topology_desc(topology_name: str = "", platform: str | None = None, **kwargs):
    """Describe a named topology of ``platform`` (``jax.experimental.topologies``).

    As JAX on a machine without TPU support: TPU topologies (the default platform)
    raise RuntimeError, another present platform NotImplementedError (XLA makes
    topologies for TPUs only), an absent one the RuntimeError of an unknown backend.
    """
    if platform in ("tpu", None):
        raise RuntimeError(
            "JAX TPU support not installed; cannot generate TPU topology. See "
            "https://github.com/jax-ml/jax#installation"
        )
    _devices(backend=platform)  # an absent platform is the unknown-backend RuntimeError
    raise NotImplementedError(f"topology not implemented for {platform}")


def make_mesh(
    topo: TopologyDescription,
    mesh_shape: Sequence[int],
    axis_names: tuple[str, ...],
    *,
    contiguous_submeshes: bool = False,
) -> Mesh:
    """Return a Mesh of ``topo``'s devices laid out by ``mesh_utils.create_device_mesh``."""
    devices = mesh_utils.create_device_mesh(
        mesh_shape, list(topo.devices), contiguous_submeshes=contiguous_submeshes
    )
    return Mesh(devices, axis_names)
