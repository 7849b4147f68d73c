"""Programs run through ``checkify``, whose reports modjax gives as JAX 0.10.2 does.

Each case is a function of the ``jax`` module returning a JSON-able answer: the
messages of the Errors (``err.get()``), outputs as lists, or the class name and
message of the exception raised. ``data/checkify_jax.json`` holds JAX 0.10.2's
answers, recorded by running this file with a Python that has JAX::

    /work/jaxref/bin/python tests_integration/checkify_cases.py \
        tests_integration/data/checkify_jax.json

``test_checkify.py`` runs the same cases on modjax and compares. This file imports
neither library by name: the caller passes the module in.
"""

from __future__ import annotations

import importlib

import numpy as np
from recorded_answers import raised, write_record

F32 = np.float32


def _checkify(jax):
    return importlib.import_module(jax.__name__ + ".experimental.checkify")


def _listed(tree, jax):
    return [np.asarray(x).tolist() for x in jax.tree_util.tree_leaves(tree)]


def _user_check(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x, y):
        ck.check(x > 0, "x must be positive, got {} (y={y})", x, y=y)
        return x * y

    checked = ck.checkify(f)
    answers = []
    for a, b in ((2.0, 3.0), (-1.5, 2.0)):
        err, out = checked(jnp.float32(a), jnp.float32(b))
        answers.append([err.get(), _listed(out, jax)])
    return answers


def _automatic_checks(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x, i):
        y = jnp.log(x - 2)
        return y + jnp.arange(3.0)[i] + (i // (i - 1))

    checked = ck.checkify(f, errors=ck.all_checks)
    cases = ((1.0, 0), (3.0, 5), (2.5, 1), (3.0, -4), (2.5, 0))
    return [checked(jnp.float32(x), jnp.int32(i))[0].get() for x, i in cases]


def _categories_select_checks(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x, i):
        ck.check(x < 10, "big {}", x)
        return jnp.sqrt(x) + jnp.arange(3.0)[i] + 1 // i

    out = []
    for errors in (ck.user_checks, ck.nan_checks, ck.index_checks, ck.div_checks,
                   ck.float_checks, ck.automatic_checks):  # fmt: skip
        out.append(ck.checkify(f, errors=errors)(jnp.float32(-20.0), jnp.int32(0))[0].get())
    return out


def _float_division_by_zero(jax):
    ck, jnp = _checkify(jax), jax.numpy
    return ck.checkify(lambda x, y: x / y, errors=ck.div_checks)(
        jnp.float32(1.0), jnp.float32(0.0)
    )[0].get()


def _indexing_primitives(jax):
    ck, jnp, lax = _checkify(jax), jax.numpy, jax.lax
    x = jnp.arange(12.0).reshape(3, 4)
    fns = [
        lambda i: x[i],
        lambda i: x[jnp.array([0, i])],
        lambda i: x[1, jnp.array([i, 2])],
        lambda i: x.at[i].set(1.0),
        lambda i: x.at[jnp.array([i])].add(1.0),
        lambda i: lax.dynamic_slice(x, (i, 0), (2, 2)),
        lambda i: lax.dynamic_update_slice(x, jnp.ones((2, 2)), (0, i)),
    ]
    return [
        [ck.checkify(fn, errors=ck.index_checks)(jnp.int32(i))[0].get() for i in (1, 3, 7)]
        for fn in fns
    ]


def _first_failure_wins(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x):
        y = jnp.sqrt(x)
        ck.check(x > 0, "first check {}", x)
        z = jnp.arange(2.0)[jax.lax.convert_element_type(x, jnp.int32) + 5]
        ck.check(x > 1, "second check")
        return y + z

    return [ck.checkify(f, errors=ck.all_checks)(jnp.float32(v))[0].get() for v in (-1.0, 0.5, 2.0)]


def _control_flow(jax):
    ck, jnp, lax = _checkify(jax), jax.numpy, jax.lax

    def scan_fn(xs):
        def step(c, x):
            ck.check(x < 3, "element {} too big", x)
            return c + jnp.log(x), c

        return lax.scan(step, jnp.float32(0.0), xs)

    def while_fn(x):
        def cond(c):
            ck.check(c[0] < 100, "runaway {}", c[0])
            return c[1] < 5

        def body(c):
            ck.check(c[0] > -50, "too small {}", c[0])
            return c[0] * 3, c[1] + 1

        return lax.while_loop(cond, body, (x, 0))

    def cond_fn(x):
        def neg(v):
            ck.check(v > -5, "neg branch {}", v)
            return -jnp.sqrt(v)

        return lax.cond(x > 0, lambda v: jnp.log(v), neg, x)

    def fori_fn(x):
        def body(i, c):
            ck.check(i < 3, "iteration {}", i)
            return c + i

        return lax.fori_loop(0, 5, body, x)

    errors = ck.all_checks
    return [
        [ck.checkify(scan_fn, errors=errors)(jnp.array(v, F32))[0].get()
         for v in ([1.0, 2.0], [1.0, 4.0, 5.0], [0.0, 1.0])],
        [ck.checkify(while_fn, errors=errors)(jnp.float32(v))[0].get() for v in (1.0, 2.0, -30.0)],
        [ck.checkify(cond_fn, errors=errors)(jnp.float32(v))[0].get() for v in (2.0, -1.0, -9.0)],
        [ck.checkify(fori_fn, errors=errors)(jnp.float32(v))[0].get() for v in (1.0,)],
        _listed(ck.checkify(scan_fn, errors=errors)(jnp.array([1.0, 2.0], F32))[1], jax),
    ]  # fmt: skip


def _nested_calls(jax):
    ck, jnp = _checkify(jax), jax.numpy

    @jax.jit
    def inner(x):
        ck.check(x != 1, "inner jit {}", x)
        return jnp.log(x)

    @jax.custom_jvp
    def safe(x):
        ck.check(x != 2, "custom_jvp {}", x)
        return jnp.sqrt(x)

    safe.defjvp(lambda p, t: (safe(p[0]), t[0] * 7.0))

    @jax.custom_vjp
    def clipped(x):
        ck.check(x != 3, "custom_vjp {}", x)
        return jnp.log(x)

    clipped.defvjp(lambda x: (clipped(x), x), lambda r, g: (g * 5.0,))

    def f(x):
        return inner(x) + jax.checkpoint(lambda v: jnp.sin(v) * safe(v))(x) + clipped(x)

    checked = ck.checkify(f, errors=ck.all_checks)
    msgs = [checked(jnp.float32(v))[0].get() for v in (1.0, 2.0, 3.0, 4.0, -1.0)]
    grads = jax.grad(lambda x: checked(x)[1])(jnp.float32(4.0))
    return [msgs, float(grads)]


def _transformations(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x):
        ck.check(x > 0, "needs positive {}", x)
        return jnp.log(x) * 2

    checked = ck.checkify(f, errors=ck.float_checks | ck.user_checks)
    xs = jnp.array([1.0, -1.0, 2.0, 0.0], F32)
    jitted = jax.jit(checked)
    vm_err, vm_out = jax.vmap(checked)(xs)
    inner_vmap = ck.checkify(jax.vmap(f))(xs)[0].get()
    grad_inside = ck.checkify(jax.grad(f))(jnp.float32(-2.0))[0].get()
    return [
        jitted(jnp.float32(-3.0))[0].get(),
        _listed(jitted(jnp.float32(3.0))[1], jax),
        vm_err.get(),
        _listed(vm_out, jax)[0][:1] + _listed(vm_out, jax)[0][2:3],
        inner_vmap,
        grad_inside,
        ck.checkify(jax.jit(jax.vmap(f)))(jnp.ones(3, F32))[0].get(),
        jax.jit(jax.vmap(checked))(xs)[0].get(),
    ]


def _check_error_and_debug_check(jax):
    ck, jnp = _checkify(jax), jax.numpy

    def f(x):
        ck.check(x > 0, "must be positive!")
        return x

    def with_inner_jit(x):
        error, out = jax.jit(ck.checkify(f))(x)
        ck.check_error(error)
        return out

    def debug(x):
        ck.debug_check(x != 0, "cannot be zero! {}", x)
        return x + 1

    return [
        raised(lambda: with_inner_jit(jnp.float32(-1.0))),
        ck.checkify(with_inner_jit)(jnp.float32(-1.0))[0].get(),
        ck.checkify(with_inner_jit)(jnp.float32(1.0))[0].get(),
        _listed(debug(jnp.float32(0.0)), jax),
        _listed(jax.jit(debug)(jnp.float32(0.0)), jax),
        ck.checkify(debug)(jnp.float32(0.0))[0].get(),
        jax.jit(ck.checkify(debug))(jnp.float32(0.0))[0].get(),
    ]


def _errors_and_api(jax):
    ck, jnp = _checkify(jax), jax.numpy
    err, _ = ck.checkify(lambda x: ck.check(x > 0, "bad {}", x))(jnp.float32(-1.0))
    ok, _ = ck.checkify(lambda x: ck.check(x > 0, "bad {}", x))(jnp.float32(1.0))
    return [
        raised(lambda: ck.check(False, "eager failure")),
        raised(lambda: ck.check(jnp.array(False), "eager {} {k}", jnp.float32(2), k=jnp.int32(3))),
        raised(lambda: ck.check(True, "fine")),
        raised(lambda: jax.jit(lambda x: ck.check(x > 0, "staged"))(jnp.float32(1.0))),
        raised(lambda: ck.check(jnp.array([True, False]), "vector pred")),
        raised(lambda: ck.check(jnp.float32(1), "float pred")),
        raised(lambda: ck.check(np.bool_(True), "numpy pred")),
        raised(lambda: ck.check(True, "numpy args {}", np.float32(1))),
        raised(lambda: ck.check(True, "py args {}", 3)),
        raised(lambda: ck.check_error("not an error")),
        raised(err.throw),
        raised(ok.throw),
        [str(err), str(ok), str(ck.init_error), ck.init_error.get()],
        type(err.get_exception()).__name__,
        ok.get_exception() is None,
        sorted(c.__name__ for c in ck.all_checks),
    ]  # fmt: skip


CASES = {
    "user_check": _user_check,
    "automatic_checks": _automatic_checks,
    "categories_select_checks": _categories_select_checks,
    "float_division_by_zero": _float_division_by_zero,
    "indexing_primitives": _indexing_primitives,
    "first_failure_wins": _first_failure_wins,
    "control_flow": _control_flow,
    "nested_calls": _nested_calls,
    "transformations": _transformations,
    "check_error_and_debug_check": _check_error_and_debug_check,
    "errors_and_api": _errors_and_api,
}


def record(jax) -> dict:
    """Every case's answer (what the data file holds)."""
    return {name: case(jax) for name, case in CASES.items()}


if __name__ == "__main__":
    write_record(record)
