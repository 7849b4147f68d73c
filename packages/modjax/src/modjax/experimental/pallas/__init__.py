"""Pallas kernels in interpret mode (the counterpart of ``jax.experimental.pallas``).

``pallas_call`` runs a kernel written against references to blocks over a grid
(``BlockSpec``, ``GridSpec``, ``program_id``, ``num_programs``, ``when``,
``ds``, ``load``/``store`` with masks, ``cdiv``, ...) as an ordinary modjax
program: it works eagerly and under ``jit`` and ``vmap``. Like JAX on CPU it
needs ``interpret=True``. The names tied to compiled TPU/GPU kernels (meshes,
semaphores, ``core_map``, ...) exist and raise NotImplementedError when called
(``unsupported.py``). The ``tpu``, ``triton`` and ``mosaic_gpu`` submodules are
not provided.
"""

from __future__ import annotations

import warnings
from typing import Any

from modjax.experimental.pallas import unsupported
from modjax.experimental.pallas.call import pallas_call
from modjax.experimental.pallas.flags import (
    debug_check,
    enable_debug_checks,
    enable_poison_buffers,
    pallas_export_experimental,
)
from modjax.experimental.pallas.grid_env import num_programs, program_id
from modjax.experimental.pallas.helpers import (
    align_to,
    broadcast_to,
    cdiv,
    debug_print,
    empty,
    empty_like,
    empty_ref_like,
    loop,
    multiple_of,
    next_power_of_2,
    reciprocal,
    run_scoped,
    strides_from_shape,
    when,
)
from modjax.experimental.pallas.load_store import load, store, swap
from modjax.experimental.pallas.memory import (
    ANY,
    HOST,
    Buffered,
    CompilerParams,
    CostEstimate,
    DeviceIdType,
    MemoryRef,
    MemorySpace,
    RevisitMode,
)
from modjax.experimental.pallas.specs import (
    BlockDim,
    Blocked,
    BlockSpec,
    BoundedSlice,
    Element,
    GridSpec,
    Indirect,
    Squeezed,
    no_block_spec,
    squeezed,
)
from modjax.experimental.pallas.unsupported import (
    core_map,
    delay,
    estimate_cost,
    get_global,
    kernel,
    lower_as_mlir,
    pallas_call_p,
    run_state,
    select_ref,
    semaphore,
    semaphore_read,
    semaphore_signal,
    semaphore_wait,
    with_scoped,
)
from modjax.numpy._indexing import Slice, ds

dslice = ds

__all__ = [
    "ANY",
    "HOST",
    "BlockDim",
    "BlockSpec",
    "Blocked",
    "BoundedSlice",
    "Buffered",
    "CompilerParams",
    "CostEstimate",
    "DeviceIdType",
    "Element",
    "GridSpec",
    "Indirect",
    "MemoryRef",
    "MemorySpace",
    "RevisitMode",
    "Slice",
    "Squeezed",
    "align_to",
    "broadcast_to",
    "cdiv",
    "debug_check",
    "debug_print",
    "ds",
    "dslice",
    "empty",
    "empty_like",
    "empty_ref_like",
    "enable_debug_checks",
    "enable_poison_buffers",
    "load",
    "loop",
    "multiple_of",
    "next_power_of_2",
    "no_block_spec",
    "num_programs",
    "pallas_call",
    "pallas_export_experimental",
    "program_id",
    "reciprocal",
    "run_scoped",
    "squeezed",
    "store",
    "strides_from_shape",
    "swap",
    "when",
    *unsupported.__all__,
]

# Names JAX 0.10.2 still serves with a DeprecationWarning.
_DEPRECATED = {
    "dot": (
        "jax.experimental.pallas.dot was moved to jax.experimental.pallas.triton. Accessing it "
        "via jax.experimental.pallas is deprecated. You can use jax.numpy.dot, jax.numpy.einsum "
        "or the @ operator instead in a TPU or MGPU kernel."
    ),
    "debug_checks_enabled": (
        "jax.experimental.pallas.debug_checks_enabled is deprecated, use "
        "pl.enable_debug_checks.value instead."
    ),
}


def _debug_checks_enabled() -> bool:
    return enable_debug_checks.value


def __getattr__(name: str) -> Any:
    if name in _DEPRECATED:
        warnings.warn(_DEPRECATED[name], DeprecationWarning, stacklevel=2)
        if name == "dot":
            from modjax.experimental.pallas.helpers import dot

            return dot
        return _debug_checks_enabled
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
