"""Views of references, ``ref.at[idx]`` (JAX's ``TransformedRef``).

``ref.at[idx]`` is a :class:`TransformedRef`: a reference to the elements
``ref[idx]`` selects. Reading ``view[i]`` reads ``ref[idx][i]``; ``view[i] = v``
and ``view[i] += v`` write those elements of ``ref``; ``view.at[j]`` narrows
the view again. A view holds no value of its own: each access is a read of
``ref[idx]`` and, for a write, a functional update of it written back with
``ref[idx] = ...``, so views work wherever references do (eagerly, under jit,
grad and vmap) with no primitive of their own.
"""

from __future__ import annotations

from typing import Any

from modjax.tracecore.state import AbstractRef, ref_methods

from .state import _aval, _get_abstract_eval, ref_get, ref_set, split_index

__all__ = ["RefIndexer", "TransformedRef"]


class TransformedRef:
    """A reference seen through a sequence of indexers: ``ref.at[i].at[j]``.

    ``ref`` is the underlying reference and ``transforms`` the indices applied to
    it in order. ``shape``, ``dtype``, ``ndim`` and ``size`` are the view's.
    """

    __slots__ = ("ref", "transforms")

    def __init__(self, ref: Any, transforms: tuple):
        self.ref = ref
        self.transforms = tuple(transforms)

    @property
    def type(self) -> AbstractRef:
        """The view's type: a reference to the elements it selects."""
        ref_aval = _aval(self.ref)
        for index in self.transforms:
            indexer, operands = split_index(index)
            inner = _get_abstract_eval(ref_aval, *map(_aval, operands), indexer=indexer)
            ref_aval = ref_aval.update(inner)
        return ref_aval

    shape = property(lambda self: self.type.shape)
    dtype = property(lambda self: self.type.dtype)
    ndim = property(lambda self: self.type.ndim)
    size = property(lambda self: self.type.size)

    @property
    def at(self) -> RefIndexer:
        """Narrow the view: ``view.at[idx]``."""
        return RefIndexer(self)

    def _chain(self) -> list:
        """The values along the chain of views: ``ref[t0]``, ``ref[t0][t1]``, ..."""
        first, *rest = self.transforms
        values = [ref_get(self.ref, first)]
        for index in rest:
            values.append(values[-1][index])
        return values

    def _write_back(self, values: list, innermost: Any) -> None:
        """Write ``innermost`` (the new last value of the chain) through to ``ref``."""
        new = innermost
        for outer, index in zip(values[-2::-1], self.transforms[:0:-1], strict=True):
            new = outer.at[index].set(new)
        ref_set(self.ref, self.transforms[0], new)

    def get(self, idx: Any = None) -> Any:
        """Return ``view[idx]`` (the whole view for None)."""
        value = self._chain()[-1]
        return value if idx is None else value[idx]

    def swap(self, idx: Any, value: Any) -> Any:
        """Write ``value`` at ``view[idx]`` and return what was there."""
        values = self._chain()
        index = Ellipsis if idx is None else idx
        old = values[-1][index]
        self._write_back(values, values[-1].at[index].set(value))
        return old

    def set(self, idx: Any, value: Any) -> None:
        """Write ``value`` at ``view[idx]``."""
        self.swap(idx, value)

    def addupdate(self, idx: Any, value: Any) -> None:
        """Add ``value`` to ``view[idx]`` in place (repeated indices add each time)."""
        values = self._chain()
        index = Ellipsis if idx is None else idx
        self._write_back(values, values[-1].at[index].add(value))

    def __getitem__(self, idx: Any) -> Any:
        return self.get(idx)

    def __setitem__(self, idx: Any, value: Any) -> None:
        self.set(idx, value)

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object")
        return shape[0]

    def __repr__(self) -> str:
        return f"TransformedRef(ref={self.ref!r}, transforms={self.transforms!r})"


class RefIndexer:
    """What ``ref.at`` returns: ``ref.at[idx]`` is the view of ``ref[idx]``."""

    __slots__ = ("ref",)

    def __init__(self, ref: Any):
        self.ref = ref

    def __getitem__(self, idx: Any) -> TransformedRef:
        if isinstance(self.ref, TransformedRef):
            return TransformedRef(self.ref.ref, (*self.ref.transforms, idx))
        return TransformedRef(self.ref, (idx,))


ref_methods["at"] = RefIndexer
