"""``sequential_vmap``: a function that batches as a loop (``jax.custom_batching``).

A ``custom_vmap`` (batching's) whose rule is ``lax.map`` over the batch: numpy_api is
the lowest package with both. The metapackage's ``jax.custom_batching`` re-exports it.
"""

from __future__ import annotations

from modjax.batching.custom_batching import custom_vmap
from modjax.tracecore.tree_util import tree_map as _tree_map

from .loops import map as _map

__all__ = ["sequential_vmap"]


def sequential_vmap(f):
    """Make ``f`` batch as a loop over the batch (jax.custom_batching.sequential_vmap).

    Under ``vmap`` the function runs once per element (``lax.map``) on the batched
    arguments, the unbatched ones passed whole; every result comes back batched.
    Useful for functions that cannot batch natively.
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        del axis_size
        args = list(args)
        # split at the leaves: batched ones are mapped over, the others passed whole
        mapped = _tree_map(lambda b, x: x if b else None, in_batched, args)

        def one(mapped_args):
            merged = _tree_map(lambda b, m, a: m if b else a, in_batched, mapped_args, args)
            return f(*merged)

        out = _map(one, mapped)
        return out, _tree_map(lambda _: True, out)

    return f
