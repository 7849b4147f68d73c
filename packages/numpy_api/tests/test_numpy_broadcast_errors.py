"""jax.numpy's errors for operands that do not broadcast, against JAX 0.10.2's recorded answers.

Operands of different ranks are aligned by jax.numpy (``lax.broadcast_shapes``):
JAX raises ValueError ``Incompatible shapes for broadcasting: shapes=[...]``; operands
of one rank reach lax, whose TypeError names the primitive. ``where``, ``select``,
``broadcast_arrays`` and friends broadcast every operand (ValueError).
``broadcast_errors_jax.json`` holds the expressions and JAX's exceptions.
"""

from __future__ import annotations

import json
import pathlib
import types

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.batching import vmap
from modjax.runtime import jit

# The recorded expressions spell JAX's names; numpy_api's tests may not import the
# metapackage, so they get the same functions from the packages that define them.
jax = types.SimpleNamespace(jit=jit, vmap=vmap, numpy=jnp)

DATA = json.loads((pathlib.Path(__file__).parent / "broadcast_errors_jax.json").read_text())


@pytest.mark.parametrize("name", sorted(DATA["cases"]))
def test_error_is_jaxs(name):
    want = DATA["results"][name]
    with pytest.raises(Exception) as info:  # noqa: PT011 (the class is compared below)
        eval(DATA["cases"][name], {"jax": jax, "jnp": jnp, "np": np})
    assert (type(info.value).__name__, str(info.value)) == (want["error"], want["message"])
