"""Give ``jax.numpy.vectorize`` (batching's ``vectorize``) ``jnp.asarray`` for its arguments.

Batching cannot import an array library (it sits below runtime), so it takes the
conversion through ``register_vectorize_asarray``. JAX's vectorize converts every
argument that is neither excluded nor None with ``jnp.asarray``: a Python scalar
becomes a weakly typed Array, a list or a numpy value a strong one of its canonical
dtype, so the function and its result see Arrays (``vectorize(lambda x: x)(2.0)`` is
a weak float32 Array).
"""

from __future__ import annotations

from modjax.batching import register_vectorize_asarray

from ._creation import asarray

register_vectorize_asarray(asarray)
