"""vmap's API: in_axes/out_axes forms, keyword arguments, axis_size, sizes 0 and 1, errors.

Error types and messages follow JAX 0.10's (checked against jax.vmap).
"""

import re

import numpy as np
import pytest
from batching_test_prims import add_p, mul_p, norule_p, reduce_sum_p, sin_p

from modjax.batching import vmap
from modjax.tracecore import make_jaxpr

X = np.arange(12, dtype=np.float32).reshape(3, 4)
Y = np.ones((5, 4), np.float32)


def add(a, b):
    return add_p.bind(a, b)


def test_in_axes_int_negative_and_none():
    np.testing.assert_allclose(vmap(sin_p.bind, in_axes=1)(X), np.sin(X).T, rtol=1e-6)
    np.testing.assert_allclose(vmap(sin_p.bind, in_axes=-1)(X), np.sin(X).T, rtol=1e-6)
    v = np.arange(4, dtype=np.float32)
    np.testing.assert_allclose(vmap(add, in_axes=(0, None))(X, v), X + v)
    np.testing.assert_allclose(vmap(add, in_axes=(None, 1))(v, X.T), X + v)


def test_in_axes_list_is_read_as_tuple():
    np.testing.assert_allclose(vmap(add, in_axes=[0, 1])(X, X.T), 2 * X)


def test_in_axes_pytree_prefixes():
    def f(tree):
        a, (b, c) = tree
        return add(a, mul_p.bind(b, c))

    k = 3
    a = np.ones((k, 2), np.float32)
    b = np.full((2, k), 2.0, np.float32)
    c = np.full((2, 5, k), 3.0, np.float32)[:, 0]  # (2, k)
    out = vmap(f, in_axes=((0, (1, 1)),))((a, (b, c)))
    np.testing.assert_allclose(out, np.full((k, 2), 7.0))
    # A dict prefix with None for an unmapped entry.
    out = vmap(lambda d, x: add(add(d["a"], d["b"]), x), in_axes=({"a": None, "b": 0}, None))(
        {"a": np.float32(0.0), "b": np.arange(5, dtype=np.float32)}, np.float32(1.0)
    )
    np.testing.assert_allclose(out, np.arange(5) + 1.0)


def test_kwargs_are_mapped_along_axis_0():
    out = vmap(add, in_axes=(None,))(X[0], b=X)
    np.testing.assert_allclose(out, X + X[0])


def test_out_axes_forms():
    v = np.float32(4.0)
    # An unbatched output with out_axes=None stays unbatched; with an int it is broadcast.
    a, b = vmap(
        lambda x, y: (add(x, y), mul_p.bind(y, 2.0)), in_axes=(0, None), out_axes=(0, None)
    )(np.arange(2, dtype=np.float32), v)
    np.testing.assert_allclose(a, [4.0, 5.0])
    assert np.asarray(b).shape == () and float(b) == 8.0
    a, b = vmap(lambda x, y: (add(x, y), mul_p.bind(y, 2.0)), in_axes=(0, None))(
        np.arange(2, dtype=np.float32), v
    )
    np.testing.assert_allclose(b, [8.0, 8.0])
    # Transposed outputs, negative axes, dict prefixes.
    out = vmap(sin_p.bind, out_axes=-1)(X)
    np.testing.assert_allclose(out, np.sin(X).T, rtol=1e-6)
    out = vmap(lambda x: {"s": x, "t": (x, x)}, out_axes={"s": 1, "t": 0})(X)
    assert out["s"].shape == (4, 3) and out["t"][0].shape == (3, 4)


def test_axis_size_without_mapped_inputs():
    out = vmap(lambda: np.float32(1.0), axis_size=3)()
    np.testing.assert_allclose(out, np.ones(3))
    # A Python scalar output is broadcast with its canonical (weak) dtype.
    out = vmap(lambda x: 2.0)(X)
    assert out.dtype == np.float32 and out.shape == (3,)
    assert vmap(lambda: 1.0, axis_size=0)().shape == (0,)
    out = vmap(lambda x: sin_p.bind(x), in_axes=None, axis_size=2)(X)
    assert out.shape == (2, 3, 4)
    # axis_size agreeing with the mapped inputs is fine.
    assert vmap(sin_p.bind, axis_size=3)(X).shape == (3, 4)


@pytest.mark.parametrize("size", [0, 1])
def test_axis_sizes_zero_and_one(size):
    x = np.ones((size, 4), np.float32)
    out = vmap(lambda a: reduce_sum_p.bind(sin_p.bind(a), axes=(0,)))(x)
    assert out.shape == (size,)
    out = vmap(add, in_axes=(0, None), out_axes=1)(x, np.ones(4, np.float32))
    assert out.shape == (4, size)
    closed = make_jaxpr(vmap(sin_p.bind))(x)
    assert closed.jaxpr.outvars[0].aval.shape == (size, 4)


def test_wraps_the_function():
    def my_fun(x):
        """Docs."""
        return x

    v = vmap(my_fun)
    assert v.__name__ == "my_fun" and v.__wrapped__ is my_fun
    assert v.__doc__ == (  # JAX 0.10.2's
        "Vectorized version of my_fun. Takes similar arguments as my_fun but with additional "
        "array axes over which my_fun is mapped.\n\nOriginal documentation:\n\nDocs."
    )


def test_wraps_a_callable_whose_name_is_not_a_string():
    # An equinox Module instance can be such a callable; JAX's vmap still wraps it.
    class Callable:
        __name__ = 42

        def __call__(self, x):
            return x

    assert vmap(Callable())(np.ones(2, np.float32)).tolist() == [1.0, 1.0]


# --- errors --------------------------------------------------------------------------------


def test_inconsistent_sizes_name_each_argument():
    with pytest.raises(ValueError) as err:
        vmap(add)(X, Y)
    assert str(err.value) == (
        "vmap got inconsistent sizes for array axes to be mapped:\n"
        "  * one axis had size 3: axis 0 of argument a of type float32[3,4];\n"
        "  * one axis had size 5: axis 0 of argument b of type float32[5,4]"
    )
    with pytest.raises(ValueError, match=r"most axes \(2 of them\) had size 3"):
        vmap(lambda a, b, c: a)(X, Y, X)
    with pytest.raises(ValueError, match=re.escape("axis 0 of kwargs['b'] of type float32[5,4]")):
        vmap(add)(X, b=Y)
    with pytest.raises(ValueError, match="the `axis_size` argument was 5"):
        vmap(sin_p.bind, axis_size=5)(X)


def test_out_axes_none_for_a_batched_output():
    with pytest.raises(ValueError, match="got axis spec None but output was batched on axis 0"):
        vmap(lambda a: a, out_axes=None)(X)
    with pytest.raises(ValueError, match=re.escape("at vmap out_axes[1]['k'], got axis spec None")):
        vmap(lambda a: (a, {"k": a}), out_axes=(0, {"k": None}))(X)
    with pytest.raises(
        ValueError, match=r"vmap has mapped output \(axis_name=i\) but out_axes is None"
    ):
        vmap(lambda a: a, out_axes=None, axis_name="i")(X)


def test_sum_match_sums_a_mapped_output_whose_out_axes_is_none():
    out = vmap(lambda a, b: (sin_p.bind(a), b), in_axes=(1, None), out_axes=None, sum_match=True)(
        X, Y
    )
    np.testing.assert_allclose(out[0], np.sin(X).sum(1), rtol=1e-6)
    assert out[1] is Y  # an unmapped output is kept as it is
    mixed = vmap(lambda a: {"s": a, "m": a}, out_axes={"s": None, "m": 1}, sum_match=True)(X)
    np.testing.assert_array_equal(mixed["s"], X.sum(0))
    np.testing.assert_array_equal(mixed["m"], X.T)


def test_tree_prefix_mismatches():
    with pytest.raises(
        ValueError, match="different lengths of tuple at key path\n    vmap in_axes\\[0\\]"
    ):
        vmap(lambda a: a[0], in_axes=((0, 1),))((X,))
    with pytest.raises(ValueError, match="different types at key path"):
        vmap(lambda a: a, in_axes=({"a": 0},))((X,))
    with pytest.raises(ValueError, match="vmap out_axes specification must be a tree prefix"):
        vmap(lambda a: (a, a), out_axes=(0, 0, 0))(X)
    with pytest.raises(ValueError, match="different types"):  # a list is not a tuple here
        vmap(lambda a: (a, a), out_axes=[0, 1])(X)
    with pytest.raises(ValueError, match="len\\(in_axes\\)=1, len\\(args\\)=2"):
        vmap(lambda a, b: a, in_axes=(0,))(X, X)


def test_tree_prefix_mismatches_list_every_place_in_jaxs_words():
    with pytest.raises(ValueError) as info:
        vmap(lambda a, b: a, in_axes=((0, 0), [0]))((X, X, X), (X, X))
    assert str(info.value) == (
        "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
        "  Mismatch details (2 found):\n"
        "  pytree structure error: different lengths of tuple at key path\n"
        "    vmap in_axes[0]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type tuple of "
        "length 2, but the full pytree has a subtree of the same type but of length 3.\n"
        "  pytree structure error: different types at key path\n"
        "    vmap in_axes[1]\n"
        "At that key path, the prefix pytree vmap in_axes has a subtree of type\n"
        "    <class 'list'>\n"
        "but at the same key path the full pytree has a subtree of different type\n"
        "    <class 'tuple'>."
    )
    with pytest.raises(ValueError, match="different numbers of pytree children at key path"):
        vmap(lambda a: a, in_axes=({"a": 0, "b": None},))({"a": X})
    with pytest.raises(
        ValueError, match="full pytree has a subtree of different type\n.*PytreeLeaf"
    ):
        vmap(lambda a: a, in_axes=((0, 0),))(X)


def test_axes_out_of_range():
    msg = "which implies that its rank should be at least 3, but is only 2 (its shape is (3, 4))"
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, in_axes=2)(X)
    with pytest.raises(ValueError, match=re.escape(msg)):
        vmap(lambda a: a, in_axes=-3)(X)
    with pytest.raises(ValueError, match="rank should be at least 1, but is only 0"):
        vmap(lambda a: a)(1.0)
    with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 2"):
        vmap(lambda a: a, out_axes=3)(X)
    with pytest.raises(ValueError, match="axis -3 is out of bounds for array of dimension 2"):
        vmap(lambda a: a, out_axes=-3)(X)


def test_nothing_to_map():
    with pytest.raises(ValueError, match="at least one non-None value in in_axes"):
        vmap(lambda a: a, in_axes=None)(X)
    with pytest.raises(ValueError, match="must be passed at least one argument"):
        vmap(lambda: 1.0)()


def test_bad_specs_and_outputs():
    with pytest.raises(TypeError, match="vmap in_axes must be an int, None, or a tuple"):
        vmap(lambda a: a, in_axes=1.0)
    with pytest.raises(TypeError, match="with those types as leaves, but got \\(1.0,\\)"):
        vmap(lambda a: a, in_axes=(1.0,))
    with pytest.raises(TypeError, match="vmap out_axes must be an int, None"):
        vmap(lambda a: a, out_axes="a")
    with pytest.raises(TypeError, match="Expected a callable"):
        vmap(3)
    with pytest.raises(TypeError, match="Output from batched function 's'"):
        vmap(lambda a: "s")(X)


def test_missing_rule():
    with pytest.raises(NotImplementedError, match="Batching rule for 'bt_norule' not implemented"):
        vmap(norule_p.bind)(X)
    # Unbatched operands need no rule.
    out = vmap(lambda a, b: add(a, norule_p.bind(b)), in_axes=(0, None))(X, X[0])
    np.testing.assert_allclose(out, X + X[0])
