"""Argument checks of the sparse formats where JAX only asserts.

JAX's COO, CSR, CSC and BCSR check some arguments with ``assert`` (a wrong ``ndim``,
mismatched dtypes of ``data`` and the dense operand, a non-integer index array).
modjax raises an error that is both what such a mistake is (ValueError for shapes,
TypeError for dtypes) and the AssertionError JAX raises, with a message naming the
operation and the arrays. ``static_nse`` reads a number of stored elements that
must be known when tracing; ``fromdense_nse_context`` is what its error says for the
``nse`` of a ``*_fromdense``.
"""

from __future__ import annotations

import operator

import numpy as np

from modjax.tracecore.core import concrete_or_error

__all__ = [
    "SparseDtypeError",
    "SparseShapeError",
    "check_dtype",
    "check_shape",
    "fromdense_nse_context",
    "static_nse",
]


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


def fromdense_nse_context(function: str, method: str | None = None) -> str:
    """The error context for a traced ``nse`` of ``function`` (``bcoo_fromdense``...).

    ``method`` (``BCOO.fromdense``...) is named as what needs the Python int where given.
    """
    head = (
        f"the nse argument of {function}: the number of stored elements depends on the "
        "values of mat, so "
    )
    if method is None:
        return head + "under jit or another transformation pass nse as a Python int"
    return head + f"{method}() under jit or another transformation needs nse passed as a Python int"
