"""modjax.lax.linalg: linear-algebra primitives (the counterpart of ``jax.lax.linalg``).

Each primitive acts on the trailing matrix (or vector) dimensions of its
operands; leading dimensions are batch dimensions, handled natively by XLA's
ops and jaxlib's LAPACK kernels, so ``vmap`` only moves the mapped axis to the
front. Where XLA has an op (``stablehlo.cholesky``, ``stablehlo.triangular_solve``)
it is the generic lowering; on CPU every primitive calls jaxlib's LAPACK
kernels as typed-FFI custom calls (the targets, attributes and layouts are
listed in modjax-lowering's README). Modules by topic:

* ``cholesky``: ``cholesky``, ``triangular_solve``;
* ``lu``: ``lu``, ``lu_pivots_to_permutation``;
* ``qr``: ``qr``, ``householder_product``, ``ormqr`` (and the private ``geqrf``, ``geqp3``);
* ``products``: ``symmetric_product``, ``cholesky_update``;
* ``eigh``: ``eigh``; ``svd``: ``svd``;
* ``nonsymmetric``: ``eig``, ``schur``, ``hessenberg``;
* ``tridiagonal``: ``tridiagonal``, ``tridiagonal_solve``;
* ``qdwh``: ``qdwh`` (the polar decomposition, a composite of ``qr`` and ``cholesky``).
"""

from .cholesky import cholesky, cholesky_p, triangular_solve, triangular_solve_p
from .eigh import EighImplementation, eigh, eigh_p
from .lu import lu, lu_p, lu_pivots_to_permutation, lu_pivots_to_permutation_p
from .nonsymmetric import EigImplementation, eig, eig_p, hessenberg, hessenberg_p, schur, schur_p
from .products import (
    cholesky_update,
    cholesky_update_p,
    symmetric_product,
    symmetric_product_p,
)
from .qdwh import qdwh
from .qr import (
    geqp3,
    geqp3_p,
    geqrf,
    geqrf_p,
    householder_product,
    householder_product_p,
    ormqr,
    ormqr_p,
    qr,
    qr_p,
)
from .svd import SvdAlgorithm, svd, svd_p
from .tridiagonal import tridiagonal, tridiagonal_p, tridiagonal_solve, tridiagonal_solve_p

__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "eig",
    "eig_p",
    "eigh",
    "hessenberg",
    "hessenberg_p",
    "schur",
    "schur_p",
    "tridiagonal",
    "tridiagonal_p",
    "tridiagonal_solve",
    "tridiagonal_solve_p",
    "eigh_p",
    "svd",
    "svd_p",
    "cholesky",
    "cholesky_p",
    "geqp3",
    "geqp3_p",
    "geqrf",
    "geqrf_p",
    "householder_product",
    "householder_product_p",
    "ormqr",
    "ormqr_p",
    "qr",
    "qr_p",
    "qdwh",
    "cholesky_update",
    "cholesky_update_p",
    "symmetric_product",
    "symmetric_product_p",
    "lu",
    "lu_p",
    "lu_pivots_to_permutation",
    "lu_pivots_to_permutation_p",
    "triangular_solve",
    "triangular_solve_p",
]
