"""modjax.ffi calls real C handlers (data/ffi_handlers.c, compiled here) as jax.ffi does.

The handlers are built at test time with the system C compiler against
``modjax.ffi.include_dir()`` (jaxlib's XLA FFI headers); without a compiler the
tests that run them skip, saying so. Expected values and error messages were
checked against JAX 0.10.2 with the same handlers.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import ffi
from modjax.errors import JaxRuntimeError

SOURCE = Path(__file__).parent / "data" / "ffi_handlers.c"
F32 = np.float32


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    """The compiled handlers, registered as ``test_scale``, ``test_describe``, ``test_bump``."""
    compiler = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler (cc or gcc) to build the FFI test handlers")
    out = tmp_path_factory.mktemp("ffi") / "libhandlers.so"
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-O1", "-I", ffi.include_dir(), str(SOURCE), "-o", str(out)],
        check=True,
    )
    library = ctypes.cdll.LoadLibrary(str(out))
    for name in ("scale", "describe", "bump"):
        ffi.register_ffi_target(f"test_{name}", ffi.pycapsule(getattr(library, name)))
    return library


def scale(x, vmap_method="broadcast_all", **attributes):
    call = ffi.ffi_call(
        "test_scale", jax.ShapeDtypeStruct(x.shape, x.dtype), vmap_method=vmap_method
    )
    return call(x, **attributes)


X = np.arange(6.0, dtype=F32).reshape(2, 3)


def test_include_dir_holds_the_ffi_headers():
    api = Path(ffi.include_dir()) / "xla" / "ffi" / "api"
    assert {"c_api.h", "api.h", "ffi.h"} <= {p.name for p in api.iterdir()}


def test_eager_and_jit_with_attributes(lib):
    np.testing.assert_array_equal(scale(X, factor=F32(2)), X * 2)
    jitted = jax.jit(lambda x: scale(x, factor=F32(3), offset=F32(1)))
    np.testing.assert_array_equal(jitted(X), X * 3 + 1)
    np.testing.assert_array_equal(jitted(X + 1), (X + 1) * 3 + 1)
    # A zero-size and a 0-d operand.
    assert scale(np.zeros((0, 2), F32), factor=F32(1)).shape == (0, 2)
    np.testing.assert_array_equal(scale(np.float32(2.5), factor=F32(2)), 5.0)


def test_handler_errors_surface_at_run_time(lib):
    with pytest.raises(JaxRuntimeError, match="needs a float32 attribute 'factor'"):
        scale(X)
    two = [jax.ShapeDtypeStruct(X.shape, F32)] * 2
    with pytest.raises(JaxRuntimeError, match="scale returns one result"):
        ffi.ffi_call("test_scale", two)(X, factor=F32(1))
    with pytest.raises(JaxRuntimeError, match="No FFI handler registered for test_nowhere"):
        ffi.ffi_call("test_nowhere", jax.ShapeDtypeStruct((), F32))(X)


def test_bad_arguments_raise_as_in_jax():
    with pytest.raises(TypeError, match="Non-hashable keyword argument to ffi_call factor"):
        scale(X, factor=[1, 2])
    with pytest.raises(TypeError, match="No attribute handler defined for type"):
        jax.jit(lambda x: scale(x, factor=object())).lower(X)
    with pytest.raises(ValueError, match="vmap_method must be on of the allowed methods"):
        ffi.ffi_call("test_scale", jax.ShapeDtypeStruct((), F32), vmap_method="loop")
    with pytest.raises(ValueError, match="must have 'shape' and 'dtype' attributes. Got 3"):
        ffi.ffi_call("test_scale", 3)
    with pytest.raises(ValueError, match="legacy_backend_config parameter requires"):
        ffi.ffi_call("test_scale", jax.ShapeDtypeStruct((), F32), legacy_backend_config="x")
    old = ffi.ffi_call("t", jax.ShapeDtypeStruct(X.shape, F32), custom_call_api_version=2)
    with pytest.raises(ValueError, match="requires a custom call API version of at least 4"):
        jax.jit(lambda x: old(x, factor=F32(1))).lower(X)
    same = jax.ShapeDtypeStruct(X.shape, F32)
    with pytest.raises(ValueError, match="output index 1 outside the range"):
        ffi.ffi_call("t", same, input_output_aliases={0: 1})(X)
    with pytest.raises(ValueError, match="with a different abstract value float32\\[3\\]"):
        ffi.ffi_call("t", jax.ShapeDtypeStruct((3,), F32), input_output_aliases={0: 0})(X)
    with pytest.raises(ValueError, match="number of input layouts \\(2\\)"):
        ffi.ffi_call("t", same, input_layouts=[None, None])(X)
    with pytest.raises(ValueError, match="not supported after jaxlib version 381"):
        ffi.register_ffi_type_id("t", None)


def test_lowered_text_is_a_typed_ffi_custom_call():
    def f(x):
        call = ffi.ffi_call(
            "foo",
            (jax.ShapeDtypeStruct(x.shape, x.dtype), jax.ShapeDtypeStruct((), jnp.int32)),
            has_side_effect=True,
            input_output_aliases={0: 0},
            input_layouts=[(1, 0)],
            output_layouts=[(1, 0), None],
        )
        return call(
            x, a=1, b=2.0, c=True, d=np.int8(3), e=F32(1.5), f=np.uint16(7), g="hi",
            h=np.arange(3, dtype=np.int32), m=np.array(3.0, F32),
        )  # fmt: skip

    text = jax.jit(f).lower(X).as_text()
    # What JAX 0.10.2 writes as mhlo.backend_config (api_version 1 there); the same dictionary.
    assert (
        "backend_config = {a = 1 : i64, b = 2.000000e+00 : f64, c = true, d = 3 : i8, "
        'e = 1.500000e+00 : f32, f = 7 : ui16, g = "hi", h = dense<[0, 1, 2]> : tensor<3xi32>, '
        "m = dense<3.000000e+00> : tensor<f32>}"
    ) in text
    assert "api_version = 4 : i32" in text and "has_side_effect = true" in text
    assert "operand_layouts = [dense<[0, 1]> : tensor<2xindex>]" in text
    assert "result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]" in text
    assert (
        "output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0]"
        in text
    )


def test_results_follow_the_structure_given(lib):
    one = jax.ShapeDtypeStruct((2,), F32)
    assert isinstance(ffi.ffi_call("test_describe", [one, one])(X), list)
    out = ffi.ffi_call("test_describe", (one, jax.ShapeDtypeStruct((), jnp.int32)))(X)
    assert isinstance(out, tuple) and out[1].dtype == np.int32
    np.testing.assert_array_equal(out[0], [206.0, 206.0])  # 6 elements, rank 2


@pytest.mark.parametrize(
    "method, expected",
    [
        # per element: x[i] (3 elements, rank 1) and y (3, rank 1)
        ("sequential", 206.0),
        ("sequential_unrolled", 206.0),
        # once: x (4, 3), y as (1, 3)
        ("expand_dims", 12 + 3 + 400.0),
        # once: x (4, 3), y broadcast to (4, 3)
        ("broadcast_all", 24 + 400.0),
        # once: x (4, 3), y as it is (3,)
        ("legacy_vectorized", 12 + 3 + 300.0),
    ],
)
def test_vmap_methods(lib, method, expected):
    call = ffi.ffi_call("test_describe", jax.ShapeDtypeStruct((), F32), vmap_method=method)
    xs, y = np.ones((4, 3), F32), np.ones(3, F32)
    out = jax.vmap(call, in_axes=(0, None))(xs, y)
    np.testing.assert_array_equal(out, np.full(4, expected, F32))
    np.testing.assert_array_equal(jax.jit(jax.vmap(call, in_axes=(0, None)))(xs, y), out)


def test_vmap_without_a_method_is_an_error(lib):
    call = ffi.ffi_call("test_scale", jax.ShapeDtypeStruct((3,), F32))
    with pytest.raises(NotImplementedError, match="Got vmap_method=None"):
        jax.vmap(lambda x: call(x, factor=F32(1)))(X)


def test_vmap_of_scale_matches_a_loop(lib):
    for method in ("sequential", "expand_dims", "broadcast_all", "legacy_vectorized"):
        out = jax.vmap(lambda x, m=method: scale(x, m, factor=F32(2)), in_axes=1)(X)
        np.testing.assert_array_equal(out, X.T * 2)


def test_side_effects_keep_an_unused_call(lib):
    counter = ctypes.c_int.in_dll(lib, "calls")
    result = [jax.ShapeDtypeStruct((), jnp.int32)]

    def run(has_side_effect):
        before = counter.value
        jax.jit(
            lambda x: (ffi.ffi_call("test_bump", result, has_side_effect=has_side_effect)(x), x)[1]
        )(X)
        return counter.value - before

    assert run(True) == 1
    assert run(False) == 0  # unused and pure: removed
    jaxpr = jax.make_jaxpr(lambda x: ffi.ffi_call("test_bump", [], has_side_effect=True)(x))(X)
    assert "FFI" in str(jaxpr.effects) and len(jaxpr.jaxpr.eqns) == 1


def test_input_output_aliases_and_layouts_run(lib):
    call = ffi.ffi_call(
        "test_scale",
        jax.ShapeDtypeStruct(X.shape, F32),
        input_output_aliases={0: 0},
        input_layouts=[(1, 0)],
        output_layouts=(1, 0),
    )
    np.testing.assert_array_equal(jax.jit(lambda x: call(x * 1, factor=F32(2)))(X), X * 2)


def test_not_differentiable_but_custom_vjp_works(lib):
    with pytest.raises(ValueError, match="The FFI call to `test_scale` cannot be differentiated"):
        jax.grad(lambda x: scale(x, factor=F32(2)).sum())(X)

    @jax.custom_vjp
    def doubled(x):
        return scale(x, factor=F32(2))

    doubled.defvjp(lambda x: (doubled(x), None), lambda _, g: (scale(g, factor=F32(2)),))
    loss = lambda x: (doubled(x) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(jax.grad(loss)(X), 8 * X)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(X), 8 * X)
    np.testing.assert_allclose(jax.vmap(jax.grad(loss))(X[:, None]), 8 * X[:, None])


def test_ffi_lowering_for_a_primitive_of_ones_own(lib):
    from modjax.lowering import register_lowering
    from modjax.runtime import apply_primitive
    from modjax.tracecore import Primitive

    scale_p = Primitive("test_ffi_scale")
    scale_p.def_abstract_eval(lambda x, **params: x)
    scale_p.def_impl(lambda *a, **p: apply_primitive(scale_p, *a, **p))
    register_lowering(scale_p, ffi.ffi_lowering("test_scale"))
    np.testing.assert_array_equal(scale_p.bind(X, factor=F32(4)), X * 4)
    np.testing.assert_array_equal(jax.jit(lambda x: scale_p.bind(x, factor=F32(0.5)))(X), X / 2)


def test_token_results(lib):
    from modjax.core import abstract_token

    results = (jax.ShapeDtypeStruct((), jnp.int32), abstract_token)
    call = ffi.ffi_call("test_bump", results, has_side_effect=True, vmap_method="sequential")
    text = jax.jit(call).lower(X).as_text()
    assert "-> (tensor<i32>, !stablehlo.token)" in text
    assert "result_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]" in text
    count, token = jax.jit(call)(X)
    assert count.dtype == np.int32 and type(jax.typeof(token)) is type(abstract_token)
    with pytest.raises(NotImplementedError, match="with token results"):
        jax.vmap(call)(X)


def test_ffi_call_jaxpr_text_parses_back():
    # Params print as JAX's (result_avals as ShapedArray reprs) and read back, attributes
    # of every kind included; the parsed program runs.
    from modjax.core import eval_jaxpr
    from modjax.lowering import lapack_target
    from modjax.tracecore import parse_jaxpr

    call = jax.ffi.ffi_call(
        lapack_target("getrf", np.float32),
        [jax.ShapeDtypeStruct((3, 3), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.int32)]
        + [jax.ShapeDtypeStruct((), jnp.int32)],
        vmap_method="sequential",
        input_layouts=[(1, 0)],
    )
    closed = jax.make_jaxpr(call)(np.eye(3, dtype=np.float32))
    text = str(closed)
    assert "result_avals=(ShapedArray(float32[3,3]), ShapedArray(int32[3]), " in text
    parsed = parse_jaxpr(text)
    assert str(parsed) == text and parsed.eqns[0].params == closed.eqns[0].params
    x = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.float32)
    for got, want in zip(eval_jaxpr(parsed.jaxpr, parsed.consts, x), call(x), strict=True):
        np.testing.assert_array_equal(got, want)
    attrs = {"a": np.float32(2), "n": 3, "s": "abc", "arr": np.arange(3), "f": 2.5}
    attrs["d"] = {"k": np.int8(2)}
    with_attrs = jax.make_jaxpr(lambda v: call(v, **attrs))(x)
    again = parse_jaxpr(str(with_attrs))
    assert again.eqns[0].params == with_attrs.eqns[0].params
