"""Record JAX's key operations as known answers for test_random_keys.py.

Run with a JAX 0.10 install (not a modjax dependency):
    python random_keys_reference_gen.py  # writes random_keys_reference.json beside it

Each record is (operation, arguments, expected uint32/unsigned data as nested
lists). Seeds are recorded with x64 off and on; the implementations are
threefry2x32 (the default, partitionable) and rbg / unsafe_rbg.
"""

import json
import pathlib

import jax
import numpy as np
from jax import random


def _data(x):
    return np.asarray(x).tolist()


def _seed_value(spec):
    kind, value = spec
    return value if kind == "int" else np.dtype(kind).type(value)


SEEDS_X32 = [
    ("int", 0),
    ("int", 1),
    ("int", 42),
    ("int", -1),
    ("int", -5),
    ("int", 2**31 - 1),
    ("int", -(2**31)),
    ("int", 2**32 + 5),
    ("int", 2**40),
    ("int", 2**63 - 1),
    ("int", -(2**63)),
    ("int32", -5),
    ("uint32", 4000000000),
    ("int8", -1),
    ("int16", 300),
    ("uint8", 200),
]
SEEDS_X64 = [
    ("int", 2**40 + 3),
    ("int", -1),
    ("int", 2**63 - 1),
    ("int", -(2**63)),
    ("int", 2**32 + 5),
    ("int64", -7),
    ("uint64", 2**64 - 1),
    ("int32", -5),
]
SPLIT_NUMS = [2, 3, 1, [2, 3], [4, 1, 2]]
FOLD_DATA = [("int", 0), ("int", 7), ("int", 2**32 - 1), ("int8", -1), ("int", 123456)]
BITS = [
    ([], "uint32"),
    ([3], "uint32"),
    ([5], "uint32"),
    ([2, 3], "uint32"),
    ([7], "uint8"),
    ([2, 5], "uint16"),
    ([4, 3], "uint8"),
    ([64], "uint32"),
]


def record():
    out = {"seed_x32": [], "seed_x64": [], "split": [], "fold_in": [], "bits": [], "bits64": []}
    out["nested"] = []
    for impl in ["threefry2x32", "rbg", "unsafe_rbg"]:
        for spec in SEEDS_X32:
            k = random.key(_seed_value(spec), impl=impl)
            out["seed_x32"].append([impl, list(spec), _data(random.key_data(k))])
        for seed in [0, 42]:
            k = random.key(seed, impl=impl)
            for num in SPLIT_NUMS:
                arg = tuple(num) if isinstance(num, list) else num
                out["split"].append([impl, seed, num, _data(random.key_data(random.split(k, arg)))])
            for spec in FOLD_DATA:
                folded = random.fold_in(k, _seed_value(spec))
                out["fold_in"].append([impl, seed, list(spec), _data(random.key_data(folded))])
            for shape, dtype in BITS:
                b = random.bits(k, tuple(shape), np.dtype(dtype))
                out["bits"].append([impl, seed, shape, dtype, _data(b)])
        # A tree of operations: split, pick, fold, split again, draw.
        k = random.split(random.fold_in(random.split(random.key(3, impl=impl))[1], 5), 4)[2]
        out["nested"].append([impl, _data(random.key_data(k)), _data(random.bits(k, (4,)))])
    # lax.rng_bit_generator directly, and under vmap (JAX's rule draws from the first key).
    keys = np.arange(8, dtype=np.uint32).reshape(2, 4)
    out["rng_bit_generator"] = [
        [dtype, _data(jax.lax.rng_bit_generator(keys[1], (5,), np.dtype(dtype))[1])]
        for dtype in ["uint8", "uint16", "uint32"]
    ]
    new_keys, vbits = jax.vmap(lambda k: jax.lax.rng_bit_generator(k, (3,)))(keys)
    out["rng_bit_generator_vmap"] = [_data(new_keys), _data(vbits)]
    jax.config.update("jax_enable_x64", True)
    for impl in ["threefry2x32", "rbg"]:
        for spec in SEEDS_X64:
            k = random.key(_seed_value(spec), impl=impl)
            out["seed_x64"].append([impl, list(spec), _data(random.key_data(k))])
        for shape in [[], [3], [2, 3]]:
            b = random.bits(random.key(0, impl=impl), tuple(shape), np.uint64)
            out["bits64"].append([impl, 0, shape, "uint64", _data(b)])
    jax.config.update("jax_enable_x64", False)
    return out


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("random_keys_reference.json")
    path.write_text(json.dumps({"jax_version": jax.__version__, **record()}, indent=None) + "\n")
    print(f"wrote {path}")
