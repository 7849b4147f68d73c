import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples
from runtime_test_prims import add, mul, scale, sin, sumdiff_p

from modjax import runtime as R
from modjax.runtime import cpp_dispatch
from modjax.runtime.jit import jit_p
from modjax.tracecore import dtypes, tree_util
from modjax.tracecore.dce import dce_jaxpr
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.tracing import make_jaxpr

pytestmark = pytest.mark.usefixtures("runtime_operators")


@pytest.fixture(autouse=True, params=["cpp", "python"])
def dispatch_mode(request):
    """Run every test with jaxlib's C++ fast path and with the pure-Python one."""
    with cpp_dispatch.cpp_dispatch(request.param == "cpp"):
        yield request.param


def put(value, dtype=np.float32):
    return R.device_put(np.asarray(value, dtype))


def counts(f):
    return dict(f._stats)


# --- correctness -------------------------------------------------------------------------

SHAPES = [(), (3,), (2, 3)]  # few shapes: the compiled programs are shared across examples

# A program is a list of steps over a growing list of values (the arguments first).
STEP = st.tuples(
    st.sampled_from(["add", "mul", "sin", "scale", "sumdiff", "const"]),
    st.integers(0, 100),
    st.integers(0, 100),
)


def run_program(program, args):
    values = list(args)
    for op, i, j in program:
        x, y = values[i % len(values)], values[j % len(values)]
        if op == "add":
            values.append(add(x, y))
        elif op == "mul":
            values.append(mul(x, y))
        elif op == "sin":
            values.append(sin(x))
        elif op == "scale":
            values.append(scale(x, 0.5))
        elif op == "sumdiff":
            values.extend(sumdiff_p.bind(x, y))
        else:
            values.append(add(x, 1.5))
    return values[len(args) :] or values


@settings(max_examples=examples(25), deadline=None)
@given(
    program=st.lists(STEP, min_size=1, max_size=4),
    shape=st.sampled_from(SHAPES),
    seed=st.integers(0, 2**16),
)
def test_jit_equals_eager(program, shape, seed):
    rng = np.random.default_rng(seed)
    args = [put(rng.normal(size=shape)), put(rng.normal(size=shape))]
    eager = run_program(program, args)
    jitted = R.jit(lambda a, b: run_program(program, [a, b]))(*args)
    assert len(eager) == len(jitted)
    for e, j in zip(eager, jitted, strict=True):
        assert isinstance(j, R.Array) and j.aval == e.aval
        np.testing.assert_allclose(np.asarray(j), np.asarray(e), rtol=2e-6, atol=1e-6)


def test_arguments_of_every_kind():
    f = R.jit(lambda x, y, z: add(mul(x, y), z))
    x = put([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(f(x, 2.0, np.ones(3, np.float32))), [3, 5, 7])
    np.testing.assert_allclose(np.asarray(f(x, x, x)), [2, 6, 12])
    np.testing.assert_allclose(np.asarray(f(1.0, 2, np.float32(3))), 5)
    r = R.jit(lambda x: mul(x, 2.0))(3.0)
    assert r.weak_type and r.dtype == np.float32 and r.tolist() == 6.0


def test_pytrees_and_kwargs():
    @R.jit
    def f(params, x, *, shift):
        return {"out": add(mul(params["w"], x), params["b"]), "shift": add(x, shift), "n": None}

    params = {"w": put([2.0, 2.0]), "b": put([1.0, -1.0])}
    x = put([1.0, 2.0])
    for _ in range(3):
        out = f(params, x, shift=10.0)
        assert out["out"].tolist() == [3.0, 3.0] and out["shift"].tolist() == [11.0, 12.0]
        assert out["n"] is None
    assert counts(f) == {"traces": 1, "compiles": 1}
    out = f(params, x=x, shift=1.0)
    assert out["shift"].tolist() == [2.0, 3.0]


def test_outputs_of_every_kind():
    x = put([1.0, 2.0])
    assert R.jit(lambda x: ())(x) == ()
    assert R.jit(lambda x: None)(x) is None
    a, (b, c) = R.jit(lambda x: (x, (sin(x), 2.0)))(x)
    assert a.tolist() == [1.0, 2.0] and repr(c) == "Array(2., dtype=float32, weak_type=True)"
    assert R.jit(lambda: 1)().tolist() == 1


def test_float0_arguments_and_results_are_host_zeros():
    # float0 (the tangent type of integers) has no data: as in JAX, a program takes it
    # as booleans and gives it back as numpy zeros, and device_put leaves it on the host.
    z = np.zeros((2,), dtypes.float0)
    placed = R.device_put(z)
    assert type(placed) is np.ndarray and placed.dtype == dtypes.float0
    f = R.jit(lambda x, t: (add(x, 1.0), t))
    for _ in range(3):  # past the first call, where the fast paths would learn it
        y, t = f(put([1.0, 2.0]), z)
        assert y.tolist() == [2.0, 3.0]
        assert type(t) is np.ndarray and t.dtype == dtypes.float0 and t.shape == (2,)
    assert counts(f) == {"traces": 1, "compiles": 1}


def test_jit_of_closure_method_and_partial():
    w = put([10.0, 20.0])
    x = put([1.0, 2.0])
    assert R.jit(lambda x: mul(x, w))(x).tolist() == [10.0, 40.0]

    class Model:
        def __init__(self, k):
            self.k = k

        def apply(self, x):
            return scale(x, self.k)

        @functools.partial(R.jit, static_argnums=0)
        def static_apply(self, x):
            return scale(x, self.k)

    m = Model(3.0)
    assert R.jit(m.apply)(x).tolist() == [3.0, 6.0]
    assert m.static_apply(x).tolist() == [3.0, 6.0]
    assert Model(4.0).static_apply(x).tolist() == [4.0, 8.0]
    assert R.jit(functools.partial(mul, x))(x).tolist() == [1.0, 4.0]


def test_small_closed_over_arrays_are_embedded_and_large_ones_passed_in():
    # As JAX embeds closed-over values in the program: a small one costs no argument per
    # call. One above EMBEDDED_CONST_MAX_BYTES (or past the total) stays an argument.
    from modjax.runtime import executable

    small = put(np.full(3, 2.0))
    f = R.jit(lambda x: mul(x, small))
    text = f.lower(put(np.ones(3))).as_text()
    assert "%arg1" not in text and "dense<2.0" in text
    n_large = executable.EMBEDDED_CONST_MAX_BYTES // 4 + 1
    large = put(np.full(n_large, 3.0, np.float32))
    g = R.jit(lambda x: mul(x, large))
    text = g.lower(put(np.ones(n_large, np.float32))).as_text()
    assert "%arg1" in text and "dense<3.0" not in text
    for i in range(3):  # the fast path, with and without the argument
        assert f(put(np.full(3, float(i)))).tolist() == [2.0 * i] * 3
        out = g(put(np.full(n_large, float(i), np.float32)))
        np.testing.assert_array_equal(np.asarray(out), np.full(n_large, 3.0 * i, np.float32))
    many = [put(np.full(4, float(k), np.float32)) for k in range(3)]
    h = R.jit(lambda x: mul(mul(x, many[0]), mul(many[1], many[2])))
    assert h(put(np.ones(4, np.float32))).tolist() == [0.0] * 4


def test_wrapper_metadata():
    def my_function(x):
        """My docs."""
        return x

    f = R.jit(my_function)
    assert f.__name__ == "my_function" and f.__doc__ == "My docs." and f.__wrapped__ is my_function
    with pytest.raises(TypeError, match="Expected a callable value, got 3"):
        R.jit(3)

    def generator(x):
        yield x

    with pytest.raises(TypeError, match="Expected a function, got a generator function"):
        R.jit(generator)
    with pytest.raises(TypeError, match="staticmethod arguments are not supported"):
        R.jit(staticmethod(my_function))


# --- the cache ---------------------------------------------------------------------------


def test_cache_hits_and_misses_are_exact():
    f = R.jit(lambda x, y: add(x, y))
    a, b = put(np.ones(3)), put(np.zeros(3))
    f(a, b)
    assert counts(f) == {"traces": 1, "compiles": 1}
    f(b, a)  # new values, same types
    f(put(np.arange(3)), b)
    assert counts(f) == {"traces": 1, "compiles": 1}
    f(put(np.ones(4)), put(np.ones(4)))  # shape
    assert counts(f) == {"traces": 2, "compiles": 2}
    f(put(np.ones(3), np.int32), put(np.ones(3), np.int32))  # dtype
    assert counts(f) == {"traces": 3, "compiles": 3}
    f(put(np.ones(())), put(np.ones(())))
    f(put(np.ones(())), 2.0)  # weak type of the second argument
    assert counts(f) == {"traces": 5, "compiles": 5}
    f(put(np.ones(())), 7.0)  # another weak value: no new program
    f(np.ones((), np.float32), 1.0)  # a numpy 0-d array is like a strong Array
    assert counts(f) == {"traces": 5, "compiles": 5}
    assert f._cache_size() == 5
    f.clear_cache()
    f(a, b)
    assert counts(f) == {"traces": 6, "compiles": 6}


def test_python_fast_path_entries(dispatch_mode):
    if dispatch_mode == "cpp":
        pytest.skip("white-box test of the Python fast path")
    f = R.jit(lambda x: add(x, 1.0))
    g = R.jit(lambda x, y: add(x["a"], y))
    x = put(np.ones(3))
    f(x)
    assert len(f._jit.fast_positional) == 1
    f(put(np.zeros(3)))  # same aval and sharding objects: hits the same entry
    assert len(f._jit.fast_positional) == 1
    g({"a": x}, 2.0)
    g({"a": x}, 3.0)
    assert len(g._jit.fast_general) == 1
    assert counts(g) == {"traces": 1, "compiles": 1}
    assert g({"a": x}, 3.0).tolist() == [4.0, 4.0, 4.0]


def test_static_arguments():
    f = R.jit(
        lambda x, n, *, mode: scale(x, n if mode == "a" else -n),
        static_argnums=1,
        static_argnames="mode",
    )
    x = put([1.0, 2.0])
    assert f(x, 2.0, mode="a").tolist() == [2.0, 4.0]
    assert f(x, 2.0, mode="a").tolist() == [2.0, 4.0]
    assert counts(f) == {"traces": 1, "compiles": 1}
    assert f(x, 3.0, mode="a").tolist() == [3.0, 6.0]
    assert f(x, 3.0, mode="b").tolist() == [-3.0, -6.0]
    assert counts(f) == {"traces": 3, "compiles": 3}
    # Both given, as in JAX neither is completed: by keyword, ``n`` is traced.
    h = R.jit(lambda x, n, *, mode: mul(x, n), static_argnums=1, static_argnames="mode")
    assert h(x, n=3.0, mode="b").tolist() == [3.0, 6.0]
    assert h(x, n=4.0, mode="b").tolist() == [4.0, 8.0] and counts(h)["traces"] == 1
    g = R.jit(lambda x, n: scale(x, n), static_argnames="n")
    assert g(x, 2).tolist() == [2.0, 4.0] and g(x, n=2).tolist() == [2.0, 4.0]
    assert counts(g)["traces"] == 2  # positional and keyword spellings are distinct keys


def test_unhashable_static_argument_raises_value_error():
    # JAX's message (jaxlib's C++ jit raises it; modjax's Python paths too).
    f = R.jit(lambda x, shape: x, static_argnums=1)
    with pytest.raises(ValueError) as info:
        f(put(1.0), [1, 2])
    assert str(info.value) == (
        "Non-hashable static arguments are not supported. An error occurred while trying to "
        "hash an object of type <class 'list'>, [1, 2]. The error was:\n"
        "TypeError: unhashable type: 'list'\n"
    )
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        f.lower(put(1.0), [1, 2])
    g = R.jit(lambda x, *, opts: x, static_argnames="opts")
    with pytest.raises(ValueError, match="Non-hashable.*dict"):
        g(put(1.0), opts={})


def test_invalid_options():
    # JAX's messages, checked against the function's signature when jit is created.
    with pytest.raises(ValueError, match="static_argnames and donate_argnames cannot intersect"):
        R.jit(lambda x: x, static_argnums=0, donate_argnums=0)
    with pytest.raises(ValueError, match=r"`static_argnums` \[0\] and `donate_argnums`"):
        R.jit(lambda x, /: x, static_argnums=0, donate_argnums=0)
    with pytest.raises(TypeError, match="static_argnums"):
        R.jit(lambda x: x, static_argnums="x")
    only_two = r"has {}=\({},\), but only accepts 2 positional arguments"
    for kind, index in [("static_argnums", 2), ("static_argnums", -3), ("donate_argnums", 5)]:
        with pytest.raises(ValueError, match=only_two.format(kind, index)):
            R.jit(lambda x, y: x, **{kind: index})
    for kind in ["static_argnames", "donate_argnames"]:
        with pytest.raises(ValueError, match=f"invalid argnames {{'z'}} in {kind}. Function does"):
            R.jit(lambda x, y: x, **{kind: "z"})
    with pytest.raises(ValueError, match="invalid argnames {'x'} in static_argnames. These are"):
        R.jit(lambda x, /: x, static_argnames="x")
    # *args takes any position and **kwargs any name; -2 is the first of two.
    R.jit(lambda *a: a[0], static_argnums=3)
    R.jit(lambda x, **kw: x, static_argnames="z")
    R.jit(lambda x, y: x, donate_argnums=-2)


def test_jit_without_a_function_is_a_decorator():
    @R.jit(static_argnames="n")
    def f(x, n):
        return scale(x, n)

    assert f(put([1.0, 2.0]), n=3.0).tolist() == [3.0, 6.0]
    assert counts(f) == {"traces": 1, "compiles": 1}
    with pytest.raises(TypeError, match="positional-only"):
        R.jit(fun=lambda x: x)
    with pytest.raises(TypeError, match="Expected a callable value, got None"):
        R.jit(None)


def test_compiler_options_reach_xla_for_every_compilation():
    f = R.jit(lambda x: mul(x, 3.0), compiler_options={"xla_cpu_multi_thread_eigen": False})
    assert f(put(2.0)).tolist() == 6.0
    assert f.lower(put(2.0)).compile()(put(2.0)).tolist() == 6.0
    bad = R.jit(lambda x: mul(x, 3.0), compiler_options={"xla_cpu_multi_thread_eigen": "no"})
    with pytest.raises(Exception, match="'no' is not a valid bool value"):
        bad(put(2.0))
    # Options given to Lowered.compile go over jit's.
    with pytest.raises(Exception, match="No such compile option: 'no_such_flag'"):
        f.lower(put(2.0)).compile({"no_such_flag": 1})


def test_device_and_backend_pin_the_program_and_warn():
    device = R.devices()[0]
    for options in ({"device": device}, {"backend": "cpu"}):
        with pytest.warns(DeprecationWarning, match="backend and device argument on jit"):
            f = R.jit(lambda x, y: add(x, y), **options)
        out = f(np.float32(1.0), y=np.float32(2.0))
        assert out.tolist() == 3.0 and out.committed and out.devices() == {device}
    with pytest.warns(DeprecationWarning):
        with pytest.raises(ValueError, match="can't specify both a device and a backend"):
            R.jit(lambda x: x, device=device, backend="cpu")
        with pytest.raises(ValueError, match="then in_shardings should not be specified"):
            R.jit(lambda x: x, device=device, in_shardings=R.SingleDeviceSharding(device))
        with pytest.raises(ValueError, match="then out_shardings should not be specified"):
            R.jit(lambda x: x, backend="cpu", out_shardings=R.SingleDeviceSharding(device))
        with pytest.raises(RuntimeError, match="Unknown backend bogus"):
            R.jit(lambda x: x, backend="bogus")


# --- donation ----------------------------------------------------------------------------


def test_donation_deletes_inputs():
    f = R.jit(lambda x, y: add(x, y), donate_argnums=0)
    x, y = put(np.ones(3)), put(np.ones(3))
    out = f(x, y)
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert x.is_deleted() and not y.is_deleted()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        np.asarray(x)
    # The fast path reports it too: as JAX's C++ path does (a ValueError from the
    # executable, donated buffers not being marked deleted there), or as a deleted Array.
    with pytest.raises((RuntimeError, ValueError), match="has been deleted|deleted or donated"):
        f(x, y)
    x2 = put(np.ones(3))
    f(x2, y)
    assert x2.is_deleted()


def test_donation_by_name_of_pytrees_and_without_alias():
    f = R.jit(lambda state, x: {"w": add(state["w"], x)}, donate_argnames="state")
    state = {"w": put(np.ones(3))}
    x = put(np.ones(3))
    new = f(state, x)
    assert state["w"].is_deleted() and not x.is_deleted() and new["w"].tolist() == [2.0] * 3
    # As in JAX, a donated buffer no output can reuse is left alone, with a warning.
    g = R.jit(lambda x: add(x, put(np.ones(2))), donate_argnums=0)
    z = put(1.0)
    with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: float32\[\]"):
        g(z)
    assert not z.is_deleted()


def test_donating_one_buffer_twice_fails():
    f = R.jit(lambda x, y: (add(x, y), mul(x, y)), donate_argnums=(0, 1))
    x = put(np.ones(3))
    with pytest.raises(RuntimeError, match="donate|donated"):
        f(x, x)


def test_deleted_input_is_reported():
    f = R.jit(lambda x: add(x, 1.0))
    x = put(np.ones(2))
    x.delete()
    with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[2\]"):
        f(x)


# --- under other transformations ----------------------------------------------------------


def test_nested_jit_is_one_call_equation():
    inner = R.jit(lambda x: sin(x))
    outer = R.jit(lambda x: mul(inner(x), 2.0))
    x = put([0.5, 1.0])
    closed = make_jaxpr(outer)(x)
    (eqn,) = closed.eqns
    assert eqn.primitive is jit_p and eqn.params["name"] == "<lambda>"
    inner_eqns = eqn.params["jaxpr"].eqns
    assert [e.primitive.name for e in inner_eqns] == ["jit", "rt_mul"]
    assert [e.primitive.name for e in inner_eqns[0].params["jaxpr"].eqns] == ["rt_sin"]
    np.testing.assert_allclose(np.asarray(outer(x)), 2 * np.sin([0.5, 1.0]), rtol=1e-6)
    # The inner function was traced into the outer program, never compiled on its own.
    assert counts(inner) == {"traces": 1, "compiles": 0}
    assert "func.call" in outer.lower(x).as_text() or "call @" in outer.lower(x).as_text()


def test_make_jaxpr_of_jit_with_concrete_arguments_records_the_call():
    f = R.jit(lambda x: add(x, x))
    closed = make_jaxpr(lambda: f(put([1.0])))()
    assert [e.primitive for e in closed.eqns] == [jit_p]


def test_inline_jit_is_inlined():
    f = R.jit(lambda x: sin(x), inline=True)
    closed = make_jaxpr(lambda x: add(f(x), 1.0))(put([1.0]))
    assert [e.primitive.name for e in closed.eqns] == ["rt_sin", "rt_add"]


def test_jit_equation_evaluates_eagerly_and_prunes():
    f = R.jit(lambda x, y: (sin(x), add(x, y)), donate_argnums=1)
    x, y = put([0.0, 1.0]), put([2.0, 2.0])
    closed = make_jaxpr(f)(x, y)
    outs = eval_jaxpr(closed.jaxpr, closed.consts, x, y)  # runs jit_p's impl
    assert outs[1].tolist() == [2.0, 3.0] and y.is_deleted()
    # DCE of the call: only the first output used, so the second operand goes away.
    pruned, used = dce_jaxpr(closed.jaxpr, [True, False])
    (eqn,) = pruned.eqns
    assert used == [True, False] and len(eqn.invars) == 1
    assert eqn.params["donated_invars"] == (False,)
    assert [e.primitive.name for e in eqn.params["jaxpr"].eqns] == ["rt_sin"]


def test_closure_over_an_outer_tracer():
    def outer(x):
        return R.jit(lambda y: mul(x, y))(2.0)

    closed = make_jaxpr(outer)(put([1.0, 3.0]))
    (eqn,) = closed.eqns
    assert eqn.primitive is jit_p and len(eqn.invars) == 2  # the tracer, then the argument
    assert R.jit(outer)(put([1.0, 3.0])).tolist() == [2.0, 6.0]


def test_keep_unused():
    x, y = put([1.0]), put([2.0])
    pruned = R.jit(lambda x, y: sin(x))
    kept = R.jit(lambda x, y: sin(x), keep_unused=True)
    assert "%arg1" not in pruned.lower(x, y).as_text()
    assert "%arg1" in kept.lower(x, y).as_text()
    for _ in range(3):  # the fast path replays the pruning
        assert pruned(x, y).tolist() == kept(x, y).tolist()
        np.testing.assert_allclose(np.asarray(pruned(x, y)), np.sin([1.0]), rtol=1e-6)


@tree_util.register_pytree_node_class
class Pair:
    def __init__(self, a, b):
        self.a, self.b = a, b

    def tree_flatten(self):
        return (self.a, self.b), "pair"

    @classmethod
    def tree_unflatten(cls, aux, children):
        assert aux == "pair"
        return cls(*children)


def test_custom_pytree_nodes(dispatch_mode):
    f = R.jit(lambda p, q: Pair(add(p.a, q.b), mul(p.b, q.a)))
    p, q = Pair(put([1.0]), put([2.0])), Pair(put([3.0]), put([4.0]))
    for _ in range(3):  # the C++ path learns the node type on the first miss
        out = f(p, q)
        assert isinstance(out, Pair) and out.a.tolist() == [5.0] and out.b.tolist() == [6.0]
    assert counts(f) == {"traces": 1, "compiles": 1}
    if dispatch_mode == "cpp":
        assert cpp_dispatch.registry.flatten(p)[0] == [p.a, p.b]


def test_x64_mode_is_part_of_the_key():
    from modjax.tracecore.config import enable_x64

    f = R.jit(lambda x, y: add(x, y))
    ints = np.arange(3, dtype=np.int64)
    out = f(ints, 1)
    assert out.dtype == np.int32 and out.tolist() == [1, 2, 3]
    with enable_x64(True):
        out = f(ints, 1)
        assert out.dtype == np.int64 and out.tolist() == [1, 2, 3]
        assert R.device_put(2.0).dtype == np.float64
    assert f(ints, 1).dtype == np.int32
    assert R.device_put(2.0).dtype == np.float32


def test_switching_x64_back_compiles_nothing():
    from modjax.runtime import compile_cache
    from modjax.tracecore.config import enable_x64

    f = R.jit(lambda x: mul(add(x, x), x))
    x = np.linspace(0.0, 1.0, 7, dtype=np.float32)
    want = f(x).tolist()
    compiles = compile_cache.stats["compiles"]
    with enable_x64(True):
        assert f(x).dtype == np.float32  # a float32 input keeps its type under x64
    # Traces are dropped on each switch, but the executables are keyed by the module's
    # text: the program traced again after switching back is the one compiled before.
    assert f(x).tolist() == want
    assert compile_cache.stats["compiles"] == compiles


def test_static_argnums_and_argnames_both_given_are_not_completed():
    # As JAX 0.10.2: given both, a name does not add its position (flax's nn.jit wraps a
    # method whose keyword 'b' sits at the position of an unhashable argument).
    def method(self, a, b):
        return a

    @functools.wraps(method)
    def wrapper(fingerprint, groups, rngs, *args, **kwargs):
        return args[0]

    f = R.jit(wrapper, static_argnums=(0,), static_argnames=["b"])
    assert float(f((1,), ({},), ({},), np.float32(2.0), b="hi")) == 2.0
    g = R.jit(method, static_argnames=["b"])  # one given: completed from the signature
    assert float(g(None, np.float32(3.0), "passed by position, static")) == 3.0
