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


class PartitionSpec:
    """How an array's dimensions are split over mesh axes (``jax.sharding.PartitionSpec``).

    Entry ``i`` is None (dimension ``i`` is not split), a mesh axis name, a
    tuple of axis names (split over their product, major to minor), or
    ``PartitionSpec.UNCONSTRAINED`` (the compiler chooses). Missing trailing
    entries mean None. ``P(('x',))`` is ``P('x')``.
    """

    __slots__ = ("_partitions", "_hash")

    UNCONSTRAINED = UNCONSTRAINED

    def __init__(self, *partitions):
        parts = tuple(_canonical_entry(p, i) for i, p in enumerate(partitions))
        object.__setattr__(self, "_partitions", parts)
        object.__setattr__(self, "_hash", None)

    def __setattr__(self, name, value):
        raise AttributeError("PartitionSpec is immutable")

    def __repr__(self) -> str:
        inner = ", ".join(repr(p) for p in self._partitions)
        return f"P({inner},)" if len(self._partitions) == 1 else f"P({inner})"

    __str__ = __repr__

    def __len__(self) -> int:
        return len(self._partitions)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return PartitionSpec(*self._partitions[i])
        return self._partitions[i]

    def __iter__(self):
        return iter(self._partitions)

    def __eq__(self, other) -> bool:
        # As in JAX, a spec never equals a plain tuple, and P('x') != P('x', None).
        if isinstance(other, PartitionSpec):
            return self._partitions == other._partitions
        return NotImplemented

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(self._partitions)
            object.__setattr__(self, "_hash", h)
        return h

    def __reduce__(self):
        return (PartitionSpec, self._partitions)

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
        return PartitionSpec(*parts)


P = PartitionSpec
