"""Arrays of extended dtypes (PRNG keys): a logical aval over a device Array of their data.

An ``ExtendedArray`` is what a user holds for an array whose dtype is one of
tracecore's ``ExtendedDType`` s (JAX's ``PRNGKeyArray`` is the one example):
its ``aval`` is the logical one (``key<fry>[3]``) and ``_base_array`` the
device Array of its physical data (``uint32[3,2]``), whose shape and dtype
tracecore's ``physical_aval`` gives. It subclasses jaxlib's ``Array`` base (as
JAX's key arrays do) and is registered with ``modjax.Array``, so
``isinstance(k, modjax.Array)`` holds.

Programs see only logical avals; lowering maps them to the physical types.
So jit and eager calls pass ``physical(x)`` to executables and wrap each
output of an extended aval with ``wrap(aval, data)``. Which class wraps is the
dtype's choice (``extended_array_types``, keyed by the dtype's class), so that
modjax.random's key arrays keep their own methods.

Operators and array methods go through tracecore's shared tables, as for
``Array``, so ``k[1:]``, ``k.reshape(...)`` and ``k + 1`` (a TypeError from
the primitive) behave as they do on tracers.
"""

from __future__ import annotations

import contextlib
import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from modjax.tracecore import core
from modjax.tracecore.abstract import register_aval_handler, with_type_sharding
from modjax.tracecore.basearray import Array as AbstractArray
from modjax.tracecore.dtypes import ExtendedDType
from modjax.tracecore.tokens import AbstractToken, Token

from . import _xla, cpp_dispatch
from .array import ArrayImpl, Shard, _ArrayMethods

__all__ = [
    "ExtendedArray",
    "call_checks",
    "committed_key_sharding",
    "checked_run",
    "jaxpr_checks",
    "extended_array_types",
    "register_extended_array_type",
    "is_extended_aval",
    "physical",
    "wrap",
]


class ExtendedArray(_xla.Array):
    """An array of an extended dtype: a logical ``aval`` over the device Array of its data."""

    __slots__ = ("aval", "_base_array", "__weakref__")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]  # compared elementwise

    def __init__(self, aval, base_array):
        self.aval = logical_typed_aval(aval, base_array)
        self._base_array = base_array

    def _with_base(self, base_array) -> ExtendedArray:
        """Return this array over other data (placed elsewhere); itself if it is the same."""
        return self if base_array is self._base_array else type(self)(self.aval, base_array)

    # --- metadata: read from ``aval`` as on every modjax Array, so the properties are shared
    # (a key array's itemsize is its dtype's: the bytes of one key's data) ---
    shape, dtype, weak_type, ndim, size, itemsize, nbytes = (
        vars(_ArrayMethods)[name]
        for name in ("shape", "dtype", "weak_type", "ndim", "size", "itemsize", "nbytes")
    )

    @property
    def sharding(self):
        """The sharding of the logical array: its data's, without the spec's entries for
        the element's dimensions (as JAX's key arrays report it)."""
        sharding = self._base_array.sharding
        return _logical_sharding(sharding, len(self.aval.shape)) or sharding

    @property
    def _sharding(self):
        return self._base_array._sharding

    @property
    def _committed(self) -> bool:
        return self._base_array._committed

    @property
    def committed(self) -> bool:
        return self._base_array._committed

    @property
    def device(self):
        return self._base_array.device

    def devices(self):
        """Return the devices holding the data."""
        return self._base_array.devices()

    @property
    def is_fully_addressable(self) -> bool:
        return self._base_array.is_fully_addressable

    @property
    def is_fully_replicated(self) -> bool:
        return self._base_array.is_fully_replicated

    def _over(self, data):
        """This array's kind of array over a piece of its data (a shard's)."""
        if data is None:
            return None
        logical = data.shape[: data.ndim - self._base_array.ndim + self.aval.ndim]
        return type(self)(type(self.aval)(logical, self.aval.dtype), data)

    def addressable_data(self, index: int):
        """Return this process's ``index``-th shard as an array of this dtype (as JAX's)."""
        return self._over(self._base_array.addressable_data(index))

    @property
    def addressable_shards(self) -> list:
        """The shards of this process's devices; ``index`` is into the data, as in JAX."""
        return [_with_data(s, self._over(s.data)) for s in self._base_array.addressable_shards]

    @property
    def global_shards(self) -> list:
        """Every shard, on every device; ``data`` is None for other processes' devices."""
        return [_with_data(s, self._over(s.data)) for s in self._base_array.global_shards]

    # --- state ---
    def is_deleted(self) -> bool:
        """Tell whether the data was deleted (donated or ``delete()``)."""
        return self._base_array.is_deleted()

    def delete(self) -> None:
        """Free the data."""
        self._base_array.delete()

    def _check_if_deleted(self) -> None:
        if self._base_array.is_deleted():
            raise RuntimeError(f"Array has been deleted with shape={self.aval.str_short()}.")

    def block_until_ready(self):
        """Wait until the data is computed; return self."""
        self._base_array.block_until_ready()
        return self

    def is_ready(self) -> bool:
        """Tell whether the data is computed."""
        return self._base_array.is_ready()

    def copy_to_host_async(self) -> None:
        """Start copying the data to the host."""
        self._base_array.copy_to_host_async()

    # --- sequence protocol ---
    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError("len() of unsized object")
        return self.aval.shape[0]

    def __iter__(self):
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.aval.shape[0]))

    # --- printing (JAX's: the logical type, then the data) ---
    def __repr__(self) -> str:
        return f"Array({self.aval.shape}, dtype={self.aval.dtype}) overlaying:\n{self._data_str()}"

    def __str__(self) -> str:
        return self.__repr__()

    def _data_str(self) -> str:
        return str(np.asarray(self._base_array))

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"A modjax array of dtype {self.aval.dtype} cannot be converted to a NumPy array."
        )

    def __bool__(self):
        raise TypeError(f"bool does not accept dtype {self.aval.dtype}.")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        fn = core.tracer_attributes.get(name)
        if fn is None:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        return fn(self)


_logical_typed: dict[tuple, Any] = {}


def committed_key_sharding(x: ExtendedArray) -> Any:
    """The sharding a committed key array insists on: its data's, where that shards only
    the logical dimensions (programs annotate it at the data's rank); else None."""
    base = x._base_array
    if not getattr(base, "_committed", False):
        return None
    sharding = base._sharding
    if getattr(sharding, "_sdy_mesh", None) is None:
        return None  # no mesh to annotate it on (XLA's choice): left to XLA
    return sharding if _logical_sharding(sharding, len(x.aval.shape)) is not None else None


def logical_typed_aval(aval, data) -> Any:
    """Return logical ``aval`` with the sharding in its type that its data's type says.

    The data's type spells the key's trailing dimensions too (``uint32[8@x,2]``); the
    logical type keeps the leading ones (``key<fry>[8@x]``), as JAX's key arrays on
    explicit mesh axes.
    """
    data_sharding = getattr(getattr(data, "aval", None), "type_sharding", None)
    if data_sharding is None and aval.type_sharding is None:
        return aval
    key = (aval, data_sharding)
    out = _logical_typed.get(key)
    if out is None:
        sharding = data_sharding and _logical_sharding(data_sharding, len(aval.shape))
        out = _logical_typed[key] = with_type_sharding(aval, sharding)
    return out


def _logical_sharding(sharding, ndim: int) -> Any:
    """``sharding`` of a key array's data with its spec cut to the ``ndim`` logical
    dimensions; None if it splits an element's own dimensions or has no spec."""
    spec = getattr(sharding, "spec", None)
    if spec is None:
        return None
    entries = tuple(getattr(spec, "partitions", spec))
    if any(e is not None for e in entries[ndim:]):
        return None
    if len(entries) <= ndim:
        return sharding
    return sharding.update(spec=spec.update(partitions=entries[:ndim]))


def _with_data(shard: Shard, data) -> Shard:
    return Shard(shard.device, shard.index, data, shard.replica_id)


def _make_operator(name: str, binary: bool):
    table = core.tracer_operators

    def forward(self, *args, **kwargs):
        fn = table.get(name)
        if fn is None:
            return NotImplemented if binary else None
        return fn(self, *args, **kwargs)

    forward.__name__ = name
    forward.__qualname__ = f"ExtendedArray.{name}"
    return forward


_OWN = set(vars(ExtendedArray)) | {"__format__", "__copy__", "__deepcopy__", "__hash__"}
for _name in core.OPERATOR_NAMES:
    if _name not in _OWN:
        setattr(
            ExtendedArray,
            _name,
            _make_operator(_name, _name in set(core.BINARY_OPERATOR_NAMES)),
        )
del _name

register_aval_handler(ExtendedArray, operator.attrgetter("aval"))
AbstractArray.register(ExtendedArray)  # isinstance(key, modjax.Array), as in JAX

#: The class that wraps data of each extended dtype, keyed by the dtype's class
#: (see ``register_extended_array_type``).
extended_array_types: dict[type, type] = {}


def register_extended_array_type(dtype_class: type, array_class: type) -> None:
    """Make ``array_class`` (an ExtendedArray subclass) the arrays of ``dtype_class``'s dtypes.

    The class also becomes a node of the C++ dispatch registry whose one child is
    the data (as JAX registers its key arrays), so jaxlib's jit fast path passes
    the data to the executable and rebuilds the arrays of the outputs.
    """
    extended_array_types[dtype_class] = array_class
    with contextlib.suppress(ValueError):  # ValueError: registered already
        cpp_dispatch.registry.register_node(
            array_class,
            lambda x: ((x._base_array,), x.aval),
            lambda aval, children: array_class(aval, children[0]),
        )


def is_extended_aval(aval) -> bool:
    """Tell whether ``aval`` has an extended dtype or is a token's (data under a wrapper)."""
    return type(aval) is AbstractToken or isinstance(aval.dtype, ExtendedDType)


def wrap(aval, data: ArrayImpl) -> Any:
    """Return the value of extended ``aval`` whose physical data is the Array ``data``:
    an ExtendedArray, or a Token for the token's aval."""
    if type(aval) is AbstractToken:
        return Token(data)
    cls = extended_array_types.get(type(aval.dtype), ExtendedArray)
    return cls(aval, data)


def physical(x: Any) -> Any:
    """Return the Array of data under ``x`` if it is an ExtendedArray or a Token, else ``x``."""
    if isinstance(x, ExtendedArray):
        return x._base_array
    return x._buf if type(x) is Token else x


#: Checks of programs on extended dtypes (modjax.random's key reuse checker registers
#: here while ``jax_debug_key_reuse`` is on). ``jaxpr_checks`` get every jaxpr that jit
#: traces; ``call_checks`` get ``(closed_jaxpr, arguments)`` before an eager jit call of
#: a program with extended avals and return a function of the call's flat outputs.
jaxpr_checks: list[Callable[[Any], None]] = []
call_checks: list[Callable[[Any, Any], Callable[[list], None]]] = []


def checked_run(executable, closed, leaves, placed) -> list:
    """Run ``executable`` on ``placed`` with the ``call_checks`` around it (if it needs them)."""
    if not (call_checks and executable.extended):
        return executable.run(placed)
    after = [check(closed, leaves) for check in call_checks]
    outs = executable.run(placed)
    for update in after:
        update(outs)
    return outs
