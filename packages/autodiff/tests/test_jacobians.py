"""jacfwd, jacrev and hessian on autodiff alone, with a DSL author's own Jacobian support.

autodiff takes its map over the standard basis and its array operations through
``register_jacobian_support``. Here the map is a Python loop and the operations are
numpy's, except reshape, split and the loop's stacking, which are four small linear
primitives (reshape, slice, pad, concatenate) with JVP and transpose rules, as a DSL
author would write them: that is what lets a Jacobian be differentiated again
(``hessian`` is ``jacfwd`` of ``jacrev``).
"""

import numpy as np
import pytest
from autodiff_test_prims import cos, dot, floor_int, mul, sin, sum_all

from modjax.autodiff import hessian, jacfwd, jacobian, jacobians, jacrev, register_jacobian_support
from modjax.autodiff import is_undefined_primal as undefined
from modjax.autodiff.tangents import deflinear
from modjax.tracecore import core
from modjax.tracecore.abstract import ShapedArray
from modjax.tracecore.tree_util import tree_flatten, tree_structure, tree_unflatten

# --- four linear primitives ---------------------------------------------------------------


def _aval(x):
    return x.aval if undefined(x) else core.to_aval(x)


def _like(aval, shape):
    return ShapedArray(tuple(shape), aval.dtype, aval.weak_type)


def _set(shape, axis, size):
    return tuple(size if i == axis else d for i, d in enumerate(shape))


reshape_p = core.Primitive("jac_reshape")
reshape_p.def_impl(lambda x, *, shape: np.reshape(np.asarray(x), shape).copy())
reshape_p.def_abstract_eval(lambda x, *, shape: _like(x, shape))
deflinear(reshape_p, lambda ct, x, *, shape: [reshape_p.bind(ct, shape=_aval(x).shape)])

slice_p = core.Primitive("jac_slice")  # x[start:stop] along axis
slice_p.def_impl(lambda x, *, start, stop, axis: np.take(x, np.arange(start, stop), axis))
slice_p.def_abstract_eval(
    lambda x, *, start, stop, axis: _like(x, _set(x.shape, axis, stop - start))
)

pad_p = core.Primitive("jac_pad")  # zeros before and after x along axis
pad_p.def_impl(
    lambda x, *, before, after, axis: np.pad(
        x, [(before, after) if i == axis else (0, 0) for i in range(np.ndim(x))]
    )
)
pad_p.def_abstract_eval(
    lambda x, *, before, after, axis: _like(x, _set(x.shape, axis, before + x.shape[axis] + after))
)


def _slice_transpose(ct, x, *, start, stop, axis):
    after = _aval(x).shape[axis] - stop
    return [pad_p.bind(ct, before=start, after=after, axis=axis)]


def _pad_transpose(ct, x, *, before, after, axis):
    return [slice_p.bind(ct, start=before, stop=before + _aval(x).shape[axis], axis=axis)]


deflinear(slice_p, _slice_transpose)
deflinear(pad_p, _pad_transpose)

concat_p = core.Primitive("jac_concat")
concat_p.def_impl(lambda *xs, axis: np.concatenate(xs, axis))
concat_p.def_abstract_eval(
    lambda *xs, axis: _like(xs[0], _set(xs[0].shape, axis, sum(x.shape[axis] for x in xs)))
)


def _concat_transpose(ct, *xs, axis):
    cts, start = [], 0
    for x in xs:
        stop = start + _aval(x).shape[axis]
        cts.append(slice_p.bind(ct, start=start, stop=stop, axis=axis) if undefined(x) else None)
        start = stop
    return cts


deflinear(concat_p, _concat_transpose)


# --- the support: a Python loop for vmap, the primitives above, numpy for the rest ---------


def _reshape(x, shape):
    return reshape_p.bind(x, shape=tuple(shape))


def _split(x, indices, axis):
    bounds = [0, *indices, core.to_aval(x).shape[axis]]
    return [
        slice_p.bind(x, start=a, stop=b, axis=axis)
        for a, b in zip(bounds, bounds[1:], strict=False)
    ]


def _stack(axis, rows):
    """Stack equally structured pytrees along ``axis`` (None: they are all the same)."""
    if axis is None:
        return rows[0]
    out = []
    for parts in zip(*(tree_flatten(row)[0] for row in rows), strict=True):
        shape = core.to_aval(parts[0]).shape
        ax = axis % (len(shape) + 1)
        expanded = [_reshape(p, shape[:ax] + (1,) + shape[ax:]) for p in parts]
        out.append(concat_p.bind(*expanded, axis=ax))
    return tree_unflatten(tree_structure(rows[0]), out)


def loop_vmap(fun, out_axes):
    """Map ``fun`` over the leading axis of its arguments' leaves with a Python loop."""

    def mapped(*args):
        leaves, tree = tree_flatten(args)
        n = core.to_aval(leaves[0]).shape[0]
        rows = []
        for i in range(n):
            row = [
                _reshape(slice_p.bind(x, start=i, stop=i + 1, axis=0), np.shape(x)[1:])
                for x in leaves
            ]
            rows.append(fun(*tree_unflatten(tree, row)))
        if isinstance(out_axes, tuple):
            return tuple(_stack(a, [r[k] for r in rows]) for k, a in enumerate(out_axes))
        return _stack(out_axes, rows)

    return mapped


@pytest.fixture
def numpy_support():
    """Install the loop-and-numpy support and put back whatever was registered."""
    saved = jacobians._support[0]
    register_jacobian_support(
        vmap=loop_vmap,
        eye=lambda n, dtype: np.eye(n, dtype=dtype),
        split=_split,
        reshape=_reshape,
        real=np.real,
        convert=lambda x, dtype, weak_type: np.asarray(x, dtype),
    )
    try:
        yield
    finally:
        jacobians._support[0] = saved


X = np.array([0.3, -1.2, 2.0], np.float32)


def f(x):
    return mul(sin(x), x)


def df(x):
    return np.diag(np.cos(x) * x + np.sin(x))


def test_without_a_registration_jacobians_say_what_to_register():
    saved = jacobians._support[0]
    jacobians._support[0] = None
    try:
        for transform in (jacfwd, jacrev):
            with pytest.raises(RuntimeError, match=r"register_jacobian_support\(vmap="):
                transform(f)(X)
    finally:
        jacobians._support[0] = saved


def test_jacfwd_and_jacrev_of_an_elementwise_function(numpy_support):
    for transform in (jacfwd, jacrev, jacobian):
        jac = transform(f)(X)
        assert isinstance(jac, np.ndarray) and jac.dtype == np.float32
        np.testing.assert_allclose(jac, df(X), rtol=1e-6)


def test_pytrees_argnums_and_aux(numpy_support):
    a = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    b = np.array([[0.5], [-1.0]], np.float32)

    def g(a, b):
        return {"prod": dot(a, b), "sum": sum_all(mul(a, a))}, cos(b)

    fwd, aux_f = jacfwd(g, argnums=(0, 1), has_aux=True)(a, b)
    rev, aux_r = jacrev(g, argnums=(0, 1), has_aux=True)(a, b)
    np.testing.assert_allclose(aux_f, np.cos(b))
    np.testing.assert_allclose(aux_r, np.cos(b))
    for out in ("prod", "sum"):
        for i in (0, 1):
            np.testing.assert_allclose(fwd[out][i], rev[out][i], rtol=1e-6)
    assert fwd["prod"][0].shape == (2, 1, 2, 2) and fwd["prod"][1].shape == (2, 1, 2, 1)
    # d(a @ b)[i, 0] / d a[k, l] = [i == k] b[l, 0]
    np.testing.assert_allclose(fwd["prod"][0][:, 0], np.einsum("ik,l->ikl", np.eye(2), b[:, 0]))
    np.testing.assert_allclose(rev["sum"][0], 2 * a)


def test_hessian_differentiates_a_jacobian_again(numpy_support):
    h = hessian(lambda x: sum_all(f(x)))(X)
    np.testing.assert_allclose(h, np.diag(2 * np.cos(X) - X * np.sin(X)), rtol=1e-5)
    np.testing.assert_allclose(jacrev(jacrev(lambda x: sum_all(f(x))))(X), h, rtol=1e-5)


def test_integer_inputs_give_integer_zero_blocks(numpy_support):
    n = np.array([1, 2], np.int32)
    jac = jacrev(lambda x, n: mul(x, floor_int(x)), argnums=(0, 1), allow_int=True)(X, n)
    assert jac[1].dtype == np.int32 and jac[1].shape == (3, 2) and not jac[1].any()
    np.testing.assert_allclose(jac[0], np.diag(np.floor(X)))
