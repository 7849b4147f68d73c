"""Specs of the elementwise functions (ufuncs, comparisons, vectorize) for the jnp sweeps.

Differentiable functions are checked inside their domains and away from their
singularities (log on [0.5, 3], arccosh on [1.2, 3], ...). The piecewise constant
float functions (floor, round, sign, ...) and the quotient of floor division are
checked at order 1 at points away from their jumps, where JAX's derivative is zero;
remainders are checked there too, where they are smooth. Comparisons, predicates and
integer functions only run the vmap sweep.
"""

import functools

import numpy as np
from jnp_sweep_specs import add, bools, complexes, exclude, floats, ints

import modjax.numpy as jnp

S0, S1, S2 = (), (3,), (2, 3)


def away(*shape, lo=0.5, hi=2.0):
    """Make float64 values of ``shape`` in +-[lo, hi]."""
    return floats(*shape, lo=lo, hi=hi, away_from_zero=True)


def between_jumps(*shape, step=1.0, lo=-3, hi=2):
    """Make float64 values of ``shape`` at least ``step / 10`` from multiples of ``step / 2``."""

    def make(rng):
        offset = rng.uniform(0.1, 0.4, shape) + rng.choice([0.0, 0.5], shape)
        return np.asarray((rng.randint(lo, hi + 1, shape) + offset) * step, np.float64)

    return make


def divisors(*shape):
    """Make float64 divisors of ``shape`` in {+-0.5, +-1, +-2}."""
    return lambda rng: np.asarray(rng.choice([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0], shape))


def dividends(*shape):
    """Make float64 values whose quotients by ``divisors`` stay away from integers.

    They lie at least 0.05 from multiples of 0.5, so every quotient is at least
    0.025 from an integer, far beyond the perturbations of the gradient check.
    """
    return between_jumps(*shape, step=0.5, lo=-6, hi=5)


def specials(*shape, dtype=np.float64):
    """Make float values of ``shape`` with NaN, inf and -inf at some positions."""

    def make(rng):
        x = rng.uniform(-2.0, 2.0, shape)
        pick = rng.randint(0, 6, shape)
        x = np.where(pick == 0, np.nan, x)
        x = np.where(pick == 1, np.inf, x)
        x = np.where(pick == 2, -np.inf, x)
        return np.asarray(x, dtype)

    return make


def partly_real(*shape):
    """Make complex128 values of ``shape``, about half of them with a zero imaginary part."""
    base = complexes(*shape)

    def make(rng):
        z = base(rng)
        return np.where(rng.rand(*shape) > 0.5, z.real + 0j, z)

    return make


def near(*shape, scale=2e-5):
    """Make tiny float64 offsets of ``shape`` that straddle isclose's tolerance."""
    return floats(*shape, lo=-scale, hi=scale)


# --- unary, differentiable ------------------------------------------------------------------

# (names, maker of the operand): each name gets a (2, 3) spec; the first of each row a 0-d
# one too.
_SMOOTH_UNARY = [
    (("sin", "cos", "tan"), floats(*S2, lo=-1.2, hi=1.2)),
    (("arcsin", "asin", "arccos", "acos", "arctanh", "atanh"), floats(*S2, lo=-0.8, hi=0.8)),
    (("arctan", "atan", "sinh", "cosh", "tanh", "arcsinh", "asinh"), floats(*S2)),
    (("arccosh", "acosh"), floats(*S2, lo=1.2, hi=3.0)),
    (("exp", "exp2", "expm1", "i0"), floats(*S2)),
    (("log", "log10", "log2", "sqrt"), floats(*S2, lo=0.5, hi=3.0)),
    (("log1p",), floats(*S2, lo=-0.5, hi=2.0)),
    (("cbrt", "abs", "absolute", "fabs", "sinc"), away(*S2, lo=0.3)),
    (("reciprocal",), away(*S2)),
    (("square", "negative", "positive", "deg2rad", "rad2deg", "degrees", "radians"), floats(*S2)),
    (("real", "imag", "conj", "conjugate", "nan_to_num"), floats(*S2)),
]

for _names, _maker in _SMOOTH_UNARY:
    for _name in _names:
        add(_name, getattr(jnp, _name), _maker, diff=(0,))
    _first = _names[0]
    add(f"{_first}[0-d]", getattr(jnp, _first), lambda rng, m=_maker: m(rng)[0, 0], diff=(0,))

# Holomorphic functions and complex-to-real ones, on complex operands.
for _name in ("exp", "sin", "tanh", "square", "reciprocal", "negative", "conj"):
    add(f"{_name}[complex]", getattr(jnp, _name), complexes(*S2, lo=0.5, hi=1.5), diff=(0,))
for _name in ("log", "sqrt"):
    add(f"{_name}[complex]", getattr(jnp, _name), complexes(*S2, lo=0.5, hi=1.5), diff=(0,))
for _name in ("abs", "real", "imag", "angle"):
    add(f"{_name}[complex]", getattr(jnp, _name), complexes(*S2, lo=0.5, hi=1.5), diff=(0,))
add("angle", jnp.angle, away(*S2))
add(
    "angle[deg=True]",
    functools.partial(jnp.angle, deg=True),
    complexes(*S1, lo=0.5, hi=1.5),
    diff=(0,),
)
for _name in ("abs", "negative", "square", "sign", "positive"):
    add(f"{_name}[int]", getattr(jnp, _name), ints(*S2))
add("sign[complex]", jnp.sign, complexes(*S2))

# Both parts of modf and the mantissa of frexp are smooth between integers / powers of two.
add("modf", jnp.modf, between_jumps(*S2), diff=(0,))
add("frexp", jnp.frexp, away(*S2, lo=0.3, hi=0.9), diff=(0,))
add("frexp[int]", jnp.frexp, ints(*S1))
add("nan_to_num[specials]", jnp.nan_to_num, specials(*S2))
add(
    "nan_to_num[nan,posinf,neginf]",
    functools.partial(jnp.nan_to_num, nan=1.5, posinf=9.0, neginf=-9.0),
    specials(*S2),
)
add("spacing", jnp.spacing, floats(*S2, lo=-4.0, hi=4.0))

# --- piecewise constant: zero derivatives away from the jumps --------------------------------

for _name in ("floor", "ceil", "rint", "trunc", "round", "around"):
    add(_name, getattr(jnp, _name), between_jumps(*S2), diff=(0,), order=1)
add(
    "round[decimals=1]",
    functools.partial(jnp.round, decimals=1),
    between_jumps(*S2, step=0.1),
    diff=(0,),
    order=1,
)
add("sign", jnp.sign, away(*S2, lo=0.2), diff=(0,), order=1)
for _name in ("floor", "ceil", "rint", "trunc", "round"):
    add(f"{_name}[int]", getattr(jnp, _name), ints(*S1))

# --- predicates ------------------------------------------------------------------------------

for _name in ("isfinite", "isinf", "isnan", "isneginf", "isposinf", "signbit"):
    add(_name, getattr(jnp, _name), specials(*S2))
add("isnan[complex]", jnp.isnan, complexes(*S1))
add("isfinite[int]", jnp.isfinite, ints(*S1))
add("signbit[int]", jnp.signbit, ints(*S1))
add("iscomplex", jnp.iscomplex, partly_real(*S2))
add("isreal", jnp.isreal, partly_real(*S2))
add("isreal[float]", jnp.isreal, floats(*S1))
add("iscomplex[float]", jnp.iscomplex, floats(*S1))

# --- binary, differentiable ------------------------------------------------------------------

# (names, maker of x1, maker of x2) on (2, 3); the first of each row also broadcasts
# (2, 3) with (3,) and () with (2, 3).
_SMOOTH_BINARY = [
    (("add", "subtract", "multiply", "logaddexp", "logaddexp2"), floats, floats),
    (("divide", "true_divide"), floats, away),
    (
        ("power", "pow", "float_power"),
        functools.partial(floats, lo=0.5, hi=2.0),
        floats,
    ),
    (("arctan2", "atan2"), floats, away),
    (("hypot",), functools.partial(away, lo=0.3), functools.partial(away, lo=0.3)),
    (("maximum", "minimum", "fmax", "fmin"), floats, floats),
]

for _names, _m1, _m2 in _SMOOTH_BINARY:
    for _name in _names:
        add(_name, getattr(jnp, _name), _m1(*S2), _m2(*S2), diff=(0, 1))
    _f = getattr(jnp, _names[0])
    add(f"{_names[0]}[(2,3),(3,)]", _f, _m1(*S2), _m2(*S1), diff=(0, 1))
    add(f"{_names[0]}[(),(2,3)]", _f, _m1(*S0), _m2(*S2), diff=(0, 1))

add("copysign", jnp.copysign, away(*S2, lo=0.2), away(*S2, lo=0.2), diff=(0, 1))
add("copysign[(3,),()]", jnp.copysign, away(*S1, lo=0.2), away(*S0, lo=0.2), diff=(0, 1))
add("heaviside", jnp.heaviside, away(*S2, lo=0.2), floats(*S2), diff=(0, 1), order=1)
add("heaviside[zeros]", jnp.heaviside, ints(*S2, lo=-1, hi=1), floats(*S1))
add("ldexp", jnp.ldexp, floats(*S2), ints(*S2, lo=-3, hi=3), diff=(0,))
add("ldexp[(3,),()]", jnp.ldexp, floats(*S1), ints(lo=-3, hi=3), diff=(0,))
add("nextafter", jnp.nextafter, floats(*S2), floats(*S2))
add("nextafter[(2,3),()]", jnp.nextafter, floats(*S2), floats(*S0))
add("fmax[nan]", jnp.fmax, specials(*S2), specials(*S2))
add("fmin[nan]", jnp.fmin, specials(*S2), specials(*S1))
add("maximum[nan]", jnp.maximum, specials(*S2), floats(*S2))
add("minimum[nan]", jnp.minimum, floats(*S1), specials(*S2))
add("power[0-d,negative base]", jnp.power, floats(), ints(lo=0, hi=3))
add("power[complex]", jnp.power, complexes(*S2, lo=0.5, hi=1.5), floats(*S2), diff=(0, 1))
for _name in ("add", "multiply", "subtract", "divide"):
    add(
        f"{_name}[complex]",
        getattr(jnp, _name),
        complexes(*S2, lo=0.5, hi=1.5),
        complexes(*S1, lo=0.5, hi=1.5),
        diff=(0, 1),
    )

# Remainders and quotients: smooth (the quotient constant) away from integral quotients.
for _name in ("mod", "remainder", "fmod", "divmod"):
    add(_name, getattr(jnp, _name), dividends(*S2), divisors(*S2), diff=(0, 1))
add("floor_divide", jnp.floor_divide, dividends(*S2), divisors(*S2), diff=(0, 1), order=1)
add("mod[(2,3),(3,)]", jnp.mod, dividends(*S2), divisors(*S1), diff=(0, 1))
add("floor_divide[(),(2,3)]", jnp.floor_divide, dividends(), divisors(*S2), diff=(0, 1), order=1)

# --- integer and boolean binary functions ----------------------------------------------------

_NONZERO = functools.partial(ints, lo=1, hi=4)
for _name in ("mod", "remainder", "fmod", "floor_divide", "divmod"):
    _f = getattr(jnp, _name)
    add(f"{_name}[int]", _f, ints(*S2, lo=-9, hi=9), lambda rng: -_NONZERO(*S2)(rng))
    add(f"{_name}[int,(3,),(2,3)]", _f, ints(*S1, lo=-9, hi=9), _NONZERO(*S2))
for _name in ("add", "subtract", "multiply", "maximum", "minimum"):
    add(f"{_name}[int]", getattr(jnp, _name), ints(*S2), ints(*S1))
add("add[bool]", jnp.add, bools(*S2), bools(*S2))
add("multiply[bool,int]", jnp.multiply, bools(*S2), ints(*S2))
add("divide[int]", jnp.divide, ints(*S2), _NONZERO(*S2))
add("power[int]", jnp.power, ints(*S2), ints(*S2, lo=0, hi=3))
add("power[float,int]", jnp.power, floats(*S2), ints(*S1, lo=-2, hi=3), diff=(0,))

for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    add(_name, getattr(jnp, _name), ints(*S2, lo=-9, hi=9), ints(*S2, lo=-9, hi=9))
    add(f"{_name}[bool]", getattr(jnp, _name), bools(*S2), bools(*S1))
add("bitwise_and[uint8]", jnp.bitwise_and, ints(*S2, lo=0, hi=255, dtype=np.uint8), ints())
for _name in ("invert", "bitwise_not", "bitwise_invert"):
    add(_name, getattr(jnp, _name), ints(*S2, lo=-9, hi=9))
add("invert[bool]", jnp.invert, bools(*S2))
add("invert[uint8]", jnp.invert, ints(*S1, lo=0, hi=255, dtype=np.uint8))
add("bitwise_count", jnp.bitwise_count, ints(*S2, lo=-99, hi=99))
add("bitwise_count[uint8]", jnp.bitwise_count, ints(*S1, lo=0, hi=255, dtype=np.uint8))
for _name in ("left_shift", "bitwise_left_shift", "right_shift", "bitwise_right_shift"):
    add(_name, getattr(jnp, _name), ints(*S2, lo=-99, hi=99), ints(*S2, lo=0, hi=5))
add(
    "right_shift[uint8]",
    jnp.right_shift,
    ints(*S2, lo=0, hi=255, dtype=np.uint8),
    ints(*S1, lo=0, hi=7),
)
add("left_shift[(),(3,)]", jnp.left_shift, ints(lo=-9, hi=9), ints(*S1, lo=0, hi=5))
for _name in ("gcd", "lcm"):
    add(_name, getattr(jnp, _name), ints(*S2, lo=-12, hi=12), ints(*S2, lo=-12, hi=12))
    add(f"{_name}[(3,),()]", getattr(jnp, _name), ints(*S1, lo=0, hi=12), ints(lo=1, hi=12))

for _name in ("logical_and", "logical_or", "logical_xor"):
    add(_name, getattr(jnp, _name), bools(*S2), bools(*S2))
    add(f"{_name}[float,int]", getattr(jnp, _name), ints(*S2, lo=-1, hi=1), floats(*S1))
add("logical_not", jnp.logical_not, bools(*S2))
add("logical_not[int]", jnp.logical_not, ints(*S1, lo=-1, hi=1))

# --- comparisons -----------------------------------------------------------------------------

_SMALL_INTS = functools.partial(ints, lo=-1, hi=1)
for _name in ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal"):
    _f = getattr(jnp, _name)
    add(_name, _f, floats(*S2), floats(*S2))
    add(f"{_name}[int,(2,3),(3,)]", _f, _SMALL_INTS(*S2), _SMALL_INTS(*S1))
add("equal[nan]", jnp.equal, specials(*S2), specials(*S2))
add("less[complex]", jnp.less, complexes(*S1), complexes(*S1))
add("greater[bool]", jnp.greater, bools(*S2), bools(*S2))

add("isclose", lambda a, d: jnp.isclose(a, a + d), floats(*S2), near(*S2))
add("isclose[(2,3),(3,)]", jnp.isclose, _SMALL_INTS(*S2), _SMALL_INTS(*S1))
add(
    "isclose[equal_nan,rtol,atol]",
    lambda a, b: jnp.isclose(a, b, rtol=0.1, atol=0.5, equal_nan=True),
    specials(*S2),
    specials(*S2),
)
add("isclose[complex]", lambda a, d: jnp.isclose(a, a + d), complexes(*S1), near(*S1))
add("allclose", lambda a, d: jnp.allclose(a, a + d), floats(*S1), near(*S1, scale=2e-6))
add(
    "allclose[equal_nan]", lambda a, b: jnp.allclose(a, b, equal_nan=True), specials(2), specials(2)
)
add("array_equal", jnp.array_equal, ints(*S1, lo=0, hi=1), ints(*S1, lo=0, hi=1))
add("array_equal[shapes differ]", jnp.array_equal, ints(*S2), ints(*S1))
add(
    "array_equal[equal_nan]",
    lambda a, b: jnp.array_equal(a, b, equal_nan=True),
    specials(2),
    specials(2),
)
add("array_equiv", jnp.array_equiv, ints(*S2, lo=0, hi=1), ints(*S1, lo=0, hi=1))
add("array_equiv[float]", jnp.array_equiv, ints(2, lo=0, hi=1), floats())

# --- vectorize -------------------------------------------------------------------------------

_inner = jnp.vectorize(lambda a, b: jnp.sum(a * b), signature="(n),(n)->()")
add("vectorize[(n),(n)->()]", _inner, floats(*S2), floats(*S1), diff=(0, 1))
add(
    "vectorize[scalar]",
    jnp.vectorize(lambda x, y: x * jnp.sin(y)),
    floats(*S2),
    floats(*S1),
    diff=(0, 1),
)
_powers = jnp.vectorize(
    lambda x, k: jnp.stack([x**i for i in range(1, k + 1)]), signature="()->(k)", excluded={1}
)
add("vectorize[()->(k),excluded]", lambda x: _powers(x, 3), floats(*S1), diff=(0,))
_soft_step = jnp.frompyfunc(lambda x, y: jnp.where(x > y, x * y, jnp.sin(y)), 2, 1)
add("frompyfunc", _soft_step, floats(*S2), floats(*S1), diff=(0, 1), order=1)
add("frompyfunc[reduce]", lambda x: _soft_step.reduce(x, axis=1), floats(*S2), diff=(0,), order=1)


# --- excluded --------------------------------------------------------------------------------

exclude("takes dtypes, returns a Python bool", "can_cast")
exclude(
    "returns a Python bool from the dtype or type of its operand",
    "iscomplexobj",
    "isrealobj",
    "isscalar",
    "iterable",
)
exclude(
    "dtype utility: takes and returns dtypes, not arrays",
    "finfo",
    "iinfo",
    "isdtype",
    "issubdtype",
    "promote_types",
    "result_type",
)
exclude("needs a DLPack producer object, not an array to batch", "from_dlpack")
