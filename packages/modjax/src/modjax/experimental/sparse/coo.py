"""``jax.experimental.sparse.coo``: the COO format, not implemented in modjax yet.

Every name exists; constructing ``COO``, calling a ``coo_*`` function or binding a
``coo_*_p`` primitive raises NotImplementedError naming it.
"""

from modjax.experimental.sparse._unimplemented import (
    UnimplementedPrimitive,
    unimplemented_class,
    unimplemented_function,
)

COO = unimplemented_class("COO")
coo_fromdense = unimplemented_function("coo_fromdense")
coo_matmat = unimplemented_function("coo_matmat")
coo_matvec = unimplemented_function("coo_matvec")
coo_todense = unimplemented_function("coo_todense")
coo_fromdense_p = UnimplementedPrimitive("coo_fromdense")
coo_matmat_p = UnimplementedPrimitive("coo_matmat")
coo_matvec_p = UnimplementedPrimitive("coo_matvec")
coo_todense_p = UnimplementedPrimitive("coo_todense")

__all__ = [
    "COO",
    "coo_fromdense",
    "coo_fromdense_p",
    "coo_matmat",
    "coo_matmat_p",
    "coo_matvec",
    "coo_matvec_p",
    "coo_todense",
    "coo_todense_p",
]
