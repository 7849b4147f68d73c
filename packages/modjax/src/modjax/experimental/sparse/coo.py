"""``jax.experimental.sparse.coo``: JAX's legacy 2-D COO format (see ``_coo_array``).

``COO``, ``coo_fromdense``, ``coo_todense``, ``coo_matvec`` and ``coo_matmat`` are
implemented; JAX's ``coo_*_p`` primitives exist as names that raise
NotImplementedError: modjax declares no sparse primitives.
"""

from modjax.experimental.sparse._coo_array import (
    COO,
    COOInfo,
    coo_fromdense,
    coo_matmat,
    coo_matvec,
    coo_todense,
)
from modjax.experimental.sparse._unimplemented import UnimplementedPrimitive

coo_fromdense_p = UnimplementedPrimitive("coo_fromdense")
coo_matmat_p = UnimplementedPrimitive("coo_matmat")
coo_matvec_p = UnimplementedPrimitive("coo_matvec")
coo_todense_p = UnimplementedPrimitive("coo_todense")

__all__ = [
    "COO",
    "COOInfo",
    "coo_fromdense",
    "coo_fromdense_p",
    "coo_matmat",
    "coo_matmat_p",
    "coo_matvec",
    "coo_matvec_p",
    "coo_todense",
    "coo_todense_p",
]
