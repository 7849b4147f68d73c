"""``jax.experimental.sparse.bcsr``: the BCSR format, not implemented in modjax yet.

Every name exists; constructing ``BCSR``, calling a ``bcsr_*`` function or binding a
``bcsr_*_p`` primitive raises NotImplementedError naming it.
"""

from modjax.experimental.sparse._unimplemented import (
    UnimplementedPrimitive,
    unimplemented_class,
    unimplemented_function,
)

BCSR = unimplemented_class("BCSR")
bcsr_broadcast_in_dim = unimplemented_function("bcsr_broadcast_in_dim")
bcsr_concatenate = unimplemented_function("bcsr_concatenate")
bcsr_dot_general = unimplemented_function("bcsr_dot_general")
bcsr_extract = unimplemented_function("bcsr_extract")
bcsr_fromdense = unimplemented_function("bcsr_fromdense")
bcsr_sum_duplicates = unimplemented_function("bcsr_sum_duplicates")
bcsr_todense = unimplemented_function("bcsr_todense")
bcsr_dot_general_p = UnimplementedPrimitive("bcsr_dot_general")
bcsr_extract_p = UnimplementedPrimitive("bcsr_extract")
bcsr_fromdense_p = UnimplementedPrimitive("bcsr_fromdense")
bcsr_todense_p = UnimplementedPrimitive("bcsr_todense")

__all__ = [
    "BCSR",
    "bcsr_broadcast_in_dim",
    "bcsr_concatenate",
    "bcsr_dot_general",
    "bcsr_dot_general_p",
    "bcsr_extract",
    "bcsr_extract_p",
    "bcsr_fromdense",
    "bcsr_fromdense_p",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "bcsr_todense_p",
]
