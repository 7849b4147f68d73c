"""modjax has every public name of JAX 0.10.2's modules that it mirrors.

``jax_public_names.json`` lists, per module, the public names of JAX 0.10.2 (recorded
from a real JAX with the script kept inside the file). Each must exist on the modjax
module of the same path, unless a table below says why not: names another open
issue is adding (``OTHER_ISSUES``), or names of issue #14 still to do (``NOT_YET``).
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

RECORDED = json.loads((Path(__file__).parent / "jax_public_names.json").read_text())
MODULES = RECORDED["modules"]


def _table(*groups: tuple[str, str, str]) -> dict[str, dict[str, str]]:
    """(module, space-separated names, reason) groups -> {module: {name: reason}}."""
    table: dict[str, dict[str, str]] = {}
    for module, names, reason in groups:
        table.setdefault(module, {}).update(dict.fromkeys(names.split(), reason))
    return table


# Names that other open issues are adding right now, each named with its issue.
SHARDING = "#13 sharding"
OTHER_ISSUES = _table()

# Issue #14's names not done yet, with what is missing.
NOT_YET = _table(
    (
        "jax.lax",
        "eq_to_p le_to_p lt_to_p",
        "JAX-internal comparisons of symbolic dimension sizes (shape polymorphism), which "
        "modjax does not have",
    ),
    (
        "jax.lax",
        "select_and_scatter_p",
        "JAX-internal: no lax function binds it; modjax has select_and_scatter_add_p, the "
        "max/min-pool gradient JAX uses",
    ),
    (
        "jax.custom_derivatives",
        "remat_opt_p",
        "JAX-internal primitive of its custom_vjp-under-remat optimization; modjax's "
        "checkpoint of custom_vjp needs none",
    ),
)


def _modjax_module(jax_name: str):
    try:
        return importlib.import_module("modjax" + jax_name[len("jax") :])
    except ModuleNotFoundError:
        return None


def missing_names(jax_name: str) -> list[str]:
    """The names of ``jax_name`` that the modjax module lacks (all, if it is absent)."""
    module = _modjax_module(jax_name)
    return [n for n in MODULES[jax_name] if module is None or not hasattr(module, n)]


@pytest.mark.parametrize("jax_name", sorted(MODULES))
def test_modjax_has_every_public_name_of_the_jax_module(jax_name):
    excused = {**OTHER_ISSUES.get(jax_name, {}), **NOT_YET.get(jax_name, {})}
    unexplained = [n for n in missing_names(jax_name) if n not in excused]
    assert not unexplained, f"modjax{jax_name[3:]} lacks {unexplained}"


def test_the_tables_name_only_recorded_names():
    for table in (OTHER_ISSUES, NOT_YET):
        for jax_name, names in table.items():
            assert set(names) <= set(MODULES[jax_name]), (
                jax_name,
                set(names) - set(MODULES[jax_name]),
            )


def test_unknown_config_options_raise_naming_them():
    import modjax

    with pytest.raises(AttributeError, match="jax_no_such_option"):
        modjax.config.update("jax_no_such_option", True)
