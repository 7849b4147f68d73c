"""``jax.experimental.sparse.linalg``: ``spsolve`` and ``lobpcg_standard``.

``spsolve`` (``_spsolve``) solves a CSR system on the host with scipy, as JAX does on CPU;
``lobpcg_standard`` (``_lobpcg``) finds the top-k eigenpairs of a symmetric operator.
"""

from modjax.experimental.sparse._lobpcg import lobpcg_standard
from modjax.experimental.sparse._spsolve import spsolve, spsolve_p

__all__ = ["lobpcg_standard", "spsolve", "spsolve_p"]
