"""Key reuse checking per key, as JAX tracks it: elements of key arrays, eagerly and traced.

Each case of ``CASES`` is a case of random_key_reuse_reference.json, where JAX 0.10.2's
verdict is recorded with ``jax_debug_key_reuse`` on (the script that recorded it is kept
in it as text, under ``recorded_with``, since modjax never imports jax): the same success,
or the same exception class and message.
"""

import json
import pathlib

import pytest

from modjax import lax, random
from modjax import numpy as jnp
from modjax.batching import vmap
from modjax.random import _key_reuse
from modjax.runtime import jit

REF = json.loads(pathlib.Path(__file__).with_name("random_key_reuse_reference.json").read_text())

# The recording script's table, with modjax's names.
normal = random.normal


def split(n=3):
    return random.split(random.key(0), n)


def both(ks, i, j):
    return normal(ks[i]), normal(ks[j])


CASES = {
    "elements_once": lambda: both(split(2), 0, 1),
    "element_twice": lambda: both(split(2), 0, 0),
    "negative_index_same_element": lambda: both(split(2), 0, -2),
    "unpacked": lambda: [normal(x) for x in split(2)],
    "unpacked_reused": lambda: (a := split(2)[0], normal(a), normal(a)),
    "iterate_twice": lambda: (ks := split(2), [normal(x) for x in ks], [normal(x) for x in ks]),
    "iterate_then_index": lambda: (ks := split(2), list(map(normal, ks)), normal(ks[1])),
    "vmap_twice": lambda: (ks := split(), vmap(normal)(ks), vmap(normal)(ks)),
    "bits_then_split_element": lambda: (ks := split(), random.bits(ks[0]), random.split(ks[0])),
    "element_2d": lambda: (
        ks := split(4).reshape(2, 2),
        normal(ks[0, 0]),
        normal(ks[0, 1]),
        normal(ks[0, 0]),
    ),
    "element_2d_distinct": lambda: (
        ks := split(6).reshape(2, 3),
        normal(ks[0, 1]),
        normal(ks[1, 1]),
        normal(ks[0, 2]),
    ),
    "slice_alias_then_index": lambda: (ks := split(2), x := ks[0], normal(x), normal(ks[0])),
    "traced_index_then_static": lambda: (ks := split(2), normal(ks[jnp.array(0)]), normal(ks[0])),
    "clone_of_taken_element": lambda: (ks := split(2), normal(ks[0]), normal(random.clone(ks[0]))),
    "reversed_then_element": lambda: (ks := split(2), normal(ks[::-1][0]), normal(ks[1])),
    "take_then_index": lambda: (ks := split(2), normal(jnp.take(ks, 0)), normal(ks[0])),
    "transpose_then_element": lambda: (ks := split(4).reshape(2, 2), ks.T, normal(ks[0, 0])),
    "row_then_element": lambda: (
        ks := split(6).reshape(2, 3),
        vmap(normal)(ks[0]),
        normal(ks[1, 0]),
        normal(ks[0, 0]),
    ),
    "reshaped_element_then_index": lambda: (
        ks := split(4),
        normal(ks.reshape(2, 2)[0, 0]),
        normal(ks[0]),
    ),
    "jit_partial_then_same": lambda: (
        ks := split(),
        jit(lambda ks: normal(ks[0]))(ks),
        normal(ks[1]),
        normal(ks[0]),
    ),
    "jit_partial_then_others": lambda: (
        ks := split(),
        jit(lambda ks: normal(ks[0]))(ks),
        normal(ks[1]),
        normal(ks[2]),
    ),
    "fold_in_twice": lambda: (
        k := random.key(0),
        random.fold_in(k, 1),
        random.fold_in(k, 2),
        normal(k),
    ),
    "key_data_then_use": lambda: (k := random.key(0), random.key_data(k), normal(k)),
    "broadcast_elements": lambda: (
        b := jnp.broadcast_to(random.key(0), (2,)),
        normal(b[0]),
        normal(b[1]),
    ),
    "jit_elements": lambda: jit(
        lambda k: (ks := random.split(k), normal(ks[0]) + normal(ks[1]))[1]
    )(random.key(0)),
    "jit_element_twice": lambda: jit(
        lambda k: (ks := random.split(k), normal(ks[0]) + normal(ks[0]))[1]
    )(random.key(0)),
    "jit_traced_index_then_static": lambda: jit(lambda ks, i: (normal(ks[i]), normal(ks[1])))(
        split(), 0
    ),
    "jit_take_then_static": lambda: jit(lambda ks: (normal(jnp.take(ks, 0)), normal(ks[1])))(
        split()
    ),
    "jit_reversed_then_element": lambda: jit(lambda ks: (normal(ks[::-1][0]), normal(ks[2])))(
        split()
    ),
    "jit_unpacked": lambda: jit(lambda k: [normal(x) for x in random.split(k, 2)])(random.key(0)),
    "jit_cond_elements": lambda: jit(
        lambda ks, p: lax.cond(p, lambda: normal(ks[0]), lambda: normal(ks[1])) + normal(ks[2])
    )(split(), True),
    "jit_cond_element_reused": lambda: jit(
        lambda ks, p: lax.cond(p, lambda: normal(ks[0]), lambda: normal(ks[1])) + normal(ks[1])
    )(split(), True),
}


def _outcome(f):
    try:
        f()
        return ["ok"]
    except Exception as e:  # noqa: BLE001 - the outcome is compared with JAX's
        return ["err", type(e).__name__, str(e).split("\n")[0]]


@pytest.mark.parametrize("name", sorted(CASES))
def test_key_reuse_verdicts_match_jax(name):
    with _key_reuse.debug_key_reuse(True):
        assert _outcome(CASES[name]) == REF["cases"][name]


def test_program_signatures_carry_per_key_masks():
    ks = random.split(random.key(0), 3)

    def first(ks):
        return random.normal(ks[0])

    sig = _key_reuse.jaxpr_signature(jit(first).trace(ks).jaxpr)
    ((index, mask),) = _key_reuse.sinks_of(sig)
    assert index == 0 and mask.tolist() == [True, False, False]
