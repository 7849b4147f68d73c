"""Libraries built on JAX run unchanged on modjax, with JAX 0.10.2's answers.

flax, equinox, chex, haiku, jaxopt, diffrax, lineax, optimistix, jmp, blackjax,
numpyro, dm-pix and jraph (with optax).

They import ``jax`` by name (and some import a few of JAX's private ``jax._src`` modules, which
``modjax._src`` provides), so this module installs ``modjax.install_jax_alias()`` for
its process. They are test-only dependencies: the ``libs`` hatch environment installs
them (without their dependency on the real jax) and runs this module; elsewhere it is
skipped. The programs are in ``library_cases.py``, JAX's answers in
``data/libraries_jax.json``.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from pathlib import Path

import pytest

_LIBRARIES = (
    "flax",
    "equinox",
    "chex",
    "optax",
    "haiku",
    "jaxopt",
    "diffrax",
    "lineax",
    "optimistix",
    "jmp",
    "blackjax",
    "numpyro",
    "dm_pix",
    "jraph",
)
_missing = [name for name in _LIBRARIES if importlib.util.find_spec(name) is None]
if _missing:
    pytest.skip(
        f"{_missing} not installed (the libs environment has them)", allow_module_level=True
    )
if "jax" not in sys.modules and importlib.util.find_spec("jax") is not None:
    pytest.skip(
        "a real jax is installed here; the libs environment (without it) runs these tests",
        allow_module_level=True,
    )

import modjax  # noqa: E402

modjax.install_jax_alias()

import library_cases  # noqa: E402
from recorded_answers import cpu_kind  # noqa: E402

RECORDED = json.loads((Path(__file__).parent / "data" / "libraries_jax.json").read_text())
# A case's "bits" digest is JAX's only on the processor kind that recorded it (XLA
# compiles for the host's vector extensions, and JAX's own bits move with them).
SAME_CPU = RECORDED["cpu"] == cpu_kind()


def assert_same(got, want, where):
    """Equal answers; floats within float32 rounding of a few operations."""
    assert type(got) is type(want) or {type(got), type(want)} <= {int, float}, (where, got, want)
    if isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for key in want:
            if key != "bits" or SAME_CPU:
                assert_same(got[key], want[key], f"{where}.{key}")
    elif isinstance(want, list):
        assert len(got) == len(want), (where, got, want)
        for i, (g, w) in enumerate(zip(got, want, strict=True)):
            assert_same(g, w, f"{where}[{i}]")
    elif isinstance(want, float):
        assert math.isclose(got, want, rel_tol=1e-4, abs_tol=1e-5), (where, got, want)
    else:
        assert got == want, (where, got, want)


def test_the_libraries_see_modjax():
    import chex
    import equinox
    import flax

    jax = sys.modules["jax"]
    assert jax is modjax and jax.__version__ == "0.10.2"
    assert flax.linen.Dense.__module__.startswith("flax")
    assert equinox.nn.MLP.__module__.startswith("equinox") and chex.assert_shape


@pytest.mark.parametrize("case", library_cases.CASES, ids=lambda case: case.__name__)
def test_case_answers_as_jax(case):
    assert_same(case(sys.modules["jax"]), RECORDED[case.__name__], case.__name__)
