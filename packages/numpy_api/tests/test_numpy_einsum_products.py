"""modjax.numpy products, einsum (and its contraction-path search) and comparison helpers,
against numpy, eagerly and under jit; result dtypes against JAX 0.10.2's."""

from __future__ import annotations

import itertools
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.core import to_aval

BF16 = np.dtype(ml_dtypes.bfloat16)


def rand(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -3, 4, size=shape).astype(dtype)
    if dtype.kind == "c":
        return (rng.uniform(-2, 2, shape) + 1j * rng.uniform(-2, 2, shape)).astype(dtype)
    return rng.uniform(-2, 2, shape).astype(dtype)


def wide(x):
    x = np.asarray(x)
    if x.dtype.kind == "f" or x.dtype == BF16:
        return x.astype(np.float64)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    return x


def check(jfn, nfn, *args, dtype=None, tol=1e-5):
    expected = np.asarray(nfn(*[wide(a) for a in args]))
    for out in (jfn(*args), jit(jfn)(*args)):
        assert out.shape == expected.shape, (out.shape, expected.shape)
        if dtype is not None:
            assert out.dtype == np.dtype(dtype), (out.dtype, dtype)
        got = wide(np.asarray(out))
        if got.dtype.kind in "iub":
            np.testing.assert_array_equal(got, expected.astype(got.dtype))
        else:
            np.testing.assert_allclose(got, wide(expected), rtol=tol, atol=tol)


# --- result dtypes recorded from JAX 0.10.2 -------------------------------------------------

I8, B, F16 = jnp.ones(3, jnp.int8), jnp.ones(3, bool), jnp.ones(3, jnp.float16)
M8 = jnp.ones((3, 3), jnp.int8)
JAX_DTYPES = {
    "trace_i8": (lambda: jnp.trace(M8), "int32"),
    "trace_bool": (lambda: jnp.trace(jnp.ones((3, 3), bool)), "int32"),
    "trace_f16": (lambda: jnp.trace(jnp.ones((3, 3), jnp.float16)), "float16"),
    "vdot_i8": (lambda: jnp.vdot(I8, I8), "int8"),
    "vdot_bool": (lambda: jnp.vdot(B, B), "bool"),
    "matmul_bool": (lambda: jnp.matmul(jnp.ones((2, 2), bool), jnp.ones((2, 2), bool)), "bool"),
    "outer_bool": (lambda: jnp.outer(B, B), "bool"),
    "cross_i8": (lambda: jnp.cross(I8, I8), "int8"),
    "einsum_i8": (lambda: jnp.einsum("i,i->", I8, I8), "int8"),
    "einsum_bool": (lambda: jnp.einsum("i,i->", B, B), "bool"),
    "einsum_sum_bool": (lambda: jnp.einsum("i->", B), "bool"),
    "einsum_mixed": (lambda: jnp.einsum("i,i->", I8, F16), "float16"),
    "einsum_sum_i8": (lambda: jnp.einsum("i->", I8), "int8"),
    "einsum_preferred": (
        lambda: jnp.einsum("i,i", I8, I8, preferred_element_type=jnp.int32),
        "int32",
    ),
    "einsum_bf16_f32": (
        lambda: jnp.einsum(
            "ij,jk",
            jnp.ones((2, 3), jnp.bfloat16),
            jnp.ones((3, 2), jnp.bfloat16),
            preferred_element_type=jnp.float32,
        ),
        "float32",
    ),
    "einsum_scalar_weak": (lambda: jnp.einsum("", 3.0), "float32*"),
    "vecdot_c64": (
        lambda: jnp.vecdot(jnp.ones(2, jnp.complex64), jnp.ones(2, jnp.complex64)),
        "complex64",
    ),
    "tensordot_f16": (lambda: jnp.tensordot(F16, F16, 1), "float16"),
    "kron_i8": (lambda: jnp.kron(I8, I8), "int8"),
    "matmul_pref": (lambda: jnp.matmul(M8, M8, preferred_element_type=jnp.int32), "int32"),
}


@pytest.mark.parametrize("name", list(JAX_DTYPES))
def test_result_dtypes_match_jax(name):
    fn, expected = JAX_DTYPES[name]
    (out,) = make_jaxpr(fn)().out_avals
    assert out.dtype.name + ("*" if out.weak_type else "") == expected


# --- products -------------------------------------------------------------------------------

PRODUCT_DTYPES = ["float32", "int8", "float16", "complex64"]
MATMUL_SHAPES = [
    ((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((5, 2, 3), (3, 4)), ((1, 2, 3), (5, 3, 4)),
    ((0, 3), (3, 2)), ((2, 0), (0, 2)),
]  # fmt: skip


def _tol(dtype):
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64, np.int8) else 2e-2


@given(data=st.data())
def test_matmul_dot_vdot_inner_outer(data):
    sa, sb = data.draw(st.sampled_from(MATMUL_SHAPES))
    dtype = data.draw(st.sampled_from(PRODUCT_DTYPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a, b = rand(rng, sa, dtype), rand(rng, sb, dtype)
    tol = _tol(dtype)
    check(jnp.matmul, np.matmul, a, b, dtype=dtype, tol=tol)
    check(lambda x, y: x @ y, np.matmul, a, b, dtype=dtype, tol=tol)
    check(jnp.dot, np.dot, a, b, dtype=dtype, tol=tol)
    check(jnp.outer, np.outer, a, b, dtype=dtype, tol=tol)
    if a.size == b.size:
        check(jnp.vdot, np.vdot, a, b, dtype=dtype, tol=tol)
    if sa[-1] == sb[-1]:
        check(jnp.inner, np.inner, a, b, dtype=dtype, tol=tol)
    if len(sa) >= 2 and len(sb) == 1:
        check(
            jnp.matvec, lambda x, y: np.einsum("...ij,...j->...i", x, y), a, b, dtype=dtype, tol=tol
        )
    if len(sa) == 1 and len(sb) >= 2:
        check(
            jnp.vecmat,
            lambda x, y: np.einsum("...i,...ij->...j", np.conj(x), y),
            a,
            b,
            dtype=dtype,
            tol=tol,
        )


@given(data=st.data())
def test_vecdot_tensordot_kron(data):
    dtype = data.draw(st.sampled_from(PRODUCT_DTYPES))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    tol = _tol(dtype)
    a, b = rand(rng, (2, 1, 3), dtype), rand(rng, (4, 3), dtype)
    check(jnp.vecdot, lambda x, y: np.sum(np.conj(x) * y, axis=-1), a, b, dtype=dtype, tol=tol)
    c = rand(rng, (3, 2, 4), dtype)
    check(
        lambda x, y: jnp.vecdot(x, y, axis=0),
        lambda x, y: np.sum(np.conj(x) * y, axis=0),
        c,
        c,
        dtype=dtype,
        tol=tol,
    )
    x, y = rand(rng, (2, 3, 4), dtype), rand(rng, (4, 3, 5), dtype)
    axes = data.draw(st.sampled_from([1, ((1, 2), (1, 0)), ([2], [0]), (2, 0)]))
    check(
        lambda u, v: jnp.tensordot(u, v, axes),
        lambda u, v: np.tensordot(u, v, axes),
        x,
        y,
        dtype=dtype,
        tol=tol,
    )
    check(
        lambda u, v: jnp.tensordot(u, v, 0),
        lambda u, v: np.tensordot(u, v, 0),
        a,
        b,
        dtype=dtype,
        tol=tol,
    )
    sa, sb = data.draw(st.sampled_from([((2, 3), (4,)), ((2,), (3, 2)), ((2, 1, 2), (3, 2))]))
    check(jnp.kron, np.kron, rand(rng, sa, dtype), rand(rng, sb, dtype), dtype=dtype, tol=tol)


@given(data=st.data())
def test_trace_diagonal(data):
    shape = data.draw(st.sampled_from([(3, 3), (2, 4), (4, 2), (2, 3, 4), (0, 3)]))
    dtype = data.draw(st.sampled_from(["float32", "int8", "bool"]))
    x = rand(np.random.default_rng(data.draw(st.integers(0, 2**16))), shape, dtype)
    offset = data.draw(st.sampled_from([0, 1, -1, 3, -5]))
    axes = data.draw(
        st.sampled_from([(0, 1), (1, 0), (-1, 0)] if len(shape) > 2 else [(0, 1), (1, 0)])
    )
    check(
        lambda v: jnp.diagonal(v, offset, *axes),
        lambda v: np.diagonal(v, offset, *axes),
        x,
        dtype=dtype,
    )
    trace_dtype = {"float32": "float32", "int8": "int32", "bool": "int32"}[dtype]
    check(
        lambda v: jnp.trace(v, offset, *axes),
        lambda v: np.trace(v, offset, *axes),
        x,
        dtype=trace_dtype,
    )


@given(data=st.data())
def test_cross(data):
    da, db = data.draw(st.sampled_from([(3, 3), (2, 2), (2, 3), (3, 2)]))
    dtype = data.draw(st.sampled_from(["float32", "int8"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a, b = rand(rng, (4, da), dtype), rand(rng, (db,), dtype)
    check(jnp.cross, np.cross, a, b, dtype=dtype)
    a2, b2 = rand(rng, (da, 2), dtype), rand(rng, (3, db, 1), dtype)
    if da == 3 or db == 3:
        kwargs = {"axisa": 0, "axisb": 1, "axisc": 0}
        check(
            lambda x, y: jnp.cross(x, y, **kwargs),
            lambda x, y: np.cross(x, y, **kwargs),
            a2,
            b2,
            dtype=dtype,
        )


def test_product_errors():
    with pytest.raises(ValueError, match="2 or 3"):
        jnp.cross(jnp.ones(4), jnp.ones(3))
    with pytest.raises(ValueError, match="ndim at least 1"):
        jnp.matmul(jnp.ones(()), jnp.ones(3))
    with pytest.raises(TypeError):
        jnp.vdot(jnp.ones(3), jnp.ones(4))
    with pytest.raises(TypeError):
        jnp.tensordot(jnp.ones((2, 3)), jnp.ones((4, 2)), 1)
    with pytest.raises(ValueError, match="two dimensions"):
        jnp.diagonal(jnp.ones(3))
    with pytest.raises(ValueError, match="axis1 and axis2 can not be same"):
        jnp.trace(jnp.ones((2, 2)), axis1=1, axis2=-1)


# --- einsum ---------------------------------------------------------------------------------

LABEL_SIZES = {"a": 2, "b": 3, "c": 1, "d": 4, "e": 2}


@st.composite
def einsum_cases(draw):
    """An einsum expression and its operand shapes (repeated labels, ellipses, implicit output)."""
    n_ops = draw(st.integers(1, 3))
    ellipsis = draw(st.sampled_from([None, (2,), (3, 2)]))
    terms, shapes = [], []
    for _ in range(n_ops):
        labels = draw(st.lists(st.sampled_from("abcde"), min_size=0, max_size=3))
        use_dots = ellipsis is not None and draw(st.booleans())
        shape = [LABEL_SIZES[c] for c in labels]
        term = "".join(labels)
        if use_dots:
            k = draw(st.integers(0, len(ellipsis)))
            dots_shape = list(ellipsis[len(ellipsis) - k :])
            if dots_shape and draw(st.booleans()):
                dots_shape[0] = 1  # broadcasts against the other operands
            cut = draw(st.integers(0, len(labels)))
            term = term[:cut] + "..." + term[cut:]
            shape = shape[:cut] + dots_shape + shape[cut:]
        terms.append(term)
        shapes.append(tuple(shape))
    used = sorted({c for t in terms for c in t if c != "."})
    text = ",".join(terms)
    if draw(st.booleans()):
        out = draw(st.permutations(used))
        out = "".join(out[: draw(st.integers(0, len(out)))])
        if any("..." in t for t in terms):  # numpy needs the dots in an explicit output
            out = "..." + out
        text += "->" + out
    return text, shapes


@given(case=einsum_cases(), data=st.data())
def test_einsum_matches_numpy(case, data):
    subscripts, shapes = case
    dtype = data.draw(st.sampled_from(["float32", "int32"]))
    optimize = data.draw(st.sampled_from([True, False, "greedy", "optimal"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    operands = [rand(rng, s, dtype) for s in shapes]
    expected = np.einsum(subscripts, *[wide(o) for o in operands])

    def fn(*ops):
        return jnp.einsum(subscripts, *ops, optimize=optimize)

    for out in (fn(*operands), jit(fn)(*operands)):
        assert out.dtype == np.dtype(dtype)
        assert out.shape == expected.shape, (subscripts, out.shape, expected.shape)
        np.testing.assert_allclose(wide(np.asarray(out)), expected, rtol=1e-5, atol=1e-5)


def test_einsum_forms():
    rng = np.random.default_rng(0)
    a, b, c = rand(rng, (2, 3), "float32"), rand(rng, (3, 4), "float32"), rand(rng, (4,), "float32")
    np.testing.assert_allclose(
        np.asarray(jnp.einsum(a, [0, 1], b, [1, 2], [0, 2])),
        np.einsum(a, [0, 1], b, [1, 2], [0, 2]),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        np.asarray(jnp.einsum(a, [Ellipsis, 1], b, [1, 2])),
        np.einsum(a, [Ellipsis, 1], b, [1, 2]),
        rtol=1e-5,
    )
    np.testing.assert_allclose(
        np.asarray(jnp.einsum("Ba,aB", a, a.T)), np.einsum("Ba,aB", a, a.T), rtol=1e-5
    )
    x = np.arange(12.0, dtype=np.float32).reshape(2, 2, 3)
    assert jnp.einsum("iij->ji", x).tolist() == np.einsum("iij->ji", x).tolist()
    assert jnp.einsum("...i->i", jnp.ones((2, 3))).tolist() == [2.0, 2.0, 2.0]  # JAX sums the dots
    assert jnp.einsum("ij,ij->ij", jnp.ones((1, 3)), jnp.ones((2, 3))).shape == (2, 3)
    path = [(1, 2), (0, 1)]
    out = jnp.einsum("ij,jk,k->i", a, b, c, optimize=path)
    np.testing.assert_allclose(np.asarray(out), np.einsum("ij,jk,k->i", a, b, c), rtol=1e-5)
    out = jnp.einsum("ij,jk,k->i", a, b, c, optimize=["einsum_path", (0, 1, 2)])
    np.testing.assert_allclose(np.asarray(out), np.einsum("ij,jk,k->i", a, b, c), rtol=1e-5)


def test_einsum_errors():
    with pytest.raises(ValueError, match="does not match"):
        jnp.einsum("ij,j->i", jnp.ones((2, 3)), jnp.ones(4))
    with pytest.raises(ValueError, match="did not appear"):
        jnp.einsum("ij->k", jnp.ones((2, 3)))
    with pytest.raises(ValueError, match="more than once"):
        jnp.einsum("ij->ii", jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="equal to the number of operands"):
        jnp.einsum("ij,jk", jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="correct number of indices"):
        jnp.einsum("ijk", jnp.ones((2, 2)))
    with pytest.raises(ValueError, match="path"):
        jnp.einsum("ij,jk", jnp.ones((2, 2)), jnp.ones((2, 2)), optimize=[(0, 2)])
    with pytest.raises(ValueError, match="optimize"):
        jnp.einsum("ij,jk", jnp.ones((2, 2)), jnp.ones((2, 2)), optimize="fastest")


def test_einsum_contracts_with_dot_general_not_outer_products():
    a, b, c = jnp.ones((2, 3)), jnp.ones((3, 4)), jnp.ones((4, 5))
    jaxpr = make_jaxpr(lambda x, y, z: jnp.einsum("ij,jk,kl->il", x, y, z))(a, b, c)
    prims = [eqn.primitive.name for eqn in jaxpr.jaxpr.eqns]
    assert prims.count("dot_general") == 2
    assert "mul" not in prims and "broadcast_in_dim" not in prims
    batched = make_jaxpr(lambda x, y: jnp.einsum("bij,bjk->bik", x, y))(
        jnp.ones((5, 2, 3)), jnp.ones((5, 3, 4))
    )
    (eqn,) = batched.jaxpr.eqns
    assert eqn.primitive.name == "dot_general"
    assert eqn.params["dimension_numbers"] == (((2,), (1,)), ((0,), (0,)))
    diag = make_jaxpr(lambda x: jnp.einsum("ii->i", x))(jnp.ones((3, 3)))
    assert {e.primitive.name for e in diag.jaxpr.eqns} <= {"reshape", "slice", "transpose"}


# --- contraction paths ----------------------------------------------------------------------


def path_flops(subscripts: str, shapes, path) -> int:
    """Count a path's FLOPs independently of modjax: 2 per multiply-add of each pairwise step."""
    inputs, output = subscripts.split("->")
    terms = [set(t) for t in inputs.split(",")]
    sizes = {}
    for t, s in zip(inputs.split(","), shapes, strict=True):
        sizes.update(zip(t, s, strict=True))
    total = 0
    for i, j in path:
        a, b = terms[i], terms[j]
        rest = [t for k, t in enumerate(terms) if k not in (i, j)]
        needed = set(output).union(*rest)
        joint = a | b
        result = joint & needed
        total += math.prod(sizes[c] for c in joint) * (2 if joint - result else 1)
        terms = rest + [result]
    return total


def test_path_search_beats_left_to_right_on_a_chain():
    subscripts = "ij,jk,kl->il"
    shapes = [(1000, 10), (10, 1000), (1000, 10)]
    operands = [np.ones(s, np.float32) for s in shapes]
    left_to_right = path_flops(subscripts, shapes, [(0, 1), (0, 1)])
    for optimize in ("greedy", "optimal", True):
        path, info = jnp.einsum_path(subscripts, *operands, optimize=optimize)
        assert path == [(1, 2), (0, 1)]
        assert path_flops(subscripts, shapes, path) == info.opt_cost == 400_000
        assert info.opt_cost * 50 < left_to_right
        assert "Optimized FLOP count" in str(info)
    assert jnp.einsum_path(subscripts, *operands, optimize=False)[0] == [(0, 1), (0, 1)]
    out = jnp.einsum(subscripts, *operands)
    assert out.shape == (1000, 10) and float(out[0, 0]) == 10000.0


@given(data=st.data())
def test_optimal_path_is_cheapest_and_greedy_is_valid(data):
    n = data.draw(st.integers(3, 4))
    sizes = {c: data.draw(st.sampled_from([2, 5, 40]), label=c) for c in "abcdef"}
    terms = [
        "".join(data.draw(st.lists(st.sampled_from("abcdef"), min_size=1, max_size=3, unique=True)))
        for _ in range(n)
    ]
    counts = {c: sum(t.count(c) for t in terms) for c in "abcdef"}
    output = "".join(c for c in "abcdef" if counts[c] == 1)
    subscripts = ",".join(terms) + "->" + output
    shapes = [tuple(sizes[c] for c in t) for t in terms]
    optimal, _ = jnp.einsum_path(subscripts, *[np.empty(s) for s in shapes], optimize="optimal")
    greedy, _ = jnp.einsum_path(subscripts, *[np.empty(s) for s in shapes], optimize="greedy")

    def all_paths(count):  # every sequence of pairwise contractions
        if count == 1:
            yield []
            return
        for pair in itertools.combinations(range(count), 2):
            for rest in all_paths(count - 1):
                yield [pair, *rest]

    best = min(path_flops(subscripts, shapes, p) for p in all_paths(n))
    assert path_flops(subscripts, shapes, optimal) == best
    assert path_flops(subscripts, shapes, greedy) >= best
    assert len(greedy) == n - 1


# --- comparison helpers ---------------------------------------------------------------------


@given(data=st.data())
def test_isclose_allclose_match_numpy(data):
    dtype = data.draw(st.sampled_from(["float32", "float16", "complex64", "int32"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    a = rand(rng, (2, 5), dtype)
    b = rand(rng, (5,), dtype)
    if dtype != "int32":
        b = (a[1] + b * 1e-6).astype(dtype)  # close to row 1, mostly not to row 0
    if np.dtype(dtype).kind == "f":
        a[0, :3] = [np.inf, np.nan, -np.inf]
        b[:3] = [np.inf, np.nan, np.inf]
    equal_nan = data.draw(st.booleans())
    rtol = data.draw(st.sampled_from([1e-5, 1e-2]))
    ref = np.isclose(a, b, rtol=rtol, equal_nan=equal_nan)
    check(
        lambda x, y: jnp.isclose(x, y, rtol=rtol, equal_nan=equal_nan),
        lambda x, y: ref,
        a,
        b,
        dtype=bool,
    )
    got = jnp.allclose(a, b, rtol=rtol, equal_nan=equal_nan)
    assert got.dtype == np.bool_ and bool(got) == np.allclose(a, b, rtol=rtol, equal_nan=equal_nan)


def test_array_predicates():
    x = jnp.array([1.0, np.nan, 3.0])
    assert bool(jnp.array_equal(x, x, equal_nan=True)) and not bool(jnp.array_equal(x, x))
    assert not bool(jnp.array_equal(jnp.ones(3), jnp.ones(2)))
    assert bool(jnp.array_equal(jnp.ones(3), jnp.ones(3, int)))
    assert bool(jnp.array_equal([1, 2], [1, 2]))
    assert bool(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 3))))
    assert not bool(jnp.array_equiv(jnp.ones(3), jnp.ones((2, 2))))
    assert jnp.array_equal(jnp.ones(2), jnp.ones(2)).dtype == np.bool_
    assert jit(jnp.array_equal)(jnp.ones(2), jnp.ones(2)).tolist() is True
    assert [jnp.iscomplexobj(1j), jnp.iscomplexobj(jnp.ones(2)), jnp.iscomplexobj([1j])] == [
        True,
        False,
        True,
    ]
    assert jnp.isrealobj(1.0) and not jnp.iscomplexobj(None)
    values = (1.0, jnp.ones(()), np.float32(1), np.ones(()), [1], "a", jnp.ones(1))
    assert [jnp.isscalar(v) for v in values] == [True, True, True, True, False, True, False]
    assert [
        jnp.can_cast(jnp.int8, jnp.int32),
        jnp.can_cast(jnp.float32, jnp.bfloat16),
        jnp.can_cast(jnp.bfloat16, jnp.float32),
        jnp.can_cast(jnp.ones(2), jnp.int32, "same_kind"),
        jnp.can_cast(jnp.int32, jnp.float16, "same_kind"),
        jnp.can_cast(jnp.int8, jnp.bfloat16),
        jnp.can_cast(jnp.bfloat16, jnp.float16, "same_kind"),
        jnp.can_cast(jnp.float16, jnp.bfloat16),
    ] == [True, False, True, False, True, True, True, False]
    with pytest.raises(TypeError, match="Python ints"):
        jnp.can_cast(1, jnp.int8)
    assert jnp.result_type(jnp.int8, jnp.uint8) == np.int16
    assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32
    assert (
        jnp.ndim(jnp.ones((2, 3))) == 2
        and jnp.shape(3.0) == ()
        and jnp.size(jnp.ones((2, 3)), 1) == 3
    )


# Weak types of products, from JAX 0.10.2: weakly typed when both operands are and no
# preferred_element_type is given (jnp.dot of two Python floats is ~float32).
_W1, _W2 = jnp.full(3, 2.0), jnp.full((3, 3), 2.0)
PRODUCT_WEAK_TYPES = [
    ("dot 1-d", lambda: jnp.dot(_W1, _W1), True),
    ("dot 2-d 1-d", lambda: jnp.dot(_W2, _W1), True),
    ("dot scalars", lambda: jnp.dot(2.0, 3.0), True),
    ("dot ints", lambda: jnp.dot(jnp.full(3, 2), jnp.full(3, 2)), True),
    ("dot preferred", lambda: jnp.dot(_W1, _W1, preferred_element_type=jnp.float32), False),
    ("dot scalars preferred", lambda: jnp.dot(2.0, 2.0, preferred_element_type=jnp.float32), False),
    ("dot strong", lambda: jnp.dot(_W1, jnp.ones(3)), False),
    ("vdot", lambda: jnp.vdot(_W1, _W1), True),
    ("matmul", lambda: jnp.matmul(_W2, _W1), True),
    ("@", lambda: _W2 @ _W2, True),
    ("inner", lambda: jnp.inner(_W1, _W1), True),
    ("tensordot", lambda: jnp.tensordot(_W2, _W2), True),
    ("einsum", lambda: jnp.einsum("ij,j->i", _W2, _W1), True),
    ("einsum strong", lambda: jnp.einsum("ij,j->i", _W2, jnp.ones(3)), False),
    ("vecdot", lambda: jnp.vecdot(_W1, _W1), True),
    ("matvec", lambda: jnp.matvec(_W2, _W1), True),
]


@pytest.mark.parametrize("name,f,weak", PRODUCT_WEAK_TYPES, ids=[c[0] for c in PRODUCT_WEAK_TYPES])
def test_product_weak_types_match_jax(name, f, weak):
    assert to_aval(f()).weak_type is weak


def test_einsum_labels_may_be_any_character_but_the_syntax():
    # As JAX 0.10.2 (opt_einsum's parser): digits and other symbols label dimensions
    # (flax's grouped-query attention writes '...kh1d').
    a, b = np.arange(6.0).reshape(2, 3), np.arange(6.0, 12.0).reshape(2, 3)
    np.testing.assert_allclose(jnp.einsum("a1,a1->a", a, b), np.einsum("ab,ab->a", a, b))
    np.testing.assert_allclose(jnp.einsum("a_->_a", a), a.T)
    q, k = np.ones((2, 3, 4, 1, 5)), np.ones((2, 3, 4, 5))
    assert jnp.einsum("...kh1d,...khd->...kh", q, k).shape == (2, 3, 4)
