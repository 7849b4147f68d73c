"""modjax's jaxprs and lowered modules against JAX 0.10.2's.

The cases are in ``jax_texts.py``, JAX's answers in ``data/jax_texts.json``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import pytest

import modjax

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jax_texts  # noqa: E402

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "jax_texts.json").read_text())


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(jax_texts.CASES)


@pytest.mark.parametrize("name", sorted(jax_texts.CASES))
def test_texts_read_as_jax_prints_them(name):
    got = jax_texts.texts(modjax, name)
    assert not jax_texts.agree(got, RECORDED[name], name), (got, RECORDED[name])
