"""PRNG keys: typed key arrays, legacy uint32 keys, and the key operations (jax.random's keys).

A key implementation (``PRNGImpl``) is a set of functions on raw key data of
one key (``seed``, ``split``, ``fold_in``, ``random_bits``) and the shape of
that data: ``(2,)`` for threefry2x32, ``(4,)`` for rbg and unsafe_rbg.

Typed keys (``key(0)``) are ``PRNGKeyArray`` values: a uint32 data array of
shape ``keys.shape + impl.key_shape`` together with the implementation,
seen from outside as an array of dtype ``key<fry>`` (a ``KeyTy``, subclass of
tracecore's ``ExtendedDType`` and of ``jax.dtypes.prng_key``) and of the
leading shape. Design choice (instead of JAX's extended-dtype tracers): a key
array is a pytree node whose one child is its data, so it flows through
``jit``, ``vmap``, ``scan``, ``cond`` and every other transformation as its
uint32 data, with no rule of any primitive or lowering knowing about keys;
the key axes are the trailing ones, so the batch axes of ``vmap``/``scan``
(leading, or any non-negative axis of the key shape) are those of the data.
What this costs: a jaxpr shows the data (``u32[2]``), not ``key<fry>[]``,
``tree_leaves(key)`` gives the data, a negative ``in_axes`` counts from the
data's last axis, a key array is not a ``modjax.Array``, and ``jnp``
functions (``concatenate``, ``stack``, ``where``) reject key arrays (their
own methods index, reshape and transpose them).

The ``jax_default_prng_impl`` option is defined here, next to its reader.

Legacy keys (``PRNGKey(0)``) are raw uint32 arrays of shape ``(..., 2)``;
every function taking a key accepts both, and returns keys of the kind it was
given, as JAX does. ``check_key`` turns either into a ``PRNGKeyArray``; the
samplers use it with ``random_bits``, ``split`` and ``fold_in``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import canonicalize_shape
from modjax.tracecore.config import config
from modjax.tracecore.core import Tracer
from modjax.tracecore.tree_util import register_pytree_node

from ..lax._common import aval_of
from . import _rbg
from . import _threefry as tf

__all__ = [
    "PRNGKey",
    "PRNGKeyArray",
    "bits",
    "clone",
    "fold_in",
    "key",
    "key_data",
    "key_dtype",
    "key_impl",
    "split",
    "wrap_key_data",
]


# --- implementations ---------------------------------------------------------------------------


class PRNGImpl:
    """A PRNG implementation: functions on the raw data of one key (JAX's ``prng.PRNGImpl``).

    ``seed(s)`` makes key data from a scalar integer, ``split(k, shape)`` gives
    data of ``shape + key_shape``, ``fold_in(k, d)`` folds a uint32 scalar in,
    ``random_bits(k, bit_width, shape)`` gives unsigned bits. Each is compiled
    once per signature when called eagerly (inlined under a transformation).
    """

    def __init__(self, name, tag, key_shape, seed, split, fold_in, random_bits):
        self.name, self.tag, self.key_shape = name, tag, tuple(key_shape)
        self.seed = jit(seed, inline=True)
        self.split = jit(split, static_argnums=(1,), inline=True)
        self.fold_in = jit(fold_in, inline=True)
        self.random_bits = jit(random_bits, static_argnums=(1, 2), inline=True)

    def __repr__(self) -> str:
        return f"PRNGImpl({self.name!r}, key_shape={self.key_shape})"

    def __str__(self) -> str:
        return self.name


threefry_prng_impl = PRNGImpl(
    "threefry2x32",
    "fry",
    (2,),
    tf.threefry_seed,
    tf.threefry_split,
    tf.threefry_fold_in,
    tf.threefry_random_bits,
)

rbg_prng_impl = PRNGImpl(
    "rbg",
    "rbg",
    (4,),
    _rbg.rbg_seed,
    _rbg.rbg_split,
    _rbg.rbg_fold_in,
    _rbg.rbg_random_bits,
)
unsafe_rbg_prng_impl = PRNGImpl(
    "unsafe_rbg",
    "urbg",
    (4,),
    _rbg.rbg_seed,
    _rbg.unsafe_rbg_split,
    _rbg.unsafe_rbg_fold_in,
    _rbg.rbg_random_bits,
)

# Implementations by name, as the ``impl`` argument and ``jax_default_prng_impl`` name them.
prngs: dict[str, PRNGImpl] = {
    p.name: p for p in (threefry_prng_impl, rbg_prng_impl, unsafe_rbg_prng_impl)
}

# Defined here, next to its only reader (modjax.config reaches it once modjax.random is
# imported, as the metapackage does).
default_prng_impl_option = config.define_enum_option(
    "default_prng_impl",
    threefry_prng_impl.name,
    tuple(prngs),
    env_var="MODJAX_DEFAULT_PRNG_IMPL",
    help="The PRNG implementation of new keys (jax_default_prng_impl).",
)


def default_prng_impl() -> PRNGImpl:
    """Return the implementation ``jax_default_prng_impl`` names (JAX's ``default_prng_impl``)."""
    return prngs[default_prng_impl_option.value]


class PRNGSpec:
    """Specifies a PRNG key implementation (``jax.random.PRNGSpec``)."""

    __slots__ = ("_impl",)

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    def __repr__(self) -> str:
        return f"PRNGSpec({self._impl.name!r})"

    def __str__(self) -> str:
        return str(self._impl)

    def __hash__(self) -> int:
        return hash(self._impl)

    def __eq__(self, other) -> bool:
        return isinstance(other, PRNGSpec) and self._impl == other._impl


def resolve_prng_impl(spec: Any) -> PRNGImpl:
    """Return the implementation ``spec`` names: None (the default), a name, a dtype or spec."""
    if spec is None:
        return default_prng_impl()
    if isinstance(spec, PRNGImpl):
        return spec
    if isinstance(spec, PRNGSpec | KeyTy):
        return spec._impl
    if type(spec) is str:
        if spec in prngs:
            return prngs[spec]
        names = ", ".join(f'"{s}"' for s in prngs)
        raise ValueError(
            f'unrecognized PRNG implementation "{spec}". Did you mean one of: {names}?'
        )
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


# --- the key dtype -----------------------------------------------------------------------------


class prng_key(dtypes.extended):  # noqa: N801 - JAX's public name (jax.dtypes.prng_key)
    """Abstract scalar type of PRNG key dtypes (``jax.dtypes.prng_key``)."""


class KeyTy(dtypes.ExtendedDType):
    """The dtype of typed key arrays of one implementation, printed ``key<tag>`` (JAX's KeyTy)."""

    type = prng_key

    def __init__(self, impl: PRNGImpl):
        self._impl = impl

    @property
    def name(self) -> str:
        """``key<tag>``, as JAX names key dtypes."""
        return f"key<{self._impl.tag}>"

    @property
    def itemsize(self) -> int:
        """Bytes of key data per key."""
        return int(np.prod(self._impl.key_shape)) * 4

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return type(other) is KeyTy and self._impl is other._impl

    def __hash__(self) -> int:
        return hash((KeyTy, self._impl.name))


def key_dtype(impl=None) -> KeyTy:
    """Return the dtype of typed keys of an implementation (jax.random.key_dtype)."""
    return KeyTy(resolve_prng_impl(impl))


# --- typed key arrays ----------------------------------------------------------------------------

_BINARY_OPS = (
    "add sub mul truediv floordiv mod pow matmul and or xor lshift rshift lt le gt ge"
).split()
_UNARY_OPS = ("neg pos abs invert").split()
_OP_NAMES = {
    "truediv": "div",
    "floordiv": "floor_divide",
    "mod": "rem",
    "matmul": "dot_general",
    "invert": "not",
    "pos": "pos",
}


def _binary_error(op: str):
    name = _OP_NAMES.get(op, op)

    def method(self, other):
        raise TypeError(f"{name} does not accept dtypes {_dtype_names(self, other)}.")

    def reflected(self, other):
        raise TypeError(f"{name} does not accept dtypes {_dtype_names(other, self)}.")

    return method, reflected


def _unary_error(op: str):
    name = _OP_NAMES.get(op, op)

    def method(self):
        raise TypeError(f"{name} does not accept dtype {self.dtype}.")

    return method


def _dtype_names(*xs) -> str:
    names = []
    for x in xs:
        if isinstance(x, PRNGKeyArray):
            names.append(str(x.dtype))
        else:
            try:
                names.append(str(aval_of(x).dtype))
            except TypeError:
                names.append(type(x).__name__)
    return ", ".join(names)


class PRNGKeyArray:
    """An array of typed PRNG keys (what ``jax.random.key`` returns).

    Holds uint32 data of shape ``self.shape + impl.key_shape`` (a concrete
    Array or a tracer) and the implementation. Indexing, ``reshape``, ``T``,
    ``ravel`` and ``squeeze`` act on the key axes; arithmetic raises JAX's
    TypeError; ``==``/``!=`` compare whole keys.
    """

    __slots__ = ("_base_array", "_impl")
    __array_priority__ = 100

    def __init__(self, impl: PRNGImpl, data):
        self._impl = impl
        self._base_array = data

    # -- array attributes
    @property
    def dtype(self) -> KeyTy:
        """The key dtype, ``key<tag>`` of the implementation."""
        return KeyTy(self._impl)

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape of the array of keys (the data's shape without the key axes)."""
        return tuple(aval_of(self._base_array).shape[: -len(self._impl.key_shape)])

    @property
    def ndim(self) -> int:
        """The number of key axes."""
        return len(self.shape)

    @property
    def size(self) -> int:
        """The number of keys."""
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    # -- printing
    def __repr__(self) -> str:
        data = self._base_array
        if isinstance(data, Tracer):
            return f"PRNGKeyArray[{self.dtype}{list(self.shape)}] overlaying {data!r}"
        if not hasattr(data, "__array__"):  # a shape-only stand-in (eval_shape's result)
            return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype})"
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{np.asarray(data)}"

    __str__ = __repr__

    # -- shape manipulation on the key axes (the data keeps its trailing key axes)
    def _rewrap(self, data) -> PRNGKeyArray:
        return PRNGKeyArray(self._impl, data)

    def __getitem__(self, index) -> PRNGKeyArray:
        if not isinstance(index, tuple):
            index = (index,)
        if not any(i is Ellipsis for i in index):
            index = (*index, Ellipsis)
        index = (*index, *(slice(None),) * len(self._impl.key_shape))
        return self._rewrap(_jnp().asarray(self._base_array)[index])

    def reshape(self, *shape, order: str = "C") -> PRNGKeyArray:
        """Return the keys in a new shape (``jax.Array.reshape`` on key arrays)."""
        if len(shape) == 1 and not isinstance(shape[0], int | np.integer):
            shape = tuple(shape[0])
        shape = tuple(int(d) for d in shape)
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1]))
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        return self._rewrap(
            _jnp().reshape(self._base_array, shape + self._impl.key_shape, order=order)
        )

    def ravel(self) -> PRNGKeyArray:
        """Return the keys as one axis (``jax.Array.ravel``)."""
        return self.reshape((self.size,))

    flatten = ravel

    def squeeze(self, axis=None) -> PRNGKeyArray:
        """Remove size-1 key axes (``jax.Array.squeeze``)."""
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        return self._rewrap(_jnp().squeeze(self._base_array, _key_axes(axis, self.ndim)))

    def transpose(self, *axes) -> PRNGKeyArray:
        """Permute the key axes (``jax.Array.transpose``)."""
        if len(axes) == 1 and not isinstance(axes[0], int | np.integer):
            axes = tuple(axes[0])
        axes = tuple(axes) or tuple(reversed(range(self.ndim)))
        perm = (*_key_axes(axes, self.ndim), *range(self.ndim, aval_of(self._base_array).ndim))
        return self._rewrap(_jnp().transpose(self._base_array, perm))

    @property
    def T(self) -> PRNGKeyArray:  # noqa: N802 - the array attribute's name
        """The keys with their axes reversed."""
        return self.transpose()

    def block_until_ready(self) -> PRNGKeyArray:
        """Wait for the key data to be computed (``jax.Array.block_until_ready``)."""
        data = self._base_array
        if hasattr(data, "block_until_ready"):
            data.block_until_ready()
        return self

    def copy(self) -> PRNGKeyArray:
        """Return the same keys (key data is immutable)."""
        return self

    # -- comparisons compare whole keys
    def _compare(self, other, reduce_ne: bool):
        if not isinstance(other, PRNGKeyArray) or other.dtype != self.dtype:
            name = "ne" if reduce_ne else "eq"
            raise TypeError(f"{name} does not accept dtypes {_dtype_names(self, other)}.")
        jnp = _jnp()
        axes = tuple(range(-len(self._impl.key_shape), 0))
        if reduce_ne:
            return jnp.any(self._base_array != other._base_array, axis=axes)
        return jnp.all(self._base_array == other._base_array, axis=axes)

    def __eq__(self, other):
        return self._compare(other, reduce_ne=False)

    def __ne__(self, other):
        return self._compare(other, reduce_ne=True)

    __hash__ = None  # arrays are unhashable

    def __bool__(self):
        raise TypeError(f"bool does not accept dtype {self.dtype}.")

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer array."
        )


for _op in _BINARY_OPS:
    _method, _reflected = _binary_error(_op)
    setattr(PRNGKeyArray, f"__{_op}__", _method)
    if _op not in ("lt", "le", "gt", "ge"):
        setattr(PRNGKeyArray, f"__r{_op}__", _reflected)
for _op in _UNARY_OPS:
    setattr(PRNGKeyArray, f"__{_op}__", _unary_error(_op))
del _op, _method, _reflected

register_pytree_node(
    PRNGKeyArray,
    lambda k: ((k._base_array,), k._impl),
    lambda impl, children: PRNGKeyArray(impl, children[0]),
)


def _key_axes(axes, ndim: int):
    if isinstance(axes, int | np.integer):
        axes = (axes,)
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for array of dimension {ndim}")
        out.append(a % ndim)
    return tuple(out)


def _jnp():
    from modjax import numpy as jnp  # modjax.numpy imports nothing of random: no cycle

    return jnp


# --- checking keys -------------------------------------------------------------------------------


def _is_arraylike(x) -> bool:
    if isinstance(x, Tracer | np.ndarray | np.generic | int | float | complex | bool):
        return True
    return hasattr(x, "aval") or hasattr(x, "__jax_array__")


def random_wrap(data, impl: PRNGImpl) -> PRNGKeyArray:
    """Return a typed key array over raw key ``data``; raise JAX's TypeError for bad data."""
    aval = aval_of(data)
    if aval.dtype != np.uint32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={aval.dtype}"
        )
    n = len(impl.key_shape)
    if aval.shape[len(aval.shape) - n :] != impl.key_shape:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end with "
            f"{impl.key_shape}; got shape={aval.shape} for impl={impl!r}"
        )
    if not isinstance(data, Tracer) and not hasattr(data, "aval"):
        data = _jnp().asarray(data)
    return PRNGKeyArray(impl, data)


def check_key(key, name: str, *, allow_batched: bool = True) -> PRNGKeyArray:
    """Return ``key`` (typed, or legacy uint32[..., 2] data) as a typed key array.

    The counterpart of JAX's ``random._check_prng_key``: legacy data is checked
    (dtype uint32, trailing key shape) and wrapped for the default
    implementation, raising JAX's TypeError for bad data or a non-array. With
    ``allow_batched=False``, a key array of non-scalar shape raises JAX's
    ValueError naming ``name``.
    """
    if isinstance(key, PRNGKeyArray):
        typed = key
    elif _is_arraylike(key):
        typed = random_wrap(key, default_prng_impl())
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{np.shape(key) if not hasattr(key, 'shape') else tuple(key.shape)} != (). "
            "Use jax.vmap for batching."
        )
    return typed


def _returned(was_typed: bool, keys: PRNGKeyArray):
    """Give back typed keys for typed input, raw data for legacy input (JAX's convention)."""
    return keys if was_typed else keys._base_array


def _over_keys(fun, typed: PRNGKeyArray, *args):
    """Apply ``fun(data_of_one_key, *args)`` to every key of ``typed`` (vmapped over its axes)."""
    for _ in range(typed.ndim):
        fun = vmap(fun, in_axes=(0, *(None,) * len(args)))
    return fun(typed._base_array, *args)


# --- internal key operations (for the samplers) --------------------------------------------------


def random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return unsigned bits of ``shape`` and ``bit_width`` from a key (JAX's ``prng.random_bits``).

    ``key`` is what ``check_key`` returns (or any key); a key array of shape
    ``K`` gives bits of shape ``K + shape``, one stream per key. Bit-exact with
    ``jax.random.bits(key, shape, uint{bit_width})``.
    """
    typed = check_key(key, "random_bits")
    shape = canonicalize_shape(shape)
    return _over_keys(lambda k: typed._impl.random_bits(k, int(bit_width), shape), typed)


def key_data(keys):
    """Return the uint32 data under keys: shape ``keys.shape + key_shape`` (jax.random.key_data)."""
    return check_key(keys, "key_data")._base_array


def split(key, num: int | Sequence[int] = 2):
    """Split a key into ``num`` new keys along a new leading axis (jax.random.split).

    ``num`` may be a shape (a tuple of ints). A typed key gives typed keys, a
    legacy key gives legacy uint32 data.
    """
    typed = check_key(key, "split", allow_batched=False)
    shape = canonicalize_shape(tuple(num) if isinstance(num, Sequence) else (operator.index(num),))
    data = typed._impl.split(typed._base_array, shape)
    return _returned(isinstance(key, PRNGKeyArray), typed._rewrap(data))


def _uint32_scalar(data):
    if isinstance(data, Tracer) or hasattr(data, "aval"):
        from ..lax.elementwise import convert_element_type

        return convert_element_type(data, np.uint32)
    if type(data) is int or type(data) is bool:
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        return np.uint32(data)
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(data).astype(np.uint32)[()]


def fold_in(key, data):
    """Fold the integer ``data`` into a key, giving a new key (jax.random.fold_in).

    ``data`` is converted to uint32 (a Python int must fit in uint32; other
    integers wrap as in a cast).
    """
    typed = check_key(key, "fold_in", allow_batched=False)
    if np.ndim(data) if not hasattr(data, "shape") else len(data.shape):
        raise TypeError(
            "fold_in accepts a scalar, but was given an array of"
            f"shape {np.shape(data)} != (). Use jax.vmap for batching."
        )
    out = typed._impl.fold_in(typed._base_array, _uint32_scalar(data))
    return _returned(isinstance(key, PRNGKeyArray), typed._rewrap(out))


# --- public key constructors and accessors -------------------------------------------------------


def _seed(ctor_name: str, seed, impl_spec) -> PRNGKeyArray:
    impl = resolve_prng_impl(impl_spec)
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
    shape = tuple(seed.shape) if hasattr(seed, "shape") else np.shape(seed)
    if shape:
        raise TypeError(
            f"{ctor_name} accepts a scalar seed, but was given an array of "
            f"shape {shape} != (). Use jax.vmap for batching"
        )
    if isinstance(seed, int):
        # As JAX: a Python int goes through int64 (OverflowError past 64 bits), then to the
        # default integer type, so with x64 off only its low 32 bits count.
        seed = np.int64(seed).astype(dtypes.default_int_dtype())
    elif isinstance(seed, np.ndarray | np.generic):
        seed = np.asarray(seed).astype(dtypes.canonicalize_dtype(np.asarray(seed).dtype))[()]
    return PRNGKeyArray(impl, impl.seed(seed))


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Create a typed PRNG key (a scalar key array) from an integer seed (jax.random.key).

    ``impl`` (or ``dtype``: a key dtype or a name) picks the implementation;
    otherwise ``jax_default_prng_impl`` does. Seeds are Python ints (up to 64
    bits, the low 32 with x64 off), numpy or traced integers.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _seed("key", seed, impl)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's public name
    """Create a legacy PRNG key: raw uint32 key data from an integer seed (jax.random.PRNGKey)."""
    return _seed("PRNGKey", seed, impl)._base_array


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Wrap uint32 data (trailing axes: one key) into typed keys (jax.random.wrap_key_data)."""
    if dtype is not None:
        if impl is not None:
            raise ValueError(
                "Cannot specify both `impl` and `dtype` arguments to jax.random.wrap_key_data"
            )
        impl = dtype
    return random_wrap(key_bits_array, resolve_prng_impl(impl))


def key_impl(keys) -> str | PRNGSpec:
    """Return the name of the implementation of keys (jax.random.key_impl)."""
    impl = check_key(keys, "key_impl")._impl
    return impl.name if prngs.get(impl.name) is impl else PRNGSpec(impl)


def clone(key):
    """Return a copy of a key (jax.random.clone; a no-op without key reuse checking)."""
    return key


def bits(key, shape=(), dtype=None):
    """Sample uniform unsigned-integer bits of ``shape`` (jax.random.bits).

    ``dtype`` is an unsigned integer dtype (default uint32, uint64 with x64).
    """
    typed = check_key(key, "bits", allow_batched=False)
    if dtype is None:
        dt = dtypes.default_uint_dtype()
    else:
        from ._sampler_args import user_dtype

        dt = user_dtype(dtype)
    if not dtypes.issubdtype(dt, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    shape = canonicalize_shape((shape,) if isinstance(shape, int | np.integer) else shape)
    return typed._impl.random_bits(typed._base_array, dt.itemsize * 8, shape)
