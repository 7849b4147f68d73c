"""``pvary``: the cast that lets a value inside shard_map vary over more manual axes.

JAX's ``pvary_p``. It is here, not in modjax.sharding, because tracing inserts it
(``JaxprTrace``) where an operation's operands vary over different manual axes,
as JAX's ``auto_insert_reshard`` does. Its lowering, derivative and batching
rules are modjax.sharding's (``pcast.py``).
"""

from __future__ import annotations

from .core import Primitive
from .sharding_types import vma_rules

__all__ = ["pvary_p"]

pvary_p = Primitive("pvary")
pvary_p.def_abstract_eval(lambda x, *, axes: x)
pvary_p.def_impl(lambda x, *, axes: x)
vma_rules[pvary_p] = lambda vma_in, params: vma_in[0] | frozenset(params["axes"])
