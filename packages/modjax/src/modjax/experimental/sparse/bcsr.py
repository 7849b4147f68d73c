"""``jax.experimental.sparse.bcsr``: the BCSR format (batched compressed rows).

Implemented (see ``_bcsr_*.py``): ``BCSR``, ``bcsr_fromdense``, ``bcsr_todense``,
``bcsr_extract``, ``bcsr_dot_general``, ``bcsr_sum_duplicates``,
``bcsr_eliminate_zeros``, ``bcsr_broadcast_in_dim`` and ``bcsr_concatenate`` (these
two through their BCOO counterparts). JAX's ``bcsr_*_p`` primitives exist as names
that raise NotImplementedError: modjax declares no sparse primitives.
"""

from modjax.experimental.sparse._bcsr_array import BCSR
from modjax.experimental.sparse._bcsr_convert import (
    bcsr_eliminate_zeros,
    bcsr_extract,
    bcsr_fromdense,
    bcsr_sum_duplicates,
    bcsr_todense,
)
from modjax.experimental.sparse._bcsr_dot import (
    bcsr_broadcast_in_dim,
    bcsr_concatenate,
    bcsr_dot_general,
)
from modjax.experimental.sparse._unimplemented import UnimplementedPrimitive

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
    "bcsr_eliminate_zeros",
    "bcsr_extract",
    "bcsr_extract_p",
    "bcsr_fromdense",
    "bcsr_fromdense_p",
    "bcsr_sum_duplicates",
    "bcsr_todense",
    "bcsr_todense_p",
]
