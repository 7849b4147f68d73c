"""Rules that join the layer-1 packages: autodiff, batching and lowering meet here.

A primitive is declared once, in its own package, and each transformation keeps
a table keyed by primitive. autodiff, batching and lowering are siblings in
layer 1 and may not import one another (design.md), so a rule that one of them
needs for a primitive another declares (a lowering of autodiff's ``add_any``, a
transpose of batching's ``moveaxis``, a batching rule of autodiff's
``custom_jvp_call``) can only be registered by the lowest package that sees
both: the runtime. They are collected here, one module per owner of the
primitives, and registered when ``modjax.runtime`` is imported:

* ``autodiff_primitives``: batching rules, lowerings and device impls of
  autodiff's primitives;
* ``batching_primitives``: JVP/transpose rules, lowerings and device impls of
  batching's structural primitives;
* ``collectives``: the same for batching's collectives (``psum_p``, ...);
* ``custom_vmap``: the JVP and lowering of batching's ``custom_vmap_call``;
* ``sum_batch``: the one primitive the runtime declares for these rules (the
  transposes need a sum, and only modjax-numpy above has one).

``docs/where-rules-live.md`` says where every other kind of rule lives.
"""

from . import (  # noqa: F401
    autodiff_primitives,
    batching_primitives,
    collectives,
    custom_vmap,
    sum_batch,
)

__all__: list[str] = []
