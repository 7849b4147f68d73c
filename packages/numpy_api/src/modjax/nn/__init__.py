"""modjax.nn: activation functions, softmax, normalization (the counterpart of ``jax.nn``).

Every function is written with modjax.numpy and lax primitives, so it works
eagerly, under ``jit``, ``vmap`` and ``grad``. ``relu`` and ``relu6`` carry
JAX's custom derivatives at their kinks; ``softmax``, ``log_softmax`` and
``logsumexp`` use the max-shifted, overflow-free formulation.
``dot_product_attention`` is JAX's XLA implementation, grouped-query heads included.
"""

from . import initializers  # jax.nn.initializers
from ._attention import *  # noqa: F403
from ._attention import __all__ as _attention_all
from ._functions import *  # noqa: F403
from ._functions import __all__ as _functions_all
from ._scaled import get_scaled_dot_general_config, scaled_dot_general, scaled_matmul

__all__ = sorted(
    [
        *_functions_all,
        *_attention_all,
        "get_scaled_dot_general_config",
        "scaled_dot_general",
        "scaled_matmul",
    ]
)
