"""Call-like primitives under vmap, batch_jaxpr, closures over outer tracers, source info."""

import numpy as np
import pytest
from batching_test_prims import (
    add_p,
    count_eqns,
    counted_p,
    mul_p,
    reduce_sum_p,
    rule_calls,
    sin_p,
)

from modjax.batching import (
    batch_jaxpr,
    broadcast_batch_p,
    clear_caches,
    moveaxis,
    moveaxis_p,
    register_call_batching,
    vmap,
)
from modjax.tracecore import (
    ClosedJaxpr,
    Primitive,
    call,
    call_p,
    eval_jaxpr,
    jaxpr_equal,
    make_jaxpr,
)
from modjax.tracecore.call import call_abstract_eval, call_impl

X = np.arange(12, dtype=np.float32).reshape(3, 4)


def _program():
    return make_jaxpr(lambda x: counted_p.bind(sin_p.bind(x)))(np.zeros(4, np.float32))


def test_call_program_is_batched_once():
    clear_caches()
    inner = _program()

    def f(x):
        y = call_p.bind(x, jaxpr=inner, name="g")[0]
        return call_p.bind(y, jaxpr=inner, name="g")[0]

    before = rule_calls["counted"]
    out = vmap(f)(X)
    np.testing.assert_allclose(out, np.sin(np.sin(X)), rtol=1e-6)
    assert rule_calls["counted"] - before == 1  # the second call reused the batched program
    closed = make_jaxpr(vmap(f))(X)
    calls = [e for e in closed.eqns if e.primitive is call_p]
    assert len(calls) == 2 and calls[0].params["jaxpr"] is calls[1].params["jaxpr"]
    assert rule_calls["counted"] - before == 1  # and so did a later vmap of the same program
    vmap(f, in_axes=1)(X.T)  # another batch dim is another program
    assert rule_calls["counted"] - before == 2


def test_call_keeps_unbatched_outputs_unbatched():
    def f(x, c):
        return call(lambda a, b: (sin_p.bind(a), mul_p.bind(b, 2.0)), x, c)

    a, b = vmap(f, in_axes=(0, None), out_axes=(0, None))(X, np.float32(3.0))
    np.testing.assert_allclose(a, np.sin(X), rtol=1e-6)
    assert float(b) == 6.0
    # A call with no batched operand (and no named axis) is left as it is.
    inner = _program()
    closed = make_jaxpr(
        vmap(
            lambda x, y: add_p.bind(x, call_p.bind(y, jaxpr=inner, name="g")[0]), in_axes=(0, None)
        )
    )(X, X[0])
    call_eqn = next(e for e in closed.eqns if e.primitive is call_p)
    assert call_eqn.params["jaxpr"] is inner


def test_call_keeps_batch_dims_where_rules_left_them():
    f = vmap(lambda x: call(lambda a: sin_p.bind(a), x), in_axes=1, out_axes=1)
    closed = make_jaxpr(f)(X)
    assert count_eqns(closed, moveaxis_p) == 0
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, X)[0], np.sin(X), rtol=1e-6)


def test_nested_calls_and_consts():
    c = np.arange(4, dtype=np.float32)

    def g(a):
        return call(lambda b: add_p.bind(b, c), sin_p.bind(a))  # c is a const of the inner program

    inner = make_jaxpr(g)(np.zeros(4, np.float32))
    assert inner.consts  # closed over c
    f = vmap(lambda x: call_p.bind(x, jaxpr=inner, name="g")[0])
    np.testing.assert_allclose(f(X), np.sin(X) + c, rtol=1e-6)
    closed = make_jaxpr(f)(X)
    call_eqn = next(e for e in closed.eqns if e.primitive is call_p)
    assert not call_eqn.params["jaxpr"].consts  # hoisted to operands
    np.testing.assert_allclose(
        eval_jaxpr(closed.jaxpr, closed.consts, X)[0], np.sin(X) + c, rtol=1e-6
    )


def test_register_call_batching_for_another_call_primitive():
    my_call_p = Primitive("bt_my_call")
    my_call_p.multiple_results = True
    my_call_p.def_impl(call_impl)
    my_call_p.def_abstract_eval(call_abstract_eval)
    seen = []

    def update_params(params, in_dims, out_dims, new_jaxpr):
        seen.append((in_dims, out_dims))
        return dict(params, jaxpr=new_jaxpr, note=f"batched {in_dims}")

    register_call_batching(my_call_p, update_params)
    inner = make_jaxpr(lambda a, b: (add_p.bind(a, b),))(np.zeros(4, np.float32), np.float32(0))
    f = vmap(lambda x, y: my_call_p.bind(x, y, jaxpr=inner, note="")[0], in_axes=(1, None))
    closed = make_jaxpr(f)(X.T, np.float32(1.0))
    assert seen == [((1, None), (1,))]
    assert closed.eqns[0].params["note"] == "batched (1, None)"
    np.testing.assert_allclose(f(X.T, np.float32(1.0)), X + 1)


def test_batch_jaxpr_api():
    closed = make_jaxpr(
        lambda x, y: (sin_p.bind(x), mul_p.bind(y, 2.0), reduce_sum_p.bind(x, axes=(0,)))
    )(np.zeros((2, 3), np.float32), np.float32(0))
    batched, out_dims = batch_jaxpr(closed, 5, [1, None])
    assert out_dims == (1, None, 0)
    assert [v.aval.shape for v in batched.jaxpr.invars] == [(2, 5, 3), ()]
    assert [v.aval.shape for v in batched.jaxpr.outvars] == [(2, 5, 3), (), (5, 3)]
    # Instantiate every output at axis 0 (True means 0), or each where asked.
    batched, out_dims = batch_jaxpr(closed, 5, [1, None], True)
    assert out_dims == (0, 0, 0)
    assert [v.aval.shape for v in batched.jaxpr.outvars] == [(5, 2, 3), (5,), (5, 3)]
    batched, out_dims = batch_jaxpr(closed, 5, [1, None], [-1, None, 0])
    assert out_dims == (2, None, 0)
    x = np.random.default_rng(0).standard_normal((2, 5, 3)).astype(np.float32)
    a, b, c = eval_jaxpr(batched.jaxpr, batched.consts, x, np.float32(1.5))
    np.testing.assert_allclose(a, np.moveaxis(np.sin(x), 1, 2), rtol=1e-6)
    assert float(b) == 3.0
    np.testing.assert_allclose(c, x.sum(axis=0), rtol=1e-5)
    # Cached on the jaxpr's identity: the same object comes back.
    again, _ = batch_jaxpr(closed, 5, [1, None], [-1, None, 0])
    assert again is batched
    other, _ = batch_jaxpr(closed, 4, [1, None], [-1, None, 0])
    assert other is not batched and not jaxpr_equal(other, batched)
    with pytest.raises(ValueError, match="in_dims"):
        batch_jaxpr(closed, 5, [0])


def test_vmap_of_a_closure_over_an_outer_vmaps_tracer():
    ys = np.arange(4, dtype=np.float32)

    def f(x):  # x is batched by the outer vmap; the inner one treats it as a constant
        return vmap(lambda y: mul_p.bind(x, y))(ys)

    out = vmap(f)(np.arange(3, dtype=np.float32))
    np.testing.assert_allclose(out, np.arange(3)[:, None] * ys[None, :])
    # The inner vmap may also map over the outer tracer itself.
    out = vmap(
        lambda row: vmap(lambda v: add_p.bind(v, sin_p.bind(row)), in_axes=0, out_axes=1)(row)
    )(X[:, :3])
    want = X[:, None, :3] + np.sin(X[:, :3, None])  # [b, j, i] = row[i] + sin(row[j])
    np.testing.assert_allclose(out, want, rtol=1e-6)
    closed = make_jaxpr(vmap(f))(np.arange(3, dtype=np.float32))
    assert count_eqns(closed, broadcast_batch_p) == 0


def test_vmap_inside_and_outside_make_jaxpr_keeps_source_lines():
    closed = make_jaxpr(vmap(lambda x, y: add_p.bind(sin_p.bind(x), y), in_axes=(1, None)))(
        X, X[:, 0]
    )
    for eqn in closed.eqns:
        assert eqn.source_info.frame.file_name == __file__
        assert "vmap" in eqn.source_info.name_stack


def test_leaked_batch_tracer_is_reported():
    leaked = []
    vmap(lambda x: leaked.append(x) or x)(X)
    with pytest.raises(Exception, match="unexpected tracer|escaped"):
        sin_p.bind(leaked[0])
    with pytest.raises(Exception, match="unexpected tracer|escaped"):
        make_jaxpr(lambda y: add_p.bind(y, leaked[0]))(X[0])


def test_vmap_of_eval_jaxpr_and_moveaxis_counts():
    def f(x):
        return reduce_sum_p.bind(mul_p.bind(sin_p.bind(x), x), axes=(1,))

    x = np.ones((2, 3, 4, 5), np.float32)
    # Two vmaps along axis 1: the batch dims stay where they are, nothing is transposed
    # when out_axes asks for them where they are.
    g = vmap(vmap(f, in_axes=1, out_axes=1), in_axes=1, out_axes=1)
    closed = make_jaxpr(g)(x)
    assert count_eqns(closed, moveaxis_p) == 0
    np.testing.assert_allclose(eval_jaxpr(closed.jaxpr, closed.consts, x)[0], g(x), rtol=1e-6)
    # With the default out_axes=0 each vmap moves its output axis once, and only then.
    closed = make_jaxpr(vmap(vmap(f, in_axes=1), in_axes=1))(x)
    assert count_eqns(closed, moveaxis_p) == 2
    # Re-batching a jaxpr is equation-by-equation too.
    program = make_jaxpr(f)(np.ones((2, 4, 5), np.float32))
    h = vmap(lambda v: eval_jaxpr(program.jaxpr, program.consts, v)[0], in_axes=1, out_axes=1)
    assert count_eqns(make_jaxpr(h)(np.ones((2, 3, 4, 5), np.float32)), moveaxis_p) == 0


def test_call_under_nested_vmaps_with_moveaxis_helper():
    inner = make_jaxpr(lambda a: moveaxis(sin_p.bind(a), 0, 1))(np.zeros((2, 3), np.float32))
    f = vmap(vmap(lambda v: call_p.bind(v, jaxpr=inner, name="t")[0]))
    x = np.random.default_rng(1).standard_normal((4, 5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(f(x), np.swapaxes(np.sin(x), 2, 3), rtol=1e-6)
    assert isinstance(make_jaxpr(f)(x), ClosedJaxpr)
