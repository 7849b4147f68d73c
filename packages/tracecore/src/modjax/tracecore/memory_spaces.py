"""Memory spaces in types: which memory an equation's results live in (JAX 0.10.2's rule).

Once some aval is in a memory space other than the device's (``f32<host>[3]``),
every traced equation's results get one: by the primitive's own rule in
``memory_space_rules`` (``device_put`` to a memory), else the operands'
common memory space (rank-0 operands do not count; operands in different
spaces raise JAX's ValueError; no operand: the device's). An equation holding
programs (jit, cond, scan) keeps what its abstract eval made: the inner types
already say.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .abstract import MemorySpace, ShapedArray
from .jaxpr import subjaxprs

__all__ = ["memory_space_rules", "apply_memory_space_rule"]

#: ``memory_space_rules[primitive](avals, **params) -> [MemorySpace | None, ...]``: one per
#: result (None: as the abstract eval made it).
memory_space_rules: dict[Any, Callable] = {}


def _common_space(primitive, avals: Sequence[Any]) -> MemorySpace:
    previous = None
    for aval in avals:
        if not getattr(aval, "shape", ()):
            continue
        space = getattr(aval, "memory_space", None)
        if space is None:
            continue
        if previous is not None and previous.memory_space is not space:
            raise ValueError(
                f"memory_space of all inputs passed to `{primitive.name}` must be the same. "
                f"Got one operand with type: {previous.str_short()} and another operand with "
                f"type: {aval.str_short()}"
            )
        previous = aval
    return MemorySpace.Device if previous is None else previous.memory_space


def _in_space(aval, space: MemorySpace):
    if space is None or type(aval) is not ShapedArray or aval.memory_space is space:
        return aval
    return aval.update(memory_space=space)


def apply_memory_space_rule(primitive, avals: Sequence[Any], out, params: dict):
    """Return ``out`` (an aval or a list of them) in the memory space its rule gives."""
    rule = memory_space_rules.get(primitive)
    if rule is None and next(subjaxprs(params), None) is not None:
        return out
    multiple = isinstance(out, list | tuple)
    if rule is not None:
        spaces = rule(avals, **params)
    else:
        spaces = [_common_space(primitive, avals)] * (len(out) if multiple else 1)
    if multiple:
        return type(out)(_in_space(o, s) for o, s in zip(out, spaces, strict=True))
    return _in_space(out, spaces[0])
