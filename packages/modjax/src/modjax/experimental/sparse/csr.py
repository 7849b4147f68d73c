"""``jax.experimental.sparse.csr``: JAX's legacy 2-D CSR and CSC formats (see ``_csr_array``).

``CSR``, ``CSC``, ``csr_fromdense``, ``csr_todense``, ``csr_matvec`` and
``csr_matmat`` are implemented; JAX's ``csr_*_p`` primitives exist as names that
raise NotImplementedError: modjax declares no sparse primitives.
"""

from modjax.experimental.sparse._csr_array import (
    CSC,
    CSR,
    csr_fromdense,
    csr_matmat,
    csr_matvec,
    csr_todense,
)
from modjax.experimental.sparse._unimplemented import UnimplementedPrimitive

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
