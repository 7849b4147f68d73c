"""``jax._src.compiler.backend_compile_and_load``: the one call every compilation makes.

Libraries wrap it to watch or forbid compilations (chex's ``restrict_backends``
replaces it for a block, then puts it back). modjax's runtime compiles through
``modjax.runtime._xla.compile_and_load`` (same arguments: the backend, the
module, the devices, the options, the host callbacks), so this module reads and
writes that attribute: a function set here is what the runtime calls.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from modjax.runtime import _xla

_NAME = "backend_compile_and_load"


class _CompilerModule(types.ModuleType):
    def __getattr__(self, name: str) -> Any:
        if name == _NAME:
            return _xla.compile_and_load
        raise AttributeError(f"module 'jax._src.compiler' has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        if name == _NAME:
            _xla.compile_and_load = value
        else:
            super().__setattr__(name, value)


sys.modules[__name__].__class__ = _CompilerModule
