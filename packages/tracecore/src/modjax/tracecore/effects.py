"""Effects: what an equation does besides computing its outputs (jax's ``core.Effect``).

An effect is a named kind of side effect (``Debug``, ``OrderedIO``, ...). Each
equation carries the set of its effects (``JaxprEqn.effects``), computed from its
primitive and params when it is built; a jaxpr's effects are the union of its
equations'. A higher-order primitive has, besides its own, the effects of every
jaxpr it holds, so effects propagate out of cond branches, loop bodies and calls
without a rule per primitive.

An **ordered** effect must happen in program order, also across calls of a
compiled program and across loop iterations: lowering threads a token per
ordered effect through the program. An unordered effect may be reordered but is
never removed (dead-code elimination keeps every equation that has an effect).

Effects are interned by name, so the jaxpr parser reads them back from text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "Effect",
    "effects_by_name",
    "no_effects",
    "generic_effect",
    "primitive_effects",
    "ordered_effects",
    "EffectTypeSet",
    "control_flow_allowed_effects",
]

# Every effect ever declared, by name; the jaxpr parser looks names up here.
effects_by_name: dict[str, Effect] = {}
no_effects: frozenset = frozenset()


class Effect:
    """A named side effect; ``ordered`` ones keep program order (jax's ``core.Effect``).

    ``Effect("IO", ordered=False)`` returns the one effect of that name (declared
    again with another ``ordered`` it raises ValueError), so effects compare by
    identity and print as their name. A subclass may be instantiated without a
    name, as JAX's effects are (``class MyEffect(Effect): ...; MyEffect()``): the
    effect is named after the class.
    """

    __slots__ = ("name", "ordered")
    name: str
    ordered: bool

    def __new__(cls, name: str | None = None, ordered: bool = False):
        if name is None:
            name = _name_of_subclass(cls)
        existing = effects_by_name.get(name)
        if existing is not None:
            if existing.ordered != bool(ordered):
                raise ValueError(
                    f"effect '{name}' is already declared with ordered={existing.ordered}"
                )
            return existing
        if not name.isidentifier():
            raise ValueError(f"an effect name must be an identifier, got {name!r}")
        effect = super().__new__(cls)
        effect.name = name
        effect.ordered = bool(ordered)
        effects_by_name[name] = effect
        return effect

    def __reduce__(self):
        return (Effect, (self.name, self.ordered))

    def __repr__(self) -> str:
        return self.name


def _name_of_subclass(cls: type) -> str:
    # JAX's effects are instances of Effect subclasses made with no arguments
    # (``class MyEffect(Effect): ...; my_effect = MyEffect()``): such an effect is
    # named after its class, made unique if another class already took the name.
    if cls is Effect:
        raise TypeError("Effect() needs a name: Effect('MyEffect'), or subclass Effect")
    base = cls.__name__ if cls.__name__.isidentifier() else "Effect"
    name, suffix = base, 1
    while name in effects_by_name and type(effects_by_name[name]) is not cls:
        suffix += 1
        name = f"{base}_{suffix}"
    return name


# What ``Primitive.effectful = True`` means: one unordered effect of no particular kind.
generic_effect = Effect("Effect")
_generic = frozenset((generic_effect,))

# rule(**params) -> the primitive's own effects (not those of the jaxprs it holds).
EffectsRule = Callable[..., Iterable[Effect]]


def primitive_effects(primitive, params: dict[str, Any]) -> frozenset:
    """Return the effects of an equation of ``primitive`` with ``params``.

    Its own (``primitive.effects_rule(**params)``, or the generic effect when
    ``primitive.effectful``) and those of every jaxpr it holds in its params.
    """
    rule = primitive.effects_rule
    if rule is not None:
        own = frozenset(rule(**params))
    elif primitive.effectful:
        own = _generic
    else:
        own = no_effects
    # This runs for every traced equation with params: a plain loop with type checks.
    types = _JAXPR_TYPES or _load_jaxpr_types()
    nested = None
    for value in params.values():
        kind = type(value)
        if kind in types:
            nested = [value.effects] if nested is None else [*nested, value.effects]
        elif kind is tuple or kind is list:
            for item in value:
                if type(item) in types:
                    nested = [item.effects] if nested is None else [*nested, item.effects]
    return own.union(*nested) if nested else own


_JAXPR_TYPES: frozenset = frozenset()


def _load_jaxpr_types() -> frozenset:
    global _JAXPR_TYPES
    from .jaxpr import ClosedJaxpr, Jaxpr

    _JAXPR_TYPES = frozenset((ClosedJaxpr, Jaxpr))
    return _JAXPR_TYPES


class EffectTypeSet:
    """A set of effect classes, asked whether an effect is an instance of one (JAX's)."""

    def __init__(self):
        self._effect_types: set[type] = set()

    def __repr__(self) -> str:
        return f"EffectTypeSet({self._effect_types})"

    def add_type(self, effect_type: type) -> None:
        """Add ``effect_type`` (an ``Effect`` subclass) to the set."""
        self._effect_types.add(effect_type)

    def contains(self, effect: Effect) -> bool:
        """Return whether ``effect`` is an instance of a class in the set."""
        return any(isinstance(effect, t) for t in self._effect_types)

    def filter_in(self, effects: Iterable[Effect]) -> list[Effect]:
        """Return the effects that are instances of a class in the set."""
        return [e for e in effects if self.contains(e)]

    def filter_not_in(self, effects: Iterable[Effect]) -> list[Effect]:
        """Return the effects that are instances of no class in the set."""
        return [e for e in effects if not self.contains(e)]


#: The effect classes JAX allows in cond/while/scan bodies. modjax's control flow
#: carries every effect out of its bodies, so nothing is refused for want of an
#: entry here; libraries register their effects in it as they do with JAX.
control_flow_allowed_effects = EffectTypeSet()


def ordered_effects(effects: Iterable[Effect]) -> list[Effect]:
    """Return the ordered effects among ``effects``, sorted by name (a stable token order)."""
    return sorted((e for e in effects if e.ordered), key=lambda e: e.name)
