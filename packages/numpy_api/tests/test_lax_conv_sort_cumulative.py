"""lax's convolution, window reductions, cumulative ops, sort/top_k and generic reduce.

Each is compared, eagerly and under jit, with a small numpy reference (a
direct-loop convolution, a sliding-window reduction, numpy's cumulative
functions and lexsort); derivatives with ``check_grads`` and the dot-product
test; batching rules against a loop over the batch; params through the jaxpr
text format.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from modjax import lax
from modjax.autodiff import grad, jvp, vjp
from modjax.autodiff.testing import check_grads
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, parse_jaxpr

BF16 = np.dtype(ml_dtypes.bfloat16)
F32 = np.dtype(np.float32)


def A(x):
    from modjax.runtime import device_put

    return device_put(np.asarray(x))


def both(fn, *args):
    """Run ``fn`` eagerly and under jit; return the two results as numpy (trees of) arrays."""

    def to_np(out):
        return (
            tuple(np.asarray(o) for o in out) if isinstance(out, tuple | list) else np.asarray(out)
        )

    return to_np(fn(*args)), to_np(jit(fn)(*args))


def assert_close(got, want, tol=1e-5):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype.kind in "fc" or want.dtype == BF16:
        np.testing.assert_allclose(
            got.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
            want.astype(np.complex128 if want.dtype.kind == "c" else np.float64),
            rtol=tol,
            atol=tol,
            equal_nan=True,
        )
    else:
        np.testing.assert_array_equal(got, want)


def round_trip(jaxpr):
    """The jaxpr's text parses back to the same text."""
    text = str(jaxpr)
    assert str(parse_jaxpr(text)) == text


# --- numpy references --------------------------------------------------------------------------


def dilate_dim(d, r):
    return 0 if d == 0 else 1 + r * (d - 1)


def pad_np(x, axis, lo, hi, value):
    if lo < 0:
        x = np.take(x, range(-lo, x.shape[axis]), axis=axis)
        lo = 0
    if hi < 0:
        x = np.take(x, range(x.shape[axis] + hi), axis=axis)
        hi = 0
    widths = [(0, 0)] * x.ndim
    widths[axis] = (lo, hi)
    return np.pad(x, widths, constant_values=value)


def ref_conv(lhs, rhs, strides, padding, lhs_dil, rhs_dil, dnums, fgc=1, bgc=1):
    """XLA's convolution by direct loops over output positions (float64)."""
    lhs_spec, rhs_spec, out_spec = dnums
    x = np.transpose(lhs, lhs_spec).astype(np.float64)
    w = np.transpose(rhs, rhs_spec).astype(np.float64)
    n, c = x.shape[:2]
    o = w.shape[0]
    xd = np.zeros(
        (n, c) + tuple(dilate_dim(s, d) for s, d in zip(x.shape[2:], lhs_dil, strict=True))
    )
    xd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in lhs_dil)] = x
    for k, (lo, hi) in enumerate(padding):
        xd = pad_np(xd, 2 + k, lo, hi, 0)
    wd = np.zeros(
        w.shape[:2] + tuple(dilate_dim(s, d) for s, d in zip(w.shape[2:], rhs_dil, strict=True))
    )
    wd[(slice(None),) * 2 + tuple(slice(None, None, d) for d in rhs_dil)] = w
    osp = [
        (xs - ks) // s + 1 if xs >= ks else 0
        for xs, ks, s in zip(xd.shape[2:], wd.shape[2:], strides, strict=True)
    ]
    out = np.zeros((n // bgc, o, *osp))
    og, cg, nb = o // (fgc * bgc), c // fgc, n // bgc
    axes = tuple(range(1, xd.ndim))
    for pos in np.ndindex(*osp):
        win = xd[
            (slice(None),) * 2
            + tuple(
                slice(p * s, p * s + k) for p, s, k in zip(pos, strides, wd.shape[2:], strict=True)
            )
        ]
        for f in range(o):
            if fgc > 1:
                g = f // og
                part = win[:, g * cg : (g + 1) * cg]
            elif bgc > 1:
                b = f // og
                part = win[b * nb : (b + 1) * nb]
            else:
                part = win
            out[(slice(None), f, *pos)] = np.sum(part * wd[f], axis=axes)
    return np.transpose(out, np.argsort(out_spec))


def ref_reduce_window(x, op, init, wdims, strides, padding, base, wdil):
    """Reduce each window of the dilated and padded ``x`` with ``op`` (a numpy ufunc)."""
    shape = tuple(dilate_dim(d, b) for d, b in zip(x.shape, base, strict=True))
    xd = np.full(shape, init, x.dtype)
    xd[tuple(slice(None, None, b) for b in base)] = x
    for axis, (lo, hi) in enumerate(padding):
        xd = pad_np(xd, axis, lo, hi, init)
    spans = [dilate_dim(w, d) for w, d in zip(wdims, wdil, strict=True)]
    oshape = [
        (p - s) // st + 1 if p >= s else 0
        for p, s, st in zip(xd.shape, spans, strides, strict=True)
    ]
    out = np.full(oshape, init, x.dtype)
    for pos in np.ndindex(*oshape):
        win = xd[
            tuple(
                slice(p * st, p * st + s, d)
                for p, st, s, d in zip(pos, strides, spans, wdil, strict=True)
            )
        ]
        out[pos] = op.reduce(win.ravel(), initial=init) if win.size else init
    return out


# --- convolution -------------------------------------------------------------------------------

CONV_CASES = [
    # lhs shape, rhs shape, strides, padding, lhs_dilation, rhs_dilation, dnums, fgc, bgc
    ((2, 3, 6, 5), (4, 3, 3, 2), (1, 1), ((1, 1), (0, 2)), (1, 1), (1, 1), None, 1, 1),
    ((2, 4, 6, 5), (6, 2, 3, 2), (2, 1), ((1, 0), (0, 1)), (2, 1), (1, 2), None, 2, 1),
    ((4, 3, 5), (6, 3, 2), (1,), ((1, -1),), (1,), (2,), None, 1, 2),
    ((2, 6, 5, 3), (3, 2, 3, 4), (1, 2), "SAME", (1, 1), (1, 1), ("NHWC", "HWIO", "NHWC"), 1, 1),
    (
        (3, 6, 4, 5),
        (2, 6, 3, 2),
        (1, 2),
        ((0, 0), (1, 1)),
        (1, 2),
        (1, 1),
        ("HNCW", "WOHI", "CWNH"),
        2,
        1,
    ),
    (
        (4, 6, 2, 5),
        (2, 6, 3, 2),
        (2, 3),
        ((0, 1), (1, 1)),
        (1, 1),
        (2, 1),
        ("HNCW", "WOHI", "CWNH"),
        1,
        2,
    ),
]


def _conv_fn(case):
    _, _, strides, padding, ld, rd, dn, fgc, bgc = case
    return lambda lhs, rhs: lax.conv_general_dilated(
        lhs, rhs, strides, padding, ld, rd, dn, feature_group_count=fgc, batch_group_count=bgc
    )


def _conv_reference(case, lhs, rhs):
    _, _, strides, padding, ld, rd, dn, fgc, bgc = case
    dnums = lax.conv_dimension_numbers(lhs.shape, rhs.shape, dn)
    if isinstance(padding, str):
        lhs_sp = [lhs.shape[d] for d in dnums.lhs_spec[2:]]
        rhs_sp = [dilate_dim(rhs.shape[d], r) for d, r in zip(dnums.rhs_spec[2:], rd, strict=True)]
        padding = lax.padtype_to_pads(lhs_sp, rhs_sp, strides, padding)
    return ref_conv(lhs, rhs, strides, padding, ld, rd, dnums, fgc, bgc)


@pytest.mark.parametrize("case", CONV_CASES, ids=range(len(CONV_CASES)))
def test_conv_general_dilated_against_loops(case):
    rng = np.random.default_rng(0)
    lhs = rng.standard_normal(case[0]).astype(np.float32)
    rhs = rng.standard_normal(case[1]).astype(np.float32)
    want = _conv_reference(case, lhs, rhs)
    for got in both(_conv_fn(case), A(lhs), A(rhs)):
        assert_close(got, want, 1e-4)


@pytest.mark.parametrize("case", CONV_CASES, ids=range(len(CONV_CASES)))
def test_conv_transposes_pass_the_dot_product_test(case):
    rng = np.random.default_rng(1)
    lhs = rng.standard_normal(case[0]).astype(np.float32)
    rhs = rng.standard_normal(case[1]).astype(np.float32)
    out, pullback = vjp(_conv_fn(case), A(lhs), A(rhs))
    ct = rng.standard_normal(out.shape).astype(np.float32)
    lhs_ct, rhs_ct = pullback(A(ct))
    assert lhs_ct.shape == lhs.shape and rhs_ct.shape == rhs.shape
    value = np.sum(ct.astype(np.float64) * np.asarray(out))
    np.testing.assert_allclose(np.sum(np.asarray(lhs_ct) * lhs.astype(np.float64)), value, 1e-4)
    np.testing.assert_allclose(np.sum(np.asarray(rhs_ct) * rhs.astype(np.float64)), value, 1e-4)


@pytest.mark.parametrize("case", [CONV_CASES[i] for i in (1, 2, 4, 5)], ids=[1, 2, 4, 5])
def test_conv_batching_rule_matches_a_loop(case):
    rng = np.random.default_rng(2)
    b = 3
    f = _conv_fn(case)
    lhs = rng.standard_normal((b, *case[0])).astype(np.float32)
    rhs = rng.standard_normal((b, *case[1])).astype(np.float32)
    for in_axes in ((0, 0), (0, None), (None, 1)):
        args = [
            x[0] if ax is None else np.moveaxis(x, 0, ax)
            for x, ax in zip((lhs, rhs), in_axes, strict=True)
        ]
        got = np.asarray(vmap(f, in_axes=in_axes)(*map(A, args)))
        want = np.stack(
            [
                np.asarray(
                    f(
                        A(lhs[i] if in_axes[0] is not None else lhs[0]),
                        A(rhs[i] if in_axes[1] is not None else rhs[0]),
                    )
                )
                for i in range(b)
            ]
        )
        assert_close(got, want, 1e-4)


@given(
    st.sampled_from([1, 2]),
    st.sampled_from([1, 2]),
    st.sampled_from([1, 2]),
    st.sampled_from(["VALID", "SAME", ((1, 0), (0, 2))]),
    st.sampled_from([(1, 1), (2, 1)]),
    st.sampled_from([(1, 1), (1, 2)]),
)
def test_conv_hypothesis_against_loops(groups, stride, kernel, padding, lhs_dil, rhs_dil):
    rng = np.random.default_rng(3)
    lhs = rng.standard_normal((2, 2 * groups, 5, 4)).astype(np.float32)
    rhs = rng.standard_normal((2 * groups, 2, kernel + 1, kernel)).astype(np.float32)
    case = (lhs.shape, rhs.shape, (stride, 1), padding, lhs_dil, rhs_dil, None, groups, 1)
    if isinstance(padding, str) and lhs_dil != (1, 1):  # JAX refuses: the size is ambiguous
        with pytest.raises(ValueError, match="String padding is not implemented"):
            _conv_fn(case)(A(lhs), A(rhs))
        return
    assert_close(_conv_fn(case)(A(lhs), A(rhs)), _conv_reference(case, lhs, rhs), 1e-4)


def test_conv_and_conv_with_general_padding():
    rng = np.random.default_rng(4)
    lhs = rng.standard_normal((1, 2, 5, 5)).astype(np.float32)
    rhs = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, None)
    assert_close(
        lax.conv(A(lhs), A(rhs), (1, 1), "VALID"),
        ref_conv(lhs, rhs, (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), dn),
        1e-4,
    )
    got = lax.conv_with_general_padding(A(lhs), A(rhs), (2, 1), ((1, 1), (0, 0)), (1, 2), (2, 1))
    assert_close(got, ref_conv(lhs, rhs, (2, 1), ((1, 1), (0, 0)), (1, 2), (2, 1), dn), 1e-4)


def test_conv_dimension_numbers_from_strings():
    dn = lax.conv_dimension_numbers((2, 5, 6, 3), (3, 4, 3, 7), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    # spatial dimensions are matched by letter, in the kernel's order
    dn = lax.conv_dimension_numbers((2, 5, 6, 3), (3, 4, 3, 7), ("NWHC", "HWIO", "NCHW"))
    assert dn.lhs_spec == (0, 3, 2, 1) and dn.out_spec == (0, 1, 2, 3)
    with pytest.raises(TypeError, match="spatial"):
        lax.conv_dimension_numbers((1, 1, 1, 1), (1, 1, 1, 1), ("NHWC", "HXIO", "NHWC"))


def test_conv_integer_preferred_type_zero_size_and_errors():
    x = np.arange(2 * 3 * 4, dtype=np.int8).reshape(2, 3, 4) % 5
    w = np.ones((2, 3, 2), np.int8)
    out = lax.conv_general_dilated(A(x), A(w), (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    dn = lax.conv_dimension_numbers(x.shape, w.shape, None)
    assert_close(out, ref_conv(x, w, (1,), ((0, 0),), (1,), (1,), dn).astype(np.int32))
    empty = lax.conv_general_dilated(
        A(np.zeros((0, 3, 4), np.float32)), A(np.ones((2, 3, 2), np.float32)), (1,), "VALID"
    )
    assert empty.shape == (0, 2, 3)
    with pytest.raises(TypeError, match=r"conv_general_dilated.*same dtype.*float32.*int8"):
        lax.conv_general_dilated(A(x.astype(np.float32)), A(w), (1,), "VALID")
    with pytest.raises(ValueError, match="feature_group_count"):
        lax.conv_general_dilated(A(x), A(w), (1,), "VALID", feature_group_count=2)
    with pytest.raises(ValueError, match="window and window_strides must have the same number"):
        lax.conv_general_dilated(A(x), A(w), (1, 1), "VALID")


def test_conv_gradients_and_jaxpr_text():
    rng = np.random.default_rng(5)
    lhs = A(rng.standard_normal((1, 2, 4, 4)).astype(np.float32))
    rhs = A(rng.standard_normal((2, 1, 2, 2)).astype(np.float32))

    def f(x, w):
        return lax.conv_general_dilated(
            x, w, (1, 1), "SAME", rhs_dilation=(1, 2), feature_group_count=2
        )

    check_grads(f, (lhs, rhs), order=1, eps=1e-2, atol=1e-2, rtol=1e-2)
    jaxpr = make_jaxpr(f)(lhs, rhs)
    assert "ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3)" in str(jaxpr)
    round_trip(jaxpr)
    round_trip(
        make_jaxpr(lambda x, w: lax.conv(x, w, (1, 1), "VALID", precision="highest"))(
            lhs, A(np.ones((1, 2, 2, 2), np.float32))
        )
    )


# --- window reductions --------------------------------------------------------------------------

WINDOW_OPS = {
    "sum": (lax.add, np.add, 0.0),
    "max": (lax.max, np.maximum, -np.inf),
    "min": (lax.min, np.minimum, np.inf),
}


@given(
    st.sampled_from(sorted(WINDOW_OPS)),
    st.sampled_from([(2, 2), (1, 3), (3, 1)]),
    st.sampled_from([(1, 1), (2, 1), (1, 2)]),
    st.sampled_from(["VALID", "SAME", ((1, 0), (2, 1)), ((0, -1), (1, 1))]),
    st.sampled_from([(1, 1), (2, 1)]),
    st.sampled_from([(1, 1), (1, 2)]),
)
def test_reduce_window_against_sliding_windows(name, wdims, strides, padding, base, wdil):
    lax_op, np_op, init = WINDOW_OPS[name]
    x = np.random.default_rng(6).standard_normal((4, 5)).astype(np.float32)
    pads = (
        lax.padtype_to_pads(x.shape, wdims, strides, padding)
        if isinstance(padding, str)
        else padding
    )
    want = ref_reduce_window(x, np_op, np.float32(init), wdims, strides, pads, base, wdil)

    def f(x):
        return lax.reduce_window(x, init, lax_op, wdims, strides, padding, base, wdil)

    for got in both(f, A(x)):
        assert_close(got, want, 1e-5)


def test_reduce_window_dtypes_zero_size_and_generic():
    x = np.arange(12, dtype=np.int8).reshape(3, 4) * 30  # wraps
    got = lax.reduce_window(A(x), 0, lax.add, (2, 2), (1, 1), "VALID")
    assert got.dtype == np.int8
    assert_close(
        got, ref_reduce_window(x, np.add, np.int8(0), (2, 2), (1, 1), ((0, 0),) * 2, (1, 1), (1, 1))
    )
    b = np.array([[True, False], [False, False]])
    assert_close(lax.reduce_window(A(b), False, lax.max, (2, 1), (1, 1), "VALID"), [[True, False]])
    empty = lax.reduce_window(A(np.zeros((0, 3), np.float32)), 0.0, lax.add, (1, 2), None, "VALID")
    assert empty.shape == (0, 2)
    xf = np.random.default_rng(7).standard_normal((3, 4)).astype(np.float32)
    # a computation that is not a known monoid goes through the generic primitive
    prod = lax.reduce_window(A(xf), np.float32(1), lax.mul, (2, 2), (1, 2), "SAME")
    jaxpr = make_jaxpr(
        lambda x: lax.reduce_window(x, np.float32(1), lax.mul, (2, 2), (1, 2), "SAME")
    )(A(xf))
    assert "reduce_window[" in str(jaxpr)
    round_trip(jaxpr)
    pads = lax.padtype_to_pads(xf.shape, (2, 2), (1, 2), "SAME")
    assert_close(
        prod,
        ref_reduce_window(xf, np.multiply, np.float32(1), (2, 2), (1, 2), pads, (1, 1), (1, 1)),
        1e-5,
    )
    # variadic: (max, sum) of pairs
    m, s = lax.reduce_window(
        (A(xf), A(xf)),
        (-np.inf, 0.0),
        lambda a, b: (lax.max(a[0], b[0]), lax.add(a[1], b[1])),
        (1, 2),
        (1, 1),
        "VALID",
    )
    assert_close(m, np.maximum(xf[:, :-1], xf[:, 1:]))
    assert_close(s, xf[:, :-1] + xf[:, 1:], 1e-6)
    with pytest.raises(TypeError, match="reduce_window.*window_dimensions"):
        lax.reduce_window(A(xf), 0.0, lax.add, (2,), None, "VALID")


def test_reduce_window_gradients_as_jax():
    x = A(np.array([[3, 1, 4, 1], [5, 9, 2, 6], [5, 3, 5, 8.0]], np.float32))

    def pool(x):
        return lax.reduce_window(x, -np.inf, lax.max, (2, 2), (2, 1), ((1, 0), (0, 1)), (2, 1))

    ct = A(np.arange(12.0, dtype=np.float32).reshape(3, 4))
    _, pullback = vjp(pool, x)
    # JAX 0.10.2 gives these (a max pool with base dilation: select_and_scatter_add)
    assert_close(pullback(ct)[0], [[0, 0, 3, 3], [0, 9, 0, 13], [8, 0, 9, 21.0]])

    def window_sum(x):
        return lax.reduce_window(x, 0.0, lax.add, (2, 2), (2, 1), ((1, 0), (0, 1)), (2, 1), (1, 2))

    assert_close(
        grad(lambda x: lax.reduce_sum(window_sum(x), (0, 1)))(x),
        [[1, 1, 2, 1], [1, 1, 2, 1], [1, 1, 2, 1]],
    )
    check_grads(jit(pool), (x,), order=2, eps=1e-2, atol=1e-2, rtol=1e-2)
    check_grads(jit(window_sum), (x,), order=1, eps=1e-2, atol=1e-2, rtol=1e-2)
    round_trip(make_jaxpr(lambda x, t: jvp(pool, (x,), (t,)))(x, x))
    got = vmap(pool)(A(np.stack([np.asarray(x), -np.asarray(x)])))
    assert_close(got, np.stack([np.asarray(pool(x)), np.asarray(pool(A(-np.asarray(x))))]))


# --- cumulative reductions ------------------------------------------------------------------------

CUMULATIVE = {
    "cumsum": (lax.cumsum, np.cumsum),
    "cumprod": (lax.cumprod, np.cumprod),
    "cummax": (lax.cummax, np.maximum.accumulate),
    "cummin": (lax.cummin, np.minimum.accumulate),
    "cumlogsumexp": (lax.cumlogsumexp, np.logaddexp.accumulate),
}


def _cumulative_reference(np_fn, x, axis, reverse):
    if reverse:
        return np.flip(np_fn(np.flip(x, axis), axis=axis), axis)
    return np_fn(x, axis=axis)


@given(
    st.sampled_from(sorted(CUMULATIVE)),
    st.sampled_from([np.float32, np.int32, np.float16]),
    st.sampled_from([0, 1]),
    st.booleans(),
)
def test_cumulative_against_numpy(name, dtype, axis, reverse):
    lax_fn, np_fn = CUMULATIVE[name]
    if name == "cumlogsumexp" and dtype is np.int32:
        dtype = np.float32
    rng = np.random.default_rng(8)
    x = rng.integers(-3, 4, (3, 4)) if dtype is np.int32 else rng.uniform(-2, 2, (3, 4))
    x = x.astype(dtype)
    want = _cumulative_reference(np_fn, x.astype(np.float64), axis, reverse)
    for got in both(lambda x: lax_fn(x, axis=axis, reverse=reverse), A(x)):
        assert got.dtype == dtype
        assert_close(got, want.astype(dtype), 2e-2 if dtype is np.float16 else 1e-5)


def test_cumulative_dtypes_nan_complex_and_edge_shapes():
    x8 = np.array([100, 100, 100], np.int8)
    assert_close(lax.cumsum(A(x8)), np.array([100, -56, 44], np.int8))  # int8 stays int8, wraps
    assert lax.cumsum(A(x8)).dtype == np.int8
    assert_close(
        lax.cummax(A(np.array([1.0, np.nan, 0.0, 3.0], np.float32))), [1.0, np.nan, np.nan, np.nan]
    )
    c = np.array([1 + 1j, 1 - 1j, 0j], np.complex64)
    assert_close(lax.cummin(A(c)), c)
    assert_close(lax.cumsum(A(c), reverse=True), np.array([2, 1 - 1j, 0j], np.complex64))
    assert lax.cumsum(A(np.zeros((0, 3), np.float32))).shape == (0, 3)
    assert_close(lax.cumprod(A(np.array([2.0], np.float32))), [2.0])
    assert_close(
        lax.cumlogsumexp(A(np.array([-np.inf, -np.inf, 0.0], np.float32))), [-np.inf, -np.inf, 0.0]
    )
    with pytest.raises(TypeError, match="cumsum does not accept dtype bool"):
        lax.cumsum(A(np.array([True])))
    with pytest.raises(OverflowError, match="cannot convert float infinity to integer"):
        lax.cumlogsumexp(A(np.array([1], np.int32)))  # JAX's -inf identity as an integer
    with pytest.raises(ValueError, match="axis 2 is out of bounds"):
        lax.cumsum(A(np.ones((2, 3), np.float32)), axis=2)
    with pytest.raises(ValueError, match="axis 0 is out of bounds"):
        lax.cumsum(A(np.float32(1)))
    with pytest.raises(ValueError, match="negative axes"):
        lax.cumsum(A(np.ones(3, np.float32)), axis=-1)


def test_cumulative_gradients_as_jax():
    x = A(np.array([1.0, 1.0, 1.0, 2.0, 2.0, 0.0], np.float32))
    # JAX 0.10.2: ties split the tangent at each combine of its associative scan
    assert_close(
        jit(grad(lambda x: lax.reduce_sum(lax.cummax(x), (0,))))(x),
        [1.75, 0.75, 0.5, 2.0, 1.0, 0.0],
    )
    assert_close(
        jit(grad(lambda x: lax.reduce_sum(lax.cummin(x, reverse=True), (0,))))(x),
        [0, 0, 0, 0, 0, 6.0],
    )
    assert_close(
        jit(grad(lambda x: lax.reduce_sum(lax.cumprod(x), (0,))))(
            A(np.array([1.0, 0.0, 2.0, 3.0], np.float32))
        ),
        [1.0, 9.0, 0.0, 0.0],
    )
    _, pullback = vjp(lambda x: lax.cumsum(x, reverse=True), x)
    assert_close(pullback(A(np.arange(6.0, dtype=np.float32)))[0], [0, 1, 3, 6, 10, 15])
    y = A(np.random.default_rng(9).uniform(0.5, 2, (3, 4)).astype(np.float32))
    for fn in (lax.cumsum, lax.cumprod, lax.cumlogsumexp):
        check_grads(
            jit(lambda y, fn=fn: fn(y, axis=1, reverse=True)),
            (y,),
            order=1,
            eps=1e-2,
            atol=2e-2,
            rtol=2e-2,
        )
    round_trip(make_jaxpr(lambda x: lax.cumsum(x, axis=0, reverse=True))(x))


def test_cumulative_batching_and_associative_scan():
    xs = np.random.default_rng(10).standard_normal((3, 2, 4)).astype(np.float32)
    for name, (fn, _) in CUMULATIVE.items():
        got = vmap(lambda x, fn=fn: fn(x, axis=1), in_axes=2, out_axes=0)(A(xs))
        want = np.stack([np.asarray(fn(A(xs[:, :, i]), axis=1)) for i in range(4)])
        assert_close(got, want, 1e-5), name
    out = lax.associative_scan(lax.add, A(xs), axis=2, reverse=True)
    assert_close(out, np.flip(np.cumsum(np.flip(xs, 2), 2), 2), 1e-5)
    pair = lax.associative_scan(
        lambda a, b: (lax.add(a[0], b[0]), lax.max(a[1], b[1])), (A(xs[0, 0]), A(xs[0, 1]))
    )
    assert_close(pair[0], np.cumsum(xs[0, 0]), 1e-5)
    assert_close(pair[1], np.maximum.accumulate(xs[0, 1]))


# --- sort and top_k -------------------------------------------------------------------------------

# floats with NaNs, signed zeros and infinities; the reference order is JAX's
SPECIAL = np.array([0.0, -0.0, np.nan, -np.inf, 1.5, np.inf, -2.0, 1.5, np.nan, 0.0], np.float32)


def sort_key(x):
    """numpy keys giving JAX's sort order: -0.0 equals 0.0, NaN after everything."""
    x = np.asarray(x, np.float64)
    return np.where(np.isnan(x), np.inf, x), np.isnan(x)


def ref_sort_indices(*keys):
    """Stable lexicographic order of ``keys`` (first most significant), in JAX's order."""
    columns = []
    for k in reversed(keys):
        if np.asarray(k).dtype.kind == "f":
            value, nan = sort_key(k)
            columns += [value, nan]
        else:
            columns.append(np.asarray(k))
    return np.lexsort(columns)


def test_sort_orders_nans_zeros_and_ties_as_jax():
    got = np.asarray(lax.sort(A(SPECIAL)))
    assert_close(got, SPECIAL[ref_sort_indices(SPECIAL)])
    assert list(np.signbit(got[2:5])) == [False, True, False]  # stable: zeros keep their order
    keys, idx = lax.sort_key_val(A(SPECIAL), A(np.arange(10, dtype=np.int32)))
    assert_close(idx, ref_sort_indices(SPECIAL))
    c = np.array([1 + 1j, 1 - 1j, np.nan + 0j, 0j, -1 + 5j], np.complex64)
    assert_close(lax.sort(A(c)), np.array([-1 + 5j, 0j, 1 - 1j, 1 + 1j, np.nan], np.complex64))
    assert_close(lax.sort(A(np.array([True, False, True]))), [False, True, True])
    u = np.array([3, 0, 255, 7], np.uint8)
    assert_close(lax.sort(A(u)), np.sort(u))


@given(
    st.lists(st.sampled_from([0.0, -0.0, 1.0, -1.0, np.nan, np.inf]), min_size=6, max_size=6),
    st.lists(st.integers(0, 2), min_size=6, max_size=6),
)
def test_sort_multiple_operands_and_keys(values, ints):
    f = np.array(values, np.float32)
    i = np.array(ints, np.int32)
    payload = np.arange(6, dtype=np.float32)
    for num_keys, keys in ((1, (i,)), (2, (i, f))):
        order = ref_sort_indices(*keys)
        out = lax.sort(
            (A(i), A(f), A(payload)) if num_keys == 2 else (A(i), A(payload)), num_keys=num_keys
        )
        assert_close(out[-1], payload[order])
    out = jit(lambda a, b: lax.sort((a, b), dimension=0, num_keys=2))(A(f), A(i))
    assert_close(out[1], i[ref_sort_indices(f, i)])


def test_sort_dimension_zero_size_gradients_and_errors():
    x = np.random.default_rng(11).standard_normal((3, 4)).astype(np.float32)
    assert_close(lax.sort(A(x), dimension=0), np.sort(x, axis=0))
    assert lax.sort(A(np.zeros((0,), np.float32))).shape == (0,)
    check_grads(
        jit(lambda x: lax.sort(x, dimension=0)), (A(x),), order=2, eps=1e-2, atol=1e-2, rtol=1e-2
    )
    check_grads(
        jit(lambda k, v: lax.sort_key_val(k, v)[1]),
        (A(x), A(x * 3)),
        order=1,
        eps=1e-2,
        atol=1e-2,
        rtol=1e-2,
    )
    with pytest.raises(TypeError, match="Arguments to sort must have equal shapes"):
        lax.sort((A(np.ones(3, np.float32)), A(np.ones(4, np.float32))))
    with pytest.raises(ValueError, match="num_keys=2 must equal 1"):
        lax.sort(A(np.ones(3, np.float32)), num_keys=2)
    with pytest.raises(ValueError, match="out of bounds"):
        lax.sort(A(np.float32(1)))


def test_top_k_values_indices_gradients():
    x = np.array([1.0, np.nan, 3.0, 3.0, -0.0, 0.0], np.float32)
    values, indices = lax.top_k(A(x), 4)
    assert_close(values, [np.nan, 3.0, 3.0, 1.0])
    assert_close(indices, np.array([1, 2, 3, 0], np.int32))
    v, i = lax.top_k(A(np.array([0.0, -0.0, 0.0, -0.0], np.float32)), 4)
    assert_close(i, np.array([0, 2, 1, 3], np.int32))  # 0.0 ranks above -0.0, as in JAX
    m = np.random.default_rng(12).permutation(12).astype(np.float32).reshape(3, 4)
    for axis in (0, 1):
        vals, idx = both(lambda m, axis=axis: lax.top_k(m, 2, axis=axis), A(m))[0]
        want_idx = np.flip(np.argsort(m, axis=axis), axis).take(range(2), axis=axis)
        assert_close(idx, want_idx.astype(np.int32))
        assert_close(vals, np.take_along_axis(m, want_idx, axis))
    assert lax.top_k(A(m), 0)[0].shape == (3, 0)
    check_grads(
        jit(lambda m: lax.top_k(m, 2, axis=0)[0]), (A(m),), order=2, eps=1e-2, atol=1e-2, rtol=1e-2
    )
    round_trip(make_jaxpr(lambda m: lax.top_k(m, 2, axis=0))(A(m)))
    got = vmap(lambda m: lax.top_k(m, 2)[1], in_axes=1)(A(m))
    assert_close(got, np.stack([np.asarray(lax.top_k(A(m[:, j]), 2)[1]) for j in range(4)]))
    with pytest.raises(ValueError, match="no larger than size along axis"):
        lax.top_k(A(np.ones(3, np.float32)), 4)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(A(np.ones(3, np.float32)), -1)
    with pytest.raises(ValueError, match="complex"):
        lax.top_k(A(np.ones(3, np.complex64)), 1)


def test_sort_batching_and_jaxpr_text():
    xs = np.random.default_rng(13).standard_normal((2, 3, 4)).astype(np.float32)
    ys = np.arange(3, dtype=np.int32)
    got = vmap(lambda x, y: lax.sort((x, y), dimension=0), in_axes=(1, None))(A(xs[0]), A(ys))
    for j in range(4):
        order = np.argsort(xs[0][:, j], kind="stable")
        assert_close(got[0][j], xs[0][:, j][order])
        assert_close(got[1][j], ys[order])
    ys = np.arange(12, dtype=np.int32).reshape(3, 4)
    jaxpr = make_jaxpr(lambda x, y: lax.sort((x, y), num_keys=1, is_stable=False))(A(xs[0]), A(ys))
    assert "sort[dimension=1 is_stable=False num_keys=1]" in str(jaxpr)
    round_trip(jaxpr)


# --- generic reduce and reduce_precision ----------------------------------------------------------


def test_reduce_monoids_generic_and_variadic():
    x = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4)
    jaxpr = make_jaxpr(lambda x: lax.reduce(x, 0.0, lax.add, (0,)))(A(x))
    assert "reduce_sum" in str(jaxpr)
    assert_close(lax.reduce(A(x), 0.0, lax.add, (0,)), x.sum(0))
    assert_close(lax.reduce(A(x), -np.inf, lax.max, (1,)), x.max(1))
    # not the identity: a generic reduce with the init folded in
    got = both(lambda x: lax.reduce(x, np.float32(100.0), lax.max, (1,)), A(x))
    for g in got:
        assert_close(g, np.maximum(x.max(1), 100.0))
    i = np.array([[3, 1, 4], [1, 5, 9]], np.int32)
    vals, idx = lax.reduce(
        (A(i.astype(np.float32)), A(np.broadcast_to(np.arange(3, dtype=np.int32), (2, 3)))),
        (np.float32(-np.inf), np.int32(0)),
        lambda a, b: (
            lax.max(a[0], b[0]),
            lax.select_n(lax.ge(a[0], b[0]), b[1], a[1]),
        ),
        (1,),
    )
    assert_close(vals, i.max(1).astype(np.float32))
    assert_close(idx, i.argmax(1).astype(np.int32))
    jaxpr = make_jaxpr(lambda x: lax.reduce(x, np.float32(1), lambda a, b: lax.mul(a, b), (1,)))(
        A(x)
    )
    assert "reduce[" in str(jaxpr)
    round_trip(jaxpr)
    out, tangent = jvp(
        lambda x: lax.reduce(x, np.float32(1), lambda a, b: lax.mul(a, b), (1,)),
        (A(x),),
        (A(np.ones_like(x)),),
    )
    assert_close(out, x.prod(1), 1e-5)
    assert_close(tangent, [np.sum(np.prod(r) / r) for r in x], 1e-5)
    got = vmap(lambda x: lax.reduce(x, np.float32(1), lambda a, b: lax.mul(a, b), (0,)))(A(x))
    assert_close(got, x.prod(1), 1e-5)
    with pytest.raises(TypeError, match="reduce operand dtypes should match"):
        lax.reduce(A(x), np.int32(0), lambda a, b: lax.max(a, b), (0,))


def test_reduce_precision_matches_narrow_float_casts():
    x = np.random.default_rng(14).standard_normal(64).astype(np.float32) * 100
    assert_close(lax.reduce_precision(A(x), 5, 10), x.astype(np.float16).astype(np.float32))
    assert_close(lax.reduce_precision(A(x), 8, 7), x.astype(BF16).astype(np.float32))
    big = np.array([1e10, -1e10, np.nan], np.float32)
    assert_close(lax.reduce_precision(A(big), 5, 10), [np.inf, -np.inf, np.nan])
    _, t = jvp(lambda x: lax.reduce_precision(x, 5, 10), (A(x),), (A(x),))
    assert_close(t, x.astype(np.float16).astype(np.float32))
    with pytest.raises(TypeError, match="reduce_precision does not accept dtype int32"):
        lax.reduce_precision(A(np.int32(1)), 5, 10)
    with pytest.raises(ValueError, match="exponent_bits"):
        lax.reduce_precision(A(x), 0, 10)
    assert math.isclose(
        float(lax.reduce_precision(1.0 / 3.0, 8, 7)), float(np.float32(1 / 3).astype(BF16))
    )
