"""The JVP against central finite differences; the transpose against the JVP.

Both run under ``jit`` (one program per primitive, params and operand types, shared
between examples): the rules run while ``jit`` traces, exactly as in eager mode,
and the compiles are fewer than op-by-op.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from modjax.autodiff import UndefinedPrimal, Zero, backward_pass, jvp
from modjax.tracecore import dtypes, make_jaxpr
from modjax.tracecore.core import to_aval

from ._cases import Case
from ._compare import as_list, host, tolerance
from ._evaluation import jitted

__all__ = [
    "check_jvp_rule",
    "check_transpose",
    "inexact_positions",
    "normalize_argnums",
    "perturbed_positions",
]

# Finite-difference step by dtype: large enough that rounding stays below the
# tolerance, small enough that the curvature does too.
_EPS = {"float16": 3e-2, "bfloat16": 1e-1, "float32": 1e-3, "float64": 1e-6}
_EPS.update(complex64=_EPS["float32"], complex128=_EPS["float64"])

# Tolerance of derivatives (finite differences and dot products) by dtype.
_DERIVATIVE_TOLERANCE = {
    "float16": 5e-2,
    "bfloat16": 2e-1,
    "float32": 5e-3,
    "float64": 1e-7,
    "complex64": 5e-3,
    "complex128": 1e-7,
}


def _is_inexact(x) -> bool:
    dtype = to_aval(x).dtype
    return not dtypes.issubdtype(dtype, dtypes.extended) and dtypes.issubdtype(dtype, np.inexact)


def inexact_positions(case: Case) -> tuple[int, ...]:
    """Return the positions of the case's floating and complex operands."""
    return tuple(i for i, a in enumerate(case.args) if _is_inexact(a))


def normalize_argnums(argnums: Sequence[int], nargs: int, what: str) -> tuple[int, ...]:
    """Return ``argnums`` as sorted non-negative positions among ``nargs`` operands.

    Raise ValueError for a position out of range (negative ones count from the end).
    """
    out = set()
    for i in argnums:
        if not isinstance(i, int | np.integer) or not -nargs <= i < nargs:
            raise ValueError(f"check_primitive: {what} {i!r} is not an operand of {nargs}")
        out.add(int(i) % nargs)
    return tuple(sorted(out))


def perturbed_positions(case: Case, jvp_argnums: Sequence[int] | None) -> tuple[int, ...]:
    """Return the operands the derivative checks perturb: the floating ones of ``jvp_argnums``.

    Integer, boolean and key operands have no tangents: they are always held constant.
    """
    inexact = inexact_positions(case)
    if jvp_argnums is None:
        return inexact
    chosen = normalize_argnums(jvp_argnums, len(case.args), "jvp_argnums")
    return tuple(i for i in chosen if i in inexact)


def _dtype_name(x) -> str:
    return np.dtype(to_aval(x).dtype).name


def _loosest(values) -> str:
    """The dtype name among ``values``' floating ones with the loosest derivative tolerance."""
    names = [_dtype_name(v) for v in values if _is_inexact(v)]
    return max(names, key=lambda n: tolerance(n, _DERIVATIVE_TOLERANCE), default="float64")


def _random_like(rng: np.random.RandomState, x) -> np.ndarray:
    aval = to_aval(x)
    out = rng.standard_normal(aval.shape)
    if dtypes.issubdtype(aval.dtype, np.complexfloating):
        out = out + 1j * rng.standard_normal(aval.shape)
    return np.asarray(out, aval.dtype)


def _avals(case: Case) -> tuple:
    return tuple(to_aval(a) for a in case.args)


def _jvp_fn(prim, case: Case, positions: tuple[int, ...]):
    """The jitted ``(args, tangents of positions) -> (outs, tangents out)``.

    The operands outside ``positions`` are closed over, so the JVP rule sees them
    as constants (symbolic zero tangents), as it does when a user differentiates
    with respect to some arguments only.
    """
    avals = _avals(case)
    params = case.params

    def build():
        def run(*args_and_tangents):
            args = args_and_tangents[: len(avals)]
            tangents = args_and_tangents[len(avals) :]

            def f(*perturbed):
                full = list(args)
                for i, x in zip(positions, perturbed, strict=True):
                    full[i] = x
                return prim.bind(*full, **params)

            outs, touts = jvp(f, tuple(args[i] for i in positions), tuple(tangents))
            outs, touts = as_list(prim, outs), as_list(prim, touts)
            # Integer and boolean outputs have float0 tangents, which hold nothing to check.
            return outs, [t if _is_inexact(o) else None for o, t in zip(outs, touts, strict=True)]

        return run

    return jitted(prim, params, ("jvp", avals, positions), build)


def check_jvp_rule(prim, case: Case, draw, jvp_argnums: Sequence[int] | None = None) -> None:
    """Check the JVP at the case's operands against central finite differences.

    Only the floating operands among ``jvp_argnums`` (default: all) are perturbed;
    the others are held constant. Elements where the output or a finite difference
    is not finite are left out.
    """
    positions = perturbed_positions(case, jvp_argnums)
    if not positions:
        return
    rng = np.random.RandomState(0)
    tangents = [_random_like(rng, case.args[i]) for i in positions]
    outs, touts = _jvp_fn(prim, case, positions)(*case.args, *tangents)
    # Step and tolerance by the narrowest of the perturbed operands and the outputs:
    # a primitive may round its result to a narrower type than its operands'.
    name = _loosest([*(case.args[i] for i in positions), *outs])
    eps, tol = _EPS.get(name, 1e-3), tolerance(name, _DERIVATIVE_TOLERANCE)
    f = jitted(prim, case.params)

    def shifted(sign):
        args = list(case.args)
        for i, t in zip(positions, tangents, strict=True):
            x = host(args[i])
            args[i] = np.asarray(x + np.asarray(sign * eps, x.dtype) * t, x.dtype)
        return as_list(prim, f(*args))

    plus, minus = shifted(1.0), shifted(-1.0)
    for k, (out, tout) in enumerate(zip(outs, touts, strict=True)):
        if not _is_inexact(out):
            continue
        wide = np.complex128
        fd = (host(plus[k]).astype(wide) - host(minus[k]).astype(wide)) / (2 * eps)
        t = host(tout).astype(wide)
        finite = np.isfinite(fd) & np.isfinite(t) & np.isfinite(host(out).astype(wide))
        bad = finite & ~(np.abs(t - fd) <= tol * (1.0 + np.abs(fd)))
        if bad.any():
            raise AssertionError(
                f"output {k}: the JVP differs from central finite differences (eps={eps}, "
                f"operands {list(positions)} perturbed) at {int(bad.sum())} of {bad.size} "
                f"elements:\njvp {t[bad]}\nfd  {fd[bad]}"
            )


def _pairing(xs: Sequence, ys: Sequence) -> float:
    """``Re(sum(x * y))`` over two lists of arrays (unconjugated), in double precision.

    The real part is the pairing under which a transpose rule is the transpose for
    complex dtypes too: it holds for maps linear over the reals only (``real``,
    ``imag``, ``conj``, ``complex``), whose complex bilinear pairings differ.
    """
    total = 0.0
    for x, y in zip(xs, ys, strict=True):
        prod = host(x).astype(np.complex128) * host(y).astype(np.complex128)
        total += float(np.sum(prod.real))
    return total


def check_transpose(
    prim,
    case: Case,
    draw,
    linear_argnums: Sequence[Sequence[int]] | None = None,
    jvp_argnums: Sequence[int] | None = None,
) -> None:
    """Check the transpose rule by the dot-product test ``<ct, J v> == <T(ct), v>``.

    The rule is called as ``backward_pass`` calls it, with ``UndefinedPrimal``s for
    the operands of each group of ``linear_argnums`` (default: one group of the
    operands the JVP check perturbs); ``J v`` is the JVP with tangents in that group
    only, the other operands held constant. Non-floating operands of a group are
    left out of it (they have no cotangent).
    """
    if linear_argnums is None:
        groups = [perturbed_positions(case, jvp_argnums)]
    else:
        inexact = inexact_positions(case)
        groups = [
            tuple(i for i in normalize_argnums(g, len(case.args), "linear_argnums") if i in inexact)
            for g in linear_argnums
        ]
    for group in groups:
        if group:
            _check_transpose_group(prim, case, group)


def _transpose_fn(prim, case: Case, group: tuple[int, ...], out_inexact: tuple[bool, ...]):
    """The jitted ``(args, cotangents of the floating outputs) -> cotangents of group``."""
    avals = _avals(case)
    params = case.params

    def build():
        def f(*args):
            return prim.bind(*args, **params)

        closed = make_jaxpr(f)(*case.args)

        def run(*args_and_cts):
            args = args_and_cts[: len(avals)]
            given = iter(args_and_cts[len(avals) :])
            cts = [next(given) if inexact else None for inexact in out_inexact]
            undefined = [
                UndefinedPrimal(a) if i in group else x
                for i, (a, x) in enumerate(zip(avals, args, strict=True))
            ]
            cts_in = backward_pass(closed.jaxpr, closed.consts, undefined, cts)
            return [
                np.zeros(avals[i].shape, avals[i].dtype)
                if cts_in[i] is None or type(cts_in[i]) is Zero
                else cts_in[i]
                for i in group
            ]

        return run

    return jitted(prim, params, ("transpose", avals, group), build)


def _check_transpose_group(prim, case: Case, group: tuple[int, ...]) -> None:
    rng = np.random.RandomState(0)
    tangents = [_random_like(rng, case.args[i]) for i in group]
    outs, jv = _jvp_fn(prim, case, group)(*case.args, *tangents)
    out_inexact = tuple(_is_inexact(o) for o in outs)
    cts = [_random_like(rng, o) for o, inexact in zip(outs, out_inexact, strict=True) if inexact]
    cts_in = _transpose_fn(prim, case, group, out_inexact)(*case.args, *cts)
    jv = [t for t, inexact in zip(jv, out_inexact, strict=True) if inexact]
    lhs = _pairing(cts, jv)
    rhs = _pairing(cts_in, tangents)
    scale = sum(float(np.sum(np.abs(host(c) * host(t)))) for c, t in zip(cts, jv, strict=True))
    tol = tolerance(_loosest([*(case.args[i] for i in group), *outs]), _DERIVATIVE_TOLERANCE)
    if not abs(lhs - rhs) <= tol * (1.0 + scale):
        raise AssertionError(
            f"dot-product test with operands {list(group)} linear: <ct, J v> = {lhs} "
            f"but <T(ct), v> = {rhs}"
        )
