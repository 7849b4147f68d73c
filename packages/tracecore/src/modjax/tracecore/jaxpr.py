"""The jaxpr IR: typed variables, literals, equations, jaxprs and closed jaxprs.

Variables are compared by identity; names are given only when a jaxpr is
printed. Higher-order primitives keep their inner programs as params whose
values are ``ClosedJaxpr`` (or ``Jaxpr``), or tuples of them; the functions
``subjaxprs`` and ``map_subjaxprs`` find and rebuild those params, which is the
whole protocol that generic passes (printing, DCE, checking, substitution) rely on.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from .abstract import ShapedArray
from .effects import no_effects, primitive_effects
from .source_info import SourceInfo

__all__ = [
    "Var",
    "DropVar",
    "Literal",
    "Atom",
    "JaxprEqn",
    "Jaxpr",
    "ClosedJaxpr",
    "new_jaxpr_eqn",
    "subjaxprs",
    "map_subjaxprs",
    "jaxpr_equal",
]

_var_counter = itertools.count()


class Var:
    """A typed variable of a jaxpr (jax.core.Var); equal only to itself."""

    __slots__ = ("aval", "count")

    def __init__(self, aval: ShapedArray):
        self.aval = aval
        self.count = next(_var_counter)

    def __repr__(self) -> str:
        return f"Var(id={self.count}):{self.aval}"


class DropVar(Var):
    """An equation output nobody reads; printed as ``_``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"_:{self.aval}"


class Literal:
    """A constant scalar written inline in an equation (jax.core.Literal).

    ``val`` keeps the value as it was bound (a Python scalar stays a Python scalar,
    so re-evaluating a jaxpr sees exactly what the traced program saw).
    """

    __slots__ = ("val", "aval")

    def __init__(self, val: Any, aval: ShapedArray):
        self.val = val
        self.aval = aval

    def __repr__(self) -> str:
        return f"Literal({self.val!r}):{self.aval}"


Atom = Var | Literal


class JaxprEqn:
    """One equation: ``outvars = primitive[params] invars`` (jax.core.JaxprEqn).

    ``effects`` (a frozenset of ``Effect``) defaults to what the primitive's rule
    and the jaxprs in ``params`` give (``effects.primitive_effects``).
    """

    __slots__ = ("primitive", "invars", "outvars", "params", "source_info", "effects")

    def __init__(self, primitive, invars, outvars, params, source_info=None, effects=None):
        self.primitive = primitive
        self.invars: list[Atom] = list(invars)
        self.outvars: list[Var] = list(outvars)
        self.params: dict[str, Any] = params
        self.source_info: SourceInfo | None = source_info
        if effects is None:
            # Most equations: no params, no rule, no effect (checked without a call).
            if params or primitive.effects_rule is not None or primitive.effectful:
                effects = primitive_effects(primitive, params)
            else:
                effects = no_effects
        elif type(effects) is not frozenset:
            effects = frozenset(effects)
        self.effects: frozenset = effects

    def replace(self, **changes) -> JaxprEqn:
        """Return a copy with the given fields replaced.

        New params without new ``effects`` recompute the effects (a pass that
        prunes an inner jaxpr may remove the effects it held).
        """
        fields = {name: getattr(self, name) for name in self.__slots__}
        if "params" in changes and "effects" not in changes:
            fields["effects"] = None
        fields.update(changes)
        return JaxprEqn(**fields)

    def __repr__(self) -> str:
        from .pretty import pp_eqn

        return pp_eqn(self)


def new_jaxpr_eqn(primitive, invars, outvars, params, source_info=None, effects=None) -> JaxprEqn:
    """Build a JaxprEqn (jax.core.new_jaxpr_eqn)."""
    return JaxprEqn(primitive, invars, outvars, params, source_info, effects)


class Jaxpr:
    """A typed first-order program (jax.core.Jaxpr).

    ``constvars`` are bound to values supplied from outside (a ClosedJaxpr's
    consts), ``invars`` to the arguments; ``outvars`` may be Vars or Literals.
    """

    # __weakref__: transformations cache derived programs keyed weakly on the original.
    __slots__ = ("constvars", "invars", "outvars", "eqns", "debug_info", "__weakref__")

    def __init__(self, constvars, invars, outvars, eqns, debug_info=None):
        self.constvars: list[Var] = list(constvars)
        self.invars: list[Var] = list(invars)
        self.outvars: list[Atom] = list(outvars)
        self.eqns: list[JaxprEqn] = list(eqns)
        self.debug_info = debug_info

    @property
    def in_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.invars]

    @property
    def out_avals(self) -> list[ShapedArray]:
        return [v.aval for v in self.outvars]

    @property
    def effects(self) -> frozenset:
        """The union of the equations' effects (jax.core.Jaxpr.effects)."""
        found = [eqn.effects for eqn in self.eqns if eqn.effects]
        return no_effects.union(*found) if found else no_effects

    def replace(self, **changes) -> Jaxpr:
        """Return a copy with the given fields replaced."""
        fields = {name: getattr(self, name) for name in _JAXPR_FIELDS}
        fields.update(changes)
        return Jaxpr(**fields)

    def __str__(self) -> str:
        from .pretty import pp_jaxpr

        return pp_jaxpr(self)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, name_stack: bool = False) -> str:
        """Return the text of this jaxpr, optionally with each equation's source line."""
        from .pretty import pp_jaxpr

        return pp_jaxpr(self, source_info=source_info, name_stack=name_stack)


_JAXPR_FIELDS = ("constvars", "invars", "outvars", "eqns", "debug_info")


class ClosedJaxpr:
    """A Jaxpr together with the values of its constvars (jax.core.ClosedJaxpr)."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts: Sequence[Any] = ()):
        if len(jaxpr.constvars) != len(consts):
            raise ValueError(
                f"ClosedJaxpr needs {len(jaxpr.constvars)} consts for its constvars, "
                f"got {len(consts)}"
            )
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)
    effects = property(lambda self: self.jaxpr.effects)
    # JAX's ClosedJaxpr reads these through to its jaxpr too (haiku's jaxpr_info does).
    constvars = property(lambda self: self.jaxpr.constvars)
    invars = property(lambda self: self.jaxpr.invars)
    outvars = property(lambda self: self.jaxpr.outvars)
    debug_info = property(lambda self: self.jaxpr.debug_info)

    def replace(self, *, jaxpr=None, consts=None) -> ClosedJaxpr:
        """Return a copy with the jaxpr and/or consts replaced."""
        return ClosedJaxpr(
            self.jaxpr if jaxpr is None else jaxpr, self.consts if consts is None else consts
        )

    def __str__(self) -> str:
        return str(self.jaxpr)

    __repr__ = __str__

    def pretty_print(self, *, source_info: bool = False, name_stack: bool = False) -> str:
        """Return the text of this jaxpr, optionally with each equation's source line."""
        return self.jaxpr.pretty_print(source_info=source_info, name_stack=name_stack)


_JAXPR_TYPES = (ClosedJaxpr, Jaxpr)


def subjaxprs(params: dict[str, Any]) -> Iterator[ClosedJaxpr | Jaxpr]:
    """Yield every jaxpr held in an equation's params (directly or in a tuple/list)."""
    for value in params.values():
        if isinstance(value, _JAXPR_TYPES):
            yield value
        elif isinstance(value, tuple | list):
            for item in value:
                if isinstance(item, _JAXPR_TYPES):
                    yield item


def map_subjaxprs(
    params: dict[str, Any], fn: Callable[[ClosedJaxpr | Jaxpr], Any]
) -> dict[str, Any]:
    """Return params with every held jaxpr replaced by ``fn(jaxpr)``."""
    new = {}
    for key, value in params.items():
        if isinstance(value, _JAXPR_TYPES):
            value = fn(value)
        elif isinstance(value, tuple | list) and any(isinstance(v, _JAXPR_TYPES) for v in value):
            value = type(value)(fn(v) if isinstance(v, _JAXPR_TYPES) else v for v in value)
        new[key] = value
    return new


def jaxpr_equal(a: Jaxpr | ClosedJaxpr, b: Jaxpr | ClosedJaxpr) -> bool:
    """Tell whether two jaxprs are the same program up to renaming of variables.

    Compares types (shape, dtype, weak type), primitives, params (nested jaxprs
    recursively), literal values and, for closed jaxprs, the consts' values. A
    variable nothing reads equals a dropped one (``_``), as the printed text has it.
    """
    if isinstance(a, ClosedJaxpr) or isinstance(b, ClosedJaxpr):
        if not (isinstance(a, ClosedJaxpr) and isinstance(b, ClosedJaxpr)):
            return False
        return (
            len(a.consts) == len(b.consts)
            and all(_values_equal(x, y) for x, y in zip(a.consts, b.consts, strict=True))
            and jaxpr_equal(a.jaxpr, b.jaxpr)
        )
    renaming: dict[int, Var] = {}

    def bind(xs, ys):
        if len(xs) != len(ys):
            return False
        for x, y in zip(xs, ys, strict=True):
            if x.aval != y.aval:
                return False
            # A use of a variable bound to a dropped one fails in same_atom.
            renaming[id(x)] = y
        return True

    def same_atom(x, y):
        if isinstance(x, Literal) or isinstance(y, Literal):
            return (
                isinstance(x, Literal)
                and isinstance(y, Literal)
                and x.aval == y.aval
                and _values_equal(x.val, y.val)
            )
        return renaming.get(id(x)) is y

    if not (bind(a.constvars, b.constvars) and bind(a.invars, b.invars)):
        return False
    if len(a.eqns) != len(b.eqns):
        return False
    for ea, eb in zip(a.eqns, b.eqns, strict=True):
        if ea.primitive is not eb.primitive or len(ea.invars) != len(eb.invars):
            return False
        if not all(same_atom(x, y) for x, y in zip(ea.invars, eb.invars, strict=True)):
            return False
        if not _params_equal(ea.params, eb.params) or ea.effects != eb.effects:
            return False
        if not bind(ea.outvars, eb.outvars):
            return False
    return len(a.outvars) == len(b.outvars) and all(
        same_atom(x, y) for x, y in zip(a.outvars, b.outvars, strict=True)
    )


def _params_equal(pa: dict, pb: dict) -> bool:
    if pa.keys() != pb.keys():
        return False
    return all(_param_value_equal(pa[k], pb[k]) for k in pa)


def _param_value_equal(x, y) -> bool:
    if isinstance(x, _JAXPR_TYPES) or isinstance(y, _JAXPR_TYPES):
        return isinstance(y, type(x)) and jaxpr_equal(x, y)
    if isinstance(x, tuple | list) and isinstance(y, tuple | list):
        return len(x) == len(y) and all(_param_value_equal(u, v) for u, v in zip(x, y, strict=True))
    return _values_equal(x, y)


def _values_equal(x, y) -> bool:
    if isinstance(x, np.ndarray | np.generic) or isinstance(y, np.ndarray | np.generic):
        x, y = np.asarray(x), np.asarray(y)
        return x.dtype == y.dtype and x.shape == y.shape and np.array_equal(x, y, equal_nan=True)
    try:
        result = x == y
        if isinstance(result, bool):
            return result or (x != x and y != y)  # NaN literals equal themselves
        return bool(np.all(result))
    except Exception:
        return False
