"""Dense Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian`` (jax's api.py trio).

As in JAX, ``jacfwd`` pushes forward every vector of the standard basis of the
inputs at once (``vmap`` of ``jvp``), and ``jacrev`` pulls back every vector of
the standard basis of the outputs (``vmap`` of the ``vjp`` pullback). Inputs and
outputs are pytrees: the result nests the input structure inside the output
structure, each leaf of shape ``(*out_leaf.shape, *in_leaf.shape)``.

The derivatives are autodiff's; the rest is not. Mapping over the basis is
``vmap`` (batching, a sibling of this package) and the basis and the unraveling
of results need array operations (an identity matrix, split, reshape, real part,
dtype conversion) that autodiff has no primitives for. An array library supplies
them once with ``register_jacobian_support`` (as ``register_host_to_array``):
modjax.numpy registers modjax's, and a DSL author using autodiff alone registers
their own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from modjax.tracecore import dtypes
from modjax.tracecore.core import to_aval
from modjax.tracecore.tree_util import (
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_transpose,
    tree_unflatten,
)
from modjax.tracecore.wrapped_fun import check_callable as _check_callable
from modjax.tracecore.wrapped_fun import wraps_transform

from .api import (
    argnums_partial,
    check_input_dtype,
    check_output_dtype,
    ensure_index,
    input_aval,
    jvp,
    vjp,
)

__all__ = [
    "JacobianSupport",
    "hessian",
    "jacfwd",
    "jacobian",
    "jacrev",
    "register_jacobian_support",
]


# --- what an array library supplies ------------------------------------------------------


class JacobianSupport(NamedTuple):
    """The operations ``jacfwd``/``jacrev`` take from an array library and a ``vmap``.

    - ``vmap(fun, out_axes)``: ``fun`` mapped over the leading axis of every leaf of its
      positional arguments; ``out_axes`` is a pytree prefix of the output whose entries
      are ``0``, ``-1`` (where the mapped axis goes) or ``None`` (an output that does
      not depend on the mapped arguments, returned once).
    - ``eye(n, dtype)``: the ``n`` by ``n`` identity matrix.
    - ``split(x, indices, axis)``: ``x`` cut before each of ``indices`` along ``axis``
      (``numpy.split`` with a list of indices).
    - ``reshape(x, shape)``, ``real(x)`` (the real part of a complex array).
    - ``convert(x, dtype, weak_type)``: ``x`` as ``dtype``, weakly typed or not.
    """

    vmap: Callable[[Callable, Any], Callable]
    eye: Callable[[int, Any], Any]
    split: Callable[[Any, list[int], int], Sequence[Any]]
    reshape: Callable[[Any, tuple[int, ...]], Any]
    real: Callable[[Any], Any]
    convert: Callable[[Any, Any, bool], Any]


_support: list[JacobianSupport | None] = [None]


def register_jacobian_support(
    *,
    vmap: Callable[[Callable, Any], Callable],
    eye: Callable[[int, Any], Any],
    split: Callable[[Any, list[int], int], Sequence[Any]],
    reshape: Callable[[Any, tuple[int, ...]], Any],
    real: Callable[[Any], Any],
    convert: Callable[[Any, Any, bool], Any],
) -> None:
    """Give ``jacfwd``, ``jacrev`` and ``hessian`` their vmap and array operations.

    The arguments are the fields of ``JacobianSupport`` (see there). A later call
    replaces an earlier one. No JAX counterpart: JAX's autodiff imports its vmap
    and jax.numpy itself.
    """
    _support[0] = JacobianSupport(vmap, eye, split, reshape, real, convert)


def _get_support(transform: str) -> JacobianSupport:
    support = _support[0]
    if support is None:
        raise RuntimeError(
            f"{transform} needs a vmap and array operations, and none are registered: call "
            "modjax.autodiff.register_jacobian_support(vmap=, eye=, split=, reshape=, real=, "
            "convert=) first (importing modjax.numpy registers modjax's)"
        )
    return support


_DOC = (
    "Jacobian of {fun} with respect to positional argument(s) {argnums}. Takes the same "
    "arguments as {fun} but returns the jacobian of the output with respect to the arguments "
    "at positions {argnums}."
)


def _dtype_name(aval) -> str:
    return dtypes.dtype_name(aval.dtype)


def _check_input_jacfwd(holomorphic: bool, x) -> None:
    aval = input_aval(x)
    dt = aval.dtype
    if dtypes.issubdtype(dt, dtypes.extended):
        raise TypeError(f"jacfwd with input element type {_dtype_name(aval)}")
    if holomorphic:
        if not dtypes.issubdtype(dt, np.complexfloating):
            raise TypeError(
                "jacfwd with holomorphic=True requires inputs with complex dtype, but got "
                f"{_dtype_name(aval)}."
            )
    elif not dtypes.issubdtype(dt, np.floating):
        raise TypeError(
            "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(aval)}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex inputs or integer inputs, use jax.jvp directly."
        )


def _check_output_jacfwd(holomorphic: bool, y) -> None:
    aval = to_aval(y)
    if holomorphic and not dtypes.issubdtype(aval.dtype, np.complexfloating):
        raise TypeError(
            "jacfwd with holomorphic=True requires outputs with complex dtype, but got "
            f"{_dtype_name(aval)}."
        )


def _check_output_jacrev(holomorphic: bool, y) -> None:
    aval = to_aval(y)
    if dtypes.issubdtype(aval.dtype, dtypes.extended):
        raise TypeError(f"jacrev with output element type {_dtype_name(aval)}")
    check_output_dtype("jacrev", holomorphic, aval)


# --- the standard basis and unraveling ---------------------------------------------------------


def _cast_like(support: JacobianSupport, x, example):
    """Give ``x`` the dtype and weak type of ``example`` (real part if it is not complex).

    A ``float0`` block (the tangent of an integer value) becomes zeros of ``example``'s
    integer dtype, as JAX's conversion makes it; JAX cannot convert it to bool.
    """
    want = to_aval(example)
    have = to_aval(x)
    if want.dtype == dtypes.float0:
        return x
    if dtypes.issubdtype(want.dtype, dtypes.extended):
        raise NotImplementedError(
            f"a Jacobian block of dtype {dtypes.dtype_name(want.dtype)} (with respect to or of "
            "a PRNG key), as in JAX"
        )
    if have.dtype == dtypes.float0:
        if dtypes.issubdtype(want.dtype, np.bool_):
            raise TypeError(
                "cannot convert a float0 Jacobian block (the derivative of or with respect "
                "to a bool value) to dtype bool; use jax.jvp or jax.vjp for bool values"
            )
        return support.convert(np.zeros(have.shape, want.dtype), want.dtype, want.weak_type)
    if dtypes.issubdtype(have.dtype, np.complexfloating) and not dtypes.issubdtype(
        want.dtype, np.complexfloating
    ):
        x = support.real(x)
        have = to_aval(x)
    if have.dtype == want.dtype and have.weak_type == want.weak_type:
        return x
    return support.convert(x, want.dtype, want.weak_type)


def _reshape(support: JacobianSupport, x, shape: tuple[int, ...]):
    if to_aval(x).dtype == dtypes.float0:
        return np.zeros(shape, dtypes.float0)
    return support.reshape(x, shape)


def _unravel(support: JacobianSupport, pytree, axis: int, example, arr):
    """Split ``arr`` along ``axis`` into one piece per leaf of ``pytree``, shaped like it.

    Each piece replaces ``axis`` by the leaf's shape and takes the dtype of
    ``example`` (or of the leaf itself when ``example`` is None).
    """
    leaves, treedef = tree_flatten(pytree)
    shape = to_aval(arr).shape
    axis = axis % len(shape)
    sizes = [to_aval(leaf).size for leaf in leaves]
    indices = [int(i) for i in np.cumsum(sizes[:-1])]
    parts = [arr] if len(leaves) == 1 else support.split(arr, indices, axis)
    out = []
    for part, leaf in zip(parts, leaves, strict=True):
        new_shape = shape[:axis] + to_aval(leaf).shape + shape[axis + 1 :]
        part = _reshape(support, part, new_shape)
        out.append(_cast_like(support, part, leaf if example is None else example))
    return tree_unflatten(treedef, out)


def _std_basis(support: JacobianSupport, pytree):
    """Return the standard basis of the space of ``pytree``: its leaves with a leading axis."""
    leaves = tree_leaves(pytree)
    n = sum(to_aval(leaf).size for leaf in leaves)
    dtype = dtypes.result_type(*leaves)
    return _unravel(support, pytree, 1, None, support.eye(n, dtype))


# --- the transformations ---------------------------------------------------------------------


def jacfwd(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Return a function computing the Jacobian of ``fun`` by forward mode (jax.jacfwd).

    Differentiate with respect to the positional argument(s) ``argnums``: an int
    gives the Jacobian of each output leaf with respect to that argument, a
    tuple gives a tuple of them. Inputs must be real floating point (complex
    with ``holomorphic=True``). With ``has_aux``, ``fun`` returns ``(out, aux)``
    and the result is ``(jacobian, aux)``.
    """
    _check_callable(fun)
    argnums = ensure_index(argnums)

    @wraps_transform(fun, _DOC, argnums=argnums)
    def jacfun(*args, **kwargs):
        support = _get_support("jacfwd")
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        tree_map(functools.partial(_check_input_jacfwd, holomorphic), dyn_args)

        def pushfwd(tangents):
            return jvp(f_partial, dyn_args, tangents, has_aux=has_aux)

        out_axes = (None, -1, None) if has_aux else (None, -1)
        y, jac, *aux = support.vmap(pushfwd, out_axes)(_std_basis(support, dyn_args))
        tree_map(functools.partial(_check_output_jacfwd, holomorphic), y)
        example = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_map(lambda y_leaf, j: _unravel(support, example, -1, y_leaf, j), y, jac)
        return (jac_tree, aux[0]) if has_aux else jac_tree

    return jacfun


def jacrev(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable:
    """Return a function computing the Jacobian of ``fun`` by reverse mode (jax.jacrev).

    Arguments as for ``jacfwd``; inputs may be complex, and integer inputs are
    accepted with ``allow_int`` (their Jacobians are integer zeros). Outputs must be
    real floating point (complex with ``holomorphic=True``).
    """
    _check_callable(fun)
    # As in JAX, argnums is read at call time, and only a Python int (not a numpy
    # integer) gives a bare Jacobian rather than a tuple of one.

    @wraps_transform(fun, _DOC, argnums=argnums)
    def jacfun(*args, **kwargs):
        support = _get_support("jacrev")
        f_partial, dyn_args = argnums_partial(fun, argnums, args, kwargs)
        tree_map(functools.partial(check_input_dtype, "jacrev", holomorphic, allow_int), dyn_args)
        if not tree_leaves(dyn_args):  # JAX fails too, unraveling into no leaves
            raise ValueError(
                f"jacrev: the arguments at argnums={argnums} have no array leaves to "
                "differentiate with respect to"
            )
        y, pullback, *aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
        tree_map(functools.partial(_check_output_jacrev, holomorphic), y)
        jac = support.vmap(pullback, 0)(_std_basis(support, y))
        jac = jac[0] if isinstance(argnums, int) else jac
        example = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_map(lambda x_leaf, j: _unravel(support, y, 0, x_leaf, j), example, jac)
        jac_tree = tree_transpose(tree_structure(example), tree_structure(y), jac_tree)
        return (jac_tree, *aux) if has_aux else jac_tree

    return jacfun


def jacobian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
) -> Callable:
    """Return the reverse-mode Jacobian function of ``fun`` (jax.jacobian, an alias of jacrev)."""
    return jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic, allow_int=allow_int)


def hessian(
    fun: Callable,
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
) -> Callable:
    """Return a function computing the Hessian of ``fun`` as a dense array (jax.hessian).

    It is ``jacfwd(jacrev(fun))``: for an output leaf of shape ``out`` and input
    leaves of shapes ``a`` and ``b`` the block has shape ``(*out, *a, *b)``.
    """
    return jacfwd(
        jacrev(fun, argnums, has_aux=has_aux, holomorphic=holomorphic),
        argnums,
        has_aux=has_aux,
        holomorphic=holomorphic,
    )
