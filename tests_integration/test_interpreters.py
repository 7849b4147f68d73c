"""jax.interpreters.* and jax.api_util in modjax: JAX's names for writing primitives.

A primitive declared with modjax's ``Primitive`` and registered only through
``modjax.interpreters`` (as a JAX user registers with ``jax.interpreters``) works
eagerly and under ``jit``, ``grad``, ``vmap``. The api_util answers were recorded
from JAX 0.10.2.
"""

from __future__ import annotations

import importlib

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import api_util
from modjax.autodiff import jvp_rules, transpose_rules
from modjax.batching import batching_rules
from modjax.interpreters import ad, batching, mlir, partial_eval, pxla, xla
from modjax.lowering import hlo, lowering_rules
from modjax.tracecore import Primitive, ShapedArray, tree_structure, wrap_init
from modjax.tracecore.dce import dce_rules

F32 = np.float32
X = np.arange(1.0, 4.0, dtype=F32)


def _same_shape(x, **params):
    return ShapedArray(x.shape, x.dtype)


# y = k * x, linear; lowered by hand, returning a list as JAX's rules may.
scale_p = Primitive("interpreters_test_scale")
scale_p.def_impl(lambda x, k: xla.apply_primitive(scale_p, x, k=k))
scale_p.def_abstract_eval(_same_shape)


def _scale_lowering(ctx, x, *, k):
    (aval,) = ctx.avals_in
    assert mlir.aval_to_ir_type(ctx.module_context, aval) == x.type
    return [hlo.multiply(x, mlir.ir_constant(np.full(aval.shape, k, aval.dtype)))]


mlir.register_lowering(scale_p, _scale_lowering)
ad.deflinear(scale_p, lambda ct, k: [scale_p.bind(ct, k=k)])
batching.defvectorized(scale_p)

# y = x * x, lowered with lower_fun, JVP by defjvp, batched by a rule of one's own.
square_p = Primitive("interpreters_test_square")
square_p.def_impl(lambda x: xla.apply_primitive(square_p, x))
square_p.def_abstract_eval(_same_shape)
mlir.register_lowering(square_p, mlir.lower_fun(lambda x: [x * x]))
ad.defjvp(square_p, lambda g, x: 2 * g * x)
batching.primitive_batchers[square_p] = lambda args, dims: (square_p.bind(*args), dims[0])

# z = x * y: bilinear; y = exp(x): defjvp2 reuses the result.
mul_p = Primitive("interpreters_test_mul")
mul_p.def_impl(lambda x, y: xla.apply_primitive(mul_p, x, y))
mul_p.def_abstract_eval(lambda x, y: ShapedArray(x.shape, x.dtype))
mlir.register_lowering(mul_p, lambda ctx, x, y: hlo.multiply(x, y))
ad.defbilinear(
    mul_p,
    lambda ct, x, y: mul_p.bind(ct, y),
    lambda ct, x, y: mul_p.bind(x, ct),
)
batching.defbroadcasting(mul_p)

exp_p = Primitive("interpreters_test_exp")
exp_p.def_impl(lambda x: xla.apply_primitive(exp_p, x))
exp_p.def_abstract_eval(_same_shape)
mlir.register_lowering(exp_p, lambda ctx, x: [hlo.exponential(x)])
ad.defjvp2(exp_p, lambda g, ans, x: mul_p.bind(g, ans))
batching.defvectorized(exp_p)


def test_tables_are_modjax_tables():
    assert ad.primitive_jvps is jvp_rules and ad.primitive_transposes is transpose_rules
    assert batching.primitive_batchers is batching_rules
    assert partial_eval.dce_rules is dce_rules
    assert scale_p in lowering_rules and square_p in jvp_rules
    assert batching.not_mapped is None
    assert ad.get_primitive_transpose(scale_p) is transpose_rules[scale_p]
    with pytest.raises(NotImplementedError, match="Transpose rule .* for 'interpreters_test_exp'"):
        ad.get_primitive_transpose(exp_p)


def test_axis_rules_in_both_signatures():
    # JAX 0.10.2: axis_primitive_batchers takes the older signature (axis size, name,
    # trace type first) and stores the rule wrapped in fancy_primitive_batchers.
    seen = []
    old_p = Primitive("interpreters_test_old_axis_rule")
    old_p.def_impl(lambda x: xla.apply_primitive(old_p, x))
    old_p.def_abstract_eval(_same_shape)
    mlir.register_lowering(old_p, mlir.lower_fun(lambda x: [x + 1]))

    def old_rule(axis_size, axis_name, trace_type, vals, dims):
        seen.append((axis_size, axis_name, trace_type, dims))
        return old_p.bind(*vals), dims[0]

    batching.axis_primitive_batchers[old_p] = old_rule
    assert old_p in batching.fancy_primitive_batchers and old_p in batching.axis_primitive_batchers
    out = jax.vmap(lambda x: old_p.bind(x), axis_name="i")(np.stack([X, X]))
    np.testing.assert_allclose(out, np.stack([X, X]) + 1)
    assert seen == [(2, "i", None, (0,))]  # tuples, as JAX hands them

    new_p = Primitive("interpreters_test_new_axis_rule")
    new_p.def_impl(lambda x: xla.apply_primitive(new_p, x))
    new_p.def_abstract_eval(_same_shape)
    mlir.register_lowering(new_p, mlir.lower_fun(lambda x: [x * 2]))
    batching.fancy_primitive_batchers[new_p] = lambda axis_data, vals, dims: (
        new_p.bind(*vals),
        dims[0] if axis_data.size == 2 else None,
    )
    np.testing.assert_allclose(jax.vmap(new_p.bind)(np.stack([X, X])), 2 * np.stack([X, X]))
    del batching.axis_primitive_batchers[old_p]
    assert old_p not in batching.fancy_primitive_batchers


def test_primitives_work_under_every_transformation():
    scale = lambda x: scale_p.bind(x, k=3.0)  # noqa: E731
    np.testing.assert_allclose(scale(X), 3 * X)
    np.testing.assert_allclose(jax.jit(scale)(X), 3 * X)
    loss = lambda x: (scale(x) ** 2).sum()  # noqa: E731
    np.testing.assert_allclose(jax.grad(loss)(X), 18 * X, rtol=1e-6)
    np.testing.assert_allclose(jax.jit(jax.grad(loss))(X), 18 * X, rtol=1e-6)
    np.testing.assert_allclose(jax.vmap(scale)(np.stack([X, X])), 3 * np.stack([X, X]))

    square = lambda x: square_p.bind(x)  # noqa: E731
    np.testing.assert_allclose(jax.jit(square)(X), X * X)
    np.testing.assert_allclose(jax.grad(lambda x: square(x).sum())(X), 2 * X)
    np.testing.assert_allclose(jax.jacfwd(square)(X), np.diag(2 * X))
    np.testing.assert_allclose(jax.vmap(square, in_axes=1)(X[None]), (X * X)[:, None])

    np.testing.assert_allclose(jax.grad(lambda x, y: mul_p.bind(x, y).sum())(X, 2 * X), 2 * X)
    np.testing.assert_allclose(
        jax.vmap(mul_p.bind, in_axes=(0, None))(np.stack([X, X]), X)[1], X * X
    )
    np.testing.assert_allclose(
        jax.jit(jax.grad(lambda x: exp_p.bind(x).sum()))(X), np.exp(X), rtol=1e-6
    )


def test_jvp_rules_get_tuples_as_in_jax():
    # Rules written for JAX use them as pytree prefixes (in_axes of a vmap, say).
    seen = []
    twice_p = Primitive("interpreters_test_twice")
    twice_p.def_impl(lambda x: x * 2)
    twice_p.def_abstract_eval(_same_shape)

    def rule(primals, tangents):
        seen.append((type(primals), type(tangents)))
        return twice_p.bind(*primals), twice_p.bind(*tangents)

    ad.primitive_jvps[twice_p] = rule
    assert jax.jvp(lambda x: twice_p.bind(x), (X,), (X,))[1].tolist() == (2 * X).tolist()
    assert seen == [(tuple, tuple)]


def test_lowering_helpers():
    with mlir.make_ir_context(), mlir.ir.Location.unknown():
        i32 = mlir.dtype_to_ir_type(np.dtype(np.int32))
        assert str(mlir.aval_to_ir_type(ShapedArray((2, 3), F32))) == "tensor<2x3xf32>"
        assert str(i32) == "i32" and str(mlir.i64_attr(3)) == "3 : i64"
        assert str(mlir.ir_attribute(np.float32(1.5))) == "1.500000e+00 : f32"
    assert mlir.DEVICE_TO_DEVICE_TYPE == 1 and mlir.RECV_FROM_HOST_TYPE == 3
    lowered = jax.jit(lambda x: scale_p.bind(x, k=2.0)).lower(X)
    assert "stablehlo.multiply" in lowered.as_text()


# y = host_sin(x), computed by Python on the host: lowered as equinox's noinline is.
host_sin_p = Primitive("interpreters_test_host_sin")
host_sin_p.def_impl(lambda x, **p: xla.apply_primitive(host_sin_p, x, **p))
host_sin_p.def_abstract_eval(lambda x, **p: ShapedArray(x.shape, x.dtype))


def _host_sin_lowering(ctx, x, *, with_token):
    token = hlo.after_all([]) if with_token else None
    results, next_token, keepalive = mlir.emit_python_callback(
        ctx,
        lambda a: [np.sin(a)],
        token,
        [x],
        ctx.avals_in,
        ctx.avals_out,
        has_side_effect=False,
        sharding=None,
    )
    assert (next_token is not None) == with_token and callable(keepalive)
    ctx.module_context.add_keepalive(keepalive)
    return results


mlir.register_lowering(host_sin_p, _host_sin_lowering)


def test_emit_python_callback_calls_python_from_the_program():
    for with_token in (False, True):
        f = jax.jit(lambda x, t=with_token: host_sin_p.bind(x, with_token=t))
        np.testing.assert_allclose(f(X), np.sin(X), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="partitioned=True"):
        mlir.emit_python_callback(
            None, abs, None, [], [], [], has_side_effect=True, partitioned=True
        )


def test_partial_eval_traces_and_prunes():
    jaxpr, out_avals, consts = partial_eval.trace_to_jaxpr_dynamic(
        wrap_init(lambda x: [square_p.bind(x), scale_p.bind(x, k=2.0)]), [ShapedArray((3,), F32)]
    )
    assert [str(e.primitive) for e in jaxpr.eqns] == [square_p.name, scale_p.name]
    assert out_avals == [ShapedArray((3,), F32)] * 2 and consts == []
    pruned, used_inputs = partial_eval.dce_jaxpr(jaxpr, [False, True])
    assert [e.primitive for e in pruned.eqns] == [scale_p] and used_inputs == [True]
    assert partial_eval.dce_jaxpr(jaxpr, False)[1] == [False]


def test_trace_to_jaxpr_nounits_computes_what_is_known_now():
    # The outputs and residuals JAX 0.10.2 gives for this program and these inputs.
    c = jnp.arange(3.0)

    def f(x, y):
        return [x * 2, c + 1, y + c, x * 0 + 1]

    pvals = [
        partial_eval.PartialVal.unknown(ShapedArray((3,), F32)),
        partial_eval.PartialVal.known(jnp.ones(3)),
    ]
    jaxpr, out_pvals, consts = partial_eval.trace_to_jaxpr_nounits(wrap_init(f), pvals)
    assert [pv.is_known() for pv in out_pvals] == [False, True, True, False]
    np.testing.assert_array_equal(out_pvals[1].get_known(), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(out_pvals[2][1], [1.0, 2.0, 3.0])
    assert out_pvals[0] == (ShapedArray((3,), F32), None)
    assert len(jaxpr.invars) == 1 and len(jaxpr.constvars) == len(consts)
    x = np.array([1.0, 2.0, 3.0], F32)
    got = jax.core.eval_jaxpr(jaxpr, consts, x)
    np.testing.assert_allclose(got[0], x * 2)
    np.testing.assert_allclose(got[1], np.ones(3))
    jaxpr, out_pvals, consts = partial_eval.trace_to_jaxpr_nounits(
        wrap_init(f), pvals, instantiate=True
    )
    assert not any(pv.is_known() for pv in out_pvals)
    got = jax.core.eval_jaxpr(jaxpr, consts, x)
    np.testing.assert_allclose(got[2], [1.0, 2.0, 3.0])
    assert partial_eval.PartialVal.known(2.0).get_aval() == ShapedArray((), F32, weak_type=True)


# (module, name) of every JAX-internal name with no meaning here.
UNSUPPORTED = [
    ("ad", "jvp"), ("ad", "linearize"),
    ("batching", "register_vmappable"), ("batching", "unregister_vmappable"),
    ("partial_eval", "custom_partial_eval_rules"),
    ("partial_eval", "partial_eval_jaxpr_custom_rules"), ("partial_eval", "dce_jaxpr_call_rule"),
    ("pxla", "create_compile_options"), ("xla", "canonicalize_dtype_handlers"),
    ("mlir", "AxisContext"), ("mlir", "SPMDAxisContext"), ("mlir", "ShardingContext"),
    ("mlir", "ConstantHandler"), ("mlir", "register_constant_handler"),
    ("mlir", "ir_type_handlers"), ("mlir", "ir_tree_registry"), ("mlir", "LoweringParameters"),
    ("mlir", "LoweringResult"), ("mlir", "ShapePolyLoweringState"), ("mlir", "shape_tensor"),
    ("mlir", "TokenSet"), ("mlir", "lowerable_effects"), ("mlir", "core_call_lowering"),
    ("mlir", "jaxpr_subcomp"), ("mlir", "lower_jaxpr_to_fun"), ("mlir", "lower_jaxpr_to_module"),
    ("mlir", "merge_mlir_modules"),
]  # fmt: skip


@pytest.mark.parametrize("module, name", UNSUPPORTED)
def test_internal_names_raise_naming_themselves(module, name):
    value = getattr(importlib.import_module(f"modjax.interpreters.{module}"), name)
    with pytest.raises(NotImplementedError, match=f"jax.interpreters.{module}.{name} is not"):
        value()
    with pytest.raises(NotImplementedError, match=name):
        value["key"] = 1


def test_the_readme_lists_the_unsupported_names():
    from pathlib import Path

    readme = (Path(__file__).parents[1] / "packages" / "modjax" / "README.md").read_text()
    for module, name in UNSUPPORTED:
        assert f"`{module}.{name}`" in readme, (module, name)


def test_api_util_as_recorded_from_jax():
    in_tree = tree_structure(((1, (2, 3)), {}))
    assert api_util.flatten_axes("vmap in_axes", tree_structure(((1, (2, 3)),)), (0,)) == [0] * 3
    with pytest.raises(ValueError, match="vmap in_axes specification must be a tree prefix"):
        api_util.flatten_axes("vmap in_axes", tree_structure((1, 2)), (0, 1, 2))
    assert api_util.donation_vector((0,), (), in_tree) == (True, False, False)
    with_kwarg = tree_structure(((1, (2, 3)), {"b": 2}))
    assert api_util.donation_vector((1,), ("b",), with_kwarg) == (False, True, True, True)
    assert api_util.rebase_donate_argnums((0, 3, 4), (1, 2)) == (0, 1, 2)
    assert api_util.safe_map(lambda a, b: a + b, [1, 2], [3, 4]) == [4, 6]
    with pytest.raises(ValueError, match="argument 2 is shorter than argument 1"):
        api_util.safe_map(lambda a, b: a + b, [1, 2], [3])
    assert str(api_util.shaped_abstractify(1.0)) == str(jax.typeof(1.0))
    assert api_util.shaped_abstractify(jnp.ones(3)) == ShapedArray((3,), F32)


def test_api_util_wraps_functions():
    fun, out_tree = api_util.flatten_fun(
        wrap_init(lambda a, b: {"s": a + b}), tree_structure(((1, 2), {}))
    )
    assert fun.call_wrapped(1.0, 2.0) == [3.0] and out_tree().num_leaves == 1
    fun, out_tree = api_util.flatten_fun_nokwargs(wrap_init(lambda a: (a, a)), tree_structure((1,)))
    assert fun.call_wrapped(5) == [5, 5] and out_tree() == tree_structure((0, 0))
    partial, dyn = api_util.argnums_partial(
        wrap_init(lambda a, n, b: a * n + b), (0, 2), (2.0, 3, 1.0)
    )
    assert dyn == (2.0, 1.0) and partial.call_wrapped(*dyn) == 7.0
    with pytest.raises(ValueError, match="Non-hashable static arguments"):
        api_util.argnums_partial(wrap_init(lambda a, n: a), 0, (1.0, [1]))
    info = api_util.debug_info("jit", lambda x, y: x, (1, 2), {})
    assert info.arg_names == ("x", "y")


def test_lib_and_interpreters_import_as_in_jax():
    import modjax.interpreters
    import modjax.lib

    assert modjax.interpreters.ad is ad and modjax.interpreters.pxla is pxla
    assert [n for n in dir(modjax.lib) if not n.startswith("_")] == []
    import jaxlib

    assert modjax.lib.__version__ == jaxlib.__version__
