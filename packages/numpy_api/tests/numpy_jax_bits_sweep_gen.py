"""Bit-exact known answers of jax.numpy functions (JAX 0.10.2): cases and their recorder.

``CASES`` lists calls of window functions, ``arange``, ``vander``, histograms,
``interp``, ``trapezoid``, ``gradient``, ``unwrap``, ``cov``/``corrcoef``,
polynomials and products, each with numpy-built inputs (numpy's legacy
``RandomState``, whose streams are stable). ``run`` calls a case with a framework
(jax or modjax) eagerly on the numpy inputs and under ``jit`` with them as
arguments, and describes each result by its dtype, shape, weak type and raw
bytes (hex), or the error's class and message: equal records mean equal bits.

Run this file with a Python where jax is installed, from outside the repository
(modjax's tests never import jax): ``python .../numpy_jax_bits_sweep_gen.py``. It
writes ``numpy_jax_bits_sweep.json`` beside itself, read by
``test_numpy_jax_bits_sweep.py``.
"""

from __future__ import annotations

import pathlib
import sys

import ml_dtypes
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jax_bits_harness as harness  # noqa: E402

REFERENCE = pathlib.Path(__file__).with_name("numpy_jax_bits_sweep.json")

F16, F32, F64, BF16 = np.float16, np.float32, np.float64, ml_dtypes.bfloat16
C64, I32, B = np.complex64, np.int32, np.bool_


rand, uniform = harness.rand, harness.uniform


CASES: list[dict] = []


def case(name, fn, *args, x64=False, jit=True, **kwargs):
    """``fn`` is a jnp function's name or ``fn(jnp, *args, **kwargs)``."""
    if isinstance(fn, str):
        fn = (lambda attr: lambda jnp, *a, **k: getattr(jnp, attr)(*a, **k))(fn)
    CASES.append({"name": name, "fn": fn, "args": args, "kwargs": kwargs, "x64": x64, "jit": jit})


# Window functions: JAX's formulas with weakly typed Python constants.
for window, m in [("hanning", 12), ("hamming", 12), ("blackman", 12), ("bartlett", 7)]:
    case(f"{window}_{m}", window, m, jit=False)
case("hanning_12_x64", "hanning", 12, x64=True, jit=False)
case("hanning_negative", "hanning", -1, jit=False)

# arange: start + step * iota in the dtype, the length from the bounds' own arithmetic.
for i, (args, dtype) in enumerate(
    [
        ((0.1, 1.0, 0.1), None),
        ((0, -3, -1.0), None),
        ((np.float32(0), np.float32(1), np.float32(0.1)), None),
        ((2.5, -4.5, -0.3), None),
        ((0, 1, 0.1), F16),
        ((0, 1, 0.1), BF16),
        ((0.5, 3.2, 0.25), I32),
        ((16777217.5, 16777220.0, 1.0), I32),
        ((0, 2.5, 0.5), C64),
    ]
):
    case(f"arange_{i}", "arange", *args, dtype=dtype, jit=False)
case("arange_x64", "arange", 0.1, 1.0, 0.1, x64=True, jit=False)

# vander: one power of x against exponents in x's dtype.
case("vander_c64", "vander", rand((4,), C64, 4))
case("vander_increasing", "vander", rand((4,), F32, 5), N=6, increasing=True)
case("vander_bool", "vander", rand((4,), B, 4))

# Histograms: JAX's linspace for the edges, its order of density normalizations.
case("histogram_bin_edges", "histogram_bin_edges", rand((50,), F32, 7), bins=6)
case("histogram_range", "histogram", rand((50,), F32, 7), bins=5, range=(-1.3, 2.1))
case("histogram_empty", "histogram", np.zeros(0, F32), bins=3)
case("histogramdd_density", "histogramdd", rand((30, 2), F32, 4), bins=3, density=True)

# interp: f0 + (delta / dx) * df, always one program.
xp = np.sort(rand((8,), F32, 5))
case("interp", "interp", rand((12,), F32, 6), xp, rand((8,), F32, 7))
case(
    "interp_left_right",
    "interp",
    rand((12,), F32, 6, 3),
    xp,
    rand((8,), F32, 7),
    left=-9.0,
    right=9.0,
)
case(
    "interp_extrapolate",
    "interp",
    rand((12,), F32, 6, 3),
    xp,
    rand((8,), F32, 7),
    left="extrapolate",
    right="extrapolate",
)
case("interp_complex", "interp", rand((6,), F32, 6), xp, rand((8,), C64, 7))
case("interp_period", "interp", rand((12,), F32, 6, 5), xp, rand((8,), F32, 7), period=2.0)
case("interp_f16", "interp", rand((12,), F16, 6), xp.astype(F16), rand((8,), F16, 7))
case("interp_bf16", "interp", rand((12,), BF16, 6), xp.astype(BF16), rand((8,), BF16, 7))
case("interp_f64_x64", "interp", rand((12,), F64, 6), xp.astype(F64), rand((8,), F64, 7), x64=True)

# trapezoid: dx * (sum - (y0 + yn) / 2) for a constant spacing.
case("trapezoid", "trapezoid", rand((3, 7), F32, 30))
case("trapezoid_x", "trapezoid", rand((3, 7), F32, 30), x=np.sort(rand((7,), F32, 31)))
case("trapezoid_dx_int", "trapezoid", rand((3, 7), I32, 30), dx=0.3, axis=0)
case("trapezoid_f16", "trapezoid", rand((3, 7), F16, 30))
case("trapezoid_bf16_dx", "trapezoid", rand((3, 7), BF16, 30), dx=0.3, axis=0)
case("trapezoid_c64_dx", "trapezoid", rand((3, 7), C64, 30), dx=0.3, axis=0)
case("trapezoid_x64", "trapezoid", rand((3, 7), F64, 30), x64=True)

# gradient: (f[2:] - f[:-2]) * 0.5 / h, one program.
case("gradient_spacing_f16", "gradient", rand((7,), F16, 32), 0.3)
case("gradient_coordinates", "gradient", rand((6,), F32, 1), np.sort(rand((6,), F32, 2)))
case("gradient_int_coordinates", "gradient", rand((6,), F32, 1), np.array([0, 1, 3, 4, 8, 9], I32))

# unwrap: JAX's interval (floor-halved for integers) whatever the period's parity.
case("unwrap", "unwrap", rand((10,), F32, 35, 4))
case("unwrap_odd_period", "unwrap", np.array([0, 5, 11, 2, 7, 3, 10], I32), period=7)
case("unwrap_complex", "unwrap", rand((5,), C64, 35))

# cov and corrcoef: average, centring, one dot over the factor; complex deviations.
case("cov", "cov", rand((3, 6), F32, 36))
case("cov_f16", "cov", rand((3, 6), F16, 36))
case("cov_c64", "cov", rand((3, 6), C64, 36))
case(
    "cov_weights",
    "cov",
    rand((2, 6), F32, 1),
    fweights=np.array([1, 2, 1, 3, 1, 1], I32),
    aweights=uniform((6,), F32, 3),
)
case("corrcoef", "corrcoef", rand((3, 6), F32, 36))
case("corrcoef_c64", "corrcoef", rand((3, 6), C64, 36))
case("corrcoef_int", "corrcoef", rand((3, 6), I32, 36))
case("cov_x64", "cov", rand((3, 6), F32, 36), x64=True)

# Polynomials: JAX's programs (products over grids, polydiv op by op).
case("polyval", "polyval", rand((4,), F32, 10), rand((5,), F32, 12))
case("polyval_unroll", "polyval", rand((6,), F32, 1), rand((5,), F32, 2), unroll=2)
case("polyder_m2", "polyder", rand((5,), F32), m=2)
case("polyder_m3_int", "polyder", rand((6,), I32), m=3)
case("polyint_c64", "polyint", rand((4,), C64, 10))
case("polyint_m3", "polyint", rand((3,), F32), m=3, k=np.array([1.0, 2.0, 3.0], F32))
case("polydiv", "polydiv", rand((5,), F32, 1), rand((3,), F32, 2), jit=False)
case("polyadd_2d", "polyadd", np.ones((2, 2), F32), np.ones(2, F32))
case("polyfit", "polyfit", np.linspace(0, 1, 10).astype(F32), rand((10,), F32, 3), 2)
case(
    "polyfit_weights",
    "polyfit",
    np.linspace(0, 1, 10).astype(F32),
    rand((10,), F32, 3),
    3,
    w=uniform((10,), F32, 4),
)
case("polyfit_cov", "polyfit", np.linspace(0, 1, 10).astype(F32), rand((10,), F32, 3), 2, cov=True)
case("polyfit_int", "polyfit", np.arange(6, dtype=I32), np.array([1, 3, 2, 5, 4, 7], I32), 1)
case("poly", "poly", np.array([1.0, 2.0, 3.0], F32))

# Products: JAX's dot_general forms (size-1 batch dimensions squeezed), one program.
case("matmul_broadcast", "matmul", rand((2, 1, 3, 4)), rand((5, 4, 2), F32, 1))
case("matmul_broadcast_4d", "matmul", rand((1, 2, 3, 4)), rand((5, 1, 4, 2), F32, 1))
case("matmul_vector_batch", "matmul", rand((4,)), rand((2, 4, 3), F32, 1))
case("matmul_broadcast_x64", "matmul", rand((2, 1, 3, 4), F64), rand((5, 4, 2), F64, 1), x64=True)
case("vecdot_c64", "vecdot", rand((2, 3), C64), rand((3,), C64, 1))
case("vecdot_c64_same", "vecdot", rand((4, 3), C64), rand((4, 3), C64, 1))
case("vecdot_broadcast", "vecdot", rand((2, 1, 3), C64), rand((4, 3), C64, 1))
case("vdot_c64", "vdot", rand((3, 4), C64, 80), rand((3, 4), C64, 83))
case("cross", "cross", rand((4, 3), F32, 88), rand((4, 3), F32, 89))
case("cross_axes", "cross", rand((3, 4)), rand((3, 4), F32, 1), axisa=0, axisb=0, axisc=0)
case("kron_bool", "kron", rand((2, 2), B, 86), rand((2, 3), B, 87))

# Set operations: intersect1d's indices in the default integer (int64 with x64).
a1 = np.array([3, 1, 4, 1, 5, 9, 2, 6], I32)
a2 = np.array([2, 7, 1, 8, 2, 8], I32)
case("intersect1d_indices_x64", "intersect1d", a1, a2, return_indices=True, x64=True, jit=False)
case("intersect1d_indices_size_x64", "intersect1d", a1, a2, return_indices=True, size=5, x64=True)

# Lists holding numpy scalars: the leaves' promoted type, Python scalars weak.
case("array_int8_and_int", lambda jnp: jnp.array([np.int8(1), 2]), jit=False)
case(
    "array_float32_and_float_x64",
    lambda jnp: jnp.array([np.float32(2.5), 1.0]),
    x64=True,
    jit=False,
)

# Errors with JAX's text.
case("meshgrid_0d", lambda jnp: jnp.meshgrid(jnp.asarray(1.0), jnp.arange(3)), jit=False)


# --- running a case ---------------------------------------------------------------------------


def run(F, c) -> dict:
    """Run case ``c`` with framework ``F`` eagerly and jitted; its ``fn`` takes ``F.jnp``."""
    return harness.run_eager_and_jit(F, c, F.jnp)


if __name__ == "__main__":
    harness.write_reference(REFERENCE, CASES, run, "numpy_jax_bits_sweep_gen.py")
