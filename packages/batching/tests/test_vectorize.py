"""vectorize: numpy.vectorize semantics with gufunc signatures, built on vmap."""

import numpy as np
import pytest
from batching_test_prims import add_p, count_eqns, matmul_p, mul_p, reduce_sum_p, sin_p
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.batching import broadcast_batch_p, parse_gufunc_signature, vectorize
from modjax.tracecore import make_jaxpr

RNG = np.random.default_rng(0)


def _rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def matvec(m, v):
    return reduce_sum_p.bind(mul_p.bind(m, v), axes=(1,))


def test_parse_signature():
    assert parse_gufunc_signature("(m,n),(n)->(m)") == ([("m", "n"), ("n",)], [("m",)])
    assert parse_gufunc_signature("(),()->(),()") == ([(), ()], [(), ()])
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        parse_gufunc_signature("(m,n)->m")


def test_elementwise_without_signature():
    f = vectorize(lambda a, b: add_p.bind(sin_p.bind(a), b))
    a, b = _rand(2, 1, 3), _rand(4, 1)
    np.testing.assert_allclose(f(a, b), np.sin(a) + b, rtol=1e-6)
    assert np.asarray(f(np.float32(1.0), np.float32(2.0))).shape == ()


def test_signatures_broadcast_loop_dims():
    mv = vectorize(matvec, signature="(n,m),(m)->(n)")
    m, v = _rand(2, 3), _rand(3)
    np.testing.assert_allclose(mv(m, v), m @ v, rtol=1e-5)
    np.testing.assert_allclose(mv(m, _rand(4, 3)).shape, (4, 2))
    ms, vs = _rand(5, 1, 2, 3), _rand(4, 3)
    np.testing.assert_allclose(
        mv(ms, vs), np.einsum("abnm,bm->abn", np.broadcast_to(ms, (5, 4, 2, 3)), vs), rtol=1e-5
    )
    mm = vectorize(matmul_p.bind, signature="(n,m),(m,k)->(n,k)")
    a, b = _rand(2, 1, 3, 4), _rand(5, 4, 2)
    np.testing.assert_allclose(mm(a, b), np.matmul(a, b), rtol=1e-5)


def test_size_one_loop_dims_are_not_materialized():
    mv = vectorize(matvec, signature="(n,m),(m)->(n)")
    closed = make_jaxpr(mv)(_rand(1, 7, 2, 3), _rand(5, 1, 3))
    assert count_eqns(closed, broadcast_batch_p) == 0
    out = mv(_rand(1, 1, 2, 3), _rand(1, 3))  # every loop dim of size 1
    assert np.asarray(out).shape == (1, 1, 2)


def test_excluded_none_and_keyword_arguments():
    f = vectorize(
        lambda x, scale, offset=0.0: add_p.bind(mul_p.bind(x, scale), offset), excluded={1}
    )
    np.testing.assert_allclose(
        f(_rand(3) * 0 + 1, np.float32(2.0), offset=np.float32(1.0)), [3, 3, 3]
    )
    g = vectorize(lambda x, y: x if y is None else add_p.bind(x, y))
    np.testing.assert_allclose(g(np.ones(3, np.float32), None), np.ones(3))


def test_multiple_outputs():
    f = vectorize(lambda a, b: (add_p.bind(a, b), mul_p.bind(a, b)), signature="(),()->(),()")
    s, p = f(_rand(2, 3), _rand(3))
    assert np.asarray(s).shape == (2, 3) and np.asarray(p).shape == (2, 3)


def test_errors():
    mv = vectorize(matvec, signature="(n,m),(m)->(n)")
    with pytest.raises(ValueError, match="does not have enough dimensions for all core dimensions"):
        mv(_rand(3), _rand(3))
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'm'"):
        mv(_rand(2, 3), _rand(4))
    with pytest.raises(ValueError, match="output shape .* does not match core dimensions"):
        vectorize(lambda m, v: m, signature="(n,m),(m)->(n)")(_rand(2, 3), _rand(3))
    with pytest.raises(TypeError, match="wrong number of positional arguments"):
        mv(_rand(2, 3))
    with pytest.raises(TypeError, match="output must be a tuple"):
        vectorize(lambda a: a, signature="()->(),()")(_rand(2))
    with pytest.raises(TypeError, match="can only exclude integer or string"):
        vectorize(lambda a: a, excluded={1.5})
    with pytest.raises(ValueError, match="negative"):
        vectorize(lambda a: a, excluded={-1})
    with pytest.raises(ValueError, match="could not be broadcast|shape mismatch"):
        vectorize(add_p.bind)(_rand(2, 3), _rand(4))


@settings(max_examples=examples(40), deadline=None)
@given(
    st.lists(st.sampled_from([1, 2, 3]), max_size=3),
    st.lists(st.sampled_from([1, 2, 3]), max_size=3),
)
def test_matvec_matches_numpy_broadcasting(loop_a, loop_b):
    try:
        np.broadcast_shapes(tuple(loop_a), tuple(loop_b))
    except ValueError:
        return
    m, v = _rand(*loop_a, 2, 3), _rand(*loop_b, 3)
    got = vectorize(matvec, signature="(n,m),(m)->(n)")(m, v)
    want = np.matmul(m, v[..., None])[..., 0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
