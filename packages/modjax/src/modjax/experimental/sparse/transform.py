"""``jax.experimental.sparse.transform``: ``sparsify``, not implemented in modjax yet.

``sparsify(f)`` and ``SparseTracer`` exist; calling ``sparsify`` or constructing a
``SparseTracer`` raises NotImplementedError naming it. BCOO arrays have their own
operators (``@``, ``*``, ``+``, ``-``, ``.T``, ``.sum``) without it.
"""

from modjax.experimental.sparse._unimplemented import (
    UnimplementedPrimitive,
    unimplemented_class,
    unimplemented_function,
)

sparsify = unimplemented_function("sparsify")
SparseTracer = unimplemented_class("SparseTracer", base=object)
todense_p = UnimplementedPrimitive("todense")

__all__ = ["SparseTracer", "sparsify", "todense_p"]
