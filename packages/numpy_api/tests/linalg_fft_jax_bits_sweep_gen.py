"""Bit-exact known answers of linear algebra and FFTs (JAX 0.10.2): cases and their recorder.

``CASES`` lists calls of ``jax.numpy.linalg``, ``jax.lax.linalg``,
``jax.scipy.linalg`` and the FFT modules, their JVPs and VJPs, with numpy-built
inputs (numpy's legacy ``RandomState``, whose streams are stable). Each case is
``fn(N, *args, **kwargs)`` with ``N`` a namespace of the framework's modules
(``la``, ``lla``, ``sla``, ``fft``, ``sfft``, ``jnp``) and transformations
(``jvp``, ``vjp``, ``grad``, ``vmap``). ``run`` calls a case eagerly on the numpy
inputs and under ``jit`` with them as arguments, and describes each result by its
dtype, shape, weak type and raw bytes (hex), or the error's class and message.

Run this file with a Python where jax is installed, from outside the repository
(modjax's tests never import jax): ``python .../linalg_fft_jax_bits_sweep_gen.py``.
It writes ``linalg_fft_jax_bits_sweep.json`` beside itself, read by
``test_linalg_fft_jax_bits_sweep.py``.
"""

from __future__ import annotations

import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import jax_bits_harness as harness  # noqa: E402

REFERENCE = pathlib.Path(__file__).with_name("linalg_fft_jax_bits_sweep.json")

F32, F64, C64, C128, I32 = np.float32, np.float64, np.complex64, np.complex128, np.int32


rand = harness.rand


def spd(n, dtype=F32, batch=(), seed=0):
    """A Hermitian positive-definite matrix ``a a^H + n I`` of ``dtype``."""
    a = rand(batch + (n, n), dtype, seed).astype(np.complex128)
    s = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return (s if np.dtype(dtype).kind == "c" else s.real).astype(dtype)


CASES: list[dict] = []


def case(name, fn, *args, x64=False, jit=True, **kwargs):
    CASES.append({"name": name, "fn": fn, "args": args, "kwargs": kwargs, "x64": x64, "jit": jit})


def jvp_of(f):
    """``(a, t) -> jvp(f, (a,), (t,))``."""
    return lambda N, a, t: N.jvp(lambda x: f(N, x), (a,), (t,))


def vjp_of(f):
    """``(a, ct...) -> vjp(f, a)[1](ct)``, one cotangent per output."""

    def run(N, a, *cts):
        out, pullback = N.vjp(lambda x: f(N, x), a)
        return pullback(cts if isinstance(out, tuple) else cts[0])

    return run


def _slogdet(N, x, **kw):
    return tuple(N.la.slogdet(x, **kw))


# matrix_power: JAX writes out n <= 3, (a @ a) @ a, not repeated squaring's a @ (a @ a).
for tag, dt, x64 in [("f32", F32, False), ("c64", C64, False)]:
    case(f"matrix_power3_{tag}", lambda N, x: N.la.matrix_power(x, 3), rand((4, 4), dt, 7), x64=x64)
case("matrix_power_m3", lambda N, x: N.la.matrix_power(x, -3), spd(3, F32, seed=1))
case("matrix_power_5", lambda N, x: N.la.matrix_power(x, 5), rand((2, 3, 3), F32, 2))

# trace: JAX sums the masked matrix over both axes (another order than the diagonal's).
case("trace_f32", lambda N, x: N.la.trace(x), spd(4, F32, seed=4))
case("trace_c64_offset", lambda N, x: N.la.trace(x, offset=1), rand((2, 4, 5), C64, 4))
case("jnp_trace_f64", lambda N, x: N.jnp.trace(x), spd(4, F64, seed=4), x64=True)
case("jnp_trace_axes", lambda N, x: N.jnp.trace(x, -1, 2, 0), rand((5, 3, 4), F32, 1))

# One program eagerly, as JAX's jitted functions (XLA fuses multiplies into adds there).
case("det_3x3", lambda N, x: N.la.det(x), spd(3, F32, seed=3))
case("det_2x2_x64", lambda N, x: N.la.det(x), spd(2, F64, seed=2), x64=True)
case("cond_fro", lambda N, x: N.la.cond(x, "fro"), spd(4, F32, seed=4))
case("norm_x64", lambda N, x: N.la.norm(x), rand((3, 4), F64, 5), x64=True)
case("norm_axis0_c64", lambda N, x: N.la.norm(x, axis=0), rand((3, 4), C64, 5))
case("matrix_norm_c64", lambda N, x: N.la.matrix_norm(x), rand((3, 5), C64, 11))
case(
    "lstsq_rcond_c64",
    lambda N, a, b: N.la.lstsq(a, b, rcond=0.1),
    rand((3, 5), C64, 1),
    rand((3,), C64, 2),
)
case(
    "lstsq_c128",
    lambda N, a, b: N.la.lstsq(a, b),
    rand((5, 3), C128, 1),
    rand((5, 2), C128, 2),
    x64=True,
)
case(
    "lstsq_empty_c64", lambda N, a, b: N.la.lstsq(a, b), np.zeros((0, 3), C64), np.zeros((0,), C64)
)
case("vmap_det", lambda N, x: N.vmap(N.la.det)(x), rand((3, 4, 4), F32, 1))
case("pinv_rtol", lambda N, x: N.la.pinv(x, rtol=0.3), rand((4, 3), F32, 11))

# eigh's JVP: JAX's reciprocal gaps (eye + w[j]) - w[i], whose diagonal need not be 0.
for tag, dt, x64 in [("f32", F32, False), ("c64", C64, False), ("f64", F64, True)]:
    a, t = spd(4, dt, seed=24), rand((4, 4), dt, 99)
    case(f"jvp_eigh_{tag}", jvp_of(lambda N, x: tuple(N.la.eigh(x))), a, t, x64=x64)
    case(
        f"vjp_eigh_{tag}",
        vjp_of(lambda N, x: tuple(N.la.eigh(x))),
        a,
        rand((4,), dt, 5).real,
        t,
        x64=x64,
    )
case(
    "jvp_lax_eigh_batch",
    jvp_of(lambda N, x: N.lla.eigh(x)),
    spd(3, F32, (2,), 4),
    rand((2, 3, 3), F32, 77),
)

# slogdet's JVP: JAX recomputes the primal with the default method; complex tangents take
# two real parts (their cotangents summed in JAX's order).
case(
    "jvp_slogdet_qr",
    jvp_of(lambda N, x: _slogdet(N, x, method="qr")),
    rand((4, 4), F32, 24),
    rand((4, 4), F32, 99),
)
case(
    "jvp_slogdet_qr_2x2",
    jvp_of(lambda N, x: _slogdet(N, x, method="qr")),
    rand((2, 2), F32, 22),
    rand((2, 2), F32, 99),
)
case(
    "vjp_slogdet_c128",
    vjp_of(_slogdet),
    rand((4, 4), C128, 24),
    np.complex128(1.0),
    np.float64(0.54),
    x64=True,
)

# |z|'s derivative for complex z: real(g * (conj(z) / |z|)) in complex arithmetic.
case(
    "grad_norm3_c64",
    lambda N, x: N.grad(lambda y: N.jnp.sum(N.la.norm(y, ord=3, axis=1)))(x),
    rand((3, 4), C64, 1),
)
case(
    "grad_abs_c128",
    lambda N, x: N.grad(lambda y: N.jnp.sum(N.jnp.abs(y)))(x),
    rand((5,), C128, 1),
    x64=True,
)
case(
    "grad_abs_zero_c64", lambda N, x: N.grad(lambda y: N.jnp.sum(N.jnp.abs(y)))(x), np.zeros(2, C64)
)

# tridiagonal_solve's JVP: JAX's product adds the off-diagonals with scatter-adds.
for tag, dt, x64 in [("c64", C64, False), ("f32", F32, False)]:
    case(
        f"jvp_tridiagonal_solve_{tag}",
        lambda N, d, b, td: N.jvp(
            lambda d: N.lla.tridiagonal_solve(
                N.jnp.ones_like(d).at[0].set(0), d, N.jnp.ones_like(d).at[-1].set(0), b
            ),
            (d,),
            (td,),
        ),
        (rand((4,), dt, 2) + 4).astype(dt),
        rand((4, 2), dt, 4),
        rand((4,), dt, 5),
        x64=x64,
    )

# solve: JAX's vmap over the right-hand side's columns (complex products batch otherwise).
case(
    "jvp_solve_a_c64",
    lambda N, a, b, t: N.jvp(lambda x: N.la.solve(x, b), (a,), (t,)),
    rand((3, 3), C64, 8),
    rand((3, 3), C64, 5),
    rand((3, 3), C64, 66),
)
case(
    "vjp_solve_c128",
    lambda N, a, b, ct: N.vjp(N.la.solve, a, b)[1](ct),
    rand((4, 4), C128, 7),
    rand((4, 2), C128, 9),
    rand((4, 2), C128, 3),
    x64=True,
)
case(
    "solve_batch_vector",
    lambda N, a, b: N.la.solve(a, b),
    rand((2, 3, 3), F32, 1),
    rand((3,), F32, 2),
)
case(
    "err_solve_batch", lambda N: N.la.solve(N.jnp.ones((2, 3, 3)), N.jnp.ones((3, 3, 2))), jit=False
)

# expm: JAX's Pade sums from the highest power down, 2 ** s in A's (complex) dtype.
for tag, dt, x64 in [("f32", F32, False), ("c64", C64, False), ("f64", F64, True)]:
    case(f"expm_{tag}", lambda N, x: N.sla.expm(x), rand((3, 3), dt, 8), x64=x64)
case(
    "jvp_expm_c64",
    jvp_of(lambda N, x: N.sla.expm(x * 10)),
    rand((3, 3), C64, 8),
    rand((3, 3), C64, 66),
)
case("expm_batch", lambda N, x: N.sla.expm(x), rand((2, 3, 3), F32, 1), jit=False)
case(
    "expm_frechet_c64",
    lambda N, a, e: N.sla.expm_frechet(a, e),
    rand((3, 3), C64, 8),
    rand((3, 3), C64, 12),
)

# FFT norms: JAX's factor from the lengths in the result's dtype (complex sqrt and 1/x).
case("fft2_ortho_c64", lambda N, x: N.fft.fft2(x, norm="ortho"), rand((2, 4, 6), C64, 2))
case(
    "rfft2_ortho_i32",
    lambda N, x: N.fft.rfft2(x, norm="ortho"),
    np.round(3 * rand((2, 4, 6), F64, 2)).astype(I32),
)
case("hfft_ortho_c64", lambda N, x: N.fft.hfft(x, norm="ortho"), rand((3, 8), C64, 1))
case(
    "ifftn_forward_c128",
    lambda N, x: N.fft.ifftn(x, norm="forward"),
    rand((2, 4, 6), C128, 2),
    x64=True,
)
case(
    "jvp_fftn_ortho",
    jvp_of(lambda N, y: N.fft.fftn(y, norm="ortho")),
    rand((3, 8), F32, 1),
    rand((3, 8), F32, 5),
)

# DCTs: JAX's rotations exp(-i pi k / 2N) in the input's complex type; dctn's 2-D pairs.
for tag, dt, x64 in [("f32", F32, False), ("c64", C64, False)]:
    x = rand((3, 8), dt, 1)
    case(f"dct_{tag}", lambda N, x: N.sfft.dct(x), x, x64=x64)
    case(f"idct_ortho_{tag}", lambda N, x: N.sfft.idct(x, norm="ortho"), x, x64=x64)
case("dct_n12_ortho", lambda N, x: N.sfft.dct(x, n=12, norm="ortho"), rand((3, 8), F32, 1))
case("idct_n5_axis0", lambda N, x: N.sfft.idct(x, n=5, axis=0), rand((3, 8), F32, 1))
case("dctn_2d", lambda N, x: N.sfft.dctn(x, axes=(0, 2)), rand((2, 4, 6), F32, 2))
case("idctn_s", lambda N, x: N.sfft.idctn(x, s=(3, 5), axes=(0, 2)), rand((2, 4, 6), F32, 2))
case(
    "vjp_dctn",
    vjp_of(lambda N, y: N.sfft.dctn(y, norm="ortho")),
    rand((3, 8), F32, 1),
    rand((3, 8), F32, 4),
)
case("dct_int", lambda N, x: N.sfft.dct(x), np.arange(6, dtype=I32))

# Errors with JAX's text (and a few likely to regress).
case("err_trace_same_axes", lambda N: N.jnp.trace(N.jnp.ones((3, 3)), axis1=1, axis2=-1), jit=False)
case("err_slogdet_method", lambda N: N.la.slogdet(N.jnp.eye(3), method="bad"), jit=False)
case("err_norm_ord", lambda N: N.la.norm(N.jnp.ones((3, 3)), ord=3), jit=False)
case("err_matrix_power_rect", lambda N: N.la.matrix_power(N.jnp.ones((2, 3)), 3), jit=False)


# Eager only (each compiles once more under jit): cases whose fix changed the formula,
# which eager and jitted runs share; the others also check the one-program paths.
_EAGER_ONLY = {
    "matrix_power_m3",
    "matrix_power_5",
    "jnp_trace_axes",
    "pinv_rtol",
    "jvp_lax_eigh_batch",
    "jvp_eigh_f64",
    "vjp_eigh_f64",
    "jvp_eigh_c64",
    "vjp_eigh_c64",
    "jvp_slogdet_qr_2x2",
    "grad_abs_zero_c64",
    "jvp_tridiagonal_solve_f32",
    "vjp_solve_c128",
    "solve_batch_vector",
    "expm_f64",
    "expm_c64",
    "jvp_expm_c64",
    "expm_frechet_c64",
    "jvp_fftn_ortho",
    "ifftn_forward_c128",
    "dct_c64",
    "idct_ortho_c64",
    "dct_n12_ortho",
    "idct_n5_axis0",
    "idctn_s",
    "vjp_dctn",
    "dct_int",
    "dctn_2d",
    "lstsq_empty_c64",
}
for _c in CASES:
    if _c["name"] in _EAGER_ONLY:
        _c["jit"] = False


# --- running a case ---------------------------------------------------------------------------


def run(F, c) -> dict:
    """Run case ``c`` with framework ``F`` eagerly and jitted."""
    return harness.run_eager_and_jit(F, c)


if __name__ == "__main__":
    harness.write_reference(REFERENCE, CASES, run, "linalg_fft_jax_bits_sweep_gen.py")
