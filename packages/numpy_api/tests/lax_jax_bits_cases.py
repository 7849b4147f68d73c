"""lax calls whose values, gradients and errors must equal JAX 0.10.2's bit for bit.

Each case is ``(kind, fn, args)`` with ``fn(lax, jnp, *args)``, so the same source runs
under JAX (``lax_jax_bits_sweep_gen.py`` records the answers) and under modjax (the test
``test_lax_jax_bits_sweep.py``). ``kind`` is ``"value"`` (the jitted result: bits, dtype,
shape, weak type), or ``"grad"`` (the jitted VJP of ``fn`` in all its arguments at the
cotangent ``cotangent(shape, dtype)``); where JAX raises, the exception's type and first
line are the answer. The arrays are arguments of the jitted function, never constants
in it (XLA would fold constants with other rounding).
"""

import numpy as np

F16, F32 = np.float16, np.float32
I8, I16, I32 = np.int8, np.int16, np.int32


def _r(shape, dtype=F32, seed=0):
    x = np.random.RandomState(seed).standard_normal(shape)
    if np.dtype(dtype).kind in "iu":
        x = np.round(3 * x)
    return x.astype(dtype)


def cotangent(shape, dtype):
    """The fixed cotangent a ``grad`` case pulls back."""
    n = int(np.prod(shape))
    return (np.sin(np.arange(n) * 1.7 + 0.3) * 2).reshape(shape).astype(dtype)


CASES = {}


def _case(kind, name, fn, *args):
    CASES[name] = (kind, fn, list(args))


def _value_and_grad(name, fn, *args):
    _case("value", name, fn, *args)
    _case("grad", name, fn, *args)


# --- convolutions ----------------------------------------------------------------------------
X, W = _r((2, 3, 7, 6)), _r((4, 3, 3, 2), seed=1)
XN, WN = _r((2, 7, 6, 3), seed=2), _r((3, 2, 3, 4), seed=3)
_value_and_grad("conv_same_s2", lambda lax, jnp, x, w: lax.conv(x, w, (2, 2), "SAME"), X, W)
_value_and_grad(
    "conv_dilated_pairs",
    lambda lax, jnp, x, w: lax.conv_general_dilated(
        x, w, (2, 1), [(1, 2), (-1, 1)], lhs_dilation=(2, 1), rhs_dilation=(1, 2)
    ),
    X,
    W,
)
_value_and_grad(
    "conv_nhwc_fgc",
    lambda lax, jnp, x, w: lax.conv_general_dilated(
        x,
        w,
        (1, 1),
        "SAME_LOWER",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=3,
    ),
    XN,
    _r((3, 2, 1, 6), seed=4),
)
_value_and_grad(
    "conv_bgc",
    lambda lax, jnp, x, w: lax.conv_general_dilated(x, w, (1, 1), "VALID", batch_group_count=2),
    _r((4, 3, 5, 5), seed=5),
    _r((4, 3, 2, 2), seed=6),
)
_value_and_grad(
    "conv_transpose",
    lambda lax, jnp, x, w: lax.conv_transpose(
        x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")
    ),
    XN,
    _r((3, 3, 3, 4), seed=7),
)
_case(
    "value",
    "conv_f16_pet",
    lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "SAME", preferred_element_type=np.float32),
    X.astype(F16),
    W.astype(F16),
)
_case(
    "value",
    "conv_int8_pet",
    lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "SAME", preferred_element_type=np.int32),
    _r((2, 3, 7, 6), I8),
    _r((4, 3, 3, 2), I8, seed=1),
)
# JAX lowers complex convolutions on CPU/GPU to three real ones (Gauss's trick).
_case(
    "value",
    "conv_complex",
    lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "SAME"),
    (X + 1j * X).astype(np.complex64),
    (W - 1j * W).astype(np.complex64),
)
_err = {
    "conv_mixed_dtypes": (lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "SAME"), X, W.astype(F16)),
    "conv_bad_padding": (lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "FOO"), X, W),
    "conv_strides_length": (lambda lax, jnp, x, w: lax.conv(x, w, (1,), "SAME"), X, W),
    "conv_features": (lambda lax, jnp, x, w: lax.conv(x, w, (1, 1), "SAME"), X, _r((4, 2, 3, 2))),
    "conv_fgc_divides": (
        lambda lax, jnp, x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", feature_group_count=2
        ),
        X,
        W,
    ),
    "conv_both_groups": (
        lambda lax, jnp, x, w: lax.conv_general_dilated(
            x, w, (1, 1), "SAME", feature_group_count=2, batch_group_count=2
        ),
        _r((2, 4, 5, 5)),
        _r((4, 2, 3, 3)),
    ),
}

# --- reduce_window ---------------------------------------------------------------------------
XW = _r((2, 7, 6, 3), seed=8)


def _rw(init, op, dims, strides, padding, **kw):
    def f(lax, jnp, x):
        return lax.reduce_window(x, init, getattr(lax, op), dims, strides, padding, **kw)

    return f


_value_and_grad("max_pool_same", _rw(-np.inf, "max", (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), XW)
_value_and_grad(
    "max_pool_ties", _rw(-np.inf, "max", (1, 3, 3, 1), (1, 1, 1, 1), "SAME"), np.round(XW)
)
_value_and_grad(
    "max_pool_base_dilation",
    _rw(-np.inf, "max", (1, 3, 2, 1), (1, 2, 2, 1), "SAME", base_dilation=(1, 2, 2, 1)),
    XW,
)
_value_and_grad(
    "min_pool_pairs",
    _rw(np.inf, "min", (1, 3, 3, 1), (1, 2, 1, 1), [(0, 0), (2, 1), (1, 1), (0, 0)]),
    XW,
)
_value_and_grad("sum_pool_same", _rw(0.0, "add", (1, 3, 3, 1), (1, 2, 2, 1), "SAME"), XW)
# SAME pads for the window as dilated (modjax padded for the undilated window).
_value_and_grad(
    "sum_pool_same_window_dilation",
    _rw(0.0, "add", (1, 2, 2, 1), (1, 1, 1, 1), "SAME", window_dilation=(1, 2, 2, 1)),
    XW,
)
_value_and_grad(
    "sum_pool_both_dilations",
    _rw(
        0.0,
        "add",
        (1, 2, 3, 1),
        (1, 2, 1, 1),
        [(0, 0), (1, 2), (0, 1), (0, 0)],
        base_dilation=(1, 2, 1, 1),
        window_dilation=(1, 1, 2, 1),
    ),
    XW,
)
_case(
    "grad",
    "avg_pool",
    lambda lax, jnp, x: (
        lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    ),
    XW,
)
_err["reduce_window_dims_length"] = (_rw(0.0, "add", (1, 3, 3), (1, 2, 2, 1), "SAME"), XW)
_err["reduce_window_dims_valid"] = (_rw(0.0, "add", (1, 3, 3), (1, 2, 2), "VALID"), XW)
_err["reduce_window_strides_valid"] = (_rw(0.0, "add", (1, 3, 3, 1), (1, 2, 2), "VALID"), XW)
_err["reduce_window_bad_padding"] = (_rw(0.0, "add", (1, 3, 3, 1), (1, 2, 2, 1), "FOO"), XW)
_case(
    "grad",
    "max_pool_window_dilation",  # JAX's NotImplementedError
    _rw(-np.inf, "max", (1, 2, 2, 1), (1, 1, 1, 1), "VALID", window_dilation=(1, 2, 1, 1)),
    XW,
)

# --- cumulative ops --------------------------------------------------------------------------
XC = _r((5, 6), seed=9)
for _op in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    for _axis, _rev in ((0, True), (1, False)):
        _value_and_grad(
            f"{_op}_axis{_axis}_reverse{int(_rev)}",
            lambda lax, jnp, x, op=_op, a=_axis, r=_rev: getattr(lax, op)(x, axis=a, reverse=r),
            XC,
        )
    _err[f"{_op}_negative_axis"] = (lambda lax, jnp, x, op=_op: getattr(lax, op)(x, axis=-1), XC)
_case(
    "grad",
    "cummax_ties",
    lambda lax, jnp, x: lax.cummax(x, axis=1),
    np.array([[1, 3, 3, 2, 3]], F32),
)
# JAX's logaddexp JVP zeroes only +inf: an all -inf prefix has NaN derivatives.
_case(
    "grad",
    "cumlogsumexp_neg_inf",
    lambda lax, jnp, x: lax.cumlogsumexp(x),
    np.array([-np.inf, -np.inf, 0.0, 3.0, 1.0], F32),
)
_err["cummax_bool"] = (lambda lax, jnp, x: lax.cummax(x), np.array([True, False]))

# --- associative_scan: JAX's interleave adds zero-padded copies (so -0.0 becomes 0.0) --------
_value_and_grad(
    "assoc_scan_max", lambda lax, jnp, x: lax.associative_scan(lax.max, x), np.round(XC)
)
_case(
    "value",
    "assoc_scan_mul_zeros",
    lambda lax, jnp, x: lax.associative_scan(lax.mul, x),
    np.array([-1.0, 0.0, 2.0, 3.0, -0.0], F32),
)
_value_and_grad(
    "assoc_scan_pairs",
    lambda lax, jnp, a, b: lax.associative_scan(
        lambda x, y: (x[0] * y[0], y[0] * x[1] + y[1]), (a, b), reverse=True
    )[1],
    _r((7,), seed=10),
    _r((7,), seed=11),
)

# --- sort / top_k ----------------------------------------------------------------------------
XS = np.array([3.0, -0.0, 0.0, np.nan, -np.inf, 1.0, -np.nan, np.inf, 1.0, 2.0], F32)
_case("value", "sort_special", lambda lax, jnp, x: lax.sort(x), XS)
_case(
    "value",
    "sort_two_keys",
    lambda lax, jnp, x, y: lax.sort((x, y), num_keys=2),
    XS,
    XS[::-1].copy(),
)
_case("value", "argsort_special", lambda lax, jnp, x: jnp.argsort(x), XS)
_case("value", "top_k_nan_ties", lambda lax, jnp, x: lax.top_k(x, 5), XS)
_case(
    "grad",
    "sort_multi",
    lambda lax, jnp, x, y: lax.sort((x, y), num_keys=1)[1],
    _r((6,), seed=12),
    _r((6,), seed=13),
)
_case("grad", "top_k", lambda lax, jnp, x: lax.top_k(x, 3)[0], _r((3, 6), seed=14))
_err["sort_num_keys"] = (lambda lax, jnp, x: lax.sort((x,), num_keys=2), XS)

# --- dynamic slicing -------------------------------------------------------------------------
XD = np.arange(40, dtype=F32).reshape(5, 8)
_case(
    "value",
    "dynamic_slice_clamped",
    lambda lax, jnp, x, i, k: lax.dynamic_slice(x, (i, k), (2, 3)),
    XD,
    np.int32(-9),
    np.int32(7),
)
_case(
    "value",
    "dynamic_update_slice_clamped",
    lambda lax, jnp, x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(-1))),
    XD,
    -np.ones((2, 3), F32),
    np.int32(9),
)
_case(
    "grad",
    "dynamic_update_slice",
    lambda lax, jnp, x, u: lax.dynamic_update_slice(x, u, (np.int32(9), np.int32(-30))),
    XD,
    np.ones((2, 3), F32),
)
_err["dynamic_slice_too_large"] = (lambda lax, jnp, x: lax.dynamic_slice(x, (0, 0), (6, 3)), XD)
_err["slice_too_large"] = (lambda lax, jnp, x: lax.slice(x, (0, 0), (6, 3)), XD)
_err["dynamic_slice_float_index"] = (lambda lax, jnp, x: lax.dynamic_slice(x, (0.5, 0), (2, 3)), XD)
_err["dynamic_slice_2d_indices"] = (
    lambda lax, jnp, x: lax.dynamic_slice(x, np.array([[4, -1]], I32), (2, 3)),
    XD,
)
_err["dynamic_update_slice_dtype"] = (
    lambda lax, jnp, x: lax.dynamic_update_slice(x, np.ones((2, 3), I32), (0, 0)),
    XD,
)

# --- scatter min/max (JAX's tie-sharing JVP, in its order of operations) ----------------------
XG = _r((6, 4), seed=15)
IG = np.array([0, 5, 7, -1, -8, 2], I32)
for _mode in ("fill", "drop", "promise_in_bounds", None):
    _kw = {} if _mode is None else {"mode": _mode}
    _case(
        "grad",
        f"at_max_{_mode}",
        lambda lax, jnp, x, u, kw=_kw: x.at[IG].max(u, **kw),
        XG,
        _r((6, 4), seed=16),
    )
_case(
    "grad",
    "at_min_duplicates",
    lambda lax, jnp, x, u: x.at[np.array([0, 0, 2, 0])].min(u),
    XG,
    _r((4, 4), seed=17),
)
_case("grad", "at_get_clip", lambda lax, jnp, x: x.at[IG].get(mode="clip"), XG)
_case(
    "grad",
    "at_add_drop",
    lambda lax, jnp, x, u: x.at[IG].add(u, mode="drop"),
    XG,
    _r((6, 4), seed=18),
)
_case("grad", "at_apply", lambda lax, jnp, x: x.at[np.array([0, 2])].apply(lambda v: v * v), XG)

# --- element-wise and structural -------------------------------------------------------------
_case(
    "value",
    "shift_right_logical_wide",
    lambda lax, jnp, x, s: lax.shift_right_logical(x, s),
    np.full(6, -77, I8),
    np.array([-1, 0, 1, 7, 8, 9], I8),
)
_case("value", "integer_pow_big", lambda lax, jnp, x: lax.integer_pow(x, 17), _r((6,), seed=19))
_case("grad", "integer_pow_neg", lambda lax, jnp, x: lax.integer_pow(x, -3), _r((6,), seed=20))
_case(
    "value",
    "reduce_precision",
    lambda lax, jnp, x: lax.reduce_precision(x, 5, 10),
    np.array([np.nan, np.inf, 1e-40, 65520.0, 3.14159], F32),
)
_case(
    "value",
    "nextafter_zeros",
    lambda lax, jnp, x, y: lax.nextafter(x, y),
    np.array([0.0, -0.0, 0.0, 1e-45], F32),
    np.array([1.0, -1.0, -0.0, 0.0], F32),
)
_case(
    "value",
    "argmax_nan",
    lambda lax, jnp, x: lax.argmax(x, 1, np.int16),
    np.array([[1, np.nan, 3, 3], [np.nan, 2, 2, -np.inf], [0, -0.0, 5, 5]], F32),
)
_value_and_grad(
    "pad_negative_interior",
    lambda lax, jnp, x: lax.pad(x, np.float32(-1), [(-2, -1, 2), (-3, 0, 1)]),
    np.arange(1, 13, dtype=F32).reshape(3, 4),
)
_err["shift_mixed_dtypes"] = (
    lambda lax, jnp, x: lax.shift_right_logical(x, np.int16(1)),
    np.ones(2, I32),
)
_err["argmax_complex"] = (lambda lax, jnp, x: lax.argmax(x, 0, np.int32), np.ones(2, np.complex64))
_err["rev_negative"] = (lambda lax, jnp, x: lax.rev(x, (-1,)), XD)
_err["broadcast_in_dim_sizes"] = (
    lambda lax, jnp, x: lax.broadcast_in_dim(x, (2, 4, 4), (1, 2)),
    XD[:3, :4],
)
_err["broadcast_in_dim_sizes_first"] = (
    lambda lax, jnp, x: lax.broadcast_in_dim(x, (2, 3, 4), (2, 1)),
    XD[:3, :4],
)
_err["collapse_range"] = (lambda lax, jnp, x: lax.collapse(x, 3, 1), _r((2, 3, 4, 5)))
_err["squeeze_repeated"] = (lambda lax, jnp, x: lax.squeeze(x, (0, 0)), _r((1, 3, 1)))
_err["expand_dims_repeated"] = (lambda lax, jnp, x: lax.expand_dims(x, (0, 0)), XD)
_err["concatenate_ranks_first"] = (
    lambda lax, jnp, x: lax.concatenate([x, np.float16(1)], 0),
    XD[0],
)
_err["dot_general_batch_contract"] = (
    lambda lax, jnp, a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (1,)))),
    _r((3, 4, 5)),
    _r((3, 5, 2)),
)
_err["batch_matmul_batch"] = (
    lambda lax, jnp, a, b: lax.batch_matmul(a, b),
    _r((3, 4, 5)),
    _r((2, 5, 2)),
)
_case(
    "value",
    "dot_general_int8_pet",
    lambda lax, jnp, a, b: lax.dot_general(
        a, b, (((2,), (1,)), ((0,), (0,))), preferred_element_type=np.int32
    ),
    _r((3, 4, 5), I8),
    _r((3, 5, 2), I8, seed=1),
)
_value_and_grad(
    "ragged_dot",
    lambda lax, jnp, a, b: lax.ragged_dot(a, b, np.array([3, 5, 2], I32)),
    _r((10, 4), seed=21),
    _r((3, 4, 5), seed=22),
)

for _name, (_fn, *_args) in _err.items():  # errors: a "value" case records the exception
    _case("value", _name, _fn, *_args)
