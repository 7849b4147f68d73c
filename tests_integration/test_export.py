"""modjax.export end to end: export, serialize, deserialize, call, and JAX running modjax's bytes.

``data/modjax_exported_checked_by_jax.json`` holds artifacts that modjax exported
and serialized (its ``modjax_script``), together with what JAX 0.10.2 read from
those bytes and computed with them (its ``jax_script``): JAX deserializes and
runs modjax's artifacts, gradients through the serialized VJP included. The
tests check that modjax still writes the same schema fields and that modjax's
own calls agree with JAX's values.
"""

import base64
import collections
import json
import os
from pathlib import Path

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import export
from modjax.runtime.export import flatbuf, schema

DATA = os.path.join(os.path.dirname(__file__), "data", "modjax_exported_checked_by_jax.json")
Point = collections.namedtuple("Point", ["x", "y"])
export.register_namedtuple_serialization(Point, serialized_name="modjax_integration.Point")
f32, i32 = np.float32, np.int32
RNG = np.random.default_rng(1)


def elementwise(x):
    return jnp.sin(x) * 2.0 + 1.0


def matmul(x, y):
    return x @ y


def pytree(d, p, *, scale):
    return [d["a"] * d["b"][1] * scale, {"n": d["b"][0] + 1, "p": Point(p.y, p.x)}, None]


def scan(xs):
    def body(carry, x):
        carry = carry + x
        return carry, jnp.sum(carry * x)

    return jax.lax.scan(body, jnp.zeros(xs.shape[1:], xs.dtype), xs)


def mlp(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)


def batched(x, w):
    """Elementwise ops, a matmul and reductions over a symbolic batch dimension."""
    return (
        jnp.sum(jnp.tanh(x @ w), axis=1),
        jnp.mean(x, axis=0),
        jnp.max(x * 2.0 + 1.0, axis=1),
        jnp.where(x > 0, x, 0.1 * x) ** 2,
    )


def sum_of_outputs(f):
    """The scalar whose gradient the recordings take: the sum of every output's sum."""
    return lambda *args: sum(jnp.sum(y) for y in jax.tree.leaves(f(*args)))


# name -> (function, positional args, keyword args, vjp_order, export options:
# symbolic "shapes" for symbolic_args_specs, "platforms")
FUNCTIONS = {
    "elementwise": (elementwise, (RNG.normal(size=5).astype(f32),), {}, 1, {}),
    "two_platforms": (
        elementwise,
        (RNG.normal(size=5).astype(f32),),
        {},
        0,
        {"platforms": ("cpu", "cuda")},
    ),
    "matmul": (
        matmul,
        (RNG.normal(size=(2, 3)).astype(f32), RNG.normal(size=(3, 4)).astype(f32)),
        {},
        0,
        {},
    ),
    "pytree": (
        pytree,
        (
            {"a": np.arange(3, dtype=f32), "b": (np.arange(3, dtype=i32), f32(2.5))},
            Point(np.array([1, 2], f32), np.array([3, 4], f32)),
        ),
        {"scale": f32(3.0)},
        0,
        {},
    ),
    "scan": (scan, (RNG.normal(size=(6, 3)).astype(f32),), {}, 0, {}),
    "mlp": (
        mlp,
        (RNG.normal(size=(4, 3)).astype(f32), RNG.normal(size=(5, 4)).astype(f32)),
        {},
        1,
        {},
    ),
    "batched": (
        batched,
        (RNG.normal(size=(5, 4)).astype(f32), RNG.normal(size=(4, 3)).astype(f32)),
        {},
        1,
        {"shapes": ("b, 4", None)},
    ),
}


def export_case(name):
    """Export one of FUNCTIONS as its recording did (symbolic shapes where it has them)."""
    fn, args, kwargs, _, options = FUNCTIONS[name]
    shapes = options.get("shapes")
    specs = args if shapes is None else export.symbolic_args_specs(args, shapes)
    return export.export(jax.jit(fn), platforms=options.get("platforms"))(*specs, **kwargs)


@pytest.fixture(scope="module")
def recorded():
    with open(DATA) as f:
        return json.load(f)["artifacts"]


@pytest.fixture(scope="module")
def exported():
    return {name: export_case(name) for name in FUNCTIONS}


def fields(blob: bytes) -> dict:
    return flatbuf.decode(bytes(blob), schema.SCHEMA, schema.ROOT)


def without_modules(f: dict) -> dict:
    """The fields without the module bytes (which change when lowering rules change)."""
    f = {k: v for k, v in f.items() if k != "mlir_module_serialized"}
    if "vjp" in f:
        f["vjp"] = without_modules(f["vjp"])
    return f


def arrays(leaves):
    return [np.asarray(x["values"], dtype=x["dtype"]).reshape(x["shape"]) for x in leaves]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_modjax_still_writes_the_fields_jax_read(exported, recorded, name):
    vjp_order = FUNCTIONS[name][3]
    ours = fields(exported[name].serialize(vjp_order=vjp_order))
    theirs = fields(base64.b64decode(recorded[name]["serialized"]))
    assert without_modules(ours) == without_modules(theirs)
    meta = recorded[name]["jax_read"]
    assert ours["function_name"] == meta["fun_name"]
    assert [[a["shape"], a["dtype"]] for a in ours["in_avals"]] == [
        [shape, schema.DTYPE_CODES[dtype]] for shape, dtype in meta["in_avals"]
    ]
    assert ours["calling_convention_version"] == meta["calling_convention_version"]


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_recorded_bytes_run_in_modjax_as_they_ran_in_jax(recorded, name):
    exp = export.deserialize(base64.b64decode(recorded[name]["serialized"]))
    fn, args, kwargs, _, _ = FUNCTIONS[name]
    expected = arrays(recorded[name]["jax_results"])
    got = jax.tree.leaves(exp.call(*args, **kwargs))
    direct = jax.tree.leaves(jax.jit(fn)(*args, **kwargs))
    for g, d, e in zip(got, direct, expected, strict=True):
        np.testing.assert_allclose(np.asarray(g), e, rtol=2e-6, atol=2e-6)
        np.testing.assert_allclose(np.asarray(d), e, rtol=2e-6, atol=2e-6)
    if "jax_grad" in recorded[name]:
        g = jax.jit(jax.grad(sum_of_outputs(exp.call)))(*args)
        np.testing.assert_allclose(np.asarray(g), arrays(recorded[name]["jax_grad"])[0], rtol=1e-5)


def test_round_trip_under_jit_and_grad(exported):
    exp = export.deserialize(exported["mlp"].serialize(vjp_order=1))
    w, x = FUNCTIONS["mlp"][1]
    np.testing.assert_allclose(jax.jit(exp.call)(w, x), mlp(w, x), rtol=1e-6)
    np.testing.assert_allclose(
        jax.jit(jax.grad(exp.call))(w, x), jax.jit(jax.grad(mlp))(w, x), rtol=1e-5, atol=1e-6
    )


def test_exported_attributes(exported):
    exp = exported["pytree"]
    assert exp.fun_name == "pytree"
    assert exp.platforms == ("cpu",) == (export.default_export_platform(),)
    assert exp.nr_devices == 1
    assert exp.in_shardings_hlo == (None,) * 6 and exp.out_shardings_hlo == (None,) * 4
    assert exp.calling_convention_version == export.maximum_supported_calling_convention_version
    assert export.minimum_supported_calling_convention_version == 9
    assert [a.str_short() for a in exp.in_avals] == [
        "float32[3]",
        "int32[3]",
        "float32[]",
        "float32[2]",
        "float32[2]",
        "float32[]",
    ]
    assert [a.str_short() for a in exp.out_avals] == [
        "float32[3]",
        "int32[3]",
        "float32[2]",
        "float32[2]",
    ]
    text = exp.mlir_module()
    assert "func.func public @main" in text and "jax.uses_shape_polymorphism = false" in text
    assert str(exp.mlir_module(serialized=False)) == text


def test_symbolic_batch_dimension_is_dynamic_in_the_module(exported):
    exp = exported["batched"]
    assert [a.str_short() for a in exp.in_avals] == ["float32[b,4]", "float32[4,3]"]
    assert [a.str_short() for a in exp.out_avals] == [
        "float32[b]",
        "float32[4]",
        "float32[b]",
        "float32[b,4]",
    ]
    assert exp.uses_global_constants
    text = exp.mlir_module()
    assert "tensor<?x4xf32>" in text and "get_dimension_size" in text
    assert "jax.uses_shape_polymorphism = true" in text
    w = FUNCTIONS["batched"][1][1]
    call, reference = jax.jit(exp.call), jax.jit(batched)
    for n in (1, 7):
        x = RNG.normal(size=(n, 4)).astype(f32)
        for got, want in zip(call(x, w), reference(x, w), strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)
    with pytest.raises(ValueError, match="expected"):
        exp.call(np.ones((2, 5), f32), w)
    x = RNG.normal(size=(3, 4)).astype(f32)  # gradients through the symbolic VJP
    grads = jax.jit(jax.grad(sum_of_outputs(exp.call), argnums=(0, 1)))(x, w)
    want = jax.jit(jax.grad(sum_of_outputs(batched), argnums=(0, 1)))(x, w)
    for g, h in zip(grads, want, strict=True):
        np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-6)
    assert [a.str_short() for a in exp.vjp().in_avals][2:] == [a.str_short() for a in exp.out_avals]


def test_symbolic_reshapes():
    def shapes(x):
        return x[:, None] * 2.0, jnp.squeeze(x[:, None], 1), x.reshape(x.shape[0], 2, 2)

    spec = export.symbolic_args_specs(np.ones((3, 4), f32), "b, 4")
    exp = export.export(jax.jit(shapes))(spec)
    assert [a.str_short() for a in exp.out_avals] == [
        "float32[b,1,4]",
        "float32[b,4]",
        "float32[b,2,2]",
    ]
    x = RNG.normal(size=(3, 4)).astype(f32)
    for got, want in zip(jax.jit(exp.call)(x), jax.jit(shapes)(x), strict=True):
        np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(jax.grad(sum_of_outputs(exp.call))(x), np.full((3, 4), 4.0))


def test_multi_platform_export_takes_a_platform_index(exported):
    exp = exported["two_platforms"]
    assert exp.platforms == ("cpu", "cuda") and exp.uses_global_constants
    assert 'tensor<i32> {jax.global_constant = "_platform_index"}' in exp.mlir_module()
    cuda_only = export.export(jax.jit(elementwise), platforms="cuda")(np.ones(5, f32))
    with pytest.raises(ValueError, match="exported for platforms"):
        cuda_only.call(np.ones(5, f32))
    anywhere = export.export(
        jax.jit(elementwise),
        platforms=("cuda",),
        disabled_checks=[export.DisabledSafetyCheck.platform()],
    )(np.ones(5, f32))
    np.testing.assert_allclose(anywhere.call(np.zeros(5, f32)), np.ones(5, f32))


def test_export_needs_jit_and_rejects_unsupported_requests():
    with pytest.raises(ValueError, match="must be the result of `jit`"):
        export.export(elementwise)
    with pytest.raises(ValueError, match="Unsupported platform"):
        export.export(jax.jit(elementwise), platforms=("tpu2",))
    with pytest.raises(NotImplementedError, match="cholesky lowers differently"):
        export.export(jax.jit(jnp.linalg.cholesky), platforms=("cpu", "cuda"))(np.eye(2, dtype=f32))
    (b,) = export.symbolic_shape("b")
    spec = jax.ShapeDtypeStruct((b, 3), jnp.float32)
    with pytest.raises(NotImplementedError, match="primitive cumsum"):
        export.export(jax.jit(lambda x: jnp.cumsum(x, axis=0)))(spec)
    with pytest.raises(NotImplementedError, match="not a plain variable"):
        export.export(jax.jit(elementwise))(
            jax.ShapeDtypeStruct(export.symbolic_shape("2*b, 3"), jnp.float32)
        )


def test_unregistered_pytree_nodes_are_errors():
    Other = collections.namedtuple("Other", ["a"])
    exp = export.export(jax.jit(lambda o: o.a * 2))(Other(np.ones(2, f32)))
    with pytest.raises(ValueError, match="unregistered type"):
        exp.serialize()
    with pytest.raises(ValueError, match="Duplicate serialization"):
        export.register_namedtuple_serialization(Point, serialized_name="other.Point")


def test_symbolic_shape_and_args_specs():
    b, n = export.symbolic_shape("b, 2*b")[0], export.symbolic_shape("(b, 2*b)")[1]
    assert export.is_symbolic_dim(b) and str(n) == "2*b" and n.evaluate({"b": 3}) == 6
    assert export.symbolic_shape("b, 3") == (b, 3)
    specs = export.symbolic_args_specs((np.ones((4, 3), f32), np.ones(3, f32)), ("b, _", None))
    assert specs[0].shape == (b, 3) and specs[1].shape == (3,)
    with pytest.raises(ValueError, match="syntax error"):
        export.symbolic_shape("b +")


def test_disabled_safety_checks_round_trip():
    checks = (export.DisabledSafetyCheck.platform(), export.DisabledSafetyCheck.custom_call("x"))
    exp = export.export(jax.jit(elementwise), disabled_checks=checks)(np.ones(3, f32))
    back = export.deserialize(exp.serialize())
    assert back.disabled_safety_checks == checks
    assert checks[1].is_custom_call() == "x" and checks[0].is_custom_call() is None
    with pytest.raises(TypeError, match="DisabledSafetyCheck"):
        export.export(jax.jit(elementwise), disabled_checks=["platform"])


def test_debug_render_is_the_program_picture(tmp_path):
    path = jax.debug.render(mlp, tmp_path / "mlp.dot", *FUNCTIONS["mlp"][1])
    text = Path(path).read_text()
    assert text.startswith("digraph") and "dot_general" in text and "tanh" in text
