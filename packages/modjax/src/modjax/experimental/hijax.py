"""``jax.experimental.hijax``: the names of JAX's "high-level types" interface.

JAX's hijax lets a library define abstract values of its own (``HiType``,
``MutableHiType`` with quasi-dynamic data) and primitives over them
(``HiPrimitive``) that are lowered to ordinary primitives at trace time. modjax
provides the names, so that libraries which declare such types when they are
imported (flax.nnx declares its hijax variables) import and run on their
ordinary paths:

* ``aval_method`` / ``aval_property`` work: a tracer of an abstract value that
  has one as a class attribute exposes it as a method / property;
* ``register_hitype`` makes ``jax.typeof`` use the given function for the type;
* ``control_flow_allowed_effects`` records effect classes (modjax's control flow
  refuses no effect, so it only records them);
* binding a ``HiPrimitive`` raises ``NotImplementedError``: modjax has no
  lowering of high-level types to low-level ones yet (flax.nnx's default,
  ``flax_hijax_variable=False``, never binds one).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from modjax.core import AbstractValue, ShapedArray
from modjax.interpreters.ad import Zero, instantiate_zeros, is_undefined_primal
from modjax.lax.ref_views import TransformedRef
from modjax.tracecore.abstract import register_aval_handler
from modjax.tracecore.core import Primitive, aval_method, aval_property
from modjax.tracecore.effects import control_flow_allowed_effects
from modjax.tracecore.state import AbstractRef

__all__ = [
    "AbstractRef",
    "AbstractValue",
    "AvalMutableQDD",
    "AvalQDD",
    "HiPrimitive",
    "HiPspec",
    "HiType",
    "MutableHiType",
    "ShapedArray",
    "TransformedRef",
    "VJPHiPrimitive",
    "Zero",
    "aval_method",
    "aval_property",
    "control_flow_allowed_effects",
    "instantiate_zeros",
    "is_undefined_primal",
    "register_hitype",
]

_NO_HIJAX = (
    "jax.experimental.hijax: binding the high-level primitive '{name}' is not "
    "supported by modjax (it does not lower high-level types to low-level ones yet)"
)


class QuasiDynamicData:
    """The base of the data a mutable high-level type carries beside its value."""


@dataclasses.dataclass(frozen=True)
class AvalQDD:
    """An abstract value with its (immutable) quasi-dynamic data."""

    aval: Any
    qdd: QuasiDynamicData | None
    is_high = True
    has_qdd = True


@dataclasses.dataclass
class AvalMutableQDD:
    """An abstract value with its mutable quasi-dynamic data."""

    aval: Any
    mutable_qdd: Any


class HiType(AbstractValue):
    """The base of a library's own immutable abstract value (JAX's ``HiType``).

    A subclass defines ``__hash__``, ``__eq__``, ``lo_ty``, ``lower_val`` and
    ``raise_val``; modjax does not lower such types yet.
    """

    is_high = True
    has_qdd = False

    def lo_ty(self) -> list:
        """Return the low-level abstract values this type lowers to."""
        raise NotImplementedError("subclasses of HiType define lo_ty")

    def lower_val(self, hi_val):
        """Return the low-level values of ``hi_val``."""
        raise NotImplementedError("subclasses of HiType define lower_val")

    def raise_val(self, *lo_vals):
        """Return the high-level value made of ``lo_vals``."""
        raise NotImplementedError("subclasses of HiType define raise_val")

    def to_tangent_aval(self):
        """Return the abstract value of this type's tangents."""
        raise NotImplementedError("subclasses of HiType define to_tangent_aval")


class MutableHiType(AbstractValue):
    """The base of a library's own mutable abstract value (JAX's ``MutableHiType``)."""

    is_high = True
    has_qdd = True
    mutable = True

    def lo_ty_qdd(self, state) -> list:
        """Return the low-level abstract values this type lowers to in ``state``."""
        raise NotImplementedError("subclasses of MutableHiType define lo_ty_qdd")

    def to_tangent_aval(self):
        """Return the abstract value of this type's tangents."""
        raise NotImplementedError("subclasses of MutableHiType define to_tangent_aval")


@dataclasses.dataclass(frozen=True)
class HiPspec:
    """How a high-level value is partitioned over a mesh (JAX's ``HiPspec``)."""

    spec: Any


class HiPrimitive(Primitive):
    """The base of a primitive over high-level types (JAX's ``HiPrimitive``).

    Subclasses define ``is_high``, ``abstract_eval``, ``to_lojax``, ``jvp`` and
    ``transpose``; binding one raises ``NotImplementedError`` in modjax.
    """

    def __init__(self, name: str):
        super().__init__(name)

    def is_high(self, *avals, **params) -> bool:
        """Return whether this application works on high-level types."""
        raise NotImplementedError(f"the hijax primitive '{self.name}' defines no is_high")

    def to_lojax(self, *args, **params):
        """Return the result computed with low-level primitives."""
        raise NotImplementedError(f"the hijax primitive '{self.name}' defines no to_lojax")

    def jvp(self, primals, tangents, **params):
        """Return the primal and tangent outputs."""
        raise NotImplementedError(f"the hijax primitive '{self.name}' defines no jvp")

    def transpose(self, *args, **params):
        """Return the cotangents of the linear inputs."""
        raise NotImplementedError(f"the hijax primitive '{self.name}' defines no transpose")

    def bind(self, *args, **params):
        """Refuse: modjax cannot trace high-level primitives yet."""
        raise NotImplementedError(_NO_HIJAX.format(name=self.name))


class VJPHiPrimitive(HiPrimitive):
    """A high-level primitive differentiated by its ``vjp_fwd``/``vjp_bwd`` (JAX's)."""


def register_hitype(val_cls: type, typeof_fn) -> None:
    """Make ``jax.typeof(x)`` return ``typeof_fn(x)`` for instances of ``val_cls``."""
    register_aval_handler(val_cls, typeof_fn)
