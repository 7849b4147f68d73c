"""Programs derived from a call's jaxpr (JVP, partial-evaluation split, transpose) are cached.

The call here binds tracecore's ``call_p`` on one fixed ClosedJaxpr, as jit does
with the program it traced once: differentiating it again must reuse the derived
programs (the same objects), and the cache entries must die with the program.
"""

import gc
import importlib
import weakref

import numpy as np
from autodiff_test_prims import cos, mul, sin, sum_all

from modjax.autodiff import grad, jvp, vjp
from modjax.tracecore import call_p, make_jaxpr, source_info
from modjax.tracecore.check import check_jaxpr
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tracing import convert_constvars_jaxpr

# The modules, not the same-named functions that modjax.autodiff exports.
jvp_module = importlib.import_module("modjax.autodiff.jvp")
transpose_module = importlib.import_module("modjax.autodiff.transpose")
partial_eval = importlib.import_module("modjax.tracecore.partial_eval")

X = np.array([0.3, -1.2, 2.0], np.float32)
Y = np.array([1.5, 0.5, -0.25], np.float32)


def program(fun, *args) -> ClosedJaxpr:
    closed = make_jaxpr(fun)(*args)
    return ClosedJaxpr(convert_constvars_jaxpr(closed.jaxpr), ())


def caller(closed: ClosedJaxpr):
    """A function applying ``closed`` with one call equation, like a jitted function."""

    def f(*args):
        return call_p.bind(*args, jaxpr=closed, name="inner")[0]

    return f


def misses():
    return (
        jvp_module._jvp_jaxprs.misses,
        partial_eval._call_splits.misses,
        transpose_module._transposed_jaxprs.misses,
    )


def call_jaxprs(closed):
    return [e.params["jaxpr"] for e in closed.jaxpr.eqns if e.primitive is call_p]


def test_grad_of_a_call_derives_its_programs_once():
    inner = program(lambda x, y: sum_all(mul(sin(x), y)), X, Y)
    f = caller(inner)
    first = make_jaxpr(grad(f))(X, Y)
    check_jaxpr(first)
    before = misses()
    second = make_jaxpr(grad(f))(X, Y)
    assert misses() == before
    forward, backward = call_jaxprs(first)
    assert call_jaxprs(second) == [forward, backward]
    assert all(a is b for a, b in zip(call_jaxprs(first), call_jaxprs(second), strict=True))
    # The backward call takes only residuals it reads (no pass-through leftovers).
    read = {a for e in backward.jaxpr.eqns for a in e.invars} | set(backward.jaxpr.outvars)
    assert all(v in read for v in backward.jaxpr.invars)


def test_eager_grad_of_a_call_derives_once_and_stays_correct():
    inner = program(lambda x, y: sum_all(mul(sin(x), y)), X, Y)
    f = caller(inner)
    np.testing.assert_allclose(grad(f)(X, Y), np.cos(X) * Y, rtol=1e-6)
    before = misses()
    np.testing.assert_allclose(grad(f)(X, Y), np.cos(X) * Y, rtol=1e-6)
    np.testing.assert_allclose(grad(f)(2 * X, Y), np.cos(2 * X) * Y, rtol=1e-6)
    assert misses() == before


def test_other_tangent_patterns_are_derived_separately():
    inner = program(lambda x, y: sum_all(mul(sin(x), y)), X, Y)
    f = caller(inner)
    np.testing.assert_allclose(grad(f, argnums=0)(X, Y), np.cos(X) * Y, rtol=1e-6)
    before = misses()
    np.testing.assert_allclose(grad(f, argnums=1)(X, Y), np.sin(X), rtol=1e-6)
    assert all(after > b for after, b in zip(misses(), before, strict=True))
    np.testing.assert_allclose(grad(f, argnums=(0, 1))(X, Y)[1], np.sin(X), rtol=1e-6)


def test_jvp_and_vjp_of_a_call_reuse_the_jvp():
    inner = program(lambda x: mul(sin(x), cos(x)), X)
    f = caller(inner)
    expected = np.cos(2 * X) * Y
    _, t1 = jvp(f, (X,), (Y,))
    jvp_misses = jvp_module._jvp_jaxprs.misses
    _, t2 = jvp(f, (X,), (Y,))
    assert jvp_module._jvp_jaxprs.misses == jvp_misses
    _, pullback = vjp(f, X)
    assert jvp_module._jvp_jaxprs.misses == jvp_misses  # linearize reuses the same JVP
    np.testing.assert_allclose(t1, expected, rtol=1e-5)
    np.testing.assert_allclose(t2, expected, rtol=1e-5)
    np.testing.assert_allclose(pullback(Y)[0], expected, rtol=1e-5)


def test_grad_of_grad_of_a_call():
    inner = program(lambda x: sin(mul(x, x)), np.float32(0.7))
    f = caller(inner)
    expected = 2 * np.cos(0.49) - 4 * 0.49 * np.sin(0.49)
    for _ in range(2):
        np.testing.assert_allclose(grad(grad(f))(np.float32(0.7)), expected, rtol=1e-5)


def test_derived_programs_record_the_name_stack_in_force():
    inner = program(lambda x: sum_all(sin(x)), X)
    f = caller(inner)
    plain = call_jaxprs(make_jaxpr(grad(f))(X))
    with source_info.transform_name("outer"):
        outer = call_jaxprs(make_jaxpr(grad(f))(X))
    assert plain[0] is not outer[0]
    assert all("outer" in e.source_info.name_stack for e in outer[0].jaxpr.eqns)
    assert not any("outer" in e.source_info.name_stack for e in plain[0].jaxpr.eqns)


def test_cache_entries_die_with_the_program():
    inner = program(lambda x: sum_all(mul(sin(x), x)), X)
    np.testing.assert_allclose(grad(caller(inner))(X), np.cos(X) * X + np.sin(X), rtol=1e-6)
    tables = jvp_module._jvp_jaxprs.tables
    assert inner in tables
    entries = len(tables)
    ref = weakref.ref(inner)
    del inner
    gc.collect()
    assert ref() is None
    assert len(tables) <= entries - 1


def test_grad_of_a_call_with_an_unused_result_transposes_it_once():
    # The staged call's program is pruned of the result grad does not use; the
    # pruned program must keep its identity, or its transpose is derived anew.
    inner = program(lambda x: (sum_all(sin(x)), sum_all(cos(x))), X)

    def f(x):
        return call_p.bind(x, jaxpr=inner, name="inner")[0]

    np.testing.assert_allclose(grad(f)(X), np.cos(X), rtol=1e-6)
    before = misses()
    np.testing.assert_allclose(grad(f)(X), np.cos(X), rtol=1e-6)
    assert misses() == before
