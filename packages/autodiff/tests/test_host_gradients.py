"""Gradients that meet no primitive: autodiff alone returns the host seed; a rule converts it."""

import numpy as np
import pytest

from modjax.autodiff import (
    custom_jvp,
    custom_vjp,
    grad,
    jvp,
    register_host_to_array,
    tangents,
    value_and_grad,
)
from modjax.autodiff.jvp import with_array_values
from modjax.autodiff.tangents import add_any_p
from modjax.tracecore import dtypes, make_jaxpr


class Converted(np.ndarray):
    """A host value the recording rule has seen (its tests' values are all f32)."""


@pytest.fixture
def host_rule():
    """Install a recording rule for the test and put back whatever was installed."""
    saved = tangents._host_to_array[0]
    seen = []

    def rule(x):
        # Like runtime's rule: host values only, and once (the seed is converted before
        # the backward pass, so what comes back from it may already be converted).
        if isinstance(x, Converted):
            return x
        seen.append(x)
        return np.asarray(x, np.float32).view(Converted)

    try:
        yield seen, rule
    finally:
        register_host_to_array(saved)


@pytest.fixture
def autodiff_only():
    """The default rule (the identity), even when a higher layer has installed its own."""
    saved = tangents._host_to_array[0]
    register_host_to_array(lambda x: x)
    try:
        yield
    finally:
        register_host_to_array(saved)


def test_alone_autodiff_returns_the_host_seed_of_a_weak_output(autodiff_only):
    g = grad(lambda x: x)(1.0)
    assert type(g) is float and g == 1.0


def test_alone_autodiff_returns_a_numpy_seed_of_a_strong_output(autodiff_only):
    g = grad(lambda x: x)(np.float32(3.0))
    assert type(g) is np.float32 and g == 1.0
    g = grad(lambda x: x, holomorphic=True)(np.complex64(1j))
    assert type(g) is np.complex64


def test_alone_value_and_grad_keeps_the_value_and_the_seed(autodiff_only):
    value, g = value_and_grad(lambda x: x)(2.0)
    assert (type(value), value, type(g), g) == (float, 2.0, float, 1.0)


def test_an_installed_rule_converts_host_gradients_only(host_rule):
    seen, rule = host_rule
    register_host_to_array(rule)
    g = grad(lambda x, n: x, argnums=(0, 1), allow_int=True)(1.0, 2)
    assert type(g[0]) is Converted and g[0] == 1.0
    # integer inputs' float0 zeros stay numpy's, as in JAX
    assert type(g[1]) is np.ndarray and g[1].dtype == dtypes.float0
    assert seen == [1.0]


def test_an_installed_rule_is_not_applied_inside_a_trace(host_rule):
    seen, rule = host_rule
    register_host_to_array(rule)
    jaxpr = make_jaxpr(grad(lambda x: x))(1.0)
    assert seen == []
    assert "1.0" in str(jaxpr)


def test_the_seed_a_custom_vjp_bwd_meets_first_is_converted(host_rule):
    # JAX 0.10.2 hands such a rule an Array (``jax.grad(f)(1.0)`` with ``f`` a
    # custom_vjp: its bwd sees a weak f32[] Array), so ``g.astype`` and ``g.shape`` work.
    seen, _ = host_rule
    register_host_to_array(lambda x: seen.append(x) or np.asarray(x, np.float32))
    got = []

    @custom_vjp
    def f(x):
        return x

    f.defvjp(lambda x: (x, None), lambda r, g: (got.append(g) or g.astype(np.float32),))
    assert grad(f)(1.0) == 1.0
    assert type(got[0]) is np.ndarray and got[0].shape == ()
    assert seen[0] == 1.0


def test_a_primitive_meeting_host_jvp_values_gets_them_converted(host_rule):
    # JAX's jnp functions are jitted, so ``jvp(lambda x: x + 1, (1.0,), (1.0,))`` gives
    # Arrays even where the rule passes the tangent through; modjax converts host
    # values when a primitive first meets them, and not for custom rules or passthrough.
    seen, rule = host_rule
    register_host_to_array(rule)
    primal, tangent = jvp(lambda x: add_any_p.bind(x, 1.0), (1.0,), (2.0,))
    assert type(tangent) is Converted and tangent == 2.0
    assert sorted(seen) == [1.0, 2.0]
    assert jvp(lambda x: x, (1.0,), (2.0,)) == (1.0, 2.0)

    @custom_jvp
    def f(x):
        return x

    f.defjvp(lambda p, t: (got.append((type(p[0]), type(t[0]))) or p[0], t[0]))
    got = []
    assert jvp(f, (1.0,), (2.0,)) == (1.0, 2.0)
    assert got == [(float, float)]


def test_with_array_values_converts_only_eager_jvp_tracers_over_host_values(host_rule):
    seen, rule = host_rule
    register_host_to_array(rule)
    kinds = []

    def f(x):
        y = with_array_values(x)
        kinds.append((type(y.primal), type(y.tangent)) if hasattr(y, "primal") else type(y))
        return y

    jvp(f, (np.float32(1.0),), (np.float32(2.0),))
    assert kinds == [(Converted, Converted)]
    make_jaxpr(lambda x: jvp(f, (x,), (1.0,)))(1.0)  # staged: kept as the program's
    assert kinds[-1] != (Converted, Converted) and len(seen) == 2
