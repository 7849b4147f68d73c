"""Known answers of the closed-form samplers of modjax.random (recorded from JAX 0.10.2), their
argument errors, result dtypes and weak types, and their agreement under jit, vmap and scan.

The samplers with rejection loops (gamma and its family, poisson, binomial,
multinomial) and the statistical checks are in test_random_distributions_loops.py.
"""

import numpy as np
import pytest
from random_reference import MACHINE_DEPENDENT_ULPS, TABLE, assert_matches, call_args, case_id, x64

import modjax.numpy as jnp
from modjax import lax, random
from modjax.autodiff import grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import dtypes

# Compile-bound known-answer tables: the workspace run runs them, the wheel check
# (smoke profile) only imports them.
pytestmark = pytest.mark.slow

LOOPED = {"gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f", "ball",
          "generalized_normal", "poisson", "binomial", "multinomial"}  # fmt: skip
CLOSED_FORM = [c for c in TABLE["cases"] if c["fn"] not in LOOPED]


def test_issue_known_answers():
    np.testing.assert_array_equal(
        np.asarray(random.normal(random.key(0), (3,))),
        np.array([1.6226422, 2.0252647, -0.43359444], np.float32),
    )
    np.testing.assert_array_equal(
        np.asarray(random.uniform(random.key(42), (2,))),
        np.array([0.48870957, 0.6797972], np.float32),
    )
    # Legacy uint32 keys give the same bits as typed keys.
    np.testing.assert_array_equal(
        np.asarray(random.normal(random.PRNGKey(0), (3,))),
        np.asarray(random.normal(random.key(0), (3,))),
    )


@pytest.mark.parametrize("case", CLOSED_FORM, ids=case_id)
def test_known_answers(case):
    with x64(case["x64"]):
        args, kwargs = call_args(case)
        out = getattr(random, case["fn"])(random.key(case["seed"]), *args, **kwargs)
        assert_matches(out, case["expected"], MACHINE_DEPENDENT_ULPS.get(case["fn"], 0))


def test_every_sampler_has_a_known_answer():
    samplers = {
        n for n in random._distributions.__all__ if n not in ("random_gamma_p", "random_gamma_grad")
    }
    assert samplers <= {c["fn"] for c in TABLE["cases"]}


# --- errors, dtypes, weak types -----------------------------------------------------------------

K = random.key(0)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: random.uniform(K, (2,), jnp.int32), ValueError,
         "dtype argument to `uniform` must be a float dtype, got int32"),
        (lambda: random.normal(random.split(K), (2,)), ValueError,
         "normal accepts a single key, but was given a key array of shape (2,) != ()."),
        (lambda: random.beta(K, 1.0, 2.0, dtype=jnp.int32), ValueError,
         "dtype argument to `beta` must be a float dtype, got int32"),
        (lambda: random.randint(K, (3,), 0, 10, jnp.float32), TypeError,
         "randint only accepts integer dtypes, got float32"),
        (lambda: random.bernoulli(K, 1), TypeError,
         "bernoulli probability `p` must have a floating dtype, got int32."),
        (lambda: random.bernoulli(K, 0.5, (2,), mode="x"), ValueError,
         "got mode='x', expected 'high' or 'low'"),
        (lambda: random.choice(K, 5, (6,), replace=False), ValueError,
         "Cannot take a larger sample (size 6) than population (size 5) when 'replace=False'"),
        (lambda: random.choice(K, 5, 3), TypeError,
         "shape argument of jax.random.choice must be a sequence, got 3"),
        (lambda: random.choice(K, 0, (3,)), ValueError,
         "a must be greater than 0 unless no samples are taken"),
        (lambda: random.permutation(K, 2.0), TypeError,
         "x must be an integer or at least 1-dimensional"),
        (lambda: random.gumbel(K, (2,), mode="x"), ValueError,
         "Must provide valid mode for gumbel got: x"),
        (lambda: random.dirichlet(K, 1.0), ValueError,
         "dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0"),
        (lambda: random.geometric(K, 0.5, dtype=jnp.float32), ValueError,
         "dtype argument to `geometric` must be an int dtype, got float32"),
        (lambda: random.binomial(K, 10, 0.5, dtype=jnp.int32), ValueError,
         "dtype argument to `binomial` must be a float dtype, got int32"),
        (lambda: random.truncated_normal(K, -1.0, 1.0, (2,), jnp.int32), ValueError,
         "dtype argument to `truncated_normal` must be a float dtype, got int32"),
        (lambda: random.gamma(K, jnp.ones(3), (2,)), ValueError,
         "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
        (lambda: random.pareto(K, jnp.ones(2), (3, 1)), ValueError,
         "pareto parameter shapes must be broadcast-compatible with shape argument"),
        (lambda: random.normal(K, (-1,)), ValueError, "non-negative"),
        (lambda: random.multivariate_normal(K, jnp.zeros(2), jnp.eye(3)), ValueError,
         "multivariate_normal requires cov.shape == (..., n, n) for n=2"),
        (lambda: random.multivariate_normal(K, jnp.zeros(2), jnp.eye(2), method="lu"), ValueError,
         "method must be one of {'svd', 'eigh', 'cholesky'}"),
    ],
)  # fmt: skip
def test_errors(call, error, message):
    with pytest.raises(error) as info:
        call()
    assert message in str(info.value)


def test_float64_without_x64_warns_and_truncates():
    with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
        out = random.uniform(K, (2,), jnp.float64)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), np.asarray(random.uniform(K, (2,))))


@pytest.mark.parametrize(
    "call, dtype",
    [
        (lambda: random.uniform(K, (2,), minval=1), np.float32),
        (lambda: random.normal(K, (2,), jnp.float16), np.float16),
        (lambda: random.bernoulli(K, 0.5, (2,)), np.bool_),
        (lambda: random.randint(K, (2,), 0, 3), np.int32),
        (lambda: random.randint(K, (2,), 0, 3, jnp.uint8), np.uint8),
        (lambda: random.rademacher(K, (2,)), np.int32),
        (lambda: random.categorical(K, jnp.zeros(3)), np.int32),
        (lambda: random.permutation(K, 4), np.int32),
        (lambda: random.geometric(K, 0.5, (2,)), np.int32),
        (lambda: random.gumbel(K, (2,), jnp.bfloat16), dtypes.canonicalize_dtype("bfloat16")),
    ],
)
def test_result_dtypes_are_strong(call, dtype):
    out = call()
    assert out.dtype == dtype
    assert not dtypes.is_weakly_typed(out)


# --- transformations ----------------------------------------------------------------------------


def _draws(k):
    return (
        random.uniform(k, (3,), minval=-1.0, maxval=2.0),
        random.normal(k, (2, 2)),
        random.randint(k, (3,), 0, 100),
        random.bernoulli(k, 0.3, (3,)),
        random.categorical(k, jnp.arange(4.0)),
        random.permutation(k, 5),
        random.truncated_normal(k, -1.0, 1.0, (3,)),
    )


def test_eager_equals_jit_vmap_and_scan():
    keys = random.split(random.key(7), 3)
    eager = [_draws(k) for k in keys]
    jitted = [jit(_draws)(k) for k in keys]
    batched = vmap(_draws)(keys)
    _, scanned = lax.scan(lambda c, k: (c, _draws(k)), 0, keys)
    for i in range(3):
        for j, e in enumerate(eager[i]):
            np.testing.assert_array_equal(np.asarray(jitted[i][j]), np.asarray(e))
            np.testing.assert_array_equal(np.asarray(batched[j])[i], np.asarray(e))
            np.testing.assert_array_equal(np.asarray(scanned[j])[i], np.asarray(e))


def test_uniform_gradients_are_reparameterized():
    # d/dminval and d/dmaxval of sum(u * (b - a) + a) are sum(1 - u) and sum(u).
    u = np.asarray(random.uniform(K, (5,)))
    g = grad(lambda a, b: jnp.sum(random.uniform(K, (5,), minval=a, maxval=b)), argnums=(0, 1))(
        0.0, 1.0
    )
    np.testing.assert_allclose(float(g[0]), np.sum(1 - u), rtol=1e-5)
    np.testing.assert_allclose(float(g[1]), np.sum(u), rtol=1e-5)


def test_truncated_normal_and_lognormal_gradients():
    z = np.asarray(random.normal(K, (4,)))
    g = grad(lambda s: jnp.sum(random.lognormal(K, s, (4,))))(0.5)
    np.testing.assert_allclose(float(g), np.sum(z * np.exp(0.5 * z)), rtol=1e-5)
    # Within the bounds, d(sample)/d(upper) = exp((b^2 - x^2)/2) * (u - a)/(b - a) ... checked
    # against central differences of the same draws.
    f = lambda b: jnp.sum(random.truncated_normal(K, -1.0, b, (4,)))  # noqa: E731
    h = 1e-2
    fd = (float(f(1.5 + h)) - float(f(1.5 - h))) / (2 * h)
    np.testing.assert_allclose(float(grad(f)(1.5)), fd, rtol=2e-2)


def test_linalg_samplers_known_answers_or_not_implemented():
    for case in TABLE["cases"]:
        if case["fn"] not in ("multivariate_normal", "orthogonal"):
            continue
        args, kwargs = call_args(case)
        try:
            out = getattr(random, case["fn"])(random.key(case["seed"]), *args, **kwargs)
        except NotImplementedError as e:
            assert "modjax.numpy.linalg" in str(e)
            continue
        np.testing.assert_allclose(
            np.asarray(out), np.asarray(case["expected"]["values"]), rtol=1e-5, atol=1e-6
        )


@pytest.mark.parametrize("dtype", [jnp.int32, jnp.uint8, jnp.float16])
def test_multinomial_casts_counts_to_any_dtype(dtype):
    # JAX 0.10.2: multinomial(PRNGKey(0), 10., [0.2, 0.3, 0.5], dtype=int32) is int32 [1, 1, 8];
    # any dtype is accepted (the counts are cast)
    out = random.multinomial(random.PRNGKey(0), 10.0, jnp.array([0.2, 0.3, 0.5]), dtype=dtype)
    assert out.dtype == dtype
    np.testing.assert_array_equal(np.asarray(out, dtype=np.float64), [1.0, 1.0, 8.0])
