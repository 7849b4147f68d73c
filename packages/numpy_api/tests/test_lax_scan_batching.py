"""scan_p under vmap and under dead-code elimination (control_flow/scan_batching.py).

vmap of ``lax.scan`` (and ``lax.map``) against a Python loop over the batch of a
Python loop over time, for every way the operands can be batched (init, xs,
closed-over consts, all, ``in_axes=1`` on xs, ``out_axes``), the forced-carry
fixpoint, ``reverse``/``unroll``, nested vmap, named-axis collectives in the
body and ``vmap(jit(scan))``; DCE of unused ys, carries (by fixpoint), consts
and xs, checked on the pruned jaxpr's structure and values; batched jaxprs
print, parse back and type-check.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import offset_primitive

import modjax.numpy as jnp
from modjax import lax
from modjax.batching import psum, vmap
from modjax.runtime import jit
from modjax.tracecore import (
    Primitive,
    check_jaxpr,
    dce_jaxpr,
    eval_jaxpr,
    jaxpr_equal,
    make_jaxpr,
    parse_jaxpr,
)

B, T, D = 3, 4, 2

# --- references ---------------------------------------------------------------------------


def scan_reference(f, init, xs, reverse=False):
    """Python's loop of ``f`` over the leading axis of ``xs``; ys stacked."""
    carry, ys = init, [None] * xs.shape[0]
    for i in reversed(range(xs.shape[0])) if reverse else range(xs.shape[0]):
        carry, ys[i] = f(carry, xs[i])
    return carry, np.stack(ys)


def rand(rng, *shape):
    return rng.uniform(-1.0, 1.0, shape).astype(np.float32)


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), expected, rtol=1e-5, atol=1e-5)


def scan_with_weight(c, xs, w):
    """A scan whose body closes over ``w`` (a const of the scan)."""
    return lax.scan(lambda c, x: (c * w + x, c * x), c, xs)


def scan_with_weight_ref(c, xs, w):
    return scan_reference(lambda c, x: (c * w + x, c * x), c, xs)


def pick(a, axis, b):
    """Element ``b`` of the batch of ``a`` along ``axis`` (None: unbatched)."""
    return a if axis is None else np.take(a, b, axis=axis)


def batched_operand(rng, axis, *shape):
    if axis is None:
        return rand(rng, *shape)
    full = list(shape)
    full.insert(axis, B)
    return rand(rng, *full)


# in_axes of (init, xs, w) and out_axes; every batching of the operands.
CASES = {
    "init": ((0, None, None), 0),
    "xs": ((None, 0, None), 0),
    "consts": ((None, None, 0), 0),
    "all": ((0, 0, 0), 0),
    "xs_axis1": ((None, 1, None), 0),
    "all_axis1": ((1, 1, 0), 0),
    "out_axes1": ((0, 0, None), 1),
}
# One vmapped function per case, shared by the examples (one compile per signature).
VMAPPED = {
    name: vmap(scan_with_weight, in_axes=in_axes, out_axes=out_axes)
    for name, (in_axes, out_axes) in CASES.items()
}


@pytest.mark.parametrize("name", list(CASES))
@given(seed=st.integers(0, 2**16))
def test_vmap_scan_matches_loop(name, seed):
    (a_c, a_x, a_w), out_axes = CASES[name]
    rng = np.random.default_rng(seed)
    c = batched_operand(rng, a_c, D)
    xs = batched_operand(rng, a_x, T, D)
    w = batched_operand(rng, a_w, D)
    carry, ys = VMAPPED[name](c, xs, w)
    refs = [scan_with_weight_ref(pick(c, a_c, b), pick(xs, a_x, b), pick(w, a_w, b))
            for b in range(B)]  # fmt: skip
    close(carry, np.stack([r[0] for r in refs], axis=out_axes))
    close(ys, np.stack([r[1] for r in refs], axis=out_axes))


def test_vmap_over_closed_over_const_only():
    ws = rand(np.random.default_rng(1), B, D)
    xs = rand(np.random.default_rng(2), T, D)
    c0 = np.ones(D, np.float32)
    carry, ys = vmap(lambda w: lax.scan(lambda c, x: (c * w + x, c), c0, xs))(ws)
    for b in range(B):
        ref = scan_reference(lambda c, x, w=ws[b]: (c * w + x, c), c0, xs)
        close(carry[b], ref[0])
        close(ys[b], ref[1])


def chain_body(carry, x):
    """``b`` takes the batch from ``x``; ``a`` takes it from ``b`` one step later."""
    a, b = carry
    return (a + b, b * 0.5 + x), a


def test_forced_carry_fixpoint():
    """Unbatched inits, batched xs: both carries become batched (two passes of the fixpoint)."""
    init = (np.float32(1.0), np.float32(2.0))
    xs = rand(np.random.default_rng(3), B, T)
    f = vmap(lambda xs: lax.scan(chain_body, init, xs))
    (a, b), ys = f(xs)
    assert np.asarray(a).shape == (B,) and np.asarray(ys).shape == (B, T)
    for i in range(B):
        (ra, rb), rys = scan_reference(chain_body, init, xs[i])
        close(a[i], ra)
        close(b[i], rb)
        close(ys[i], rys)
    text = str(make_jaxpr(f)(xs))
    assert text.count("broadcast_batch") == 2  # both inits broadcast to the batch


def test_unbatched_scan_under_vmap_is_rebound_as_is():
    xs = rand(np.random.default_rng(4), T, D)
    f = vmap(lambda c: (c, lax.scan(lambda s, x: (s + x, s), np.zeros(D, np.float32), xs)))
    closed = make_jaxpr(f)(np.zeros(B, np.float32))
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scan"]
    assert eqn.outvars[0].aval.shape == (D,)  # not batched


def test_vmap_scan_pytree_xs_mixed_axes_and_no_xs():
    rng = np.random.default_rng(19)
    xs = {"a": rand(rng, B, T), "b": rand(rng, T, B)}
    carry, none = vmap(
        lambda xs: lax.scan(lambda c, x: (c + x["a"] * x["b"], None), 0.0, xs),
        in_axes=({"a": 0, "b": 1},),
    )(xs)
    assert none is None
    close(carry, (xs["a"] * xs["b"].T).sum(1))
    c0 = np.arange(B, dtype=np.float32)
    carry, ys = vmap(lambda c: lax.scan(lambda c, _: (c * 2, c), c, None, length=3))(c0)
    close(carry, c0 * 8)
    close(ys, c0[:, None] * np.array([1, 2, 4], np.float32))


@pytest.mark.parametrize(("reverse", "unroll"), [(True, 1), (False, 2), (True, 2)])
def test_vmap_scan_reverse_unroll(reverse, unroll):
    rng = np.random.default_rng(5)
    c, xs = rand(rng, B, D), rand(rng, B, 5, D)
    carry, ys = vmap(
        lambda c, xs: lax.scan(
            lambda c, x: (c * 0.5 + x, c * x), c, xs, reverse=reverse, unroll=unroll
        )  # fmt: skip
    )(c, xs)
    for b in range(B):
        ref = scan_reference(lambda c, x: (c * 0.5 + x, c * x), c[b], xs[b], reverse=reverse)
        close(carry[b], ref[0])
        close(ys[b], ref[1])


def test_nested_vmap():
    rng = np.random.default_rng(6)
    b2 = 2
    c, xs, w = rand(rng, B, D), rand(rng, b2, B, T, D), rand(rng, b2, D)
    inner = vmap(scan_with_weight, in_axes=(None, 0, 0))
    carry, ys = vmap(inner, in_axes=(0, 1, None))(c, xs, w)
    assert np.asarray(carry).shape == (B, b2, D) and np.asarray(ys).shape == (B, b2, T, D)
    for i in range(B):
        for j in range(b2):
            ref = scan_with_weight_ref(c[i], xs[j, i], w[j])
            close(carry[i, j], ref[0])
            close(ys[i, j], ref[1])


def test_psum_over_the_named_axis_in_the_body():
    xs = rand(np.random.default_rng(7), B, T)

    def f(xs):
        return lax.scan(lambda c, x: (c + psum(x, "i"), x - psum(x, "i") / B), 0.0, xs)

    carry, ys = vmap(f, axis_name="i")(xs)
    total = xs.sum(0)
    close(carry, np.full(B, total.sum(), np.float32))
    close(ys, xs - total / B)


def test_psum_in_the_body_without_batched_operands():
    """No operand is batched, yet the body's psum must see the axis: the rule runs."""
    xs = rand(np.random.default_rng(8), T)

    def f(_, xs):
        return lax.scan(lambda c, x: (c + psum(x, "i"), c), np.float32(0.0), xs)

    carry, _ = vmap(f, in_axes=(0, None), axis_name="i")(np.zeros(B, np.float32), xs)
    close(carry, np.full(B, B * xs.sum(), np.float32))


@pytest.mark.parametrize("batch_size", [None, 2])
def test_lax_map_under_vmap(batch_size):
    rng = np.random.default_rng(9)
    xs, w = rand(rng, B, 5, D), rand(rng, B)

    def f(xs, w):
        return lax.map(lambda x: jnp.sin(x) * w, xs, batch_size=batch_size)

    out = vmap(f)(xs, w)
    close(out, np.sin(xs) * w[:, None, None])


def test_vmap_of_jit_of_scan():
    rng = np.random.default_rng(10)
    c, xs, w = rand(rng, B, D), rand(rng, B, T, D), rand(rng, D)
    carry, ys = vmap(jit(scan_with_weight), in_axes=(0, 0, None))(c, xs, w)
    for b in range(B):
        ref = scan_with_weight_ref(c[b], xs[b], w)
        close(carry[b], ref[0])
        close(ys[b], ref[1])


def test_ys_batched_off_the_front():
    """A body whose y slice comes out batched at a non-zero axis (a transposed slice)."""
    xs = rand(np.random.default_rng(11), B, T, D, 3)
    ys = vmap(lambda xs: lax.scan(lambda c, x: (c, jnp.transpose(x)), 0.0, xs)[1], out_axes=2)(xs)
    close(ys, np.moveaxis(np.swapaxes(xs, 2, 3), 0, 2))


@pytest.mark.parametrize("name", ["init", "xs_axis1", "consts", "out_axes1"])
def test_batched_jaxpr_parses_back_and_checks(name):
    (a_c, a_x, a_w), _ = CASES[name]
    rng = np.random.default_rng(12)
    args = (batched_operand(rng, a_c, D), batched_operand(rng, a_x, T, D),
            batched_operand(rng, a_w, D))  # fmt: skip
    closed = make_jaxpr(VMAPPED[name])(*args)
    check_jaxpr(closed)
    back = parse_jaxpr(str(closed), consts=closed.consts)
    assert jaxpr_equal(back, closed)
    check_jaxpr(back)


# --- DCE ----------------------------------------------------------------------------------


def scan_eqns(jaxpr):
    return [e for e in jaxpr.eqns if e.primitive.name == "scan"]


def dce_and_compare(f, args, used):
    """DCE ``f``'s jaxpr to the ``used`` outputs; check it against the original; return it."""
    closed = make_jaxpr(f)(*args)
    new, _ = dce_jaxpr(closed.jaxpr, used, instantiate=True)
    check_jaxpr(new)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
    expected = [o for o, u in zip(outs, used, strict=True) if u]
    actual = eval_jaxpr(new, closed.consts, *args)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        close(a, np.asarray(e))
    return new


def two_carry_body(carry, x):
    a, b = carry
    return (a * 0.5 + x, b + 1.0), (a, b * x)


def test_dce_removes_an_unused_y_and_an_unused_carry():
    args = (np.float32(1.0), np.float32(2.0), rand(np.random.default_rng(13), T))

    def f(a, b, xs):
        (a, b), (ya, yb) = lax.scan(two_carry_body, (a, b), xs)
        return a, b, ya, yb

    new = dce_and_compare(f, args, [True, False, True, False])
    (eqn,) = scan_eqns(new)
    assert eqn.params["num_carry"] == 1 and len(eqn.outvars) == 2
    assert len(eqn.params["linear"]) == len(eqn.invars) == 2
    assert len(eqn.params["jaxpr"].jaxpr.outvars) == 2


def test_dce_keeps_a_carry_feeding_a_used_carry():
    args = (np.float32(1.0), np.float32(2.0), rand(np.random.default_rng(14), T))

    def f(a, b, xs):
        (a, b), ys = lax.scan(lambda c, x: ((c[0] + c[1], c[1] * 0.5 + x), c[0] * x), (a, b), xs)
        return a, b, ys

    new = dce_and_compare(f, args, [True, False, False])
    (eqn,) = scan_eqns(new)
    assert eqn.params["num_carry"] == 2 and len(eqn.outvars) == 2  # no ys left
    # Only b's output is unused: a needs b, and b needs xs.
    assert len(eqn.invars) == 3


def test_dce_drops_unused_consts_and_xs():
    rng = np.random.default_rng(15)
    args = (np.float32(1.0), rand(rng, T), rand(rng, T), rand(rng, 2))

    def f(c, xs1, xs2, w):
        def body(c, x):
            x1, x2 = x
            return c + x1, (c * x1, x2 * w[0])

        c, (y1, y2) = lax.scan(body, c, (xs1, xs2))
        return c, y1, y2

    new = dce_and_compare(f, args, [True, True, False])
    (eqn,) = scan_eqns(new)
    assert eqn.params["num_consts"] == 0 and len(eqn.invars) == 2  # init and xs1
    assert eqn.params["linear"] == (False, False)
    check_jaxpr(new)


def test_dce_drops_a_scan_nothing_uses():
    args = (np.float32(1.0), np.float32(2.0), rand(np.random.default_rng(16), T))

    def f(a, b, xs):
        (a2, _), _ = lax.scan(two_carry_body, (a, b), xs)
        return a + 1.0, a2

    new = dce_and_compare(f, args, [True, False])
    assert not scan_eqns(new)


effect_p = Primitive("scan_test_effect")
effect_p.effectful = True
effect_p.def_abstract_eval(lambda x: x)


def test_dce_keeps_an_effectful_scan_whole():
    def f(a, b, xs):
        def body(c, x):
            effect_p.bind(x)
            return two_carry_body(c, x)

        (a, _), _ = lax.scan(body, (a, b), xs)
        return (a,)

    closed = make_jaxpr(f)(np.float32(1.0), np.float32(2.0), np.zeros(T, np.float32))
    new, _ = dce_jaxpr(closed.jaxpr, [False])
    (eqn,) = scan_eqns(new)
    assert eqn is scan_eqns(closed.jaxpr)[0]


# A primitive whose batching rule closes over an array: the batched body gets a const,
# which the rule hoists to a leading operand of the batched scan.
offset_p = offset_primitive("scan_test_offset")


def test_consts_of_the_batched_body_become_operands():
    xs = rand(np.random.default_rng(17), B, T, D)
    w = rand(np.random.default_rng(18), D)
    c0 = np.zeros(D, np.float32)
    f = vmap(lambda xs: lax.scan(lambda c, x: (c + offset_p.bind(x) * w, c), c0, xs))
    closed = make_jaxpr(f)(xs)
    (eqn,) = scan_eqns(closed.jaxpr)
    assert eqn.params["num_consts"] == 2 and not eqn.params["jaxpr"].consts  # offsets and w
    assert len(eqn.params["linear"]) == len(eqn.invars)
    check_jaxpr(closed)
    assert jaxpr_equal(parse_jaxpr(str(closed), consts=closed.consts), closed)
    carry, ys = f(xs)
    offsets = np.arange(B * D, dtype=np.float32).reshape(B, D)  # per slice, batch at 0
    for b in range(B):
        ref = scan_reference(lambda c, x, b=b: (c + (x + offsets[b]) * w, c), np.zeros(D), xs[b])
        close(carry[b], ref[0])
        close(ys[b], ref[1])
