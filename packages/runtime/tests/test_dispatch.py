import numpy as np
import pytest
from runtime_test_prims import add, scale, scale_p, sin, sumdiff_p

from modjax import runtime as R
from modjax.runtime import dispatch

pytestmark = pytest.mark.usefixtures("runtime_operators")


def test_eager_ops_compile_once_per_signature():
    x = R.device_put(np.arange(5, dtype=np.float32))
    before = dispatch.stats["compiles"]
    y = sin(x)
    after_first = dispatch.stats["compiles"]
    assert after_first - before in (0, 1)  # another test may have compiled it already
    for _ in range(3):
        sin(R.device_put(np.ones(5, np.float32)))
    assert dispatch.stats["compiles"] == after_first
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(5.0)), rtol=1e-6)
    sin(R.device_put(np.ones(6, np.float32)))  # a new shape
    assert dispatch.stats["compiles"] == after_first + 1


def test_params_are_part_of_the_key():
    x = R.device_put(np.ones(2, np.float32))
    assert scale(x, 2.0).tolist() == [2.0, 2.0]
    n = dispatch.stats["compiles"]
    assert scale(x, 2.0).tolist() == [2.0, 2.0]
    assert dispatch.stats["compiles"] == n
    assert scale(x, 3.0).tolist() == [3.0, 3.0]
    assert dispatch.stats["compiles"] == n + 1


def test_unhashable_params_still_run():
    x = R.device_put(np.ones(2, np.float32))
    factor = np.full((), 4.0)  # a numpy array: unhashable
    n = dispatch.stats["compiles"]
    for _ in range(2):
        assert dispatch.apply_primitive(scale_p, x, factor=factor).tolist() == [4.0, 4.0]
    assert dispatch.stats["compiles"] == n + 2  # not cached, but correct


def test_host_values_and_weak_types():
    r = add(2.0, 3.0)
    assert isinstance(r, R.Array) and r.weak_type and r.tolist() == 5.0
    r = add(np.float32(1.0), 2.0)
    assert not r.weak_type and r.dtype == np.float32
    r = add(np.ones(3, np.int64), 1)
    assert r.dtype == np.int32 and r.tolist() == [2, 2, 2]


def test_multiple_results():
    x = R.device_put(np.arange(3.0, dtype=np.float32))
    s, d = sumdiff_p.bind(x, x)
    assert s.tolist() == [0.0, 2.0, 4.0] and d.tolist() == [0.0, 0.0, 0.0]


def test_deleted_arguments():
    x = R.device_put(np.ones(4, np.float32))
    sin(x)
    x.delete()
    with pytest.raises(RuntimeError, match="Array has been deleted"):
        sin(x)


def test_outputs_are_uncommitted_unless_inputs_are():
    x = R.device_put(np.ones(2, np.float32))
    assert not sin(x).committed
    assert sin(R.device_put(x, R.devices()[0])).committed


def test_cpp_fast_paths_stay_out_of_traces_and_checks():
    # A PjitFunction cannot see Python's trace state: while a thread traces, and while
    # a check or disable_jit is on, jaxlib's disable_jit state sends each one to its
    # Python function; jit's own wrapper keeps out then anyway, and stays correct when
    # a rule runs with the eval trace current inside a transformation.
    from modjax.runtime import cpp_dispatch
    from modjax.tracecore import core
    from modjax.tracecore.tracing import make_jaxpr

    if not cpp_dispatch.available:
        pytest.skip("no C++ fast path")
    state = cpp_dispatch._to_python
    seen = []
    f = R.jit(lambda v: sin(v))
    x = R.device_put(np.float32(0.5))

    def traced(v):
        seen.append(state.value)
        with core.set_current_trace(core.eval_trace):  # as a rule does inside a transform
            seen.append(float(f(x)))  # jit's wrapper: compiled, via its Python path
        return sin(v)

    make_jaxpr(traced)(1.0)
    assert seen == [True, pytest.approx(np.sin(0.5))]
    assert state.value is False and float(f(x)) == pytest.approx(np.sin(0.5))
    with R.debug_nans(True):
        assert state.value is True
    assert state.value is False
