"""``install_jax_alias``: let ``import jax`` (and ``jax.<submodule>``) load modjax.

Libraries written against JAX (optax, einops, ...) import ``jax`` by name. After
``modjax.install_jax_alias()`` a finder at the front of ``sys.meta_path`` answers
every ``jax`` or ``jax.X`` import with the module ``modjax`` or ``modjax.X``, the
same module object under both names, so ``jax.numpy is modjax.numpy`` and a
registration made through one name is seen through the other.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

_ALIAS = "jax"
_TARGET = "modjax"


class _ExistingModule(importlib.abc.Loader):
    """A loader whose module is one already imported (the modjax module aliased)."""

    def __init__(self, module):
        self.module = module

    def create_module(self, spec):
        return self.module

    def exec_module(self, module):
        # The aliased module ran its code when modjax imported it; running it again
        # under the new name would make a second copy of its primitives and tables.
        return None


class JaxAliasFinder(importlib.abc.MetaPathFinder):
    """Map ``jax`` → ``modjax`` and ``jax.X`` → ``modjax.X`` on import."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname != _ALIAS and not fullname.startswith(_ALIAS + "."):
            return None
        target_name = _TARGET + fullname[len(_ALIAS) :]
        try:
            module = importlib.import_module(target_name)
        except ModuleNotFoundError as err:
            # Only a missing modjax module is "modjax lacks it"; a missing dependency
            # inside an existing module is a real error and keeps its own message.
            if err.name is None or not (
                target_name == err.name or target_name.startswith(err.name + ".")
            ):
                raise
            raise ModuleNotFoundError(
                f"'import {fullname}': modjax provides no module '{target_name}' (the jax "
                f"alias installed by modjax.install_jax_alias() maps jax.X to modjax.X, and "
                f"'{fullname}' is not implemented in modjax yet)",
                name=fullname,
            ) from None
        return importlib.util.spec_from_loader(
            fullname, _ExistingModule(module), is_package=hasattr(module, "__path__")
        )


def _real_jax_modules() -> list[str]:
    target = sys.modules.get(_TARGET)
    return sorted(
        name
        for name, module in sys.modules.items()
        if (name == _ALIAS or name.startswith(_ALIAS + "."))
        and module is not None
        and not (name == _ALIAS and module is target)
        and not getattr(module, "__name__", "").startswith(_TARGET)
    )


def install_jax_alias() -> None:
    """Make ``import jax`` and ``import jax.<submodule>`` load modjax's modules.

    An explicit opt-in (JAX has no counterpart): call it before anything imports
    ``jax``, so that libraries written against JAX (optax, einops) run on modjax
    unchanged. A ``jax.X`` that modjax lacks raises ``ModuleNotFoundError`` (an
    ``ImportError``) saying so. Calling it again is harmless. Raises
    ``RuntimeError`` when a real ``jax`` is already imported, since two array
    systems would then meet in one program.
    """
    if any(isinstance(finder, JaxAliasFinder) for finder in sys.meta_path):
        return
    real = _real_jax_modules()
    if real:
        origin = getattr(sys.modules[real[0]], "__file__", None) or "?"
        raise RuntimeError(
            f"modjax.install_jax_alias(): a real 'jax' is already imported ({real[0]} from "
            f"{origin}); call install_jax_alias() before anything imports jax, or run "
            "without the alias"
        )
    modjax = importlib.import_module(_TARGET)
    sys.meta_path.insert(0, JaxAliasFinder())
    sys.modules[_ALIAS] = modjax
