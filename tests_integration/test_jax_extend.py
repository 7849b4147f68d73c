"""``jax.extend``: what extension authors use, with JAX 0.10's signatures and answers."""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.extend import backend, core, linear_util, random, sharding, source_info_util
from modjax.tracecore import ShapedArray
from modjax.tracecore.dtypes import float0


def test_new_jaxpr_eqn_takes_jax_parameter_order_and_the_result_evaluates():
    closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(1.0)
    jaxpr = closed.jaxpr
    (sin_eqn, mul_eqn) = jaxpr.eqns
    rebuilt = core.new_jaxpr_eqn(
        mul_eqn.invars, mul_eqn.outvars, mul_eqn.primitive, mul_eqn.params, mul_eqn.effects
    )
    assert rebuilt.primitive is core.primitives.mul_p and rebuilt.outvars == mul_eqn.outvars
    again = core.Jaxpr(jaxpr.constvars, jaxpr.invars, jaxpr.outvars, [sin_eqn, rebuilt])
    core.check_jaxpr(again)
    (out,) = core.jaxpr_as_fun(core.ClosedJaxpr(again, closed.consts))(0.5)
    np.testing.assert_allclose(out, 2 * np.sin(0.5), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="ctx"):
        core.new_jaxpr_eqn([], [], mul_eqn.primitive, {}, set(), None, object())


def test_sub_jaxprs_are_jaxprs_and_concrete_values_are_forced():
    closed = jax.make_jaxpr(lambda x: lax.cond(x > 0, jnp.sin, jnp.cos, x) + jax.jit(jnp.exp)(x))(
        1.0
    )
    inner = list(core.subjaxprs(closed.jaxpr))
    assert len(inner) == 3 and all(isinstance(j, core.Jaxpr) for j in inner)
    cond_eqn = next(e for e in closed.jaxpr.eqns if e.primitive is core.primitives.cond_p)
    assert len(list(core.jaxprs_in_params(cond_eqn.params))) == 2
    assert core.concrete_or_error(int, jnp.int32(3), "here") == 3
    assert core.concrete_or_error(None, 5) == 5
    with pytest.raises(jax.errors.ConcretizationTypeError, match="in my op"):
        jax.jit(lambda v: core.concrete_or_error(int, v, "in my op"))(1)


def test_avals_dtypes_and_types():
    aval = ShapedArray((3, 4), np.float32)
    assert core.mapped_aval(3, 0, aval).shape == (4,)
    assert core.mapped_aval(4, 1, aval).shape == (3,) and core.mapped_aval(3, None, aval) is aval
    assert core.unmapped_aval(5, 1, aval).shape == (3, 5, 4)
    with pytest.raises(ValueError, match="not of size"):
        core.mapped_aval(2, 0, aval)
    assert core.primal_dtype_to_tangent_dtype(np.int32) == float0
    assert core.primal_dtype_to_tangent_dtype(np.float32) == np.float32
    assert core.valid_jaxtype(1.0) and core.valid_jaxtype(jnp.ones(2))
    assert not core.valid_jaxtype("text") and not core.valid_jaxtype(object())
    assert np.ndarray in core.array_types and np.float32 in core.array_types
    var = core.gensym()(aval)
    assert isinstance(var, core.Var) and var.aval == aval


def test_where_am_i():
    seen = {}

    def probe(x):
        seen.setdefault("jit", core.unsafe_am_i_under_a_jit_DO_NOT_USE())
        seen.setdefault("vmap", core.unsafe_am_i_under_a_vmap_DO_NOT_USE())
        seen.setdefault("names", core.unsafe_get_axis_names_DO_NOT_USE())
        seen.setdefault("env", core.nonempty_axis_env_DO_NOT_USE())
        return x

    probe(1.0)
    assert seen == {"jit": False, "vmap": False, "names": [], "env": False}
    seen.clear()
    jax.jit(probe)(1.0)
    assert seen["jit"] and not seen["vmap"]
    seen.clear()
    jax.vmap(probe, axis_name="i")(jnp.ones(2))
    assert seen == {"jit": False, "vmap": True, "names": ["i"], "env": True}


def test_a_primitive_defined_through_extend_core_traces_and_runs():
    twice_p = core.Primitive("twice_via_extend")
    twice_p.def_impl(lambda x: np.asarray(x) * 2)
    twice_p.def_abstract_eval(lambda aval: aval)
    assert float(twice_p.bind(np.float32(3.0))) == 6.0
    closed = jax.make_jaxpr(twice_p.bind)(np.float32(1.0))
    assert closed.jaxpr.eqns[0].primitive is twice_p
    assert core.call_impl(linear_util.wrap_init(lambda x: x + 1, debug_info=None), 1) == 2


def test_backend_and_random():
    assert backend.get_backend().platform == "cpu" and "cpu" in backend.backends()
    assert backend.get_default_device() == jax.devices()[0]
    backend.clear_in_memory_compilation_cache()
    assert jax.jit(lambda v: v + 1)(1) == 2  # compiles again
    key = random.seed_with_impl(random.threefry_prng_impl, 0)
    assert jax.random.key_data(key).tolist() == jax.random.key_data(jax.random.key(0)).tolist()
    keys = random.random_seed(jnp.arange(3, dtype=jnp.uint32), "threefry2x32")
    assert keys.shape == (3,)
    bits = random.threefry_2x32(jnp.array([0, 1], jnp.uint32), jnp.arange(4, dtype=jnp.uint32))
    assert bits.tolist() == [2441914641, 1384938218, 3819641963, 2025898573]  # JAX 0.10.2


def test_a_prng_implementation_defined_through_extend():
    def seed(s):
        return jnp.stack([jnp.uint32(s), jnp.uint32(7)])

    def split(k, shape):
        return jnp.broadcast_to(k, (*shape, 2)) + jnp.arange(
            int(np.prod(shape)), dtype=jnp.uint32
        ).reshape(*shape, 1)

    def fold_in(k, d):
        return k + jnp.uint32(d)

    def random_bits(k, bit_width, shape):
        return jnp.full(shape, k[0], jnp.uint32)

    impl = random.define_prng_impl(
        key_shape=(2,), seed=seed, split=split, random_bits=random_bits, fold_in=fold_in,
        name="toy", tag="toy",
    )  # fmt: skip
    key = jax.random.key(5, impl=impl)
    assert jax.random.key_data(key).tolist() == [5, 7]
    assert jax.random.key_data(jax.random.split(key, 2)).tolist() == [[5, 7], [6, 8]]
    assert jax.random.bits(key, (3,)).tolist() == [5, 5, 5]


def test_wrapped_functions_and_backend_registration_take_jax_parameters():
    wrapped = linear_util.wrap_init(lambda x, *, k: x * k, {"k": 3}, debug_info=None)
    assert wrapped.call_wrapped(2) == 6
    calls = []

    @linear_util.cache
    def traced(fun, n):
        calls.append(n)
        return fun.call_wrapped(n)

    plain = linear_util.wrap_init(lambda x: x + 1, debug_info=None)
    assert traced(plain, 1) == traced(plain, 1) == 2 and calls == [1]
    with pytest.raises(NotImplementedError, match="explain"):
        linear_util.cache(lambda fun: None, explain=print)
    for option in ({"experimental": True}, {"c_api": object()}, {"make_topology": len}):
        with pytest.raises(NotImplementedError, match=next(iter(option))):
            backend.register_backend_factory("never_made", lambda: None, **option)


def test_names_without_a_counterpart_say_so():
    for missing in (
        core.take_current_trace,
        source_info_util.new_name_stack,
        backend.clear_backends,
        sharding.get_op_sharding_from_serialized_proto,
    ):
        with pytest.raises(NotImplementedError, match="not supported by modjax"):
            missing()
    assert sharding.GSPMDSharding is jax.sharding.GSPMDSharding
    assert source_info_util.current() is not None


def test_extend_mlir_gives_jaxlibs_bindings_and_stablehlo_helpers():
    import modjax.extend.mlir as mlir
    from modjax.core import ShapedArray
    from modjax.extend.mlir import ir
    from modjax.extend.mlir.dialects import func, stablehlo

    module = jax.jit(lambda x: x + 1).lower(1.0).compiler_ir()
    assert isinstance(module, ir.Module)
    with module.context:
        artifact = mlir.serialize_portable_artifact(module, stablehlo.get_current_version())
        back = mlir.deserialize_portable_artifact(artifact)
    assert "stablehlo.add" in str(back) and func.FuncOp is not None
    assert mlir.lower_with_sharding_in_types(None, "op", ShapedArray((2,), np.float32)) == "op"


def test_extend_lowering_gives_a_bare_context_and_the_upstream_dialects():
    from modjax.extend import lowering
    from modjax.extend.mlir import ir
    from modjax.lowering import LoweringRuleContext

    context = lowering.JaxIrContext()
    context.append_dialect_registry(lowering.upstream_dialects)
    context.load_all_available_dialects()
    with context:
        module = ir.Module.parse("func.func @f(%a: i32) -> i32 { return %a : i32 }")
    assert "func.func @f" in str(module)
    assert lowering.LoweringRuleContext is LoweringRuleContext


def test_extend_xla_runs_registered_passes_on_each_compilation():
    from modjax.extend import xla

    seen = []
    xla.register_hlo_module_transformation(lambda proto: seen.append(len(proto)), name="spy")
    try:
        assert jax.jit(lambda x: x * 3 + 17)(jnp.ones(4)).tolist() == [20.0] * 4
        assert seen and all(n > 0 for n in seen)  # a serialized HloModuleProto each time
    finally:
        assert xla.clear_hlo_module_transformation("spy") is True
    assert xla.clear_hlo_module_transformation("spy") is False
    count = len(seen)
    jax.jit(lambda x: x * 5 + 19)(jnp.ones(4))
    assert len(seen) == count
    with pytest.raises(TypeError, match="stage must be a PipelineStage enum"):
        xla.register_hlo_module_transformation(lambda proto: None, name="bad", stage=0)


def test_extend_ifrt_programs_is_jaxlibs_module():
    from modjax.extend.ifrt_programs import ifrt_programs

    assert callable(ifrt_programs.make_hlo_program)
    assert callable(ifrt_programs.make_xla_compile_options)


def test_linear_util_transformations_add_layers_as_jax():
    @linear_util.transformation
    def scale(k, *xs):
        outs = yield [x * k for x in xs], {}
        yield [o + 1 for o in outs]

    @linear_util.transformation_with_aux
    def count(*xs):
        outs = yield xs, {}
        yield outs, len(xs)

    @linear_util.transformation2
    def times(f, k, x):
        return f(x) * k

    f = linear_util.wrap_init(lambda *xs: [sum(xs)], debug_info=None)
    assert scale(f, 2).call_wrapped(1, 2) == [7] and scale(f, 2) == scale(f, 2)
    counted, aux = count(f)
    with pytest.raises(linear_util.StoreException):
        aux()
    assert counted.call_wrapped(3, 4) == [7] and aux() == 2
    one = linear_util.wrap_init(lambda x: x + 1, debug_info=None)
    assert times(one, 10).call_wrapped(1) == 20
    stored, aux2 = linear_util.transformation_with_aux2(
        lambda f, store, x: (store.store(x), f(x))[1], one
    )
    _, unread = count(f)
    assert stored.call_wrapped(5) == 6
    assert linear_util.merge_linear_aux(aux2, unread) == (True, 5)
    assert linear_util.merge_linear_aux(unread, aux2) == (False, 5)
    with pytest.raises(linear_util.StoreException, match="both"):
        linear_util.merge_linear_aux(aux2, aux2)
