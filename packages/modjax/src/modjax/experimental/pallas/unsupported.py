"""The names of ``jax.experimental.pallas`` that modjax does not implement yet.

Each exists (so imports and ``hasattr`` work); calling one raises
NotImplementedError naming it. They belong to compiled (TPU/GPU) kernels,
meshes and semaphores, which interpret mode on CPU does not model.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "core_map",
    "delay",
    "estimate_cost",
    "get_global",
    "kernel",
    "lower_as_mlir",
    "pallas_call_p",
    "run_state",
    "select_ref",
    "semaphore",
    "semaphore_read",
    "semaphore_signal",
    "semaphore_wait",
    "with_scoped",
]


def _message(name: str) -> str:
    return f"jax.experimental.pallas.{name} is not implemented in modjax yet"


def _missing(name: str):
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(_message(name))

    refuse.__name__ = refuse.__qualname__ = name
    refuse.__doc__ = f"``jax.experimental.pallas.{name}``: not implemented in modjax yet."
    return refuse


core_map = _missing("core_map")
delay = _missing("delay")
estimate_cost = _missing("estimate_cost")
get_global = _missing("get_global")
kernel = _missing("kernel")
lower_as_mlir = _missing("lower_as_mlir")
run_state = _missing("run_state")
select_ref = _missing("select_ref")
semaphore_read = _missing("semaphore_read")
semaphore_signal = _missing("semaphore_signal")
semaphore_wait = _missing("semaphore_wait")
with_scoped = _missing("with_scoped")


class semaphore:  # noqa: N801  (JAX's name)
    """Pallas' semaphore dtype: not implemented in modjax yet."""

    def __init__(self, *args: Any, **kwargs: Any):
        raise NotImplementedError(_message("semaphore"))


class _PallasCallPrimitive:
    """Stands for JAX's ``pallas_call_p``: modjax's pallas_call is no primitive yet."""

    name = "pallas_call"

    def _refuse(self) -> NotImplementedError:
        return NotImplementedError(_message("pallas_call_p"))

    def bind(self, *args: Any, **params: Any) -> Any:
        raise self._refuse()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise self._refuse()

    def __repr__(self) -> str:
        return "pallas_call"


pallas_call_p = _PallasCallPrimitive()
