"""The samplers of modjax.random (jax.random's distributions), gathered from their modules.

``_continuous`` holds uniform, normal and their transforms, ``_discrete``
the integer and boolean samplers, ``_gamma`` the gamma primitive and the
samplers built on it.
"""

from ._continuous import *  # noqa: F403
from ._continuous import __all__ as _continuous_all
from ._discrete import *  # noqa: F403
from ._discrete import __all__ as _discrete_all
from ._gamma import *  # noqa: F403
from ._gamma import __all__ as _gamma_all

__all__ = sorted(_continuous_all + _discrete_all + _gamma_all)
