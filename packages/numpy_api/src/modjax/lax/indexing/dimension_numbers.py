"""Gather and scatter dimension numbers, ``GatherScatterMode``, and their jaxpr text.

The dimension numbers are NamedTuples of int tuples (hashable params); each
prints as ``GatherDimensionNumbers(offset_dims=(0,), ...)`` and parses back,
so jaxprs holding gathers and scatters round-trip through the text format.
"""

from __future__ import annotations

import enum
import operator
import re
from typing import NamedTuple

from modjax.tracecore.core import Primitive
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer


class GatherDimensionNumbers(NamedTuple):
    """How a gather maps indices to operand slices (jax.lax.GatherDimensionNumbers).

    ``offset_dims``: the output dimensions that index into a slice;
    ``collapsed_slice_dims``: operand dimensions of size-1 slices that the output
    drops; ``start_index_map``: the operand dimension each component of the index
    vector (the last dimension of the indices) starts; ``operand_batching_dims``
    and ``start_indices_batching_dims``: paired batch dimensions of the operand
    and the indices.
    """

    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


class ScatterDimensionNumbers(NamedTuple):
    """How a scatter maps indices and updates to operand windows (jax.lax.ScatterDimensionNumbers).

    ``update_window_dims``: the dimensions of the updates that lie in a window;
    ``inserted_window_dims``: operand dimensions of size-1 windows absent from
    the updates; ``scatter_dims_to_operand_dims``: the operand dimension each
    component of the index vector addresses; ``operand_batching_dims`` and
    ``scatter_indices_batching_dims``: paired batch dimensions.
    """

    update_window_dims: tuple[int, ...]
    inserted_window_dims: tuple[int, ...]
    scatter_dims_to_operand_dims: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    scatter_indices_batching_dims: tuple[int, ...] = ()


class GatherScatterMode(enum.Enum):
    """What gathers and scatters do with out-of-bounds indices (jax.lax.GatherScatterMode)."""

    CLIP = 1
    FILL_OR_DROP = 2
    PROMISE_IN_BOUNDS = 3

    def __str__(self) -> str:
        return f"GatherScatterMode.{self.name}"

    @staticmethod
    def from_any(s: str | GatherScatterMode | None) -> GatherScatterMode:
        """Return the mode named by ``s``: a mode, ``"clip"``, ``"fill"``/``"drop"``/None,
        or ``"promise_in_bounds"``."""
        if isinstance(s, GatherScatterMode):
            return s
        if s == "clip":
            return GatherScatterMode.CLIP
        if s is None or s in ("fill", "drop"):
            return GatherScatterMode.FILL_OR_DROP
        if s == "promise_in_bounds":
            return GatherScatterMode.PROMISE_IN_BOUNDS
        if s == "one_hot":
            raise NotImplementedError("GatherScatterMode.ONE_HOT is not supported yet")
        raise ValueError(f'Unknown gather mode "{s}"')


CLIP = GatherScatterMode.CLIP
FILL_OR_DROP = GatherScatterMode.FILL_OR_DROP
PROMISE_IN_BOUNDS = GatherScatterMode.PROMISE_IN_BOUNDS


def _ints(values, what: str) -> tuple[int, ...]:
    try:
        return tuple(operator.index(v) for v in values)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of integers, got {values!r}") from None


def _gather_dnums(dn) -> GatherDimensionNumbers:
    if not isinstance(dn, GatherDimensionNumbers):
        raise TypeError(
            f"gather dimension_numbers must be a GatherDimensionNumbers, got {type(dn).__name__}"
        )
    return GatherDimensionNumbers(
        *(_ints(v, f"gather {f}") for f, v in zip(dn._fields, dn, strict=False))
    )


def _scatter_dnums(dn) -> ScatterDimensionNumbers:
    if not isinstance(dn, ScatterDimensionNumbers):
        raise TypeError(
            f"scatter dimension_numbers must be a ScatterDimensionNumbers, got {type(dn).__name__}"
        )
    return ScatterDimensionNumbers(
        *(_ints(v, f"scatter {f}") for f, v in zip(dn._fields, dn, strict=False))
    )


# Param text: ``GatherDimensionNumbers(offset_dims=(1,), ...)`` and ``GatherScatterMode.CLIP``.


def _format_dnums(dn) -> str:
    fields = ", ".join(
        f"{name}=({', '.join(map(str, v))}{',' if len(v) == 1 else ''})"
        for name, v in zip(dn._fields, dn, strict=False)
    )
    return f"{type(dn).__name__}({fields})"


_FIELD = re.compile(r"(\w+)=\(([^)]*)\)")


def _dnums_parser(cls):
    def parse(text: str):
        text = text.strip()
        if not text.startswith(cls.__name__ + "("):
            raise ValueError(f"expected {cls.__name__}(...), got {text!r}")
        fields = {
            name: tuple(int(v) for v in body.split(",") if v.strip())
            for name, body in _FIELD.findall(text)
        }
        return cls(**fields)

    return parse


def _parse_mode(text: str) -> GatherScatterMode:
    return GatherScatterMode[text.strip().rsplit(".", 1)[-1]]


def _register_param_text(prim: Primitive, dnums_cls) -> None:
    register_param_printer(prim, "dimension_numbers", _format_dnums)
    register_param_parser(prim, "dimension_numbers", _dnums_parser(dnums_cls))
    register_param_printer(prim, "mode", str)
    register_param_parser(prim, "mode", _parse_mode)


def _gather_to_scatter_dnums(dn: GatherDimensionNumbers) -> ScatterDimensionNumbers:
    return ScatterDimensionNumbers(
        update_window_dims=dn.offset_dims,
        inserted_window_dims=dn.collapsed_slice_dims,
        scatter_dims_to_operand_dims=dn.start_index_map,
        operand_batching_dims=dn.operand_batching_dims,
        scatter_indices_batching_dims=dn.start_indices_batching_dims,
    )


def _scatter_to_gather_dnums(dn: ScatterDimensionNumbers) -> GatherDimensionNumbers:
    return GatherDimensionNumbers(
        offset_dims=dn.update_window_dims,
        collapsed_slice_dims=dn.inserted_window_dims,
        start_index_map=dn.scatter_dims_to_operand_dims,
        operand_batching_dims=dn.operand_batching_dims,
        start_indices_batching_dims=dn.scatter_indices_batching_dims,
    )
