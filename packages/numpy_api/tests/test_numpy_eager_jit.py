"""Eager calls of composite modjax.numpy functions on device Arrays (``_eager_jit``).

Such a call runs one compiled program per signature; a signature whose trace needs
values falls back to op by op. Both paths must give what the plain function gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax.numpy as jnp
from modjax.numpy._eager_jit import compiled_on_arrays
from modjax.runtime import Array, compile_cache

X = np.array([[0.5, -1.0, 2.0], [0.0, 3.0, -0.5]], np.float32)


def test_a_repeated_call_compiles_nothing_new():
    x = jnp.asarray(X)
    first = jnp.interp(x, jnp.asarray([-1.0, 0.0, 1.0]), jnp.asarray([0.0, 2.0, 1.0]))
    stats = dict(compile_cache.stats)
    again = jnp.interp(x, jnp.asarray([-1.0, 0.0, 1.0]), jnp.asarray([0.0, 2.0, 1.0]))
    assert compile_cache.stats == stats
    np.testing.assert_array_equal(np.asarray(first), np.asarray(again))
    expected = np.interp(X, [-1.0, 0.0, 1.0], [0.0, 2.0, 1.0])
    np.testing.assert_allclose(np.asarray(first), expected, rtol=1e-6)


def test_signatures_that_need_values_run_op_by_op():
    x = jnp.asarray(X)
    for _ in range(2):  # the second call takes the remembered fallback
        rows, cols = jnp.where(x > 0)
        np.testing.assert_array_equal(np.asarray(rows), np.nonzero(X > 0)[0])
        np.testing.assert_array_equal(np.asarray(cols), np.nonzero(X > 0)[1])
        np.testing.assert_array_equal(np.asarray(jnp.unique(x)), np.unique(X))
        counts = jnp.bincount(jnp.asarray(np.array([0, 2, 2], np.int32)))
        np.testing.assert_array_equal(np.asarray(counts), [1, 0, 2])
    # with size= the same functions trace
    padded = jnp.unique(x, size=8, fill_value=-9.0)
    assert padded.shape == (8,) and float(padded[-1]) == -9.0


def test_keywords_statics_and_positional_only_parameters():
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, max=1.0)), np.clip(X, None, 1.0))
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 0.0)), np.where(X > 0, X, 0.0))
    out = jnp.pad(x, 1, mode="constant", constant_values=7.0)
    np.testing.assert_array_equal(np.asarray(out), np.pad(X, 1, constant_values=7.0))
    with pytest.raises(TypeError):
        jnp.where(x > 0, x, 0.0, 1)  # too many positional arguments, as the plain function
    with pytest.raises(TypeError):
        jnp.roll(x, 1, axis=0, bogus=True)


def test_weak_types_and_results_match_the_plain_function():
    weak = jnp.asarray(2.0)  # weakly typed float32
    strong = jnp.ones(3, jnp.float16)
    for fn, args in ((jnp.roll, (weak, 1)), (jnp.clip, (weak, 0, 1)), (jnp.clip, (strong, 0, 1))):
        got, want = fn(*args), fn.__wrapped__(*args)  # compiled, and op by op
        assert isinstance(got, Array) and (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert jnp.clip(weak, 0, 1).weak_type


def test_functions_with_star_args_are_refused():
    with pytest.raises(TypeError, match=r"\*args"):
        compiled_on_arrays(lambda *xs: xs)


def test_an_array_and_a_python_number_give_the_plain_functions_results():
    # ``x > 0`` and ``x * 2`` run the ufunc's compiled program with the number as a
    # weakly typed operand: a new number compiles nothing, and the result is the
    # plain (op by op) function's, dtype and weak type included.
    x, i = jnp.asarray(X), jnp.asarray(np.arange(6, dtype=np.int32))
    c = jnp.asarray(np.array([1 + 2j, 2 - 1j], np.complex64))
    cases = [
        (jnp.greater, (x, 0)), (jnp.greater, (0.5, x)), (jnp.multiply._func, (x, 2.5)),
        (jnp.subtract._func, (3, i)), (jnp.divide, (i, 2)), (jnp.add._func, (i, 1.5)),
        (jnp.less, (c, 1.0)), (jnp.multiply._func, (c, 2)),
        (jnp.add._func, (jnp.ones(3, jnp.int8), 1000)),  # wraps to -23, as in JAX
    ]  # fmt: skip
    for fn, args in cases:
        got, want = fn(*args), fn.__wrapped__(*args)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (fn, args)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    x * 2.0, 7 - x
    stats = dict(compile_cache.stats)
    np.testing.assert_array_equal(np.asarray(x * 3.0), X * 3)
    np.testing.assert_array_equal(np.asarray(5 - x), 5 - X)
    assert compile_cache.stats == stats
    with pytest.raises(OverflowError):
        i + 2**31  # the plain function's check, before any program runs
    with pytest.raises(OverflowError):
        x > 2**40  # noqa: B015 - next to a float array too, as the plain function
    np.testing.assert_array_equal(np.asarray(i > -(2**31)), np.arange(6) > -(2**31))


def test_an_argument_given_twice_raises_as_the_plain_function():
    # positionally and by keyword: JAX's TypeError, never one of the two values silently
    x = jnp.asarray(X)
    with pytest.raises(TypeError, match="multiple values"):
        jnp.sum(x, axis=0, a=x * 2)
    with pytest.raises(TypeError, match="multiple values"):
        jnp.roll(x, 1, shift=2)
    with pytest.raises(TypeError):
        jnp.sum(x, axis=0, bogus=1)
    np.testing.assert_array_equal(np.asarray(jnp.sum(x, 0, keepdims=True)), X.sum(0, keepdims=True))
    np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=None)), np.median(X))


def _value_parameter_calls():
    """Eager calls with a Python number in a value parameter: ``(name, call of a number)``."""
    import modjax.scipy.signal as signal

    x = jnp.asarray(np.linspace(0.1, 0.9, 6, dtype=np.float32))
    y = jnp.asarray(np.linspace(0.1, 0.9, 6, dtype=np.float32) + np.float32(1e-6))
    m = jnp.asarray(np.arange(9, dtype=np.float32).reshape(3, 3))
    c, idx = x > 0.5, jnp.asarray(np.array([0, 2], np.int32))
    xp = jnp.asarray(np.array([0.0, 0.5, 1.0], np.float32))
    sig = jnp.asarray(np.sin(np.arange(32, dtype=np.float32)))
    return [
        ("clip", lambda s: jnp.clip(x, s, 1.0)),
        ("clip max=", lambda s: jnp.clip(x, max=s)),
        ("where x", lambda s: jnp.where(c, s, x)),
        ("where y", lambda s: jnp.where(c, x, s)),
        ("where fill_value", lambda s: jnp.where(c, size=6, fill_value=int(8 * s))),
        ("pad constant_values", lambda s: jnp.pad(x, 1, constant_values=s)),
        ("pad end_values", lambda s: jnp.pad(x, 1, mode="linear_ramp", end_values=s)),
        ("isclose", lambda s: jnp.isclose(x, y, rtol=s, atol=s)),
        ("isclose b", lambda s: jnp.isclose(x, s)),
        ("allclose", lambda s: jnp.allclose(x, y, rtol=s)),
        ("array_equal", lambda s: jnp.array_equal(x, s)),
        ("interp", lambda s: jnp.interp(x, xp, xp, left=s, right=s)),
        ("interp period", lambda s: jnp.interp(x, xp, xp, period=s + 1)),
        ("fill_diagonal", lambda s: jnp.fill_diagonal(m, s, inplace=False)),
        ("put", lambda s: jnp.put(x, idx, s, inplace=False)),
        ("place", lambda s: jnp.place(x, c, s, inplace=False)),
        ("insert", lambda s: jnp.insert(x, 1, s)),
        ("append", lambda s: jnp.append(x, s)),
        ("compress", lambda s: jnp.compress(c, x, size=6, fill_value=s)),
        ("extract", lambda s: jnp.extract(c, x, size=6, fill_value=s)),
        ("unique", lambda s: jnp.unique(x, size=8, fill_value=s)),
        ("union1d", lambda s: jnp.union1d(x, y, size=14, fill_value=s)),
        ("intersect1d", lambda s: jnp.intersect1d(x, y, size=8, fill_value=s)),
        ("setdiff1d", lambda s: jnp.setdiff1d(x, y, size=8, fill_value=s)),
        ("setxor1d", lambda s: jnp.setxor1d(x, y, size=14, fill_value=s)),
        ("isin", lambda s: jnp.isin(x, s)),
        ("searchsorted", lambda s: jnp.searchsorted(x, s)),
        ("diff", lambda s: jnp.diff(x, prepend=s, append=s)),
        ("ediff1d", lambda s: jnp.ediff1d(x, to_end=s, to_begin=s)),
        ("trapezoid", lambda s: jnp.trapezoid(x, dx=s)),
        ("unwrap", lambda s: jnp.unwrap(x, discont=s, period=s + 1)),
        ("polyval", lambda s: jnp.polyval(x, s)),
        ("polyint", lambda s: jnp.polyint(x, k=s)),
        ("quantile", lambda s: jnp.quantile(x, s)),
        ("percentile", lambda s: jnp.percentile(x, 100 * s)),
        ("nanquantile", lambda s: jnp.nanquantile(x, s)),
        ("nanpercentile", lambda s: jnp.nanpercentile(x, 100 * s)),
        ("sum initial", lambda s: jnp.sum(x, initial=s)),
        ("prod initial", lambda s: jnp.prod(x, initial=s)),
        ("max initial", lambda s: jnp.max(x, initial=s)),
        ("min initial", lambda s: jnp.min(x, initial=s)),
        ("nansum initial", lambda s: jnp.nansum(x, initial=s)),
        ("nanmax initial", lambda s: jnp.nanmax(x, initial=s)),
        ("var ddof", lambda s: jnp.var(x, ddof=int(8 * s))),
        ("std correction", lambda s: jnp.std(x, correction=int(8 * s))),
        ("nanvar ddof", lambda s: jnp.nanvar(x, ddof=int(8 * s))),
        ("nanstd ddof", lambda s: jnp.nanstd(x, ddof=int(8 * s))),
        ("welch fs", lambda s: signal.welch(sig, fs=s, nperseg=8)),
        ("stft fs", lambda s: signal.stft(sig, fs=s, nperseg=8)),
        ("csd fs", lambda s: signal.csd(sig, sig, fs=s, nperseg=8)),
    ]


def test_a_new_python_number_in_a_value_parameter_compiles_nothing():
    # As JAX's jitted jnp functions, which trace such a number as a weakly typed
    # scalar: clip(x, 0, 1) then clip(x, 0, 2) share one program. Each call goes
    # through the compiled program (none falls back to op by op for needing values).
    import modjax.scipy.signal as signal

    functions = [
        fn
        for fn in [*vars(jnp).values(), signal.welch, signal.stft, signal.csd]
        if isinstance(getattr(fn, "needs_values", None), set)
    ]
    fell_back = {fn: len(fn.needs_values) for fn in functions}
    calls = _value_parameter_calls()
    for _, call in calls:
        call(0.25)
    stats = dict(compile_cache.stats)
    for _, call in calls:
        call(0.375)
    assert compile_cache.stats["compiles"] == stats["compiles"]
    for fn in functions:
        assert len(fn.needs_values) == fell_back[fn], fn


def test_value_parameters_give_the_plain_functions_results():
    # Traced as operands, the numbers give what the plain function gives with them
    # as Python scalars: values, dtypes and weak types.
    i = jnp.asarray(np.arange(6, dtype=np.int32))
    f16 = jnp.asarray(np.linspace(-1, 1, 6).astype(np.float16))
    x = jnp.asarray(np.linspace(0.1, 0.9, 6, dtype=np.float32))
    cases = [
        (jnp.clip, (i, 1, 4)), (jnp.clip, (i, 0.5, 3)), (jnp.clip, (f16, -0.5, 0.5)),
        (jnp.where, (i > 2, i, 7)), (jnp.where, (i > 2, 1.5, i)), (jnp.where, (i > 2, True, False)),
        (jnp.where, (f16 > 0, f16, 2)), (jnp.pad, (i, 1), {"constant_values": 9}),
        (jnp.isclose, (x, 0.5)), (jnp.quantile, (x, 0.3)), (jnp.sum, (i,), {"initial": 2}),
        (jnp.max, (f16,), {"initial": 0.25}), (jnp.var, (i,), {"ddof": 1}),
        (jnp.searchsorted, (i, 3)), (jnp.append, (f16, 1.0)),
    ]  # fmt: skip
    for fn, args, *kw in cases:
        kwargs = kw[0] if kw else {}
        got, want = fn(*args, **kwargs), fn.__wrapped__(*args, **kwargs)
        assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (fn, args)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    with pytest.raises(OverflowError):  # the plain function's check (JAX's too)
        jnp.clip(x, 0, 2**40)


def test_positional_calls_key_statics_by_position():
    # A positional call takes a jit of the function per pattern of static positions:
    # ints and strings there are statics (a new one compiles), numbers in value
    # parameters operands (a new one does not), numpy arrays the plain function.
    x = jnp.asarray(X)
    np.testing.assert_array_equal(np.asarray(jnp.roll(x, 1, 0)), np.roll(X, 1, 0))
    np.testing.assert_array_equal(np.asarray(jnp.roll(x, 2, 1)), np.roll(X, 2, 1))
    np.testing.assert_array_equal(np.asarray(jnp.roll(x, np.int32(1))), np.roll(X, 1))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, 0, np.float32(1))), np.clip(X, 0, 1))
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 0)), np.where(X > 0, X, 0))
    stats = dict(compile_cache.stats)
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, x, 2)), np.where(X > 0, X, 2))
    assert compile_cache.stats["compiles"] == stats["compiles"]


def test_value_parameters_must_exist():
    with pytest.raises(TypeError, match="no parameter"):
        compiled_on_arrays(lambda a, lo: a, values="hi")


def test_keyword_calls_key_statics_by_name():
    # A keyword call takes a jit of the function per pattern of static positions and
    # names: a repeated call, or a new number in a value keyword, compiles nothing.
    x = jnp.asarray(X)
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=0)), np.median(X, axis=0))
        got = jnp.sum(x, 1, keepdims=True)
        np.testing.assert_array_equal(np.asarray(got), X.sum(1, keepdims=True))
        got = jnp.sum(x, keepdims=True, axis=1)  # another order of the same keywords
        np.testing.assert_array_equal(np.asarray(got), X.sum(1, keepdims=True))
        np.testing.assert_array_equal(np.asarray(jnp.clip(x, min=0.5)), np.clip(X, 0.5, None))
    stats = dict(compile_cache.stats)
    np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=0)), np.median(X, axis=0))
    np.testing.assert_array_equal(np.asarray(jnp.clip(x, min=-0.5)), np.clip(X, -0.5, None))
    assert compile_cache.stats["compiles"] == stats["compiles"]
    np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=1)), np.median(X, axis=1))
    assert compile_cache.stats["compiles"] == stats["compiles"] + 1
    # A keyword signature whose trace needs values runs the plain function, every time.
    i = jnp.asarray(np.array([0, 2, 2], np.int32))
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(jnp.bincount(i, minlength=2)), [1, 0, 2])


def test_eager_calls_skip_the_jit_wrapper_but_not_its_checks():
    # Eager ufunc and composite calls on Arrays enter jit's C++ fast path directly;
    # under a trace, with disable_jit, and for a deleted Array they behave as the
    # jitted function (its wrapper) does.
    from modjax.runtime import disable_jit
    from modjax.tracecore import make_jaxpr

    x = jnp.asarray(X)
    for _ in range(2):  # the second call of each is a cache hit
        np.testing.assert_allclose(np.asarray(jnp.sin(x)), np.sin(X), rtol=1e-6)
        np.testing.assert_allclose(np.asarray(jnp.cov(x)), np.cov(X), rtol=1e-6)
        np.testing.assert_array_equal(np.asarray(x > 0), X > 0)
        np.testing.assert_array_equal(np.asarray(jnp.median(x, axis=0)), np.median(X, axis=0))
    text = str(make_jaxpr(lambda: (jnp.sin(x), jnp.cov(x), x > 0, jnp.median(x, axis=0)))())
    assert "sin" in text and "dot_general" in text and "gt" in text  # recorded, not run
    assert "sort" in text
    with disable_jit():
        np.testing.assert_allclose(np.asarray(jnp.sin(x)), np.sin(X), rtol=1e-6)
    gone = jnp.asarray(X)
    jnp.sin(gone), jnp.cov(gone)
    gone.delete()
    for fn in (jnp.sin, jnp.cov):
        with pytest.raises(RuntimeError, match="deleted"):
            fn(gone)
    with pytest.raises(Exception) as plain:  # an error of a miss raises as the plain call
        jnp.add._func.__wrapped__(x, jnp.ones(4))
    with pytest.raises(type(plain.value)):
        jnp.add(x, jnp.ones(4))


def test_known_type_signatures_keep_every_check_of_the_classified_call():
    # A composite's call whose argument types alone decide its statics goes straight to
    # C++ once seen; debug modes, values that decide by their size, NaN statics and
    # signatures that need values still take the full path.
    from modjax.runtime import debug_nans

    x = jnp.asarray(X)
    nan = jnp.asarray(np.array([[1.0, np.nan]], np.float32))
    for _ in range(2):
        assert np.isnan(np.asarray(jnp.median(nan, axis=1))).all()
    with debug_nans(True), pytest.raises(FloatingPointError):
        jnp.median(nan, axis=1)
    for bound in (1.0, 2**40, 1.0, 2**40, 3, 3):  # an int there decides by its size
        if bound == 2**40:  # JAX's OverflowError too
            with pytest.raises(OverflowError):
                jnp.clip(x, 0.0, bound)
            continue
        want = np.clip(X, 0.0, float(bound))
        np.testing.assert_array_equal(np.asarray(jnp.clip(x, 0.0, bound)), want)
    for _ in range(2):  # a NaN float static never keys a compilation
        got = jnp.nan_to_num(x, nan=float("nan"))
        np.testing.assert_array_equal(np.asarray(got), X)
    rows = [jnp.where(x > 0)[0] for _ in range(3)]  # needs values: op by op each time
    for r in rows:
        np.testing.assert_array_equal(np.asarray(r), np.nonzero(X > 0)[0])


def test_operators_of_arrays_give_the_plain_functions_results():
    # Array's binary operators take the compiled ufunc's C++ path for an Array and an
    # Array or a Python number; everything else (weak Arrays, numpy scalars, bools,
    # lists) goes through the ufunc, and non-array operands answer NotImplemented.
    import operator

    x, i = jnp.asarray(X), jnp.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    weak = jnp.asarray(2.0)
    pairs = [(x, 2), (3, x), (x, i), (i, 1.5), (2.5, i), (x, weak), (weak, i), (i, True),
             (x, np.float16(2)), (np.int8(3), i), (x, 1 + 1j), (i, x)]  # fmt: skip
    ops = (operator.add, operator.sub, operator.mul, operator.truediv, operator.gt,
           operator.le, operator.eq, operator.pow)  # fmt: skip
    plain = {
        operator.add: jnp.add, operator.sub: jnp.subtract, operator.mul: jnp.multiply,
        operator.truediv: jnp.true_divide, operator.gt: jnp.greater,
        operator.le: jnp.less_equal, operator.eq: jnp.equal, operator.pow: jnp.power,
    }  # fmt: skip
    for op in ops:
        for a, b in pairs:
            fn = getattr(plain[op], "_func", plain[op])
            got, want = op(a, b), getattr(fn, "__wrapped__", fn)(a, b)
            assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type), (op, a, b)
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert (x == "text") is False and (x != None) is True  # noqa: E711
    with pytest.raises(TypeError):
        x + [1.0, 2.0]  # noqa: B018


def test_eager_calls_under_a_trace_are_recorded_as_their_equations():
    # Concrete Arrays closed over by a traced function: the ufuncs and composites called
    # on them are recorded as the plain function's equations, as with tracer arguments
    # (JAX's jnp ufuncs are inlined jits too), not as a nested jit.
    from modjax.tracecore import make_jaxpr

    # (jnp.cov is a plain jit, as JAX's, whose jaxpr shows it as a nested jit named cov.)
    x = jnp.asarray(X)
    jnp.sin(x), x + x, jnp.tensordot(x, x.T, 1), jnp.median(x, axis=0)  # programs exist
    text = str(
        make_jaxpr(
            lambda y: jnp.sin(x) + x * y + jnp.tensordot(x, x.T, 1).sum() + jnp.median(x, 0)
        )(1.0)
    )
    assert "jit[" not in text and "pjit" not in text
    assert "sin" in text and "dot_general" in text and "sort" in text


def test_functions_with_declared_statics_are_bare_pjit_functions():
    # clip, where, cov, corrcoef and the median/quantile family are jaxlib PjitFunctions,
    # as JAX's jitted jnp functions: a seen signature runs without a Python frame. Other
    # calls, traces, debug checks and rules run with the eval trace current inside a
    # transformation go through the Python dispatch, with the same results and errors.
    from modjax.autodiff import custom_jvp, jvp
    from modjax.batching import vmap
    from modjax.tracecore import make_jaxpr

    x = jnp.asarray(X)
    for fn in (jnp.clip, jnp.where, jnp.cov, jnp.corrcoef, jnp.median, jnp.quantile):
        assert type(fn).__name__ == "PjitFunction", fn
        assert fn.__doc__ and fn.__wrapped__.__name__ == fn.__name__
    for _ in range(2):
        np.testing.assert_array_equal(np.asarray(jnp.clip(x, 0.0, 1.0)), np.clip(X, 0, 1))
        np.testing.assert_array_equal(np.asarray(jnp.clip(x, None, 1)), np.clip(X, None, 1))
        q = jnp.quantile(x, 0.25, axis=1, method="lower", keepdims=True)
        np.testing.assert_array_equal(
            np.asarray(q), np.quantile(X, 0.25, axis=1, method="lower", keepdims=True)
        )
        np.testing.assert_allclose(np.asarray(jnp.corrcoef(x)), np.corrcoef(X), rtol=1e-5)
    stats = dict(compile_cache.stats)
    jnp.clip(x, -3.0, 0.5), jnp.quantile(x, 0.75, axis=1, method="lower", keepdims=True)
    assert compile_cache.stats == stats  # new numbers in value parameters: operands
    with pytest.raises(ValueError, match="Non-hashable static"):
        jnp.median(x, axis=[0])  # JAX's error: axis is static
    with pytest.raises(TypeError, match="clip requires ndarray"):
        jnp.clip(x, [0.0], 1.0)
    np.testing.assert_array_equal(np.asarray(jnp.where(x > 0, size=2)[1]), [0, 2])
    text = str(make_jaxpr(lambda y: jnp.clip(x, y, 1.0) + jnp.clip(x, 0.0, 1.0))(0.0))
    assert text.count("max") == 2 and "pjit" not in text and "jit[" not in text
    got = vmap(lambda row: jnp.median(row))(x)
    np.testing.assert_array_equal(np.asarray(got), np.median(X, axis=1))

    @custom_jvp
    def g(v):
        return jnp.clip(v, 0.0, 1.0)

    @g.defjvp
    def g_jvp(primals, tangents):
        (v,), (t,) = primals, tangents
        return g(v), jnp.where((v > 0) & (v < 1), t, 0.0)

    out, tangent = jvp(g, (x,), (jnp.ones_like(x),))
    np.testing.assert_array_equal(np.asarray(out), np.clip(X, 0, 1))
    np.testing.assert_array_equal(np.asarray(tangent), ((X > 0) & (X < 1)).astype(np.float32))


def test_numpy_arrays_are_operands_of_the_one_program():
    # As JAX's jitted mean takes a numpy where= mask: the same program, so the same bits
    # as with the mask on the device (op by op the count and sums rounded otherwise).
    x = jnp.asarray(np.random.default_rng(0).standard_normal((10, 5)).astype(np.float32))
    mask = np.array([True, False, True, False, True])
    for name in ("mean", "var", "sum", "std"):
        f = getattr(jnp, name)
        on_host = np.asarray(f(x, -1, keepdims=True, where=mask))
        on_device = np.asarray(f(x, -1, keepdims=True, where=jnp.asarray(mask)))
        np.testing.assert_array_equal(on_host, on_device, err_msg=name)
    indices = np.array([2, 0], np.int32)
    taken = jnp.take(x, indices, axis=1)
    np.testing.assert_array_equal(np.asarray(taken), np.asarray(x)[:, [2, 0]])
