"""lax.while_loop and lax.fori_loop, and the rules of while_p (JVP, partial eval, batching, DCE).

Each loop is compared with its Python-loop reference in numpy, eagerly and under
``jit``; forward mode by ``check_grads``; ``linearize`` against ``jvp``; reverse mode
raises JAX's error; ``vmap`` (batched carries, consts, predicates and bounds)
against a loop over the lanes; DCE and partial evaluation on the equations; the
printed jaxprs of the loop and of its transformed forms parse back equal and
pass ``check_jaxpr``. The errors are checked against JAX 0.10.2's messages.

The looped functions are defined once at module level, so that eager calls and
``jit`` reuse their traced and compiled programs across examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import offset_primitive

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import grad, jvp, linearize
from modjax.autodiff.testing import check_grads
from modjax.batching import axis_index, vmap
from modjax.runtime import dispatch, jit
from modjax.tracecore import check_jaxpr, jaxpr_equal, make_jaxpr, parse_jaxpr
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_jaxpr
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.partial_eval import partial_eval_jaxpr

REVERSE_MODE_ERROR = (
    "Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with "
    "dynamic start/stop values. Try using lax.scan, or using fori_loop with static start/stop."
)

floats3 = st.lists(st.floats(-2, 2, width=32), min_size=3, max_size=3).map(
    lambda v: np.asarray(v, np.float32)
)
counts = st.integers(0, 6)


def primitives(closed) -> list[str]:
    return [e.primitive.name for e in closed.jaxpr.eqns]


def while_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive is lax.while_p]


def round_trips(closed) -> None:
    """The printed jaxpr parses back to an equal one, and both pass check_jaxpr."""
    check_jaxpr(closed.jaxpr)
    parsed = parse_jaxpr(str(closed), consts=closed.consts)
    assert jaxpr_equal(parsed, closed), str(closed)
    check_jaxpr(parsed.jaxpr)


# --- the looped functions and their references ---------------------------------------------


def _count_below(c):
    return c[0] < c[2]


def _decay(c):
    i, x, n = c
    return i + 1, x * 0.9 + i, n


def decay_loop(x, n):
    """``x = 0.9 x + i`` for ``i < n`` (a counter, a vector and the bound in the carry)."""
    return lax.while_loop(_count_below, _decay, (0, x, n))


def decay_reference(x, n):
    i, x = 0, np.asarray(x, np.float32)
    while i < n:
        x = (x * np.float32(0.9) + np.float32(i)).astype(np.float32)
        i += 1
    return i, x


def sin_loop(x, w):
    """Three steps of ``y = sin(y) * w`` from ``y = x``: ``w`` is a body const."""
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.sin(c[1]) * w), (0, x))[1]


def sin_reference(x, w):
    y = np.asarray(x, np.float64)
    for _ in range(3):
        y = np.sin(y) * w
    return y


def accumulate(x):
    """A carry whose tangent is zero on entry but becomes nonzero in the body."""
    return lax.while_loop(
        lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] + c[2] * c[2], c[2]), (0, 0.0, x)
    )[1]


def collatz_steps(n):
    """The number of Collatz steps from ``n`` to 1 (lanes finish at different steps)."""

    def body(c):
        k, steps = c
        return jnp.where(k % 2 == 0, k // 2, 3 * k + 1), steps + 1

    return lax.while_loop(lambda c: c[0] > 1, body, (n, 0))[1]


def collatz_reference(n):
    steps = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def fori_sum(x, lo, hi):
    """``sum(x[i] * i for i in range(lo, hi))`` with a weakly typed ``0`` init."""
    x = jnp.asarray(x)
    return lax.fori_loop(lo, hi, lambda i, acc: acc + x[i] * i, 0)


def fori_sum_reference(x, lo, hi):
    return np.float32(sum(np.float64(x[i]) * i for i in range(lo, hi)))


jit_decay = jit(decay_loop)
jit_fori_sum = jit(fori_sum)


# --- the API ---------------------------------------------------------------------------------


@given(floats3, counts)
def test_while_loop_matches_python_loop_eagerly_and_under_jit(x, n):
    i_ref, x_ref = decay_reference(x, n)
    for fn in (decay_loop, jit_decay):
        i, y, m = fn(x, n)
        assert int(i) == i_ref and int(m) == n
        np.testing.assert_allclose(np.asarray(y), x_ref, rtol=1e-6, atol=1e-6)


def test_while_loop_carries_pytrees_and_keeps_the_structure():
    def body(c):
        return {"i": c["i"] + 1, "acc": (c["acc"][0] * 2.0, [c["acc"][1][0] + c["i"]])}

    init = {"i": 0, "acc": (np.float32(1.0), [np.int32(0)])}
    out = lax.while_loop(lambda c: c["i"] < 4, body, init)
    assert set(out) == {"i", "acc"} and isinstance(out["acc"][1], list)
    assert int(out["i"]) == 4 and float(out["acc"][0]) == 16.0 and int(out["acc"][1][0]) == 6
    jitted = jit(lambda init: lax.while_loop(lambda c: c["i"] < 4, body, init))(init)
    assert float(jitted["acc"][0]) == 16.0 and int(jitted["acc"][1][0]) == 6


def test_while_loop_that_never_runs_returns_its_init():
    out = lax.while_loop(lambda c: c < 0.0, lambda c: c + 1.0, np.float32(3.0))
    assert float(out) == 3.0


@given(floats3.map(lambda v: np.concatenate([v, v])), st.integers(0, 6), st.integers(0, 6))
def test_fori_loop_is_a_scan_for_concrete_bounds_and_a_while_for_traced_ones(x, lo, hi):
    ref = fori_sum_reference(x, lo, hi)
    np.testing.assert_allclose(np.asarray(fori_sum(x, lo, hi)), ref, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(jit_fori_sum(x, lo, hi)), ref, rtol=1e-5, atol=1e-5)


def test_fori_loop_primitive_depends_on_whether_bounds_are_concrete():
    x = np.arange(6, dtype=np.float32)
    concrete = make_jaxpr(lambda x: fori_sum(x, 1, 4))(x)
    traced = make_jaxpr(fori_sum)(x, 1, 4)
    assert "scan" in primitives(concrete) and "while" not in primitives(concrete)
    assert "while" in primitives(traced) and "scan" not in primitives(traced)
    round_trips(traced)


def test_weak_typed_init_takes_the_dtype_the_body_gives():
    x = jnp.arange(5.0)
    for out in (
        lax.fori_loop(0, 5, lambda i, acc: acc + x[i], 0),
        jit(lambda n: lax.fori_loop(0, n, lambda i, acc: acc + x[i], 0))(5),
        lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] + x[c[0]]), (0, 0))[1],
    ):
        assert out.dtype == np.float32 and not out.weak_type
        assert float(out) == 10.0


# --- errors (JAX 0.10.2's messages) ------------------------------------------------------------


def test_a_body_that_changes_a_carry_type_names_the_leaf_and_both_types():
    with pytest.raises(TypeError) as info:
        lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1].astype(jnp.int32)), (0, np.float32(1))
        )
    message = str(info.value)
    assert message.startswith(
        "while_loop body function carry input and carry output must have equal types"
    )
    assert (
        "The input carry component c[1] has type float32[] but the corresponding output carry "
        "component has type int32[], so the dtypes do not match." in message
    )
    with pytest.raises(TypeError, match=r"c\[1\] has type float32\[\] .* float32\[3\], so the sha"):
        lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.zeros(3)), (0, np.float32(1)))
    with pytest.raises(TypeError, match=r"component loop_carry\[2\] has type float32\[\]"):
        jit(lambda n: lax.fori_loop(0, n, lambda i, v: v.astype(jnp.int32), np.float32(1)))(3)
    with pytest.raises(TypeError, match=r"(?s)^scan body function .*loop_carry\[1\] has type"):
        lax.fori_loop(0, 3, lambda i, v: v.astype(jnp.int32), np.float32(1))


def test_cond_fun_must_return_a_boolean_scalar():
    with pytest.raises(TypeError) as info:
        lax.while_loop(lambda c: c[0], lambda c: (c[0] + 1, c[1]), (0, np.float32(1)))
    assert str(info.value) == (
        "cond_fun must return a boolean scalar, but got output type(s) "
        "[ShapedArray(int32[], weak_type=True)]."
    )
    with pytest.raises(TypeError, match=r"output type\(s\) \[ShapedArray\(bool\[2\]\)\]\.$"):
        lax.while_loop(lambda c: jnp.array([True, False]), lambda c: c, 1.0)


def test_fori_loop_unroll_needs_static_bounds():
    with pytest.raises(ValueError) as info:
        jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + 1, 0, unroll=2))(3)
    assert str(info.value) == (
        "Can only use `unroll` in `fori_loop` if the loop bounds are statically known."
    )


# --- JVP and partial evaluation --------------------------------------------------------------


@given(floats3, st.floats(0.5, 1.5))
def test_forward_mode_matches_finite_differences(x, w):
    check_grads(sin_loop, (x, np.float32(w)), order=2, modes=["fwd"], atol=2e-2, rtol=2e-2)
    np.testing.assert_allclose(np.asarray(sin_loop(x, np.float32(w))), sin_reference(x, w),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_a_tangent_that_becomes_nonzero_in_the_body_is_carried_from_the_start():
    x = np.float32(1.5)
    y, t = jvp(accumulate, (x,), (np.float32(1.0),))
    assert float(y) == pytest.approx(4 * 1.5**2) and float(t) == pytest.approx(8 * 1.5)
    check_grads(accumulate, (x,), order=1, modes=["fwd"])
    closed = make_jaxpr(lambda x, t: jvp(accumulate, (x,), (t,)))(x, x)
    (loop,) = while_eqns(closed)
    assert len(loop.outvars) == 5  # three carries, the tangents of the acc and of x
    round_trips(closed)


def test_jvp_of_the_loop_under_jit_and_of_fori_loop_with_traced_bounds():
    x, w = np.full(3, 0.3, np.float32), np.float32(1.2)
    eager = jvp(sin_loop, (x, w), (np.ones(3, np.float32), np.float32(0.5)))
    jitted = jit(lambda x, w, tx, tw: jvp(sin_loop, (x, w), (tx, tw)))(
        x, w, np.ones(3, np.float32), np.float32(0.5)
    )
    for a, b in zip(eager, jitted, strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    xs = np.arange(6, dtype=np.float32)
    _, t = jit(lambda x, t, n: jvp(lambda x: fori_sum(x, 0, n), (x,), (t,)))(xs, xs, 4)
    assert float(t) == pytest.approx(sum(i * i for i in range(4)))


def test_eager_transformed_loops_compile_once_per_signature():
    x, t, n = np.full(3, 0.5, np.float32), np.ones(3, np.float32), np.asarray([1, 2, 3], np.int32)

    def run():
        jvp(lambda x: decay_loop(x, 3), (x,), (t,))
        linearize(lambda x: decay_loop(x, 3)[1], x)[1](t)
        vmap(decay_loop)(np.stack([x] * 3), n)

    run()
    before = dispatch.stats["compiles"]
    run()
    assert dispatch.stats["compiles"] == before


def test_jacfwd_style_vmap_of_jvp_gives_the_jacobian():
    x, w = np.asarray([0.3, -0.7, 1.1], np.float32), np.float32(1.2)

    def column(t):
        return jvp(lambda x: sin_loop(x, w), (x,), (t,))[1]

    jac = vmap(column)(np.eye(3, dtype=np.float32))
    y = x.astype(np.float64)
    d = np.ones(3)
    for _ in range(3):
        d = d * np.cos(y) * w
        y = np.sin(y) * w
    np.testing.assert_allclose(np.asarray(jac), np.diag(d), rtol=1e-5, atol=1e-6)
    closed = make_jaxpr(vmap(column))(np.eye(3, dtype=np.float32))
    round_trips(closed)


def test_linearize_computes_the_known_carries_now_and_stages_the_loop():
    x, w = np.full(3, 0.3, np.float32), np.float32(1.2)
    y, lin = linearize(sin_loop, x, w)
    _, t = jvp(sin_loop, (x, w), (np.ones(3, np.float32), np.float32(0.5)))
    np.testing.assert_allclose(np.asarray(y), sin_reference(x, w), rtol=1e-5)
    np.testing.assert_allclose(
        np.asarray(lin(np.ones(3, np.float32), np.float32(0.5))), np.asarray(t), rtol=1e-6
    )


def test_partial_eval_splits_a_known_loop_from_a_staged_one():
    x = np.float32(0.5)
    closed = make_jaxpr(lambda x, t: jvp(accumulate, (x,), (t,)))(x, x)
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, True]
    (known_loop,) = while_eqns(known)
    (staged_loop,) = while_eqns(unknown)
    assert len(known_loop.outvars) == 3  # the primal carries only
    # the staged loop recomputes what the tangents need: all but the primal acc (DCE'd)
    assert len(staged_loop.outvars) == 4
    round_trips(known)
    round_trips(unknown)
    (y,) = eval_jaxpr(known.jaxpr, known.consts, x)[:1]
    assert float(y) == pytest.approx(4 * 0.25)


def test_partial_eval_stages_the_whole_loop_when_the_predicate_is_unknown():
    def until_large(x):
        return lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, x)

    closed = make_jaxpr(lambda x, t: jvp(until_large, (x,), (t,)))(1.0, 1.0)
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed, [True, False])
    assert out_unknowns == [True, True] and not while_eqns(known) and while_eqns(unknown)


def test_reverse_mode_raises_jaxs_error():
    with pytest.raises(ValueError) as info:
        grad(lambda x: sin_loop(x, np.float32(1.0)).sum())(np.ones(3, np.float32))
    assert str(info.value) == REVERSE_MODE_ERROR
    with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
        jit(grad(lambda x, n: lax.fori_loop(0, n, lambda i, c: c * x, 1.0)))(1.0, 3)


def test_reverse_mode_through_fori_loop_with_static_bounds_works():
    g = jit(grad(lambda x: lax.fori_loop(0, 3, lambda i, c: c * x, 1.0)))(2.0)
    assert float(g) == pytest.approx(12.0)


# --- batching --------------------------------------------------------------------------------


@given(st.lists(st.integers(1, 30), min_size=4, max_size=4))
def test_vmap_with_a_batched_predicate_runs_until_every_lane_is_done(ns):
    n = np.asarray(ns, np.int32)
    ref = [collatz_reference(k) for k in ns]
    assert np.asarray(vmap(collatz_steps)(n)).tolist() == ref
    assert np.asarray(jit(vmap(collatz_steps))(n)).tolist() == ref


@given(floats3, st.lists(counts, min_size=3, max_size=3))
def test_vmap_of_per_lane_bounds_batched_init_and_batched_consts(x, ns):
    n = np.asarray(ns, np.int32)
    i, y, _ = vmap(decay_loop)(x[:, None] * np.ones((3, 2), np.float32), n)
    for lane in range(3):
        i_ref, y_ref = decay_reference(x[lane] * np.ones(2, np.float32), ns[lane])
        assert int(i[lane]) == i_ref
        np.testing.assert_allclose(np.asarray(y[lane]), y_ref, rtol=1e-6, atol=1e-6)
    # a batched body const with an unbatched predicate; the init batched along axis 1
    w = np.asarray([0.5, 1.0, 1.5], np.float32)
    ys = vmap(sin_loop, in_axes=(1, 0))(np.stack([x, x]).astype(np.float32), w)
    for lane in range(3):
        np.testing.assert_allclose(
            np.asarray(ys[lane]), sin_reference(np.stack([x, x])[:, lane], w[lane]), rtol=1e-5
        )


def test_vmap_with_unbatched_operands_and_unbatched_predicate():
    x = np.ones((4, 3), np.float32)
    i, y, n = vmap(decay_loop, in_axes=(0, None))(x, 3)
    assert np.asarray(i).tolist() == [3] * 4 and np.asarray(n).tolist() == [3] * 4
    np.testing.assert_allclose(np.asarray(y), np.stack([decay_reference(x[0], 3)[1]] * 4))
    closed = make_jaxpr(vmap(decay_loop, in_axes=(0, None)))(x, 3)
    (loop,) = while_eqns(closed)
    assert "select_n" not in primitives(loop.params["body_jaxpr"])  # no lanes to freeze
    round_trips(closed)


def test_vmap_of_fori_loop_with_batched_traced_bounds():
    xs = np.arange(8, dtype=np.float32)
    lo = np.asarray([0, 2, 5, 7], np.int32)
    hi = np.asarray([3, 2, 8, 4], np.int32)
    out = vmap(fori_sum, in_axes=(None, 0, 0))(xs, lo, hi)
    ref = [fori_sum_reference(xs, a, b) for a, b in zip(lo.tolist(), hi.tolist(), strict=True)]
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6)
    closed = make_jaxpr(vmap(fori_sum, in_axes=(None, 0, 0)))(xs, lo, hi)
    (loop,) = while_eqns(closed)
    assert "reduce_or" in primitives(loop.params["cond_jaxpr"])
    assert "select_n" in primitives(loop.params["body_jaxpr"])
    round_trips(closed)


def test_vmap_of_jvp_with_a_batched_predicate():
    def until_large(x):
        return lax.while_loop(lambda c: c[0] < 8.0, lambda c: (c[0] * 2.0, c[1] * c[0]), (x, x))[1]

    x = np.asarray([1.0, 3.0, 5.0], np.float32)
    y, t = vmap(lambda x: jvp(until_large, (x,), (np.float32(1.0),)))(x)
    for lane, v in enumerate(x.tolist()):
        ref_y, ref_t = jvp(until_large, (np.float32(v),), (np.float32(1.0),))
        assert float(y[lane]) == pytest.approx(float(ref_y))
        assert float(t[lane]) == pytest.approx(float(ref_t))


def test_collectives_inside_the_body_see_the_vmapped_axis():
    def normalize_loop(x):
        body = lambda c: (c[0] + 1, c[1] / lax.psum(c[1], "i"))  # noqa: E731
        return lax.while_loop(lambda c: c[0] < 2, body, (0, x))[1]

    out = vmap(normalize_loop, axis_name="i")(np.asarray([1.0, 3.0], np.float32))
    np.testing.assert_allclose(np.asarray(out), [0.25, 0.75], rtol=1e-6)

    # nothing batched, but the body reads the axis: the loop is batched all the same
    def count_up(x):
        return lax.while_loop(
            lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] + axis_index("i")), (0, x)
        )[1]

    out = vmap(count_up, in_axes=None, axis_size=3, axis_name="i")(np.int32(1))
    assert np.asarray(out).tolist() == [1, 3, 5]


# A primitive whose batching rule closes over an array: the batched body and cond get a
# const, which the rule hoists to a leading operand of the batched loop.
offset_p = offset_primitive("while_test_offset")


def test_consts_of_batched_programs_are_hoisted_to_operands():
    def shifted_body(x):  # lane k adds k per step, for 3 steps
        return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, offset_p.bind(c[1])), (0, x))

    def shifted_cond(x):  # lane k steps while y + k < 10
        return lax.while_loop(
            lambda c: offset_p.bind(c[1]) < 10.0, lambda c: (c[0] + 1, c[1] + 1.0), (0, x)
        )

    x = np.asarray([0.0, 1.5, 2.0], np.float32)
    for f in (shifted_body, shifted_cond):
        closed = make_jaxpr(vmap(f))(x)
        (loop,) = while_eqns(closed)
        assert not loop.params["cond_jaxpr"].consts and not loop.params["body_jaxpr"].consts
        assert "while_test_offset" not in str(closed)
        round_trips(closed)
    i, y = jit(vmap(shifted_body))(x)
    assert np.asarray(i).tolist() == [3, 3, 3]
    np.testing.assert_allclose(np.asarray(y), x + 3 * np.arange(3))
    i, y = jit(vmap(shifted_cond))(x)
    ref = []
    for k, v in enumerate(x.tolist()):
        steps = 0
        while v + k < 10.0:
            v, steps = v + 1.0, steps + 1
        ref.append(steps)
    assert np.asarray(i).tolist() == ref
    np.testing.assert_allclose(np.asarray(y), x + np.asarray(ref, np.float32))


# --- DCE and the jaxpr text ------------------------------------------------------------------


def test_dce_removes_unused_carries_and_consts_by_fixpoint():
    def f(x, y, z, w):
        def body(c):
            i, a, b, d = c
            return i + 1, a * 2.0, b + w * d, d + 1.0  # b and d: nobody needs them

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x, y, z))

    closed = make_jaxpr(f)(1.0, 2.0, 3.0, 4.0)
    jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, [False, True, False, False])
    (loop,) = [e for e in jaxpr.eqns if e.primitive is lax.while_p]
    assert len(loop.outvars) == 2  # the counter (read by the cond) and a
    assert loop.params["body_nconsts"] == 0 and used_inputs == [True, False, False, False]
    (out,) = eval_jaxpr(jaxpr, closed.consts, 1.0)
    assert float(out) == 8.0
    # b stays when it is used, and with it d, which the body needs to compute b
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [False, False, True, False])
    (loop,) = [e for e in jaxpr.eqns if e.primitive is lax.while_p]
    assert len(loop.outvars) == 3 and loop.params["body_nconsts"] == 1
    # nothing used: the loop goes
    jaxpr, _ = dce_jaxpr(closed.jaxpr, [False] * 4)
    assert not jaxpr.eqns


effect_p = Primitive("while_test_effect")
effect_p.effectful = True
effect_p.def_abstract_eval(lambda x: x)


def test_a_loop_with_effects_is_kept_whole_and_split_as_jax():
    def f(x, t):
        def body(c):
            effect_p.bind(c[1])
            return c[0] + 1, c[1] * 2.0, c[2] + 1.0

        return lax.while_loop(lambda c: c[0] < 3, body, (0, x, t))

    closed = make_jaxpr(f)(1.0, 2.0)
    jaxpr, used_inputs = dce_jaxpr(closed.jaxpr, [False, False, False])
    assert while_eqns(closed)[0] in jaxpr.eqns and used_inputs == [True, True]
    # As JAX: the known loop computes the known carries and runs the effect; the
    # staged loop is the whole loop again, effect included.
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed, [False, True])
    assert out_unknowns == [False, False, True]
    (known_loop,) = while_eqns(known)
    assert effect_p in {e.primitive for e in known_loop.params["body_jaxpr"].jaxpr.eqns}
    (staged_loop,) = while_eqns(unknown)
    assert staged_loop.params["body_jaxpr"] is while_eqns(closed)[0].params["body_jaxpr"]


def test_printed_loops_parse_back_and_check():
    x = np.ones(3, np.float32)
    round_trips(make_jaxpr(decay_loop)(x, 3))
    round_trips(
        make_jaxpr(lambda x, t: jvp(lambda x: sin_loop(x, np.float32(1)), (x,), (t,)))(x, x)
    )
    round_trips(make_jaxpr(vmap(collatz_steps))(np.arange(1, 5, dtype=np.int32)))


def test_the_special_functions_loop_on_while_p():
    assert not hasattr(lax.special, "special_while_p")
    np.testing.assert_allclose(
        np.asarray(lax.igamma(np.float32(2.0), np.float32(3.0))), 0.80085173, rtol=1e-5
    )
