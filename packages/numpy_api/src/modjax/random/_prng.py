"""PRNG implementations, the key dtype ``key<impl>``, key arrays and the key primitives.

The counterpart of JAX's ``jax._src.prng``. A ``PRNGImpl`` is a set of
functions on the raw data of one key (uint32 ``key_shape``: ``(1,)`` for
philox2x32, ``(2,)`` for threefry2x32 and philox4x32, ``(4,)`` for
threefry4x32, rbg and unsafe_rbg). A typed key array has the
extended dtype ``KeyTy(impl)`` (printed ``key<fry>``), registered with
tracecore's ``physical_element_avals`` so that lowering and runtime know its
data is ``uint32[*shape, *key_shape]``. Traced keys are tracers of that
dtype; concrete ones are ``PRNGKeyArray`` s (runtime's ``ExtendedArray`` over
the device Array of their data).

Every key operation is a primitive whose avals are key typed, so a jaxpr
reads ``key<fry>[]``: ``random_seed``, ``random_split``, ``random_fold_in``,
``random_bits``, ``random_wrap`` (data to keys) and ``random_unwrap`` (keys
to data). Each applies its implementation's function to every key of its
operand (vmapped over the key axes): eagerly on the data directly, under a
transformation by lowering that function on the physical avals. None has a
derivative; all batch.
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np

from modjax.autodiff import defjvp_zero
from modjax.batching import batching_rules, bdim_at_front, defvectorized, moveaxis, vmap
from modjax.lowering import lower_fun, register_lowering
from modjax.runtime import ExtendedArray, device_put, jit, register_extended_array_type
from modjax.tracecore import dtypes, source_info
from modjax.tracecore.abstract import ShapedArray, physical_aval, physical_element_avals
from modjax.tracecore.config import config
from modjax.tracecore.core import KeyReuseError, Primitive
from modjax.tracecore.parse import register_param_parser

from ..lax import structural as st
from . import _philox, _rbg
from . import _threefry as tf
from . import _threefry4x32 as tf4

__all__ = [
    "KeyTy",
    "PRNGImpl",
    "PRNGKeyArray",
    "PRNGSpec",
    "default_prng_impl",
    "is_key_dtype",
    "prng_key",
    "prngs",
    "random_bits_p",
    "random_clone_p",
    "random_fold_in_p",
    "random_seed_p",
    "random_split_p",
    "random_unwrap",
    "random_unwrap_p",
    "random_wrap",
    "random_wrap_p",
    "resolve_prng_impl",
]

_U32 = np.dtype(np.uint32)


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
        return self.tag  # as JAX: a jaxpr prints random_wrap[impl=fry]

    def __reduce__(self):
        # Pickled by name (key dtypes travel in serialized programs and pickled avals): the
        # process that loads it has the same registered implementations.
        if prngs.get(self.name) is not self:
            raise TypeError(f"cannot pickle the unregistered PRNG implementation {self!r}")
        return (registered_prng_impl, (self.name,))


def registered_prng_impl(name: str) -> PRNGImpl:
    """Return the registered implementation called ``name`` (what a pickled one loads as)."""
    return prngs[name]


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
    "rbg", "rbg", (4,), _rbg.rbg_seed, _rbg.rbg_split, _rbg.rbg_fold_in, _rbg.rbg_random_bits
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

philox2x32_prng_impl = PRNGImpl(
    "philox2x32",
    "phx2",
    (1,),
    _philox.philox2x32_seed,
    _philox.philox2x32_split,
    _philox.philox2x32_fold_in,
    _philox.philox2x32_random_bits,
)
philox4x32_prng_impl = PRNGImpl(
    "philox4x32",
    "phx4",
    (2,),
    _philox.philox4x32_seed,
    _philox.philox4x32_split,
    _philox.philox4x32_fold_in,
    _philox.philox4x32_random_bits,
)
threefry4x32_prng_impl = PRNGImpl(
    "threefry4x32",
    "fry4",
    (4,),
    tf4.threefry4x32_seed,
    tf4.threefry4x32_split,
    tf4.threefry4x32_fold_in,
    tf4.threefry4x32_random_bits,
)

#: Implementations by name, as the ``impl`` argument and ``jax_default_prng_impl`` name them,
#: in JAX's order of registration (the order its "Did you mean one of" message lists).
prngs: dict[str, PRNGImpl] = {
    p.name: p
    for p in (
        philox2x32_prng_impl,
        philox4x32_prng_impl,
        threefry_prng_impl,
        rbg_prng_impl,
        unsafe_rbg_prng_impl,
        threefry4x32_prng_impl,
    )
}

# Defined here, next to its only reader (modjax.config reaches it once modjax.random is
# imported, as the metapackage does).
default_prng_impl_option = config.define_enum_option(
    "default_prng_impl",
    threefry_prng_impl.name,
    # JAX's list, in its order (its error message shows it).
    ("threefry2x32", "threefry4x32", "rbg", "unsafe_rbg", "philox2x32", "philox4x32"),
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


physical_element_avals[KeyTy] = lambda dtype: ShapedArray(dtype._impl.key_shape, _U32)


def impl_from_tag(tag: str) -> PRNGImpl:
    """Return the implementation printed ``tag`` in jaxprs (``fry``: threefry2x32)."""
    for impl in prngs.values():
        if impl.tag == tag:
            return impl
    raise ValueError(f"no PRNG implementation has the tag {tag!r}")


# Jaxpr text names key dtypes key<tag> and implementations by their tag (impl=fry): both
# read back (tracecore's parse_jaxpr).
dtypes.register_extended_dtype_name("key", lambda tag: KeyTy(impl_from_tag(tag)))


def is_key_dtype(dtype: Any) -> bool:
    """Tell whether ``dtype`` is a typed-key dtype (``key<...>``)."""
    return type(dtype) is KeyTy


_keys_avals: dict[tuple, ShapedArray] = {}


def keys_aval(impl: PRNGImpl, shape: tuple[int, ...]) -> ShapedArray:
    """Return the (shared) aval of a key array of ``shape`` and implementation ``impl``."""
    key = (impl, shape)
    aval = _keys_avals.get(key)
    if aval is None:
        if len(_keys_avals) > 4096:
            _keys_avals.clear()
        aval = _keys_avals[key] = ShapedArray(shape, KeyTy(impl))
    return aval


# --- concrete key arrays -----------------------------------------------------------------------


class PRNGKeyArray(ExtendedArray):
    """An array of typed PRNG keys (what ``jax.random.key`` returns; a ``jax.Array``).

    ``shape`` counts keys; the uint32 data (``_base_array``) has the
    implementation's key shape after it. Indexing, reshaping, ``jnp.stack``
    and friends act on the key axes through the primitives' rules for
    extended dtypes; arithmetic raises JAX's TypeError; ``==``/``!=`` compare
    whole keys.
    """

    # ``_consumed``: False, or ``(mask, where)`` once keys were consumed while key reuse
    # checking is on: ``mask`` is True (every key) or a bool array of ``shape``, ``where`` the
    # line of the last consumption.
    __slots__ = ("_consumed",)

    def __init__(self, aval, base_array):
        super().__init__(aval, base_array)
        self._consumed = False

    @property
    def _impl(self) -> PRNGImpl:
        return self.aval.dtype._impl

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            "JAX array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "jax.random.key_data(arr) if you wish to extract the underlying integer array."
        )

    def __bool__(self):
        raise TypeError("key array cannot be converted to boolean.")

    def copy(self) -> PRNGKeyArray:
        """Return the same keys (key data is immutable)."""
        return self

    def __reduce__(self):
        # Pickled as its data and implementation (as JAX's key arrays pickle).
        return (random_wrap, (np.asarray(self._base_array), self._impl))

    def __iter__(self):
        # As JAX: the keys of the data's rows, fresh (iterating does not consume, and
        # consuming an element does not mark this array).
        if not self.aval.shape:
            raise TypeError("iteration over a 0-d key array")
        aval = keys_aval(self._impl, self.aval.shape[1:])
        return (PRNGKeyArray(aval, row) for row in self._base_array)

    def __eq__(self, other):
        return keys_equal(self, other, negate=False)

    def __ne__(self, other):
        return keys_equal(self, other, negate=True)

    __hash__ = None


#: Array methods and properties that have no meaning on keys: JAX's key arrays declare them
#: abstract, so calling one (with any arguments) raises NotImplementedError.
_ABSTRACT_METHODS = (
    "all any argmax argmin argpartition argsort astype byteswap choose clip compress conj "
    "conjugate cumprod cumsum diagonal dot item max mean min nonzero prod ptp repeat round "
    "searchsorted sort std sum to_device trace var view"
).split()
_ABSTRACT_PROPERTIES = ("flat", "imag", "real", "mT")


def _abstract(name: str):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Cannot call abstract method {name}")

    method.__name__ = method.__qualname__ = name
    return method


for _name in _ABSTRACT_METHODS:
    setattr(PRNGKeyArray, _name, _abstract(_name))
for _name in _ABSTRACT_PROPERTIES:
    setattr(PRNGKeyArray, _name, property(_abstract(_name)))
del _name

register_extended_array_type(KeyTy, PRNGKeyArray)


def keys_equal(a, b, *, negate: bool):
    """Compare whole keys elementwise (``==``/``!=`` on key arrays: JAX's ``eq``/``ne``)."""
    from modjax import numpy as jnp  # modjax.numpy imports nothing of random: no cycle

    return jnp.not_equal(a, b) if negate else jnp.equal(a, b)


def _keys_full(shape, fill_value, dtype):
    """Keys of ``shape``: a key repeated, or data filled with a scalar (JAX's ``full`` rule).

    ``jnp.zeros_like(keys)`` is keys whose data are zeros, ``ones_like`` ones,
    ``full_like(keys, k)`` the key ``k`` everywhere, as in JAX.
    """
    impl = dtype._impl
    physical_shape = (*shape, *impl.key_shape)
    if is_key_dtype(getattr(fill_value, "dtype", None)):
        data = random_unwrap(fill_value)
        n = np.ndim(data) if not hasattr(data, "aval") else data.aval.ndim
        dims = tuple(range(len(physical_shape) - n, len(physical_shape)))
        data = st.broadcast_in_dim(data, physical_shape, dims)
    else:
        data = st.full(physical_shape, fill_value, _U32)
    return random_wrap_p.bind(data, impl=impl)


st.extended_full[KeyTy] = _keys_full

# --- eager key reuse checking (see _key_reuse) --------------------------------------------------

#: Whether key reuse checking is on; set by ``_key_reuse`` when ``jax_debug_key_reuse`` changes.
reuse_checking = [False]


def fit_mask(mask, shape: tuple[int, ...]):
    """Return a consumption mask over keys of ``shape``: ``mask`` itself, or reshaped.

    A mask computed on a reshaped view keeps its row-major order; one of another
    size (a broadcast view) stands for all the keys.
    """
    if isinstance(mask, bool | np.bool_):
        return bool(mask)
    if mask.shape == shape:
        return mask
    if mask.size == math.prod(shape):
        return mask.reshape(shape)
    return bool(mask.any())


def merge_masks(a, b, shape: tuple[int, ...]):
    """Return the union of two consumption masks over keys of ``shape`` (True when all)."""
    merged = np.logical_or(fit_mask(a, shape), fit_mask(b, shape))
    return True if np.all(merged) else merged


def overlap(consumed, mask, shape: tuple[int, ...]) -> bool:
    """Tell whether ``mask`` touches a key the ``_consumed`` state ``consumed`` covers."""
    return bool(consumed) and bool(
        np.any(np.logical_and(fit_mask(consumed[0], shape), fit_mask(mask, shape)))
    )


def consume(keys, what: str, mask=True) -> None:
    """Mark the keys ``mask`` selects consumed by ``what``; raise KeyReuseError if one was."""
    if not isinstance(keys, PRNGKeyArray):
        return
    here = source_info.user_frame() or "an unknown line"
    shape = keys.aval.shape
    if overlap(keys._consumed, mask, shape):
        raise KeyReuseError(
            f"Previously-consumed key passed to {what} at index 0\n"
            f"  the key was first consumed at {keys._consumed[1]}\n"
            f"  and is consumed again at {here}"
        )
    previous = keys._consumed[0] if keys._consumed else False
    keys._consumed = (merge_masks(previous, mask, shape), here)


# --- the key primitives --------------------------------------------------------------------------


def _over_keys(fun, ndim: int):
    """``fun`` applied to every key of a key array with ``ndim`` key axes (vmapped)."""
    for _ in range(ndim):
        fun = vmap(fun)
    return fun


def _check_keys(name: str, aval) -> PRNGImpl:
    if not is_key_dtype(aval.dtype):
        raise TypeError(f"{name} takes a key array operand, got dtype {aval.dtype}")
    return aval.dtype._impl


def _physical_lowering(fun_of_avals):
    """A lowering rule that lowers ``fun_of_avals(*avals_in, **params)`` on physical avals.

    The function is given the logical input avals (to know key shapes and
    implementations) and returns the function on physical data to lower.
    """

    def rule(ctx, *operands, **params):
        fun = fun_of_avals(*ctx.avals_in, **params)
        physical_ctx = ctx.replace(avals_in=[physical_aval(a) for a in ctx.avals_in])
        return lower_fun(fun)(physical_ctx, *operands)

    return rule


def _declare(name: str, abstract_eval, impl, lowering):
    prim = Primitive(name)
    prim.def_abstract_eval(abstract_eval)
    prim.def_impl(impl)
    register_lowering(prim, lowering)
    defjvp_zero(prim)
    return prim


def _same_data_lowering(ctx, x, **_):
    return x


# random_seed: integer seeds of any shape -> keys of that shape.


def _seed_abstract_eval(seeds, *, impl):
    if dtypes.issubdtype(seeds.dtype, dtypes.extended) or seeds.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
    return keys_aval(impl, seeds.shape)


def _seed_physical(seeds, *, impl):
    return _over_keys(impl.seed, seeds.ndim)


def _seed_impl(seeds, *, impl):
    shape = np.shape(seeds) if not hasattr(seeds, "shape") else tuple(seeds.shape)
    data = _over_keys(impl.seed, len(shape))(seeds)
    return PRNGKeyArray(keys_aval(impl, shape), data)


random_seed_p = _declare(
    "random_seed", _seed_abstract_eval, _seed_impl, _physical_lowering(_seed_physical)
)
defvectorized(random_seed_p)
register_param_parser(random_seed_p, "impl", impl_from_tag)


# random_split: keys K -> keys K + shape.


def _split_abstract_eval(keys, *, shape):
    impl = _check_keys("random_split", keys)
    return keys_aval(impl, (*keys.shape, *shape))


def _split_physical(keys, *, shape):
    impl = keys.dtype._impl
    return _over_keys(lambda k: impl.split(k, shape), keys.ndim)


def _split_impl(keys, *, shape):
    if reuse_checking[0]:
        consume(keys, "random_split")
    impl = keys.dtype._impl
    data = _over_keys(lambda k: impl.split(k, shape), keys.ndim)(keys._base_array)
    return PRNGKeyArray(keys_aval(impl, (*keys.shape, *shape)), data)


random_split_p = _declare(
    "random_split", _split_abstract_eval, _split_impl, _physical_lowering(_split_physical)
)
defvectorized(random_split_p)


# random_fold_in: keys K and uint32 messages K (or either a scalar) -> keys K.


def _fold_in_shape(keys, msgs) -> tuple[int, ...]:
    if keys.shape == msgs.shape or not msgs.shape:
        return keys.shape
    if not keys.shape:
        return msgs.shape
    raise TypeError(
        f"random_fold_in got incompatible shapes: keys {keys.shape} and messages {msgs.shape}"
    )


def _fold_in_abstract_eval(keys, msgs):
    impl = _check_keys("random_fold_in", keys)
    if msgs.dtype != _U32:
        raise TypeError(f"random_fold_in messages must be uint32, got {msgs.dtype}")
    return keys_aval(impl, _fold_in_shape(keys, msgs))


def _fold_in_physical(keys, msgs):
    impl = keys.dtype._impl
    shape = _fold_in_shape(keys, msgs)
    n = len(impl.key_shape)

    def fold(data, m):
        # A scalar key or message meets every element of the other, mapped over the
        # other only, as JAX's iterated vmap does (unsafe_rbg's fold_in draws bits from
        # the message: a broadcast message would be a batched draw, another stream).
        if msgs.ndim == 0 and keys.ndim:
            return _over_keys(lambda d: impl.fold_in(d, m), keys.ndim)(data)
        if keys.ndim == 0 and msgs.ndim:
            return _over_keys(lambda x: impl.fold_in(data, x), msgs.ndim)(m)
        data = st.broadcast_in_dim(
            data, (*shape, *impl.key_shape), tuple(range(len(shape) - keys.ndim, len(shape) + n))
        )
        m = st.broadcast_in_dim(m, shape, tuple(range(len(shape) - msgs.ndim, len(shape))))
        return _over_keys(impl.fold_in, len(shape))(data, m)

    return fold


def _fold_in_impl(keys, msgs):
    keys_av = keys.aval
    msgs_av = ShapedArray(np.shape(msgs), _U32)
    data = _fold_in_physical(keys_av, msgs_av)(keys._base_array, msgs)
    return PRNGKeyArray(keys_aval(keys_av.dtype._impl, _fold_in_shape(keys_av, msgs_av)), data)


def _fold_in_batch(args, dims):
    size = next(x.shape[d] for x, d in zip(args, dims, strict=True) if d is not None)
    # An unbatched scalar stays a scalar that meets every batch member, as in JAX: the
    # implementation is then mapped over the other operand only (unsafe_rbg's fold_in
    # draws its bits from the message, and a batched message draws them differently).
    keys, msgs = (
        x if d is None and not np.ndim(x) else bdim_at_front(x, d, size)
        for x, d in zip(args, dims, strict=True)
    )
    return random_fold_in_p.bind(keys, msgs), 0


random_fold_in_p = _declare(
    "random_fold_in", _fold_in_abstract_eval, _fold_in_impl, _physical_lowering(_fold_in_physical)
)
batching_rules[random_fold_in_p] = _fold_in_batch


# random_bits: keys K -> unsigned bits K + shape.


def _bits_abstract_eval(keys, *, bit_width, shape):
    _check_keys("random_bits", keys)
    if bit_width not in tf.UINT_DTYPES:
        raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
    return ShapedArray((*keys.shape, *shape), tf.UINT_DTYPES[bit_width])


def _bits_physical(keys, *, bit_width, shape):
    impl = keys.dtype._impl
    return _over_keys(lambda k: impl.random_bits(k, bit_width, shape), keys.ndim)


def _bits_impl(keys, *, bit_width, shape):
    if reuse_checking[0]:
        consume(keys, "random_bits")
    return _bits_physical(keys.aval, bit_width=bit_width, shape=shape)(keys._base_array)


random_bits_p = _declare(
    "random_bits", _bits_abstract_eval, _bits_impl, _physical_lowering(_bits_physical)
)
defvectorized(random_bits_p)


# random_wrap / random_unwrap: between uint32 data and keys.


def _wrap_abstract_eval(data, *, impl):
    n = len(impl.key_shape)
    if data.dtype != _U32:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={data.dtype}"
        )
    if data.shape[len(data.shape) - n :] != impl.key_shape:
        raise TypeError(
            "JAX encountered invalid PRNG key data: expected key_data.shape to end with "
            f"{impl.key_shape}; got shape={data.shape} for impl={impl!r}"
        )
    return keys_aval(impl, data.shape[: len(data.shape) - n])


def _wrap_impl(data, *, impl):
    if not hasattr(data, "aval"):  # numpy data bound eagerly: on the device first
        data = device_put(np.asarray(data))
    aval = _wrap_abstract_eval(data.aval, impl=impl)
    return PRNGKeyArray(aval, data)


def _wrap_batch(args, dims, *, impl):
    (data,), (d,) = args, dims
    return random_wrap_p.bind(moveaxis(data, d, 0), impl=impl), 0


random_wrap_p = _declare("random_wrap", _wrap_abstract_eval, _wrap_impl, _same_data_lowering)
batching_rules[random_wrap_p] = _wrap_batch
register_param_parser(random_wrap_p, "impl", impl_from_tag)


def _unwrap_abstract_eval(keys):
    _check_keys("random_unwrap", keys)
    return physical_aval(keys)


random_unwrap_p = _declare(
    "random_unwrap", _unwrap_abstract_eval, operator.attrgetter("_base_array"), _same_data_lowering
)
defvectorized(random_unwrap_p)


# random_clone: the same keys, fresh for key reuse checking.


def _clone_impl(keys):
    return PRNGKeyArray(keys.aval, keys._base_array)


random_clone_p = _declare("random_clone", lambda keys: keys, _clone_impl, _same_data_lowering)
defvectorized(random_clone_p)


def random_wrap(data, impl: PRNGImpl):
    """Return typed keys over uint32 ``data`` (trailing axes: one key); JAX's ``random_wrap``."""
    if not hasattr(data, "aval"):
        from modjax import numpy as jnp

        data = jnp.asarray(data)
    return random_wrap_p.bind(data, impl=impl)


def random_unwrap(keys):
    """Return the uint32 data under typed keys (JAX's ``random_unwrap``)."""
    if not is_key_dtype(getattr(keys, "dtype", None)):
        raise TypeError(f"random_unwrap takes key array operand, got keys.dtype={keys.dtype}")
    return random_unwrap_p.bind(keys)
