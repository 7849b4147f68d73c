"""``PartitionSpec``: how each dimension of an array maps onto mesh axes (``jax.sharding.P``)."""

from __future__ import annotations

__all__ = ["PartitionSpec", "P", "UNCONSTRAINED"]


class _Unconstrained:
    """The marker of a dimension whose sharding the compiler may choose."""

    _instance = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self):
        return (_Unconstrained, ())


UNCONSTRAINED = _Unconstrained()


def _canonical_entry(entry, position: int):
    if entry is None or entry is UNCONSTRAINED or isinstance(entry, str):
        return entry
    if isinstance(entry, tuple | list):
        names = tuple(entry)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(
                f"PartitionSpec: entry {position} must be None, a mesh axis name or a tuple of "
                f"them, got {entry!r}"
            )
        if len(names) == 1:
            return names[0]
        return names if names else None
    raise TypeError(
        f"PartitionSpec: entry {position} must be None, a mesh axis name or a tuple of them, "
        f"got {entry!r}"
    )


def _axis_set(value, what: str) -> frozenset:
    if not isinstance(value, set | frozenset):
        raise TypeError(
            f"{what} argument of PartitionSpec should of type `frozenset` or `set`. "
            f"Got type {value!r}"
        )
    return frozenset(value)


def _set_repr(axes: frozenset) -> str:
    return "{" + ", ".join(repr(a) for a in sorted(axes, key=str)) + "}"


class PartitionSpec:
    """How an array's dimensions are split over mesh axes (``jax.sharding.PartitionSpec``).

    Entry ``i`` is None (dimension ``i`` is not split), a mesh axis name, a
    tuple of axis names (split over their product, major to minor), or
    ``PartitionSpec.UNCONSTRAINED`` (the compiler chooses). Missing trailing
    entries mean None. ``P(('x',))`` is ``P('x')``. ``unreduced`` and ``reduced``
    (sets of mesh axis names no entry uses) say the value is a partial sum over
    those axes, or replicated over them with its cotangent unreduced, as JAX's
    do; indexing or unpacking such a spec raises JAX's ValueError (use
    ``partitions``).
    """

    __slots__ = ("_partitions", "_hash", "unreduced", "reduced")

    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions, unreduced=frozenset(), reduced=frozenset()):
        parts = tuple(_canonical_entry(p, i) for i, p in enumerate(partitions))
        unreduced = _axis_set(unreduced, "unreduced")
        reduced = _axis_set(reduced, "reduced")
        if unreduced or reduced:
            used = {
                a
                for p in parts
                if p is not None and p is not UNCONSTRAINED
                for a in ((p,) if isinstance(p, str) else p)
            }
            for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
                if used & axes:
                    raise ValueError(
                        f"partitions cannot overlap with {what} axes passed to PartitionSpec. "
                        f"Got partitions: {parts} and {what} axes: {axes}"
                    )
            if unreduced & reduced:
                raise ValueError(
                    "`unreduced` and `reduced` argument to PartitionSpec cannot overlap. "
                    f"Got unreduced: {unreduced} and reduced: {reduced}"
                )
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "unreduced", unreduced)
        object.__setattr__(self, "reduced", reduced)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("PartitionSpec is immutable")

    @property
    def partitions(self) -> tuple:
        """The entries, one per dimension (``PartitionSpec.partitions``)."""
        return self._partitions

    def __repr__(self) -> str:
        items = [repr(p) for p in self._partitions]
        if self.unreduced:
            items.append(f"unreduced={_set_repr(self.unreduced)}")
        if self.reduced:
            items.append(f"reduced={_set_repr(self.reduced)}")
        if len(items) == 1 and len(self._partitions) == 1:
            return f"P({items[0]},)"
        return f"P({', '.join(items)})"

    __str__ = __repr__

    def _check_plain(self, what: str) -> None:
        if self.unreduced or self.reduced:
            raise ValueError(
                f"Using {what} is dangerous when PartitionSpec has non-empty unreduced/reduced "
                f"set. Please use {what.replace('pspec', 'spec.partitions')}"
            )

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i):
        self._check_plain("pspec[...]")
        if isinstance(i, slice):
            return PartitionSpec(*self._partitions[i])
        return self._partitions[i]

    def __iter__(self):
        self._check_plain("*pspec")
        return iter(self._partitions)

    def __eq__(self, other) -> bool:
        # As in JAX, a spec never equals a plain tuple, and P('x') != P('x', None).
        if isinstance(other, PartitionSpec):
            return (
                self._partitions == other._partitions
                and self.unreduced == other.unreduced
                and self.reduced == other.reduced
            )
        return NotImplemented

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash((self._partitions, self.unreduced, self.reduced))
            object.__setattr__(self, "_hash", h)
        return h

    def __reduce__(self):
        if self.unreduced or self.reduced:
            return (_rebuild, (self._partitions, self.unreduced, self.reduced))
        return (PartitionSpec, self._partitions)

    def __add__(self, other) -> PartitionSpec:
        """Concatenate entries with another spec's (sets united) or a tuple's, as JAX's ``+``."""
        if isinstance(other, PartitionSpec):
            return PartitionSpec(
                *self._partitions,
                *other._partitions,
                unreduced=self.unreduced | other.unreduced,
                reduced=self.reduced | other.reduced,
            )
        return self._with_tuple(other, "__add__", lambda parts: self._partitions + parts)

    def __radd__(self, other) -> PartitionSpec:
        """``tuple + spec``: the tuple's entries first, as JAX's ``+``."""
        return self._with_tuple(other, "__radd__", lambda parts: parts + self._partitions)

    def _with_tuple(self, other, method: str, join) -> PartitionSpec:
        if not isinstance(other, tuple):
            # JAX 0.10.2 raises NotImplementedError here too.
            raise NotImplementedError(
                f"PartitionSpec {method} of a {type(other).__name__}: only a PartitionSpec "
                "or a tuple"
            )
        if self.unreduced or self.reduced:
            raise TypeError(
                f"other {other} cannot be of instance `tuple` when self {self} has unreduced in "
                f"`{method}` of PartitionSpec."
            )
        return PartitionSpec(*join(other))

    def update(self, **kwargs) -> PartitionSpec:
        """Return this spec with ``partitions``, ``unreduced`` or ``reduced`` replaced."""
        return PartitionSpec(
            *kwargs.pop("partitions", self._partitions),
            unreduced=kwargs.pop("unreduced", self.unreduced),
            reduced=kwargs.pop("reduced", self.reduced),
            **kwargs,
        )

    def index(self, value) -> int:
        """Return the position of ``value`` among the entries (``tuple.index``)."""
        return self._partitions.index(value)

    def count(self, value) -> int:
        """Return how often ``value`` is an entry (``tuple.count``)."""
        return self._partitions.count(value)

    def axes_of(self, i: int) -> tuple[str, ...]:
        """Return the mesh axes dimension ``i`` is split over (``()`` for None or past the end)."""
        entry = self._partitions[i] if i < len(self._partitions) else None
        if entry is None or entry is UNCONSTRAINED:
            return ()
        return (entry,) if isinstance(entry, str) else entry

    def stripped(self) -> PartitionSpec:
        """Return the spec without trailing None entries (how JAX prints derived specs)."""
        parts = list(self._partitions)
        while parts and parts[-1] is None:
            parts.pop()
        return PartitionSpec(*parts, unreduced=self.unreduced, reduced=self.reduced)


def _rebuild(partitions, unreduced, reduced) -> PartitionSpec:
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)


P = PartitionSpec
