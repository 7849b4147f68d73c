"""``jax.experimental.sparse.csr``: the CSR and CSC formats, not implemented in modjax yet.

Every name exists; constructing ``CSR``/``CSC``, calling a ``csr_*`` function or binding
a ``csr_*_p`` primitive raises NotImplementedError naming it.
"""

from modjax.experimental.sparse._unimplemented import (
    UnimplementedPrimitive,
    unimplemented_class,
    unimplemented_function,
)

CSR = unimplemented_class("CSR")
CSC = unimplemented_class("CSC")
csr_fromdense = unimplemented_function("csr_fromdense")
csr_matmat = unimplemented_function("csr_matmat")
csr_matvec = unimplemented_function("csr_matvec")
csr_todense = unimplemented_function("csr_todense")
csr_fromdense_p = UnimplementedPrimitive("csr_fromdense")
csr_matmat_p = UnimplementedPrimitive("csr_matmat")
csr_matvec_p = UnimplementedPrimitive("csr_matvec")
csr_todense_p = UnimplementedPrimitive("csr_todense")

__all__ = [
    "CSC",
    "CSR",
    "csr_fromdense",
    "csr_fromdense_p",
    "csr_matmat",
    "csr_matmat_p",
    "csr_matvec",
    "csr_matvec_p",
    "csr_todense",
    "csr_todense_p",
]
