"""Functional updates, ``x.at[idx].set(y)`` and friends (JAX's ``_IndexUpdateHelper``).

``x.at`` returns a helper whose ``[idx]`` returns a reference; its methods
return a new array (modjax arrays are immutable). Each method is one scatter
(``set``, ``add``, ``subtract``, ``multiply``, ``min``, ``max``, ``apply``), or a
scatter-mul of ones followed by the operation (``divide``, ``power``, as in JAX),
or a gather (``get``). ``mode`` defaults to dropping out-of-bounds updates and
clamping out-of-bounds reads.
"""

from __future__ import annotations

from typing import Any

from . import _indexing, _ufuncs
from ._util import aval


class IndexUpdateHelper:
    """What ``x.at`` returns: index it to get an :class:`IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def _no_sharding(out_sharding) -> None:
    if out_sharding is not None:
        raise NotImplementedError("x.at[...] with out_sharding is not supported yet")


class IndexUpdateRef:
    """``x.at[idx]``: the methods return ``x`` updated at ``idx`` (jax.numpy.ndarray.at)."""

    __slots__ = ("array", "index")

    def __init__(self, array: Any, index: Any):
        self.array = array
        self.index = index

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"

    def _update(self, op, values, indices_are_sorted, unique_indices, mode, wrap, **kw):
        return _indexing.scatter_update(
            self.array,
            self.index,
            values,
            op,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            wrap_negative_indices=wrap,
            **kw,
        )

    def get(
        self,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        fill_value=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x[idx]``; ``mode="fill"`` gives ``fill_value`` out of bounds."""
        _no_sharding(out_sharding)
        return _indexing.rewriting_take(
            self.array,
            self.index,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
            wrap_negative_indices=wrap_negative_indices,
        )

    def set(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with ``x[idx] = values`` (the last of repeated indices wins on CPU)."""
        _no_sharding(out_sharding)
        return self._update(
            "set", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    def add(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with ``values`` added at ``idx``; repeated indices accumulate."""
        _no_sharding(out_sharding)
        return self._update(
            "add", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    def subtract(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with ``values`` subtracted at ``idx``; repeated indices accumulate."""
        _no_sharding(out_sharding)
        return self._update(
            "sub", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    def multiply(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` multiplied by ``values`` at ``idx``; repeated indices accumulate."""
        _no_sharding(out_sharding)
        return self._update(
            "mul", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    mul = multiply

    def divide(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` divided by ``values`` at ``idx`` (true division, like ``x / y``)."""
        _no_sharding(out_sharding)
        return _ufuncs.divide(
            self.array,
            self._ones_times(
                values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
            ),
        )

    def power(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` raised to ``values`` at ``idx``; repeated exponents multiply."""
        _no_sharding(out_sharding)
        return _ufuncs.power(
            self.array,
            self._ones_times(
                values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
            ),
        )

    def _ones_times(self, values, indices_are_sorted, unique_indices, mode, wrap):
        from modjax import lax

        ones = lax.full_like(self.array, 1)
        ref = IndexUpdateRef(ones, self.index)
        return ref._update("mul", values, indices_are_sorted, unique_indices, mode, wrap)

    def min(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with ``x[idx] = minimum(x[idx], values)``."""
        _no_sharding(out_sharding)
        return self._update(
            "min", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    def max(
        self,
        values: Any,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        out_sharding=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with ``x[idx] = maximum(x[idx], values)``."""
        _no_sharding(out_sharding)
        return self._update(
            "max", values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
        )

    def apply(
        self,
        func,
        *,
        indices_are_sorted: bool = False,
        unique_indices: bool = False,
        mode=None,
        wrap_negative_indices: bool = True,
    ):
        """Return ``x`` with the scalar function ``func`` applied at ``idx`` (once per hit)."""
        return self._update(
            "apply",
            None,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
            func=func,
        )


def at(x: Any) -> IndexUpdateHelper:
    """Return ``x.at`` (the registered attribute of Arrays and tracers)."""
    aval(x)
    return IndexUpdateHelper(x)
