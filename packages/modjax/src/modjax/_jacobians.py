"""Dense Jacobians and Hessians: ``jacfwd``, ``jacrev``, ``hessian`` (jax's api.py trio).

They need both autodiff (``jvp``/``vjp``) and batching (``vmap``), two layer-1
siblings, and an array library for the standard basis, so they live here in
the metapackage. As in JAX, ``jacfwd`` pushes forward every vector of the
standard basis of the inputs at once (``vmap`` of ``jvp``), and ``jacrev``
pulls back every vector of the standard basis of the outputs (``vmap`` of the
``vjp`` pullback). Inputs and outputs are pytrees: the result nests the input
structure inside the output structure, each leaf of shape
``(*out_leaf.shape, *in_leaf.shape)``.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Sequence

import numpy as np

from modjax import lax
from modjax import numpy as jnp
from modjax.autodiff import jvp, vjp
from modjax.autodiff.api import _check_callable, check_input_dtype, input_aval, wraps_transform
from modjax.batching import vmap
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

__all__ = ["fwd_and_bwd", "jacfwd", "jacrev", "jacobian", "hessian"]


# --- arguments ---------------------------------------------------------------------------


def _ensure_index(argnums) -> int | tuple[int, ...]:
    """Read ``argnums`` as JAX does: one index (``operator.index``), else a tuple of them.

    Anything else fails with Python's own TypeError, as in JAX (``'str' object cannot be
    interpreted as an integer``, ``'float' object is not iterable``).
    """
    try:
        return operator.index(argnums)
    except TypeError:
        return tuple(operator.index(i) for i in argnums)


def _argnums_partial(fun: Callable, argnums, args: tuple, kwargs: dict):
    """Return ``fun`` of the arguments at ``argnums`` only, and those arguments.

    As in JAX, each position is taken out of the call (replaced by None) when it is
    selected, so a repeated position passes None the second time.
    """
    index = _ensure_index(argnums)
    nums = (index,) if isinstance(index, int) else index
    n = len(args)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(
                "Positional argument indices, e.g. for `static_argnums`, must have value greater "
                "than or equal to -len(args) and less than len(args), but got value "
                f"{i} for len(args) == {n}."
            )
    nums = tuple(i % n for i in nums)
    rest = list(args)
    dyn = []
    for i in nums:
        dyn.append(rest[i])
        rest[i] = None

    def f_partial(*dyn_args):
        full = list(rest)
        for i, value in zip(nums, dyn_args, strict=True):
            full[i] = value
        return fun(*full, **kwargs)

    return f_partial, tuple(dyn)


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
    dt = aval.dtype
    if dtypes.issubdtype(dt, dtypes.extended):
        raise TypeError(f"jacrev with output element type {_dtype_name(aval)}")
    if holomorphic:
        if not dtypes.issubdtype(dt, np.complexfloating):
            raise TypeError(
                "jacrev with holomorphic=True requires outputs with complex dtype, but got "
                f"{_dtype_name(aval)}."
            )
    elif dtypes.issubdtype(dt, np.complexfloating):
        raise TypeError(
            "jacrev requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(aval)}. For holomorphic differentiation, pass "
            "holomorphic=True. For differentiation of non-holomorphic functions involving "
            "complex outputs, use jax.vjp directly."
        )
    elif not dtypes.issubdtype(dt, np.floating):
        raise TypeError(
            "jacrev requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {_dtype_name(aval)}. For differentiation of functions with "
            "integer outputs, use jax.vjp directly."
        )


# --- the standard basis and unraveling ---------------------------------------------------------


def _cast_like(x, example):
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
        x = np.zeros(have.shape, want.dtype)
        return lax.convert_element_type_p.bind(x, new_dtype=want.dtype, weak_type=want.weak_type)
    if dtypes.issubdtype(have.dtype, np.complexfloating) and not dtypes.issubdtype(
        want.dtype, np.complexfloating
    ):
        x = lax.real(x)
        have = to_aval(x)
    if have.dtype == want.dtype and have.weak_type == want.weak_type:
        return x
    return lax.convert_element_type_p.bind(x, new_dtype=want.dtype, weak_type=want.weak_type)


def _reshape(x, shape: tuple[int, ...]):
    if to_aval(x).dtype == dtypes.float0:
        return np.zeros(shape, dtypes.float0)
    return jnp.reshape(x, shape)


def _unravel(pytree, axis: int, example, arr):
    """Split ``arr`` along ``axis`` into one piece per leaf of ``pytree``, shaped like it.

    Each piece replaces ``axis`` by the leaf's shape and takes the dtype of
    ``example`` (or of the leaf itself when ``example`` is None).
    """
    leaves, treedef = tree_flatten(pytree)
    shape = to_aval(arr).shape
    axis = axis % len(shape)
    sizes = [to_aval(leaf).size for leaf in leaves]
    parts = [arr] if len(leaves) == 1 else jnp.split(arr, list(np.cumsum(sizes[:-1])), axis)
    out = []
    for part, leaf in zip(parts, leaves, strict=True):
        new_shape = shape[:axis] + to_aval(leaf).shape + shape[axis + 1 :]
        out.append(_cast_like(_reshape(part, new_shape), leaf if example is None else example))
    return tree_unflatten(treedef, out)


def _std_basis(pytree):
    """Return the standard basis of the space of ``pytree``: its leaves with a leading axis."""
    leaves = tree_leaves(pytree)
    n = sum(to_aval(leaf).size for leaf in leaves)
    dtype = jnp.result_type(*leaves)
    return _unravel(pytree, 1, None, jnp.eye(n, dtype=dtype))


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
    argnums = _ensure_index(argnums)

    @wraps_transform(fun, _DOC, argnums=argnums)
    def jacfun(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        tree_map(functools.partial(_check_input_jacfwd, holomorphic), dyn_args)

        def pushfwd(tangents):
            return jvp(f_partial, dyn_args, tangents, has_aux=has_aux)

        out_axes = (None, -1, None) if has_aux else (None, -1)
        y, jac, *aux = vmap(pushfwd, out_axes=out_axes)(_std_basis(dyn_args))
        tree_map(functools.partial(_check_output_jacfwd, holomorphic), y)
        example = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_map(lambda y_leaf, j: _unravel(example, -1, y_leaf, j), y, jac)
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
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        tree_map(functools.partial(check_input_dtype, "jacrev", holomorphic, allow_int), dyn_args)
        if not tree_leaves(dyn_args):  # JAX fails too, unraveling into no leaves
            raise ValueError(
                f"jacrev: the arguments at argnums={argnums} have no array leaves to "
                "differentiate with respect to"
            )
        y, pullback, *aux = vjp(f_partial, *dyn_args, has_aux=has_aux)
        tree_map(functools.partial(_check_output_jacrev, holomorphic), y)
        jac = vmap(pullback)(_std_basis(y))
        jac = jac[0] if isinstance(argnums, int) else jac
        example = dyn_args[0] if isinstance(argnums, int) else dyn_args
        jac_tree = tree_map(lambda x_leaf, j: _unravel(y, 0, x_leaf, j), example, jac)
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


# --- fwd_and_bwd -------------------------------------------------------------------------


def fwd_and_bwd(
    fun: Callable, argnums: int | Sequence[int], has_aux: bool = False, jitted: bool = True
) -> tuple[Callable, Callable]:
    """Return ``fwd`` and ``bwd``: ``vjp`` split in two reusable functions (jax.fwd_and_bwd).

    ``fwd(*args)`` returns ``(fun(*args), residuals)`` (plus ``aux`` with
    ``has_aux``), the residuals being ``vjp``'s pullback (a pytree); ``bwd(residuals,
    cotangent)`` returns the cotangents of the arguments at ``argnums`` (one, not a
    tuple, for an int). With ``jitted`` (the default) both are jitted, so ``bwd``
    compiles once however often it is called.
    """
    from modjax.runtime import jit

    _check_callable(fun)
    argnums = _ensure_index(argnums)

    def fwd(*args, **kwargs):
        f_partial, dyn_args = _argnums_partial(fun, argnums, args, kwargs)
        return vjp(f_partial, *dyn_args, has_aux=has_aux)

    def bwd(f_vjp, outgrad):
        cotangents = f_vjp(outgrad)
        return cotangents[0] if isinstance(argnums, int) else cotangents

    if jitted:
        return jit(fwd), jit(bwd)
    return fwd, bwd
