import numpy as np
import pytest
from runtime_test_prims import add, mul, sin

from modjax import runtime as R
from modjax.runtime._xla import JaxRuntimeError
from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.jaxpr import ClosedJaxpr
from modjax.tracecore.tree_util import tree_map, tree_structure

pytestmark = pytest.mark.usefixtures("runtime_operators")


@pytest.fixture(scope="module")
def f():
    return R.jit(lambda x, y: (add(x, y), sin(x)))


@pytest.fixture(scope="module")
def args():
    return R.device_put(np.ones(3, np.float32)), 2.0


def test_trace(f, args):
    traced = f.trace(*args)
    assert isinstance(traced.jaxpr, ClosedJaxpr)
    assert [e.primitive.name for e in traced.jaxpr.eqns] == ["rt_add", "rt_sin"]
    assert str(traced.jaxpr.jaxpr.invars[1].aval) == "~float32[]"
    assert traced.jaxpr.jaxpr.invars[1].aval.weak_type
    out = traced.out_info
    assert out[0] == ShapeDtypeStruct((3,), np.float32)
    assert isinstance(traced.lower(), R.Lowered)


def test_lower_and_compile(f, args):
    lowered = f.lower(*args)
    text = lowered.as_text()
    assert text.startswith("module @jit__lambda")
    assert "stablehlo.add" in text and "stablehlo.sine" in text
    assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<f32>)" in text
    assert 'loc("' in lowered.as_text(debug_info=True)
    assert lowered.compiler_ir() is not None
    compiled = lowered.compile()
    assert isinstance(compiled, R.Compiled)
    a, b = compiled(*args)
    assert a.tolist() == [3.0, 3.0, 3.0]
    np.testing.assert_allclose(np.asarray(b), np.sin(np.ones(3)), rtol=1e-6)
    assert "HloModule jit__lambda" in compiled.as_text()
    cost = compiled.cost_analysis()
    assert isinstance(cost, dict) and cost["flops"] > 0
    # compiling is shared with the jitted function's own cache
    f(*args)
    assert f._stats["compiles"] == 1


def test_compiled_rejects_other_types(f, args):
    compiled = f.lower(*args).compile()
    with pytest.raises(
        TypeError, match=r"(?s)Argument types differ.*'x' compiled with float32\[3\]"
    ):
        compiled(R.device_put(np.ones(4, np.float32)), 2.0)
    with pytest.raises(TypeError) as info:
        compiled(args[0], (2.0,))
    assert str(info.value) == (  # JAX 0.10.2's words
        "Function compiled with input pytree does not match the input pytree it was called "
        "with. There are 1 mismatches, including:\n    * at args[1], seen pytree leaf but now "
        "given <class 'tuple'>, so their Python types differ"
    )
    with pytest.raises(TypeError, match=r"the numbers of children do not match, with the "):
        compiled(args[0], 2.0, z=1.0)
    # As in JAX only shapes and dtypes must agree: a strong float32 scalar stands in
    # for the weak one the program was compiled with.
    a, _ = compiled(args[0], R.device_put(np.float32(2.0)))
    np.testing.assert_array_equal(a, np.full(3, 3.0, np.float32))


def test_lower_from_shape_dtype_structs(f):
    spec = ShapeDtypeStruct((3,), np.float32)
    lowered = f.lower(spec, ShapeDtypeStruct((), np.float32, weak_type=True))
    compiled = lowered.compile()
    a, _ = compiled(R.device_put(np.zeros(3, np.float32)), 5.0)
    assert a.tolist() == [5.0, 5.0, 5.0]


def test_eval_shape():
    g = R.jit(lambda x, y: {"s": mul(x, y), "t": sin(x)})
    out = g.eval_shape(ShapeDtypeStruct((2, 3), np.float32), 1.0)
    assert out == {
        "s": ShapeDtypeStruct((2, 3), np.float32),
        "t": ShapeDtypeStruct((2, 3), np.float32),
    }
    assert g._stats["compiles"] == 0
    assert R.eval_shape(lambda x: mul(x, 2.0), 1.0) == ShapeDtypeStruct(
        (), np.float32, weak_type=True
    )
    assert R.eval_shape(lambda x: sin(x), R.device_put(np.ones(4, np.float16))) == (
        ShapeDtypeStruct((4,), np.float16)
    )


@pytest.fixture(scope="module")
def donating():
    """A jitted function with a static, a pytree, a keyword, donations and an unused argument."""
    fn = R.jit(lambda pair, unused, s, z: mul(add(pair[0], z), s), static_argnums=2,
               donate_argnums=(0, 3))  # fmt: skip
    x3, x2 = R.device_put(np.ones(3, np.float32)), R.device_put(np.ones(2, np.float32))
    traced = fn.trace((x3, x2), R.device_put(np.ones(1, np.float32)), 2.0, z=x3)
    with pytest.warns(UserWarning, match="donated buffers were not usable: float32"):
        lowered = traced.lower()  # pair[1] has no output to reuse it, as JAX warns too
    return traced, lowered, lowered.compile()


def _aval_strs(tree):
    return tree_map(lambda a: a.str_short(), tree)


def test_stages_describe_arguments_as_jax(donating):
    # JAX 0.10.2's answers for the same function: args_info, in_tree and donate_argnums
    # cover the (positional, keyword) pair without the static argument.
    for stage in donating:
        info = stage.args_info
        assert tree_structure(info) == stage.in_tree
        assert str(stage.in_tree) == "PyTreeDef((((*, *), *), {'z': *}))"
        (pair, unused), kwargs = info
        assert [a.donated for a in (*pair, unused, kwargs["z"])] == [True, True, False, True]
        assert pair[1].shape == (2,) and pair[1].dtype == np.float32
        assert stage.donate_argnums == (0, 1, 3)
        assert _aval_strs(stage.in_avals) == (
            (("float32[3]", "float32[2]"), "float32[1]"),
            {"z": "float32[3]"},
        )
        assert str(stage.out_tree) == "PyTreeDef(*)"
    traced = donating[0]
    assert traced.fun_name == "<lambda>"
    assert traced.out_avals.str_short() == "float32[3]"


def test_traced_call_evaluates_the_jaxpr(donating):
    traced = donating[0]
    ones = R.device_put(np.ones(3, np.float32))
    out = traced((ones, R.device_put(np.ones(2, np.float32))), ones, z=ones)
    assert out.tolist() == [4.0, 4.0, 4.0]  # (1 + 1) * 2, with the static 2 bound
    with pytest.raises(TypeError, match="pytree"):
        traced(ones, ones, z=ones)


def test_compiled_takes_the_dynamic_arguments_only(donating):
    # As JAX's Compiled: the static argument was bound when lowering, so it is left
    # out and the positional arguments after it shift down.
    compiled = donating[2]

    def fresh(n):
        return R.device_put(np.ones(n, np.float32))

    out = compiled((fresh(3), fresh(2)), fresh(1), z=fresh(3))
    assert out.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(TypeError, match="(?s)input pytree does not match.*at args, seen tuple of "
                       "length 2 but now given tuple of length 3"):  # fmt: skip
        compiled((fresh(3), fresh(2)), fresh(1), 2.0, z=fresh(3))


def test_compiled_shardings_and_formats(donating):
    compiled = donating[2]
    device = R.devices()[0]
    here = R.SingleDeviceSharding(device)
    (pair, unused), kwargs = compiled.input_shardings
    # The program drops pair[1] and `unused`: no sharding, and an empty Format, as in JAX.
    assert (pair[0], pair[1], unused, kwargs["z"]) == (here, None, None, here)
    assert compiled.output_shardings == here
    (fpair, funused), fkw = compiled.input_formats
    assert repr(fpair[1]) == repr(funused) == "Format(layout=None, sharding=None)"
    assert repr(fkw["z"]) == (
        "Format(layout=Layout(major_to_minor=(0,), tiling=(), sub_byte_element_size_in_bits=0), "
        f"sharding={here!r})"
    )
    assert compiled.output_formats.layout.major_to_minor == (0,)
    assert compiled.out_info.sharding == here
    assert compiled.runtime_executable() is compiled._executable.xla
    stats = compiled.memory_analysis()
    assert stats.argument_size_in_bytes > 0 and stats.output_size_in_bytes == 12


def test_lowered_hlo_and_cost(f, args):
    lowered = f.lower(*args)
    text = lowered.as_text("hlo")
    assert text.startswith("HloModule jit__lambda, entry_computation_layout=")
    assert "metadata=" not in text and "metadata=" in lowered.as_text("hlo", debug_info=True)
    assert type(lowered.compiler_ir("hlo")).__name__ == "XlaComputation"
    assert lowered.as_text("stablehlo") == lowered.as_text()
    for method in (lowered.as_text, lowered.compiler_ir):
        with pytest.raises(ValueError, match="unknown dialect: mhlo"):
            method("mhlo")
    cost = lowered.cost_analysis()
    assert cost["flops"] == 3.0 and cost["transcendentals"] == 3.0


def test_compile_with_compiler_options(f, args):
    lowered = f.lower(*args)
    compiled = lowered.compile(
        {"xla_backend_optimization_level": 0, "xla_cpu_enable_fast_math": False}
    )
    a, _ = compiled(*args)
    assert a.tolist() == [3.0, 3.0, 3.0]
    assert compiled._executable is not lowered.compile()._executable
    with pytest.raises(JaxRuntimeError, match="No such compile option: 'no_such_flag'"):
        lowered.compile({"no_such_flag": 1})
    with pytest.raises(JaxRuntimeError, match="not a valid int32 value"):
        lowered.compile({"xla_backend_optimization_level": "high"})


def test_compile_device_assignment_must_match(f, args):
    lowered = f.lower(*args)
    assert lowered.compile(device_assignment=tuple(R.devices()[:1]))(*args)[0].tolist() == [3.0] * 3
    with pytest.raises(ValueError, match=r"must match the device_assignment.*\[0\]"):
        lowered.compile(device_assignment=())
    with pytest.raises(NotImplementedError, match="lowering_platforms"):
        f.trace(*args).lower(lowering_platforms=("tpu",))
    assert isinstance(f.trace(*args).lower(lowering_platforms=("cpu",)), R.Lowered)
