"""Argument checks of the sparse formats where JAX only asserts.

JAX's COO, CSR, CSC and BCSR check some arguments with ``assert`` (a wrong ``ndim``,
mismatched dtypes of ``data`` and the dense operand, a non-integer index array).
modjax raises an error that is both what such a mistake is (ValueError for shapes,
TypeError for dtypes) and the AssertionError JAX raises, with a message naming the
operation and the arrays. ``static_nse`` reads a number of stored elements that
must be known when tracing.
"""

from __future__ import annotations

import operator

import numpy as np

from modjax.tracecore.core import concrete_or_error

__all__ = ["SparseDtypeError", "SparseShapeError", "check_dtype", "check_shape", "static_nse"]


class SparseShapeError(ValueError, AssertionError):
    """A sparse operation got arrays of the wrong shapes (AssertionError in JAX)."""


class SparseDtypeError(TypeError, AssertionError):
    """A sparse operation got arrays of the wrong dtypes (AssertionError in JAX)."""


def check_shape(ok: bool, message: str) -> None:
    """Raise SparseShapeError(message) unless ``ok``."""
    if not ok:
        raise SparseShapeError(message)


def check_dtype(ok: bool, message: str) -> None:
    """Raise SparseDtypeError(message) unless ``ok``."""
    if not ok:
        raise SparseDtypeError(message)


def static_nse(nse, context: str) -> int:
    """``nse`` as a Python int; a traced value raises ConcretizationTypeError naming ``context``."""
    value = concrete_or_error(nse, context)
    if not isinstance(value, int):
        value = np.asarray(value).item()
    return operator.index(value)
