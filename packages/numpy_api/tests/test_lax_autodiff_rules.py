"""JVP and transpose rules of the lax primitives.

``check_grads`` (forward mode against central finite differences, reverse mode
by the dot-product test, both to second order) runs over every differentiable
primitive on generated shapes and points away from singularities, in float64
(x64 enabled for these tests) so that finite differences are accurate. Then:
zero and float0 tangents of the non-differentiable primitives, JAX's
conventions at kinks, and the shapes of a few derivative programs.

Eager evaluation only: every primitive runs through runtime's ``apply_primitive``.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import (
    checkpoint_policies,
    dot_primitives,
    grad,
    jvp,
    linear_transpose,
    vjp,
)
from modjax.autodiff.testing import check_grads
from modjax.tracecore import dtypes, make_jaxpr
from modjax.tracecore.config import enable_x64

F64 = np.float64
C128 = np.complex128


@pytest.fixture(autouse=True, scope="module")
def _x64():
    # Once per module: every switch of enable_x64 clears all compiled programs.
    with enable_x64(True):
        yield


def _values(rng, shape, lo, hi, signed=False):
    x = rng.uniform(lo, hi, shape)
    if signed:  # magnitudes in [lo, hi] with random signs: away from 0
        x = x * rng.choice([-1.0, 1.0], shape)
    return np.asarray(x, F64)


seeds = st.integers(0, 2**16)
SHAPES = [(), (2, 3)]  # few shapes: each new one costs XLA compilations
shapes = st.sampled_from(SHAPES)


# --- elementwise unary ----------------------------------------------------------------------

# Every primitive's JVP and transpose are checked (first order, float32, one case each)
# by check_primitive in tests_integration/test_check_every_primitive.py. Here: second
# order in float64, and the variants of operands and params those cases leave out.

# name: (function, low, high, signed): points drawn in [low, high] (signed: +-[low, high]).
UNARY = {
    "integer_pow_-2": (lambda x: lax.integer_pow(x, -2), 0.5, 2, True),
    "integer_pow_1": (lambda x: lax.integer_pow(x, 1), -2, 2, False),
    "integer_pow_0": (lambda x: lax.integer_pow(x, 0), -2, 2, False),
    "abs": (lax.abs, 0.2, 2, True),
    "cbrt": (lax.cbrt, 0.3, 3, True),
}


@pytest.mark.parametrize("name", list(UNARY))
@given(shape=shapes, seed=seeds)
def test_unary_grads(name, shape, seed):
    fn, lo, hi, signed = UNARY[name]
    x = _values(np.random.RandomState(seed), shape, lo, hi, signed)
    check_grads(fn, (x,), order=2, modes=("fwd", "rev"))


def test_convert_element_type_between_floats_and_complex():
    x = np.array([0.5, -1.5, 2.0])
    # float64 -> float32 -> float64 is linear, so a large step keeps rounding errors small
    check_grads(lambda x: lax.convert_element_type(lax.convert_element_type(x, np.float32), F64),
                (x,), order=2, eps=1e-2)  # fmt: skip
    # real -> complex -> (times a complex constant) -> real part
    w = np.complex128(1.5 - 2j)
    to_c = lambda x: lax.mul(lax.convert_element_type(x, C128), w)  # noqa: E731
    check_grads(lambda x: lax.convert_element_type(lax.sin(to_c(x)), F64), (x,), order=2)


# --- elementwise binary -----------------------------------------------------------------------

# Rank-0 and size-1 operands, broadcast by lax (the one-case checks see few of them).
SHAPE_PAIRS = [((2, 3), ()), ((1, 3), (2, 3))]


BINARY = {
    "add": (lax.add, (-2, 2, False), (-2, 2, False)),
    "div": (lax.div, (-2, 2, False), (0.5, 2, True)),
    "pow": (lax.pow, (0.5, 2, False), (-1.5, 2, False)),
    "atan2": (lax.atan2, (0.3, 2, True), (0.3, 2, True)),
}


@pytest.mark.parametrize("name", list(BINARY))
@given(shapes=st.sampled_from(SHAPE_PAIRS), seed=seeds)
def test_binary_grads_with_broadcasting(name, shapes, seed):
    fn, x_range, y_range = BINARY[name]
    rng = np.random.RandomState(seed)
    x = _values(rng, shapes[0], *x_range)
    y = _values(rng, shapes[1], *y_range)
    check_grads(fn, (x, y), order=2, modes=("fwd", "rev"))


@given(shape=shapes, seed=seeds, y=st.integers(-2, 3))
def test_pow_with_integer_exponent(shape, seed, y):
    x = _values(np.random.RandomState(seed), shape, 0.5, 2, signed=True)
    exponent = np.full(shape, y, np.int32)
    check_grads(lambda x: lax.pow(x, exponent), (x,), order=2)
    _, pullback = vjp(lax.pow, x, exponent)
    ct_x, ct_y = pullback(np.ones(shape))
    np.testing.assert_allclose(ct_x, y * x ** (y - 1.0) if y else 0.0, rtol=1e-12)
    assert ct_y.dtype == dtypes.float0 and ct_y.shape == shape


def test_complex_holomorphic_grads():
    rng = np.random.RandomState(0)
    z = (rng.uniform(0.5, 1.5, 3) + 1j * rng.uniform(0.5, 1.5, 3)).astype(C128)
    w = (rng.uniform(0.5, 1.5, 3) - 1j * rng.uniform(0.5, 1.5, 3)).astype(C128)
    for fn in (lax.sin, lax.exp, lax.log, lax.sqrt, lax.tanh, lax.logistic):
        check_grads(fn, (z,), order=2, modes=("fwd", "rev"))
    for fn in (lax.mul, lax.div, lax.pow, lax.sub):
        check_grads(fn, (z, w), order=1, modes=("fwd", "rev"))
    check_grads(lax.abs, (z,), order=2, modes=("fwd", "rev"))  # complex -> real


# --- select_n and clamp -------------------------------------------------------------------------


@given(seed=seeds, scalar_which=st.booleans(), n=st.sampled_from([1, 2, 3]))
def test_select_n_grads(seed, scalar_which, n):
    rng = np.random.RandomState(seed)
    cases = [_values(rng, (2, 3), -2, 2) for _ in range(n)]
    shape = () if scalar_which else (2, 3)
    if n == 2 and seed % 2:
        which = rng.rand(*shape) > 0.5
    else:
        which = np.asarray(rng.randint(0, n, shape), np.int32)
    check_grads(lambda *cs: lax.select_n(which, *cs), cases, order=2, modes=("fwd", "rev"))
    expected = np.choose(np.broadcast_to(which, (2, 3)).astype(int), cases)
    np.testing.assert_array_equal(lax.select_n(which, *cases), expected)


@given(seed=seeds, scalar_bounds=st.booleans())
def test_clamp_grads_away_from_bounds(seed, scalar_bounds):
    rng = np.random.RandomState(seed)
    shape = () if scalar_bounds else (2, 3)
    lo = _values(rng, shape, -1, -0.5)
    hi = _values(rng, shape, 0.5, 1)
    x = _values(rng, (2, 3), 0.1, 2, signed=True)
    x = np.where(np.abs(np.abs(x) - 0.75) < 0.3, x * 2, x)  # keep away from the bounds' range
    check_grads(lax.clamp, (lo, x, hi), order=2, modes=("fwd", "rev"))


# --- structural -------------------------------------------------------------------------------

# name: (function of float64 operands, operand shapes): variants the one-case checks
# leave out (other params, scalars, empty and negative slices and pads).
STRUCTURAL = {
    "broadcast_in_dim_stretch": (lambda x: lax.broadcast_in_dim(x, (2, 3), (0, 1)), [(1, 3)]),
    "broadcast_scalar": (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [()]),
    "broadcast": (lambda x: lax.broadcast(x, (2,)), [(3,)]),
    "expand_dims": (lambda x: lax.expand_dims(x, (0, 2)), [(2, 3)]),
    "reshape_dimensions": (lambda x: lax.reshape(x, (6,), dimensions=(1, 0)), [(2, 3)]),
    "rev_both": (lambda x: lax.rev(x, (0, 1)), [(2, 3)]),
    "slice_empty": (lambda x: lax.slice(x, (1, 0), (1, 3)), [(2, 3)]),
    "concatenate_three": (lambda *xs: lax.concatenate(xs, 1), [(2, 3), (2, 1), (2, 2)]),
    "pad_negative": (lambda x, v: lax.pad(x, v, ((-1, 1, 2), (2, -2, 0))), [(3, 3), ()]),
    "pad_scalar": (lambda x, v: lax.pad(x, v, ()), [(), ()]),
    "full_like": (lambda x: lax.mul(x, lax.full_like(x, 2.0)), [(2, 3)]),
}


@pytest.mark.parametrize("name", list(STRUCTURAL))
@given(seed=seeds)
def test_structural_grads(name, seed):
    fn, arg_shapes = STRUCTURAL[name]
    rng = np.random.RandomState(seed)
    args = [_values(rng, s, -2, 2) for s in arg_shapes]
    check_grads(fn, args, order=2, modes=("fwd", "rev"))


def test_pad_with_a_constant_padding_value():
    x = np.arange(6.0).reshape(2, 3)
    check_grads(lambda x: lax.pad(x, 0.0, ((1, 0, 1), (0, 1, 0))), (x,), order=2)


# --- reductions and dot_general -----------------------------------------------------------------

REDUCTIONS = {
    "reduce_sum": lax.reduce_sum,
    "reduce_prod": lax.reduce_prod,
    "reduce_max": lax.reduce_max,
    "reduce_min": lax.reduce_min,
}


@pytest.mark.parametrize("name", list(REDUCTIONS))
@given(seed=seeds, axes=st.just((0, 2)))  # two axes of three: the one-case checks reduce one
def test_reduction_grads(name, seed, axes):
    rng = np.random.RandomState(seed)
    # distinct values (no ties), away from 0 (reduce_prod's finite differences)
    x = np.asarray(rng.permutation(24).reshape(2, 3, 4) / 8.0 + 0.5, F64)
    x = x * rng.choice([-1.0, 1.0], x.shape)
    check_grads(lambda x: REDUCTIONS[name](x, axes), (x,), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("n", [1, 6])  # 6: two levels of halving, one padded
def test_reduce_prod_grad_is_exact_with_zeros(n):
    x = np.arange(1.0, n + 1)
    for zeros in ([], [n // 2], [0, n - 1]):
        y = x.copy()
        y[zeros] = 0.0
        expected = np.array([np.prod(np.delete(y, i)) for i in range(n)])
        np.testing.assert_allclose(grad(lambda v: lax.reduce_prod(v, (0,)))(y), expected)


DOT_CASES = [
    ((3,), (3,), (((0,), (0,)), ((), ()))),  # vector dot
    ((2, 3), (3, 4), (((1,), (0,)), ((), ()))),  # matmul
    ((3, 2), (4, 3), (((0,), (1,)), ((), ()))),  # transposed operands
    ((5, 2, 3), (5, 3, 4), (((2,), (1,)), ((0,), (0,)))),  # batched matmul
    ((2, 5, 3), (3, 4, 5), (((2,), (0,)), ((1,), (2,)))),  # batch dims anywhere
    ((2, 3, 4), (4, 3), (((1, 2), (1, 0)), ((), ()))),  # two contracting dims
    ((2, 3), (4,), (((), ()), ((), ()))),  # outer product
]


@pytest.mark.parametrize("case", DOT_CASES, ids=[str(c[2]) for c in DOT_CASES])
def test_dot_general_grads(case):
    lhs_shape, rhs_shape, numbers = case
    rng = np.random.RandomState(0)
    x, y = _values(rng, lhs_shape, -1, 1), _values(rng, rhs_shape, -1, 1)
    check_grads(lambda x, y: lax.dot_general(x, y, numbers), (x, y), order=2)


def test_dot_general_mixed_precision_cotangents_keep_operand_dtypes():
    x = np.ones((2, 3), np.float32)
    y = np.ones((3, 4), np.float32)
    f = lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), preferred_element_type=F64)  # noqa: E731
    out, pullback = vjp(f, x, y)
    assert out.dtype == F64
    ct_x, ct_y = pullback(np.ones((2, 4)))
    assert ct_x.dtype == np.float32 and ct_y.dtype == np.float32
    np.testing.assert_allclose(ct_x, np.full((2, 3), 4.0))
    np.testing.assert_allclose(ct_y, np.full((3, 4), 2.0))


def test_dot_general_is_a_dot_primitive_for_checkpoint_policies():
    assert lax.dot_general_p in dot_primitives
    aval = make_jaxpr(lambda x: x)(np.ones(2)).jaxpr.invars[0].aval
    numbers = (((1,), (0,)), ((), ()))
    assert checkpoint_policies.dots_saveable(lax.dot_general_p, aval, aval)
    assert checkpoint_policies.dots_with_no_batch_dims_saveable(
        lax.dot_general_p, aval, aval, dimension_numbers=numbers
    )


# --- non-differentiable primitives: zero and float0 tangents ---------------------------------

x3 = np.array([0.3, -1.7, 2.5])

ZERO_TANGENT = {  # float results: a zero tangent of the result's dtype
    "sign": lax.sign,
    "floor": lax.floor,
    "ceil": lax.ceil,
    "round": lax.round,
    "round_even": lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
    "int_ops": lambda x: lax.convert_element_type(
        lax.shift_left(
            lax.bitwise_xor(lax.convert_element_type(x, np.int32), np.int32(3)), np.int32(1)
        ),
        F64,
    ),
}

FLOAT0_TANGENT = {  # integer and bool results: float0 tangents
    "is_finite": lax.is_finite,
    "eq": lambda x: lax.eq(x, 0.3),
    "ne": lambda x: lax.ne(x, 0.3),
    "lt": lambda x: lax.lt(x, 0.3),
    "le": lambda x: lax.le(x, 0.3),
    "gt": lambda x: lax.gt(x, 0.3),
    "ge": lambda x: lax.ge(x, 0.3),
    "argmax": lambda x: lax.argmax(x, 0, np.int32),
    "argmin": lambda x: lax.argmin(x, 0, np.int32),
    "convert_to_int": lambda x: lax.convert_element_type(x, np.int32),
    "convert_to_bool": lambda x: lax.convert_element_type(x, np.bool_),
    "reduce_or": lambda x: lax.reduce_or(lax.gt(x, 0.0), (0,)),
}


@pytest.mark.parametrize("name", list(ZERO_TANGENT))
def test_zero_tangents(name):
    fn = ZERO_TANGENT[name]
    out, tangent = jvp(fn, (x3,), (np.ones(3),))
    np.testing.assert_array_equal(out, fn(x3))
    assert tangent.dtype == F64
    np.testing.assert_array_equal(tangent, np.zeros_like(x3))
    np.testing.assert_array_equal(grad(lambda x: lax.reduce_sum(fn(x), (0,)))(x3), 0.0)


@pytest.mark.parametrize("name", list(FLOAT0_TANGENT))
def test_float0_tangents(name):
    fn = FLOAT0_TANGENT[name]
    out, tangent = jvp(fn, (x3,), (np.ones(3),))
    np.testing.assert_array_equal(out, fn(x3))
    assert tangent.dtype == dtypes.float0 and tangent.shape == np.shape(out)
    ct = np.zeros(np.shape(out), dtypes.float0)
    (ct_x,) = vjp(fn, x3)[1](ct)
    np.testing.assert_array_equal(ct_x, np.zeros(3))


def test_nextafter_is_not_differentiable_as_in_jax():
    with pytest.raises(NotImplementedError, match="nextafter"):
        grad(lambda x: lax.nextafter(x, 1.0))(0.5)


def test_integer_pow_of_one_is_linear():
    ct = np.array([1.0, 2.0])
    (out,) = linear_transpose(lambda x: lax.integer_pow(x, 1), ct)(ct)
    np.testing.assert_array_equal(out, ct)
    with pytest.raises(NotImplementedError, match="integer_pow"):
        linear_transpose(lambda x: lax.integer_pow(x, 2), ct)(ct)


# --- JAX's conventions at kinks and singular points ---------------------------------------------


def _grad2(fn, x, y):
    return [float(g) for g in grad(fn, (0, 1))(F64(x), F64(y))]


def test_kink_conventions():
    assert grad(lax.abs)(0.0) == 1.0
    assert grad(lax.abs)(-0.0) == 1.0
    assert _grad2(lax.max, 0.0, 0.0) == [0.5, 0.5]
    assert _grad2(lax.min, 1.0, 1.0) == [0.5, 0.5]
    assert _grad2(lax.max, 1.0, 0.0) == [1.0, 0.0]
    g = grad(lambda x: lax.reduce_max(x, (0,)))(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_array_equal(g, [0.0, 0.5, 0.5, 0.0])
    g = grad(lambda x: lax.reduce_min(x, (1,)).sum())(np.array([[1.0, 1.0, 1.0], [2.0, 0.0, 3.0]]))
    np.testing.assert_allclose(g, [[1 / 3, 1 / 3, 1 / 3], [0.0, 1.0, 0.0]])
    # clamp: a value on a bound gets no gradient, and neither do the bounds (as JAX)
    assert _grad2(lambda lo, x: lax.clamp(lo, x, 1.0), 0.0, 0.0) == [0.0, 0.0]
    assert _grad2(lambda lo, x: lax.clamp(lo, x, 1.0), 0.0, -1.0) == [1.0, 0.0]
    assert _grad2(lambda x, hi: lax.clamp(0.0, x, hi), 2.0, 1.0) == [0.0, 1.0]


def test_singular_points_as_jax():
    inf, nan = np.inf, np.nan
    cases = [
        (lax.sqrt, 0.0, inf),
        (lax.cbrt, 0.0, inf),
        (lax.rsqrt, 0.0, -inf),
        (lax.log, 0.0, inf),
        (lax.atanh, 1.0, inf),
        (lax.acosh, 1.0, inf),
        (lambda x: lax.integer_pow(x, 0), 0.0, 0.0),
        (lambda x: lax.integer_pow(x, -1), 0.0, -inf),
        (lambda x: lax.pow(x, 0.0), 0.0, nan),  # y x^(y-1) = 0 * inf
        (lambda x: lax.pow(x, 2.0), 0.0, 0.0),
        (lambda x: lax.pow(x, 0.5), 0.0, inf),
        (lambda x: lax.pow(x, np.int32(0)), 0.0, 0.0),
        (lambda x: lax.pow(x, np.int32(2)), 0.0, 0.0),
        (lambda y: lax.pow(0.0, y), 2.0, 0.0),  # log(0) is replaced by log(1)
        (lambda y: lax.pow(0.0, y), 0.0, 0.0),
        (lambda y: lax.pow(-2.0, y), 2.0, nan),
    ]
    for fn, x, expected in cases:
        np.testing.assert_array_equal(grad(fn)(F64(x)), expected)
    assert np.isnan(_grad2(lax.atan2, 0.0, 0.0)).all()
    assert _grad2(lax.div, 0.0, 0.0)[0] == inf and np.isnan(_grad2(lax.div, 0.0, 0.0)[1])
    assert _grad2(lax.rem, 5.5, 2.0) == [1.0, -2.0]


def test_abs_of_complex_zero_has_zero_gradient():
    assert grad(lax.abs)(C128(0)) == 0
    np.testing.assert_allclose(grad(lax.abs)(C128(1 + 1j)), (1 - 1j) / np.sqrt(2))


# --- the derivative programs ----------------------------------------------------------------------


def _primitives(closed):
    return [e.primitive.name for e in closed.jaxpr.eqns]


def test_broadcasting_binary_ops_sum_cotangents_back():
    x, y = np.ones((2, 1)), np.ones((2, 3))
    gx, gy = grad(lambda x, y: lax.reduce_sum(lax.mul(x, y), (0, 1)), (0, 1))(x, y)
    assert gx.shape == (2, 1) and gy.shape == (2, 3)
    np.testing.assert_array_equal(gx, np.full((2, 1), 3.0))
    g = grad(lambda s: lax.reduce_sum(lax.add(s, y), (0, 1)))(F64(1.0))
    assert np.shape(g) == () and g == 6.0


def test_symbolic_zero_tangents_make_no_work():
    # differentiating only x: the constant operand's tangent is never materialized
    closed = make_jaxpr(lambda x: jvp(lambda x: lax.add(x, 1.0), (x,), (x,)))(np.ones(3))
    assert _primitives(closed) == ["add"]
    closed = make_jaxpr(lambda x: jvp(lambda x: lax.mul(x, 2.0), (x,), (x,)))(np.ones(3))
    assert _primitives(closed) == ["mul", "mul"]


def test_linear_structural_ops_transpose_to_structural_ops():
    f = lambda x: lax.reduce_sum(lax.slice(lax.transpose(x, (1, 0)), (0, 0), (2, 2)), (0, 1))  # noqa: E731
    names = _primitives(make_jaxpr(grad(f))(np.ones((2, 3))))
    assert "pad" in names and names.count("transpose") == 2 and "mul" not in names


# --- with jit ---------------------------------------------------------------------------------


def test_grad_and_jit_compose():
    from modjax.runtime import jit

    def f(x):
        y = lax.mul(lax.sin(x), x)  # x fans out: add_any in the backward pass
        return lax.reduce_sum(lax.pad(lax.dot_general(y, y, (((), ()), ((), ()))), 0.0,
                                      ((1, 0, 1), (0, 1, 0))), (0, 1))  # fmt: skip

    x = np.linspace(0.1, 1.0, 3)
    expected = grad(f)(x)
    np.testing.assert_allclose(jit(grad(f))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(grad(jit(f))(x), expected, rtol=1e-12)
    np.testing.assert_allclose(jit(grad(jit(f)))(x), expected, rtol=1e-12)


def test_jit_of_grad_through_many_primitives():
    from modjax.runtime import jit

    def f(x, y):
        a = lax.select_n(lax.gt(x, 0.0), lax.neg(x), lax.sin(x))
        b = lax.clamp(-0.5, lax.mul(a, y), 0.5)
        flipped = lax.rev(lax.transpose(lax.reshape(y, (3, 2)), (1, 0)), (1,))
        c = lax.concatenate([lax.max(a, b), flipped], 1)
        d = lax.pad(c, 0.0, ((1, 0, 1), (0, 1, 0)))
        e = lax.dot_general(d, d, (((1,), (1,)), ((), ())))
        m = lax.broadcast_in_dim(lax.reduce_max(y, (0,)), (2, 3), (1,))
        tail = lax.reduce_prod(lax.cos(lax.div(m, lax.add(y, 3.0))), (0, 1))
        return lax.add(lax.reduce_sum(lax.integer_pow(e, 2), (0, 1)), tail)

    rng = np.random.RandomState(0)
    x, y = rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 3))
    g = grad(f, (0, 1))
    for actual, expected in zip(jit(g)(x, y), g(x, y), strict=True):
        np.testing.assert_allclose(actual, expected, rtol=1e-10)
