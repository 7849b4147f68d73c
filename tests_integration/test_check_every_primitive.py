"""check_primitive over every registered primitive (``primitive_cases.TABLE``).

Every ``Primitive`` reachable from modjax's modules must have an entry or a stated
exclusion: a new primitive without one fails ``test_every_primitive_is_in_the_table``.
Each entry is its own test (pytest-xdist spreads them), with few examples of fixed
operand types, so the programs one primitive compiles are shared between its examples.
"""

from __future__ import annotations

import functools
import importlib
import os
import pkgutil

import pytest
from primitive_cases import MODES, TABLE, Entry, Excluded, cases

import modjax
from modjax.testing import check_primitive, rules_of
from modjax.tracecore.core import Primitive


@functools.cache
def registered() -> dict[str, Primitive]:
    """Every Primitive bound to a name in one of modjax's modules, by name."""
    found: dict[str, Primitive] = {}
    for info in pkgutil.walk_packages(modjax.__path__, "modjax."):
        if info.name.startswith("modjax.testing"):
            continue
        for value in vars(importlib.import_module(info.name)).values():
            if isinstance(value, Primitive):
                other = found.setdefault(value.name, value)
                assert other is value, f"two primitives are named {value.name!r}"
    return found


def test_every_primitive_is_in_the_table():
    names = set(registered())
    missing = sorted(names - set(TABLE))
    assert not missing, f"primitives with neither a case entry nor an exclusion: {missing}"
    assert not sorted(set(TABLE) - names), "entries of primitives that no longer exist"
    for name, entry in TABLE.items():
        assert isinstance(entry, Entry | Excluded), name
        if isinstance(entry, Excluded):
            assert entry.reason, name
        elif entry.modes is not None:  # modes left out say why, and are rules it has
            left_out = set(MODES) - set(entry.modes)
            assert entry.why and left_out <= set(rules_of(registered()[name])), name


CHECKED = sorted(name for name, entry in TABLE.items() if isinstance(entry, Entry))


@pytest.mark.parametrize("name", CHECKED)
def test_rules_agree_with_the_implementation(name):
    prim = registered()[name]
    entry = TABLE[name]
    checked = check_primitive(
        prim,
        cases(prim, entry),
        modes=MODES if entry.modes is None else entry.modes,
        linear_argnums=entry.linear_argnums,
        jvp_argnums=entry.jvp_argnums,
        batch_argnums=entry.batch_argnums,
        # The thorough profile's count, else the entry's few (compiles dominate).
        max_examples=None
        if os.environ.get("HYPOTHESIS_PROFILE") == "thorough"
        else entry.max_examples,
    )
    assert "abstract_eval" in checked
