"""XLA's own random number generators: ``rng_bit_generator`` (stateless) and ``rng_uniform``.

``rng_bit_generator`` lowers to ``stablehlo.rng_bit_generator`` with the
platform's default algorithm (or Threefry / Philox). Its state is a
``uint32[4]`` key (also ``uint64[2]``), which the lowering bitcasts to the
``u64[2]`` XLA wants and back; 8- and 16-bit outputs are requested as is.
Under ``vmap`` a batch of keys draws all its bits from the first key, as
JAX's rule does (the other keys are returned unchanged): XLA's generator
has no batched form. These are the bits of the ``rbg`` and ``unsafe_rbg``
key implementations; unlike threefry they are not promised to be the same
across backends or XLA versions.

``rng_uniform`` is XLA's stateful ``stablehlo.rng`` (uniform in [a, b));
JAX discourages it and so do we. Neither has a derivative.
"""

from __future__ import annotations

import enum
from functools import partial

import numpy as np

from modjax.autodiff import defjvp_zero
from modjax.batching import batching_rules, moveaxis
from modjax.lowering import dtype_to_ir_type, hlo, ir, ir_constant, ir_type, register_lowering
from modjax.runtime import apply_primitive
from modjax.sharding.constraint import resharded_result
from modjax.tracecore import dtypes
from modjax.tracecore.abstract import ShapedArray, canonicalize_shape
from modjax.tracecore.core import Primitive, to_aval
from modjax.tracecore.parse import register_param_parser
from modjax.tracecore.pretty import register_param_printer

__all__ = [
    "RandomAlgorithm",
    "rng_bit_generator",
    "rng_bit_generator_p",
    "rng_uniform",
    "rng_uniform_p",
]

_U32 = np.dtype(np.uint32)
_U64 = np.dtype(np.uint64)
_OUT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


class RandomAlgorithm(enum.IntEnum):
    """Which algorithm ``rng_bit_generator`` uses (jax.lax.RandomAlgorithm)."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


_ALGORITHM_NAMES = {
    RandomAlgorithm.RNG_DEFAULT: "DEFAULT",
    RandomAlgorithm.RNG_THREE_FRY: "THREE_FRY",
    RandomAlgorithm.RNG_PHILOX: "PHILOX",
}

# --- rng_bit_generator ---------------------------------------------------------------------------


def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm):
    if not ((key.shape == (4,) and key.dtype == _U32) or (key.shape == (2,) and key.dtype == _U64)):
        raise TypeError(
            f"rng_bit_generator: the key must be uint32[4] or uint64[2], got "
            f"{key.dtype}{list(key.shape)}"
        )
    return [ShapedArray(key.shape, key.dtype), ShapedArray(shape, dtype)]


def _rng_bit_generator_lowering(ctx, key, *, shape, dtype, algorithm):
    key_aval = ctx.avals_in[0]
    u64_pair = ir.RankedTensorType.get([2], dtype_to_ir_type(_U64))
    if key_aval.dtype == _U32:
        # Two uint32 words make one uint64 (a bitcast of the trailing axis of a [2, 2] view).
        pairs = hlo.reshape(ir_type(ShapedArray((2, 2), _U32)), key)
        key = hlo.bitcast_convert(u64_pair, pairs)
    attr = hlo.RngAlgorithmAttr.get(_ALGORITHM_NAMES[RandomAlgorithm(algorithm)])
    new_key, bits = hlo.RngBitGeneratorOp(
        u64_pair, ir_type(ShapedArray(shape, dtype)), attr, key
    ).results
    if key_aval.dtype == _U32:
        pairs = hlo.bitcast_convert(ir_type(ShapedArray((2, 2), _U32)), new_key)
        new_key = hlo.reshape(ir_type(key_aval), pairs)
    return [new_key, bits]


def _rng_bit_generator_batching_rule(args, dims, *, shape, dtype, algorithm):
    (keys,), (bdim,) = args, dims
    if bdim is None:
        return rng_bit_generator_p.bind(keys, shape=shape, dtype=dtype, algorithm=algorithm), [
            None,
            None,
        ]
    from .indexing import dynamic_update_slice
    from .structural import expand_dims, squeeze
    from .structural import slice as lax_slice

    keys = moveaxis(keys, bdim, 0)
    size = keys.shape[0]
    first = squeeze(lax_slice(keys, (0, 0), (1, keys.shape[1])), (0,))
    new_key, bits = rng_bit_generator_p.bind(
        first, shape=(size, *shape), dtype=dtype, algorithm=algorithm
    )
    zero = np.int32(0)
    new_keys = dynamic_update_slice(keys, expand_dims(new_key, (0,)), (zero, zero))
    return [new_keys, bits], [0, 0]


rng_bit_generator_p = Primitive("rng_bit_generator")
rng_bit_generator_p.multiple_results = True
rng_bit_generator_p.def_abstract_eval(_rng_bit_generator_abstract_eval)
rng_bit_generator_p.def_impl(partial(apply_primitive, rng_bit_generator_p))
register_lowering(rng_bit_generator_p, _rng_bit_generator_lowering)
defjvp_zero(rng_bit_generator_p)
batching_rules[rng_bit_generator_p] = _rng_bit_generator_batching_rule
# Printed by name as JAX prints it (algorithm=RNG_DEFAULT), and read back as the enum.
register_param_printer(rng_bit_generator_p, "algorithm", lambda a: RandomAlgorithm(a).name)
register_param_parser(rng_bit_generator_p, "algorithm", lambda text: RandomAlgorithm[text])


def rng_bit_generator(
    key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *, out_sharding=None
):
    """Return ``(new_key, bits)``: XLA's stateless bit generator (jax.lax.rng_bit_generator).

    ``key`` is uint32[4] (or uint64[2]); ``dtype`` an unsigned integer dtype
    (uint64 needs x64). The bits depend on the platform's algorithm.
    ``out_sharding`` (a NamedSharding, or a PartitionSpec on the current mesh)
    is the sharding of the bits.
    """
    shape = canonicalize_shape(shape)
    dt = np.dtype(dtype)
    if dt not in _OUT_DTYPES or dtypes.canonicalize_dtype(dt) != dt:
        raise TypeError(f"rng_bit_generator: unsupported dtype {dt}")
    new_key, bits = rng_bit_generator_p.bind(
        key, shape=shape, dtype=dt, algorithm=RandomAlgorithm(algorithm)
    )
    return new_key, resharded_result(bits, out_sharding, "rng_bit_generator", [to_aval(key)])


# --- rng_uniform -------------------------------------------------------------------------------


def _rng_uniform_abstract_eval(a, b, *, shape):
    if a.dtype != b.dtype:
        raise ValueError(
            f"Arguments to rng_uniform must have identical dtypes, got {a.dtype} and {b.dtype}."
        )
    if a.shape != () or b.shape != ():
        raise ValueError(
            f"Arguments to rng_uniform must be scalars; got shapes {a.shape} and {b.shape}."
        )
    return ShapedArray(shape, a.dtype, a.weak_type and b.weak_type)


def _rng_uniform_lowering(ctx, a, b, *, shape):
    dims = ir_constant(np.asarray(shape, np.int64))
    return hlo.rng(a, b, dims, hlo.RngDistributionAttr.get("UNIFORM"))


rng_uniform_p = Primitive("rng_uniform")
rng_uniform_p.def_abstract_eval(_rng_uniform_abstract_eval)
rng_uniform_p.def_impl(partial(apply_primitive, rng_uniform_p))
register_lowering(rng_uniform_p, _rng_uniform_lowering)
defjvp_zero(rng_uniform_p)


def rng_uniform(a, b, shape):
    """Return XLA's stateful uniform numbers in ``[a, b)`` of ``shape`` (jax.lax.rng_uniform).

    ``a`` and ``b`` are scalars of one dtype. Discouraged, as in JAX: use
    ``modjax.random``.
    """
    return rng_uniform_p.bind(a, b, shape=canonicalize_shape(shape))
