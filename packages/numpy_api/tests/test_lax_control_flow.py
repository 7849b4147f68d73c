"""lax.scan and lax.map themselves, and what every control-flow primitive shares.

The API against Python-loop references (pytrees, ``xs=None``, ``reverse``,
``unroll``, zero-length and zero-size loops, weak-typed carries), JAX's errors,
one compiled program per eager signature, the StableHLO they lower to (with
source locations), the text of their jaxprs (printed as JAX prints them, parsed
back, checked), and Python control flow over tracers. The rules of each
primitive (JVP, partial evaluation, transpose, batching, DCE) have their own
test modules.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from numpy_api_checks import check

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import vjp
from modjax.runtime import dispatch, jit, jit_p
from modjax.tracecore import (
    ConcretizationTypeError,
    JaxprTypeError,
    TracerBoolConversionError,
    check_jaxpr,
    eval_jaxpr,
    inline_calls,
    jaxpr_equal,
    make_jaxpr,
    parse_jaxpr,
)
from modjax.tracecore.core import Primitive
from modjax.tracecore.dce import dce_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr, subjaxprs

# --- references ---------------------------------------------------------------------------


def scan_reference(f, init, xs, length=None, reverse=False):
    """Python's loop of ``f`` over the leading axis of the leaves of ``xs``."""
    import modjax.tracecore.tree_util as tu

    leaves, tree = tu.tree_flatten(xs)
    n = length if length is not None else leaves[0].shape[0]
    carry, ys = init, [None] * n
    for i in reversed(range(n)) if reverse else range(n):
        x = tu.tree_unflatten(tree, [leaf[i] for leaf in leaves]) if leaves else None
        carry, ys[i] = f(carry, x)
    if n == 0:
        return carry, None
    stacked = tu.tree_map(lambda *y: np.stack(y), *ys) if ys[0] is not None else None
    return carry, stacked


def rnn_body(c, x):
    """A carry and a stacked output depending on both (numpy and modjax alike)."""
    new = c * 0.5 + x
    return new, new * c


def pytree_body(carry, x):
    h, count = carry
    a, b = x["a"], x["b"]
    h = h + a * b
    return (h, count + 1), {"sum": h.sum(), "a2": a * 2.0}


# --- scan against Python's loop -------------------------------------------------------------


@given(
    n=st.sampled_from([0, 1, 4, 7]),
    reverse=st.booleans(),
    unroll=st.sampled_from([1, 2, 3, True]),
    seed=st.integers(0, 2**16),
)
def test_scan_matches_python_loop(n, reverse, unroll, seed):
    xs = np.random.default_rng(seed).normal(size=(n, 3)).astype(np.float32)
    init = np.ones(3, np.float32)
    want_c, want_ys = scan_reference(rnn_body, init, xs, reverse=reverse)
    for run in (lax.scan, jit(lax.scan, static_argnums=(0, 3, 4, 5))):
        c, ys = run(rnn_body, init, xs, None, reverse, unroll)
        check(c, want_c)
        assert ys.shape == (n, 3)
        if n:
            check(ys, want_ys)


def test_scan_pytrees_of_carries_inputs_and_outputs():
    rng = np.random.default_rng(0)
    xs = {"a": rng.normal(size=(5, 2)).astype(np.float32), "b": np.arange(5.0, dtype=np.float32)}
    init = (np.zeros(2, np.float32), np.int32(0))
    (h, count), ys = lax.scan(pytree_body, init, xs)
    want = np.zeros(2, np.float32)
    sums = []
    for i in range(5):
        want = want + xs["a"][i] * xs["b"][i]
        sums.append(want.sum())
    check(h, want)
    assert int(count) == 5 and np.asarray(count).dtype == np.int32
    check(ys["sum"], np.array(sums))
    check(ys["a2"], xs["a"] * 2)


def test_scan_without_xs_takes_length():
    c, ys = lax.scan(lambda c, _: (c * 2, c), 1.0, None, length=4)
    check(c, 16.0)
    check(ys, [1.0, 2.0, 4.0, 8.0])
    c, ys = lax.scan(lambda c, _: (c + 1, None), 0, None, length=3)
    assert int(c) == 3 and ys is None


def test_scan_zero_length_and_zero_size_inputs():
    c, ys = lax.scan(rnn_body, np.float32(2), np.zeros((0,), np.float32))
    check(c, 2.0)
    assert ys.shape == (0,)
    c, ys = lax.scan(lambda c, x: (c + x.sum(), x), 1.0, np.zeros((3, 0), np.float32))
    check(c, 1.0)
    assert ys.shape == (3, 0)


def test_scan_closes_over_arrays_and_scalars():
    w = np.arange(3.0, dtype=np.float32)
    k = 2.0
    c, _ = lax.scan(lambda c, x: (c * w + x * k, None), np.ones(3, np.float32), np.ones((2, 3)))
    check(c, (1 * w + 2) * w + 2)


def test_scan_weak_typed_carries_follow_the_body():
    # A weak 0.0 over float16 inputs becomes float16; over float32 it becomes strong float32.
    c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, jnp.ones(3, jnp.float16))
    assert c.dtype == np.float16
    c, _ = lax.scan(lambda c, x: (c + x, None), 0.0, jnp.ones(3))
    assert c.dtype == np.float32 and not c.weak_type
    # A strong carry the body replaces by a weak constant comes out weak (as in JAX).
    c, _ = lax.scan(lambda c, x: (1.0, None), jnp.float32(0), jnp.ones(3))
    assert c.weak_type
    out = lax.fori_loop(0, 3, lambda i, acc: acc + jnp.ones(2)[i % 2], 0)
    assert out.dtype == np.float32


def test_map_with_and_without_batches():
    xs = np.arange(10.0, dtype=np.float32).reshape(5, 2)
    for batch_size in (None, 1, 2, 5, 7):
        ys = lax.map(lambda x: {"s": x.sum(), "x": x * 2}, xs, batch_size=batch_size)
        check(ys["s"], xs.sum(1))
        check(ys["x"], xs * 2)


# --- errors, as JAX raises them ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "error", "parts"),
    [
        (
            lambda: lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), length=4),
            ValueError,
            ["`length` argument of 4", "leading axis sizes [3]"],
        ),
        (
            lambda: lax.scan(lambda c, x: (c, x), 0.0, (np.ones(3), np.ones(4))),
            ValueError,
            ["different leading axis sizes: 3, 4"],
        ),
        (
            lambda: lax.scan(lambda c, x: (c, x), 0.0, None),
            ValueError,
            ["no values to scan over and `length` not provided"],
        ),
        (
            lambda: lax.scan(lambda c, x: (c, x), 0.0, np.float32(3)),
            ValueError,
            ["no leading axis", "float32[]"],
        ),
        (
            lambda: lax.scan(lambda c, x: ((c, c), x), np.float32(0), np.ones(3)),
            TypeError,
            ["same pytree structure", "input carry c"],
        ),
        (
            lambda: lax.scan(lambda c, x: (c.astype(np.int32), x), np.float32(0), np.ones(3)),
            TypeError,
            [
                "carry input and carry output must have equal types",
                "The input carry c has",
                "float32[]",
                "int32[]",
                "the dtypes do not match",
            ],
        ),  # fmt: skip
        (
            lambda: lax.scan(lambda c, x: (c[:1], x), np.ones(2, np.float32), np.ones(3)),
            TypeError,
            ["float32[2]", "float32[1]", "the shapes do not match"],
        ),
        (
            lambda: lax.scan(lambda c, x: c, np.float32(0), np.ones(3)),
            TypeError,
            ["scan body output must be a pair"],
        ),
        (
            # JAX 0.10.2 accepts unroll=0 (the whole loop unrolled), not a negative one
            lambda: lax.scan(lambda c, x: (c, x), 0.0, np.ones(3), unroll=-1),
            ValueError,
            ["`unroll` must be a `bool` or a non-negative `int`"],
        ),
        (lambda: lax.scan(3, 0.0, np.ones(3)), TypeError, ["should be callable"]),
        (
            lambda: lax.map(lambda x: x, np.ones(3), batch_size=0),
            ValueError,
            ["batch_size"],
        ),
    ],
)
def test_scan_errors(call, error, parts):
    with pytest.raises(error) as info:
        call()
    for part in parts:
        assert part in str(info.value), (part, str(info.value))


def test_several_carry_mismatches_are_listed():
    def body(c, x):
        return (c[0].astype(np.int32), c[1][:1]), x

    with pytest.raises(TypeError) as info:
        lax.scan(body, (np.float32(0), np.ones(2, np.float32)), np.ones(3))
    message = str(info.value)
    assert "  * the input carry component c[0] has type float32[]" in message
    assert "  * the input carry component c[1] has type float32[2]" in message


def test_fori_loop_with_python_bounds_has_a_weak_index():
    out = lax.fori_loop(0, 4, lambda i, c: c + i, 0)
    assert int(out) == 6 and out.weak_type
    out = lax.fori_loop(np.int8(0), np.int8(3), lambda i, c: c + i, np.int8(1))
    assert out.dtype == np.int8 and int(out) == 4


def test_fori_loop_index_and_bound_types_follow_jax():
    # Observed from JAX 0.10.2: with concrete bounds the index is a Python int (weak
    # int32; float bounds are truncated); with traced bounds the index has their dtype,
    # and a Python-int ``lower`` keeps it weak. Two strong concrete bounds give a weak
    # index too.
    for lower, upper in ((np.int32(0), np.int32(3)), (np.int8(0), np.int8(3))):
        i, _ = lax.fori_loop(lower, upper, lambda i, c: (i, c[1] + i), (0, 0))
        assert (i.dtype, i.weak_type, int(i)) == (np.int32, True, 2)
    i, _ = lax.fori_loop(np.int32(0), 3, lambda i, c: (i, c[1] + i), (0, 0))
    assert (i.dtype, i.weak_type, int(i)) == (np.int32, True, 2)
    i, _ = lax.fori_loop(0, np.int8(3), lambda i, c: (i, c[1] + i), (0, 0))
    assert (i.dtype, i.weak_type, int(i)) == (np.int32, True, 2)
    i, c = lax.fori_loop(0.0, 3.5, lambda i, c: (i, c[1] + i), (0, 0))
    assert (i.dtype, i.weak_type, int(i), int(c)) == (np.int32, True, 2, 3)
    out = jit(lambda a: lax.fori_loop(a, 3, lambda i, c: c + i, 0))(0)
    assert (out.dtype, out.weak_type, int(out)) == (np.int32, True, 3)
    out = jit(lambda a: lax.fori_loop(a, 3, lambda i, c: c + i, 0))(np.int16(0))
    assert (out.dtype, out.weak_type) == (np.int16, False)
    i, _ = jit(lambda a, b: lax.fori_loop(a, b, lambda i, c: (i, c[1] + i), (0, 0)))(0.0, 2.5)
    assert (i.dtype, i.weak_type, float(i)) == (np.float32, True, 2.0)
    for lower, upper in ((np.int16(0), np.int32(3)), (np.uint32(0), 3), (0.0, 3)):
        with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have"):
            lax.fori_loop(lower, upper, lambda i, c: c, 0)


def test_scan_unroll_zero_unrolls_everything():
    # JAX 0.10.2 accepts unroll=0 (documented as unrolling the whole loop).
    c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, np.arange(5.0, dtype=np.float32), unroll=0)
    check(c, 10.0)
    check(ys, [0.0, 0.0, 1.0, 3.0, 6.0])
    out = lax.fori_loop(0, 5, lambda i, c: c + i, 0, unroll=0)
    assert int(out) == 10


def test_a_weak_carry_whose_dtype_the_body_keeps_stays_weak_in_the_ys():
    # As in JAX 0.10.2, whose carry check ignores weak types: a weak 0.0 carry over
    # float32 inputs is not promoted, so the ys stacked from the carry are weakly typed
    # (the final carry, the body's output, is not).
    c, ys = lax.scan(lambda c, x: (c + x, c * 2), 0.0, np.ones(3, np.float32))
    assert (c.weak_type, ys.weak_type) == (False, True)
    check(ys, [0.0, 2.0, 4.0])


def test_carry_errors_name_the_leaf_of_a_pytree():
    def body(c, x):
        return {"h": c["h"], "n": c["n"] * 1.5}, None

    with pytest.raises(TypeError, match=r"c\['n'\] has type int32\[\]"):
        lax.scan(body, {"h": np.float32(0), "n": np.int32(1)}, None, length=2)


def test_scan_length_must_be_concrete():
    with pytest.raises(TypeError, match="length"):
        jit(lambda n: lax.scan(lambda c, _: (c, None), 0.0, None, length=n))(3)


# --- eager loops compile once per signature ---------------------------------------------------


def test_eager_scan_compiles_one_program_per_signature():
    xs = np.ones((6, 2), np.float32)
    lax.scan(rnn_body, np.zeros(2, np.float32), xs)
    before = dispatch.stats["compiles"]
    for _ in range(3):
        c, _ = lax.scan(rnn_body, np.zeros(2, np.float32), xs)
    assert dispatch.stats["compiles"] == before
    lax.scan(rnn_body, np.zeros(3, np.float32), np.ones((6, 3), np.float32))
    assert dispatch.stats["compiles"] == before + 1


def _below_five(c):
    return c[0] < 5


def _double(c):
    return c[0] + 1, c[1] * 2.0


def test_eager_while_and_cond_run_as_single_programs():
    def count():
        return lax.while_loop(_below_five, _double, (0, 1.0))

    count()
    branch = (lambda x: x + 1, lambda x: x * 2)
    lax.switch(1, branch, np.float32(3))
    before = dispatch.stats["compiles"]
    assert float(count()[1]) == 32.0
    assert float(lax.switch(0, branch, np.float32(3))) == 4.0
    assert dispatch.stats["compiles"] == before


# --- lowering ------------------------------------------------------------------------------


def test_lowered_loops_are_stablehlo_while_and_case_with_locations():
    def f(x):
        c, ys = lax.scan(rnn_body, x, jnp.stack([x, x]))
        return lax.cond(c.sum() > 0, lambda y: y + 1, lambda y: y - 1, ys)

    text = jit(f).lower(np.ones(2, np.float32)).as_text(debug_info=True)
    assert "stablehlo.while" in text and "stablehlo.case" in text
    assert "test_lax_control_flow.py" in text
    check(jit(f)(np.ones(2, np.float32)), f(np.ones(2, np.float32)))


def test_unrolled_scan_lowers_with_a_remainder():
    text = jit(lambda x: lax.scan(rnn_body, x, jnp.ones((7, 2)), unroll=3)).lower(
        np.ones(2, np.float32)
    )
    assert text.as_text().count("stablehlo.while") == 1


# --- the text of the programs --------------------------------------------------------------------


def programs():
    w = np.arange(3.0, dtype=np.float32)
    return {
        "scan": lambda x: lax.scan(lambda c, y: (c * w + y, c), x[0], x, reverse=True, unroll=2),
        "scan_pytree": lambda x: lax.scan(pytree_body, (x[0], 0), {"a": x, "b": x[:, 0]}),
        "cond": lambda x: lax.cond(x[0, 0] > 0, lambda y: y.sum(), lambda y: y.max(), x),
        "switch": lambda x: lax.switch(2, [jnp.sin, jnp.cos, lambda y: y * w], x),
        "while": lambda x: lax.while_loop(
            lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * w), (0, x[0])
        ),
        "fori": lambda x: lax.fori_loop(0, 3, lambda i, c: c * x[i], x[0]),
        "nested": lambda x: lax.scan(
            lambda c, y: (lax.cond(c[0] > 0, lambda z: z * 2, lambda z: z, c) + y, None), x[0], x
        ),
    }


@pytest.mark.parametrize("name", list(programs()))
def test_jaxprs_parse_back_and_check(name):
    closed = make_jaxpr(programs()[name])(np.ones((3, 3), np.float32))
    check_jaxpr(closed)
    back = parse_jaxpr(str(closed), consts=closed.consts)
    assert jaxpr_equal(back, closed)
    assert str(back) == str(closed)
    check_jaxpr(back)


def test_scan_prints_its_params_as_jax_does():
    text = str(make_jaxpr(programs()["scan"])(np.ones((3, 3), np.float32)))
    for part in ("scan[", "jaxpr={ lambda", "length=3", "num_carry=1", "num_consts=1",
                 "reverse=True", "unroll=2"):  # fmt: skip
        assert part in text, part
    text = str(make_jaxpr(programs()["switch"])(np.ones((3, 3), np.float32)))
    assert "clamp 0:i32[]" in text and "branches=(" in text


def _scan_eqn(closed):
    return next(e for e in closed.jaxpr.eqns if e.primitive is lax.scan_p)


def test_check_jaxpr_rejects_a_body_that_changes_the_carry_type():
    closed = make_jaxpr(programs()["scan"])(np.ones((3, 3), np.float32))
    eqn = _scan_eqn(closed)
    wrong = make_jaxpr(lambda w, c, y: (c[:1], c))(
        np.ones(3, np.float32), np.ones(3, np.float32), np.ones(3, np.float32)
    )
    bad = eqn.replace(params={**eqn.params, "jaxpr": ClosedJaxpr(wrong.jaxpr, ())})
    broken = closed.jaxpr.replace(eqns=[bad if e is eqn else e for e in closed.jaxpr.eqns])
    with pytest.raises(JaxprTypeError, match="carry"):
        check_jaxpr(ClosedJaxpr(broken, closed.consts))


# --- Python control flow over tracers ---------------------------------------------------------


def test_python_if_and_while_on_tracers_name_the_function_and_argument():
    def uses_if(x):
        if x > 0:
            return x
        return -x

    def uses_while(x):
        while x < 10:
            x = x * 2
        return x

    for fn in (uses_if, uses_while):
        with pytest.raises(TracerBoolConversionError) as info:
            jit(fn)(1.0)
        message = str(info.value)
        assert isinstance(info.value, ConcretizationTypeError)
        # JAX's text: the tracer, then the traced function and the argument it depends on.
        assert message.startswith("Attempted boolean conversion of traced array with shape bool[].")
        assert f"tracing the function {fn.__name__} at " in message
        assert "test_lax_control_flow.py" in message and " for jit. " in message
        assert "depends on the value of the argument x." in message


def test_python_for_over_a_traced_array_unrolls():
    def total(x):
        acc = 0.0
        for row in x:
            acc = acc + row.sum()
        return acc

    closed = make_jaxpr(total)(np.ones((3, 2), np.float32))
    assert not any(e.primitive in (lax.scan_p, lax.while_p) for e in closed.jaxpr.eqns)
    check(jit(total)(np.ones((3, 2), np.float32)), 6.0)


# --- effects inside loops ---------------------------------------------------------------------

# An effectful test primitive (a stand-in for a host callback): it returns its operand.
effect_p = Primitive("control_flow_test_effect")
effect_p.effectful = True
effect_p.def_abstract_eval(lambda x: x)


def _all_eqns(jaxpr):
    for eqn in jaxpr.eqns:
        yield eqn, jaxpr
        for sub in subjaxprs(eqn.params):
            yield from _all_eqns(sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub)


def test_dce_keeps_loops_whose_bodies_have_effects():
    def f(x):
        lax.scan(lambda c, y: (effect_p.bind(c) + y, None), x[0], x)
        lax.while_loop(lambda c: c < 3.0, lambda c: effect_p.bind(c) + 1.0, x[0, 0])
        lax.cond(x[0, 0] > 0, lambda: effect_p.bind(x), lambda: x)
        return x.sum()

    closed = make_jaxpr(f)(np.ones((3, 3), np.float32))
    pruned, _ = dce_jaxpr(closed.jaxpr, [True])
    kept = {e.primitive for e in pruned.eqns}
    assert {lax.scan_p, lax.while_p, lax.cond_p} <= kept


def test_partial_eval_keeps_a_loop_invariant_effect_inside_the_loop():
    w = np.full(2, 0.5, np.float32)  # an array: a const of the body, not a literal

    def loss(h0):
        def body(c, x):
            scale = effect_p.bind(w * 2.0)  # depends on consts only, but runs every step
            return c * scale + x, None

        return lax.scan(body, h0, np.ones((4, 2), np.float32))[0]

    ones = np.ones(2, np.float32)
    closed = make_jaxpr(lambda h: vjp(loss, h)[1](ones))(ones)
    homes = [owner for eqn, owner in _all_eqns(closed.jaxpr) if eqn.primitive is effect_p]
    assert homes and all(owner is not closed.jaxpr for owner in homes)
    for owner in homes:
        scans = [e for e, _ in _all_eqns(closed.jaxpr) if e.primitive is lax.scan_p]
        assert any(s.params["jaxpr"].jaxpr is owner for s in scans)


def test_inlining_reaches_calls_inside_loop_bodies_and_keeps_the_loops():
    inner = jit(lambda c, y: c * 2.0 + y)

    def f(x):
        c, _ = lax.scan(lambda c, y: (inner(c, y), None), x[0], x)
        return lax.cond(c.sum() > 0, lambda v: inner(v, v), lambda v: v, c)

    x = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    closed = make_jaxpr(f)(x)
    flat = inline_calls(closed)
    assert not any(e.primitive is jit_p for e, _ in _all_eqns(flat.jaxpr))
    assert {lax.scan_p, lax.cond_p} <= {e.primitive for e in flat.jaxpr.eqns}
    check_jaxpr(flat)
    check(eval_jaxpr(flat.jaxpr, flat.consts, x)[0], f(x))
