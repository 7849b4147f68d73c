"""jax.experimental.random (``stateful_rng``) on modjax: JAX 0.10.2's draws and errors.

The cases are in ``stateful_rng_cases.py``, JAX's answers in
``data/stateful_rng_jax.json``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

import modjax
from modjax.experimental.random import stateful_rng

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import stateful_rng_cases  # noqa: E402

RECORDED = json.loads(
    (pathlib.Path(__file__).parent / "data" / "stateful_rng_jax.json").read_text()
)


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(stateful_rng_cases.CASES)


@pytest.mark.parametrize("name", sorted(stateful_rng_cases.CASES))
def test_stateful_rng_answers_as_jax(name):
    got = json.loads(json.dumps(stateful_rng_cases.CASES[name](modjax)))
    assert got == RECORDED[name]


def test_draws_advance_and_two_generators_of_one_seed_agree():
    a, b = stateful_rng(5), stateful_rng(5)
    first = [a.uniform() for _ in range(3)]
    assert len({float(x) for x in first}) == 3
    np.testing.assert_array_equal(first, [b.uniform() for _ in range(3)])
    assert stateful_rng().key().shape == ()  # seeded from numpy's entropy at the top level
