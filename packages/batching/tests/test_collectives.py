"""Collectives over vmapped named axes, against numpy loops over the members."""

import numpy as np
import pytest
from batching_test_prims import add_p
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

from modjax.batching import (
    all_gather,
    all_to_all,
    axis_index,
    pmax,
    pmean,
    pmin,
    ppermute,
    pshuffle,
    psum,
    psum_p,
    psum_scatter,
    vmap,
)
from modjax.tracecore import eval_jaxpr, make_jaxpr

SETTINGS = settings(max_examples=examples(12), derandomize=True, deadline=None)
SIZES = st.sampled_from([1, 3])
TAILS = st.sampled_from([(), (2,), (3, 2)])


def _members(size, tail, dtype=np.float32):
    return (np.arange(size * int(np.prod(tail)), dtype=dtype).reshape((size, *tail)) % 7) - 2


def _run(f, xs, in_axes=0, via_jaxpr=False):
    """Apply ``vmap(f, axis_name="i")`` to ``xs`` (members along ``in_axes``)."""
    mapped = vmap(f, in_axes=in_axes, axis_name="i")
    if not via_jaxpr:
        return np.asarray(mapped(xs))
    closed = make_jaxpr(mapped)(xs)
    return np.asarray(eval_jaxpr(closed.jaxpr, closed.consts, xs)[0])


@SETTINGS
@given(SIZES, TAILS, st.booleans(), st.booleans())
def test_reductions_match_numpy(size, tail, moved, via_jaxpr):
    xs = _members(size, tail)
    in_axes = 0
    if moved and tail:
        xs, in_axes = np.moveaxis(xs, 0, 1), 1
    members = np.moveaxis(xs, in_axes, 0)
    for fn, ref in ((psum, np.sum), (pmax, np.max), (pmin, np.min)):
        out = _run(lambda v, fn=fn: fn(v, "i"), xs, in_axes, via_jaxpr)
        np.testing.assert_allclose(out, np.broadcast_to(ref(members, 0), members.shape))
    out = _run(lambda v: pmean(v, "i"), xs, in_axes)
    np.testing.assert_allclose(out, np.broadcast_to(members.mean(0), members.shape), rtol=1e-6)


def test_reduction_dtypes_and_unbatched_operands():
    flags = np.array([True, False, True])
    out = vmap(lambda v: psum(v, "i"), axis_name="i")(flags)
    assert out.dtype == np.int32 and out.tolist() == [2, 2, 2]
    assert vmap(lambda v: pmax(v, "i"), axis_name="i")(flags).tolist() == [True] * 3
    ints = np.arange(3, dtype=np.int32)
    assert vmap(lambda v: pmin(v, "i"), axis_name="i")(ints).dtype == np.int32
    # A value not mapped along the axis counts once per member for psum (JAX: size * x).
    xs = np.zeros((3, 2), np.float32)
    out = vmap(lambda v, c: psum(c, "i"), in_axes=(0, None), axis_name="i")(xs, np.float32(2))
    np.testing.assert_array_equal(out, [6.0, 6.0, 6.0])
    out = vmap(lambda v, c: pmax(c, "i"), in_axes=(0, None), axis_name="i")(xs, np.float32(2))
    np.testing.assert_array_equal(out, [2.0, 2.0, 2.0])


def test_pytrees_and_positional_axes():
    xs = _members(3, (2,))
    out = vmap(lambda v: psum({"a": v, "b": (v, v)}, "i"), axis_name="i")(xs)
    for leaf in (out["a"], *out["b"]):
        np.testing.assert_array_equal(leaf, np.broadcast_to(xs.sum(0), xs.shape))
    np.testing.assert_array_equal(psum(xs, 0), xs.sum(0))  # ints are positional axes
    out = vmap(lambda v: psum(v, ("i", 0)), axis_name="i")(xs)
    np.testing.assert_array_equal(out, np.full(3, xs.sum()))


def test_nested_names_and_tuples():
    x = _members(3, (4, 2))
    both = vmap(vmap(lambda v: psum(v, ("i", "j")), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(both, np.broadcast_to(x.sum((0, 1)), x.shape))
    inner = vmap(vmap(lambda v: pmax(v, "j"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(inner, np.broadcast_to(x.max(1, keepdims=True), x.shape))
    outer = vmap(vmap(lambda v: psum(v, "i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(outer, np.broadcast_to(x.sum(0), x.shape))
    # The inner vmap maps axis 1: positional axes are shifted past the outer batch axis.
    swapped = vmap(vmap(lambda v: psum(v, "i"), in_axes=1, axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(swapped, np.broadcast_to(x.sum(0), x.shape).transpose(0, 2, 1))


def test_axis_index_over_a_tuple_of_names():
    x = np.zeros((3, 4))
    grid = vmap(vmap(lambda v: axis_index(("i", "j")), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(grid, np.arange(12).reshape(3, 4))
    grid = vmap(vmap(lambda v: axis_index(("j", "i")), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(grid, np.arange(12).reshape(4, 3).T)
    closed = make_jaxpr(vmap(vmap(lambda v: axis_index(("i", "j")), axis_name="j"), axis_name="i"))
    assert closed(x).jaxpr.outvars[0].aval.shape == (3, 4)


@SETTINGS
@given(SIZES, TAILS, st.data(), st.booleans())
def test_ppermute_matches_numpy(size, tail, data, via_jaxpr):
    xs = _members(size, tail)
    dsts = data.draw(st.permutations(range(size)))
    keep = data.draw(st.integers(1, size))
    perm = list(zip(range(keep), dsts[:keep], strict=True))
    want = np.zeros_like(xs)
    for src, dst in perm:
        want[dst] = xs[src]
    np.testing.assert_array_equal(_run(lambda v: ppermute(v, "i", perm), xs, 0, via_jaxpr), want)
    shuffled = _run(lambda v: pshuffle(v, "i", dsts), xs)
    np.testing.assert_array_equal(shuffled, xs[list(dsts)])


def test_ppermute_over_two_names_and_unbatched():
    x = np.arange(12.0).reshape(3, 4)
    ring = [(k, (k + 1) % 12) for k in range(12)]
    out = vmap(vmap(lambda v: ppermute(v, ("i", "j"), ring), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.roll(x.ravel(), 1).reshape(3, 4))
    out = vmap(lambda v, c: ppermute(c, "i", [(0, 1)]), in_axes=(0, None), axis_name="i")(
        x, np.float32(5)
    )
    np.testing.assert_array_equal(out, [0.0, 5.0, 0.0])


@SETTINGS
@given(SIZES, TAILS, st.booleans(), st.integers(0, 2), st.booleans())
def test_all_gather_matches_numpy(size, tail, tiled, axis, via_jaxpr):
    xs = _members(size, tail)
    if tiled and not tail:
        return
    axis %= len(tail) + (not tiled)
    want = np.concatenate(list(xs), axis) if tiled else np.stack(list(xs), axis)
    out = _run(lambda v: all_gather(v, "i", axis=axis, tiled=tiled), xs, 0, via_jaxpr)
    np.testing.assert_array_equal(out, np.broadcast_to(want, (size, *want.shape)))


@SETTINGS
@given(SIZES, st.sampled_from([(), (2,)]), st.booleans(), st.integers(0, 1), st.booleans())
def test_psum_scatter_matches_numpy(size, tail, tiled, dim, via_jaxpr):
    block = 2 if tiled else 1
    dim = min(dim, len(tail))
    shape = list(tail)
    shape.insert(dim, size * block)
    xs = _members(size, tuple(shape))
    total = xs.sum(0)
    parts = np.split(total, size, axis=dim)
    want = np.stack([p if tiled else np.squeeze(p, dim) for p in parts])
    out = _run(lambda v: psum_scatter(v, "i", scatter_dimension=dim, tiled=tiled), xs, 0, via_jaxpr)
    np.testing.assert_array_equal(out, want)


@SETTINGS
@given(SIZES, st.integers(0, 2), st.integers(0, 2), st.booleans(), st.booleans())
def test_all_to_all_matches_numpy(size, split_axis, concat_axis, tiled, via_jaxpr):
    shape = [2, 3, 2]
    shape[split_axis] = size * (2 if tiled else 1)
    xs = _members(size, tuple(shape))
    if tiled:
        chunks = [np.split(x, size, axis=split_axis) for x in xs]
        want = [
            np.concatenate([chunks[i][j] for i in range(size)], concat_axis) for j in range(size)
        ]
    else:
        want = [np.stack([np.take(x, j, split_axis) for x in xs], concat_axis) for j in range(size)]
    out = _run(lambda v: all_to_all(v, "i", split_axis, concat_axis, tiled=tiled), xs, 0, via_jaxpr)
    np.testing.assert_array_equal(out, np.stack(want))


def test_gathers_of_unbatched_operands():
    xs, c = np.zeros((3, 2)), np.arange(6.0).reshape(3, 2)
    out = vmap(lambda v, c: all_gather(c, "i"), in_axes=(0, None), axis_name="i")(xs, c[0])
    np.testing.assert_array_equal(out, np.broadcast_to(c[0], (3, 3, 2)))
    out = vmap(lambda v, c: all_to_all(c, "i", 0, 1), in_axes=(0, None), axis_name="i")(xs, c)
    np.testing.assert_array_equal(out, [np.stack([c[j]] * 3, 1) for j in range(3)])
    out = vmap(lambda v, c: psum_scatter(c, "i"), in_axes=(0, None), axis_name="i")(xs, c)
    np.testing.assert_array_equal(out, 3 * c)


def test_collective_over_an_outer_name_inside_an_inner_vmap():
    x = _members(3, (4, 2))
    out = vmap(vmap(lambda v: all_gather(v, "i"), axis_name="j"), axis_name="i")(x)
    np.testing.assert_array_equal(out, np.broadcast_to(x.transpose(1, 0, 2), (3, 4, 3, 2)))
    out = vmap(
        vmap(lambda v: ppermute(v, "i", [(0, 2), (2, 0), (1, 1)]), axis_name="j"), axis_name="i"
    )(x)
    np.testing.assert_array_equal(out, x[[2, 1, 0]])


def test_jaxpr_of_a_batched_psum_is_a_positional_reduction():
    closed = make_jaxpr(vmap(lambda v: add_p.bind(psum(v, "i"), v), axis_name="i"))(np.ones(3))
    (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive is psum_p]
    assert eqn.params["axes"] == (0,)


def test_errors():
    xs = np.ones((3, 4), np.float32)
    with pytest.raises(NameError, match="unbound axis name: j"):
        vmap(lambda v: psum(v, "j"), axis_name="i")(xs)
    with pytest.raises(NameError, match="unbound axis name: i"):
        psum(1.0, "i")
    with pytest.raises(NotImplementedError, match="axis_index_groups"):
        vmap(lambda v: psum(v, "i", axis_index_groups=[[0, 1], [2]]), axis_name="i")(xs)
    with pytest.raises(NotImplementedError, match="axis_index_groups not supported in vmap"):
        vmap(lambda v: all_gather(v, "i", axis_index_groups=[[0], [1], [2]]), axis_name="i")(xs)
    with pytest.raises(ValueError, match="same size"):
        vmap(lambda v: psum_scatter(v, "i", axis_index_groups=[[0, 1], [2]]), axis_name="i")(xs)
    with pytest.raises(ValueError, match="exactly once"):
        vmap(lambda v: all_to_all(v, "i", 0, 0, axis_index_groups=[[0], [0], [2]]), axis_name="i")(
            xs
        )
    with pytest.raises(NotImplementedError, match="several axis names"):
        vmap(vmap(lambda v: all_gather(v, ("i", "j")), axis_name="j"), axis_name="i")(xs)
    with pytest.raises(ValueError, match="unique"):
        vmap(lambda v: ppermute(v, "i", [(0, 1), (0, 2)]), axis_name="i")(xs)
    with pytest.raises(IndexError, match="out of range"):
        vmap(lambda v: ppermute(v, "i", [(0, 5)]), axis_name="i")(xs)
    with pytest.raises(ValueError, match="does not represent a permutation"):
        vmap(lambda v: pshuffle(v, "i", [2, 0]), axis_name="i")(xs)
    with pytest.raises(ValueError, match="divisible"):
        vmap(lambda v: all_to_all(v, "i", 0, 0, tiled=True), axis_name="i")(xs)
    with pytest.raises(ValueError, match="equal x.shape"):
        vmap(lambda v: psum_scatter(v, "i"), axis_name="i")(xs)
    with pytest.raises(ValueError, match="out of bounds"):
        vmap(lambda v: all_gather(v, "i", axis=2), axis_name="i")(xs)
    with pytest.raises(ValueError, match="out of bounds"):
        vmap(lambda v: all_gather(v, "i", tiled=True), axis_name="i")(xs[:, 0])
