"""``jax.experimental.control_deps``: order side-effect-free computations in a program.

A control dependency is XLA's side-effecting ``control_dep`` custom call taking both
values, which keeps the scheduler from moving ``dst``'s computation before ``src``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from modjax.ffi import ffi_call

__all__ = ["control_dep", "schedule"]


def control_dep(src, dst) -> None:
    """Make ``dst``'s computation wait for ``src``'s (``jax.experimental.control_deps``)."""
    ffi_call("control_dep", (), has_side_effect=True)(src, dst)


def schedule(ops: Sequence) -> None:
    """Order the computations of ``ops`` as listed: a control dependency between neighbours."""
    for src, dst in zip(ops[:-1], ops[1:], strict=True):
        control_dep(src, dst)
