"""Dtypes, canonicalization and JAX's type promotion (the counterpart of ``jax.dtypes``).

Conventions:

* The ML dtypes (``bfloat16``, the float8/float6/float4 family, ``int4``,
  ``uint4``, ``int2``, ``uint2``, ``int1``, ``uint1``) are exposed as **numpy
  scalar types** (the ``ml_dtypes`` classes), like ``np.float32``; pass them to
  ``np.dtype`` for a dtype. ``float0`` is exposed as an **np.dtype** (it has no
  scalar type of its own), as in JAX.
* "Canonical" means what the current ``enable_x64`` setting allows: with x64
  off, 64-bit types map to their 32-bit counterparts.
* Python scalars (``int``, ``float``, ``complex`` values, and those types when
  passed as dtype-likes to promotion) are *weakly typed*: they adopt the dtype
  of the array they meet instead of widening it. Python ``bool`` is *not* weak,
  as in JAX (bool is the bottom of the lattice, so it never widens anything).

Promotion follows JAX's lattice: a DAG of "may promote to" edges between the
dtypes and three weak kinds (``i*``, ``f*``, ``c*``); the result of promoting a
set of types is their least upper bound. The edges are the small tables below;
upper-bound sets and joins are derived from them and cached.
"""

from __future__ import annotations

import contextlib
import functools
import re
import threading
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.tracecore import source_info
from modjax.tracecore.config import enable_x64, numpy_dtype_promotion

# The narrow dtypes (bfloat16, ...) are left out: a star import would load them.
__all__ = [
    "ExtendedDType",
    "PrimalTangentDType",
    "primal_tangent_dtype",
    "TypePromotionError",
    "canonicalize_dtype",
    "check_and_canonicalize_user_dtype",
    "check_int_range",
    "coerce_python_scalar",
    "default_complex_dtype",
    "default_float_dtype",
    "default_int_dtype",
    "default_uint_dtype",
    "dtype",
    "dtype_from_short_name",
    "register_extended_dtype_name",
    "dtype_name",
    "extended",
    "finfo",
    "float0",
    "iinfo",
    "NARROW_DTYPE_NAMES",
    "load_narrow_dtypes",
    "narrow_dtypes_loaded",
    "np_dtype",
    "on_narrow_dtypes_loaded",
    "is_weakly_typed",
    "isdtype",
    "issubdtype",
    "itemsize_bits",
    "promote_types",
    "python_scalar_dtype",
    "result_type",
    "scalar_type_of",
    "short_dtype_name",
    "supported_dtypes",
]

# --------------------------------------------------------------------------
# The dtypes
# --------------------------------------------------------------------------

# The narrow dtypes of ml_dtypes, as JAX exposes them. Importing ml_dtypes costs about
# half a second (it registers every type and ufunc loop with numpy), which most
# programs never need, so they load on first use: naming one here, in
# ``modjax.numpy`` or ``modjax.dtypes`` (module ``__getattr__``), a dtype string numpy
# does not know yet (``"bfloat16"``), or an ml_dtypes value reaching any function of
# this module loads them and extends every table below (``load_narrow_dtypes``).
NARROW_DTYPE_NAMES = (
    "bfloat16",
    "float8_e3m4",
    "float8_e4m3",
    "float8_e4m3b11fnuz",
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float8_e8m0fnu",
    "float6_e2m3fn",
    "float6_e3m2fn",
    "float4_e2m1fn",
    "int4",
    "uint4",
    "int2",
    "uint2",
    "int1",  # int1/uint1 arrived in a later ml_dtypes than the rest; None when missing
    "uint1",
)
_NARROW_SHORT_NAMES = frozenset(
    {"bf16", "i4", "u4", "i2", "u2", "i1", "u1"}
    | {"f" + name[len("float") :] for name in NARROW_DTYPE_NAMES if name.startswith("float")}
)

# The tangent dtype of integer and boolean values: zero bytes per element.
float0 = np.dtype([("float0", np.void, 0)])


class extended(np.generic):  # lowercase: JAX's public name
    """Abstract scalar type of extended (non-numpy) dtypes, like ``jax.dtypes.extended``.

    ``issubdtype(d, extended)`` is true exactly for :class:`ExtendedDType` instances.
    """


class ExtendedDType:
    """Base class of dtypes numpy does not know (PRNG keys, ...), like JAX's ``ExtendedDType``.

    Subclasses set ``type`` (a subclass of :class:`extended`) and ``name``.
    """

    type: type = extended
    name: str = "extended"


class primal_tangent_dtype_scalar(extended):  # noqa: N801 - JAX's scalar type name
    """Abstract scalar type of :class:`PrimalTangentDType` dtypes."""


class PrimalTangentDType(ExtendedDType):
    """A dtype stored as ``primal_dtype`` whose tangents are ``tangent_dtype`` (JAX's class).

    Made by :func:`primal_tangent_dtype`; its values are the primal dtype's, held in an
    extended dtype so that differentiation gives them tangents of another dtype
    (an int8-coded value with float32 tangents, say).
    """

    type = primal_tangent_dtype_scalar

    def __init__(self, primal_dtype: np.dtype, tangent_dtype: np.dtype, name: str):
        self.primal_dtype = primal_dtype
        self.tangent_dtype = tangent_dtype
        self.name = name

    @property
    def itemsize(self) -> int:
        """Bytes per element (the primal dtype's)."""
        return self.primal_dtype.itemsize

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return type(other) is PrimalTangentDType and (
            self.primal_dtype,
            self.tangent_dtype,
            self.name,
        ) == (other.primal_dtype, other.tangent_dtype, other.name)

    def __hash__(self) -> int:
        return hash((PrimalTangentDType, self.primal_dtype, self.tangent_dtype, self.name))


def primal_tangent_dtype(primal_dtype: Any, tangent_dtype: Any, name: str | None = None):
    """Return an extended dtype of ``primal_dtype`` values with ``tangent_dtype`` tangents.

    The counterpart of jax.experimental.primal_tangent_dtype; named
    ``PrimalTangentDType{i8/f32}`` unless ``name`` is given. Convert to and from it
    with ``lax.convert_element_type``.
    """
    primal, tangent = np_dtype(primal_dtype), np_dtype(tangent_dtype)
    if name is None:
        name = f"PrimalTangentDType{{{short_dtype_name(primal)}/{short_dtype_name(tangent)}}}"
    else:  # the name alone does not say what it holds: remember it, for jaxpr text
        _NAMED_PRIMAL_TANGENT[name] = PrimalTangentDType(primal, tangent, name)
    return PrimalTangentDType(primal, tangent, name)


# Primal-tangent dtypes made with a name of their own, by name (the latest of a name).
_NAMED_PRIMAL_TANGENT: dict[str, PrimalTangentDType] = {}
_DEFAULT_PRIMAL_TANGENT = re.compile(r"PrimalTangentDType\{([a-z0-9_]+)/([a-z0-9_]+)\}")


def _primal_tangent_dtype_named(name: str) -> PrimalTangentDType | None:
    """Return the primal-tangent dtype printed as ``name``, or None if none is."""
    match = _DEFAULT_PRIMAL_TANGENT.fullmatch(name)
    if match is not None:
        primal, tangent = map(dtype_from_short_name, match.groups())
        return primal_tangent_dtype(primal, tangent)
    return _NAMED_PRIMAL_TANGENT.get(name)


class TypePromotionError(ValueError):
    """Raised when dtypes have no implicit promotion (``jax.dtypes.TypePromotionError``)."""


def _present(*types: Any) -> list[np.dtype]:
    return [np.dtype(t) for t in types if t is not None]


_BOOL = np.dtype(np.bool_)
_COMPLEX = _present(np.complex64, np.complex128)


def np_dtype(x: Any) -> np.dtype:
    """Return ``np.dtype(x)``, loading the narrow dtypes first where ``x`` names or is one.

    modjax's counterpart of calling ``np.dtype`` in a process where JAX imported
    ml_dtypes eagerly.
    Every function here that takes a dtype-like goes through this, so a name numpy
    does not know yet (``"bfloat16"``) or a value made with ml_dtypes directly
    makes the narrow dtypes appear in every table at that moment.
    """
    try:
        dt = x if isinstance(x, np.dtype) else np.dtype(x)
    except TypeError:
        if _narrow_loaded or not isinstance(x, str):
            raise
        load_narrow_dtypes()
        return np.dtype(x)
    if not _narrow_loaded and dt.kind == "V" and dt.type.__module__ == "ml_dtypes":
        load_narrow_dtypes()
    return dt


def supported_dtypes() -> tuple[np.dtype, ...]:
    """Return every dtype modjax arrays may have (JAX's internal ``_jax_types`` plus float0)."""
    return _ALL_DTYPES


# --------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------

# The jaxpr printer abbreviates dtype names by these prefix rewrites (first
# match wins, so "bfloat" must precede "float" and "uint" precede "int").
_SHORT_PREFIXES = (("bfloat", "bf"), ("float", "f"), ("complex", "c"), ("uint", "u"), ("int", "i"))


def _long_name(dt: np.dtype) -> str:
    return "float0" if dt == float0 else dt.name


def _abbreviate(name: str) -> str:
    if name == "float0":  # would otherwise read as a 0-bit float "f0"
        return name
    for prefix, short in _SHORT_PREFIXES:
        if name.startswith(prefix):
            return short + name[len(prefix) :]
    return name


def dtype_name(dtype: Any) -> str:
    """Return the printed name of a dtype: ``'float32'``, ``'float0'`` (JAX's ``dtype.name``)."""
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    dt = np_dtype(dtype)
    return _NAME.get(dt) or dt.name


def short_dtype_name(dtype: Any) -> str:
    """Return the jaxpr abbreviation of a dtype: ``'f32'``, ``'bf16'``, ``'i4'``, ``'float0'``.

    Counterpart of the names in JAX's ``ShapedArray.str_short(short_dtypes=True)``.
    """
    if isinstance(dtype, ExtendedDType):
        return dtype.name
    dt = np_dtype(dtype)
    try:
        return _SHORT_NAME[dt]
    except KeyError:
        raise ValueError(f"{dt} is not a dtype modjax supports") from None


# Extended dtypes by the family of their names (``key`` for ``key<fry>``): a function of
# the text between the angle brackets giving the dtype. See register_extended_dtype_name.
_EXTENDED_FAMILIES: dict[str, Callable[[str], ExtendedDType]] = {}


def register_extended_dtype_name(family: str, from_param: Callable[[str], ExtendedDType]) -> None:
    """Make ``family<param>`` a dtype name that jaxpr text may use (read by ``from_param``).

    The package defining an extended dtype registers its family, so that
    :func:`dtype_from_short_name` (and so ``parse_jaxpr``) reads the names its
    dtypes print as: modjax.random registers ``key`` (``key<fry>``). ``from_param``
    raises ValueError for a parameter it does not know.
    """
    _EXTENDED_FAMILIES[family] = from_param


def dtype_from_short_name(name: str) -> Any:
    """Return the dtype whose jaxpr abbreviation is ``name`` (inverse of :func:`short_dtype_name`).

    Extended dtype names (``key<fry>``) are read by their family's registered
    function. JAX has no public counterpart; its jaxpr text is not parsed back.
    """
    try:
        return _FROM_SHORT_NAME[name]
    except (KeyError, TypeError):
        if not _narrow_loaded and name in _NARROW_SHORT_NAMES:
            load_narrow_dtypes()
            return _FROM_SHORT_NAME[name]
        family, sep, rest = name.partition("<") if isinstance(name, str) else ("", "", "")
        if sep and rest.endswith(">") and family in _EXTENDED_FAMILIES:
            return _EXTENDED_FAMILIES[family](rest[:-1])
        found = _primal_tangent_dtype_named(name) if isinstance(name, str) else None
        if found is not None:
            return found
        raise ValueError(f"unknown short dtype name {name!r}") from None


def itemsize_bits(dtype: Any) -> int:
    """Return the bits one element occupies, 4 for int4 (``jax.dtypes.itemsize_bits``)."""
    dt = np_dtype(dtype)
    if dt == float0:
        raise ValueError(f"float0 has no item size: dtype={dt}")
    return _SUB_BYTE_BITS.get(dt, 8 * dt.itemsize)


# --------------------------------------------------------------------------
# Canonicalization (x64)
# --------------------------------------------------------------------------

# What each 64-bit type becomes when x64 is off.
_TO_32_BIT = {
    np.dtype(np.int64): np.dtype(np.int32),
    np.dtype(np.uint64): np.dtype(np.uint32),
    np.dtype(np.float64): np.dtype(np.float32),
    np.dtype(np.complex128): np.dtype(np.complex64),
}

# canonicalize_dtype runs once per traced equation, so its results are memoized
# per dtype-like, in one table per x64 setting (indexed by the bool itself).
_CANONICAL_CACHE: tuple[dict[Any, np.dtype], dict[Any, np.dtype]] = ({}, {})


def canonicalize_dtype(dtype: Any, allow_extended_dtype: bool = False) -> np.dtype:
    """Return the dtype ``dtype`` becomes under the x64 setting (``jax.dtypes.canonicalize_dtype``).

    With x64 off: int64→int32, uint64→uint32, float64→float32,
    complex128→complex64; other dtypes (and everything with x64 on) are
    unchanged. Extended dtypes pass through only if ``allow_extended_dtype``.
    """
    try:
        return _CANONICAL_CACHE[enable_x64.value][dtype]
    except (KeyError, TypeError):  # TypeError: an unhashable dtype-like
        return _canonicalize_uncached(dtype, allow_extended_dtype)


def _canonicalize_uncached(dtype: Any, allow_extended_dtype: bool) -> Any:
    if isinstance(dtype, ExtendedDType):
        if allow_extended_dtype:
            return dtype
        raise ValueError(
            f"canonicalize_dtype got the extended dtype {dtype.name}; "
            "pass allow_extended_dtype=True"
        )
    x64 = enable_x64.value
    dt = np_dtype(dtype)
    result = dt if x64 else _TO_32_BIT.get(dt, dt)
    with contextlib.suppress(TypeError):  # unhashable dtype specs are not memoized
        _CANONICAL_CACHE[x64][dtype] = result
    return result


def check_and_canonicalize_user_dtype(dtype: Any, fun_name: str | None = None) -> Any:
    """Return the canonical form of a dtype a user asked for (JAX's same-named function).

    The Python types ``bool``, ``int``, ``float`` and ``complex`` give the default
    dtypes silently. An explicit 64-bit dtype with x64 off is truncated with
    JAX's UserWarning (``Explicitly requested dtype int64 requested in zeros is
    not available, and will be truncated to dtype int32. ...``), pointing at the
    user's line; ``fun_name`` names the function in it. A dtype modjax arrays
    cannot have raises TypeError, an array passed as a dtype ValueError.
    """
    if dtype is None:
        raise ValueError("dtype must be specified.")
    if isinstance(dtype, ExtendedDType):
        return dtype
    if isinstance(dtype, type) and dtype in _PYTHON_SCALAR_DTYPES:
        return canonicalize_dtype(_PYTHON_SCALAR_DTYPES[dtype])
    if not isinstance(dtype, (type, str, np.dtype)) and hasattr(dtype, "aval"):
        raise ValueError(
            "Passing an array as a dtype argument is no longer supported; "
            "instead of dtype=arr use dtype=arr.dtype."
        )
    dt = np_dtype(dtype)
    if dt not in _SUPPORTED:
        where = f" in {fun_name}" if fun_name else ""
        raise TypeError(f"modjax only supports number and bool dtypes, got dtype {dtype}{where}")
    canonical = canonicalize_dtype(dt)
    if canonical != dt:
        where = f" requested in {fun_name}" if fun_name else ""
        warnings.warn(
            f"Explicitly requested dtype {dt}{where} is not available, and will be "
            f"truncated to dtype {canonical.name}. To enable more dtypes, set the "
            "jax_enable_x64 configuration option or the MODJAX_ENABLE_X64 shell "
            "environment variable. See https://github.com/jax-ml/jax#current-gotchas "
            "for more.",
            UserWarning,
            stacklevel=source_info.user_stacklevel(),
        )
    return canonical


def default_int_dtype() -> np.dtype:
    """Return int64 with x64 on, else int32 (JAX's ``dtypes.default_int_dtype``)."""
    return canonicalize_dtype(np.int64)


def default_uint_dtype() -> np.dtype:
    """Return uint64 with x64 on, else uint32 (JAX's ``dtypes.default_uint_dtype``)."""
    return canonicalize_dtype(np.uint64)


def default_float_dtype() -> np.dtype:
    """Return float64 with x64 on, else float32 (JAX's ``dtypes.default_float_dtype``)."""
    return canonicalize_dtype(np.float64)


def default_complex_dtype() -> np.dtype:
    """Return complex128 with x64 on, else complex64 (JAX's ``dtypes.default_complex_dtype``)."""
    return canonicalize_dtype(np.complex128)


# --------------------------------------------------------------------------
# dtype of a value, weak types, Python scalars
# --------------------------------------------------------------------------

# The (not yet canonicalized) dtype of each Python scalar type.
_PYTHON_SCALAR_DTYPES = {
    bool: np.dtype(np.bool_),
    int: np.dtype(np.int64),
    float: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
}
# Python scalar types whose values are weakly typed (bool is not: see module doc).
_WEAK_SCALAR_TYPES = frozenset({int, float, complex})


def _python_scalar_base(x: Any) -> type | None:
    # Exact types first (the common case), then subclasses such as IntEnum.
    # numpy scalars that subclass float/complex (float64, complex128) are not
    # Python scalars: they carry their own, strong, dtype.
    tp = type(x)
    if tp in _PYTHON_SCALAR_DTYPES:
        return tp
    if isinstance(x, np.generic):
        return None
    for base in _PYTHON_SCALAR_DTYPES:  # bool before int: bool subclasses int
        if isinstance(x, base):
            return base
    return None


def dtype(x: Any, canonicalize: bool = False) -> Any:
    """Return the dtype of a value or dtype-like (JAX's internal ``dtypes.dtype``).

    Python scalar types and values map to 64-bit defaults (``int`` →
    int64, ``float`` → float64), which ``canonicalize=True`` narrows under the
    current x64 setting. Raise TypeError for values with no modjax dtype
    (strings, lists, object arrays, ...), naming the value.
    """
    dt = _dtype_of(x)
    if not isinstance(dt, np.dtype):
        if isinstance(dt, ExtendedDType):
            return dt
        raise TypeError(f"Cannot determine dtype of {x!r}")
    if dt not in _SUPPORTED and np_dtype(dt) not in _SUPPORTED:
        raise TypeError(
            f"Value {x!r} with dtype {dt} is not a valid modjax array type. "
            "Only arrays of numeric types are supported."
        )
    return canonicalize_dtype(dt) if canonicalize else dt


def _dtype_of(x: Any) -> Any:
    python_dtype = _PYTHON_SCALAR_DTYPES.get(type(x))
    if python_dtype is not None:
        return python_dtype
    if isinstance(x, (np.dtype, ExtendedDType)):
        return x
    if isinstance(x, type):
        if x in _PYTHON_SCALAR_DTYPES:
            return _PYTHON_SCALAR_DTYPES[x]
        if issubclass(x, np.generic):
            return np_dtype(x)  # abstract types such as np.floating raise TypeError here
        raise TypeError(f"Cannot determine dtype of {x!r}")
    if isinstance(x, str):
        return np_dtype(x)  # TypeError "data type 'foo' not understood"
    dt = getattr(x, "dtype", None)  # arrays, numpy scalars, avals, tracers
    if dt is not None:
        return dt
    base = _python_scalar_base(x)
    if base is not None:
        return _PYTHON_SCALAR_DTYPES[base]
    raise TypeError(f"Cannot determine dtype of {x!r}")


def is_weakly_typed(x: Any) -> bool:
    """Return whether ``x`` is weakly typed (JAX's internal ``dtypes.is_weakly_typed``).

    True for Python int/float/complex values and for objects whose
    ``weak_type`` (or ``aval.weak_type``) is true. Python bools are not weak.
    """
    if type(x) in _WEAK_SCALAR_TYPES:
        return True
    if isinstance(x, type):  # a class's weak_type attribute is a descriptor, not a flag
        return False
    weak = getattr(x, "weak_type", None)
    if weak is not None:
        return bool(weak)
    return bool(getattr(getattr(x, "aval", None), "weak_type", False))


def python_scalar_dtype(x: Any) -> np.dtype:
    """Return the canonical dtype of a Python scalar: bool, or the default int/float/complex dtype.

    Counterpart of JAX's internal ``dtypes.python_scalar_dtypes`` lookup followed
    by canonicalization. Raise TypeError for anything that is not a Python
    bool/int/float/complex (numpy scalars included).
    """
    base = _python_scalar_base(x)
    if base is None:
        raise TypeError(f"{x!r} of type {type(x).__name__} is not a Python scalar")
    return canonicalize_dtype(_PYTHON_SCALAR_DTYPES[base])


def check_int_range(value: int, dt: np.dtype) -> None:
    """Raise OverflowError if the Python int ``value`` does not fit in integer dtype ``dt``.

    JAX performs the same check (with the same message) when converting Python ints.
    """
    low, high, name = _int_bounds(dt)
    if not low <= value <= high:
        raise OverflowError(f"Python int {value} too large to convert to {name}")


@functools.cache
def _int_bounds(dt: Any) -> tuple[int, int, str]:
    info = iinfo(dt)
    return int(info.min), int(info.max), np.dtype(dt).name


def coerce_python_scalar(x: Any) -> np.ndarray:
    """Convert a Python scalar to a 0-d array of its canonical dtype (as ``jnp.asarray(x)`` does).

    A Python int outside the canonical integer range raises OverflowError
    (``jnp.array(2**31)`` with x64 off); a float too large for float32
    becomes inf, as in JAX.
    """
    dt = python_scalar_dtype(x)
    if dt.kind in "iu":
        x = int(x)
        check_int_range(x, dt)
    with np.errstate(over="ignore"):
        return np.asarray(x, dtype=dt)


# --------------------------------------------------------------------------
# The promotion lattice
# --------------------------------------------------------------------------


class _WeakKind:
    """A lattice node for a weakly typed kind (JAX's ``int``/``float``/``complex`` nodes)."""

    __slots__ = ("name", "default")

    def __init__(self, name: str, default: np.dtype):
        self.name = name
        self.default = default  # the dtype the kind takes when it wins a promotion

    def __repr__(self) -> str:
        return self.name


_WEAK_INT = _WeakKind("int", np.dtype(np.int64))
_WEAK_FLOAT = _WeakKind("float", np.dtype(np.float64))
_WEAK_COMPLEX = _WeakKind("complex", np.dtype(np.complex128))
# Python types passed as dtype-likes (promote_types(int, x)) are the weak kinds.
_WEAK_KIND_OF_TYPE = {int: _WEAK_INT, float: _WEAK_FLOAT, complex: _WEAK_COMPLEX}


def _dt(t: Any) -> np.dtype:
    return np.dtype(t)


def _upper_bounds(edges: dict[Any, list[Any]]) -> dict[Any, frozenset[Any]]:
    """Return, for every node, the set of nodes at or above it (reflexive-transitive closure)."""
    closure: dict[Any, frozenset[Any]] = {}

    def visit(node: Any) -> frozenset[Any]:
        if node not in closure:
            above = {node}
            for parent in edges[node]:
                above |= visit(parent)
            closure[node] = frozenset(above)
        return closure[node]

    for node in edges:
        visit(node)
    return closure


class _Lattice:
    """One promotion lattice with a memo of joins."""

    def __init__(self, edges: dict[Any, list[Any]], mode: str):
        self.mode = mode
        self.above = _upper_bounds(edges)
        self.joins: dict[frozenset[Any], Any] = {}

    def join(self, nodes: frozenset[Any]) -> Any:
        """Return the least upper bound of ``nodes``, or raise TypePromotionError."""
        try:
            return self.joins[nodes]
        except KeyError:
            pass
        common = frozenset.intersection(*(self.above[n] for n in nodes))
        # The least common upper bound is the one whose own upper set holds all the others.
        least = [c for c in common if self.above[c] >= common]
        if len(least) != 1:
            raise TypePromotionError(_no_path_message(nodes, self.mode))
        self.joins[nodes] = least[0]
        return least[0]


def _no_path_message(nodes: frozenset[Any], mode: str) -> str:
    names = ", ".join(sorted(map(_node_name, nodes)))
    message = f"Input dtypes ({names}) have no implicit promotion path"
    if mode == "strict":
        return (
            message
            + " under numpy_dtype_promotion='strict'; cast explicitly, e.g. x.astype(y.dtype)."
        )
    if any(n in _SMALL_FLOATS for n in nodes):
        return (
            message + ": floats of 8 or fewer bits never promote implicitly; "
            "cast explicitly, e.g. x.astype('float32')."
        )
    return message + "; cast explicitly, e.g. x.astype('float32')."


def _node_name(node: Any) -> str:
    return f"weak {node.name}" if isinstance(node, _WeakKind) else _NAME.get(node, str(node))


def _current_lattice() -> _Lattice:
    return _LATTICES[numpy_dtype_promotion.value, enable_x64.value]


def _node_dtype(node: Any) -> np.dtype:
    return node.default if isinstance(node, _WeakKind) else node


def _promotion_node(dt: Any) -> Any:
    if dt not in _STANDARD_EDGES:
        raise TypePromotionError(f"dtype={dt} is not a valid dtype for type promotion")
    return dt


def _checked_pair(pair: tuple[Any, bool]) -> tuple[Any, bool]:
    _promotion_node(pair[0])
    return pair


def promote_types(a: Any, b: Any) -> np.dtype:
    """Return the dtype a binary operation casts ``a`` and ``b`` to (``jax.numpy.promote_types``).

    The Python types ``int``, ``float`` and ``complex`` count as weak: they do
    not widen a typed counterpart (``promote_types('uint8', int)`` is uint8).
    The result is *not* canonicalized (``promote_types(int, int)`` is int64),
    but the lattice itself follows the current x64 and promotion-mode settings.
    """
    node_a = _WEAK_KIND_OF_TYPE.get(a) if isinstance(a, type) else None
    node_b = _WEAK_KIND_OF_TYPE.get(b) if isinstance(b, type) else None
    node_a = node_a or _promotion_node(np_dtype(a))
    node_b = node_b or _promotion_node(np_dtype(b))
    return _node_dtype(_current_lattice().join(frozenset((node_a, node_b))))


def _dtype_and_weak(x: Any) -> tuple[Any, bool]:
    if isinstance(x, np.dtype):  # the common case; dtypes are never weak
        return dtype(x, canonicalize=True), False
    if x is None:  # JAX reads a missing dtype as the default float
        return default_float_dtype(), False
    if isinstance(x, type) and x in _WEAK_KIND_OF_TYPE:
        return canonicalize_dtype(_PYTHON_SCALAR_DTYPES[x]), True
    return dtype(x, canonicalize=True), is_weakly_typed(x)


# result_type's answer depends only on the (dtype, weak) pairs and the settings.
# Calls with many arguments (concatenating a long list) are not memoized, which
# keeps the memo small.
_RESULT_CACHE: dict[tuple[Any, ...], tuple[Any, bool]] = {}
_RESULT_CACHE_MAX_ARGS = 4


def result_type(*args: Any, return_weak_type_flag: bool = False) -> Any:
    """Return the canonical dtype that combining ``args`` produces (``jax.dtypes.result_type``).

    Arguments may be arrays, scalars, dtypes, dtype-likes or None (the
    default float). Python scalars and weakly typed arrays adapt to strongly
    typed ones (``int8 array + 1000`` stays int8); a weakly typed result has
    the default dtype of its kind. With ``return_weak_type_flag=True`` return
    ``(dtype, weak_type)``.
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    pairs = tuple(map(_dtype_and_weak, args))
    if len(pairs) > _RESULT_CACHE_MAX_ARGS:
        out = _result_of_pairs(pairs)
        return out if return_weak_type_flag else out[0]
    key = (numpy_dtype_promotion.value, enable_x64.value, pairs)
    try:
        out = _RESULT_CACHE[key]
    except KeyError:
        out = _RESULT_CACHE[key] = _result_of_pairs(pairs)
    return out if return_weak_type_flag else out[0]


def _result_of_pairs(pairs: tuple[tuple[Any, bool], ...]) -> tuple[Any, bool]:
    dt, weak = _join_pairs(pairs)
    if not weak or dt == _BOOL:  # a weak bool is just a bool
        return dt, False
    return canonicalize_dtype(_WEAK_RESULT_DTYPE.get(dt, dt)), True


def _join_pairs(pairs: tuple[tuple[Any, bool], ...]) -> tuple[Any, bool]:
    if len(pairs) == 1:
        return pairs[0]
    dtypes_ = {dt for dt, _ in pairs}
    all_weak = all(weak for _, weak in pairs)
    if len(dtypes_) == 1 and not all_weak:
        # Identical dtypes need no lattice (this also lets float0 and extended dtypes through).
        return pairs[0][0], False
    lattice = _current_lattice()
    if all_weak and lattice.mode == "standard":
        # Only weak values: promote their dtypes as if strong, and stay weak.
        node = lattice.join(frozenset(map(_promotion_node, dtypes_)))
        return canonicalize_dtype(_node_dtype(node)), True
    nodes = frozenset(
        _WEAK_KIND_OF_DTYPE[dt] if weak else dt for dt, weak in map(_checked_pair, pairs)
    )
    node = lattice.join(nodes)
    return canonicalize_dtype(_node_dtype(node)), isinstance(node, _WeakKind)


# --------------------------------------------------------------------------
# Classification: issubdtype, isdtype, finfo, iinfo
# --------------------------------------------------------------------------


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """Return whether dtype ``arg1`` is ``arg2`` or in category ``arg2`` (jax.numpy.issubdtype).

    Unlike numpy's version, it places the ml_dtypes types in numpy's hierarchy:
    bfloat16 and the float8s are ``np.floating``, int4 is ``np.signedinteger``.
    Python types are concrete dtypes, as in numpy: ``float`` means float64.
    """
    a, b = arg1, arg2
    if isinstance(a, ExtendedDType):
        return b is extended or a == b or (isinstance(b, type) and issubclass(a.type, b))
    if isinstance(a, type) and issubclass(a, np.generic):
        a_type = a
        if not _narrow_loaded and a.__module__ == "ml_dtypes":
            load_narrow_dtypes()
    else:
        a_type = np_dtype(a).type
    if isinstance(b, type) and issubclass(b, np.generic):
        category = _ML_CATEGORY.get(a_type)
        return issubclass(a_type, b) or (category is not None and issubclass(category, b))
    if isinstance(b, ExtendedDType):
        return False
    return np_dtype(a) == np_dtype(b)


def isdtype(dtype: Any, kind: Any) -> bool:
    """Return whether ``dtype`` is of ``kind`` (Array API ``isdtype``; ``jax.numpy.isdtype``).

    ``kind`` is a dtype, one of the Array API kind names ('bool', 'signed
    integer', 'unsigned integer', 'integral', 'real floating', 'complex
    floating', 'numeric'), or a tuple of those.
    """
    dt = np_dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return any(_is_of_kind(dt, k) for k in kinds)


def _is_of_kind(dt: np.dtype, kind: Any) -> bool:
    if isinstance(kind, str):
        try:
            return dt in _ISDTYPE_KINDS[kind]
        except KeyError:
            raise ValueError(
                f"Unrecognized kind={kind!r}; expected one of {list(_ISDTYPE_KINDS)} or a dtype"
            ) from None
    if isinstance(kind, (np.dtype, type)):
        try:
            return dt == np_dtype(kind)
        except TypeError:  # abstract classes such as np.floating are not dtypes
            pass
    raise TypeError(f"Expected kind to be a dtype, string, or tuple; got kind={kind!r}")


@functools.cache
def _finfo(dt: np.dtype) -> np.finfo:
    if dt.kind == "V":  # a narrow type (loaded by np_dtype): numpy has no limits for it
        import ml_dtypes

        return ml_dtypes.finfo(dt)
    return np.finfo(dt)


@functools.cache
def _iinfo(dt: np.dtype) -> np.iinfo:
    if dt.kind == "V":
        import ml_dtypes

        return ml_dtypes.iinfo(dt)
    return np.iinfo(dt)


def finfo(dtype: Any) -> np.finfo:
    """Return machine limits of a floating dtype, ml_dtypes' included (``jax.numpy.finfo``).

    Complex dtypes give the limits of their real component; non-floating
    dtypes raise ValueError.
    """
    return _finfo(np_dtype(dtype))


def iinfo(dtype: Any) -> np.iinfo:
    """Return machine limits of an integer dtype, int4 and int2 included (``jax.numpy.iinfo``).

    A Python scalar is taken as numpy takes it (``iinfo(1)`` is int64's limits,
    ``iinfo(1.0)`` a ValueError), as JAX does.
    """
    if type(dtype) in (int, bool, float, complex):
        return np.iinfo(dtype)
    return _iinfo(np_dtype(dtype))


# --------------------------------------------------------------------------
# The tables, and loading the narrow dtypes into them
# --------------------------------------------------------------------------


# The tables _build_tables fills (declared here for readers and the type checker).
_UNSIGNED: list[np.dtype]
_SIGNED: list[np.dtype]
_SMALL_FLOATS: list[np.dtype]
_FLOATS: list[np.dtype]
_NUMERIC: list[np.dtype]
_ALL_DTYPES: tuple[np.dtype, ...]
_SUPPORTED: frozenset[np.dtype]
_NAME: dict[np.dtype, str]
_SHORT_NAME: dict[np.dtype, str]
_FROM_SHORT_NAME: dict[str, np.dtype]
_SUB_BYTE_BITS: dict[np.dtype, int]
_STANDARD_EDGES: dict[Any, list[Any]]
_STRICT_EDGES: dict[Any, list[Any]]
_LATTICES: dict[tuple[str, bool], _Lattice]
_WEAK_KIND_OF_DTYPE: dict[np.dtype, Any]
_WEAK_RESULT_DTYPE: dict[np.dtype, np.dtype]
_ML_CATEGORY: dict[type, type]
_ISDTYPE_KINDS: dict[str, frozenset[np.dtype]]


def _build_tables(narrow: dict[str, Any]) -> None:
    """(Re)build every dtype table from numpy's types and the ``narrow`` ones (name: type)."""
    global _UNSIGNED, _SIGNED, _SMALL_FLOATS, _FLOATS, _NUMERIC, _ALL_DTYPES, _SUPPORTED
    global _NAME, _SHORT_NAME, _FROM_SHORT_NAME, _SUB_BYTE_BITS, _STANDARD_EDGES
    global _STRICT_EDGES, _LATTICES, _WEAK_KIND_OF_DTYPE, _WEAK_RESULT_DTYPE
    global _ML_CATEGORY, _ISDTYPE_KINDS
    n = narrow.get  # a narrow type, or None (not loaded, or missing in this ml_dtypes)
    _UNSIGNED = _present(
        n("uint1"), n("uint2"), n("uint4"), np.uint8, np.uint16, np.uint32, np.uint64
    )
    _SIGNED = _present(n("int1"), n("int2"), n("int4"), np.int8, np.int16, np.int32, np.int64)
    # Floats with 8 or fewer bits: each promotes from f* but to nothing else, so
    # mixing them with other floats must be an explicit cast.
    _SMALL_FLOATS = _present(
        *map(n, ("float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3")),
        *map(n, ("float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2")),
        *map(n, ("float8_e5m2fnuz", "float8_e8m0fnu")),
    )
    bf16 = _present(n("bfloat16"))
    _FLOATS = [*_SMALL_FLOATS, *bf16, *_present(np.float16, np.float32, np.float64)]
    _NUMERIC = [*_UNSIGNED, *_SIGNED, *_FLOATS, *_COMPLEX]
    _ALL_DTYPES = (_BOOL, *_NUMERIC, float0)
    _SUPPORTED = frozenset(_ALL_DTYPES)

    _NAME = {dt: _long_name(dt) for dt in _ALL_DTYPES}
    _SHORT_NAME = {dt: _abbreviate(name) for dt, name in _NAME.items()}
    _FROM_SHORT_NAME = {short: dt for dt, short in _SHORT_NAME.items()}
    assert len(_FROM_SHORT_NAME) == len(_SHORT_NAME), "short dtype names must be unique"

    # Sub-byte types are stored one per byte by numpy but packed by XLA.
    bits = {"int1": 1, "uint1": 1, "int2": 2, "uint2": 2, "int4": 4, "uint4": 4}
    bits |= {"float4_e2m1fn": 4, "float6_e2m3fn": 6, "float6_e3m2fn": 6}
    _SUB_BYTE_BITS = {np.dtype(n(k)): b for k, b in bits.items() if n(k) is not None}

    # Edges of the standard lattice: each node and the nodes immediately above it.
    # Notes on the shape (all observed in JAX 0.10):
    #  * sub-byte ints (u1/u2/u4/i1/i2/i4) sit only above bool and i*: they never
    #    promote implicitly to wider ints;
    #  * u64 and i64 meet only at f* (a weak float), so uint64 + int8 is a float;
    #  * small floats (f8, f6, f4) and bf16/f16 sit directly above f*, so any int
    #    plus a small float gives that float, but two different small floats (or a
    #    small float and f32) have no common upper bound.
    sub_byte_ints = _present(*map(n, ("uint1", "uint2", "uint4", "int1", "int2", "int4")))
    _STANDARD_EDGES = {
        _BOOL: [_WEAK_INT],
        _WEAK_INT: [*sub_byte_ints, _dt(np.uint8), _dt(np.int8)],
        **{dt: [] for dt in sub_byte_ints},
        _dt(np.uint8): [_dt(np.uint16), _dt(np.int16)],
        _dt(np.uint16): [_dt(np.uint32), _dt(np.int32)],
        _dt(np.uint32): [_dt(np.uint64), _dt(np.int64)],
        _dt(np.uint64): [_WEAK_FLOAT],
        _dt(np.int8): [_dt(np.int16)],
        _dt(np.int16): [_dt(np.int32)],
        _dt(np.int32): [_dt(np.int64)],
        _dt(np.int64): [_WEAK_FLOAT],
        _WEAK_FLOAT: [*_SMALL_FLOATS, *bf16, _dt(np.float16), _WEAK_COMPLEX],
        **{dt: [] for dt in _SMALL_FLOATS},
        **{dt: [_dt(np.float32)] for dt in bf16},
        _dt(np.float16): [_dt(np.float32)],
        _dt(np.float32): [_dt(np.float64), _dt(np.complex64)],
        _dt(np.float64): [_dt(np.complex128)],
        _WEAK_COMPLEX: [_dt(np.complex64)],
        _dt(np.complex64): [_dt(np.complex128)],
        _dt(np.complex128): [],
    }
    # With x64 off no promotion may invent a 64-bit type from 32-bit inputs; the
    # one place the standard lattice does so is uint32 + int32 -> int64, so x64-off
    # puts uint32 below int32 instead (uint32 + int32 -> int32).
    x32_edge_overrides = {_dt(np.uint32): [_dt(np.uint64), _dt(np.int32)]}
    # The strict lattice lets only weak scalars promote (to any type of their kind
    # or higher); distinct strong dtypes never mix implicitly.
    _STRICT_EDGES = {
        _WEAK_INT: [_WEAK_FLOAT, *_UNSIGNED, *_SIGNED],
        _WEAK_FLOAT: [_WEAK_COMPLEX, *_FLOATS],
        _WEAK_COMPLEX: list(_COMPLEX),
        **{dt: [] for dt in (_BOOL, *_NUMERIC)},
    }
    _LATTICES = {
        ("standard", True): _Lattice(_STANDARD_EDGES, "standard"),
        ("standard", False): _Lattice({**_STANDARD_EDGES, **x32_edge_overrides}, "standard"),
        ("strict", True): _Lattice(_STRICT_EDGES, "strict"),
        ("strict", False): _Lattice(_STRICT_EDGES, "strict"),
    }
    # The weak kind a weakly typed dtype stands for (a weak bool stays bool).
    _WEAK_KIND_OF_DTYPE = {
        _BOOL: _BOOL,
        **dict.fromkeys((*_UNSIGNED, *_SIGNED), _WEAK_INT),
        **dict.fromkeys(_FLOATS, _WEAK_FLOAT),
        **dict.fromkeys(_COMPLEX, _WEAK_COMPLEX),
    }
    # A weakly typed result takes the default dtype of its kind (a weak float16
    # operand yields a weak float32 result, like a Python float would).
    _WEAK_RESULT_DTYPE = {
        **dict.fromkeys(_UNSIGNED, _dt(np.uint64)),
        **dict.fromkeys(_SIGNED, _dt(np.int64)),
        **dict.fromkeys(_FLOATS, _dt(np.float64)),
        **dict.fromkeys(_COMPLEX, _dt(np.complex128)),
    }
    # ml_dtypes' scalar types subclass np.generic directly, outside numpy's
    # hierarchy; this is the abstract numpy category each of them belongs to.
    _ML_CATEGORY = {
        dt.type: category
        for category, group in [
            (np.floating, _FLOATS),
            (np.signedinteger, _SIGNED),
            (np.unsignedinteger, _UNSIGNED),
        ]
        for dt in group
        if not issubclass(dt.type, category)
    }
    _ISDTYPE_KINDS = {
        "bool": frozenset({_BOOL}),
        "signed integer": frozenset(_SIGNED),
        "unsigned integer": frozenset(_UNSIGNED),
        "integral": frozenset((*_SIGNED, *_UNSIGNED)),
        "real floating": frozenset(_FLOATS),
        "complex floating": frozenset(_COMPLEX),
        "numeric": frozenset(_NUMERIC),
    }
    _RESULT_CACHE.clear()


_build_tables({})

_narrow_lock = threading.Lock()
_narrow_hooks: list[Callable[[], None]] = []
_narrow_loaded = False


def narrow_dtypes_loaded() -> bool:
    """Return whether the ml_dtypes types (bfloat16, float8, int4, ...) are loaded yet."""
    return _narrow_loaded


def load_narrow_dtypes() -> None:
    """Import ml_dtypes and add its types to every dtype table (idempotent; no JAX counterpart).

    Runs by itself the first time a program names a narrow dtype; then calls the
    hooks other modules registered with :func:`on_narrow_dtypes_loaded`.
    """
    global _narrow_loaded
    if _narrow_loaded:
        return
    with _narrow_lock:
        if _narrow_loaded:
            return
        import ml_dtypes

        narrow = {name: getattr(ml_dtypes, name, None) for name in NARROW_DTYPE_NAMES}
        _build_tables(narrow)
        globals().update(narrow)
        _finfo.cache_clear()
        _iinfo.cache_clear()
        _narrow_loaded = True
    for hook in list(_narrow_hooks):
        hook()


def on_narrow_dtypes_loaded(hook: Callable[[], None]) -> None:
    """Call ``hook()`` once the narrow dtypes are loaded (now, if they already are).

    For modules above that keep tables of dtypes of their own.
    """
    _narrow_hooks.append(hook)
    if narrow_dtypes_loaded():
        hook()


def __getattr__(name: str) -> Any:
    if name in NARROW_DTYPE_NAMES:
        load_narrow_dtypes()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *NARROW_DTYPE_NAMES})


def scalar_type_of(x: Any) -> type:
    """Return the Python scalar type (bool, int, float, complex) of ``x``'s dtype
    (jax.dtypes.scalar_type_of)."""
    dt = dtype(x)
    for kind, scalar in ((np.bool_, bool), (np.integer, int), (np.floating, float)):
        if issubdtype(dt, kind):
            return scalar
    if issubdtype(dt, np.complexfloating):
        return complex
    raise TypeError(f"Invalid scalar value {x}")
