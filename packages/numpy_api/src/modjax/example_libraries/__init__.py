"""Small reference libraries written on modjax (``jax.example_libraries``):
``optimizers`` (gradient-descent optimizers as function triples) and ``stax``
(neural-network layers as (init, apply) pairs)."""
