"""Jaxpr text with key avals (``key<fry>[3]``, ``impl=fry``) parses back.

JAX 0.10.2's own text of key programs (random_jaxpr_text_reference.json, with the results
JAX computed; the script that recorded them is kept in it as text, under
``recorded_with``, since modjax never imports jax) parses and evaluates to JAX's results;
modjax's text of programs using keys under jit, scan and cond round-trips:
``parse_jaxpr(str(make_jaxpr(f)(k)))`` prints the same and evaluates to ``f(k)``.
"""

import json
import pathlib

import numpy as np
import pytest

from modjax import lax, random
from modjax import numpy as jnp
from modjax.runtime import jit
from modjax.tracecore import dtypes
from modjax.tracecore.evaluation import eval_jaxpr
from modjax.tracecore.parse import JaxprParseError, parse_jaxpr
from modjax.tracecore.tracing import make_jaxpr

REF = json.loads(pathlib.Path(__file__).with_name("random_jaxpr_text_reference.json").read_text())


def _data(x):
    return np.asarray(random.key_data(x) if random._prng.is_key_dtype(x.dtype) else x)


def _argument(name):
    k = random.key(42)
    if name == "wrap":
        return random.key_data(k)
    if name in ("seed", "rbg_seed"):
        return np.int32(7)
    return k


@pytest.mark.parametrize("name", sorted(REF["cases"]))
def test_jax_text_of_key_programs_parses_and_evaluates_to_jaxs_results(name):
    case = REF["cases"][name]
    closed = parse_jaxpr(case["text"])
    (out,) = eval_jaxpr(closed.jaxpr, closed.consts, _argument(name))
    np.testing.assert_array_equal(_data(out), np.asarray(case["result"], _data(out).dtype))


def _program(k):
    ks = random.split(k, 3)
    a = random.normal(ks[0], (2,))
    b = random.bits(random.fold_in(ks[1], 5), (3,), np.uint16)
    c = jit(lambda k: random.uniform(k, (2,)))(ks[2])
    d, _ = lax.scan(lambda k, _: (random.split(k)[0], None), ks[2], None, length=2)
    e = lax.cond(True, lambda k: random.split(k, 2), lambda k: jnp.zeros_like(k, shape=(2,)), d)
    g = random.gamma(ks[1], 2.0, (2,))
    same = ks == ks[0]
    wrapped = random.wrap_key_data(random.key_data(k), impl="threefry2x32")
    return a, b, c, e, g, same, wrapped, random.key(7), random.split(random.key(3, impl="rbg"))


def test_key_programs_round_trip_through_text():
    k = random.key(0)
    closed = make_jaxpr(_program)(k)
    text = str(closed)
    assert "key<fry>[3]" in text and "key<rbg>[2]" in text and "impl=fry" in text
    # As JAX's: random_gamma takes the typed keys, its only param log_space.
    assert "random_gamma[log_space=False] " in text and "key<fry>[]" in text
    parsed = parse_jaxpr(text, closed.consts)
    assert str(parsed) == text
    for got, want in zip(eval_jaxpr(parsed.jaxpr, parsed.consts, k), _program(k), strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(_data(got), _data(want))


def test_key_constants_and_unknown_key_names():
    k = random.key(5)
    closed = make_jaxpr(lambda: random.bits(k, (2,)))()
    parsed = parse_jaxpr(str(closed), closed.consts)
    (out,) = eval_jaxpr(parsed.jaxpr, parsed.consts)
    np.testing.assert_array_equal(out, random.bits(k, (2,)))
    assert dtypes.dtype_from_short_name("key<urbg>") == random.key_dtype("unsafe_rbg")
    with pytest.raises(JaxprParseError, match="unknown dtype 'key<nope>'"):
        parse_jaxpr("{ lambda ; a:key<nope>[]. let  in (a,) }")
    with pytest.raises(JaxprParseError, match="cannot read param 'impl'"):
        parse_jaxpr("{ lambda ; a:i32[]. let b:key<fry>[] = random_seed[impl=nope] a in (b,) }")
