"""``jax.experimental.sparse.linalg``: sparse solvers, not implemented in modjax yet.

``spsolve``, ``spsolve_p`` and ``lobpcg_standard`` exist and raise NotImplementedError
naming themselves.
"""

from modjax.experimental.sparse._unimplemented import UnimplementedPrimitive, unimplemented_function

spsolve = unimplemented_function("linalg.spsolve")
lobpcg_standard = unimplemented_function("linalg.lobpcg_standard")
spsolve_p = UnimplementedPrimitive("spsolve")

__all__ = ["lobpcg_standard", "spsolve", "spsolve_p"]
