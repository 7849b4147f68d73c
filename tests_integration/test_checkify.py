"""jax.experimental.checkify on modjax: JAX 0.10.2's answers and transformation laws.

The cases are in ``checkify_cases.py``, JAX's answers in ``data/checkify_jax.json``.
"""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import modjax
import modjax.numpy as jnp
from modjax.experimental import checkify as ck

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import checkify_cases  # noqa: E402

RECORDED = json.loads((pathlib.Path(__file__).parent / "data" / "checkify_jax.json").read_text())


def test_every_case_is_recorded():
    assert sorted(RECORDED) == sorted(checkify_cases.CASES)


@pytest.mark.parametrize("name", sorted(checkify_cases.CASES))
def test_checkify_reports_as_jax(name):
    got = json.loads(json.dumps(checkify_cases.CASES[name](modjax)))
    assert got == RECORDED[name]


def _program(x, i):
    ck.check(x < 4.0, "x={} too big", x)
    y = jnp.log(x) + jnp.arange(4.0)[i]
    return modjax.lax.fori_loop(0, 3, lambda k, c: c * jnp.sqrt(c), y)


_checked = ck.checkify(_program, errors=ck.all_checks)
_jitted = modjax.jit(_checked)
_vmapped = modjax.vmap(_checked)

_values = st.sampled_from([-1.0, 0.0, 0.5, 2.0, 3.5, 5.0])
_indices = st.integers(-6, 6)


@given(_values, _indices)
@settings(max_examples=examples(20), deadline=None)
def test_jit_of_checkify_is_checkify(x, i):
    x, i = jnp.float32(x), jnp.int32(i)
    eager_err, eager_out = _checked(x, i)
    jit_err, jit_out = _jitted(x, i)
    assert jit_err.get() == eager_err.get()
    np.testing.assert_allclose(jit_out, eager_out, rtol=1e-6)


@given(st.lists(st.tuples(_values, _indices), min_size=1, max_size=4))
@settings(max_examples=examples(10), deadline=None)
def test_vmap_of_checkify_reports_each_element(pairs):
    xs = jnp.array([p[0] for p in pairs], jnp.float32)
    ids = jnp.array([p[1] for p in pairs], jnp.int32)
    err, out = _vmapped(xs, ids)
    expected = []
    for k, (x, i) in enumerate(pairs):
        e, o = _checked(jnp.float32(x), jnp.int32(i))
        np.testing.assert_allclose(out[k], o, rtol=1e-6)
        if e.get() is not None:
            expected.append(f"at mapped index {k}: {e.get()}")
    assert err.get() == ("\n".join(expected) or None)


def test_error_is_a_pytree_that_jit_and_tree_util_carry():
    err, _ = _jitted(jnp.float32(9.0), jnp.int32(0))
    leaves, tree = modjax.tree_util.tree_flatten(err)
    again = modjax.tree_util.tree_unflatten(tree, leaves)
    assert again.get() == err.get() == "x=9.0 too big (`check` failed)"
    with pytest.raises(ck.JaxRuntimeError, match="too big"):
        ck.check_error(again)


def test_jaxpr_of_checkified_function_evaluates_the_same():
    args = (jnp.float32(5.0), jnp.int32(9))
    closed, shapes = modjax.make_jaxpr(_checked, return_shape=True)(*args)
    leaves = modjax.core.eval_jaxpr(closed.jaxpr, closed.consts, *args)
    # Codes number the checks of one trace: read the leaves with that trace's tree.
    err, out = modjax.tree_util.tree_unflatten(modjax.tree_util.tree_structure(shapes), leaves)
    eager_err, eager_out = _checked(*args)
    assert err.get() == eager_err.get() == "x=5.0 too big (`check` failed)"
    np.testing.assert_allclose(out, eager_out, rtol=1e-6)


def test_errors_must_be_categories():
    with pytest.raises(TypeError, match="error categories"):
        ck.checkify(_program, errors={"nan"})
    with pytest.raises(TypeError, match="expected a callable"):
        ck.checkify(3)


def test_checks_inside_other_higher_order_primitives_are_refused():
    @modjax.custom_batching.custom_vmap
    def f(x):
        ck.check(x > 0, "inside custom_vmap")
        return x

    f.def_vmap(lambda size, in_batched, x: (x, in_batched[0]))
    with pytest.raises(NotImplementedError, match="custom_vmap"):
        ck.checkify(f)(jnp.float32(1.0))


def test_messages_format_arrays_and_key_arrays_as_jax():
    def f(x, k):
        ck.check(jnp.all(x > 0), "x={x} d={d} k={k}", x=x, d={"a": x[0], "b": x}, k=k)
        return x

    keys = modjax.random.split(modjax.random.key(1))
    expected = (
        "x=[-1.  2.] d={'a': Array(-1., dtype=float32), 'b': Array([-1.,  2.], dtype=float32)} "
        "k=Array((2,), dtype=key<fry>) overlaying:\n[[ 507451445 1853169794]\n"
        " [1948878966 4237131848]] (`check` failed)"
    )
    for g in (ck.checkify(f), ck.checkify(modjax.jit(f)), modjax.jit(ck.checkify(f))):
        assert g(jnp.array([-1.0, 2.0]), keys)[0].get() == expected
