"""jax.interpreters.pxla's public name and its deprecated ones, JAX-internal in modjax.

JAX 0.10 still serves fourteen deprecated names here, with a DeprecationWarning;
modjax serves them the same way, each raising NotImplementedError when used.
"""

from __future__ import annotations

import warnings
from typing import Any

from .._unsupported import Unsupported

__all__ = ["create_compile_options"]

create_compile_options = Unsupported(
    "jax.interpreters.pxla.create_compile_options",
    "JAX's builder of XLA compile options for its executables; modjax.runtime builds its own "
    "(jit(f).lower(...).compile(compiler_options=...) takes options)",
)

_INTERNAL = "JAX's sharded-execution internals, which modjax.runtime and modjax.sharding replace"
_DEPRECATED_WHY = {
    "thread_resources": (
        "the mesh of a `with mesh:` block; enter a mesh with jax.set_mesh(mesh) and read it "
        "with jax.sharding.get_abstract_mesh()"
    ),
    "MeshAxisName": "use the axis names of a jax.sharding.Mesh",
}
_DEPRECATED = (
    "ArrayMapping Index MeshAxisName MeshComputation MeshExecutable _UNSPECIFIED "
    "are_hlo_shardings_equal array_mapping_to_axis_resources global_aval_to_result_handler "
    "global_avals_to_results_handler global_result_handlers is_hlo_sharding_replicated "
    "op_sharding_to_indices thread_resources"
).split()


def __getattr__(name: str) -> Any:
    if name not in _DEPRECATED:
        raise AttributeError(f"module 'jax.interpreters.pxla' has no attribute {name!r}")
    warnings.warn(
        f"jax.interpreters.pxla.{name} is deprecated in JAX 0.10", DeprecationWarning, stacklevel=2
    )
    return Unsupported(f"jax.interpreters.pxla.{name}", _DEPRECATED_WHY.get(name, _INTERNAL))
