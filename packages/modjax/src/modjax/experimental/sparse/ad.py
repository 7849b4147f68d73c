"""``jax.experimental.sparse.ad``: sparse-aware ``grad``, ``value_and_grad`` and Jacobians.

They are modjax's transformations with one change: a sparse array of any format
among the differentiated arguments is differentiated through its ``data`` only (its
first pytree child; the index buffers are integers and fixed), and its derivative
comes back as a sparse array with the same indices, i.e. the derivative restricted
to its sparsity pattern. Jacobians rebuild that sparse array under ``vmap`` over the
output's axes, as JAX does: a BCOO or BCSR gains them as leading batch dimensions;
the 2-D formats (COO, CSR, CSC) keep their shape and get every buffer mapped.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import modjax
from modjax.experimental.sparse._base import JAXSparse
from modjax.tree_util import tree_flatten, tree_map, tree_structure, tree_unflatten

__all__ = ["grad", "jacfwd", "jacobian", "jacrev", "value_and_grad"]


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def _argnums_tuple(argnums) -> tuple[int, ...]:
    return (int(argnums),) if isinstance(argnums, int) else tuple(int(a) for a in argnums)


class _SparseArgs:
    """The differentiated arguments with each sparse array replaced by its data."""

    def __init__(self, args: tuple, argnums: tuple[int, ...]):
        self.args = list(args)
        self.argnums = argnums
        self.trees = {}
        for i in argnums:
            leaves, treedef = tree_flatten(args[i], is_leaf=_is_sparse)
            self.trees[i] = (leaves, treedef)
            self.args[i] = tree_unflatten(treedef, [x.data if _is_sparse(x) else x for x in leaves])

    def rebuild(self, dense_args: tuple) -> tuple:
        """The original arguments, with the sparse arrays holding the given data."""
        args = list(dense_args)
        for i in self.argnums:
            leaves, treedef = self.trees[i]
            new = treedef.flatten_up_to(args[i])
            args[i] = tree_unflatten(
                treedef,
                [
                    _with_data(x, n) if _is_sparse(x) else n
                    for x, n in zip(leaves, new, strict=True)
                ],
            )
        return tuple(args)

    def restore(self, i: int, derivative):
        """A derivative of argument ``i`` (possibly with leading output axes), sparse again."""
        leaves, treedef = self.trees[i]

        def one(tree):
            new = treedef.flatten_up_to(tree)
            return tree_unflatten(
                treedef,
                [
                    _sparse_like(x, n) if _is_sparse(x) else n
                    for x, n in zip(leaves, new, strict=True)
                ],
            )

        if treedef.num_leaves == 1 and treedef == tree_structure(0):
            return tree_map(
                lambda d: _sparse_like(leaves[0], d) if _is_sparse(leaves[0]) else d, derivative
            )
        return tree_map(one, derivative, is_leaf=lambda t: tree_structure(t) == treedef)

    def restore_all(self, derivatives, argnums):
        if isinstance(argnums, int):
            return self.restore(argnums, derivatives)
        return tuple(self.restore(i, d) for i, d in zip(self.argnums, derivatives, strict=True))


def _with_data(mat: JAXSparse, data) -> JAXSparse:
    """``mat`` with its data (first pytree child) replaced by ``data``."""
    buffers, treedef = tree_flatten(mat)
    return tree_unflatten(treedef, [data, *buffers[1:]])


def _sparse_like(mat: JAXSparse, data) -> JAXSparse:
    """``mat``'s pattern holding ``data``, mapped over ``data``'s extra leading axes."""
    rebuild = lambda d: _with_data(mat, d)  # noqa: E731
    for _ in range(data.ndim - mat.data.ndim):
        rebuild = modjax.vmap(rebuild)
    return rebuild(data)


def _transformed(
    transform: Callable, fun: Callable, argnums, has_aux: bool, kwargs: dict, *, has_value: bool
):
    nums = _argnums_tuple(argnums)

    def wrapper(*args, **call_kwargs):
        split = _SparseArgs(args, nums)

        def dense_fun(*dense_args):
            return fun(*split.rebuild(dense_args), **call_kwargs)

        out = transform(dense_fun, argnums=argnums, has_aux=has_aux, **kwargs)(*split.args)
        if has_value:
            value, derivative = out
            return value, split.restore_all(derivative, argnums)
        if has_aux:
            derivative, aux = out
            return split.restore_all(derivative, argnums), aux
        return split.restore_all(out, argnums)

    wrapper.__name__ = getattr(fun, "__name__", "fun")
    wrapper.__doc__ = getattr(fun, "__doc__", None)
    return wrapper


def value_and_grad(
    fun: Callable, argnums: int | Sequence[int] = 0, has_aux=False, **kwargs
) -> Callable[..., tuple[Any, Any]]:
    """Sparse-aware ``modjax.value_and_grad``: a sparse argument's gradient is sparse."""
    return _transformed(modjax.value_and_grad, fun, argnums, has_aux, kwargs, has_value=True)


def grad(fun: Callable, argnums: int | Sequence[int] = 0, has_aux=False, **kwargs) -> Callable:
    """Sparse-aware ``modjax.grad``: a sparse argument's gradient is sparse."""
    return _transformed(modjax.grad, fun, argnums, has_aux, kwargs, has_value=False)


def jacfwd(
    fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs
) -> Callable:
    """Sparse-aware ``modjax.jacfwd`` (output axes lead, as batch axes of a sparse Jacobian)."""
    return _transformed(modjax.jacfwd, fun, argnums, has_aux, kwargs, has_value=False)


def jacrev(
    fun: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, **kwargs
) -> Callable:
    """Sparse-aware ``modjax.jacrev`` (output axes lead, as batch axes of a sparse Jacobian)."""
    return _transformed(modjax.jacrev, fun, argnums, has_aux, kwargs, has_value=False)


jacobian = jacrev
