"""Sparse linear algebra in scipy.sparse's names (the counterpart of ``jax.scipy.sparse``).

As in JAX it holds one submodule, ``linalg``: iterative solvers of ``A x = b``
for a matrix or a matrix-free linear operator ``A``. There are no sparse array
types here (JAX keeps those in ``jax.experimental.sparse``).
"""

from . import linalg

__all__ = ["linalg"]
