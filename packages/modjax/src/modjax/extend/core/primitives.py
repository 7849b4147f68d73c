"""Every primitive modjax defines, by its Python name (``jax.extend.core.primitives``).

Gathered from the modules that define them, so a primitive added there is here
too. Most names are JAX's (``add_p``, ``scan_p``, ``jit_p``, ...); JAX's
``add_jaxvals_p`` and ``closed_call_p`` name modjax's ``add_any_p`` and
``call_p``. JAX's ``empty2_p`` and ``select_and_scatter_p`` are absent
(AttributeError), as modjax has no such primitive.
"""

from __future__ import annotations

import importlib

from modjax.tracecore.core import Primitive

# The modules defining primitives, lowest layer first (a later one's name wins).
_SOURCES = (
    "modjax.tracecore",
    "modjax.tracecore.call",
    "modjax.autodiff",
    "modjax.autodiff.tangents",
    "modjax.batching",
    "modjax.runtime",
    "modjax.sharding",
    "modjax.lax",
    "modjax.lax.linalg",
    "modjax.lax.state",
    "modjax.random._prng",
    "modjax.random._threefry",
    "modjax.random._gamma",
)

# JAX's names for primitives modjax names otherwise: its sum of tangents, and the call
# of a closed jaxpr (modjax's one call primitive holds a ClosedJaxpr).
_JAX_NAMES = {"add_jaxvals_p": "add_any_p", "closed_call_p": "call_p"}


def _gather() -> dict[str, Primitive]:
    found: dict[str, Primitive] = {}
    for name in _SOURCES:
        module = importlib.import_module(name)
        for attr in dir(module):
            value = getattr(module, attr, None)
            if attr.endswith("_p") and isinstance(value, Primitive):
                found[attr] = value
    for jax_name, ours in _JAX_NAMES.items():
        found[jax_name] = found[ours]
    return found


globals().update(_gather())
__all__ = sorted(name for name, value in globals().items() if isinstance(value, Primitive))
