"""linear_call: a linear function whose transpose its author gives, on the test primitives."""

import numpy as np
import pytest
from autodiff_test_prims import add, mul

from modjax.autodiff import grad, jvp, linear_call, linear_call_p, linear_transpose, vjp
from modjax.tracecore import make_jaxpr

TWO, TEN = np.float32(2.0), np.float32(10.0)


def scaled(x):
    """``2 x``, linear in ``x``, with the (wrong on purpose) transpose ``10 ct``."""
    return linear_call(lambda r, x: mul(x, TWO), lambda r, ct: mul(ct, TEN), (), x)


def test_forward_mode_applies_the_function_and_reverse_mode_the_given_transpose():
    x = np.float32(1.5)
    assert float(scaled(x)) == 3.0
    out, tangent = jvp(scaled, (x,), (np.float32(1.0),))
    assert float(out) == 3.0 and float(tangent) == 2.0
    assert float(grad(scaled)(x)) == 10.0
    _, pullback = vjp(scaled, x)
    assert float(pullback(np.float32(2.0))[0]) == 20.0
    assert float(linear_transpose(scaled, x)(np.float32(1.0))[0]) == 10.0


def test_residuals_are_pytrees_and_transposing_twice_gives_the_function_back():
    def f(x):
        # Linear in the dict {"a": x, "b": 3x}; residuals are a tuple.
        res = (np.float32(4.0), np.float32(0.5))
        return linear_call(
            lambda r, lin: add(mul(lin["a"], r[0]), mul(lin["b"], r[1])),
            lambda r, ct: {"a": mul(ct, r[0]), "b": mul(ct, r[1])},
            res,
            {"a": x, "b": mul(x, np.float32(3.0))},
        )

    x = np.float32(1.0)
    assert float(f(x)) == 5.5 and float(grad(f)(x)) == 5.5
    transposed = linear_transpose(f, x)
    assert float(linear_transpose(lambda ct: transposed(ct)[0], np.float32(0.0))(x)[0]) == 5.5
    text = str(make_jaxpr(grad(f))(x))
    assert text.count("linear_call[") == 2 and "num_res=2" in text
    assert linear_call_p.multiple_results


def test_errors_name_linear_call():
    with pytest.raises(NotImplementedError, match="residual_args"):
        grad(lambda r: linear_call(lambda r, x: mul(x, r), lambda r, t: t, r, TWO))(TEN)
    bad = lambda x: linear_call(lambda r, x: (x, x), lambda r, ct: ct, (), x)  # noqa: E731
    with pytest.raises(TypeError, match="linear_call: the transpose returns a tree"):
        grad(lambda x: add(*bad(x)))(TWO)
