"""``jax.experimental.layout``: memory layouts (``Layout``, ``Format``) and
``with_layout_constraint`` (modjax-runtime's ``layout`` and ``layout_constraint``)."""

from modjax.runtime.layout import Format, Layout
from modjax.runtime.layout_constraint import with_layout_constraint

__all__ = ["Format", "Layout", "with_layout_constraint"]
