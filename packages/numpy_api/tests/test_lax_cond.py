"""lax.cond and lax.switch: the API and the rules of ``cond_p``.

Against Python ``if`` / ``np.where`` references: eagerly, under ``jit``, under
``grad`` (``check_grads``, both modes), under ``vmap`` (batched predicates and
indices, batched operands) and in compositions. JAX's errors (types and key
message parts, checked against JAX 0.10.2), index clamping, pytrees, the
``operand=`` keyword, weak types, tracing of both branches; the residuals of
reverse mode, the printed jaxprs of each transformed form, DCE.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import checkpoint, checkpoint_policies, grad, jvp, linearize, vjp
from modjax.autodiff.testing import check_grads
from modjax.batching import axis_index, batching_rules, vmap
from modjax.runtime import Array, dispatch, jit
from modjax.tracecore import check_jaxpr, jaxpr_equal, make_jaxpr, parse_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_jaxpr
from modjax.tracecore.partial_eval import partial_eval_jaxpr

N = 3
RTOL = 2e-5

# --- the functions under test (shared, so programs compile once) ---------------------------


def true_fun(x, y):
    return jnp.sin(x) * y, x + y


def false_fun(x, y):
    return jnp.cos(x), x * y * y


def branch_a(x, y):
    return jnp.sin(x) * jnp.cos(y)


def branch_b(x, y):
    return x * x * x + jnp.exp(y)


def branch_c(x, y):
    return -x + 2.0 * y


BRANCHES = [branch_a, branch_b, branch_c]
NP_BRANCHES = [
    lambda x, y: np.sin(x) * np.cos(y),
    lambda x, y: x**3 + np.exp(y),
    lambda x, y: -x + 2.0 * y,
]


def np_true(x, y):
    return np.sin(x) * y, x + y


def np_false(x, y):
    return np.cos(x), x * y * y


def f_cond(p, x, y):
    return lax.cond(p, true_fun, false_fun, x, y)


def f_switch(i, x, y):
    return lax.switch(i, BRANCHES, x, y)


def loss_cond(p, x, y):
    a, b = f_cond(p, x, y)
    return jnp.sum(a * b)


def loss_switch(i, x, y):
    return jnp.sum(f_switch(i, x, y))


def np_cond(p, x, y):
    return np_true(x, y) if p else np_false(x, y)


def np_switch(i, x, y):
    return NP_BRANCHES[min(max(int(i), 0), len(NP_BRANCHES) - 1)](x, y)


def arrays(seed, *shape, n=2):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1.0, 1.0, shape).astype(np.float32) for _ in range(n)]


def assert_close(got, want, rtol=RTOL, atol=1e-6):
    got, want = list(np.atleast_1d(got)), list(np.atleast_1d(want))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=rtol, atol=atol)


seeds = st.integers(0, 2**16)

# --- values: eager and jit -----------------------------------------------------------------


@given(seeds, st.booleans())
def test_cond_matches_python_if(seed, p):
    x, y = arrays(seed, N)
    want = np_cond(p, x, y)
    for fn in (f_cond, jit(f_cond)):
        got = fn(p, x, y)
        assert isinstance(got, tuple) and len(got) == 2
        for g, w in zip(got, want, strict=True):
            assert_close(g, w)


@given(seeds, st.integers(-3, 6))
def test_switch_matches_reference_and_clamps_the_index(seed, i):
    x, y = arrays(seed, N)
    want = np_switch(i, x, y)
    assert_close(f_switch(np.int32(i), x, y), want)
    assert_close(jit(f_switch)(np.int32(i), x, y), want)


def test_cond_predicate_kinds():
    x, y = arrays(0, N)
    for p, truth in [(3, True), (0, False), (0.0, False), (-2.5, True), (np.uint8(1), True)]:
        assert_close(f_cond(p, x, y)[0], np_cond(truth, x, y)[0])


def test_pytrees_and_operand_keyword():
    x, y = arrays(1, N)

    def t(ops):
        return {"s": ops["a"] + ops["b"][0], "p": (ops["a"] * 2.0,)}

    def f(ops):
        return {"s": ops["a"] - ops["b"][0], "p": (ops["a"] * 3.0,)}

    ops = {"a": x, "b": [y]}
    for p, (k, sign) in [(True, (2.0, 1.0)), (False, (3.0, -1.0))]:
        out = lax.cond(p, t, f, operand=ops)
        assert sorted(out) == ["p", "s"] and isinstance(out["p"], tuple)
        assert_close(out["s"], x + sign * y)
        assert_close(out["p"][0], k * x)
    # no operands at all, and switch's operand= keyword
    assert_close(lax.cond(False, lambda: jnp.ones(2), lambda: jnp.zeros(2)), np.zeros(2))
    assert_close(lax.switch(1, [lambda v: v, lambda v: -v], operand=x), -x)
    assert_close(lax.switch(5, [lambda v: v * 4.0], x), x * 4.0)  # one branch: just called
    # The old form cond(pred, true_operand, true_fun, false_operand, false_fun), as JAX.
    for p, want in [(True, x * 2.0), (False, -y)]:
        assert_close(lax.cond(p, x, lambda a: a * 2.0, y, lambda b: -b), want)
        assert_close(jit(lambda p: lax.cond(p, x, lambda a: a * 2.0, y, jnp.negative))(p), want)


def test_both_branches_are_traced_even_for_a_concrete_predicate():
    traced = []

    def branches():  # new functions each time: traced programs are memoized per function
        def t(x):
            traced.append("t")
            return x + 1.0

        def f(x):
            traced.append("f")
            return x - 1.0

        return t, f

    assert_close(lax.cond(True, *branches(), np.float32(1.0)), 2.0)
    assert sorted(traced) == ["f", "t"]
    traced.clear()
    jaxpr = make_jaxpr(lambda x: lax.cond(False, *branches(), x))(np.float32(1.0))
    assert sorted(traced) == ["f", "t"]
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.params["branches"]) == 2


def test_weak_types_join():
    x = np.float32(2.0)
    # weak in both branches: weak; weak in one only: the strong type
    both = lax.cond(True, lambda v: 1.0, lambda v: 2.0, x)
    one = lax.cond(True, lambda v: 1.0, lambda v: v, x)
    assert both.dtype == np.float32 and both.weak_type
    assert one.dtype == np.float32 and not one.weak_type
    assert jit(lambda v: lax.cond(v > 0, lambda w: 1.0, lambda w: w, v))(x).weak_type is False
    assert jit(lambda v: lax.switch(1, [lambda w: 1.0] * 3, v))(x).weak_type is True


# --- errors (types and key message parts as in JAX 0.10.2) -------------------------------------


def _ident(x):
    return x


@pytest.mark.parametrize(
    "call, exc, parts",
    [
        (
            lambda x: lax.cond(True, _ident, lambda v: jnp.zeros(3), x),
            TypeError,
            ["cond branches must have equal output types", "true_fun", "float32[3]", "shapes"],
        ),
        (
            lambda x: lax.cond(True, _ident, lambda v: v.astype(np.int32), x),
            TypeError,
            ["cond branches must have equal output types", "int32[]", "dtypes do not match"],
        ),
        (
            lambda x: lax.cond(True, lambda v: (v, v), lambda v: [v, v], x),
            TypeError,
            ["must have the same pytree structure", "true_fun", "false_fun", "Python types"],
        ),
        (
            lambda x: lax.cond(np.array([True, False]), _ident, _ident, x),
            TypeError,
            ["Pred must be a scalar", "shape (2,)"],
        ),
        (
            lambda x: lax.cond(np.complex64(1), _ident, _ident, x),
            TypeError,
            ["Pred type must be either boolean or number", "complex64"],
        ),
        (
            lambda x: lax.cond(True, 1, _ident, x),
            TypeError,
            ["lax.cond: true_fun and false_fun arguments should be callable."],
        ),
        (
            lambda x: lax.cond(True, _ident, _ident, x, operand=x),
            TypeError,
            ["if 'operand' keyword is passed then no positional operands can be passed"],
        ),
        (
            lambda x: lax.switch(0, [lambda a, b: a + b], x, operand=x),
            TypeError,
            ["if 'operand' keyword is passed then no positional operands", "operand=np.float32"],
        ),
        (lambda x: lax.switch(0, [], x), ValueError, ["Empty branch sequence"]),
        (
            lambda x: lax.switch(1.0, [_ident], x),
            TypeError,
            ["Index type must be an integer", "float32"],
        ),
        (
            lambda x: lax.switch(np.array([0, 1]), [_ident, _ident], x),
            TypeError,
            ["Branch index must be scalar", "shape (2,)"],
        ),
        (
            lambda x: lax.switch(0, [_ident, 2], x),
            TypeError,
            ["lax.switch: branches argument should be a sequence of callables."],
        ),
        (
            lambda x: lax.switch(0, [_ident, _ident, lambda v: jnp.zeros(2)], x),
            TypeError,
            ["switch branches must have equal output types", "branch 0", "float32[2]"],
        ),
    ],
)
def test_errors(call, exc, parts):
    with pytest.raises(exc) as info:
        call(np.float32(1.0))
    for part in parts:
        assert part in str(info.value)


# --- grad ----------------------------------------------------------------------------------


@settings(max_examples=4)
@given(seeds, st.booleans())
def test_cond_check_grads(seed, p):
    x, y = arrays(seed, N)
    check_grads(lambda a, b: f_cond(p, a, b), (x, y), order=2, modes=("fwd", "rev"))


@settings(max_examples=4)
@given(seeds, st.integers(-1, 3))
def test_switch_check_grads(seed, i):
    x, y = arrays(seed, N)
    check_grads(lambda a, b: f_switch(np.int32(i), a, b), (x, y), order=1, modes=("fwd", "rev"))


def _np_grad_switch(i, x, y):
    i = min(max(int(i), 0), 2)
    if i == 0:
        return np.cos(x) * np.cos(y), -np.sin(x) * np.sin(y)
    if i == 1:
        return 3 * x * x, np.exp(y)
    return -np.ones_like(x), 2.0 * np.ones_like(y)


@given(seeds, st.integers(-1, 3))
def test_jit_grad_switch_with_different_residuals_per_branch(seed, i):
    # branch_a saves cos/sin values, branch_b x*x and exp(y), branch_c nothing
    x, y = arrays(seed, N)
    g = jit(grad(loss_switch, argnums=(1, 2)))(np.int32(i), x, y)
    want = _np_grad_switch(i, x, y)
    for a, b in zip(g, want, strict=True):
        assert_close(a, b, rtol=1e-4)
    # eager grad agrees
    g2 = grad(loss_switch, argnums=(1, 2))(np.int32(i), x, y)
    for a, b in zip(g2, want, strict=True):
        assert_close(a, b, rtol=1e-4)


def test_residual_slots_are_shared_between_branches():
    x, y = arrays(3, N)
    jaxpr = make_jaxpr(lambda i, a, b: vjp(lambda u, v: f_switch(i, u, v), a, b)[0])(
        np.int32(0), x, y
    )
    (known,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    branches = known.params["branches"]
    assert len(branches) == 3
    # one primal output and the residual slots, shared by type: branch_a saves four
    # f32[3] values (sin and cos of both operands), branch_b two (x * x and exp(y))
    # in the same slots, branch_c none (it fills zeros)
    assert [len(b.out_avals) for b in branches] == [1 + 4] * 3
    for b in branches:
        check_jaxpr(b)


def test_grad_ignores_integer_outputs_and_operands():
    def f(x, n):
        out, k = lax.cond(x.sum() > 0, lambda a, m: (a * 2.0, m + 1), lambda a, m: (a, m), x, n)
        return jnp.sum(out) * k.astype(np.float32)

    x = np.ones(N, np.float32)
    assert_close(grad(f)(x, np.int32(2)), np.full(N, 6.0))
    assert_close(grad(f)(-x, np.int32(2)), np.full(N, 2.0))


def test_jvp_only_one_branch_has_a_tangent():
    # the true branch ignores x: its tangent is instantiated as zeros
    def f(p, x):
        return lax.cond(p, lambda a: jnp.ones_like(a), lambda a: a * 3.0, x)

    x = np.ones(N, np.float32)
    for p, dt in [(True, 0.0), (False, 3.0)]:
        primal, tangent = jvp(lambda a, p=p: f(p, a), (x,), (np.ones(N, np.float32),))
        assert_close(tangent, np.full(N, dt))


def test_grad_under_checkpoint_policy():
    def f(x, y):
        return loss_cond(x.sum() > 0, x, y)

    x, y = arrays(5, N)
    for policy in (None, checkpoint_policies.everything_saveable):
        g = grad(checkpoint(f, policy=policy), argnums=(0, 1))(x, y)
        want = grad(f, argnums=(0, 1))(x, y)
        for a, b in zip(g, want, strict=True):
            assert_close(a, b, rtol=1e-5)


def test_partial_eval_with_an_unknown_index_stages_everything():
    x, y = arrays(0, N)
    closed = make_jaxpr(f_switch)(np.int32(0), x, y)
    known, unknown, out_unknowns, num_res = partial_eval_jaxpr(closed, [True, False, False])
    assert out_unknowns == [True]
    assert not any(e.primitive.name == "cond" for e in known.eqns)
    assert [e.primitive.name for e in unknown.eqns].count("cond") == 1
    check_jaxpr(known)
    check_jaxpr(unknown)


# --- vmap ----------------------------------------------------------------------------------

B = 5


def _loop(fn, *args, in_axes):
    """Python's loop over the batch: ``fn`` applied lane by lane (numpy reference)."""
    outs = []
    for k in range(B):
        lane = [
            a if ax is None else np.take(a, k, axis=ax) for a, ax in zip(args, in_axes, strict=True)
        ]
        outs.append(fn(*lane))
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs, strict=True))
    return np.stack(outs)


@given(seeds)
def test_vmap_cond_batched_predicate_operands_and_both(seed):
    x, y = arrays(seed, B, N)
    ps = np.random.RandomState(seed).rand(B) > 0.5
    cases = [
        ((0, 0, 0), (ps, x, y)),
        ((None, 0, None), (True, x, y[0])),
        ((0, None, 1), (ps, x[0], y.T)),
    ]
    for in_axes, args in cases:
        want = _loop(np_cond, *args, in_axes=in_axes)
        got = vmap(f_cond, in_axes=in_axes)(*args)
        for g, w in zip(got, want, strict=True):
            assert_close(g, w)
    got = jit(vmap(f_cond))(ps, x, y)
    for g, w in zip(got, _loop(np_cond, ps, x, y, in_axes=(0, 0, 0)), strict=True):
        assert_close(g, w)


@given(seeds)
def test_vmap_switch_batched_index(seed):
    x, y = arrays(seed, B, N)
    idx = np.random.RandomState(seed).randint(-2, 5, B).astype(np.int32)
    for in_axes, args in [((0, 0, 0), (idx, x, y)), ((0, None, 0), (idx, x[0], y))]:
        want = _loop(np_switch, *args, in_axes=in_axes)
        assert_close(vmap(f_switch, in_axes=in_axes)(*args), want)
    # unbatched index, batched operands: one cond of batched branches
    want = _loop(lambda a, b: np_switch(1, a, b), x, y, in_axes=(0, 0))
    assert_close(vmap(f_switch, in_axes=(None, 0, 0))(np.int32(1), x, y), want)


def test_vmap_output_batched_in_one_branch_only():
    x = np.arange(B * N, dtype=np.float32).reshape(B, N)
    c = np.ones(N, np.float32)

    def f(p, a):
        return lax.cond(p, lambda v, w: v * 2.0, lambda v, w: w, a, c)

    for p in (True, False):
        got = vmap(f, in_axes=(None, 0))(p, x)
        assert got.shape == (B, N)
        assert_close(got, x * 2.0 if p else np.broadcast_to(c, (B, N)))


def test_vmap_named_axis_inside_a_branch():
    # nothing batched, but the branch reads the vmapped axis: the cond is batched
    def f(x):
        return lax.cond(True, lambda v: v + axis_index("i"), lambda v: v, x)

    got = vmap(f, in_axes=None, axis_size=3, axis_name="i")(np.float32(1.0))
    assert_close(got, [1.0, 2.0, 3.0])


def test_vmap_batched_predicate_runs_the_effects_of_every_branch():
    # As JAX: a batched predicate runs every branch, effects included (only the
    # effects of references and of io_callback are refused, tested with those).
    seen = []
    effect_p = Primitive("test_effect")
    effect_p.effectful = True
    effect_p.def_impl(lambda x: (seen.append(np.asarray(x).tolist()), x)[1])
    effect_p.def_abstract_eval(lambda x: x)
    batching_rules[effect_p] = lambda args, dims: (effect_p.bind(*args), dims[0])

    def f(p, x):
        return lax.cond(p, lambda v: effect_p.bind(v * 2), lambda v: v, x)

    out = vmap(f)(np.array([True, False]), np.array([1.0, 3.0], np.float32))
    assert out.tolist() == [2.0, 3.0] and seen == [[2.0, 6.0]]


# --- compositions ------------------------------------------------------------------------------


@settings(max_examples=4)
@given(seeds)
def test_grad_of_vmap_and_vmap_of_grad(seed):
    x, y = arrays(seed, B, N)
    ps = np.random.RandomState(seed).rand(B) > 0.5

    def np_loss_grad(p, a, b):
        # d/dx sum(f1 * f2) for the branch that p picks
        if p:
            f1, f2 = np.sin(a) * b, a + b
            return np.cos(a) * b * f2 + f1
        f1, f2 = np.cos(a), a * b * b
        return -np.sin(a) * f2 + f1 * b * b

    want = _loop(np_loss_grad, ps, x, y, in_axes=(0, 0, 0))
    per_lane = vmap(grad(loss_cond, argnums=1))(ps, x, y)
    assert_close(per_lane, want, rtol=1e-4)
    total = grad(lambda a: jnp.sum(vmap(loss_cond)(ps, a, y)))(x)
    assert_close(total, want, rtol=1e-4)
    # grad(vmap(cond)) in both modes, with a batched predicate
    check_grads(lambda a, b: vmap(f_cond)(ps, a, b), (x, y), order=1, modes=("fwd", "rev"))


def test_grad_of_vmap_never_leaks_nan_from_the_branch_not_taken():
    def f(x):
        return jnp.sum(vmap(lambda v: lax.cond(v > 0, jnp.log, lambda w: w, v))(x))

    x = np.array([2.0, -1.0, 0.5], np.float32)
    assert_close(grad(f)(x), [0.5, 1.0, 2.0])


def test_nested_conds_under_grad_and_vmap():
    def f(p, q, x):
        inner = lambda v: lax.cond(q, jnp.sin, lambda w: w * w, v)  # noqa: E731
        return lax.cond(p, inner, lambda v: -inner(v) * 2.0, x)

    def np_f(p, q, x):
        inner = np.sin(x) if q else x * x
        return inner if p else -inner * 2.0

    x = np.linspace(-1.0, 1.0, B).astype(np.float32)
    ps, qs = np.array([1, 0, 1, 0, 1], bool), np.array([1, 1, 0, 0, 1], bool)
    assert_close(vmap(f)(ps, qs, x), _loop(np_f, ps, qs, x, in_axes=(0, 0, 0)))
    for p in (True, False):
        for q in (True, False):
            check_grads(lambda v, p=p, q=q: f(p, q, v), (x,), order=1, modes=("fwd", "rev"))


def test_eager_transformations_compile_once_per_signature():
    x, y = arrays(0, N)
    xb, yb = arrays(0, B, N)
    ps = np.ones(B, bool)
    calls = [
        lambda: grad(loss_switch, argnums=1)(np.int32(0), x, y),
        lambda: jvp(lambda a: f_cond(True, a, y), (x,), (x,)),
        lambda: vmap(f_switch, in_axes=(None, 0, 0))(np.int32(2), xb, yb),
        lambda: vmap(f_cond)(ps, xb, yb),
    ]
    for call in calls:
        call()
    before = dispatch.stats["compiles"]
    for call in calls:
        call()
    assert dispatch.stats["compiles"] == before


def test_known_operands_are_residuals_without_a_copy():
    # true_fun's tangent reads y: the backward cond takes y itself, not a copy
    x, y = arrays(0, N)
    closed = make_jaxpr(grad(loss_cond, argnums=1))(True, x, y)
    fwd, bwd = [e for e in closed.eqns if e.primitive.name == "cond"]
    y_var = closed.jaxpr.invars[2]
    assert any(a is y_var for a in bwd.invars)
    # the two outputs and one slot: cos(x) of true_fun or sin(x) of false_fun
    assert len(fwd.outvars) == 2 + 1


def test_grad_through_jit_and_of_one_output():
    x, y = arrays(4, N)
    for i in (0, 1, 2):
        want = _np_grad_switch(i, x, y)[0]
        assert_close(grad(jit(loss_switch), argnums=1)(np.int32(i), x, y), want, rtol=1e-4)
    # the second output gets no cotangent: transposed with a symbolic zero
    g = grad(lambda p, a, b: jnp.sum(f_cond(p, a, b)[0]), argnums=(1, 2))
    for p in (True, False):
        dx, dy = g(p, x, y)
        assert_close(dx, np.cos(x) * y if p else -np.sin(x))
        assert_close(dy, np.sin(x) if p else np.zeros(N))


# --- printed jaxprs ------------------------------------------------------------------------


def _roundtrip(closed):
    check_jaxpr(closed)
    text = str(closed)
    parsed = parse_jaxpr(text)
    assert jaxpr_equal(parsed, closed), text
    check_jaxpr(parsed)
    return text


def test_printed_jaxprs_parse_back():
    x, y = arrays(0, N)
    xb, yb = arrays(0, B, N)
    ps = np.ones(B, bool)
    idx = np.zeros(B, np.int32)
    forms = {
        "cond": make_jaxpr(f_cond)(True, x, y),
        "switch": make_jaxpr(f_switch)(np.int32(1), x, y),
        "jvp": make_jaxpr(lambda a, b: jvp(lambda u: f_cond(True, u, b), (a,), (a,)))(x, y),
        "linearize": make_jaxpr(lambda a, b: linearize(lambda u: f_switch(2, u, b), a)[1](a))(x, y),
        "grad": make_jaxpr(grad(loss_switch, argnums=1))(np.int32(0), x, y),
        "vmap_ops": make_jaxpr(vmap(f_switch, in_axes=(None, 0, 0)))(np.int32(1), xb, yb),
        "vmap_pred": make_jaxpr(vmap(f_cond))(ps, xb, yb),
        "vmap_index": make_jaxpr(vmap(f_switch))(idx, xb, yb),
    }
    for name, closed in forms.items():
        text = _roundtrip(closed)
        if name != "vmap_pred" and name != "vmap_index":
            assert "cond[" in text, name
        else:
            assert "select_n" in text and "cond[" not in text, name
    transposed = [e for e in forms["grad"].eqns if e.primitive.name == "cond"]
    assert len(transposed) == 2  # the forward cond (with residuals) and its transpose


# --- DCE -----------------------------------------------------------------------------------


def test_dce_removes_unused_outputs_and_operands():
    x, y = arrays(0, N)
    z = np.ones(N, np.float32)

    def f(p, a, b, c):
        u, v, w = lax.cond(
            p, lambda a, b, c: (a + 1.0, b * 2.0, c), lambda a, b, c: (a, b + c, c * 3.0), a, b, c
        )
        return u

    closed = make_jaxpr(f)(True, x, y, z)
    pruned, used = dce_jaxpr(closed.jaxpr, [True])
    (eqn,) = [e for e in pruned.eqns if e.primitive.name == "cond"]
    assert len(eqn.outvars) == 1 and len(eqn.invars) == 2  # the index and ``a``
    for b in eqn.params["branches"]:
        assert len(b.out_avals) == 1 and len(b.in_avals) == 1
        check_jaxpr(b)
    assert used == [True, True, False, False]
    # nothing used: the cond goes
    gone, _ = dce_jaxpr(make_jaxpr(lambda p, a: (f(p, a, a, a), 0.0)[1])(True, x).jaxpr, [True])
    assert not any(e.primitive.name == "cond" for e in gone.eqns)


def test_an_operand_every_branch_returns_unchanged_is_not_a_result_of_the_cond():
    # As JAX 0.10.2: the forwarded operand leaves the cond, so under vmap with a batched
    # predicate it stays unbatched (flax's state passed through both branches).
    def f(p, x, y):
        return lax.cond(p, lambda a, b: (a, b + 1), lambda a, b: (a, b * 2), x, y)

    jaxpr = make_jaxpr(f)(True, 1.0, 2.0).jaxpr
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "cond"]
    assert len(eqn.outvars) == 1 and jaxpr.outvars[0] is jaxpr.invars[1]
    first, second = vmap(f, in_axes=(0, None, 0), out_axes=(None, 0))(
        np.array([True, False]), 1.0, np.ones(2, np.float32)
    )
    assert float(first) == 1.0
    np.testing.assert_array_equal(second, [2.0, 2.0])
    out = lax.cond(True, lambda a: a, lambda a: a, 3.0)  # eagerly an Array, as JAX's
    assert isinstance(out, Array) and out.weak_type and float(out) == 3.0

    # Swapped operands are computed results.
    def swap(p, x, y):
        return lax.cond(p, lambda a, b: (b, a), lambda a, b: (a, b), x, y)

    assert len(make_jaxpr(swap)(True, 1.0, 2.0).jaxpr.eqns[-1].outvars) == 2
