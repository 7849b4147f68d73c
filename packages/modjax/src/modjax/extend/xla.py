"""``jax.extend.xla``: compiler passes over the HLO module of every compilation.

modjax compiles for the CPU only, where jaxlib runs the passes in-process; passes
registered for other platforms have no client to run on, as in JAX without them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

from modjax.runtime import _xla

__all__ = ["PipelineStage", "clear_hlo_module_transformation", "register_hlo_module_transformation"]


class PipelineStage(enum.Enum):
    """Where in XLA's pipeline a registered pass runs (``jax.extend.xla.PipelineStage``)."""

    PRE_SCHEDULER = 0
    POST_SCHEDULER = 1


def _platforms(platforms: Sequence[str] | str | None) -> list[str]:
    if platforms is None:
        return ["cpu"]
    if isinstance(platforms, str):
        return [platforms]
    return list(dict.fromkeys(platforms))


def _check_stage(stage) -> int:
    if not isinstance(stage, PipelineStage):
        raise TypeError(f"stage must be a PipelineStage enum, got {type(stage)}")
    return stage.value


def register_hlo_module_transformation(
    callback: Callable[[bytes], bytes | None],
    *,
    name: str,
    stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
    platforms: Sequence[str] | str | None = None,
) -> None:
    """Run ``callback`` on each compilation's HLO module (JAX's function of this name).

    ``callback`` gets a serialized ``HloModuleProto`` and returns a changed one, or None
    for no change; passes of one stage run in the order registered.
    """
    stage_value = _check_stage(stage)
    if "cpu" in _platforms(platforms):
        _xla.register_cpu_hlo_transform(name, stage_value, callback)


def clear_hlo_module_transformation(
    name: str,
    stage: PipelineStage = PipelineStage.PRE_SCHEDULER,
    platforms: Sequence[str] | str | None = None,
) -> bool:
    """Remove the pass ``name`` of ``stage``; return whether one was registered."""
    stage_value = _check_stage(stage)
    if "cpu" in _platforms(platforms):
        return _xla.clear_cpu_hlo_transform(name, stage_value)
    return False
