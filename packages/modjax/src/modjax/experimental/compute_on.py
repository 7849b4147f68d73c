"""Where a block of a program computes (the counterpart of ``jax.experimental.compute_on``).

``compute_on(compute_type)`` marks the equations traced in a block with a compute
type; ``compute_on2(f, compute_type=, out_memory_spaces=)`` makes ``f`` one
``compute_on`` equation whose results are in the memory spaces given. Both are
modjax-runtime's (``modjax.runtime.compute_on``, beside the primitive and its rules).
"""

from modjax.runtime.compute_on import compute_on, compute_on2

__all__ = ["compute_on", "compute_on2"]
