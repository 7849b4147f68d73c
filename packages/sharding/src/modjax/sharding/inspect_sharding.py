"""``inspect_sharding``: the primitive ``jax.debug.inspect_array_sharding`` binds on a traced value.

Inside jit the sharding of a value is XLA's choice, known only when the SPMD
partitioner runs. The lowering therefore emits XLA's ``InspectSharding`` custom
call, whose backend config names a Python callable that the partitioner calls
with the HloSharding it chose for the operand; that callable expresses it on
the program's mesh and calls the user's callback, once per compilation, as
JAX 0.10.2 does. A program on one device has nothing to choose: the callback
runs while lowering, with the replicated sharding.

The primitive has no results and the ``Debug`` effect, so dead-code
elimination keeps it; under ``vmap`` and ``jvp`` it inspects the batched value
and the primal.
"""

from __future__ import annotations

import numpy as np

from modjax.autodiff import jvp_rules
from modjax.batching import batching_rules
from modjax.lowering import custom_call, register_lowering
from modjax.runtime import _xla
from modjax.runtime.spmd import SpmdTarget
from modjax.tracecore.core import Primitive
from modjax.tracecore.effects import Effect

from .collective_lowering import enclosing_shard_map_mesh
from .mesh import Mesh
from .named_sharding import GSPMDSharding, NamedSharding, sharding_from_hlo
from .partition_spec import PartitionSpec

__all__ = ["inspect_sharding_p"]

# Interned by name: the same effect as ``jax.debug.callback``'s (numpy_api declares it too).
_DebugEffect = Effect("Debug")

inspect_sharding_p = Primitive("inspect_sharding")
inspect_sharding_p.multiple_results = True
inspect_sharding_p.def_abstract_eval(lambda aval, *, callback: [])
inspect_sharding_p.def_effects(lambda *, callback: (_DebugEffect,))


def _impl(value, *, callback):
    callback(value.sharding)
    return []


def _jvp(primals, tangents, **params):
    return inspect_sharding_p.bind(*primals, **params), []


def _batching(args, dims, **params):
    # The batched value itself is what the program holds (JAX inspects it whole).
    inspect_sharding_p.bind(*args, **params)
    return [], []


def _program_mesh(target: SpmdTarget) -> Mesh | None:
    """The program's mesh over its devices in program order, or None (no mesh: GSPMD).

    JAX rebuilds it from the abstract mesh and the device assignment, so its
    axes are automatic whatever the types of the mesh the shardings were given on.
    """
    mesh = getattr(target.context, "mesh", None)
    if not isinstance(mesh, Mesh) or mesh.empty:
        return None
    devices = np.empty(len(target.devices), dtype=object)
    devices[:] = list(target.devices)
    return Mesh(devices.reshape(mesh.axis_sizes), mesh.axis_names)


def _lowering(ctx, value, *, callback):
    placement = ctx.module_context.placement
    (aval,) = ctx.avals_in
    ndim = len(aval.shape)
    manual = enclosing_shard_map_mesh()
    if isinstance(manual, Mesh) and isinstance(placement, SpmdTarget):
        # In a shard_map's body JAX names the shard_map's own mesh, its types kept.
        devices, mesh = manual._flat_devices_tuple, manual
    elif isinstance(placement, SpmdTarget):
        devices, mesh = placement.devices, _program_mesh(placement)
    elif placement is not None and hasattr(placement, "client"):  # one Device, no mesh
        devices, mesh = (placement,), None
    else:
        raise NotImplementedError(
            "inspect_array_sharding in a program lowered without its devices (jax.export): "
            "the sharding is only known when the program is compiled for its devices"
        )

    def from_hlo(hlo) -> None:
        if mesh is None:
            callback(GSPMDSharding(devices, hlo))
        elif hlo.is_manual() or hlo.is_replicated():
            callback(NamedSharding(mesh, PartitionSpec()))
        else:
            callback(sharding_from_hlo(mesh, str(hlo), ndim, None))

    if len(devices) == 1:  # nothing to partition: replicated, known now
        from_hlo(_xla.replicated_hlo_sharding())
        return []
    config = _xla.encode_inspect_sharding_callback(from_hlo)
    # The config holds the callable's address: it must outlive the compilation.
    ctx.module_context.add_keepalive(from_hlo)
    custom_call(
        "InspectSharding",
        [value.type],
        [value],
        has_side_effect=True,
        api_version=1,
        legacy_backend_config=config,
    )
    return []


inspect_sharding_p.def_impl(_impl)
jvp_rules[inspect_sharding_p] = _jvp
batching_rules[inspect_sharding_p] = _batching
register_lowering(inspect_sharding_p, _lowering)
