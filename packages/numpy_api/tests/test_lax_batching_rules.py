"""Batching rules of the lax primitives.

Each primitive's rule against a loop is checked by ``check_primitive`` in
``tests_integration/test_check_every_primitive.py``. Here: the variants of operands
and params its one case per primitive leaves out (``vmap(f, in_axes)(*xs)`` against
stacking ``f`` over the slices, for generated batch positions, negative ones and
``None`` for some operands, and batch sizes 1, 3 and 0); then the shape of a few batched
programs: elementwise ops broadcast unbatched operands instead of
materializing them, and ``dot_general`` folds every batch axis into one
``dot_general``.

Eager evaluation: each batched primitive runs through runtime's ``apply_primitive``.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.batching import vmap
from modjax.tracecore import make_jaxpr

F32, I32 = np.float32, np.int32


def f32(*shape, lo=-2.0, hi=2.0):
    """An operand spec: float32 values of ``shape`` in [lo, hi]."""
    return lambda rng: np.asarray(rng.uniform(lo, hi, shape), F32)


def i32(*shape, lo=-5, hi=5):
    return lambda rng: np.asarray(rng.randint(lo, hi + 1, shape), I32)


def boolean(*shape):
    return lambda rng: np.asarray(rng.rand(*shape) > 0.5)


def _stack(makers, axes, size, rng):
    """Batched operands: ``size`` samples of each spec stacked along its axis (or one sample)."""
    out = []
    for make, axis in zip(makers, axes, strict=True):
        if axis is None:
            out.append(make(rng))
            continue
        sample = make(rng)
        items = [make(rng) for _ in range(size)] if size else []
        stacked = np.stack(items) if items else np.zeros((0, *sample.shape), sample.dtype)
        out.append(np.moveaxis(stacked, 0, axis))
    return out


def check_vmap(fn, makers, axes, size, seed):
    """Check ``vmap(fn, axes)`` against a loop over the slices of the batched operands."""
    rng = np.random.RandomState(seed)
    args = _stack(makers, axes, size, rng)
    out = np.asarray(vmap(fn, in_axes=tuple(axes))(*args))
    if size == 0:  # nothing to loop over: compare the type of one slice's result
        one = np.asarray(fn(*[m(rng) for m in makers]))
        assert out.shape == (0, *one.shape) and out.dtype == one.dtype
        return
    slices = [
        [a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, axes, strict=True)]
        for i in range(size)
    ]
    expected = np.stack([np.asarray(fn(*s)) for s in slices])
    assert out.dtype == expected.dtype
    if out.dtype.kind in "fc":
        np.testing.assert_allclose(out, expected, rtol=2e-6, atol=1e-6, equal_nan=True)
    else:
        np.testing.assert_array_equal(out, expected)


@st.composite
def batching(draw, makers, ndims):
    """Draw (batch axes, batch size): each operand batched at some (maybe negative) axis or not."""
    axes = [draw(st.one_of(st.none(), st.integers(-n - 1, n))) for n in ndims]
    if all(a is None for a in axes):
        i = draw(st.integers(0, len(ndims) - 1))
        axes[i] = draw(st.integers(-ndims[i] - 1, ndims[i]))
    size = draw(st.sampled_from([3, 1, 0]))
    return axes, size


def _ndims(makers):
    return [np.ndim(m(np.random.RandomState(0))) for m in makers]


def _run(data, fn, makers, seed):
    axes, size = data.draw(batching(makers, _ndims(makers)))
    check_vmap(fn, makers, axes, size, seed)


seeds = st.integers(0, 2**16)

# --- variants: name -> (function, operand specs) -----------------------------------------------

# Every primitive's batching rule is checked against a loop by check_primitive in
# tests_integration/test_check_every_primitive.py, on one case each. These are the
# variants those cases leave out: rank-0 and size-1 operands broadcast by lax,
# integer operands, other params (reshape's dimensions, scalar broadcasts), operand-less
# primitives under vmap.

X = f32(2, 3)
POS = f32(2, 3, lo=0.2, hi=3.0)

VARIANTS = {
    "abs_int": (lax.abs, [i32(2, 3)]),
    "convert_to_int": (lambda x: lax.convert_element_type(x, I32), [X]),
    "add_scalar": (lax.add, [f32(), X]),
    "div_int": (lax.div, [i32(2, 3), i32(2, 3, lo=1, hi=4)]),
    "pow_int": (lax.pow, [POS, i32(2, 3, lo=-2, hi=3)]),
    "max_scalar": (lax.max, [X, f32()]),
    "select_n_scalar_which": (lax.select_n, [boolean(), X, X]),
    "select_n_int": (lax.select_n, [i32(2, 3, lo=0, hi=2), X, X, X]),
    "clamp_arrays": (lax.clamp, [f32(2, 3, lo=-1, hi=0), X, f32(2, 3, lo=0, hi=1)]),
    "broadcast_in_dim_stretch": (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)), [f32(1, 3)]),
    "broadcast_scalar": (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [f32()]),
    "reshape_dimensions": (lambda x: lax.reshape(x, (6,), dimensions=(1, 0)), [X]),
    "expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), [X]),
    "concatenate_three": (lambda *xs: lax.concatenate(xs, 1), [X, f32(2, 1), X]),
    "iota": (
        lambda x: lax.add(x, lax.convert_element_type(lax.broadcasted_iota(I32, (2, 3), 1), F32)),
        [X],
    ),
    "dot": (lax.dot, [X, f32(3, 4)]),
}


@pytest.mark.parametrize("name", list(VARIANTS))
@given(data=st.data(), seed=seeds)
def test_vmap_equals_a_loop_over_slices(name, data, seed):
    fn, makers = VARIANTS[name]
    _run(data, fn, makers, seed)


# --- the shape of batched programs --------------------------------------------------------------


def _primitives(fn, *args):
    return [e.primitive.name for e in make_jaxpr(fn)(*args).jaxpr.eqns]


def test_unbatched_operands_of_elementwise_ops_are_not_materialized():
    xs, y = np.ones((5, 2, 3), F32), np.ones((2, 3), F32)
    # a full-shaped unbatched operand only gets a size-1 axis
    closed = make_jaxpr(vmap(lax.add, in_axes=(0, None)))(xs, y)
    assert [e.primitive.name for e in closed.jaxpr.eqns] == ["expand_dims", "add"]
    assert all(np.prod(v.aval.shape) <= xs.size for e in closed.jaxpr.eqns for v in e.outvars)
    # scalars broadcast as they are
    assert _primitives(vmap(lax.mul, in_axes=(0, None)), xs, F32(2)) == ["mul"]
    assert _primitives(vmap(lambda x: lax.max(x, 0.0)), xs) == ["max"]
    # several operands batched at different axes: one move, no broadcast
    names = _primitives(vmap(lax.clamp, in_axes=(None, 1, None)), F32(0), xs, F32(1))
    assert names == ["clamp", "moveaxis"]  # the final move is out_axes=0's
    names = _primitives(vmap(lax.select_n, in_axes=(None, 0, 0)), True, xs, xs)
    assert names == ["select_n"]


@pytest.mark.parametrize(
    "axes", [(0, 0), (1, None), (None, 2), (2, 1), (-1, 0), (None, -1)], ids=str
)
def test_dot_general_batching_is_one_dot_general(axes):
    lhs, rhs = np.ones((2, 3), F32), np.ones((3, 4), F32)
    numbers = (((1,), (0,)), ((), ()))
    blhs = lhs if axes[0] is None else np.stack([lhs] * 5, axes[0])
    brhs = rhs if axes[1] is None else np.stack([rhs] * 5, axes[1])
    fn = lambda x, y: lax.dot_general(x, y, numbers)  # noqa: E731
    closed = make_jaxpr(vmap(fn, in_axes=axes))(blhs, brhs)
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    assert names.count("dot_general") == 1
    assert set(names) <= {"dot_general", "moveaxis"} and names.count("moveaxis") <= 1
    out = vmap(fn, in_axes=axes)(blhs, brhs)
    np.testing.assert_allclose(out, np.full((5, 2, 4), 3.0))


def test_nested_vmaps_keep_batch_axes_in_place():
    xs = np.random.RandomState(0).rand(4, 2, 3, 6).astype(F32)

    def f(x):  # (4, 6) -> (4, 4) through elementwise and structural ops
        y = lax.rev(lax.slice(lax.sin(x), (0, 1), (4, 5)), (1,))
        return lax.mul(y, lax.transpose(lax.slice(lax.cos(x), (0, 0), (4, 4)), (1, 0)))

    fn = vmap(vmap(f, in_axes=1, out_axes=1), in_axes=1, out_axes=1)
    assert "moveaxis" not in _primitives(fn, xs)
    out = np.asarray(fn(xs))
    for i in range(2):
        for j in range(3):
            np.testing.assert_allclose(out[:, i, j], f(xs[:, i, j]), rtol=1e-6)


def test_per_example_gradients_and_gradient_of_a_vmap():
    from modjax.autodiff import grad

    def loss(w, x):  # squared error of a linear model on one example
        r = lax.sub(lax.dot_general(x, w, (((0,), (0,)), ((), ()))), 1.0)
        return lax.reduce_sum(lax.integer_pow(r, 2), (0,))

    rng = np.random.RandomState(0)
    w, xs = rng.rand(3, 2).astype(F32), rng.rand(5, 3).astype(F32)
    per_example = vmap(grad(loss), in_axes=(None, 0))(w, xs)
    expected = np.stack([np.asarray(grad(loss)(w, x)) for x in xs])
    np.testing.assert_allclose(per_example, expected, rtol=1e-5)
    names = _primitives(vmap(grad(loss), in_axes=(None, 0)), w, xs)
    assert names.count("dot_general") == 2 and "broadcast_batch" not in names

    def total(w):
        return lax.reduce_sum(vmap(loss, in_axes=(None, 0))(w, xs), (0,))

    np.testing.assert_allclose(grad(total)(w), expected.sum(0), rtol=1e-5)


def test_vmap_and_jit_compose():
    from modjax.autodiff import grad
    from modjax.runtime import jit

    def f(x, y):
        return lax.dot_general(lax.add(x, y), lax.transpose(x, (1, 0)), (((1,), (0,)), ((), ())))

    xs, y = np.random.RandomState(0).rand(4, 2, 3).astype(F32), np.ones((2, 3), F32)
    expected = np.stack([np.asarray(f(x, y)) for x in xs])
    np.testing.assert_allclose(jit(vmap(f, in_axes=(0, None)))(xs, y), expected, rtol=1e-6)
    np.testing.assert_allclose(vmap(jit(f), in_axes=(0, None))(xs, y), expected, rtol=1e-6)
    # per-example gradients, compiled as one program
    loss = lambda x, y: lax.reduce_sum(lax.tanh(f(x, y)), (0, 1))  # noqa: E731
    per_example = jit(vmap(grad(loss), in_axes=(0, None)))(xs, y)
    expected = np.stack([np.asarray(grad(loss)(x, y)) for x in xs])
    np.testing.assert_allclose(per_example, expected, rtol=1e-5, atol=1e-6)


def test_gather_and_scatter_over_zero_members():
    # Both operands batched: a batching dimension takes size-1 slices, which a size-0
    # axis cannot give, so zero members must not reach the gather or scatter itself.
    x, idx = np.zeros((0, 3), np.float32), np.zeros((0, 2, 1), np.int32)
    dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    out = vmap(lambda o, i: lax.gather(o, i, dn, (1,)))(x, idx)
    assert out.shape == (0, 2) and out.dtype == np.float32
    sdn = lax.ScatterDimensionNumbers(
        update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )
    updates = np.zeros((0, 2), np.float32)
    added = vmap(lambda o, i, u: lax.scatter_add(o, i, u, sdn))(x, idx, updates)
    assert added.shape == (0, 3)
    unbatched = vmap(lambda i, u: lax.scatter_add(np.ones(3, np.float32), i, u, sdn))(idx, updates)
    assert unbatched.shape == (0, 3)
