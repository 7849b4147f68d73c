"""Bit-exact known answers of jax.random (JAX 0.10.2) beyond the older tables: cases and recorder.

``CASES`` lists sampler calls across dtypes (float16, bfloat16, float32, float64),
shapes (``()`` and zero-size), key kinds (typed and raw uint32 keys, threefry2x32
and rbg), jitted and vmapped over keys, gradients through the samplers and the
errors of bad arguments. ``run`` calls a case with a framework (jax or modjax):
eagerly, under ``jit`` (the key and the arrays as arguments) and under ``vmap``
over three keys split from the case's key, and describes each result by its
dtype, shape, weak type and raw bytes (hex; keys by their data), or the error's
class and message: equal records mean equal bits.

Run this file with a Python where jax is installed, from outside the repository
(modjax's tests never import jax): ``python .../random_jax_bits_sweep_gen.py``.
It writes ``random_jax_bits_sweep.json`` beside itself, read by
``test_random_jax_bits_sweep.py``.
"""

from __future__ import annotations

import pathlib
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jax_bits_harness as harness  # noqa: E402

REFERENCE = pathlib.Path(__file__).with_name("random_jax_bits_sweep.json")

F16, F32, F64, BF16 = np.float16, np.float32, np.float64, ml_dtypes.bfloat16
I8, I16, I32, I64, U8, U32 = np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32

CASES: list[dict] = []


def case(
    name, fn, *arrays, seed=0, impl=None, raw=False, x64=False, modes=("eager", "jit", "vmap")
):
    """``fn(F, key, *arrays)`` with ``F`` the framework; ``arrays`` are jit's operands."""
    CASES.append(
        {
            "name": name,
            "fn": fn,
            "arrays": arrays,
            "seed": seed,
            "impl": impl,
            "raw": raw,
            "x64": x64,
            "modes": modes,
        }
    )


def sampler(name, *args, **kwargs):
    """A case function calling ``random.<name>(key, *args, *arrays, **kwargs)``."""
    return lambda F, k, *a: getattr(F.random, name)(k, *args, *a, **kwargs)


def grad_of(fn):
    """A case function: the gradient of ``sum(fn(F, key, *arrays))`` in every array."""

    def run(F, k, *a):
        return F.grad(lambda *v: fn(F, k, *v).sum(), argnums=tuple(range(len(a))))(*a)

    return run


# CASES_START (the cases are listed below)

# rademacher draws its coin with the Python float 0.5 as JAX does: float64's uniform
# with x64 on (and so do the samplers that take its signs).
case("rademacher_default_x64", sampler("rademacher", (4,)), x64=True)
case("rademacher_i64_x64", sampler("rademacher", (4,), I64), x64=True)
case("rademacher_i8", sampler("rademacher", (5,), I8))
case("rademacher_f16", sampler("rademacher", (4,), F16))
case("generalized_normal_f64", sampler("generalized_normal", 1.5, (3,), F64), x64=True)
case("double_sided_maxwell_f64", sampler("double_sided_maxwell", 1.0, 2.0, (3,), F64), x64=True)
case("generalized_normal_f32_x64", sampler("generalized_normal", 0.7, (3,), F32), x64=True)

# fold_in of a scalar message into a batch of keys maps over the keys only, as JAX's
# iterated vmap: unsafe_rbg draws its bits from the message.
case("fold_in_unsafe_rbg", lambda F, k: F.random.fold_in(k, 7), impl="unsafe_rbg")
case("fold_in_rbg", lambda F, k: F.random.fold_in(k, 7), impl="rbg")
case("fold_in_threefry_raw", lambda F, k: F.random.fold_in(k, 2**32 - 1), raw=True)
case("split_unsafe_rbg", lambda F, k: F.random.split(k, 2), impl="unsafe_rbg")

# Samplers across dtypes, shapes, key kinds and x64 (regression guards).
case("uniform_bf16_bounds", sampler("uniform", (4,), BF16, 1.0, 1.01))
case("uniform_f64_x64", sampler("uniform", (4,), F64, -1e10, 1e10), x64=True)
case("normal_f16_rbg", sampler("normal", (3,), F16), impl="rbg")
case("normal_c128_x64", sampler("normal", (3,), np.complex128), x64=True)
case("gumbel_high_f64", sampler("gumbel", (3,), F64, mode="high"), x64=True)
case("laplace_scalar_bf16", sampler("laplace", (), BF16))
case("exponential_zero_size", sampler("exponential", (0, 2)))
case("cauchy_raw_key", sampler("cauchy", (4,)), raw=True, seed=3)
case("maxwell_f64", sampler("maxwell", (3,), F64), x64=True)
case("pareto_array", sampler("pareto"), np.array([0.5, 1.0, 4.0], F32))
case("wald_f64", sampler("wald", 0.7, (3,), F64), x64=True)
case("weibull_min_f16", sampler("weibull_min", 2.0, 1.5, (3,), F16))
case("triangular_bf16", sampler("triangular", 0.0, 0.3, 1.0, (3,), BF16))
case(
    "truncated_normal_inf",
    sampler("truncated_normal"),
    np.array([-np.inf, 0.0, 5.0, -1.0], F32),
    np.array([np.inf, np.inf, 6.0, -1.0], F32),
)
case("gamma_f64", sampler("gamma", 2.5, (3,), F64), x64=True)
case("gamma_f16_array", sampler("gamma"), np.array([0.1, 1.0, 5.0], F16))
case(
    "beta_broadcast",
    sampler("beta", shape=(2, 3)),
    np.array([0.1, 1.0, 5.0], F32),
    np.array([[0.5], [2.0]], F32),
)
case(
    "dirichlet_f64",
    lambda F, k: F.random.dirichlet(k, np.array([1.0, 2.0, 3.0]), (2,), F64),
    x64=True,
)
case("poisson_lam_array", sampler("poisson"), np.array([0.0, 1.0, 9.9, 10.1, 50.0, 1e4], F32))
case("poisson_lam_x64", sampler("poisson"), np.array([0.5, 12.0, 3.0]), x64=True)
case(
    "binomial_edges",
    sampler("binomial"),
    np.array([0.0, 1.0, 5.0, 40.0, 1000.0], F32),
    np.array([0.5, 0.0, 1.0, 0.7, 0.01], F32),
)
case("geometric_i64", sampler("geometric", 0.2, (4,), I64), x64=True)
case("randint_i64_full", sampler("randint", (6,), -(2**63), 2**63 - 1, I64), x64=True)
case("randint_u8_wide", sampler("randint", (5,), -1000, 70000, U8))
case("randint_default_x64", sampler("randint", (5,), 0, 100), x64=True)
case("categorical_f64", sampler("categorical"), np.log(np.array([[0.1, 0.2, 0.7]] * 2)), x64=True)
case(
    "categorical_no_replace",
    sampler("categorical", axis=0, shape=(2, 3), replace=False),
    np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], F32)),
)
case(
    "choice_p_f16",
    lambda F, k, p: F.random.choice(k, 4, (3,), p=p),
    np.array([0.4, 0.3, 0.2, 0.1], F16),
)
case(
    "permutation_independent",
    sampler("permutation", axis=-1, independent=True),
    np.arange(12, dtype=I32).reshape(3, 4),
)
case("bits_u64_x64", sampler("bits", (5,), np.uint64), x64=True)
case("bits_u8_rbg", sampler("bits", (5,), U8), impl="rbg")
case("orthogonal_f64", sampler("orthogonal", 3, dtype=F64), x64=True, modes=("eager", "jit"))
case("ball_p1", sampler("ball", 2, p=1, shape=(3,)))

# Gradients through the samplers (implicit reparameterization of gamma and its family).
case(
    "grad_uniform_bounds",
    grad_of(lambda F, k, lo, hi: F.random.uniform(k, (3,), minval=lo, maxval=hi)),
    np.float32(-1.0),
    np.float32(3.0),
)
case(
    "grad_beta",
    grad_of(lambda F, k, a, b: F.random.beta(k, a, b)),
    np.array([0.5, 2.0], F32),
    np.array([1.5, 0.3], F32),
)
case(
    "grad_dirichlet",
    grad_of(lambda F, k, a: F.random.dirichlet(k, a) * np.arange(1.0, 4.0, dtype=F32)),
    np.array([0.5, 2.0, 1.0], F32),
)
case(
    "grad_truncated_normal",
    grad_of(lambda F, k, lo, hi: F.random.truncated_normal(k, lo, hi, (3,))),
    np.float32(-1.0),
    np.float32(0.5),
)

# Errors of bad arguments, in JAX's words.
case("error_split_batched", lambda F, k: F.random.split(F.random.split(k), 2))
case("error_bits_batched", lambda F, k: F.random.bits(F.random.split(k)))
case("error_rademacher_bool", sampler("rademacher", (2,), bool))
case("error_dirichlet_scalar", sampler("dirichlet", 1.0))
case(
    "error_categorical_too_many",
    sampler("categorical", shape=(4, 2), replace=False),
    np.log(np.array([[0.1, 0.2, 0.7], [0.5, 0.25, 0.25]], F32)),
)
case("error_ball_d0", sampler("ball", 0), modes=("eager",))
case("error_gumbel_mode", sampler("gumbel", (2,), mode="x"), modes=("eager",))
# CASES_END


# --- running a case ---------------------------------------------------------------------------


def run(F, c) -> dict:
    """Run case ``c`` with framework ``F`` in each of its modes."""
    fn, arrays = c["fn"], c["arrays"]
    with F.enable_x64(c["x64"]):
        make = F.random.PRNGKey if c["raw"] else F.random.key
        key = make(c["seed"], impl=c["impl"])
        thunks = {
            "eager": lambda: fn(F, key, *arrays),
            "jit": lambda: F.jit(lambda k, *a: fn(F, k, *a))(key, *arrays),
            "vmap": lambda: F.vmap(lambda k: fn(F, k, *arrays))(F.random.split(key, 3)),
        }
        return {mode: harness.attempt(F, thunks[mode]) for mode in c["modes"]}


if __name__ == "__main__":
    harness.write_reference(REFERENCE, CASES, run, "random_jax_bits_sweep_gen.py")
