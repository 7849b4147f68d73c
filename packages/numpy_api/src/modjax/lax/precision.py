"""Matmul precision: ``Precision``, dot algorithms and their canonical forms.

A contraction's ``precision=`` (``dot_general``, ``dot``, ``conv_general_dilated``, and the
``jnp`` products built on them) is, once canonical, one of: ``None``; a pair of
``Precision`` values (one per operand); a ``DotAlgorithmPreset``; or a ``DotAlgorithm``.
The algorithms fix the operands' storage types and the accumulation type, which the
lowering in ``dot.py`` honours with conversions (JAX's CPU backend ignores the algorithm
attribute itself, so the conversions are what makes the arithmetic match).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Sequence
from typing import Any, NamedTuple, Union

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.options import default_matmul_precision

__all__ = [
    "DotAlgorithm",
    "DotAlgorithmPreset",
    "DotDimensionNumbers",
    "Precision",
    "PrecisionLike",
    "canonicalize_precision",
]


class Precision(enum.Enum):
    """How hard XLA should try on a matmul's precision (jax.lax.Precision).

    ``Precision("highest")`` and the other aliases JAX accepts (``"float32"``,
    ``"high"``, ``"bfloat16_3x"``, ``"tensorfloat32"``, ``"default"``,
    ``"bfloat16"``, ``"fastest"``) name members too. CPUs ignore it.
    """

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2

    @classmethod
    def _missing_(cls, value: object) -> Precision | None:
        return _PRECISION_STRINGS.get(value)  # type: ignore[arg-type]

    def __repr__(self) -> str:
        return f"Precision.{self.name}"

    def __str__(self) -> str:
        return self.name


_PRECISION_STRINGS: dict[Any, Precision] = {
    "highest": Precision.HIGHEST,
    "float32": Precision.HIGHEST,
    "high": Precision.HIGH,
    "bfloat16_3x": Precision.HIGH,
    "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT,
    "bfloat16": Precision.DEFAULT,
    "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}


class DotAlgorithm(NamedTuple):
    """The algorithm of a dot product: operand and accumulation types (jax.lax.DotAlgorithm).

    Pass one as ``precision=`` to ``lax.dot_general``/``dot`` or the ``jnp`` products.
    ``lhs_precision_type``/``rhs_precision_type`` are the types the operands are
    rounded to, ``accumulation_type`` the type of the sums; the component counts and
    ``num_primitive_operations`` describe multi-pass emulations on accelerators.
    The CPU backend supports only the presets of ``DotAlgorithmPreset`` that it can
    honour; an explicit ``DotAlgorithm`` raises ValueError there when lowered, as in JAX.
    """

    lhs_precision_type: Any
    rhs_precision_type: Any
    accumulation_type: Any
    lhs_component_count: int = 1
    rhs_component_count: int = 1
    num_primitive_operations: int = 1
    allow_imprecise_accumulation: bool = False


_F16, _F32, _F64 = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64)


def _narrow(name: str) -> np.dtype:
    """An ml_dtypes type by name (loaded on first use: importing ml_dtypes is slow)."""
    return np.dtype(getattr(dtypes, name))


# The float8 types ANY_F8 outputs may be, in JAX's order.
_F8_OUTPUTS = (
    "float8_e4m3fn",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e4m3fnuz",
    "float8_e4m3b11fnuz",
)


class DotAlgorithmPreset(enum.Enum):
    """The named dot algorithms (jax.lax.DotAlgorithmPreset).

    Names read ``LHS_RHS_ACCUM`` (operand and accumulation types); ``_X3``/``_X6``/``_X9``
    emulate more precision with that many passes, ``FAST_ACCUM`` trades accuracy for
    speed, ``ANY_F8`` accepts any float8 operands. Pass a member, or its name as a
    string, as ``precision=``. On CPU only ``DEFAULT``, ``F16_F16_F16``,
    ``F32_F32_F32``, ``F64_F64_F64``, ``BF16_BF16_F32``, ``BF16_BF16_F32_X3`` and
    ``BF16_BF16_F32_X6`` lower; the others raise ValueError, as in JAX.
    """

    DEFAULT = enum.auto()
    ANY_F8_ANY_F8_F32 = enum.auto()
    ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
    ANY_F8_ANY_F8_ANY = enum.auto()
    ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
    F16_F16_F16 = enum.auto()
    F16_F16_F32 = enum.auto()
    BF16_BF16_BF16 = enum.auto()
    BF16_BF16_F32 = enum.auto()
    BF16_BF16_F32_X3 = enum.auto()
    BF16_BF16_F32_X6 = enum.auto()
    BF16_BF16_F32_X9 = enum.auto()
    TF32_TF32_F32 = enum.auto()
    TF32_TF32_F32_X3 = enum.auto()
    F32_F32_F32 = enum.auto()
    F64_F64_F64 = enum.auto()

    def __repr__(self) -> str:
        return f"DotAlgorithmPreset.{self.name}"

    def __str__(self) -> str:
        return self.name

    @property
    def supported_lhs_types(self) -> tuple[np.dtype, ...] | None:
        """The operand types this algorithm takes as they are; ``None``: any type."""
        name = self.name
        if name == "DEFAULT" or name.startswith("ANY_F8"):
            return None
        if name.startswith("F16_"):
            return (_F16,)
        if name in ("BF16_BF16_BF16", "BF16_BF16_F32"):
            return (
                _narrow("bfloat16"),
                _F32,
            )  # either storage type; others are rounded to bfloat16
        if name == "F64_F64_F64":
            return (_F64,)
        return (_F32,)

    @property
    def supported_rhs_types(self) -> tuple[np.dtype, ...] | None:
        """The rhs types this algorithm takes as they are (those of the lhs)."""
        return self.supported_lhs_types

    @property
    def accumulation_type(self) -> np.dtype | None:
        """The type the sums accumulate in; ``None``: the result type."""
        name = self.name
        if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
            return None
        if name == "BF16_BF16_BF16":
            return _narrow("bfloat16")
        return {"F16_F16_F16": _F16, "F64_F64_F64": _F64}.get(name, _F32)

    def supported_output_types(self, lhs_dtype, rhs_dtype) -> tuple[np.dtype, ...] | None:
        """The result types this algorithm can write directly, for these operand types."""
        name = self.name
        if name in ("ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM"):
            return (_F32, _F16, _narrow("bfloat16"), *map(_narrow, _F8_OUTPUTS))
        if name in ("F16_F16_F32", "BF16_BF16_F32"):
            narrow = _F16 if name == "F16_F16_F32" else _narrow("bfloat16")
            promoted = dtypes.promote_types(lhs_dtype, rhs_dtype)
            return (_F32, narrow) if promoted == narrow else (_F32,)
        acc = self.accumulation_type
        return None if acc is None else (acc,)


# What the CPU backend honours (it ignores the algorithm attribute; these are the
# presets whose conversions alone give the promised arithmetic).
CPU_PRESETS = frozenset(
    DotAlgorithmPreset[n]
    for n in (
        "DEFAULT",
        "F16_F16_F16",
        "F32_F32_F32",
        "F64_F64_F64",
        "BF16_BF16_F32",
        "BF16_BF16_F32_X3",
        "BF16_BF16_F32_X6",
    )
)

# The precision argument's type (jax.lax.PrecisionLike) and dot_general's dimension
# numbers ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch)).
PrecisionLike = Union[  # noqa: UP007  (a runtime alias, as JAX exports it)
    None,
    str,
    Precision,
    tuple[str, str],
    tuple[Precision, Precision],
    DotAlgorithm,
    DotAlgorithmPreset,
]
DotDimensionNumbers = tuple[
    tuple[Sequence[int], Sequence[int]], tuple[Sequence[int], Sequence[int]]
]

CanonicalPrecision = Union[  # noqa: UP007
    None, tuple[Precision, Precision], DotAlgorithm, DotAlgorithmPreset
]


def _precision_error(precision) -> ValueError:
    return ValueError(
        "Precision argument must be one of:\n"
        "- None,\n"
        f"- a string in {list(_PRECISION_STRINGS)},\n"
        "- a lax.Precision value,\n"
        "- a tuple of two lax.Precision values or strings,\n"
        "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
        "- a lax.DotAlgorithm value;\n"
        f"but got {precision}."
    )


def _default_matmul_precision():
    """The ``default_matmul_precision`` option's value (tracecore's ``options``)."""
    return default_matmul_precision.value


def canonicalize_precision(precision: PrecisionLike) -> CanonicalPrecision:
    """Return the canonical form of a ``precision=`` argument (JAX's canonicalize_precision).

    A string is a ``Precision`` alias or a ``DotAlgorithmPreset`` name; one
    ``Precision`` applies to both operands. ``None`` takes the
    ``default_matmul_precision`` option when set. Raise ValueError naming the
    accepted forms otherwise.
    """
    if precision is None:
        default = _default_matmul_precision()
        if default is None:
            return None
        try:
            return canonicalize_precision(default)
        except ValueError:
            raise ValueError(
                "jax_default_matmul_precision flag must be set to None, a value in "
                f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, "
                f"but got {default}"
            ) from None
    if isinstance(precision, str):
        if precision in _PRECISION_STRINGS:
            p = _PRECISION_STRINGS[precision]
            return (p, p)
        if precision in DotAlgorithmPreset.__members__:
            return DotAlgorithmPreset[precision]
        raise _precision_error(precision)
    if isinstance(precision, Precision):
        return (precision, precision)
    if isinstance(precision, DotAlgorithm | DotAlgorithmPreset):
        return precision
    if isinstance(precision, tuple | list) and len(precision) == 2:
        if all(isinstance(p, Precision) for p in precision):
            return (precision[0], precision[1])
        if all(isinstance(p, str) for p in precision):
            pair = [canonicalize_precision(p) for p in precision]
            if all(isinstance(p, tuple) for p in pair):
                return (pair[0][0], pair[1][0])  # type: ignore[index]
    raise _precision_error(precision)


def is_algorithm(precision) -> bool:
    """Whether a canonical precision is a dot algorithm (not a ``Precision`` pair)."""
    return isinstance(precision, DotAlgorithm | DotAlgorithmPreset)


def precision_pair(precision: CanonicalPrecision) -> tuple[Precision, Precision]:
    """The per-operand ``Precision`` of a canonical precision (DEFAULT for algorithms)."""
    if precision is None or is_algorithm(precision):
        return (Precision.DEFAULT, Precision.DEFAULT)
    return precision  # type: ignore[return-value]


def algorithm_compute_types(algorithm, lhs_dtype, rhs_dtype, out_dtype):
    """The (lhs, rhs, accumulation) types a dot with ``algorithm`` computes in.

    An explicit ``DotAlgorithm`` says them; a preset keeps an operand type it
    supports and otherwise rounds to its first supported type, and accumulates in
    the result type when it can write that type directly.
    """
    if isinstance(algorithm, DotAlgorithm):
        return (
            _maybe_dtype(algorithm.lhs_precision_type),
            _maybe_dtype(algorithm.rhs_precision_type),
            _maybe_dtype(algorithm.accumulation_type),
        )

    def pick(dtype, supported):
        if supported is None or np.dtype(dtype) in supported:
            return np.dtype(dtype)
        return supported[0]

    lhs = pick(lhs_dtype, algorithm.supported_lhs_types)
    rhs = pick(rhs_dtype, algorithm.supported_rhs_types)
    return lhs, rhs, pick(out_dtype, algorithm.supported_output_types(lhs, rhs))


def _maybe_dtype(d):
    return None if d is None else np.dtype(d)


# --- jaxpr text -------------------------------------------------------------------------


def format_precision(precision: CanonicalPrecision) -> str:
    """The jaxpr text of a canonical precision, as JAX prints it (dtypes by name)."""
    if precision is None:
        return "None"
    if isinstance(precision, DotAlgorithmPreset):
        return precision.name
    if isinstance(precision, DotAlgorithm):
        fields = ", ".join(
            f"{k}={dtypes.dtype_name(np.dtype(v)) if k.endswith('_type') else v}"
            for k, v in precision._asdict().items()
        )
        return f"DotAlgorithm({fields})"
    return f"({precision[0]!r}, {precision[1]!r})"


_CLASS_TEXT = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
_DTYPE_TEXT = re.compile(r"dtype\('(\w+)'\)")


def _parse_field(key: str, text: str):
    text = text.strip()
    if key.endswith("_type"):
        m = _CLASS_TEXT.fullmatch(text) or _DTYPE_TEXT.fullmatch(text)
        name = m.group(1) if m else text
        return _narrow(name) if name in dtypes.NARROW_DTYPE_NAMES else np.dtype(name)
    if text in ("True", "False"):
        return text == "True"
    return int(text)


def parse_precision(text: str) -> CanonicalPrecision:
    """Read back :func:`format_precision`'s text (also ``(HIGH, HIGH)`` and ``repr`` forms)."""
    text = text.strip()
    if text == "None":
        return None
    if text in DotAlgorithmPreset.__members__:
        return DotAlgorithmPreset[text]
    if text.startswith("DotAlgorithmPreset."):
        return DotAlgorithmPreset[text.split(".", 1)[1]]
    if text.startswith("DotAlgorithm("):
        body = text[len("DotAlgorithm(") : -1]
        fields = dict(part.split("=", 1) for part in _split_top(body))
        return DotAlgorithm(**{k.strip(): _parse_field(k.strip(), v) for k, v in fields.items()})
    lhs, rhs = (part.strip().removeprefix("Precision.") for part in text.strip("()").split(","))
    return (Precision[lhs], Precision[rhs])


def _split_top(text: str) -> list[str]:
    """Split on the commas outside brackets and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]
