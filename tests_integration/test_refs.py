"""Mutable array references (``jax.Ref``), checked against numpy and JAX 0.10.2's answers.

Eager references, references passed into ``jit`` (updated in place and visible
after the call), made inside it or closed over, nested jitted calls, and the
errors JAX raises (recorded from JAX 0.10.2).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental.hijax import TransformedRef
from modjax.tracecore import parse_jaxpr

# --- programs several tests run (also tests_integration/test_refs_autodiff.py) -----------------


def double_then_bump(x):
    """Write a reference made from ``x`` twice, then read it."""
    r = jax.new_ref(x)
    r[...] = r[...] * 2
    r[0] += x[1]
    return jnp.sum(r[...] ** 2)


def scaled_sum(x):
    """Accumulate ``x[i] * x[0]`` into a reference made from a constant, in a scan."""
    acc = jax.new_ref(0.0)

    def body(c, xi):
        acc[...] += xi * c
        return c, None

    jax.lax.scan(body, x[0], x)
    return acc[...]


def test_eager_reference_reads_and_writes():
    r = jax.new_ref(jnp.arange(3.0))
    assert isinstance(r, jax.Ref) and not isinstance(jnp.ones(2), jax.Ref)
    assert str(jax.typeof(r)) == "Ref{float32[3]}"  # JAX 0.10.2's text
    assert repr(r) == "Ref([0., 1., 2.], dtype=float32)"
    assert (r.shape, r.dtype, len(r)) == ((3,), np.float32, 3)
    r[...] = jnp.ones(3)
    r[1] += 5
    r[0] = 7
    np.testing.assert_array_equal(r[...], [7.0, 6.0, 1.0])
    assert float(r[1]) == 6.0
    r2 = jax.new_ref(jnp.zeros((3, 4)))
    r2[jnp.array([0, 2])] = jnp.ones((2, 4))
    jax.ref.addupdate(r2, (0, 1), 7.0)
    want = np.zeros((3, 4), np.float32)
    want[[0, 2]] = 1
    want[0, 1] += 7
    np.testing.assert_array_equal(r2[...], want)
    np.testing.assert_array_equal(r2[1:, ::2], want[1:, ::2])
    np.testing.assert_array_equal(jax.ref.swap(r2, (0,), jnp.full(4, 2.0)), want[0])
    assert jax.ref.set(r2, None, jnp.full((3, 4), 3.0)) is None
    np.testing.assert_array_equal(jax.freeze(r2), np.full((3, 4), 3.0))


def test_a_reference_holds_a_copy():
    x = jnp.ones(3)
    r = jax.new_ref(x)
    r[...] = jnp.zeros(3)
    jax.jit(lambda r: r.__setitem__(..., r[...] + 5))(r)
    np.testing.assert_array_equal(x, np.ones(3))  # neither write reached x
    np.testing.assert_array_equal(r[...], np.full(3, 5.0))
    frozen = jax.freeze(r)
    jax.jit(lambda r: r.__setitem__(0, 1.0))(r)  # donates the reference's array
    np.testing.assert_array_equal(frozen, np.full(3, 5.0))


def test_errors_as_jax_raises_them():
    r = jax.new_ref(jnp.zeros(3))
    with pytest.raises(
        ValueError, match=r"Invalid dtype for `swap`. Ref dtype: float32. Value dtype: int32"
    ):
        r[...] = jnp.ones(3, jnp.int32)
    with pytest.raises(
        ValueError,
        match=r"Invalid shape for `swap`. Ref shape: \(3,\). Expected shape: \(3,\). "
        r"Value shape: \(2,\)",
    ):
        r[...] = jnp.ones(2)
    with pytest.raises(ValueError, match="Invalid shape for `addupdate`"):
        jax.ref.addupdate(r, ..., jnp.ones(2))
    with pytest.raises(TypeError, match="Error interpreting argument to new_ref as a JAX value"):
        jax.new_ref([1.0, 2.0])
    with pytest.raises(ValueError, match="only one reference to a mutable array may be passed"):
        jax.jit(lambda a, b: a[...] + b[...])(r, r)
    with pytest.raises(
        ValueError,
        match="(?s)returned a mutable array reference of type Ref{float32\\[3\\]}.*"
        "passed in as the argument r",
    ):
        jax.jit(lambda r: r)(r)
    with pytest.raises(ValueError, match="mutable array references cannot be returned"):
        jax.jit(lambda x: jax.new_ref(x))(jnp.ones(3))
    with pytest.raises(ValueError, match="`get` must be called on `Ref` types"):
        jax.jit(lambda x: jax.ref.get(x, ...))(jnp.ones(3))


def test_jit_updates_reference_arguments_in_place():
    def f(r, x):
        r[...] += x
        r[0] = 3.0
        return r[1:] * 2

    r = jax.new_ref(jnp.arange(3.0))
    f_jit = jax.jit(f)
    np.testing.assert_array_equal(f_jit(r, jnp.ones(3)), [4.0, 6.0])  # JAX 0.10.2's answer
    np.testing.assert_array_equal(r[...], [3.0, 2.0, 3.0])
    np.testing.assert_array_equal(f_jit(r, jnp.ones(3)), [6.0, 8.0])
    np.testing.assert_array_equal(r[...], [3.0, 3.0, 4.0])


def test_jit_of_references_made_inside_and_closed_over():
    def g(x):
        r = jax.new_ref(x)
        r[...] = r[...] * 2
        r[0] += 1
        return r[...]

    np.testing.assert_array_equal(jax.jit(g)(jnp.ones(3)), [3.0, 2.0, 2.0])
    counter = jax.new_ref(jnp.zeros(2))

    @jax.jit
    def h(x):
        counter[...] += x
        return x

    h(jnp.ones(2))
    h(jnp.ones(2))
    np.testing.assert_array_equal(counter[...], [2.0, 2.0])

    def e(x):
        r = jax.empty_ref(jax.typeof(x))
        r[...] = x
        return jax.freeze(r)

    np.testing.assert_array_equal(jax.jit(e)(jnp.arange(2.0)), [0.0, 1.0])


def test_nested_jitted_calls_share_a_reference():
    bump = jax.jit(lambda r, v: r.__setitem__(0, r[0] + v))

    def outer(r):
        bump(r, 1.0)
        bump(r, 2.0)
        return r[...]

    r = jax.new_ref(jnp.zeros(3))
    np.testing.assert_array_equal(jax.jit(outer)(r), [3.0, 0.0, 0.0])
    np.testing.assert_array_equal(outer(r), [6.0, 0.0, 0.0])
    np.testing.assert_array_equal(r[...], [6.0, 0.0, 0.0])


def test_jaxpr_types_effects_and_round_trip():
    def g(x):
        r = jax.new_ref(x)
        r[...] = r[...] * 2
        r[0] += 1
        y = r[1:]
        jax.free_ref(r)
        return y

    closed = jax.make_jaxpr(g)(jnp.ones(3))
    text = str(closed)
    # JAX 0.10.2's text (a swap whose old value nothing reads is a plain write), but for
    # modjax's weak-type marks.
    assert text.replace("~", "") == (
        "{ lambda ; a:f32[3]. let\n"
        "    b:Ref{f32[3]} = new_ref[kind=None memory_space=None] a\n"
        "    c:f32[3] <- b[...]\n"
        "    d:f32[3] = mul c 2.0:f32[]\n"
        "    b[...] <- d\n"
        "    e:f32[] <- b[0]\n"
        "    f:f32[] = add e 1.0:f32[]\n"
        "    b[0] <- f\n"
        "    g:f32[2] <- b[1:]\n"
        "    free_ref b\n"
        "  in (g,) }"
    )
    assert "{Ref}" not in text
    assert str(parse_jaxpr(text)) == text


def _indexed_writes(r, x, i):
    r[...] += x
    r[i] = 1.0
    r[np.int32(1)] = 2.0
    jax.ref.addupdate(r, (slice(None, None, 2),), jnp.ones(2))
    return r[1:], r[jnp.array([0, 2])], r[jax.ds(i, 2)]


def _loop_with_effects(x):
    acc = jax.new_ref(jnp.zeros(()))

    def body(c, xi):
        acc[...] += xi
        jax.debug.print("{}", xi)
        return c, None

    jax.lax.scan(body, 0.0, x)
    return acc[...]


@pytest.mark.parametrize(
    "fn, args",
    [
        (_indexed_writes, (jax.new_ref(jnp.arange(3.0)), jnp.ones(3), 1)),
        (_loop_with_effects, (jnp.ones(3),)),
        (jax.vmap(lambda x: jax.new_ref(x)[0]), (jnp.ones((2, 3)),)),
    ],
)
def test_reference_syntax_parses_back(fn, args):
    closed = jax.make_jaxpr(fn)(*args)
    text = str(closed)
    again = str(parse_jaxpr(text, consts=closed.consts))
    if fn is _loop_with_effects:  # a debug callback's param prints quoted once read back
        assert "scan{Debug}[" in text and again.count("<-") == text.count("<-") == 3
        assert str(parse_jaxpr(again, consts=closed.consts)) == again
    else:
        assert again == text
    if fn is _indexed_writes:
        for piece in ("b[d] <- 1.0:f32[]", "b[::2] += ", "<- b[1:]", "<- b[a]", "<- b[ds(d,2,1)]"):
            assert piece in text, (piece, text)
    r = jax.new_ref(jnp.ones(3))
    closed = jax.make_jaxpr(lambda x: r.__setitem__(..., x))(jnp.ones(3))
    assert str(closed).startswith("{ lambda a:Ref{f32[3]}; b:f32[3]. let")


def test_dce_keeps_writes():
    from modjax.tracecore import dce_jaxpr

    def w(x):
        r = jax.new_ref(x)
        r[...] = x + 1  # written, never read: the write stays, as in JAX
        return x

    jaxpr = jax.make_jaxpr(w)(jnp.ones(2)).jaxpr
    pruned, _ = dce_jaxpr(jaxpr, [True])
    assert [e.primitive.name for e in pruned.eqns] == ["new_ref", "add", "swap"]


_INDEX = st.sampled_from(
    [
        (Ellipsis,),
        (0,),
        (-1,),
        (slice(1, None),),
        (slice(None, None, 2),),
        (1, slice(None, 3)),
        (slice(None), 2),
        (np.array([0, 2]),),
        (Ellipsis, 1),
    ]
)


@settings(max_examples=10, deadline=None)
@given(
    steps=st.lists(st.tuples(st.sampled_from(["set", "add", "get"]), _INDEX), max_size=4),
    seed=st.integers(0, 2**16),
)
def test_sequences_of_reads_and_writes_match_numpy(steps, seed):
    rng = np.random.RandomState(seed)
    start = rng.uniform(-2, 2, (3, 4)).astype(np.float32)
    updates = [rng.uniform(-2, 2, start[idx].shape).astype(np.float32) for _, idx in steps]

    def program(r):
        reads = []
        for (op, idx), u in zip(steps, updates, strict=True):
            if op == "set":
                r[idx] = u
            elif op == "add":
                r[idx] += u
            else:
                reads.append(r[idx])
        return reads

    want = start.copy()
    want_reads = []
    for (op, idx), u in zip(steps, updates, strict=True):
        if op == "set":
            want[idx] = u
        elif op == "add":
            want[idx] += u
        else:
            want_reads.append(want[idx].copy())
    for run in (program, jax.jit(program)):
        r = jax.new_ref(jnp.asarray(start))
        reads = run(r)
        np.testing.assert_allclose(r[...], want, rtol=1e-6)
        for got, expected in zip(reads, want_reads, strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_public_names():
    assert jax.ad.DontWant() == jax.ad.DontWant() and repr(jax.ad.GradRef()) == "GradRef()"
    assert jax.tree.leaves(jax.ad.DidntWant()) == []
    with pytest.raises(AttributeError, match="'Ref' object has no attribute 'cur_qdd'"):
        jax.experimental.cur_qdd(jax.new_ref(1.0))
    assert set(jax.ref.__all__) == {
        "AbstractRef",
        "Ref",
        "addupdate",
        "empty_ref",
        "free_ref",
        "freeze",
        "get",
        "new_ref",
        "set",
        "swap",
    }


# --- control flow: references closed over by loop bodies and branches ------------------------


def _accumulate(xs):
    acc = jax.new_ref(jnp.zeros(()))

    def body(c, x):
        acc[...] += x
        return c + 1, x * 2

    c, ys = jax.lax.scan(body, 0.0, xs)
    return acc[...], c, ys


@pytest.mark.parametrize("run", [_accumulate, jax.jit(_accumulate)], ids=["eager", "jit"])
def test_scan_accumulates_into_a_reference(run):
    total, c, ys = run(jnp.arange(4.0))
    assert float(total) == 6.0 and float(c) == 4.0
    np.testing.assert_array_equal(ys, [0.0, 2.0, 4.0, 6.0])


def test_fori_loop_writes_a_reference_argument():
    def fill(r):
        def body(i, c):
            r[i] = i * 2.0 + c
            return c + 1.0

        return jax.lax.fori_loop(0, 5, body, 0.0)

    for run in (fill, jax.jit(fill)):
        r = jax.new_ref(jnp.zeros(5))
        assert float(run(r)) == 5.0
        np.testing.assert_array_equal(r[...], [0.0, 3.0, 6.0, 9.0, 12.0])


def test_while_loop_condition_reads_what_the_body_writes():
    def count(x):
        r = jax.new_ref(x)

        def cond(i):
            return r[0] < 10.0

        def body(i):
            r[0] += 1.0
            r[1] = i * 1.0
            return i + 1

        return jax.lax.while_loop(cond, body, 0), r[...]

    for run in (count, jax.jit(count)):
        n, value = run(jnp.zeros(3))
        assert int(n) == 10
        np.testing.assert_array_equal(value, [10.0, 9.0, 0.0])


def test_cond_branches_write_a_reference():
    def choose(p, x):
        r = jax.new_ref(x)

        def yes():
            r[0] = 5.0
            return 1.0

        def no():
            r[1] += 2.0
            return 2.0

        return jax.lax.cond(p, yes, no), r[...]

    for run in (choose, jax.jit(choose)):
        y, value = run(True, jnp.zeros(3))
        assert float(y) == 1.0
        np.testing.assert_array_equal(value, [5.0, 0.0, 0.0])
        y, value = run(False, jnp.zeros(3))
        assert float(y) == 2.0
        np.testing.assert_array_equal(value, [0.0, 2.0, 0.0])


def test_a_reference_as_a_cond_operand():
    def choose(p, x):
        r = jax.new_ref(x)  # weakly typed: a branch writing a strong value keeps it weak
        jax.lax.cond(p, lambda rr: rr.__setitem__(..., 5.0), lambda rr: None, r)
        return r[...]

    for run in (choose, jax.jit(choose)):
        assert float(run(True, 1.0)) == 5.0  # JAX 0.10.2's answer
        assert float(run(False, 1.0)) == 1.0


def test_nested_scans_share_a_reference():
    def nested(xs):
        acc = jax.new_ref(jnp.zeros(2))

        def outer(c, row):
            def inner(c2, x):
                acc[0] += x
                return c2, None

            jax.lax.scan(inner, 0.0, row)
            acc[1] += 1.0
            return c, None

        jax.lax.scan(outer, 0.0, xs)
        return acc[...]

    np.testing.assert_array_equal(jax.jit(nested)(jnp.ones((3, 4))), [12.0, 3.0])
    np.testing.assert_array_equal(nested(jnp.ones((3, 4))), [12.0, 3.0])


def _scan_over_a_reference(x, reverse=False):
    r = jax.new_ref(x)
    acc = jax.new_ref(jnp.zeros(x.shape[1:]))

    def body(c, a):
        ri, xi = a  # ri: this iteration's row of r, itself a reference
        ri[0] += c
        acc[...] += ri[...] * xi
        ri[1:] = ri[1:] * 2
        return c + 1, ri[...].sum()

    c, ys = jax.lax.scan(body, 0.0, (r, jnp.arange(x.shape[0]) * 1.0), reverse=reverse)
    return r[...], acc[...], c, ys


X43 = jnp.arange(12.0).reshape(4, 3)


@pytest.mark.parametrize(
    "run",
    [_scan_over_a_reference, jax.jit(_scan_over_a_reference, static_argnums=1)],
    ids=["eager", "jit"],
)
def test_scan_over_a_reference(run):
    r, acc, c, ys = run(X43)  # JAX 0.10.2's answers
    np.testing.assert_array_equal(r, [[0, 2, 4], [4, 8, 10], [8, 14, 16], [12, 20, 22]])
    np.testing.assert_array_equal(acc, [56.0, 48.0, 54.0])
    np.testing.assert_array_equal(ys, [6.0, 22.0, 38.0, 54.0])
    assert float(c) == 4.0
    r, _, _, ys = run(X43, True)
    np.testing.assert_array_equal(r, [[3, 2, 4], [5, 8, 10], [7, 14, 16], [9, 20, 22]])
    np.testing.assert_array_equal(ys, [9.0, 23.0, 37.0, 51.0])


def test_scan_over_a_reference_argument_and_nested_scans():
    def bump(r):
        def body(c, ri):
            ri[...] = ri[...] + c
            return c * 2, None

        jax.lax.scan(body, 1.0, r)

    r = jax.new_ref(jnp.ones((3, 2)))
    jax.jit(bump)(r)
    np.testing.assert_array_equal(r[...], [[2, 2], [3, 3], [5, 5]])
    bump(r)
    np.testing.assert_array_equal(r[...], [[3, 3], [5, 5], [9, 9]])

    def nested(x):
        r = jax.new_ref(x)

        def outer(c, row):
            def inner(c2, cell):
                cell[...] += c2
                return c2 + 1, None

            jax.lax.scan(inner, c, row)
            return c * 10, None

        jax.lax.scan(outer, 1.0, r)
        return r[...]

    want = [[1, 3, 5], [13, 15, 17], [106, 108, 110], [1009, 1011, 1013]]  # JAX's
    np.testing.assert_array_equal(jax.jit(nested)(X43), want)

    def tripled(x):
        r = jax.new_ref(x)
        jax.lax.map(lambda ri: ri.__setitem__(..., ri[...] * 3), r)
        return r[...]

    np.testing.assert_array_equal(tripled(X43), X43 * 3)


def test_derivatives_of_a_scan_over_a_reference():
    _, t = jax.jvp(lambda x: _scan_over_a_reference(x)[3], (X43,), (jnp.ones_like(X43),))
    np.testing.assert_array_equal(t, [5.0, 5.0, 5.0, 5.0])  # JAX 0.10.2's answers

    def loss(x):
        _, acc, _, ys = _scan_over_a_reference(x)
        return ys.sum() + acc.sum()

    want = [[1, 2, 2], [2, 3, 3], [3, 4, 4], [4, 5, 5]]
    np.testing.assert_array_equal(jax.grad(loss)(X43), want)
    np.testing.assert_array_equal(jax.jit(jax.grad(loss))(X43), want)


def test_a_reference_as_a_loop_carry_is_refused():
    r = jax.new_ref(1.0)

    def scan_body(c, x):
        c[...] += x
        return c, None

    with pytest.raises(
        ValueError,
        match=r"(?s)function scan_body at .* traced for scan returned a mutable array reference "
        r"of type Ref{float32\[\]} at output tree path result\[0\], but mutable array "
        r"references cannot be returned.*passed in as the argument c\.",
    ):
        jax.lax.scan(scan_body, r, jnp.arange(3.0))

    def while_body(c):
        c[1][...] += 1.0
        return c[0] + 1, c[1]

    with pytest.raises(
        ValueError, match=r"(?s)traced for while_body .* result\[1\].*the argument c\[1\]\."
    ):
        jax.jit(lambda r: jax.lax.while_loop(lambda c: c[0] < 3, while_body, (0, r)))(r)

    def fori_body(i, rr):
        return rr

    with pytest.raises(
        ValueError,
        match=r"(?s)function fori_body .* traced for fori_loop .* result\[0\]\[1\].*argument rr\.",
    ):
        jax.lax.fori_loop(0, 3, fori_body, r)
    with pytest.raises(ValueError, match=r"(?s)traced for fori_loop .* result\[2\].*argument rr\."):
        jax.jit(lambda n: jax.lax.fori_loop(0, n, fori_body, r))(3)
    with pytest.raises(ValueError, match="returned mutable array was created inside the function"):
        jax.lax.scan(lambda c, x: (jax.new_ref(x), None), r, jnp.arange(3.0))


# --- vmap ---------------------------------------------------------------------------------------


def test_vmap_of_references_made_inside():
    np.testing.assert_array_equal(
        jax.vmap(double_then_bump)(jnp.ones((2, 3))), [17.0, 17.0]
    )  # JAX's answer

    def shared_start(x):  # new_ref of an unbatched value is batched under vmap (as in JAX)
        r = jax.new_ref(0.0)
        r[...] += x
        return r[...]

    np.testing.assert_array_equal(jax.vmap(shared_start)(jnp.arange(3.0)), [0.0, 1.0, 2.0])

    def at(x, i):
        r = jax.new_ref(x)
        r[i] = 10.0
        return r[i] + r[...].sum()

    np.testing.assert_array_equal(jax.vmap(at)(jnp.ones((2, 3)), jnp.array([0, 2])), [22.0, 22.0])


def test_vmap_of_reference_arguments_and_closures():
    def add(r, x):
        r[...] += x
        return x

    rb = jax.new_ref(jnp.zeros((2, 3)))
    jax.vmap(add)(rb, jnp.ones((2, 3)))
    jax.jit(jax.vmap(add))(rb, jnp.ones((2, 3)))
    np.testing.assert_array_equal(rb[...], np.full((2, 3), 2.0))
    shared = jax.new_ref(jnp.ones(3))
    np.testing.assert_array_equal(jax.vmap(lambda x: shared[...] * x)(jnp.ones((2, 3))), 1.0)
    with pytest.raises(Exception, match="performing a set/swap operation with vmapped value"):
        jax.vmap(add, in_axes=(None, 0))(shared, jnp.ones((2, 3)))


def test_vmap_of_loops_writing_references():
    np.testing.assert_array_equal(jax.vmap(scaled_sum)(jnp.ones((2, 3))), [3.0, 3.0])

    def fill(x):
        r = jax.new_ref(jnp.zeros(3))

        def body(i, c):
            r[i] = x * i
            return c

        jax.lax.fori_loop(0, 3, body, 0.0)
        return r[...]

    np.testing.assert_array_equal(jax.vmap(fill)(jnp.array([1.0, 2.0])), [[0, 1, 2], [0, 2, 4]])

    def branch(p, x):
        r = jax.new_ref(x)
        jax.lax.cond(p, lambda: r.__setitem__(0, 5.0), lambda: r.__setitem__(1, 7.0))
        return r[...]

    with pytest.raises(NotImplementedError, match="State effect not supported in vmap-of-cond"):
        jax.vmap(branch)(jnp.array([True, False]), jnp.zeros((2, 3)))


def _reads_and_writes_at_array_indices(x):
    r = jax.new_ref(x)
    r[jnp.array([0, 2])] += 1.0
    r[jnp.array([1, 2])] = r[jnp.array([0, 1])] * 3
    return r[jnp.array([2, 0, 1])]


def _bump_at(x, i):
    r = jax.new_ref(x)
    r[i] += 1.0
    return r[...]


def test_vmap_of_array_and_batched_indices():
    x = jnp.arange(6.0).reshape(2, 3)
    want = [[3.0, 1.0, 3.0], [12.0, 4.0, 12.0]]  # JAX 0.10.2's answers
    np.testing.assert_array_equal(jax.vmap(_reads_and_writes_at_array_indices)(x), want)
    np.testing.assert_array_equal(jax.jit(jax.vmap(_reads_and_writes_at_array_indices))(x), want)
    got = jax.vmap(_bump_at)(jnp.arange(8.0).reshape(2, 4), jnp.array([[0, 1], [2, 3]]))
    np.testing.assert_array_equal(got, [[1.0, 2.0, 2.0, 3.0], [4.0, 5.0, 7.0, 8.0]])

    def mixed(x, i):
        r = jax.new_ref(x)
        r[i, 1:] = r[i, 1:] * 2
        return r[...]

    got = jax.vmap(mixed)(jnp.arange(12.0).reshape(2, 2, 3), jnp.array([0, 1]))
    np.testing.assert_array_equal(got, [[[0, 2, 4], [3, 4, 5]], [[6, 7, 8], [9, 20, 22]]])

    def in_a_scan(x):
        r = jax.new_ref(jnp.zeros(4))

        def body(c, xi):
            r[jnp.array([0, 3])] += xi
            return c, None

        jax.lax.scan(body, 0.0, x)
        return r[...]

    np.testing.assert_array_equal(jax.vmap(in_a_scan)(x), [[3, 0, 0, 3], [12, 0, 0, 12]])


def test_vmap_of_batched_indices_into_an_unbatched_reference():
    shared = jax.new_ref(jnp.arange(5.0))
    i = jnp.array([0, 3, 4])
    np.testing.assert_array_equal(jax.vmap(lambda i: shared[i])(i), [0.0, 3.0, 4.0])
    np.testing.assert_array_equal(jax.jit(jax.vmap(lambda i: shared[i] * 2))(i), [0, 6, 8])
    got = jax.vmap(lambda i: shared[i])(jnp.array([[0, 3], [4, 1]]))
    np.testing.assert_array_equal(got, [[0.0, 3.0], [4.0, 1.0]])

    def scanned(i):
        return jax.lax.scan(lambda c, _: (c + shared[i], None), 0.0, None, length=2)[0]

    np.testing.assert_array_equal(jax.vmap(scanned)(jnp.array([1, 4])), [2.0, 8.0])
    # Writes at a batched index into an unbatched reference: JAX 0.10.2's errors.
    with pytest.raises(Exception, match="performing a set/swap operation with vmapped value"):
        jax.vmap(lambda i: shared.__setitem__(i, 7.0))(jnp.array([0, 2]))
    with pytest.raises(Exception, match="performing an addupdate operation with vmapped value"):
        jax.vmap(lambda i: jax.ref.addupdate(shared, i, 1.0))(jnp.array([0, 2]))
    np.testing.assert_array_equal(shared[...], np.arange(5.0))


def test_vmap_of_a_reference_along_another_axis():
    def read(r, x):
        return r[0] * x + r[...].sum()

    def write(r, x):
        r[0] = x
        r[1] += x

    r = jax.new_ref(jnp.arange(6.0).reshape(3, 2))
    np.testing.assert_array_equal(jax.vmap(read, in_axes=(1, 0))(r, jnp.ones(2)), [6.0, 10.0])
    for run in (jax.vmap(write, in_axes=(1, 0)), jax.jit(jax.vmap(write, in_axes=(1, 0)))):
        r = jax.new_ref(jnp.arange(6.0).reshape(3, 2))
        run(r, jnp.array([10.0, 20.0]))
        np.testing.assert_array_equal(r[...], [[10, 20], [12, 23], [4, 5]])  # JAX's answer

    def loop(r, x):
        def body(i, c):
            r[i] += x * i
            return c

        jax.lax.fori_loop(0, 3, body, 0.0)

    # A loop closing over it (JAX 0.10.2 fails too), and a scan over a batched reference.
    with pytest.raises(NotImplementedError, match="vmap: moving axis 1 of a reference"):
        jax.vmap(loop, in_axes=(1, 0))(r, jnp.array([1.0, 2.0]))
    with pytest.raises(NotImplementedError, match="a scan over a batched reference"):
        jax.vmap(lambda x: _scan_over_a_reference(x)[3])(jnp.stack([X43, X43 + 1]))


def test_vmap_of_a_window_with_a_batched_start_is_refused_as_in_jax():
    def window(x, s):
        r = jax.new_ref(x)
        r[jax.ds(s, 2)] += 10.0
        return r[...]

    with pytest.raises(
        NotImplementedError,
        match=r"No support for vmapping over nontrivial slices just yet: Slice\(start=",
    ):
        jax.vmap(window)(jnp.arange(12.0).reshape(2, 6), jnp.array([0, 3]))


# --- slice bounds and empty references ---------------------------------------------------------


def test_slice_bounds_are_concrete_integers_as_in_jax():
    def window(x, i):
        r = jax.new_ref(x)
        r[i : i + 2] = r[i : i + 2] * 10
        return r[...]

    x = jnp.arange(5.0)
    for i in (1, np.int64(1), jnp.int32(1), jnp.array(1)):  # concrete: JAX 0.10.2 takes them all
        np.testing.assert_array_equal(window(x, i), [0.0, 10.0, 20.0, 3.0, 4.0])
    np.testing.assert_array_equal(jax.jit(window, static_argnums=1)(x, 1), window(x, 1))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(window)(x, 1)  # a traced bound: JAX's error
    with pytest.raises(jax.errors.TracerBoolConversionError):
        jax.jit(lambda x, s: jax.new_ref(x)[::s])(x, 2)
    with pytest.raises(TypeError, match="'float' object cannot be interpreted as an integer"):
        jax.new_ref(x)[1.0:3]


def test_empty_ref_holds_zeros_until_written():
    def fill():
        r = jax.empty_ref(jax.typeof(jnp.zeros(3)))
        r[1] = 2.0
        return r[1], r[...]

    for run in (fill, jax.jit(fill)):
        one, whole = run()
        assert float(one) == 2.0  # JAX 0.10.2's answer under jit (eagerly JAX has no rule)
        np.testing.assert_array_equal(whole, [0.0, 2.0, 0.0])
    r = jax.empty_ref(jax.ShapeDtypeStruct((2,), jnp.int32))
    assert jax.typeof(r).str_short() == "Ref{int32[2]}"


# --- views: ref.at[idx] (JAX's TransformedRef) ----------------------------------------------


def _write_through_views(x):
    r = jax.new_ref(x)
    view = r.at[1:5]
    inner = view.at[1:3]
    inner[...] = inner[...] * 10
    view[0] = -1.0
    view[1:2] += 100.0
    return jax.freeze(r), view.shape, inner.shape, inner.dtype


def test_views_read_and_write_the_elements_they_select_as_jax():
    # JAX 0.10.2 under jit: [0, -1, 120, 30, 4, 5], view shapes (4,) and (2,).
    want = np.asarray([0.0, -1.0, 120.0, 30.0, 4.0, 5.0], np.float32)
    shapes = []

    def program(x):
        out, *meta = _write_through_views(x)
        shapes.append(meta)
        return out

    np.testing.assert_array_equal(np.asarray(jax.jit(program)(jnp.arange(6.0))), want)
    np.testing.assert_array_equal(np.asarray(program(jnp.arange(6.0))), want)
    assert shapes == [[(4,), (2,), np.dtype("float32")]] * 2


def test_views_of_rows_and_columns_under_grad_and_vmap():
    def g(x):
        r = jax.new_ref(jnp.zeros((3, 4)))
        r.at[1][...] = x
        r.at[:, 2][0] += x[0]
        return jax.freeze(r).sum() * x.sum()

    x = np.arange(4.0, dtype=np.float32)
    # d/dx (s + x0) * s with s = sum(x): (2s + x0) + [s, 0, 0, 0].
    s = x.sum()
    want = np.full(4, 2 * s + x[0]) + np.asarray([s, 0, 0, 0])
    np.testing.assert_allclose(np.asarray(jax.grad(g)(x)), want)
    batch = np.stack([x, x + 1])
    np.testing.assert_allclose(
        np.asarray(jax.jit(jax.vmap(g))(batch)), [float(g(row)) for row in batch]
    )


def test_view_type_and_length():
    r = jax.new_ref(jnp.zeros((3, 4), jnp.int32))
    view = r.at[1:, ::2]
    assert (view.shape, view.ndim, view.size, len(view)) == ((2, 2), 2, 4, 2)
    assert view.dtype == np.int32 and isinstance(view, TransformedRef)
    with pytest.raises(TypeError, match="unsized"):
        len(r.at[0, 0])
