"""``jax.experimental.jet``: Taylor-mode automatic differentiation.

``jet(fun, primals, series)`` pushes a truncated Taylor polynomial through ``fun``:
the function is traced to a jaxpr and each equation maps the Taylor coefficients
of its operands to those of its results with a rule from ``jet_rules`` (the rules
work on coefficients, ``f^(k) / k!``; ``factorial_scaled`` converts from and to
derivatives at the boundary). Nested jit, checkpoint and custom_jvp/custom_vjp
programs are expanded (as in JAX, a custom rule is not used: the function's own
program is). A primitive without a rule raises NotImplementedError when a nonzero
series reaches it, as JAX does; ``deflinear``, ``defzero``, ``def_deriv`` and
``def_comp`` register rules for more primitives.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import numpy as np

import modjax.numpy as jnp
from modjax import lax
from modjax.tracecore import core
from modjax.tracecore.core import Primitive
from modjax.tracecore.jaxpr import ClosedJaxpr, DropVar, Jaxpr, Literal
from modjax.tracecore.tracing import make_jaxpr
from modjax.tracecore.tree_util import (
    register_pytree_node,
    tree_flatten,
    tree_structure,
    tree_unflatten,
    treedef_is_leaf,
)

from .._unsupported import Unsupported

__all__ = [
    "JetTrace",
    "JetTracer",
    "ZeroSeries",
    "ZeroTerm",
    "call_param_updaters",
    "def_comp",
    "def_deriv",
    "deflinear",
    "defzero",
    "deriv_prop",
    "fact",
    "jet",
    "jet2",
    "jet_fun",
    "jet_rules",
    "jet_subtrace",
    "linear_prop",
    "register_pytree_node",
    "traceable",
    "tree_flatten",
    "treedef_is_leaf",
    "zero_prop",
    "zero_series",
    "zero_term",
]

# JAX's jet is a trace with its own tracers, entered through linear_util
# transformations; modjax's interprets the traced jaxpr instead, so these have no
# counterpart.
_INTERPRETER = (
    "JAX's jet runs as a trace of its own; modjax's jet interprets the jaxpr of the "
    "function, with the rules of jet_rules"
)
JetTrace = Unsupported("jax.experimental.jet.JetTrace", _INTERPRETER)
JetTracer = Unsupported("jax.experimental.jet.JetTracer", _INTERPRETER)
jet_fun = Unsupported("jax.experimental.jet.jet_fun", _INTERPRETER)
jet_subtrace = Unsupported("jax.experimental.jet.jet_subtrace", _INTERPRETER)
traceable = Unsupported("jax.experimental.jet.traceable", _INTERPRETER)
call_param_updaters = Unsupported(
    "jax.experimental.jet.call_param_updaters",
    _INTERPRETER + "; nested calls are expanded, so they take no parameter updates",
)


class ZeroTerm:
    """The zero term of a series (JAX's ``jet.zero_term``)."""

    def __repr__(self):
        return "zero_term"


class ZeroSeries:
    """A series whose every term is zero (JAX's ``jet.zero_series``)."""

    def __repr__(self):
        return "zero_series"


zero_term = ZeroTerm()
zero_series = ZeroSeries()

# primitive -> rule(primals_in, series_in, **params) -> (primal_out, series_out); the
# series are Taylor coefficients (term k is f^(k)/k!), one list of terms per operand.
jet_rules: dict[Primitive, Callable] = {}


class JetRuleError(KeyError, NotImplementedError):
    """No jet rule for a primitive a nonzero series reaches (a KeyError, as JAX's)."""

    def __str__(self):
        return str(self.args[0])


def fact(n):
    """Return ``n!`` as a float array (JAX's ``jet.fact``)."""
    return lax.exp(lax.lgamma(n + 1.0))


def jet(fun: Callable, primals, series, factorial_scaled: bool = True, **_):
    """Return ``(fun(*primals), series_out)``: Taylor-mode derivatives (jax.experimental.jet.jet).

    ``primals`` is a tuple or list of arrays (one per positional parameter) and
    ``series`` one list of higher-order terms per primal, all of one length (the
    order). With ``factorial_scaled`` the terms are derivatives (term k of the input
    is the k-th derivative of the input curve); without it, Taylor coefficients.
    ``primals_out`` and ``series_out`` have the output's pytree structure.
    """
    try:
        (order,) = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series, strict=True)):
        if tree_structure(x).num_nodes != 1:
            raise ValueError(f"primal value at position {i} is not an array")
        for j, term in enumerate(terms):
            if tree_structure(term).num_nodes != 1:
                raise ValueError(f"term {j} for argument {i} is not an array")
    primals = [jnp.asarray(x) for x in primals]
    if factorial_scaled:
        series = [[jnp.asarray(t) / math.factorial(k + 1) for k, t in enumerate(terms)]
                  for terms in series]  # fmt: skip
    else:
        series = [[jnp.asarray(t) for t in terms] for terms in series]
    closed, out_shape = make_jaxpr(fun, return_shape=True)(*primals)
    out_tree = tree_structure(out_shape)
    out_primals, out_series = _eval(closed.jaxpr, closed.consts, order, primals, series)
    out_series = [
        [jnp.zeros_like(p)] * order if s is zero_series else s
        for p, s in zip(out_primals, out_series, strict=True)
    ]
    if factorial_scaled:
        out_series = [[t * math.factorial(k + 1) for k, t in enumerate(terms)]
                      for terms in out_series]  # fmt: skip
    return tree_unflatten(out_tree, out_primals), tree_unflatten(out_tree, out_series)


def jet2(fun: Callable, primals, series, **kwargs):
    """Return ``jet(fun, primals, series, factorial_scaled=False)`` (JAX's ``jet2``):
    the terms in and out are Taylor coefficients."""
    return jet(fun, primals, series, factorial_scaled=False, **kwargs)


# --- the interpreter --------------------------------------------------------------------------

_INLINED = ("jit", "closed_call", "core_call", "remat", "custom_jvp_call", "custom_vjp_call")


def _eval(jaxpr: Jaxpr, consts, order: int, primals, series):
    primal_env: dict = {}
    series_env: dict = {}

    def read(atom):
        if isinstance(atom, Literal):
            return atom.val, zero_series
        return primal_env[atom], series_env[atom]

    for var, value in zip(jaxpr.constvars, consts, strict=True):
        primal_env[var], series_env[var] = value, zero_series
    for var, value, terms in zip(jaxpr.invars, primals, series, strict=True):
        primal_env[var], series_env[var] = value, terms
    for eqn in jaxpr.eqns:
        values = [read(a) for a in eqn.invars]
        ps = [v for v, _ in values]
        ss = [s for _, s in values]
        outs, out_series = _eqn(eqn, order, ps, ss)
        for var, value, terms in zip(eqn.outvars, outs, out_series, strict=True):
            if not isinstance(var, DropVar):
                primal_env[var], series_env[var] = value, terms
    results = [read(a) for a in jaxpr.outvars]
    return [v for v, _ in results], [s for _, s in results]


def _eqn(eqn, order, primals, series):
    primitive = eqn.primitive
    if primitive.name in _INLINED:
        program = _program_of(eqn)
        return _eval(program.jaxpr, program.consts, order, primals, series)
    if all(s is zero_series for s in series):
        outs = primitive.bind(*primals, **eqn.params)
        outs = list(outs) if primitive.multiple_results else [outs]
        return outs, [zero_series] * len(outs)
    rule = jet_rules.get(primitive)
    if rule is None:
        raise JetRuleError(f"Jet rule for '{primitive.name}' not implemented")
    full = [
        [jnp.zeros_like(p)] * order if s is zero_series else list(s)
        for p, s in zip(primals, series, strict=True)
    ]
    out, out_series = rule(primals, full, **eqn.params)
    if primitive.multiple_results:
        return list(out), list(out_series)
    return [out], [out_series]


def _program_of(eqn) -> ClosedJaxpr:
    for key in ("jaxpr", "call_jaxpr"):
        program = eqn.params.get(key)
        if isinstance(program, ClosedJaxpr):
            return program
        if isinstance(program, Jaxpr):
            return ClosedJaxpr(program, ())
    raise JetRuleError(f"Jet rule for '{eqn.primitive.name}' not implemented")


# --- rule makers ----------------------------------------------------------------------------


def linear_prop(primitive: Primitive, primals_in, series_in, **params):
    """The rule of a linear primitive: each term is the primitive of the operands' terms.

    JAX's ``linear_prop``; ``deflinear(p)`` registers ``partial(linear_prop, p)``.
    """
    out = primitive.bind(*primals_in, **params)
    terms = [primitive.bind(*ts, **params) for ts in zip(*series_in, strict=True)]
    if primitive.multiple_results:
        return out, [list(t) for t in zip(*terms, strict=True)]
    return out, terms


def zero_prop(primitive: Primitive, primals_in, series_in, **params):
    """The rule of a locally constant primitive: its output series is zero (``zero_prop``)."""
    out = primitive.bind(*primals_in, **params)
    if primitive.multiple_results:
        return out, [[jnp.zeros_like(o)] * len(series_in[0]) for o in out]
    return out, [jnp.zeros_like(out)] * len(series_in[0])


def deflinear(prim: Primitive) -> None:
    """Register ``prim`` as linear: each term is the primitive of the operands' terms."""
    jet_rules[prim] = functools.partial(linear_prop, prim)


def defzero(prim: Primitive) -> None:
    """Register ``prim`` as locally constant: its output series is zero."""
    jet_rules[prim] = functools.partial(zero_prop, prim)


def _linear_in(primitive: Primitive, positions: Sequence[int]) -> None:
    """Linear in the operands at ``positions``; the others (indices) keep their primal."""

    def rule(primals, series, **params):
        out = primitive.bind(*primals, **params)
        terms = []
        for k in range(len(series[0])):
            ops = [series[i][k] if i in positions else p for i, p in enumerate(primals)]
            terms.append(primitive.bind(*ops, **params))
        return out, terms

    jet_rules[primitive] = rule


def _cauchy(a: list, b: list, k: int, product: Callable):
    return sum(product(a[j], b[k - j]) for j in range(k + 1))


def _bilinear(primitive: Primitive) -> None:
    def rule(primals, series, **params):
        x, y = primals
        a, b = [x, *series[0]], [y, *series[1]]

        def product(u, v):
            return primitive.bind(u, v, **params)

        out = product(x, y)
        return out, [_cauchy(a, b, k, product) for k in range(1, len(a))]

    jet_rules[primitive] = rule


def deriv_terms(fun: Callable, derivative: Callable, x, xs: list):
    """Return ``(fun(x), terms)``: the series of ``fun(x)`` given ``derivative`` (f')."""
    d0, ds = jet2(derivative, (x,), (xs,))
    y = [fun(x)]
    u = [x, *xs]
    d = [d0, *ds]
    for k in range(1, len(u)):
        y.append(sum((j / k) * u[j] * d[k - j] for j in range(1, k + 1)))
    return y[0], y[1:]


def deriv_prop(primitive: Primitive, derivative: Callable, primals_in, series_in, **params):
    """The rule of a unary ``primitive`` whose derivative is ``derivative(x)`` (``deriv_prop``)."""
    (x,), (xs,) = primals_in, series_in
    return deriv_terms(lambda v: primitive.bind(v, **params), derivative, x, xs)


def def_deriv(prim: Primitive, deriv: Callable) -> None:
    """Register ``prim`` (unary) by its derivative ``deriv(x)`` (JAX's ``def_deriv``)."""
    jet_rules[prim] = functools.partial(deriv_prop, prim, deriv)


def def_comp(prim: Primitive, comp: Callable) -> None:
    """Register ``prim`` as the composition ``comp`` of others (JAX's ``def_comp``)."""

    def rule(primals, series, **params):
        return jet2(comp, primals, series)

    jet_rules[prim] = rule


def _cumulative(combine: Callable) -> Callable:
    """The rule of a running reduction: the jet of the associative scan it computes."""

    def rule(primals, series, *, axis, reverse):
        scan = functools.partial(lax.associative_scan, combine, axis=axis, reverse=reverse)
        return jet2(scan, primals, series)

    return rule


# --- rules of the elementary functions -------------------------------------------------------


def _exp(primals, series, **params):
    (x,), (xs,) = primals, series
    u = [x, *xs]
    y = [lax.exp(x)]
    for k in range(1, len(u)):
        y.append(sum((j / k) * u[j] * y[k - j] for j in range(1, k + 1)))
    return y[0], y[1:]


def _log(primals, series, **params):
    (x,), (xs,) = primals, series
    u = [x, *xs]
    y = [lax.log(x)]
    for k in range(1, len(u)):
        rest = sum((j / k) * y[j] * u[k - j] for j in range(1, k))
        y.append((u[k] - rest) / x)
    return y[0], y[1:]


def _div(primals, series, **params):
    (x, z), (xs, zs) = primals, series
    a, b = [x, *xs], [z, *zs]
    q = [lax.div(x, z)]
    for k in range(1, len(a)):
        q.append((a[k] - sum(b[j] * q[k - j] for j in range(1, k + 1))) / z)
    return q[0], q[1:]


def _sinusoid(sign: float, pair: tuple[Callable, Callable], index: int):
    def rule(primals, series, **params):
        (x,), (xs,) = primals, series
        u = [x, *xs]
        s, c = [pair[0](x)], [pair[1](x)]
        for k in range(1, len(u)):
            s.append(sum((j / k) * u[j] * c[k - j] for j in range(1, k + 1)))
            c.append(sign * sum((j / k) * u[j] * s[k - j] for j in range(1, k + 1)))
        out = (s, c)[index]
        return out[0], out[1:]

    return rule


def _riccati(value: Callable, slope: Callable):
    """``y' = slope(y) x'`` with ``slope`` a quadratic in y (tanh, logistic)."""

    def rule(primals, series, **params):
        (x,), (xs,) = primals, series
        u = [x, *xs]
        y = [value(x)]
        d = [slope(y, 0)]
        for k in range(1, len(u)):
            y.append(sum((j / k) * u[j] * d[k - j] for j in range(1, k + 1)))
            d.append(slope(y, k))
        return y[0], y[1:]

    return rule


def _square_term(y: list, k: int):
    return sum(y[j] * y[k - j] for j in range(k + 1))


def _tanh_slope(y, k):  # 1 - y^2
    return (1 - _square_term(y, 0)) if k == 0 else -_square_term(y, k)


def _logistic_slope(y, k):  # y - y^2
    return y[k] - _square_term(y, k)


def _integer_pow(primals, series, *, y):
    (x,), (xs,) = primals, series
    n = abs(int(y))
    result = ([jnp.ones_like(x)], [[jnp.zeros_like(x)] * len(xs)])
    base = ([x], [list(xs)])
    mul = jet_rules[lax.mul_p]
    while n:
        if n & 1:
            p, s = mul([result[0][0], base[0][0]], [result[1][0], base[1][0]])
            result = ([p], [s])
        n >>= 1
        if n:
            p, s = mul([base[0][0], base[0][0]], [base[1][0], base[1][0]])
            base = ([p], [s])
    if int(y) < 0:
        return _div([jnp.ones_like(x), result[0][0]], [[jnp.zeros_like(x)] * len(xs), result[1][0]])
    return result[0][0], result[1][0]


def _pow(primals, series, **params):
    # x ** y = exp(y log x)
    (x, z), (xs, zs) = primals, series
    lx, lxs = _log([x], [xs])
    prod, prods = jet_rules[lax.mul_p]([z, lx], [zs, lxs])
    return lax.pow(x, z), _exp([prod], [prods])[1]


def _sqrt(primals, series, **params):
    (x,), (xs,) = primals, series
    u = [x, *xs]
    y = [lax.sqrt(x)]
    for k in range(1, len(u)):
        y.append((u[k] - sum(y[j] * y[k - j] for j in range(1, k))) / (2 * y[0]))
    return y[0], y[1:]


def _rsqrt(primals, series, **params):
    (x,), (xs,) = primals, series
    s, ss = _sqrt([x], [xs])
    zeros = [jnp.zeros_like(x)] * len(xs)
    return lax.rsqrt(x), _div([jnp.ones_like(x), s], [zeros, ss])[1]


def _expm1(primals, series, **params):
    (x,), (xs,) = primals, series
    return lax.expm1(x), _exp([x], [xs])[1]


def _log1p(primals, series, **params):
    (x,), (xs,) = primals, series
    return lax.log1p(x), _log([1 + x], [xs])[1]


def _abs(primals, series, **params):
    (x,), (xs,) = primals, series
    signs = lax.select(lax.lt(x, jnp.zeros_like(x)), jnp.full_like(x, -1), jnp.full_like(x, 1))
    return lax.abs(x), [signs * t for t in xs]


def _select_n(primals, series, **params):
    which, *cases = primals
    terms = [lax.select_n(which, *ts) for ts in zip(*series[1:], strict=True)]
    return lax.select_n(which, *cases), terms


def _chooser(choose_x: Callable):
    def rule(primals, series, **params):
        x, y = jnp.broadcast_arrays(*primals)
        pick, tie = choose_x(x, y), x == y
        out = lax.select(pick, x, y)
        terms = []
        for tx, ty in zip(*series, strict=True):
            tx, ty = jnp.broadcast_arrays(tx, ty)
            terms.append(lax.select(tie, (tx + ty) / 2, lax.select(pick, tx, ty)))
        return out, terms

    return rule


def _reduce_chooser(reducer: Callable):
    def rule(primals, series, *, axes, **params):
        (x,), (xs,) = primals, series
        out = reducer(x, axes)
        kept = [1 if i in axes else d for i, d in enumerate(x.shape)]
        at = (x == lax.reshape(out, tuple(kept))).astype(xs[0].dtype)
        count = lax.reduce_sum(at, axes)
        return out, [lax.div(lax.reduce_sum(t * at, axes), count) for t in xs]

    return rule


def _atan2(primals, series, **params):
    # atan2(y, x) moves as atan(y / x): d/dt = q' / (1 + q^2) with q = y / x.
    (y, x), (ys, xs) = primals, series
    q, qs = _div([y, x], [ys, xs])
    sq, sqs = jet_rules[lax.mul_p]([q, q], [qs, qs])
    zeros = [jnp.zeros_like(q)] * len(qs)
    d, ds = _div([jnp.ones_like(q), 1 + sq], [zeros, sqs])
    u, dd = [q, *qs], [d, *ds]
    terms = [sum((j / k) * u[j] * dd[k - j] for j in range(1, k + 1)) for k in range(1, len(u))]
    return lax.atan2(y, x), terms


def _erf_inv(primals, series, **params):
    # y = erfinv(x): y' = (sqrt(pi) / 2) exp(y^2) x', a recurrence in y's own terms.
    (x,), (xs,) = primals, series
    u = [x, *xs]
    y = [lax.erf_inv(x)]
    scale = np.sqrt(np.pi) / 2
    for k in range(1, len(u)):
        known = y + [jnp.zeros_like(x)] * (len(u) - len(y))
        sq, sqs = jet_rules[lax.mul_p]([known[0], known[0]], [known[1:], known[1:]])
        e, es = _exp([sq], [sqs])
        d = [scale * t for t in (e, *es)]
        y.append(sum((j / k) * u[j] * d[k - j] for j in range(1, k + 1)))
    return y[0], y[1:]


def _erf_derivative(x):
    return (2 / np.sqrt(np.pi)) * lax.exp(-lax.square(x))


def _prims(*names) -> list[Primitive]:
    return [p for name in names for p in core.primitives_by_name.get(name, ())]


for _p in _prims(
    "le", "lt", "gt", "ge", "eq", "ne", "not", "and", "or", "xor", "floor", "ceil", "round",
    "sign", "stop_gradient", "is_finite", "shift_left", "shift_right_arithmetic",
    "shift_right_logical", "bitcast_convert_type", "iota", "argmax", "argmin", "population_count",
    "clz", "nextafter", "random_bits", "random_seed", "random_wrap", "random_unwrap",
    "threefry2x32", "rng_bit_generator",
):  # fmt: skip
    defzero(_p)
for _p in _prims(
    "neg", "real", "complex", "conj", "imag", "add", "add_any", "sub", "convert_element_type",
    "broadcast_in_dim", "concatenate", "split", "pad", "reshape", "squeeze", "expand_dims", "rev",
    "transpose", "slice", "reduce_sum", "reduce_window_sum", "fft", "copy", "copy_p",
    "device_put", "reshard", "cumsum", "sharding_constraint", "reduce_precision",
):  # fmt: skip
    deflinear(_p)
# Linear in the data operands; indices keep their primal values.
_LINEAR_IN = {
    "dynamic_slice": (0,),
    "dynamic_update_slice": (0, 1),
    "gather": (0,),
    "scatter-add": (0, 2),
    "scatter_add": (0, 2),
}
for _name, _positions in _LINEAR_IN.items():
    for _p in _prims(_name):
        _linear_in(_p, _positions)
for _p in _prims("mul", "dot_general", "conv_general_dilated"):
    _bilinear(_p)

jet_rules[lax.cumprod_p] = _cumulative(lax.mul)
jet_rules[lax.cummax_p] = _cumulative(lax.max)
jet_rules[lax.cummin_p] = _cumulative(lax.min)
jet_rules[lax.exp_p] = _exp
jet_rules[lax.log_p] = _log
jet_rules[lax.div_p] = _div
jet_rules[lax.sin_p] = _sinusoid(-1.0, (lax.sin, lax.cos), 0)
jet_rules[lax.cos_p] = _sinusoid(-1.0, (lax.sin, lax.cos), 1)
jet_rules[lax.sinh_p] = _sinusoid(1.0, (lax.sinh, lax.cosh), 0)
jet_rules[lax.cosh_p] = _sinusoid(1.0, (lax.sinh, lax.cosh), 1)
jet_rules[lax.tanh_p] = _riccati(lax.tanh, _tanh_slope)
jet_rules[lax.logistic_p] = _riccati(lax.logistic, _logistic_slope)
jet_rules[lax.integer_pow_p] = _integer_pow
jet_rules[lax.pow_p] = _pow
jet_rules[lax.sqrt_p] = _sqrt
jet_rules[lax.rsqrt_p] = _rsqrt
jet_rules[lax.expm1_p] = _expm1
jet_rules[lax.log1p_p] = _log1p
jet_rules[lax.abs_p] = _abs
jet_rules[lax.atan2_p] = _atan2
jet_rules[lax.erf_inv_p] = _erf_inv
jet_rules[lax.select_n_p] = _select_n
jet_rules[lax.max_p] = _chooser(lambda x, y: x > y)
jet_rules[lax.min_p] = _chooser(lambda x, y: x < y)
jet_rules[lax.reduce_max_p] = _reduce_chooser(lax.reduce_max)
jet_rules[lax.reduce_min_p] = _reduce_chooser(lax.reduce_min)
def_deriv(lax.erf_p, _erf_derivative)
def_comp(lax.square_p, lambda x: x * x)
def_comp(lax.erfc_p, lambda x: 1 - lax.erf(x))
def_comp(lax.asinh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) + 1)))
def_comp(lax.acosh_p, lambda x: lax.log(x + lax.sqrt(lax.square(x) - 1)))
def_comp(lax.atanh_p, lambda x: 0.5 * lax.log(lax.div(1 + x, 1 - x)))
def_comp(lax.rem_p, lambda x, y: x - y * lax.floor(x / y))
def_comp(lax.clamp_p, lambda a, x, b: lax.min(lax.max(a, x), b))
def_comp(lax.tan_p, lambda x: lax.sin(x) / lax.cos(x))
