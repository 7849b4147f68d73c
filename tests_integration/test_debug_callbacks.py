"""Host callbacks as a user sees them: debug.print's stdout, callbacks' values, their errors.

The expected text is what JAX 0.10.2 prints for the same programs (checked by
running them with ``/work/jaxref/bin/python``; JAX prints top-level arrays with
``str`` and leaves inside a container with ``repr``).
"""

from __future__ import annotations

import io
import logging

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.experimental import io_callback
from modjax.tracecore import parse_jaxpr

X = np.arange(3, dtype=np.float32)


def printed(capsys) -> list[str]:
    jax.effects_barrier()
    return capsys.readouterr().out.splitlines()


# --- debug.print ------------------------------------------------------------------------------


def _print_formats(x):
    jax.debug.print("{} {x} {y:.2f} {z}", x, x=x[0], y=x[1] * 1.5, z={"a": x[:2]})


def test_print_formats_like_jax_eagerly_and_under_jit(capsys):
    _print_formats(jnp.asarray(X))
    assert printed(capsys) == ["[0. 1. 2.] 0.0 1.50 {'a': Array([0., 1.], dtype=float32)}"]
    f = jax.jit(_print_formats)
    f(X)
    f(X + 1)  # the same executable prints the new values
    assert printed(capsys) == [
        "[0. 1. 2.] 0.0 1.50 {'a': Array([0., 1.], dtype=float32)}",
        "[1. 2. 3.] 1.0 3.00 {'a': Array([1., 2.], dtype=float32)}",
    ]


def test_print_scalars_without_placeholders_and_constants(capsys):
    jax.debug.print("no args")
    jax.debug.print("int {} bool {}", jnp.int32(3), jnp.bool_(True))
    jax.debug.print("appended", jnp.float32(2.5), skip_format_check=True)
    jax.jit(lambda: jax.debug.print("const {}", 5))()
    assert printed(capsys) == ["no args", "int 3 bool True", "appended 2.5", "const 5"]


def test_print_respects_numpy_printoptions_at_the_call(capsys):
    with np.printoptions(precision=2):
        jax.jit(lambda x: jax.debug.print("{}", x / 3))(X)
    assert printed(capsys) == ["[0.   0.33 0.67]"]


def test_print_rejects_unused_arguments():
    with pytest.raises(ValueError, match="Unused positional arguments"):
        jax.debug.print("{}", 1, 2)
    with pytest.raises(ValueError, match="f-string"):
        jax.debug.print("hello", x=1)


def test_print_under_vmap_prints_each_element(capsys):
    jax.vmap(lambda x: jax.debug.print("v {}", x))(jnp.asarray(X))
    jax.jit(jax.vmap(lambda x: jax.debug.print("jv {}", x)))(X)
    assert printed(capsys) == ["v 0.0", "v 1.0", "v 2.0", "jv 0.0", "jv 1.0", "jv 2.0"]


def _square_and_print(x):
    jax.debug.print("g {}", x)
    return x * x


def test_print_under_grad_prints_primal_values(capsys):
    assert float(jax.grad(_square_and_print)(2.0)) == 4.0
    assert float(jax.jit(jax.grad(_square_and_print))(3.0)) == 6.0
    assert printed(capsys) == ["g 2.0", "g 3.0"]


def _scan_body(c, x):
    jax.debug.print("scan {} {}", c, x, ordered=True)
    return c + x, c


def _while_body(c):
    jax.debug.print("while {}", c, ordered=True)
    return c + 1


def _branch(name, ordered):
    def branch(x):
        jax.debug.print(name + " {}", x, ordered=ordered)
        return x

    return branch


def test_vmap_of_a_cond_that_prints_runs_both_branches(capsys):
    # JAX 0.10.2's output: a batched predicate runs every branch, prints included;
    # io_callback's effect is refused, as in JAX.
    def f(p, x):
        def on_true(x):
            jax.debug.print("t {}", x)
            return x + 1

        def on_false(x):
            jax.debug.print("f {}", x)
            return x - 1

        return lax.cond(p, on_true, on_false, x)

    preds, xs = jnp.array([True, False]), jnp.array([1.0, 2.0])
    assert jax.vmap(f)(preds, xs).tolist() == [2.0, 1.0]
    assert printed(capsys) == ["f 1.0", "f 2.0", "t 1.0", "t 2.0"]
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(NotImplementedError, match="IO effect not supported in vmap-of-cond"):
        jax.vmap(
            lambda p, x: lax.cond(p, lambda x: io_callback(lambda y: y, spec, x), lambda x: x, x)
        )(preds, xs)


def test_linearize_of_a_loop_that_prints(capsys):
    # As JAX 0.10.2: the known loop prints while linearizing, the staged loop (the
    # whole loop again) when the linear function runs.
    def loop(x):
        def body(c):
            jax.debug.print("step {}", c[0])
            return c[0] + 1, jnp.sin(c[1])

        return lax.while_loop(lambda c: c[0] < 2, body, (0, x))

    for f in (loop, jax.jit(loop)):
        (steps, y), lin = jax.linearize(f, 1.0)
        assert int(steps) == 2 and printed(capsys) == ["step 0", "step 1"]
        np.testing.assert_allclose(y, np.sin(np.sin(1.0)), rtol=1e-6)
        np.testing.assert_allclose(lin(1.0)[1], np.cos(np.sin(1.0)) * np.cos(1.0), rtol=1e-6)
        assert printed(capsys) == ["step 0", "step 1"]


def test_print_in_scan_while_and_cond_in_order(capsys):
    carry, ys = jax.jit(lambda xs: lax.scan(_scan_body, 0.0, xs))(X)
    assert float(carry) == 3.0 and ys.tolist() == [0.0, 0.0, 1.0]
    assert int(jax.jit(lambda c: lax.while_loop(lambda c: c < 3, _while_body, c))(0)) == 3
    cond = jax.jit(lambda p, x: lax.cond(p, _branch("t", True), _branch("f", False), x))
    cond(True, 1.0)
    cond(False, 2.0)
    lax.cond(False, _branch("eager-t", True), _branch("eager-f", False), 3.0)
    assert printed(capsys) == [
        "scan 0.0 0.0",
        "scan 0.0 1.0",
        "scan 1.0 2.0",
        "while 0",
        "while 1",
        "while 2",
        "t 1.0",
        "f 2.0",
        "eager-f 3.0",
    ]


def test_ordered_prints_keep_order_across_calls(capsys):
    f = jax.jit(lambda i: jax.debug.print("call {}", i, ordered=True))
    for i in range(5):
        f(i)
    assert printed(capsys) == [f"call {i}" for i in range(5)]
    jaxpr = jax.make_jaxpr(lambda x: jax.debug.print("{}", x, ordered=True))(1.0)
    assert "debug_callback{OrderedDebug}" in str(jaxpr)
    lowered = jax.jit(lambda x: jax.debug.print("{}", x, ordered=True)).lower(1.0).as_text()
    assert "!stablehlo.token" in lowered and "xla_ffi_python_cpu_callback" in lowered


def test_unused_debug_prints_are_not_removed(capsys):
    @jax.jit
    def f(x):
        jax.debug.print("kept {}", x)
        return x + 1

    assert float(f(1.0)) == 2.0
    assert printed(capsys) == ["kept 1.0"]


def test_debug_callback_text_reads_back_its_effect():
    # The callback itself cannot travel in text (it reads back as its name), but
    # the effect does, and the equation type-checks (the effect was a string).
    def f(x):
        jax.debug.callback(print, x, ordered=True)
        return x

    closed = jax.make_jaxpr(f)(np.zeros(3, np.float32))
    back = parse_jaxpr(str(closed))
    (eqn,) = back.eqns
    assert eqn.params["effect"] is closed.eqns[0].params["effect"]
    assert eqn.effects == closed.eqns[0].effects and "OrderedDebug" in str(back)


def test_debug_log_goes_to_the_logger_with_the_callers_line(caplog):
    with caplog.at_level(logging.INFO, logger="modjax.debug"):
        jax.jit(lambda x: jax.debug.log("logged {}", x))(2.0)
        jax.effects_barrier()
    (record,) = [r for r in caplog.records if r.name == "modjax.debug"]
    assert record.getMessage() == "logged 2.0"
    assert record.pathname == __file__ and record.levelno == logging.INFO


# --- debug.callback ------------------------------------------------------------------------------


def test_debug_callback_receives_arrays_and_pytrees():
    seen = []

    def record(a, tree):
        seen.append((type(a), np.asarray(a).tolist(), sorted(tree), np.asarray(tree["b"]).tolist()))

    def f(x):
        jax.debug.callback(record, x, {"b": x * 2, "c": x})
        return x

    f(jnp.asarray(X))
    jax.jit(f)(X)
    jax.effects_barrier()
    assert len(seen) == 2
    for kind, a, keys, b in seen:
        assert kind is jax.Array or issubclass(kind, jax.Array)
        assert a == [0.0, 1.0, 2.0] and keys == ["b", "c"] and b == [0.0, 2.0, 4.0]


# --- pure_callback ------------------------------------------------------------------------------


def _host_sin(x):
    return np.sin(np.asarray(x))


def test_pure_callback_eagerly_and_under_jit():
    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    eager = jax.pure_callback(_host_sin, spec, jnp.asarray(X))
    compiled = jax.jit(lambda x: jax.pure_callback(_host_sin, spec, x))(X)
    np.testing.assert_allclose(eager, np.sin(X), rtol=1e-6)
    np.testing.assert_allclose(compiled, np.sin(X), rtol=1e-6)


def test_pure_callback_checks_the_declared_results():
    spec = jax.ShapeDtypeStruct((2,), jnp.float32)
    with pytest.raises(RuntimeError, match="Incorrect output shape for return value #0"):
        jax.pure_callback(_host_sin, spec, jnp.asarray(X))
    wrong_dtype = jax.ShapeDtypeStruct((3,), jnp.int32)
    with pytest.raises(RuntimeError, match="Incorrect output dtype"):
        jax.pure_callback(_host_sin, wrong_dtype, jnp.asarray(X))


def test_a_failing_callback_raises_jaxlibs_runtime_error_eagerly_and_under_jit():
    # As JAX, where an eager call runs a compiled program too; debug.callback is the
    # exception, its error propagates as raised.
    def fails(x):
        raise ValueError("host failure")

    spec = jax.ShapeDtypeStruct((3,), jnp.float32)
    calls = [
        lambda x: jax.pure_callback(fails, spec, x),
        jax.jit(lambda x: jax.pure_callback(fails, spec, x)),
        lambda x: io_callback(fails, spec, x),
    ]
    for call in calls:
        with pytest.raises(jax.errors.JaxRuntimeError, match="(?s)CpuCallback error.*host failure"):
            call(jnp.asarray(X))
    with pytest.raises(ValueError, match="host failure"):
        jax.debug.callback(fails, jnp.asarray(X))


@pytest.mark.parametrize(
    ("method", "shape"),
    [
        ("sequential", ()),
        ("expand_dims", (3,)),
        ("broadcast_all", (3,)),
        ("legacy_vectorized", (3,)),
    ],
)
def test_pure_callback_vmap_methods(method, shape):
    shapes = []

    def host(a, b):
        shapes.append(np.shape(a))
        return np.asarray(a) * 2 + np.asarray(b)

    spec = jax.ShapeDtypeStruct((), jnp.float32)
    f = jax.vmap(
        lambda x, y: jax.pure_callback(host, spec, x, y, vmap_method=method), in_axes=(0, None)
    )
    np.testing.assert_allclose(f(jnp.asarray(X), 1.0), X * 2 + 1)
    assert shapes and all(s == shape for s in shapes)


def test_pure_callback_vmap_without_a_method_raises_jaxs_error():
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda x: jax.pure_callback(_host_sin, spec, x))(jnp.asarray(X))


def test_pure_callback_is_not_differentiable_unless_in_custom_jvp():
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(ValueError, match="Pure callbacks do not support JVP"):
        jax.grad(lambda x: jax.pure_callback(_host_sin, spec, x))(1.0)

    @jax.custom_jvp
    def host_sin(x):
        return jax.pure_callback(_host_sin, spec, x)

    @host_sin.defjvp
    def _(primals, tangents):
        (x,), (t,) = primals, tangents
        return host_sin(x), jnp.cos(x) * t

    np.testing.assert_allclose(jax.grad(host_sin)(0.5), np.cos(0.5), rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(host_sin))(0.5), np.cos(0.5), rtol=1e-6)


# --- io_callback -------------------------------------------------------------------------------


def test_io_callback_runs_once_per_call_in_order():
    log = []

    def append(x):
        log.append(float(x))
        return np.asarray(len(log), np.int32)

    spec = jax.ShapeDtypeStruct((), jnp.int32)

    def body(c, x):
        n = io_callback(append, spec, x, ordered=True)
        return c + n, n

    total, ns = jax.jit(lambda xs: lax.scan(body, 0, xs))(X)
    assert log == [0.0, 1.0, 2.0] and ns.tolist() == [1, 2, 3] and int(total) == 6
    assert int(io_callback(append, spec, 5.0)) == 4


def test_io_callback_errors_under_vmap_and_grad():
    spec = jax.ShapeDtypeStruct((), jnp.float32)
    with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
        jax.vmap(lambda x: io_callback(_host_sin, spec, x, ordered=True))(jnp.asarray(X))
    got = jax.vmap(lambda x: io_callback(_host_sin, spec, x))(jnp.asarray(X))
    np.testing.assert_allclose(got, np.sin(X), rtol=1e-6)
    with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
        jax.grad(lambda x: io_callback(_host_sin, spec, x))(1.0)


# --- debug.breakpoint ----------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_breakpoint_is_skipped_without_a_terminal(capsys):
    @jax.jit
    def f(x):
        y = x * 2
        jax.debug.breakpoint()
        return y

    assert float(f(1.0)) == 2.0
    assert printed(capsys) == []


def test_breakpoint_opens_pdb_over_the_frames_values(monkeypatch, capsys):
    monkeypatch.setattr("sys.stdin", _Terminal("p y\nc\n"))

    @jax.jit
    def f(x):
        y = x * 2
        jax.debug.breakpoint()
        return y

    assert float(f(1.5)) == 3.0
    out = "\n".join(printed(capsys))
    assert "Entering modjax.debug.breakpoint at" in out and "Array(3., dtype=float32)" in out
