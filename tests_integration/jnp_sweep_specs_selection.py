"""Specs of the selecting and placing, insert/delete, bit packing and index functions, and the
exclusions of printing and I/O, for the jnp sweeps.

Index operands are drawn in range (or, for the modes that wrap or clamp, past both ends);
where a function writes at several positions the positions are distinct, since the
order of repeated writes is not part of what ``vmap`` or a gradient promises.
Conditions and masks are operands, so the vmap sweep batches them too, except where the
function needs them concrete (``compress`` without ``size``, ``delete`` without
``assume_unique_indices``), which take numpy constants.
"""

import numpy as np
from jnp_sweep_specs import add, bools, exclude, floats, ints

import modjax.numpy as jnp

S1, S2, SQ = (3,), (2, 3), (3, 3)


def distinct(n, k, lo=0):
    """Make ``k`` distinct int32 positions in ``[lo, lo + n)``."""
    return lambda rng: (rng.permutation(n)[:k] + lo).astype(np.int32)


# --- _selection -------------------------------------------------------------------------------

CHOICES = (floats(*S2), floats(*S1), floats(*S2))
add(
    "choose[wrap]",
    lambda a, *c: jnp.choose(a, c, mode="wrap"),
    ints(*S2, lo=-4, hi=6),
    *CHOICES,
    diff=(1, 2, 3),
    order=1,
)
add(
    "choose[clip]",
    lambda a, *c: jnp.choose(a, c, mode="clip"),
    ints(*S2, lo=-2, hi=4),
    *CHOICES,
    diff=(1, 2, 3),
)
add(
    "compress[size]",
    lambda c, a: jnp.compress(c, a, axis=1, size=2, fill_value=-1.0),
    bools(*S1),
    floats(*S2),
    diff=(1,),
)
add(
    "compress[static]",
    lambda a: jnp.compress(np.array([True, False, True]), a, axis=1),
    floats(*S2),
    diff=(0,),
)
add("compress[flat]", lambda a: jnp.compress(np.array([0, 1, 1, 0, 1]), a), floats(*S2))
add(
    "extract[size]",
    lambda c, a: jnp.extract(c, a, size=4, fill_value=7.0),
    bools(*S2),
    floats(*S2),
    diff=(1,),
)
add(
    "place",
    lambda a, m, v: jnp.place(a, m, v, inplace=False),
    floats(*S2),
    bools(*S2),
    floats(2),
    diff=(0, 2),
)
add("place[int]", lambda a, m: jnp.place(a, m, np.int32(9), inplace=False), ints(*S2), bools(*S2))
add(
    "put",
    lambda a, i, v: jnp.put(a, i, v, inplace=False),
    floats(*S2),
    distinct(6, 4),
    floats(4),
    diff=(0, 2),
)
add(
    "put[wrap]",
    lambda a, i, v: jnp.put(a, i, v, mode="wrap", inplace=False),
    floats(*S2),
    distinct(6, 3, lo=-7),
    floats(2),
    diff=(0, 2),
    order=1,
)
add(
    "fill_diagonal",
    lambda a, v: jnp.fill_diagonal(a, v, inplace=False),
    floats(*SQ),
    floats(*S1),
    diff=(0, 1),
)
add(
    "fill_diagonal[wide]",
    lambda a, v: jnp.fill_diagonal(a, v, inplace=False),
    floats(*S2),
    floats(),
    diff=(0, 1),
    order=1,
)

# --- _insert_delete ---------------------------------------------------------------------------

add(
    "insert",
    lambda a, v: jnp.insert(a, 1, v, axis=1),
    floats(*S2),
    floats(2),
    diff=(0, 1),
)
add(
    "insert[flat]",
    lambda a, v: jnp.insert(a, np.array([0, 3, 6]), v),
    floats(*S2),
    floats(),
    diff=(0, 1),
    order=1,
)
add(
    "insert[traced]",
    lambda a, i, v: jnp.insert(a, i, v, axis=1),
    floats(*S2),
    ints(2, lo=-4, hi=4),
    floats(2, 2),
    diff=(0, 2),
    order=1,
)
add("insert[slice]", lambda a: jnp.insert(a, slice(0, 3, 2), 5.0, axis=1), floats(*S2))
add("delete", lambda a: jnp.delete(a, 1, axis=1), floats(*S2), diff=(0,))
add("delete[mask]", lambda a: jnp.delete(a, np.array([True, False, True])), floats(*S1))
add(
    "delete[unique]",
    lambda a, i: jnp.delete(a, i, axis=1, assume_unique_indices=True),
    floats(*S2),
    distinct(3, 2),
    diff=(0,),
    order=1,
)

# --- _bits_pack -------------------------------------------------------------------------------

add("packbits", lambda a: jnp.packbits(a, axis=1), bools(2, 11))
add("packbits[little]", lambda a: jnp.packbits(a, bitorder="little"), ints(*S2, lo=0, hi=2))
add(
    "unpackbits",
    lambda a: jnp.unpackbits(a, axis=0, count=-3),
    ints(*S2, lo=0, hi=255, dtype=np.uint8),
)
add(
    "unpackbits[little]",
    lambda a: jnp.unpackbits(a, count=20, bitorder="little"),
    ints(*S1, lo=0, hi=255, dtype=np.uint8),
)

# --- _index_tricks ----------------------------------------------------------------------------

add(
    "ravel_multi_index[clip]",
    lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="clip"),
    ints(5, lo=-2, hi=5),
    ints(5, lo=-2, hi=5),
)
add(
    "ravel_multi_index[wrap]",
    lambda i, j: jnp.ravel_multi_index((i, j), (3, 4), mode="wrap", order="F"),
    ints(5, lo=-7, hi=7),
    ints(),
)
add("unravel_index", lambda i: jnp.unravel_index(i, (3, 4)), ints(5, lo=-14, hi=14))
exclude("takes a static size and a mask function, no array", "mask_indices")

# --- _io --------------------------------------------------------------------------------------

exclude("prints an array to a string", "array_repr", "array_str")
exclude("numpy's print options: no arrays", "get_printoptions", "printoptions", "set_printoptions")
exclude(
    "reads or writes bytes, text or files (concrete values only; fromfile and fromiter "
    "raise NotImplementedError as in JAX)",
    "frombuffer",
    "fromfile",
    "fromiter",
    "fromstring",
    "load",
    "save",
    "savez",
)
