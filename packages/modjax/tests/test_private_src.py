"""modjax._src: the few of jax._src's modules that flax, equinox and chex import."""

import subprocess
import sys

import numpy as np
import pytest

import modjax
import modjax.extend.core
from modjax._src import compiler, core, dispatch, dtypes, traceback_util, xla_bridge


def test_versions_are_jax_apis_and_modjax_keeps_its_own():
    assert modjax.__version__ == "0.10.2" and modjax.__version_info__ == (0, 10, 2)
    assert modjax.version.__version_info__ == (0, 10, 2)
    assert isinstance(modjax.version.modjax_version, str)
    assert modjax.version.modjax_version in modjax.print_environment_info(return_string=True)


def test_compiles_go_through_backend_compile_and_load():
    seen = []
    original = compiler.backend_compile_and_load

    def watch(backend, *args, **kwargs):
        seen.append(backend.platform)
        return original(backend, *args, **kwargs)

    compiler.backend_compile_and_load = watch
    try:
        assert float(modjax.jit(lambda x: x * 3 + 0.25)(np.float32(2))) == 6.25
    finally:
        compiler.backend_compile_and_load = original
    assert seen == ["cpu"]
    assert compiler.backend_compile_and_load is original


def test_views_of_public_modules():
    assert core.ShapedArray is modjax.core.ShapedArray
    assert core.find_top_trace is modjax.extend.core.find_top_trace  # no warning here
    assert dtypes.DType is np.dtype and issubclass(dtypes.TypePromotionError, ValueError)
    assert dispatch.wait_for_tokens is modjax.effects_barrier
    modjax.numpy.ones(1).block_until_ready()
    assert "cpu" in xla_bridge._backends


def test_api_boundary_filters_the_registered_library_frames(tmp_path):
    wrapped = traceback_util.api_boundary(lambda: 1, repro_api_name="x")
    assert wrapped() == 1
    traceback_util.register_exclusion(str(tmp_path))
    assert any(p.startswith(str(tmp_path)) for p in traceback_util._exclude_paths)

    def frame():
        import sys

        return sys._getframe()

    assert traceback_util.include_frame(frame())
    with pytest.raises(AttributeError):
        xla_bridge.no_such_name  # noqa: B018


def test_modules_flax_nnx_imports():
    from modjax._src import checkify, state, tree_util
    from modjax._src.state.types import AbstractRef

    assert AbstractRef is modjax.ref.AbstractRef is state.AbstractRef
    assert checkify.checkify is modjax.experimental.checkify.checkify
    assert issubclass(checkify.JaxRuntimeError, Exception) and checkify.Out.__name__ == "Out"
    assert issubclass(modjax.experimental.checkify.NaNError, checkify.JaxException)
    assert dict in tree_util._registry and tree_util.tree_map is modjax.tree_util.tree_map


def test_hijax_names_and_what_modjax_does_with_them():
    from modjax.experimental import hijax

    class Box:
        def __init__(self, value):
            self.value = value

    class BoxType(hijax.MutableHiType):
        def __eq__(self, other):
            return isinstance(other, BoxType)

        def __hash__(self):
            return hash(BoxType)

    hijax.register_hitype(Box, lambda box: BoxType())
    assert modjax.typeof(Box(1)) == BoxType()

    class Effect(modjax.extend.core.Effect): ...

    hijax.control_flow_allowed_effects.add_type(Effect)
    assert hijax.control_flow_allowed_effects.contains(Effect())

    class NewBox(hijax.HiPrimitive):
        def is_high(self, *avals, **params):
            return True

    with pytest.raises(NotImplementedError, match="high-level primitive 'new_box'"):
        NewBox("new_box").bind(np.float32(1))
    with pytest.raises(NotImplementedError, match="lo_ty"):
        hijax.HiType().lo_ty()
    assert hijax.AvalQDD(BoxType(), None).has_qdd and hijax.aval_method(len).fun is len


def test_trace_state_clean_and_ravel_pytree_for_numpyro_and_blackjax():
    from modjax._src.core import trace_state_clean
    from modjax._src.flatten_util import ravel_pytree

    seen = []

    def record(x):
        seen.append(trace_state_clean())
        with modjax.ensure_compile_time_eval():
            seen.append(trace_state_clean())
        return x

    record(1.0)
    modjax.jit(record)(1.0)
    modjax.vmap(record)(np.ones(2, np.float32))
    # JAX 0.10.2's answers: clean only outside every transformation.
    assert seen == [True, True, False, False, False, False]
    assert ravel_pytree is modjax.flatten_util.ravel_pytree


def test_the_submodules_are_attributes_without_an_import():
    # chex reads jax._src.xla_bridge._backends having imported only jax.
    code = (
        "import modjax; b = modjax._src.xla_bridge._backends; "
        "assert modjax._src.tree_util is not None\n"
        "try:\n    modjax._src.no_such_module\nexcept AttributeError as e:\n    print(e)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "module 'modjax._src' has no attribute 'no_such_module'"
