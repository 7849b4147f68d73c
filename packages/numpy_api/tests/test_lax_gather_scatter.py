"""lax.gather, the scatters, dynamic_slice and dynamic_update_slice against numpy references.

The references below transcribe XLA's gather/scatter semantics (window starts,
batching dimensions, clamping, dropping) into plain loops; hypothesis draws the
index values (in and out of bounds) for a handful of dimension-number cases.
Also: modes, the text format of params, JVP/transpose rules (numerically) and
batching rules (against a Python loop), and the errors of bad arguments.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import modjax.numpy as jnp
from modjax import lax
from modjax.autodiff import grad, jvp, vjp
from modjax.batching import vmap
from modjax.lax import GatherDimensionNumbers as GDN
from modjax.lax import GatherScatterMode
from modjax.lax import ScatterDimensionNumbers as SDN
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr
from modjax.tracecore.parse import parse_jaxpr

# --- numpy references of XLA's semantics ----------------------------------------------------


def _window_starts(operand_shape, index_vector, batch_index, dn_map, obd, ibd, sizes):
    """Full start vector of one slice/window, and whether it is in bounds."""
    start = [0] * len(operand_shape)
    for k, d in enumerate(dn_map):
        start[d] = int(index_vector[k])
    for o, i in zip(obd, ibd, strict=True):
        start[o] = batch_index[i]
    in_bounds = all(0 <= s <= n - w for s, n, w in zip(start, operand_shape, sizes, strict=True))
    start = [min(max(s, 0), n - w) for s, n, w in zip(start, operand_shape, sizes, strict=True)]
    return start, in_bounds


def gather_ref(operand, indices, dn: GDN, slice_sizes, mode="clip", fill=None):
    batch_shape = indices.shape[:-1]
    window_dims = [
        d
        for d in range(operand.ndim)
        if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims
    ]
    out_rank = len(dn.offset_dims) + len(batch_shape)
    batch_pos = [i for i in range(out_rank) if i not in dn.offset_dims]
    out_shape = [0] * out_rank
    for p, s in zip(batch_pos, batch_shape, strict=True):
        out_shape[p] = s
    for p, d in zip(dn.offset_dims, window_dims, strict=True):
        out_shape[p] = slice_sizes[d]
    out = np.zeros(out_shape, operand.dtype)
    for b in itertools.product(*map(range, batch_shape)):
        start, ok = _window_starts(
            operand.shape,
            indices[b],
            b,
            dn.start_index_map,
            dn.operand_batching_dims,
            dn.start_indices_batching_dims,
            slice_sizes,
        )
        block = operand[tuple(slice(s, s + w) for s, w in zip(start, slice_sizes, strict=True))]
        block = block.reshape([slice_sizes[d] for d in window_dims])
        if not ok and mode == "drop":
            block = np.full(block.shape, fill, operand.dtype)
        target = [slice(None)] * out_rank
        for p, i in zip(batch_pos, b, strict=True):
            target[p] = i
        out[tuple(target)] = block
    return out


_COMBINE = {
    "set": lambda x, y: y,
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "min": np.minimum,
    "max": np.maximum,
}


def scatter_ref(operand, indices, updates, dn: SDN, op="set", mode="drop"):
    out = operand.copy()
    batch_shape = indices.shape[:-1]
    scatter_pos = [d for d in range(updates.ndim) if d not in dn.update_window_dims]
    window_dims = [
        d
        for d in range(operand.ndim)
        if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims
    ]
    sizes = [1] * operand.ndim
    for u, d in zip(dn.update_window_dims, window_dims, strict=True):
        sizes[d] = updates.shape[u]
    for b in itertools.product(*map(range, batch_shape)):
        start, ok = _window_starts(
            operand.shape,
            indices[b],
            b,
            dn.scatter_dims_to_operand_dims,
            dn.operand_batching_dims,
            dn.scatter_indices_batching_dims,
            sizes,
        )
        if not ok and mode == "drop":
            continue
        sel = [slice(None)] * updates.ndim
        for p, i in zip(scatter_pos, b, strict=True):
            sel[p] = i
        window = updates[tuple(sel)]
        for w in itertools.product(*map(range, window.shape)):
            full = list(start)
            for k, d in enumerate(window_dims):
                full[d] += w[k]
            out[tuple(full)] = _COMBINE[op](out[tuple(full)], window[w])
    return out


# --- cases --------------------------------------------------------------------------------------

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5) - 7.5

# (name, dnums, slice_sizes, index batch shape, index vector size)
GATHER_CASES = [
    ("rows", GDN((1, 2), (0,), (0,)), (1, 4, 5), (2,), 1),
    ("points", GDN((), (0, 1, 2), (0, 1, 2)), (1, 1, 1), (3,), 3),
    ("windows", GDN((1, 2), (1,), (2, 1)), (2, 1, 3), (2,), 2),
    ("offset-first", GDN((0,), (0, 2), (2, 0)), (1, 4, 1), (2, 2), 2),
    ("batching", GDN((1,), (2,), (2,), (0,), (0,)), (1, 2, 1), (3,), 1),
    ("empty-vector", GDN((1, 2, 3), (), ()), (3, 2, 5), (2,), 0),
]


def _indices(data, batch, n, bound):
    values = data.draw(
        st.lists(
            st.integers(-bound - 2, bound + 2),
            min_size=int(np.prod(batch)) * n,
            max_size=int(np.prod(batch)) * n,
        )
    )
    return np.asarray(values, np.int32).reshape(*batch, n)


@pytest.mark.parametrize("case", GATHER_CASES, ids=[c[0] for c in GATHER_CASES])
@given(data=st.data())
def test_gather_matches_reference(case, data):
    _, dn, sizes, batch, n = case
    idx = _indices(data, batch, n, 5)
    for mode, ref_mode in (("clip", "clip"), ("fill", "drop"), (None, "clip")):
        expected = gather_ref(X, idx, dn, sizes, ref_mode, fill=np.nan)
        got = lax.gather(X, idx, dn, sizes, mode=mode)
        np.testing.assert_array_equal(np.asarray(got), expected)
    jitted = jit(lambda x, i: lax.gather(x, i, dn, sizes, mode="fill", fill_value=-1.0))(X, idx)
    np.testing.assert_array_equal(np.asarray(jitted), gather_ref(X, idx, dn, sizes, "drop", -1))


SCATTER_CASES = [
    ("rows", SDN((1, 2), (0,), (0,)), (2,), 1, (2, 4, 5)),
    ("points", SDN((), (0, 1, 2), (0, 1, 2)), (6,), 3, (6,)),
    ("windows", SDN((1, 2), (1,), (2, 1)), (3,), 2, (3, 2, 3)),
    ("batching", SDN((1,), (2,), (2,), (0,), (0,)), (3,), 1, (3, 2)),
]


@pytest.mark.parametrize("case", SCATTER_CASES, ids=[c[0] for c in SCATTER_CASES])
@given(data=st.data(), op=st.sampled_from(["set", "add", "sub", "mul", "min", "max"]))
def test_scatter_matches_reference(case, data, op):
    _, dn, batch, n, upd_shape = case
    idx = _indices(data, batch, n, 4)
    if dn.operand_batching_dims:
        idx = np.clip(idx, -1, 5)
    updates = np.arange(np.prod(upd_shape), dtype=np.float32).reshape(upd_shape) * 1.5 - 3
    fn = {
        "set": lax.scatter,
        "add": lax.scatter_add,
        "sub": lax.scatter_sub,
        "mul": lax.scatter_mul,
        "min": lax.scatter_min,
        "max": lax.scatter_max,
    }[op]
    for mode, ref_mode in (("drop", "drop"), ("clip", "clip")):
        expected = scatter_ref(X, idx, updates, dn, op, ref_mode)
        got = fn(X, idx, updates, dn, mode=mode)
        np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-6)
    got = jit(lambda x, i, u: fn(x, i, u, dn))(X, idx, updates)
    np.testing.assert_allclose(np.asarray(got), scatter_ref(X, idx, updates, dn, op), rtol=1e-6)


def test_scatter_apply_applies_once_per_hit():
    dn = SDN((), (0,), (0,))
    idx = np.array([[0], [0], [3], [9]], np.int32)
    out = lax.scatter_apply(jnp.arange(5.0), idx, lambda v: v * 10 + 1, dn, update_shape=(4,))
    np.testing.assert_array_equal(np.asarray(out), [11.0, 1.0, 2.0, 31.0, 4.0])
    clipped = jit(
        lambda x: lax.scatter_apply(x, idx, lambda v: -v, dn, update_shape=(4,), mode="clip")
    )(jnp.arange(5.0))
    np.testing.assert_array_equal(np.asarray(clipped), [0.0, 1.0, 2.0, -3.0, -4.0])


def test_scatters_over_an_empty_batch_of_indices():
    # vmap over 0 index sets makes an operand batching dimension of size 0; only the
    # updates' window dimensions are bounded by the operand's (JAX's shape rule).
    dn = SDN((1,), (0,), (0,))
    x = np.ones((4, 3), np.float32)
    idx, updates = np.zeros((0, 2, 1), np.int32), np.zeros((0, 2, 3), np.float32)
    applied = vmap(lambda i: lax.scatter_apply(x, i, lax.sin, dn, update_shape=(2, 3)))(idx)
    added = vmap(lambda i, u: lax.scatter_add(x, i, u, dn))(idx, updates)
    assert applied.shape == added.shape == (0, 4, 3)


def test_gather_scatter_dtypes_and_weak_types():
    dn = GDN((), (0,), (0,))
    idx = np.array([[1], [5]], np.uint8)
    fills = {np.int8: -128, np.uint16: 65535, np.bool_: True}
    for dtype in (np.int8, np.uint16, np.bool_, jnp.bfloat16, np.float16, np.complex64):
        x = np.arange(4).astype(dtype)
        out = lax.gather(x, idx, dn, (1,), mode="fill")
        assert out.dtype == np.dtype(dtype)
        value = np.asarray(out)[1]
        if dtype in fills:
            assert value == fills[dtype]
        else:
            assert np.isnan(value.astype(np.complex64))
        assert np.asarray(out)[0] == x[1]
    sdn = SDN((), (0,), (0,))
    out = lax.scatter_add(jnp.ones(1), np.array([[0]]), jnp.ones(1), sdn)
    assert out.dtype == np.float32 and not out.weak_type
    weak = lax.broadcast(jnp.asarray(2.0), (1,))
    assert lax.scatter_add(weak, np.array([[0]]), jnp.ones(1), sdn).weak_type
    assert lax.gather(jnp.asarray(1.0).reshape(1), np.array([[0]]), dn, (1,)).weak_type


def test_gather_scatter_mode_strings():
    assert GatherScatterMode.from_any("clip") is GatherScatterMode.CLIP
    assert GatherScatterMode.from_any("fill") is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any(None) is GatherScatterMode.FILL_OR_DROP
    assert GatherScatterMode.from_any("promise_in_bounds") is GatherScatterMode.PROMISE_IN_BOUNDS
    with pytest.raises(ValueError, match="Unknown gather mode"):
        GatherScatterMode.from_any("wrap")


# --- dynamic_slice and dynamic_update_slice --------------------------------------------------


@given(i=st.integers(-8, 8), j=st.integers(-8, 8))
def test_dynamic_slice_and_update_clamp(i, j):
    x = X[0]

    def clamp(s, size, n):
        s = s + n if s < 0 else s
        return min(max(s, 0), n - size)

    a, b = clamp(i, 2, 4), clamp(j, 3, 5)
    expected = x[a : a + 2, b : b + 3]
    got = lax.dynamic_slice(x, [i, j], (2, 3))
    np.testing.assert_array_equal(np.asarray(got), expected)
    got = jit(lambda v, i, j: lax.dynamic_slice(v, [i, j], (2, 3)))(x, np.int32(i), np.int8(j))
    np.testing.assert_array_equal(np.asarray(got), expected)
    update = -np.ones((2, 3), np.float32)
    expected = x.copy()
    expected[a : a + 2, b : b + 3] = update
    got = jit(lambda v, i, j: lax.dynamic_update_slice(v, update, (i, j)))(x, i, j)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_in_dim_helpers():
    x = X[0]
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, -1, 1)), x[:, -1:])
    np.testing.assert_array_equal(np.asarray(lax.index_in_dim(x, 2, 0, False)), x[2])
    np.testing.assert_array_equal(np.asarray(lax.slice_in_dim(x, 1, -1, 2, 1)), x[:, 1:-1:2])
    np.testing.assert_array_equal(np.asarray(lax.dynamic_index_in_dim(x, -1, 1, False)), x[:, -1])
    np.testing.assert_array_equal(np.asarray(lax.dynamic_slice_in_dim(x, 3, 2, 0)), x[2:4])
    out = lax.dynamic_update_index_in_dim(x, np.zeros(5, np.float32), 1, 0)
    np.testing.assert_array_equal(np.asarray(out)[1], 0)
    out = lax.dynamic_update_slice_in_dim(x, np.zeros((4, 2), np.float32), -2, 1)
    np.testing.assert_array_equal(np.asarray(out)[:, 3:], 0)
    np.testing.assert_array_equal(
        np.asarray(lax.index_take(X, (np.array([0, -1]), np.array([1, 8])), (0, 2))),
        X[[0, 2], :, [1, 3]],
    )
    with pytest.raises(IndexError, match="out of bounds"):
        lax.index_in_dim(x, 7)


# --- params: text format ------------------------------------------------------------------


def test_params_print_and_parse_back():
    dn = GDN((1,), (0,), (0,))
    sdn = SDN((1,), (0,), (0,))
    idx = np.array([[1], [7]], np.int32)

    def f(x, i):
        return (
            lax.gather(x, i, dn, (1, 5), mode="fill", fill_value=2.5),
            lax.gather(x, i, dn, (1, 5), mode="clip"),
            lax.scatter(x, i, x[:2], sdn, mode="clip"),
            lax.dynamic_slice(x, (i[0, 0], 1), (2, 2)),
            lax.dynamic_update_slice(x, x[:1], (i[1, 0], 0)),
        )

    text = str(make_jaxpr(f)(X[0], idx))
    assert "GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,)" in text
    assert "mode=GatherScatterMode.FILL_OR_DROP" in text and "fill_value=2.5" in text
    parsed = parse_jaxpr(text)
    assert str(parsed) == text
    eqn = next(e for e in parsed.jaxpr.eqns if e.primitive.name == "gather")
    assert type(eqn.params["dimension_numbers"]) is GDN
    assert eqn.params["mode"] is GatherScatterMode.FILL_OR_DROP


def test_scatter_combiners_print_jax_names():
    sdn = SDN((), (0,), (0,))
    text = str(
        make_jaxpr(
            lambda x: lax.scatter_max(
                lax.scatter_add(x, np.array([[1]]), x[:1], sdn), np.array([[0]]), x[:1], sdn
            )
        )(X[0, 0])
    )
    assert "scatter-add[" in text and "scatter-max[" in text


# --- autodiff -------------------------------------------------------------------------------------


def _numeric_vjp(f, x, ct, eps=1e-2):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        hi = np.asarray(f((x + d).astype(np.float32)), np.float64)
        lo = np.asarray(f((x - d).astype(np.float32)), np.float64)
        g[i] = np.sum((hi - lo) / (2 * eps) * ct)
    return g


IDX = np.array([[2], [0], [2], [7]], np.int32)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: lax.gather(x, IDX, GDN((1,), (0,), (0,)), (1, 5), mode="fill", fill_value=0.0),
        lambda x: lax.gather(x, IDX, GDN((1,), (0,), (0,)), (1, 5), mode="clip"),
        lambda x: lax.scatter_add(x, IDX, x[:4] * 2, SDN((1,), (0,), (0,))),
        lambda x: lax.scatter_sub(x, IDX, x[:4] * 2, SDN((1,), (0,), (0,)), mode="clip"),
        lambda x: lax.scatter(x, IDX, x[::-1] * 3, SDN((1,), (0,), (0,))),
        lambda x: lax.scatter_mul(x, IDX[1:2], x[3:], SDN((1,), (0,), (0,)), unique_indices=True),
        lambda x: lax.scatter_max(x, IDX, x[::-1] + 1, SDN((1,), (0,), (0,))),
        lambda x: lax.dynamic_slice(x, (1, -3), (2, 2)),
        lambda x: lax.dynamic_update_slice(x, x[:2, :2] * 4, (3, 2)),
    ],
    ids=[
        "gather-fill",
        "gather-clip",
        "scatter-add",
        "scatter-sub",
        "scatter",
        "scatter-mul",
        "scatter-max",
        "dynamic_slice",
        "dynamic_update_slice",
    ],
)
def test_vjp_and_jvp_match_finite_differences(fn):
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    out, pullback = vjp(fn, x)
    ct = np.random.default_rng(1).standard_normal(np.shape(out)).astype(np.float32)
    (g,) = pullback(ct)
    np.testing.assert_allclose(np.asarray(g), _numeric_vjp(fn, x, ct), rtol=2e-2, atol=2e-2)
    t = np.random.default_rng(2).standard_normal(x.shape).astype(np.float32)
    _, tangent = jvp(fn, (x,), (t,))
    numeric = (np.asarray(fn(x + 1e-2 * t), np.float64) - np.asarray(fn(x - 1e-2 * t))) / 2e-2
    np.testing.assert_allclose(np.asarray(tangent), numeric, rtol=2e-2, atol=2e-2)


def test_gradients_of_repeated_and_tied_updates():
    x = jnp.arange(3.0)
    idx = np.array([[0], [0], [1]], np.int32)
    sdn = SDN((), (0,), (0,))
    # The last of repeated updates wins, and only it gets a gradient.
    g = grad(lambda y: lax.scatter(x, idx, y, sdn).sum())(jnp.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(g), [0.0, 1.0, 1.0])
    # Ties in scatter-max share the gradient evenly.
    g = grad(lambda x: lax.scatter_max(x, idx, jnp.array([0.0, 0.0, 3.0]), sdn).sum())(x)
    np.testing.assert_allclose(np.asarray(g), [1 / 3, 0.0, 1.0], rtol=1e-6)
    with pytest.raises(NotImplementedError, match="unique_indices=True"):
        jvp(lambda y: lax.scatter_mul(x, idx, y, sdn), (jnp.ones(3),), (jnp.ones(3),))
    with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
        grad(lambda x: lax.scatter_apply(x, idx, jnp.sin, sdn, update_shape=(3,)).sum())(x)


# --- batching ---------------------------------------------------------------------------------


def _loop(f, in_axes, *args):
    size = next(np.shape(a)[ax] for a, ax in zip(args, in_axes, strict=True) if ax is not None)
    outs = []
    for b in range(size):
        outs.append(
            np.asarray(
                f(
                    *(
                        a if ax is None else np.take(a, b, ax)
                        for a, ax in zip(args, in_axes, strict=True)
                    )
                )
            )
        )
    return np.stack(outs)


BX = np.arange(3 * 4 * 5, dtype=np.float32).reshape(3, 4, 5)
BI = np.array([[[1], [9]], [[0], [0]], [[-2], [3]]], np.int32)
BU = np.arange(3 * 2 * 5, dtype=np.float32).reshape(3, 2, 5) + 100


@pytest.mark.parametrize(
    "in_axes", [(0, 0, 0), (0, None, None), (None, 0, None), (2, 0, 1), (None, None, 0)]
)
def test_batched_gather_and_scatter_match_a_loop(in_axes):
    gdn, sdn = GDN((1,), (0,), (0,)), SDN((1,), (0,), (0,))
    x = np.moveaxis(BX, 0, in_axes[0]) if in_axes[0] is not None else BX[0]
    i = BI if in_axes[1] is not None else BI[0]
    u = np.moveaxis(BU, 0, in_axes[2]) if in_axes[2] is not None else BU[0]

    def f(x, i, u):
        return (
            lax.gather(x, i, gdn, (1, 5), mode="fill", fill_value=-1.0),
            lax.scatter_add(x, i, u, sdn),
            lax.scatter(x, i, u, sdn, mode="clip"),
            lax.scatter_apply(x, i, lambda v: v * 2, sdn, update_shape=(2, 5)),
        )

    got = vmap(f, in_axes=in_axes)(x, i, u)
    for k in range(4):
        expected = _loop(lambda *a, k=k: f(*a)[k], in_axes, x, i, u)
        np.testing.assert_array_equal(np.asarray(got[k]), expected)


@pytest.mark.parametrize("in_axes", [(0, 0, 0), (0, None, None), (None, 0, 0), (1, None, 0)])
def test_batched_dynamic_slices_match_a_loop(in_axes):
    x = np.moveaxis(BX, 0, in_axes[0]) if in_axes[0] is not None else BX[0]
    i = np.array([-1, 2, 7], np.int32) if in_axes[1] is not None else np.int32(2)
    j = np.array([0, 4, -9], np.int32) if in_axes[2] is not None else np.int32(1)

    def f(x, i, j):
        return (
            lax.dynamic_slice(x, (i, j), (2, 3)),
            lax.dynamic_update_slice(x, -jnp.ones((2, 3)), (i, j)),
        )

    got = jit(vmap(f, in_axes=in_axes))(x, i, j)
    for k in range(2):
        expected = _loop(lambda *a, k=k: f(*a)[k], in_axes, x, i, j)
        np.testing.assert_array_equal(np.asarray(got[k]), expected)


# --- errors ---------------------------------------------------------------------------------


def test_errors_name_the_primitive():
    dn = GDN((), (0,), (0,))
    sdn = SDN((), (0,), (0,))
    x = jnp.arange(5.0)
    with pytest.raises(ValueError, match="gather indices must have an integer type"):
        lax.gather(x, np.array([[1.0]]), dn, (1,))
    with pytest.raises(TypeError, match="gather can only have slice size 1"):
        lax.gather(x, np.array([[1]]), dn, (2,))
    with pytest.raises(TypeError, match="gather slice size 7"):
        lax.gather(x, np.array([[1]]), GDN((1,), (), (0,)), (7,))
    with pytest.raises(TypeError, match="gather start_index_map has 1 entries"):
        lax.gather(x, np.array([[1, 2]]), dn, (1,))
    with pytest.raises(TypeError, match="must be a GatherDimensionNumbers"):
        lax.gather(x, np.array([[1]]), ((), (0,), (0,)), (1,))
    with pytest.raises(TypeError, match="scatter-add.*bounds of the scatter dimensions"):
        lax.scatter_add(x, np.array([[1]]), jnp.ones(2), sdn)
    with pytest.raises(TypeError, match="lax.scatter-add requires arguments to have the same"):
        lax.scatter_add(x, np.array([[1]]), jnp.ones(1, jnp.int32), sdn)
    # JAX traces the combining add on the operand's type first, and fails there.
    with pytest.raises(TypeError, match="add does not accept dtype bool at position 0"):
        lax.scatter_add(np.zeros(3, bool), np.array([[1]]), np.ones(1, bool), sdn)
    with pytest.raises(TypeError, match="slice slice_sizes must be less than or equal"):
        lax.dynamic_slice(x, [1], [7])
    with pytest.raises(ValueError, match="Length of slice indices must match number of operand"):
        lax.dynamic_slice(x, [1, 2], [1])
    with pytest.raises(
        TypeError, match="lax.dynamic_update_slice requires arguments to have the same"
    ):
        lax.dynamic_update_slice(x, jnp.ones(2, jnp.int32), [1])
    with pytest.raises(TypeError, match="dynamic_update_slice update shape"):
        jit(lambda x: lax.dynamic_update_slice(x, jnp.ones(7), [1]))(x)
