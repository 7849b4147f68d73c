"""Draws of ``jax.experimental.random.stateful_rng`` that modjax gives as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning a JSON-able answer.
``data/stateful_rng_jax.json`` holds JAX 0.10.2's answers, recorded by running this
file with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/stateful_rng_cases.py \\
        tests_integration/data/stateful_rng_jax.json

``test_stateful_rng.py`` runs the same cases on modjax and compares.
"""

from __future__ import annotations

import importlib

import numpy as np
from recorded_answers import raised, write_record


def _module(jax):
    return importlib.import_module(jax.__name__ + ".experimental.random")


def _listed(x):
    return np.asarray(x).tolist()


def _draws(jax):
    rng, jnp = _module(jax).stateful_rng(42), jax.numpy
    key_data = jax.random.key_data
    return {
        "repr": repr(rng),
        "uniform": [_listed(rng.uniform()), _listed(rng.uniform())],
        "random": _listed(rng.random(3)),
        "normal": _listed(rng.normal(1.0, 2.0, 2)),
        "integers": [_listed(rng.integers(10, size=3)), _listed(rng.integers(5, 9, (2,)))],
        "keys": [_listed(key_data(rng.key())), _listed(key_data(rng.key(2)))],
        "broadcast": _listed(rng.uniform(jnp.zeros(2), 1.0)),
        "dtypes": [
            str(rng.normal(dtype=jnp.float16).dtype),
            str(rng.integers(3, dtype=jnp.int8).dtype),
        ],
    }


def _transformations(jax):
    rng, jnp = _module(jax).stateful_rng(7), jax.numpy
    jitted = jax.jit(rng.uniform)
    return {
        "jit": [_listed(jitted()), _listed(jitted())],
        "vmap_split": _listed(jax.vmap(lambda r, x: x + r.uniform())(rng.split(3), jnp.zeros(3))),
        "spawn": [_listed(r.integers(0, 10, 2)) for r in rng.spawn(2)],
        "seeded_in_jit": _listed(jax.jit(lambda: _module(jax).stateful_rng(3).uniform())()),
        "after": _listed(rng.uniform()),
    }


def _errors(jax):
    module = _module(jax)
    rng = module.stateful_rng(0)
    return [
        raised(lambda: jax.jit(lambda: module.stateful_rng().uniform())()),
        raised(lambda: rng.split(2).key()),
        raised(lambda: module.StatefulPRNG(1, 2)),
        raised(lambda: module.StatefulPRNG(jax.random.key(0), 2)),
        str(jax.tree_util.tree_structure(rng)),
    ]


CASES = {"draws": _draws, "transformations": _transformations, "errors": _errors}


def record(jax) -> dict:
    """Every case's answer (what the data file holds)."""
    return {name: case(jax) for name, case in CASES.items()}


if __name__ == "__main__":
    write_record(record)
