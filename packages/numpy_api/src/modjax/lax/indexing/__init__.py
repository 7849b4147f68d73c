"""Indexing primitives: ``gather``, the ``scatter`` family, ``dynamic_slice`` and
``dynamic_update_slice``, and the public functions built on them.

Each primitive is declared with its abstract evaluation (XLA's shape rules,
errors naming the primitive), its eager ``impl`` (runtime's
``apply_primitive``), its StableHLO lowering, its JVP/transpose rules
(``modjax.autodiff``) and its batching rule (``modjax.batching``).

Out-of-bounds indices follow JAX's ``GatherScatterMode``:

* ``CLIP``: indices are clamped so that the whole slice or window is in bounds;
* ``FILL_OR_DROP``: a gather returns ``fill_value`` for slices that are not
  entirely in bounds; a scatter skips such windows;
* ``PROMISE_IN_BOUNDS``: the caller promises in-bounds indices; XLA's native
  semantics apply (gathers clamp, scatters skip).

``lax.gather`` defaults to ``PROMISE_IN_BOUNDS``, the scatters to
``FILL_OR_DROP``, as in JAX. The index vector is always the last dimension of
the indices.
"""

from .dimension_numbers import (
    GatherDimensionNumbers,
    GatherScatterMode,
    ScatterDimensionNumbers,
)
from .dynamic_slice import (
    dynamic_slice,
    dynamic_slice_p,
    dynamic_update_slice,
    dynamic_update_slice_p,
)
from .gather import gather, gather_p
from .helpers import (
    dynamic_index_in_dim,
    dynamic_slice_in_dim,
    dynamic_update_index_in_dim,
    dynamic_update_slice_in_dim,
    index_in_dim,
    index_take,
    slice_in_dim,
)
from .scatter import (
    scatter,
    scatter_add,
    scatter_add_p,
    scatter_max,
    scatter_max_p,
    scatter_min,
    scatter_min_p,
    scatter_mul,
    scatter_mul_p,
    scatter_p,
    scatter_sub,
    scatter_sub_p,
)
from .scatter_apply import scatter_apply, scatter_apply_p

__all__ = [
    "GatherDimensionNumbers",
    "GatherScatterMode",
    "ScatterDimensionNumbers",
    "dynamic_index_in_dim",
    "dynamic_slice",
    "dynamic_slice_in_dim",
    "dynamic_update_index_in_dim",
    "dynamic_update_slice",
    "dynamic_update_slice_in_dim",
    "dynamic_slice_p",
    "dynamic_update_slice_p",
    "gather",
    "gather_p",
    "index_in_dim",
    "index_take",
    "scatter",
    "scatter_add",
    "scatter_apply",
    "scatter_max",
    "scatter_min",
    "scatter_mul",
    "scatter_sub",
    "scatter_p",
    "scatter_add_p",
    "scatter_sub_p",
    "scatter_mul_p",
    "scatter_min_p",
    "scatter_max_p",
    "scatter_apply_p",
    "slice_in_dim",
]
