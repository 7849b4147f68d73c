"""``todense_p``: JAX's ``todense`` primitive, the identity on a dense array.

``todense_p.bind(x, tree=treedef)`` returns ``x`` (of one leaf; ``tree`` is that leaf's
treedef, as JAX's ``sparse.todense`` passes it). It exists so that a program can mark
"densify this here": under ``sparsify`` its rule turns a BCOO operand into a dense array.
It is linear, vectorized and lowers to nothing.
"""

from __future__ import annotations

from modjax.autodiff import deflinear
from modjax.batching import defvectorized
from modjax.lowering import register_lowering
from modjax.tracecore.core import Primitive

__all__ = ["todense_p"]

todense_p = Primitive("todense")


def _check(args, tree) -> None:
    if len(args) != 1 or (tree is not None and getattr(tree, "num_leaves", 1) != 1):
        raise NotImplementedError(
            "todense_p of a flattened sparse array (more than one buffer) is not implemented "
            "in modjax; bind it on one dense array, or call sparse.todense"
        )


def _identity(*args, tree=None):
    _check(args, tree)
    return args[0]


todense_p.def_impl(_identity)
todense_p.def_abstract_eval(_identity)
register_lowering(todense_p, lambda ctx, x, tree=None: x)
deflinear(todense_p, lambda ct, x, tree=None: [todense_p.bind(ct, tree=tree)])
defvectorized(todense_p)
