"""The key operations of jax.random: constructors, split, fold_in, bits, key data.

Typed keys (``key(0)``) are arrays of the extended dtype ``key<fry>`` (see
``_prng``: the dtype, the key array class and the key primitives). Legacy keys
(``PRNGKey(0)``) are raw uint32 arrays of shape ``(..., 2)``; every function
taking a key accepts both, and returns keys of the kind it was given, as JAX
does. ``check_key`` turns either into typed keys (legacy data is wrapped with
``random_wrap``); the samplers use it with ``random_bits``, ``split`` and
``fold_in``.
"""

from __future__ import annotations

import operator
import warnings
from collections.abc import Sequence

import numpy as np

from modjax.runtime import clear_caches
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import canonicalize_shape
from modjax.tracecore.config import config
from modjax.tracecore.core import Tracer, to_aval

from ._prng import (
    KeyTy,
    PRNGKeyArray,
    PRNGSpec,
    default_prng_impl,
    is_key_dtype,
    prng_key,  # noqa: F401  (re-exported: the key dtypes' abstract type)
    prngs,
    random_bits_p,
    random_clone_p,
    random_fold_in_p,
    random_seed_p,
    random_split_p,
    random_unwrap,
    random_wrap,
    resolve_prng_impl,
)

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


def key_dtype(impl_spec=None) -> KeyTy:
    """Return the dtype of typed keys of an implementation (jax.random.key_dtype)."""
    return KeyTy(resolve_prng_impl(impl_spec))


# --- checking keys -------------------------------------------------------------------------------


# Defined here, next to their only reader (check_key).
legacy_prng_key = config.define_enum_option(
    "legacy_prng_key",
    "allow",
    ("allow", "warn", "error"),
    env_var="MODJAX_LEGACY_PRNG_KEY",
    help="What passing raw uint32 keys to modjax.random does (jax_legacy_prng_key).",
)
enable_custom_prng = config.define_bool_option(
    "enable_custom_prng",
    False,
    env_var="MODJAX_ENABLE_CUSTOM_PRNG",
    help="Key functions return typed keys even for raw key input (jax_enable_custom_prng).",
)
_LEGACY_MESSAGE = (
    "Legacy uint32 key array passed as key to jax.random function. Please create keys "
    "using jax.random.key(). If use of a raw key array was intended, set "
    'jax_legacy_prng_key="allow".'
)


def _legacy_key_used() -> None:
    """Apply ``jax_legacy_prng_key`` (and ``jax_enable_custom_prng``) to a raw key, as JAX."""
    if legacy_prng_key.value == "error":
        raise ValueError(_LEGACY_MESSAGE)
    if legacy_prng_key.value == "warn":
        warnings.warn(_LEGACY_MESSAGE, stacklevel=4)
    elif enable_custom_prng.value:
        warnings.warn(
            "Raw arrays as random keys to jax.random functions are deprecated. "
            "Assuming valid threefry2x32 key for now.",
            FutureWarning,
            stacklevel=4,
        )


def _is_arraylike(x) -> bool:
    if isinstance(x, Tracer | np.ndarray | np.generic | int | float | complex | bool):
        return True
    return hasattr(x, "aval") or hasattr(x, "__jax_array__")


def check_key(key, name: str, *, allow_batched: bool = True) -> PRNGKeyArray:
    """Return ``key`` (typed, or legacy uint32[..., 2] data) as a typed key array.

    The counterpart of JAX's ``random._check_prng_key``: legacy data is checked
    (dtype uint32, trailing key shape) and wrapped for the default
    implementation, raising JAX's TypeError for bad data or a non-array. With
    ``allow_batched=False``, a key array of non-scalar shape raises JAX's
    ValueError naming ``name``.
    """
    if is_key_dtype(getattr(key, "dtype", None)):
        typed = key
    elif _is_arraylike(key):
        typed = random_wrap(key, default_prng_impl())
        _legacy_key_used()
    else:
        raise TypeError(f"unexpected PRNG key type {type(key)}")
    if not allow_batched and typed.ndim:
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{np.shape(key) if not hasattr(key, 'shape') else tuple(key.shape)} != (). "
            "Use jax.vmap for batching."
        )
    return typed


def _is_typed(key) -> bool:
    return is_key_dtype(getattr(key, "dtype", None))


def _returned(was_typed: bool, keys):
    """Give back typed keys for typed input, raw data for legacy input (JAX's convention).

    With ``jax_enable_custom_prng`` on, typed keys always (as JAX).
    """
    return keys if was_typed or enable_custom_prng.value else random_unwrap(keys)


# --- internal key operations (for the samplers) --------------------------------------------------


def random_bits(key, bit_width: int, shape: tuple[int, ...]):
    """Return unsigned bits of ``shape`` and ``bit_width`` from a key (JAX's ``prng.random_bits``).

    ``key`` is what ``check_key`` returns (or any key); a key array of shape
    ``K`` gives bits of shape ``K + shape``, one stream per key. Bit-exact with
    ``jax.random.bits(key, shape, uint{bit_width})``.
    """
    typed = check_key(key, "random_bits")
    shape = canonicalize_shape(shape)
    return random_bits_p.bind(typed, bit_width=int(bit_width), shape=shape)


def key_data(keys):
    """Return the uint32 data under keys: shape ``keys.shape + key_shape`` (jax.random.key_data)."""
    return random_unwrap(check_key(keys, "key_data"))


def split(key, num: int | Sequence[int] = 2):
    """Split a key into ``num`` new keys along a new leading axis (jax.random.split).

    ``num`` may be a shape (a tuple of ints). A typed key gives typed keys, a
    legacy key gives legacy uint32 data.
    """
    typed = check_key(key, "split", allow_batched=False)
    shape = canonicalize_shape(tuple(num) if isinstance(num, Sequence) else (operator.index(num),))
    return _returned(_is_typed(key), random_split_p.bind(typed, shape=shape))


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
    out = random_fold_in_p.bind(typed, _uint32_scalar(data))
    return _returned(_is_typed(key), out)


# --- public key constructors and accessors -------------------------------------------------------


def _check_offset(value) -> None:
    if value is not None and not isinstance(value, int):
        raise ValueError(
            f"new int config value must be None or of type int, got {value} of type {type(value)}"
        )


# Defined here, next to its only reader. A jitted key(seed) adds the offset in its program:
# a change drops every cache (JAX puts the option in its jit cache key).
random_seed_offset = config.define_option(
    "random_seed_offset",
    0,
    env_var="MODJAX_RANDOM_SEED_OFFSET",
    parse=int,
    validator=_check_offset,
    help="Offset to all random seeds, e.g. the argument of key() (jax_random_seed_offset).",
    on_update=lambda _value: clear_caches(),
)


def _seed(ctor_name: str, seed, impl_spec) -> PRNGKeyArray:
    impl = resolve_prng_impl(impl_spec)
    if _is_typed(seed):
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
    if random_seed_offset.value:
        from ..lax.elementwise import add

        seed = add(seed, random_seed_offset.value)  # in the seed's dtype, wrapping as JAX's
    return random_seed_p.bind(seed, impl=impl)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Create a typed PRNG key (a scalar key array) from an integer seed (jax.random.key).

    ``impl`` (or ``dtype``: a key dtype or a name) picks the implementation;
    otherwise ``jax_default_prng_impl`` does. Seeds are Python ints (up to 64
    bits, the low 32 with x64 off), numpy or traced integers; ``jax_random_seed_offset``
    is added to them.
    """
    if dtype is not None:
        if impl is not None:
            raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
        impl = dtype
    return _seed("key", seed, impl)


def PRNGKey(seed, *, impl=None):  # noqa: N802 - JAX's public name
    """Create a legacy PRNG key: raw uint32 key data from an integer seed (jax.random.PRNGKey).

    With ``jax_enable_custom_prng`` on, a typed key (as JAX).
    """
    return _returned(False, _seed("PRNGKey", seed, impl))


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
    impl = check_key(keys, "key_impl").dtype._impl
    return impl.name if prngs.get(impl.name) is impl else PRNGSpec(impl)


def clone(key):
    """Return a fresh copy of a key, unconsumed for key reuse checking (jax.random.clone).

    Legacy uint32 keys are returned unchanged (they are not checked).
    """
    return random_clone_p.bind(key) if _is_typed(key) else key


def bits(key, shape=(), dtype=None, *, out_sharding=None):
    """Sample uniform unsigned-integer bits of ``shape`` (jax.random.bits).

    ``dtype`` is an unsigned integer dtype (default uint32, uint64 with x64);
    ``out_sharding`` the result's sharding.
    """
    if out_sharding is not None:
        from modjax.sharding import reshard  # noqa: PLC0415 - only programs that shard need it
        from modjax.sharding.constraint import placed_out_sharding  # noqa: PLC0415

        out = bits(key, shape, dtype)
        out_sharding = placed_out_sharding(out_sharding, "bits", out, [to_aval(key)])
        return out if out_sharding is None else reshard(out, out_sharding)
    typed = check_key(key, "bits", allow_batched=False)
    if dtype is None:
        dt = dtypes.default_uint_dtype()
    else:
        from ._sampler_args import user_dtype

        dt = user_dtype(dtype)
    if not dtypes.issubdtype(dt, np.unsignedinteger):
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dt}")
    shape = canonicalize_shape((shape,) if isinstance(shape, int | np.integer) else shape)
    return random_bits_p.bind(typed, bit_width=dt.itemsize * 8, shape=shape)
