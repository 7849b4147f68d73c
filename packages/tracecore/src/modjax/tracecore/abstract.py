"""Abstract values: what tracing knows about an array (shape, dtype, weak type).

* :class:`ShapedArray` is the abstract value of every traced array (JAX's
  ``jax.core.ShapedArray``). Its constructor does **not** x64-canonicalize the
  dtype: ``ShapedArray((), np.float64)`` is float64 whatever the setting. The
  caller decides; :func:`get_aval` and :attr:`ShapeDtypeStruct.aval` do
  canonicalize, as values entering a trace must.
* :func:`get_aval` maps a concrete value to its abstract value through the
  open table :data:`aval_handlers` (``type -> function``), which higher
  packages extend with :func:`register_aval_handler`.
* :class:`ShapeDtypeStruct` is the user-facing "array-like spec" of
  ``jax.ShapeDtypeStruct``.
* :class:`AbstractValue` is the base every kind of abstract value (arrays, tokens,
  references) registers with, so ``isinstance(aval, AbstractValue)`` tells one.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
import math
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.tracecore import dtypes

__all__ = [
    "AbstractValue",
    "ManualAxisType",
    "MemorySpace",
    "ShapeDtypeStruct",
    "ShapedArray",
    "aval_handlers",
    "canonicalize_shape",
    "sharding_entries",
    "unreduced_axes",
    "reduced_axes",
    "with_type_sharding",
    "set_unsharded_sharding",
    "get_aval",
    "physical_aval",
    "physical_element_avals",
    "register_aval_handler",
]


def canonicalize_shape(shape: Any) -> tuple[int, ...]:
    """Return ``shape`` as a tuple of non-negative Python ints (JAX's ``core.canonicalize_shape``).

    Accept any sequence of integer-likes (numpy ints included). Raise
    TypeError for non-integers and ValueError for negative dimensions.
    """
    if type(shape) is tuple:
        # The common case, already canonical, costs one pass and no copy (a
        # plain loop: this runs for every traced equation, and all() with a
        # generator is twice as slow).
        for d in shape:
            if type(d) is not int or d < 0:
                break
        else:
            return shape
    try:
        dims = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise _invalid_shape_error(shape) from None
    if any(d < 0 for d in dims):
        raise ValueError(f"Shapes must have non-negative dimensions, got {shape!r}")
    return dims


def _invalid_shape_error(shape: Any) -> TypeError:
    """JAX's TypeError for a shape that is not a sequence of concrete integers.

    A traced size gets JAX's hint and the lines naming the traced function and the
    arguments the size depends on.
    """
    from .core import Tracer

    message = f"Shapes must be 1D sequences of concrete values of integer type, got {shape}."
    try:
        traced = [d for d in shape if isinstance(d, Tracer) and d.to_concrete_value() is None]
    except TypeError:  # not a sequence
        traced = []
    if traced:
        message += (
            "\nIf using `jit`, try using `static_argnums` or applying `jit` to smaller "
            "subfunctions."
        )
        for d in traced:
            message += d._origin_msg()
    return TypeError(message)


def _spec_shape(shape: Any) -> tuple:
    """Canonicalize a spec's shape, keeping symbolic dimensions (``jax.export``'s) as they are."""
    if any(getattr(type(d), "_symbolic_dim", False) for d in shape):
        return tuple(
            d if getattr(type(d), "_symbolic_dim", False) else operator.index(d) for d in shape
        )
    return canonicalize_shape(shape)


def _checked_dtype(dtype: Any) -> Any:
    if isinstance(dtype, dtypes.ExtendedDType):
        return dtype
    if dtype is None:  # np.dtype(None) would silently mean float64
        raise TypeError("a dtype must be given, got None")
    dt = dtypes.np_dtype(dtype)  # a name or value of a narrow dtype loads those
    if dt not in dtypes.supported_dtypes():
        raise TypeError(
            f"Dtype {dt} is not a valid modjax array type. "
            "Only arrays of numeric types are supported."
        )
    return dt


_SUPPORTED_BY_KEY: dict[Any, np.dtype] = {}


def _index_supported_dtypes() -> None:
    # Every dtype is also an aval handler key: scalar literals are looked up on every
    # equation that reads one, and an exact-type hit skips the walk up the class hierarchy.
    for dt in dtypes.supported_dtypes():
        _SUPPORTED_BY_KEY[dt] = dt
        register_aval_handler(dt.type, _numpy_aval)


_KEEP = object()  # update()'s "leave the sharding as it is"

#: ``[make]``: ``make(ndim)`` is the sharding an aval with none in its type reports
#: (``ShapedArray.sharding``); modjax.sharding sets it with :func:`set_unsharded_sharding`.
_unsharded_sharding: list[Callable[[int], Any] | None] = [None]


def set_unsharded_sharding(make: Callable[[int], Any]) -> None:
    """Make ``make(ndim)`` what ``aval.sharding`` is for an aval with no sharding in its type."""
    _unsharded_sharding[0] = make


def sharding_entries(aval: Any) -> tuple:
    """Return the per-dimension entries of ``aval``'s sharding (None, a name, a tuple of names).

    Padded with None to the aval's rank; all None when the aval has no sharding.
    """
    sharding = aval.type_sharding
    if sharding is None:
        return (None,) * len(aval.shape)
    spec = tuple(getattr(sharding.spec, "partitions", sharding.spec))
    return spec + (None,) * (len(aval.shape) - len(spec))


def unreduced_axes(aval: Any) -> frozenset:
    """Return the mesh axes ``aval``'s value is a partial sum over (JAX's ``core.getu``)."""
    sharding = getattr(aval, "type_sharding", None)
    manual: frozenset = getattr(aval, "manual_unreduced", frozenset())
    if sharding is None:
        return manual
    return getattr(sharding.spec, "unreduced", frozenset()) | manual


def reduced_axes(aval: Any) -> frozenset:
    """Return the mesh axes ``aval`` is reduced over (JAX's ``core.getr``)."""
    sharding = getattr(aval, "type_sharding", None)
    manual: frozenset = getattr(aval, "manual_reduced", frozenset())
    if sharding is None:
        return manual
    return getattr(sharding.spec, "reduced", frozenset()) | manual


def _axes_text(letter: str, axes, order) -> str:
    """``V:x``, ``U:(y,z)``: axes in the mesh's order (names it lacks sorted, last)."""
    names = [a for a in order if a in axes] + sorted((a for a in axes if a not in order), key=str)
    return f"{letter}:" + (names[0] if len(names) == 1 else "(" + ",".join(names) + ")")


def with_type_sharding(aval: ShapedArray, sharding: Any) -> ShapedArray:
    """Return ``aval`` with sharding ``sharding``, its spec padded with None to the aval's rank.

    JAX's types always spell every dimension (``P('x')`` of a matrix is ``P('x', None)``).
    """
    if sharding is not None and len(sharding.spec) < len(aval.shape):
        spec = sharding.spec
        padded = tuple(getattr(spec, "partitions", spec)) + (None,) * (len(aval.shape) - len(spec))
        # Unreduced and reduced axes stay (a spec that has them has ``update``).
        sharding = sharding.update(
            spec=spec.update(partitions=padded) if hasattr(spec, "update") else padded
        )
    if sharding is aval.type_sharding:
        return aval
    return ShapedArray(
        aval.shape,
        aval.dtype,
        aval.weak_type,
        sharding,
        vma=aval.vma,
        memory_space=aval.memory_space,
        manual_unreduced=aval.manual_unreduced,
        manual_reduced=aval.manual_reduced,
    )


def _dim_str(size: int, entry: Any) -> str:
    if entry is None or entry == ():
        return str(size)
    if isinstance(entry, str):
        return f"{size}@{entry}"
    if len(entry) == 1:
        return f"{size}@{entry[0]}"
    return f"{size}@({','.join(entry)})"


@dataclasses.dataclass(frozen=True)
class ManualAxisType:
    """The manual mesh axes of a value inside shard_map (``jax.sharding.ManualAxisType``).

    ``varying``: the axes it may differ along; ``unreduced`` and ``reduced`` are
    always empty here (modjax has no unreduced/reduced types yet).
    """

    varying: frozenset = frozenset()
    unreduced: frozenset = frozenset()
    reduced: frozenset = frozenset()


class MemorySpace(enum.Enum):
    """Where an array's memory lives (``jax.memory.Space``): ``Device``, ``Host`` or ``Any``.

    Part of an array's type, as in JAX 0.10.2: an array in ``pinned_host``
    memory is ``f32<host>[3]``; ``device`` and ``unpinned_host`` memory are ``Device``.
    """

    Device = enum.auto()
    Host = enum.auto()
    Any = enum.auto()

    def __repr__(self) -> str:
        return f"MemorySpace.{self.name}"

    __hash__ = object.__hash__  # by identity, as JAX's (Enum hashes the member's name)


_DEVICE = MemorySpace.Device


class AbstractValue(abc.ABC):  # noqa: B024 - a base to register with; nothing is abstract
    """The base of every abstract value (``jax.core.AbstractValue``).

    The kinds of abstract value do not inherit from it (each keeps its own slots);
    they register with it, so ``isinstance(x, AbstractValue)`` holds for a
    :class:`ShapedArray`, an abstract token or an abstract reference.
    """


class ShapedArray:
    """The abstract value of an array: shape, dtype and weak type (``jax.core.ShapedArray``).

    One is made per traced equation, so construction takes a fast path when
    the shape is already a tuple of ints and the dtype an ``np.dtype``.
    """

    __slots__ = (
        "shape",
        "dtype",
        "weak_type",
        "type_sharding",
        "vma",
        "memory_space",
        "manual_unreduced",
        "manual_reduced",
    )

    #: Becomes True once an aval with a sharding exists: until then tracing skips
    #: the sharding rules entirely (unsharded programs pay nothing for them).
    sharded_types_seen = False
    #: Likewise for varying manual axes (inside a shard_map with check_vma).
    varying_types_seen = False
    #: Likewise for memory spaces other than the device's (arrays in host memory).
    memory_spaces_seen = False

    def __init__(
        self,
        shape: Any,
        dtype: Any,
        weak_type: bool = False,
        sharding: Any = None,
        *,
        vma: frozenset = frozenset(),
        memory_space: MemorySpace = _DEVICE,
        manual_unreduced: frozenset = frozenset(),
        manual_reduced: frozenset = frozenset(),
    ):
        self.shape = canonicalize_shape(shape)
        try:
            # A dict hit is right even for an equal non-dtype key (np.dtype
            # compares equal to 'float32' and to float): it maps to the dtype.
            self.dtype = _SUPPORTED_BY_KEY[dtype]
        except (KeyError, TypeError):  # TypeError: an unhashable dtype spec
            self.dtype = _checked_dtype(dtype)
        self.weak_type = bool(weak_type)
        # The sharding in the type over explicit mesh axes: None, or an object with
        # ``spec`` (one entry per dimension: None, an axis name or a tuple of names)
        # and ``update(spec=entries)``; see modjax.sharding. ``sharding`` is JAX's view.
        if sharding is not None and not getattr(
            getattr(sharding, "mesh", None), "axis_names", True
        ):
            sharding = None  # the empty mesh's: what an unsharded aval reports
        self.type_sharding = sharding
        if sharding is not None:
            ShapedArray.sharded_types_seen = True
        # The manual mesh axes a value inside shard_map may differ along (JAX's
        # ``manual_axis_type.varying``, printed ``f32[4]{V:x}``); empty elsewhere.
        # Part of equality and hashing, as in JAX (a jit inside shard_map retraces
        # for an operand that turns varying).
        self.vma = vma
        if vma:
            ShapedArray.varying_types_seen = True
        # Which memory the value lives in (JAX's ``aval.memory_space``, printed
        # ``f32<host>[3]``); part of equality and hashing, as in JAX.
        self.memory_space = memory_space
        if memory_space is not _DEVICE:
            ShapedArray.memory_spaces_seen = True
        # Manual axes (inside shard_map) the value is a partial sum over, or reduced over
        # (``lax.pcast(..., to='unreduced'/'reduced')``; JAX's ``mat.unreduced``/``reduced``,
        # printed ``{V:x, U:y}``); part of equality and hashing, as in JAX.
        self.manual_unreduced = manual_unreduced
        self.manual_reduced = manual_reduced
        if manual_unreduced or manual_reduced:
            ShapedArray.varying_types_seen = True

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def sharding(self) -> Any:
        """The sharding in this type (JAX's ``aval.sharding``).

        Without one over explicit mesh axes it is JAX's unsharded type sharding,
        ``NamedSharding(AbstractMesh((), ()), P(None, ...))`` (None when only
        tracecore is installed: it has no mesh class).
        """
        if self.type_sharding is not None:
            return self.type_sharding
        make = _unsharded_sharding[0]
        return None if make is None else make(len(self.shape))

    @property
    def manual_axis_type(self) -> ManualAxisType:
        """The varying manual axes as JAX spells them (``aval.manual_axis_type``)."""
        return ManualAxisType(
            varying=frozenset(self.vma),
            unreduced=frozenset(self.manual_unreduced),
            reduced=frozenset(self.manual_reduced),
        )

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def update(
        self,
        shape: Any = None,
        dtype: Any = None,
        weak_type: bool | None = None,
        sharding: Any = _KEEP,
        vma: Any = _KEEP,
        memory_space: Any = _KEEP,
        manual_unreduced: Any = _KEEP,
        manual_reduced: Any = _KEEP,
    ) -> ShapedArray:
        """Return a copy with the given fields replaced (``ShapedArray.update``).

        A new shape drops the sharding unless one is given; the varying manual
        axes (``vma``) and the memory space stay unless given.
        """
        if sharding is _KEEP:
            sharding = self.type_sharding if shape is None else None
        return ShapedArray(
            self.shape if shape is None else shape,
            self.dtype if dtype is None else dtype,
            self.weak_type if weak_type is None else weak_type,
            sharding,
            vma=self.vma if vma is _KEEP else frozenset(vma),
            memory_space=self.memory_space if memory_space is _KEEP else memory_space,
            manual_unreduced=(
                self.manual_unreduced if manual_unreduced is _KEEP else frozenset(manual_unreduced)
            ),
            manual_reduced=(
                self.manual_reduced if manual_reduced is _KEEP else frozenset(manual_reduced)
            ),
        )

    def strip_weak_type(self) -> ShapedArray:
        """Return this aval with ``weak_type=False`` (``ShapedArray.strip_weak_type``)."""
        if not self.weak_type:
            return self
        return ShapedArray(
            self.shape,
            self.dtype,
            False,
            self.type_sharding,
            vma=self.vma,
            memory_space=self.memory_space,
            manual_unreduced=self.manual_unreduced,
            manual_reduced=self.manual_reduced,
        )

    def to_tangent_aval(self) -> ShapedArray:
        """Return the type of this type's tangents (``ShapedArray.to_tangent_aval``).

        Inexact types are their own tangent type; an extended dtype may name its own
        (``tangent_dtype``); every other type's tangents are ``float0`` of its shape.
        """
        if dtypes.issubdtype(self.dtype, np.inexact):
            return self
        own = getattr(self.dtype, "tangent_dtype", None)  # jax.experimental.primal_tangent_dtype
        return ShapedArray(self.shape, dtypes.float0 if own is None else own)

    def str_short(self, short_dtypes: bool = False) -> str:
        """Return ``'float32[3,4]'``, or with ``short_dtypes`` ``'f32[3,4]'`` (``str_short``).

        A dimension split over explicit mesh axes shows them: ``f32[8@x,4]``, ``f32[8@(x,y),4]``.
        """
        name = (
            dtypes.short_dtype_name(self.dtype) if short_dtypes else dtypes.dtype_name(self.dtype)
        )
        if self.memory_space is not _DEVICE:  # JAX: float32<host>[3]
            name += f"<{self.memory_space.name.lower()}>"
        if self.type_sharding is None:
            text = f"{name}[{','.join(map(str, self.shape))}]"
        else:
            dims = [_dim_str(n, e) for n, e in zip(self.shape, sharding_entries(self), strict=True)]
            text = f"{name}[{','.join(dims)}]"
        unreduced, reduced = unreduced_axes(self), reduced_axes(self)
        if self.vma or unreduced or reduced:
            order = getattr(getattr(self.type_sharding, "mesh", None), "axis_names", ())
            parts = [
                _axes_text(letter, axes, () if letter == "V" else order)
                for letter, axes in (("V", self.vma), ("U", unreduced), ("R", reduced))
                if axes
            ]
            text += "{" + ", ".join(parts) + "}"
        return text

    def __eq__(self, other: object) -> bool:
        return (
            type(other) is ShapedArray
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.weak_type == other.weak_type
            and self.type_sharding == other.type_sharding
            and self.vma == other.vma
            and self.memory_space is other.memory_space
            and self.manual_unreduced == other.manual_unreduced
            and self.manual_reduced == other.manual_reduced
        )

    def __hash__(self) -> int:
        return hash(
            (
                self.shape,
                self.dtype,
                self.weak_type,
                self.type_sharding,
                self.vma,
                self.memory_space,
                self.manual_unreduced,
                self.manual_reduced,
            )
        )

    def __str__(self) -> str:
        # As JAX's str(): long dtype names, weak types marked with "~" (float32[8,8@y],
        # ~float32[]); jaxpr text spells types with short names (pretty.py).
        return ("~" if self.weak_type else "") + self.str_short()

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapedArray({self.str_short()}{weak})"


#: How one element of an extended dtype is stored: ``physical_element_avals[type(dtype)](dtype)``
#: is the ShapedArray of one element's data (``uint32[2]`` for a threefry key). Packages that
#: define an extended dtype register it here (JAX's ``dtype._rules.physical_element_aval``).
physical_element_avals: dict[type, Callable[[Any], ShapedArray]] = {}
# A primal-tangent dtype's element is one value of its primal dtype.
physical_element_avals[dtypes.PrimalTangentDType] = lambda dtype: ShapedArray(
    (), dtype.primal_dtype
)


AbstractValue.register(ShapedArray)


def physical_aval(aval: ShapedArray) -> ShapedArray:
    """Return the aval of the data behind ``aval`` (JAX's ``core.physical_aval``).

    An aval of an extended dtype becomes its shape followed by the element's
    physical shape, in the element's physical dtype; a token's is ``bool[0]`` (what
    stands for a token at run time, as in JAX); any other aval is itself.
    """
    dtype = getattr(aval, "dtype", None)
    if dtype is None:  # the token's aval (tracecore.tokens)
        return ShapedArray((0,), np.dtype(bool))
    if not isinstance(dtype, dtypes.ExtendedDType):
        return aval
    try:
        element = physical_element_avals[type(dtype)](dtype)
    except KeyError:
        raise TypeError(f"the extended dtype {dtype} has no physical representation") from None
    out = ShapedArray(aval.shape + element.shape, element.dtype)
    # The element's dimensions are whole on every device: the sharding pads with None.
    return out if aval.type_sharding is None else with_type_sharding(out, aval.type_sharding)


class ShapeDtypeStruct:
    """A shape, dtype, optional sharding and weak type: an array's spec (``jax.ShapeDtypeStruct``).

    ``dtype`` is kept as given (float64 stays float64); :attr:`aval` gives the
    canonicalized :class:`ShapedArray` a value of this spec traces as.
    """

    __slots__ = ("shape", "dtype", "sharding", "weak_type")

    def __init__(self, shape: Any, dtype: Any, sharding: Any = None, weak_type: bool = False):
        if dtype is None:
            raise ValueError("ShapeDtypeStruct: dtype must be specified.")
        self.shape = _spec_shape(shape)
        self.dtype = dtypes.dtype(dtype)
        self.sharding = sharding
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def aval(self) -> ShapedArray:
        """Return the abstract value of this spec, with the dtype canonicalized."""
        aval = ShapedArray(
            self.shape,
            dtypes.canonicalize_dtype(self.dtype, allow_extended_dtype=True),
            self.weak_type,
        )
        # A sharding over explicit mesh axes is part of the type.
        return with_type_sharding(aval, getattr(self.sharding, "_type_sharding", None))

    def update(self, **changes: Any) -> ShapeDtypeStruct:
        """Return a copy with some fields replaced (``jax.ShapeDtypeStruct.update``)."""
        fields = {name: getattr(self, name) for name in self.__slots__}
        unknown = set(changes) - set(fields)
        if unknown:
            raise TypeError(f"ShapeDtypeStruct.update got unexpected fields {sorted(unknown)}")
        return ShapeDtypeStruct(**{**fields, **changes})

    def _key(self) -> tuple[Any, ...]:
        return (self.shape, self.dtype, self.sharding, self.weak_type)

    def __eq__(self, other: object) -> bool:
        return type(other) is ShapeDtypeStruct and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        sharding = "" if self.sharding is None else f", sharding={self.sharding!r}"
        weak = ", weak_type=True" if self.weak_type else ""
        dtype = dtypes.dtype_name(self.dtype)
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={dtype}{sharding}{weak})"

    __str__ = __repr__


# --------------------------------------------------------------------------
# get_aval
# --------------------------------------------------------------------------

#: Functions from a value to its abstract value, keyed by the value's type.
#: Looked up by exact type first, then along the type's MRO.
aval_handlers: dict[type, Callable[[Any], Any]] = {}


def register_aval_handler(typ: type, handler: Callable[[Any], Any]) -> None:
    """Make ``get_aval`` use ``handler(x)`` for values of type ``typ`` and its subclasses.

    Counterpart of JAX's ``core.pytype_aval_mappings[typ] = handler``.
    """
    aval_handlers[typ] = handler


def get_aval(x: Any) -> Any:
    """Return the abstract value of ``x`` (``jax.typeof`` / JAX's ``core.get_aval``).

    numpy arrays and scalars give a ShapedArray of the canonicalized dtype;
    Python int/float/complex give a weakly typed 0-d ShapedArray (an int out
    of the canonical range raises OverflowError); objects with an ``aval``
    attribute (tracers, device arrays) give that. Anything else raises
    TypeError.
    """
    handler = aval_handlers.get(type(x))
    if handler is not None:
        return handler(x)
    if not isinstance(x, type):  # a class's `aval` would be a descriptor
        aval = getattr(x, "aval", None)
        if aval is not None:
            return aval
    for base in type(x).__mro__[1:]:
        handler = aval_handlers.get(base)
        if handler is not None:
            return handler(x)
    reject_jax_array_protocol(x)
    raise TypeError(f"Argument '{x}' of type {type(x)} is not a valid JAX type")


def reject_jax_array_protocol(x: Any) -> None:
    """Raise JAX's ValueError when ``x`` is no array but has ``__jax_array__``.

    As in JAX, such objects are not converted where a value's type is taken
    (jit arguments, lax operands, transformation inputs); jnp functions, array
    constructors and operators convert them.
    """
    if getattr(x, "__jax_array__", None) is not None:
        raise ValueError(
            "Triggering __jax_array__() during abstractification is no longer supported. To "
            "avoid this error, either explicitly convert your object using "
            "jax.numpy.array(), or register your object as a pytree."
        )


def _numpy_aval(x: np.ndarray | np.generic) -> ShapedArray:
    return ShapedArray(x.shape, dtypes.canonicalize_dtype(_checked_dtype(x.dtype)))


def _python_scalar_aval(x: bool | int | float | complex) -> ShapedArray:
    dt = dtypes.python_scalar_dtype(x)
    if dt.kind in "iu":
        dtypes.check_int_range(int(x), dt)  # type: ignore[arg-type]  # a bool or int here
    # Python bools are strongly typed in JAX; ints, floats and complexes are weak.
    return ShapedArray((), dt, weak_type=not isinstance(x, bool))


register_aval_handler(np.ndarray, _numpy_aval)
register_aval_handler(np.generic, _numpy_aval)
dtypes.on_narrow_dtypes_loaded(_index_supported_dtypes)
_index_supported_dtypes()
for _scalar_type in (bool, int, float, complex):
    register_aval_handler(_scalar_type, _python_scalar_aval)
register_aval_handler(ShapeDtypeStruct, lambda s: s.aval)
