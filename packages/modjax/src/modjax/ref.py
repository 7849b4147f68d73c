"""Mutable array references (the counterpart of ``jax.ref``).

``Ref`` is the type (``isinstance`` is True for concrete references and for
traced ones), ``AbstractRef`` its abstract value (``Ref{f32[3]}``); ``new_ref``,
``empty_ref``, ``freeze`` and ``free_ref`` make and end references; ``get``,
``set``, ``swap`` and ``addupdate`` are the functional forms of ``ref[idx]``,
``ref[idx] = v``, and ``ref[idx] += v`` done in place.
"""

from modjax.lax.state import empty_ref, free_ref, freeze, new_ref
from modjax.lax.state import ref_addupdate as addupdate
from modjax.lax.state import ref_get as get
from modjax.lax.state import ref_set as set  # noqa: A004  (jax.ref.set)
from modjax.lax.state import ref_swap as swap
from modjax.tracecore.state import AbstractRef, Ref

__all__ = [
    "AbstractRef",
    "Ref",
    "addupdate",
    "empty_ref",
    "free_ref",
    "freeze",
    "get",
    "new_ref",
    "set",
    "swap",
]
