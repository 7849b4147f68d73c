"""jaxlib's LAPACK kernels as XLA custom-call targets (JAX's ``lapack.prepare_lapack_call``).

jaxlib 0.10 ships typed-FFI handlers for LAPACK in ``jaxlib.cpu._lapack``
(``lapack_sgetrf_ffi``, ``lapack_zheevd_ffi``, ...). They call the LAPACK that
scipy bundles, whose function pointers ``_lapack.initialize()`` fetches from
``scipy.linalg.cython_lapack``, so scipy must be importable. The handlers must be
registered with XLA before a module that calls them compiles: the first
``lapack_target`` does both, once per process.
"""

from __future__ import annotations

import threading

import numpy as np

from ._mlir import register_lapack_targets

__all__ = ["lapack_target"]

_PREFIX = {
    np.dtype(np.float32): "s",
    np.dtype(np.float64): "d",
    np.dtype(np.complex64): "c",
    np.dtype(np.complex128): "z",
}

_lock = threading.Lock()
_registered = False


def _register() -> None:
    global _registered
    with _lock:
        if _registered:
            return
        register_lapack_targets()
        _registered = True


def lapack_target(routine: str, dtype=None) -> str:
    """Return the custom-call target of LAPACK ``routine`` for ``dtype``; register it if needed.

    ``lapack_target("getrf", float32)`` is ``"lapack_sgetrf_ffi"``; ``routine`` is
    the name without its type letter (``"syevd"``, ``"orgqr"``: pass ``"heevd"``
    or ``"ungqr"`` for complex types yourself, as LAPACK names them). With
    ``dtype=None`` the routine is one of jaxlib's own kernels, named without a
    type letter (``"tridiagonal_solve_perturbed"``).
    """
    if dtype is None:
        if not _registered:
            _register()
        return f"{routine}_ffi"
    prefix = _PREFIX.get(np.dtype(dtype))
    if prefix is None:
        raise NotImplementedError(f"LAPACK {routine} does not support dtype {np.dtype(dtype)}")
    if not _registered:
        _register()
    return f"lapack_{prefix}{routine}_ffi"
