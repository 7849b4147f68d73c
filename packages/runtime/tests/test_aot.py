import numpy as np
import pytest
from runtime_test_prims import add, mul, sin

from modjax import runtime as R
from modjax.tracecore.abstract import ShapeDtypeStruct
from modjax.tracecore.jaxpr import ClosedJaxpr

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
    with pytest.raises(TypeError, match="pytree"):
        compiled(args[0], (2.0,))


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
