"""checkpoint / remat: policies decide the residuals of reverse mode."""

import numpy as np
import pytest
from autodiff_test_prims import add, cos, dot, dot_p, mul, sin, sin_p, sum_all, transpose
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.autodiff import (
    Offloadable,
    Recompute,
    Saveable,
    checkpoint,
    checkpoint_name,
    checkpoint_policies,
    dot_primitives,
    grad,
    jvp,
    remat,
    remat_p,
    vjp,
)
from modjax.tracecore import call, make_jaxpr
from modjax.tracecore.check import check_jaxpr
from modjax.tracecore.evaluation import eval_jaxpr

cp = checkpoint_policies
X = np.linspace(-1.0, 1.0, 3).astype(np.float32)


def f(x):
    return sin(sin(x))


def vjp_jaxpr(fun, x=X):
    closed = make_jaxpr(lambda x, ct: vjp(fun, x)[1](ct))(x, np.ones_like(x))
    check_jaxpr(closed)
    return closed


def remats(closed):
    eqns = [e for e in closed.jaxpr.eqns if e.primitive is remat_p]
    assert len(eqns) == 2, closed
    return eqns  # forward, backward


def inner_names(eqn):
    return [e.primitive.name for e in eqn.params["jaxpr"].jaxpr.eqns]


@settings(max_examples=examples(10), deadline=None)
@given(st.floats(-2.0, 2.0, width=32))
def test_checkpoint_does_not_change_values_or_derivatives(x):
    x = np.float32(x)
    want = np.cos(np.sin(x)) * np.cos(x)
    for policy in (None, cp.everything_saveable, cp.nothing_saveable, cp.dots_saveable):
        g = grad(checkpoint(f, policy=policy))(x)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)
    second = -np.sin(np.sin(x)) * np.cos(x) ** 2 - np.cos(np.sin(x)) * np.sin(x)
    np.testing.assert_allclose(grad(grad(remat(f)))(x), second, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(
        jvp(checkpoint(f), (x,), (np.float32(1.0),))[1], want, rtol=1e-5, atol=1e-6
    )


def test_nothing_saveable_saves_only_inputs_and_recomputes_the_forward():
    closed = vjp_jaxpr(checkpoint(f))  # the default policy saves nothing
    x_var, ct_var = closed.jaxpr.invars
    fwd, bwd = remats(closed)
    assert bwd.invars == [x_var, ct_var]  # residuals: only the input
    assert inner_names(bwd).count("ad_sin") == 1  # sin(x) recomputed in the backward pass
    assert len(fwd.outvars) == 1  # the forward saves nothing extra
    np.testing.assert_allclose(
        eval_jaxpr(closed.jaxpr, closed.consts, X, np.ones(3, np.float32))[0],
        np.cos(np.sin(X)) * np.cos(X),
        rtol=1e-6,
    )


def test_everything_saveable_saves_intermediates_and_recomputes_nothing():
    closed = vjp_jaxpr(checkpoint(f, policy=cp.everything_saveable))
    x_var, ct_var = closed.jaxpr.invars
    fwd, bwd = remats(closed)
    assert x_var not in bwd.invars and ct_var in bwd.invars
    assert len(fwd.outvars) == 3  # the output and two residuals (cos x, cos sin x)
    assert set(inner_names(bwd)) == {"ad_mul"}


def test_save_only_these_names():
    def g(x):
        return cos(checkpoint_name(sin(x), "s"))

    closed = vjp_jaxpr(checkpoint(g, policy=cp.save_only_these_names("s")))
    x_var, ct_var = closed.jaxpr.invars
    fwd, bwd = remats(closed)
    assert len(fwd.outvars) == 2  # the output and the named value
    named = fwd.outvars[1]
    assert bwd.invars == [x_var, named, ct_var]
    assert "name" in inner_names(fwd) and "name" not in inner_names(bwd)
    # a name the policy does not list is recomputed like anything else
    closed = vjp_jaxpr(checkpoint(g, policy=cp.save_only_these_names("other")))
    fwd, bwd = remats(closed)
    assert len(fwd.outvars) == 1 and "ad_sin" in inner_names(bwd)
    # save_anything_except_these_names("s"): the unnamed sin(x) is saved, so the named
    # value costs only its (identity) recomputation; nothing else is recomputed
    closed = vjp_jaxpr(checkpoint(g, policy=cp.save_anything_except_these_names("s")))
    fwd, bwd = remats(closed)
    assert closed.jaxpr.invars[0] not in bwd.invars
    assert "ad_sin" not in inner_names(bwd) and "ad_cos" not in inner_names(bwd)
    np.testing.assert_allclose(
        grad(checkpoint(lambda x: sum_all(g(x)), policy=cp.save_only_these_names("s")))(X),
        -np.sin(np.sin(X)) * np.cos(X),
        rtol=1e-6,
    )


@pytest.fixture
def dot_is_a_dot():
    dot_primitives.add(dot_p)
    yield
    dot_primitives.discard(dot_p)


def matmul_chain(a):
    return sin(dot(sin(a), transpose(a)))


A = np.arange(4, dtype=np.float32).reshape(2, 2) / 4


def test_dots_saveable_uses_the_dot_registry(dot_is_a_dot):
    for policy in (cp.dots_saveable, cp.dots_with_no_batch_dims_saveable):
        closed = vjp_jaxpr(checkpoint(matmul_chain, policy=policy), A)
        fwd, bwd = remats(closed)
        assert "ad_dot" in inner_names(fwd)
        # the dot's result is saved: the backward pass does not recompute it
        recomputed = inner_names(bwd)
        assert recomputed.count("ad_dot") == 2  # only the two transposed dots
        assert recomputed.count("ad_sin") == 1  # sin(a) is needed and was not saved


def test_dots_saveable_saves_nothing_without_registered_dots():
    closed = vjp_jaxpr(checkpoint(matmul_chain, policy=cp.dots_saveable), A)
    fwd, bwd = remats(closed)
    assert len(fwd.outvars) == 1
    assert inner_names(bwd).count("ad_dot") == 3  # recomputed, then two transposed


def test_dots_with_no_batch_dims_reads_dimension_numbers(dot_is_a_dot):
    policy = cp.dots_with_no_batch_dims_saveable
    assert policy(dot_p, dimension_numbers=(((1,), (0,)), ((), ())))
    assert not policy(dot_p, dimension_numbers=(((2,), (1,)), ((0,), (0,))))
    assert not policy(remat_p)


def test_offloading_and_combining_policies_answer_as_jax(dot_is_a_dot):
    # JAX 0.10.2's checkpoint_policies has these too; offloading saves the value here.
    offload = cp.offload_dot_with_no_batch_dims("device", "pinned_host")
    assert offload(dot_p, dimension_numbers=(((1,), (0,)), ((), ()))) == Offloadable(
        "device", "pinned_host"
    )
    assert offload(dot_p, dimension_numbers=(((2,), (1,)), ((0,), (0,)))) is Recompute
    assert cp.checkpoint_dots_with_no_batch_dims is cp.dots_with_no_batch_dims_saveable
    closed = vjp_jaxpr(checkpoint(matmul_chain, policy=offload), A)
    fwd, bwd = remats(closed)
    assert inner_names(bwd).count("ad_dot") == 2  # the dot's result was kept

    names = cp.save_and_offload_only_these_names(
        names_which_can_be_saved=["s"],
        names_which_can_be_offloaded=["t"],
        offload_src="device",
        offload_dst="pinned_host",
    )
    from modjax.autodiff.checkpoint import name_p

    assert names(name_p, name="s") is Saveable
    assert names(name_p, name="t") == Offloadable("device", "pinned_host")
    assert names(name_p, name="u") is Recompute and names(dot_p) is Recompute
    with pytest.raises(ValueError, match="should be exclusive"):
        cp.save_and_offload_only_these_names(
            names_which_can_be_saved=["s"],
            names_which_can_be_offloaded=["s"],
            offload_src="device",
            offload_dst="pinned_host",
        )

    both = cp.save_from_both_policies(cp.dots_saveable, cp.save_only_these_names("s"))
    assert both(dot_p) and both(name_p, name="s") and not both(sin_p)
    with pytest.raises(ValueError, match="should be a boolean"):
        cp.save_from_both_policies(cp.dots_saveable, names)(dot_p)


def test_static_argnums_and_make_jaxpr():
    def g(x, n):
        for _ in range(n):
            x = sin(x)
        return x

    gc = checkpoint(g, static_argnums=(1,))
    closed = make_jaxpr(gc, static_argnums=1)(X, 3)
    (eqn,) = closed.jaxpr.eqns
    assert eqn.primitive is remat_p and inner_names(eqn) == ["ad_sin"] * 3
    assert "policy=None" in str(closed) and "prevent_cse=True" in str(closed)
    np.testing.assert_allclose(gc(X, 2), np.sin(np.sin(X)), rtol=1e-6)
    np.testing.assert_allclose(
        grad(lambda x: sum_all(gc(x, 2)))(X), np.cos(np.sin(X)) * np.cos(X), rtol=1e-6
    )


def test_static_argnums_out_of_range_is_jaxs_error():
    gc = checkpoint(lambda x, n: x, static_argnums=4)
    with pytest.raises(ValueError) as info:
        gc(X, 2)
    assert str(info.value) == (
        "the `static_argnums` argument to `jax.checkpoint` / `jax.remat` can only take integer "
        "values greater than or equal to `-len(args)` and less than `len(args)`, but got (4,), "
        "while `len(args)` = 2"
    )


def test_static_argnames_and_removed_concrete():
    def g(x, n):
        for _ in range(n):
            x = sin(x)
        return x

    gc = checkpoint(g, static_argnames="n")
    want = np.cos(np.sin(X)) * np.cos(X)
    np.testing.assert_allclose(grad(lambda x: sum_all(gc(x, n=2)))(X), want, rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: sum_all(gc(x, 2)))(X), want, rtol=1e-6)
    with pytest.raises(NotImplementedError, match="`concrete` option .* removed in JAX v0.10"):
        checkpoint(g, concrete=False)


def test_checkpoint_with_closures_calls_and_nesting():
    y = np.float32(3.0)

    def g(x):
        return mul(call(lambda x: sin(mul(x, y)), x), y)  # closes over y; holds a call

    gc = checkpoint(checkpoint(g, policy=cp.everything_saveable))
    np.testing.assert_allclose(grad(lambda x: sum_all(gc(x)))(X), 9 * np.cos(3 * X), rtol=1e-5)

    def outer(x):  # a checkpointed function closing over a traced value of an outer grad
        h = checkpoint(lambda z: mul(sin(z), x))
        return sum_all(h(x))

    np.testing.assert_allclose(grad(outer)(X), np.cos(X) * X + np.sin(X), rtol=1e-6)


def test_custom_rules_inside_checkpoint():
    from modjax.autodiff import custom_jvp, custom_vjp

    @custom_vjp
    def s(x):
        return sin(x)

    s.defvjp(lambda x: (s(x), cos(x)), lambda c, g: (mul(mul(c, g), 2.0),))

    @custom_jvp
    def t(x):
        return sin(x)

    t.defjvp(lambda p, tan: (t(p[0]), mul(tan[0], 3.0)))
    for policy in (None, cp.everything_saveable):
        h = checkpoint(lambda x: sum_all(add(s(x), t(x))), policy=policy)
        np.testing.assert_allclose(grad(h)(X), 2 * np.cos(X) + 3.0, rtol=1e-6)
        closed = vjp_jaxpr(checkpoint(lambda x: add(s(x), t(x)), policy=policy))
        np.testing.assert_allclose(
            eval_jaxpr(closed.jaxpr, closed.consts, X, np.ones(3, np.float32))[0],
            2 * np.cos(X) + 3.0,
            rtol=1e-6,
        )
