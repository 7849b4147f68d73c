"""``AccuracyMode`` and ``Tolerance``: the ``accuracy=`` of lax's transcendental functions.

``lax.exp(x, accuracy=...)`` (and ``exp2``, ``log``, ``log1p``, ``expm1``, ``tanh``,
``logistic``, ``sin``, ``cos``, ``tan``, ``sqrt``, ``rsqrt``, ``cbrt``) asks XLA for an
implementation of a given accuracy. The request is the equation's ``accuracy``
param, absent when not given (JAX keeps ``accuracy=None`` there and hides it when
printing; so does modjax for an explicit None), and is lowered to StableHLO's
``result_accuracy`` attribute of the op. As in JAX, any value is accepted when
tracing and one that is neither an ``AccuracyMode`` nor a ``Tolerance`` raises
NotImplementedError when lowered.
"""

from __future__ import annotations

import enum
import re
from typing import Any

from modjax.lowering import hlo

__all__ = ["AccuracyMode", "Tolerance"]


class AccuracyMode(enum.Enum):
    """Which implementation of a unary function to use (jax.lax.AccuracyMode)."""

    HIGHEST = 1
    DEFAULT = 2


class Tolerance:
    """The largest errors allowed of a unary function's result (jax.lax.Tolerance).

    At most two are meaningful together: ``atol`` and ``rtol``, or ``atol`` and
    ``ulps``. Raises ValueError when one is negative or all are zero. Unlike JAX's,
    tolerances compare and hash by value (so equal requests share compiled programs)
    and print as ``Tolerance(atol=..., rtol=..., ulps=...)``, which jaxprs parse back.
    """

    __slots__ = ("atol", "rtol", "ulps")

    def __init__(self, atol: float = 0.0, rtol: float = 0.0, ulps: int = 0):
        if atol < 0.0 or rtol < 0.0 or ulps < 0.0:
            raise ValueError("Tolerances must be non-negative.")
        if atol == 0.0 and rtol == 0.0 and ulps == 0:
            raise ValueError("At least one of atol, rtol, or ulps must be set.")
        self.atol = atol
        self.rtol = rtol
        self.ulps = ulps

    def _key(self) -> tuple:
        return (float(self.atol), float(self.rtol), int(self.ulps))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tolerance) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((Tolerance, self._key()))

    def __repr__(self) -> str:
        return f"Tolerance(atol={self.atol!r}, rtol={self.rtol!r}, ulps={self.ulps!r})"


def accuracy_attr(accuracy: Any):
    """Return the ``#stablehlo.result_accuracy`` attribute of ``accuracy`` (None for None).

    Raises NotImplementedError, as JAX does, for a value that is neither an
    ``AccuracyMode`` nor a ``Tolerance``.
    """
    if accuracy is None:
        return None
    if isinstance(accuracy, AccuracyMode):
        return hlo.ResultAccuracyAttr.get(0.0, 0.0, 0, accuracy.name)
    if isinstance(accuracy, Tolerance):
        return hlo.ResultAccuracyAttr.get(
            atol=float(accuracy.atol),
            rtol=float(accuracy.rtol),
            ulps=int(accuracy.ulps),
            mode="TOLERANCE",
        )
    raise NotImplementedError(f"Accuracy {accuracy} not supported")


def format_accuracy(accuracy: Any) -> str | None:
    """The param's text as JAX prints it (``AccuracyMode.HIGHEST``); None hides it."""
    if accuracy is None:
        return None
    return repr(accuracy) if isinstance(accuracy, Tolerance) else str(accuracy)


_TOLERANCE = re.compile(r"Tolerance\((.*)\)\s*$")


def parse_accuracy(text: str) -> Any:
    """Read back what ``format_accuracy`` prints."""
    text = text.strip()
    if text.startswith("AccuracyMode."):
        return AccuracyMode[text[len("AccuracyMode.") :]]
    match = _TOLERANCE.match(text)
    if match is None:
        raise ValueError(f"expected an AccuracyMode or a Tolerance, got {text!r}")
    fields: dict[str, Any] = {}
    for part in filter(None, (p.strip() for p in match.group(1).split(","))):
        name, _, value = part.partition("=")
        name = name.strip()
        if name not in ("atol", "rtol", "ulps"):
            raise ValueError(f"unknown Tolerance field {name!r}")
        fields[name] = int(value) if name == "ulps" else float(value)
    return Tolerance(**fields)
