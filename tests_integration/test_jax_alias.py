"""``modjax.install_jax_alias()``: ``import jax`` loads modjax.

The alias is process-wide, so one child interpreter runs every case in order (first
the refusals, then the alias itself) and reports what it saw; each test checks one
part of that report.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

CHILD = r"""
import importlib.abc, json, sys, types

report = {}
import modjax

# 1. Refused while something that looks like the real jax is imported.
for name in ("jax", "jax._src.core"):
    sys.modules[name] = types.ModuleType(name)
    try:
        modjax.install_jax_alias()
        report["refused " + name] = None
    except RuntimeError as err:
        report["refused " + name] = str(err)
    del sys.modules[name]

# 2. Installed (twice: the second call changes nothing), jax.X is modjax.X.
modjax.install_jax_alias()
modjax.install_jax_alias()
# The names are imported through importlib (the same import machinery and finders as
# the statement form), so that no file of the project spells an import of the real
# jax; optax and einops in the libs env use the statement form through the alias.
jax = importlib.import_module("jax")
jnp = importlib.import_module("jax.numpy")
for sub in ("jax.lax", "jax.tree_util", "jax.scipy.special"):
    importlib.import_module(sub)
nn, random = jax.nn, jax.random
ravel_pytree = importlib.import_module("jax.flatten_util").ravel_pytree
import modjax.numpy, modjax.scipy.special
report["same modules"] = [
    jax is modjax, jnp is modjax.numpy, jax.lax is modjax.lax,
    jax.scipy.special is modjax.scipy.special, random is modjax.random,
    nn is modjax.nn, ravel_pytree is modjax.flatten_util.ravel_pytree,
]
x = jax.jit(lambda x: jnp.sin(x) * 2)(jnp.ones(3))
report["jit through the alias"] = [isinstance(x, jax.Array), list(x.shape)]

# 3. A submodule modjax lacks.
try:
    importlib.import_module("jax.no_such_module")
except ImportError as err:
    report["missing"] = [type(err).__name__, err.name, str(err)]

# 4. A module that exists but fails on its own missing dependency keeps its error.
class Broken(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "modjax.broken":
            raise ModuleNotFoundError("No module named 'somedep'", name="somedep")
sys.meta_path.insert(1, Broken())
try:
    importlib.import_module("jax.broken")
except ImportError as err:
    report["broken"] = err.name
print(json.dumps(report))
"""


@pytest.fixture(scope="module")
def report():
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["jax", "jax._src.core"])
def test_refuses_when_a_real_jax_is_already_imported(report, name):
    message = report["refused " + name]
    assert message is not None and "a real 'jax' is already imported" in message
    assert name in message and "before anything imports jax" in message


def test_jax_and_its_submodules_are_the_modjax_modules(report):
    assert all(report["same modules"]), report["same modules"]
    assert report["jit through the alias"] == [True, [3]]


def test_a_submodule_modjax_lacks_raises_import_error_naming_it(report):
    kind, name, message = report["missing"]
    assert kind == "ModuleNotFoundError" and name == "jax.no_such_module"
    assert "modjax provides no module 'modjax.no_such_module'" in message


def test_an_error_inside_an_existing_module_is_not_hidden(report):
    assert report["broken"] == "somedep"
