"""``jax.ad``: the markers of ``vjp(...).with_refs`` (cotangents accumulated into references).

``vjp_fun.with_refs(*markers)(ct)`` takes, for each input leaf, ``GradValue()`` (give the
cotangent as a value), a reference (add the cotangent into it; the result holds
``GradRef()`` there) or ``DontWant()`` (no cotangent; the result holds ``DidntWant()``).
"""

from __future__ import annotations

import dataclasses

from modjax.tracecore.tree_util import register_dataclass

__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Ask ``vjp(...).with_refs`` for a cotangent as a value (``jax.ad.GradValue``)."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """Stand for a cotangent added into a reference (``jax.ad.GradRef``)."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Ask ``vjp(...).with_refs`` for no cotangent of an input (``jax.ad.DontWant``)."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """Stand for a cotangent that was not asked for (``jax.ad.DidntWant``)."""
