"""``jax.experimental.sparse.bcoo``: the BCOO format and its operations.

Implemented (see ``_bcoo_*.py``): ``BCOO``, ``bcoo_fromdense``, ``bcoo_todense``,
``bcoo_extract``, ``bcoo_update_layout``, ``bcoo_sort_indices``,
``bcoo_sum_duplicates``, ``bcoo_eliminate_zeros``, ``bcoo_transpose``,
``bcoo_reduce_sum``, ``bcoo_dot_general`` (also of two BCOO arrays),
``bcoo_dot_general_sampled``, ``bcoo_multiply_dense``, ``bcoo_multiply_sparse``,
``bcoo_reshape``, ``bcoo_squeeze``, ``bcoo_broadcast_in_dim``, ``bcoo_slice``,
``bcoo_dynamic_slice``, ``bcoo_rev``, ``bcoo_concatenate``, ``bcoo_gather`` and
``bcoo_conv_general_dilated``. JAX's ``bcoo_*_p`` primitives raise
NotImplementedError naming themselves (modjax declares no sparse primitives).
"""

from __future__ import annotations

from modjax.experimental.sparse._bcoo_array import BCOO
from modjax.experimental.sparse._bcoo_conv import bcoo_conv_general_dilated
from modjax.experimental.sparse._bcoo_convert import (
    bcoo_extract,
    bcoo_fromdense,
    bcoo_todense,
    bcoo_update_layout,
)
from modjax.experimental.sparse._bcoo_dot import (
    bcoo_dot_general,
    bcoo_dot_general_sampled,
    bcoo_multiply_dense,
)
from modjax.experimental.sparse._bcoo_gather import bcoo_gather
from modjax.experimental.sparse._bcoo_indices import (
    bcoo_eliminate_zeros,
    bcoo_sort_indices,
    bcoo_sum_duplicates,
)
from modjax.experimental.sparse._bcoo_reshape import (
    bcoo_broadcast_in_dim,
    bcoo_reshape,
    bcoo_squeeze,
)
from modjax.experimental.sparse._bcoo_shape import bcoo_reduce_sum, bcoo_transpose
from modjax.experimental.sparse._bcoo_slicing import (
    bcoo_concatenate,
    bcoo_dynamic_slice,
    bcoo_rev,
    bcoo_slice,
)
from modjax.experimental.sparse._bcoo_spdot import bcoo_multiply_sparse
from modjax.experimental.sparse._unimplemented import UnimplementedPrimitive

PRIMITIVES = (
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_extract",
    "bcoo_fromdense",
    "bcoo_sort_indices",
    "bcoo_spdot_general",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
)

bcoo_dot_general_p = UnimplementedPrimitive("bcoo_dot_general")
bcoo_dot_general_sampled_p = UnimplementedPrimitive("bcoo_dot_general_sampled")
bcoo_extract_p = UnimplementedPrimitive("bcoo_extract")
bcoo_fromdense_p = UnimplementedPrimitive("bcoo_fromdense")
bcoo_sort_indices_p = UnimplementedPrimitive("bcoo_sort_indices")
bcoo_spdot_general_p = UnimplementedPrimitive("bcoo_spdot_general")
bcoo_sum_duplicates_p = UnimplementedPrimitive("bcoo_sum_duplicates")
bcoo_todense_p = UnimplementedPrimitive("bcoo_todense")
bcoo_transpose_p = UnimplementedPrimitive("bcoo_transpose")

__all__ = [
    "BCOO",
    "bcoo_broadcast_in_dim",
    "bcoo_concatenate",
    "bcoo_conv_general_dilated",
    "bcoo_dot_general",
    "bcoo_dot_general_sampled",
    "bcoo_eliminate_zeros",
    "bcoo_extract",
    "bcoo_dynamic_slice",
    "bcoo_fromdense",
    "bcoo_gather",
    "bcoo_multiply_dense",
    "bcoo_multiply_sparse",
    "bcoo_reduce_sum",
    "bcoo_reshape",
    "bcoo_rev",
    "bcoo_slice",
    "bcoo_sort_indices",
    "bcoo_squeeze",
    "bcoo_sum_duplicates",
    "bcoo_todense",
    "bcoo_transpose",
    "bcoo_update_layout",
    *(f"{name}_p" for name in PRIMITIVES),
]
