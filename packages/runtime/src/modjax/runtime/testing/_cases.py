"""The inputs a check runs on: the caller's cases, or a default drawn from what the
primitive's abstract evaluation accepts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np
from hypothesis import strategies as st

from modjax.tracecore.abstract import ShapedArray

__all__ = ["Case", "as_case", "case_strategy", "default_cases"]


class Case(NamedTuple):
    """One input of a primitive: its operands and its params."""

    args: tuple
    params: dict


def as_case(value: Any) -> Case:
    """Return ``value`` (a Case or an ``(args, params)`` pair) as a Case."""
    if isinstance(value, Case):
        return value
    args, params = value
    return Case(tuple(args), dict(params))


def case_strategy(prim, cases) -> st.SearchStrategy:
    """Return a strategy of Cases: ``cases`` is None (the default), a strategy or a list."""
    if cases is None:
        return default_cases(prim)
    if isinstance(cases, st.SearchStrategy):
        return cases.map(as_case)
    cases = [as_case(c) for c in cases]
    if not cases:
        raise ValueError(f"check_primitive({prim.name}): the list of cases is empty")
    return st.sampled_from(cases)


# What the default strategy tries: operands of one dtype and one shape, no params.
_PROBE_DTYPES = tuple(map(np.dtype, ("float32", "int32", "uint32", "bool", "complex64")))
_PROBE_SHAPES = ((), (3,), (2, 3))
_PROBE_ARITIES = (1, 2, 3)


def _accepts(prim, arity: int, dtype: np.dtype, shape: tuple) -> bool:
    aval = ShapedArray(shape, dtype)
    try:
        prim.abstract_eval(*[aval] * arity)
    except (TypeError, ValueError, NotImplementedError):
        return False
    return True


def _values(rng: np.random.RandomState, shape: Sequence[int], dtype: np.dtype) -> np.ndarray:
    """Values of ``dtype``: floats in [-2, 2], small integers, random booleans."""
    if dtype.kind == "b":
        return rng.rand(*shape) > 0.5
    if dtype.kind in "iu":
        low = 0 if dtype.kind == "u" else -5
        return np.asarray(rng.randint(low, 6, shape), dtype)
    out = rng.uniform(-2.0, 2.0, shape)
    if dtype.kind == "c":
        out = out + 1j * rng.uniform(-2.0, 2.0, shape)
    return np.asarray(out, dtype)


def default_cases(prim) -> st.SearchStrategy:
    """Return the default strategy of ``prim``'s Cases: elementwise-like operands, no params.

    Every (arity 1-3, dtype, shape) whose avals ``prim``'s abstract evaluation
    accepts without params is a candidate; all operands of a case share one dtype
    and one shape. Raise ValueError when there is none (``prim`` needs params or
    operands of different kinds: pass ``cases=``).
    """
    accepted = [
        (arity, dtype, shape)
        for arity in _PROBE_ARITIES
        for dtype in _PROBE_DTYPES
        for shape in _PROBE_SHAPES
        if _accepts(prim, arity, dtype, shape)
    ]
    if not accepted:
        raise ValueError(
            f"check_primitive({prim.name}): no default cases, since its abstract evaluation "
            "accepts no 1-3 operands of one dtype and shape without params; pass cases= "
            "(a hypothesis strategy or a list of (args, params))"
        )

    def build(choice, seed):
        arity, dtype, shape = choice
        rng = np.random.RandomState(seed)
        return Case(tuple(_values(rng, shape, dtype) for _ in range(arity)), {})

    return st.builds(build, st.sampled_from(accepted), st.integers(0, 2**16))
