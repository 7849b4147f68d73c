"""``jax.ad``: the markers of ``vjp(...).with_refs`` (cotangent accumulation into references).

``GradValue()`` asks for a cotangent as a value, a ``Ref`` asks for it to be added
into that reference (the result then holds ``GradRef()``), ``DontWant()`` asks
for none (the result holds ``DidntWant()``). modjax has the markers; its ``vjp``
functions do not take them yet (see the package README).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

from modjax.tracecore.tree_util import register_dataclass


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


ad = SimpleNamespace(DontWant=DontWant, DidntWant=DidntWant, GradRef=GradRef, GradValue=GradValue)
