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

from modjax.lax.ref_views import RefIndexer
from modjax.lax.structural import unsharded_in_type
from modjax.sharding import reshard
from modjax.sharding.constraint import placed_out_sharding
from modjax.tracecore.state import AbstractRef

from . import _indexing, _ufuncs
from ._util import ARRAY_TYPES, aval, from_jax_array_protocol

# A method's name (JAX's errors name it) by the scatter it runs, where they differ.
_METHOD = {"sub": "subtract", "mul": "multiply"}


class IndexUpdateHelper:
    """What ``x.at`` returns: index it to get an :class:`IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Any):
        self.array = array

    def __getitem__(self, index: Any) -> IndexUpdateRef:
        return IndexUpdateRef(self.array, index)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


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

    def _update_sharded(self, out_sharding, op, values, *args, **kw):
        """``_update`` whose result is resharded to ``out_sharding`` when one is given.

        The scatter then runs on the operand and values gathered in their types,
        so its own sharding rule has nothing ambiguous to resolve.
        """
        values = from_jax_array_protocol(values)
        if out_sharding is None:
            return self._update(op, values, *args, **kw)
        operand = values
        if isinstance(values, ARRAY_TYPES):
            values = unsharded_in_type(values)
        ref = IndexUpdateRef(unsharded_in_type(self.array), self.index)
        out = ref._update(op, values, *args, **kw)
        return self._resharded(out, out_sharding, _METHOD.get(op, op), operand)

    def _resharded(self, out, out_sharding, method: str, values):
        """``out`` resharded to ``out_sharding``, read as JAX 0.10.2 reads it.

        ``placed_out_sharding``: JAX's errors name the method (``.set``); with
        no mesh in the operands' types, outside a mesh context, JAX raises
        eagerly for a sharding over explicit axes.
        """
        operands = [aval(self.array)]
        if isinstance(values, ARRAY_TYPES):
            operands.append(aval(values))
        out_sharding = placed_out_sharding(out_sharding, f".{method}", out, operands)
        return out if out_sharding is None else reshard(out, out_sharding)

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
        """Return ``x[idx]``; ``mode="fill"`` gives ``fill_value`` out of bounds.

        ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current
        mesh) sets the result's sharding, where cutting a dimension split over
        explicit mesh axes leaves it ambiguous.
        """
        return _indexing.rewriting_take(
            self.array,
            self.index,
            indices_are_sorted=indices_are_sorted,
            unique_indices=unique_indices,
            mode=mode,
            fill_value=fill_value,
            wrap_negative_indices=wrap_negative_indices,
            out_sharding=out_sharding,
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
        return self._update_sharded(
            out_sharding,
            "set",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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
        return self._update_sharded(
            out_sharding,
            "add",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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
        return self._update_sharded(
            out_sharding,
            "sub",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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
        return self._update_sharded(
            out_sharding,
            "mul",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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
        out = _ufuncs.divide(
            self.array,
            self._ones_times(
                values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
            ),
        )
        return self._resharded(out, out_sharding, "divide", values)

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
        out = _ufuncs.power(
            self.array,
            self._ones_times(
                values, indices_are_sorted, unique_indices, mode, wrap_negative_indices
            ),
        )
        return self._resharded(out, out_sharding, "power", values)

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
        return self._update_sharded(
            out_sharding,
            "min",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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
        return self._update_sharded(
            out_sharding,
            "max",
            values,
            indices_are_sorted,
            unique_indices,
            mode,
            wrap_negative_indices,
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


def at(x: Any) -> IndexUpdateHelper | RefIndexer:
    """Return ``x.at`` (the registered attribute of Arrays and tracers).

    For a traced reference it is the reference's indexer: ``ref.at[idx]`` is a view.
    """
    if type(aval(x)) is AbstractRef:
        return RefIndexer(x)
    return IndexUpdateHelper(x)
