"""Scalar types (``jnp.float32`` ...) and dtype utilities of modjax.numpy.

``jnp.float32`` is a class usable everywhere numpy's is (``np.dtype(jnp.float32)``,
``issubdtype``, ``zeros(3, jnp.float32)``); calling it makes a modjax array:
``jnp.float32(2)`` is ``Array(2., dtype=float32)``, as in JAX. Each is a
subclass of the numpy (or ml_dtypes) scalar type whose metaclass turns the
call into ``asarray(x, dtype)`` and makes it compare equal to that type.
"""

from __future__ import annotations

import numpy as np
from modjax.tracecore import dtypes as _dtypes

__all__ = [
    "ComplexWarning",
    "bool_",
    "complex64",
    "complex128",
    "cdouble",
    "character",
    "complex_",
    "complexfloating",
    "csingle",
    "double",
    "dtype",
    "finfo",
    "flexible",
    "float16",
    "float32",
    "float64",
    "float_",
    "floating",
    "generic",
    "iinfo",
    "inexact",
    "int8",
    "int16",
    "int32",
    "int64",
    "int_",
    "integer",
    "isdtype",
    "issubdtype",
    "number",
    "object_",
    "promote_types",
    "result_type",
    "signedinteger",
    "single",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "uint",
    "unsignedinteger",
]


class _ScalarMeta(type):
    """Metaclass of modjax.numpy's scalar types: calling one makes an array of its dtype."""

    dtype: np.dtype

    def __call__(cls, x=0):
        from ._creation import asarray

        return asarray(x, dtype=cls.dtype)

    def __eq__(cls, other):
        # as JAX's: equal to its numpy type and to that np.dtype (``x.dtype in (jnp.float32,)``)
        return (
            cls is other
            or other is cls.dtype.type
            or (isinstance(other, np.dtype) and other == cls.dtype)
        )

    def __ne__(cls, other):
        return not cls == other

    def __hash__(cls):
        return hash(cls.dtype.type)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'modjax.numpy.{cls.__name__}'>"


def _scalar_type(numpy_type, name: str | None = None) -> type:
    name = name or np.dtype(numpy_type).name
    doc = (
        f"The {np.dtype(numpy_type).name} scalar type (jax.numpy.{name}); "
        f"``{name}(x)`` returns ``x`` as a modjax array of this dtype."
    )
    return _ScalarMeta(
        name,
        (numpy_type,),
        {"dtype": np.dtype(numpy_type), "__doc__": doc, "__module__": "modjax.numpy"},
    )


bool_ = _scalar_type(np.bool_, "bool_")
int8 = _scalar_type(np.int8)
int16 = _scalar_type(np.int16)
int32 = _scalar_type(np.int32)
int64 = _scalar_type(np.int64)
uint8 = _scalar_type(np.uint8)
uint16 = _scalar_type(np.uint16)
uint32 = _scalar_type(np.uint32)
uint64 = _scalar_type(np.uint64)
float16 = _scalar_type(np.float16)
float32 = _scalar_type(np.float32)
float64 = _scalar_type(np.float64)
complex64 = _scalar_type(np.complex64)
complex128 = _scalar_type(np.complex128)
# The narrow types of ml_dtypes (bfloat16, float8_*, int4, ...) are made on first
# access (module ``__getattr__``): naming one loads ml_dtypes (see tracecore.dtypes).
# numpy's C-style names, as in JAX.
single = float32
double = float64
csingle = complex64
cdouble = complex128
# The 64-bit names of numpy's defaults, as in JAX (canonicalized when used).
int_ = int64
uint = uint64
float_ = float64
complex_ = complex128

# The abstract categories are numpy's own.
generic = np.generic
number = np.number
integer = np.integer
signedinteger = np.signedinteger
unsignedinteger = np.unsignedinteger
inexact = np.inexact
floating = np.floating
complexfloating = np.complexfloating
# numpy's other categories and types, which JAX re-exports; modjax arrays hold none of them.
character = np.character
flexible = np.flexible
object_ = np.object_
ComplexWarning = np.exceptions.ComplexWarning

# Promotion and introspection come from tracecore, which implements JAX's lattice.
promote_types = _dtypes.promote_types
result_type = _dtypes.result_type
issubdtype = _dtypes.issubdtype
isdtype = _dtypes.isdtype
finfo = _dtypes.finfo
iinfo = _dtypes.iinfo


class _DTypeMeta(type):
    """Make ``jnp.dtype`` stand for ``np.dtype`` as a type: isinstance, issubclass, ``|``."""

    def __instancecheck__(cls, obj) -> bool:
        return isinstance(obj, np.dtype)

    def __subclasscheck__(cls, sub) -> bool:
        return isinstance(sub, type) and issubclass(sub, np.dtype)

    def __call__(cls, obj, align: bool = False, copy: bool = False) -> np.dtype:
        if isinstance(obj, _ScalarMeta):
            return obj.dtype
        if hasattr(obj, "dtype") and not isinstance(obj, type):
            return np.dtype(obj.dtype)
        if not align and not copy:
            return _dtypes.np_dtype(obj)  # "bfloat16" loads the narrow dtypes
        return np.dtype(obj, align=align, copy=copy)


class dtype(metaclass=_DTypeMeta):  # noqa: N801 - numpy's name
    """The numpy dtype of a dtype-like, array or scalar type (jax.numpy.dtype).

    JAX's ``jnp.dtype`` is ``np.dtype`` itself. modjax's is a stand-in type, since
    ``np.dtype("bfloat16")`` knows the name only once ml_dtypes is imported, which
    modjax delays until a narrow dtype is used: calling it returns an ``np.dtype``,
    ``isinstance(d, jnp.dtype)`` tells an ``np.dtype``, and it joins type unions
    (``ArrayLike | jnp.dtype``) as numpy's does.
    """


dtype.__module__ = "modjax.numpy"


def narrow_scalar_type(name: str) -> type:
    """Return the scalar type ``jnp.<name>`` of a narrow dtype, loading those on first use.

    Raise AttributeError for a name that is not one (or that this ml_dtypes lacks).
    """
    made = globals().get(name)
    if made is not None:
        return made
    if name not in _dtypes.NARROW_DTYPE_NAMES:
        raise AttributeError(f"module 'modjax.numpy' has no attribute {name!r}")
    numpy_type = getattr(_dtypes, name)
    if numpy_type is None:  # int1/uint1 with an ml_dtypes older than them
        raise AttributeError(f"module 'modjax.numpy' has no attribute {name!r}")
    made = globals()[name] = _scalar_type(numpy_type)
    return made


def __getattr__(name: str) -> type:
    return narrow_scalar_type(name)
