"""Artifacts exported and serialized by JAX 0.10.2 deserialize and run in modjax.

``data/jax_exported.json`` holds the bytes of ``jax.export`` artifacts (an
elementwise function, a matmul, pytree arguments and results with a registered
namedtuple, a scan, a symbolic batch dimension, a two-platform export and one
serialized with its VJP), the values JAX computed with them, and the recording
script (its ``script`` field).
"""

import base64
import collections
import json
import os

import numpy as np
import pytest

from modjax.autodiff import vjp
from modjax.runtime import export, jit
from modjax.runtime.export import flatbuf, schema
from modjax.tracecore.tree_util import tree_leaves

pytestmark = pytest.mark.usefixtures("runtime_operators")

with open(os.path.join(os.path.dirname(__file__), "data", "jax_exported.json")) as f:
    RECORDED = json.load(f)
ARTIFACTS = RECORDED["artifacts"]

Point = collections.namedtuple("Point", ["x", "y"])
export.register_namedtuple_serialization(Point, serialized_name="modjax_test.Point")


def blob(name) -> bytes:
    return base64.b64decode(ARTIFACTS[name]["serialized"])


def arrays(leaves):
    return [np.asarray(x["values"], dtype=x["dtype"]).reshape(x["shape"]) for x in leaves]


@pytest.fixture(scope="module")
def exported():
    return {name: export.deserialize(blob(name)) for name in ARTIFACTS}


@pytest.mark.parametrize("name", sorted(ARTIFACTS))
def test_metadata_reads_as_jax_reads_it(exported, name):
    exp, meta = exported[name], ARTIFACTS[name]["metadata"]
    assert exp.fun_name == meta["fun_name"]
    for avals, expected in ((exp.in_avals, meta["in_avals"]), (exp.out_avals, meta["out_avals"])):
        assert [[[str(d) for d in a.shape], str(a.dtype)] for a in avals] == expected
    assert exp.in_tree.num_leaves == meta["in_tree_leaves"]
    assert exp.out_tree.num_leaves == meta["out_tree_leaves"]
    assert list(exp.platforms) == meta["platforms"]
    assert exp.calling_convention_version == meta["calling_convention_version"]
    assert exp.nr_devices == meta["nr_devices"]
    assert list(exp.module_kept_var_idx) == meta["module_kept_var_idx"]
    assert exp.uses_global_constants == meta["uses_global_constants"]
    assert exp.has_vjp() == meta["has_vjp"]
    assert "func.func public @main" in exp.mlir_module()


@pytest.mark.parametrize("name", sorted(ARTIFACTS))
def test_calls_give_jax_values_eagerly_and_under_jit(exported, name):
    exp = exported[name]
    for case in ARTIFACTS[name]["calls"]:
        args, kwargs = exp.in_tree.unflatten(arrays(case["args"]))
        expected = arrays(case["results"])
        for fn in (exp.call, jit(exp.call)):
            got = tree_leaves(fn(*args, **kwargs))
            assert len(got) == len(expected)
            for g, e in zip(got, expected, strict=True):
                assert np.asarray(g).dtype == e.dtype
                np.testing.assert_allclose(np.asarray(g), e, rtol=2e-6, atol=2e-6)


def test_pytree_results_keep_their_structure(exported):
    exp = exported["pytree"]
    args, _ = exp.in_tree.unflatten(arrays(ARTIFACTS["pytree"]["calls"][0]["args"]))
    out = exp.call(*args)
    assert isinstance(out, list) and out[2] is None
    assert isinstance(out[1]["p"], Point)
    np.testing.assert_array_equal(out[1]["p"].x, [3.0, 4.0])


def test_symbolic_batch_dimension(exported):
    exp = exported["symbolic"]
    assert str(exp.in_avals[0].shape[0]) == "b"
    x = np.ones((3, 5), np.float32)  # the second dimension must be 4
    with pytest.raises(ValueError, match=r"expected \(b, 4\)"):
        exp.call(x, np.ones((4, 3), np.float32))


def test_grad_through_the_serialized_vjp(exported):
    exp = exported["elementwise"]
    x = arrays(ARTIFACTS["elementwise"]["calls"][0]["args"])[0]
    _, pullback = vjp(exp.call, x)
    (g,) = pullback(np.ones_like(x))  # the gradient of the sum of the outputs
    np.testing.assert_allclose(
        np.asarray(g), arrays(ARTIFACTS["elementwise"]["grad_of_sum"])[0], rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(g), 2 * np.cos(x), rtol=1e-6)


def test_no_vjp_is_jax_error(exported):
    exp = exported["matmul"]
    x, y = arrays(ARTIFACTS["matmul"]["calls"][0]["args"])
    _, pullback = vjp(lambda x: exp.call(x, y), x)
    with pytest.raises(ValueError, match="No VJP is available"):
        pullback(np.ones((2, 4), np.float32))


def test_call_checks_the_pytree_and_dtypes(exported):
    exp = exported["matmul"]
    with pytest.raises(ValueError, match="same pytree structure"):
        exp.call(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="dtype int32, expected float32"):
        exp.call(np.ones((2, 3), np.int32), np.ones((3, 4), np.float32))


@pytest.mark.parametrize("name", sorted(ARTIFACTS))
def test_modjax_reserializes_the_same_fields(exported, name):
    """Bytes written by modjax decode to the fields JAX wrote (vjps included)."""
    vjp_order = 1 if ARTIFACTS[name]["metadata"]["has_vjp"] else 0
    ours = export.deserialize(exported[name].serialize(vjp_order=vjp_order))
    theirs = flatbuf.decode(blob(name), schema.SCHEMA, schema.ROOT)
    again = flatbuf.decode(bytes(exported[name].serialize(vjp_order)), schema.SCHEMA, schema.ROOT)
    assert again == theirs
    assert ours.fun_name == exported[name].fun_name
