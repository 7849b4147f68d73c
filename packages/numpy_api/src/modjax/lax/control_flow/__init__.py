"""Structured control flow: higher-order primitives that hold jaxprs (jax.lax's control flow).

* ``conditionals``: ``cond`` and ``switch`` on ``cond_p``;
* ``loops``: ``while_loop`` and ``fori_loop`` on ``while_p``, ``scan`` and ``map`` on ``scan_p``;
* ``associative_scan``: parallel prefix scans written with lax primitives;
* ``solves``: ``custom_linear_solve`` and ``custom_root`` (implicit differentiation);
* ``platform``: ``platform_dependent`` (``platform_index`` and a ``cond``).

Each primitive's rules (abstract evaluation, eager implementation, lowering,
JVP, partial evaluation, transpose, batching, DCE) are registered in the
tables of tracecore, autodiff, batching and lowering by the module that
declares it; ``common`` holds the tracing of user functions and the type checks.
"""

from . import (
    cond_rules,  # noqa: F401  (registers rules)
    scan_autodiff,  # noqa: F401  (registers rules)
    scan_batching,  # noqa: F401  (registers rules)
    state_rules,  # noqa: F401  (registers rules: references in bodies)
    while_rules,  # noqa: F401  (registers rules)
)
from .associative_scan import *  # noqa: F403
from .conditionals import *  # noqa: F403
from .loops import *  # noqa: F403
from .platform import *  # noqa: F403
from .solves import *  # noqa: F403
