"""Derivatives that meet no primitive are Arrays, as in JAX (issue #14).

A gradient that passes straight from the output to an input (``grad(lambda x: x)``)
is the cotangent seed autodiff made on the host; the runtime's rule turns it into an
Array. The expected (dtype, weak_type, shape) of each result were recorded from
JAX 0.10.2. Values JAX returns as they were given (``vjp``'s and ``jvp``'s
pass-through outputs, aux values, ``float0`` zeros) stay host values here too.
"""

from __future__ import annotations

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import dtypes

F32 = np.float32(1.0)


def _vjp_pull(f, *primals):
    out, pull = jax.vjp(f, *primals)
    return pull(out)


# name -> (thunk, [(dtype, weak_type, shape) of each Array leaf, in tree order])
ARRAY_CASES = {
    "grad identity of a Python float": (
        lambda: jax.grad(lambda x: x)(1.0),
        [("float32", True, ())],
    ),
    "grad identity of float32": (lambda: jax.grad(lambda x: x)(F32), [("float32", False, ())]),
    "grad identity of a 0-d array": (
        lambda: jax.grad(lambda x: x)(np.array(1.0, np.float32)),
        [("float32", False, ())],
    ),
    "grad identity of a float64 (x64 off)": (
        lambda: jax.grad(lambda x: x)(np.float64(1.0)),
        [("float32", False, ())],
    ),
    "grad identity of float16": (
        lambda: jax.grad(lambda x: x)(np.float16(1.0)),
        [("float16", False, ())],
    ),
    "grad identity of an Array": (
        lambda: jax.grad(lambda x: x)(jnp.float32(1.0)),
        [("float32", False, ())],
    ),
    "grad of 2.0 * 0 + x": (lambda: jax.grad(lambda x: 2.0 * 0 + x)(1.0), [("float32", True, ())]),
    "grad of a constant": (lambda: jax.grad(lambda x: 2.0)(1.0), [("float32", True, ())]),
    "grad holomorphic identity": (
        lambda: jax.grad(lambda x: x, holomorphic=True)(1j),
        [("complex64", True, ())],
    ),
    "grad of a dict's entry": (
        lambda: jax.grad(lambda t: t["a"])({"a": 1.0, "b": 2.0}),
        [("float32", True, ()), ("float32", True, ())],
    ),
    "grad of a list's entry": (
        lambda: jax.grad(lambda t: t[0])([F32, 2.0]),
        [("float32", False, ()), ("float32", True, ())],
    ),
    "value_and_grad identity": (
        lambda: jax.value_and_grad(lambda x: x)(1.0)[1],
        [("float32", True, ())],
    ),
    "value_and_grad identity of float32": (
        lambda: jax.value_and_grad(lambda x: x)(F32)[1],
        [("float32", False, ())],
    ),
    "grad with aux": (
        lambda: jax.grad(lambda x: (x, x), has_aux=True)(1.0)[0],
        [("float32", True, ())],
    ),
    "jit of grad identity": (lambda: jax.jit(jax.grad(lambda x: x))(1.0), [("float32", True, ())]),
    "jacfwd identity": (lambda: jax.jacfwd(lambda x: x)(1.0), [("float32", True, ())]),
    "jacrev identity": (lambda: jax.jacrev(lambda x: x)(1.0), [("float32", True, ())]),
    "jacrev identity of a vector": (
        lambda: jax.jacrev(lambda x: x)(np.ones(3, np.float32)),
        [("float32", False, (3, 3))],
    ),
    "hessian identity": (lambda: jax.hessian(lambda x: x)(1.0), [("float32", True, ())]),
    "vjp of a constant (zeros)": (
        lambda: _vjp_pull(lambda x: 2.0, 1.0),
        [("float32", True, ())],
    ),
    "jvp tangent of a constant (zeros)": (
        lambda: jax.jvp(lambda x: 2.0, (1.0,), (1.0,))[1],
        [("float32", True, ())],
    ),
}


@pytest.mark.parametrize("name", list(ARRAY_CASES))
def test_the_derivative_is_an_array_like_jax_s(name):
    thunk, expected = ARRAY_CASES[name]
    leaves = jax.tree_util.tree_leaves(thunk())
    assert all(isinstance(x, jax.Array) for x in leaves), [type(x) for x in leaves]
    assert [(str(x.dtype), x.weak_type, x.shape) for x in leaves] == expected


def test_integer_inputs_get_numpy_float0_zeros_beside_an_array():
    g = jax.grad(lambda x, n: x, argnums=(0, 1), allow_int=True)(1.0, 2)
    assert isinstance(g[0], jax.Array) and (g[0].dtype, g[0].weak_type) == (np.float32, True)
    assert type(g[1]) is np.ndarray and g[1].dtype == dtypes.float0 and g[1].shape == ()
    z = jax.grad(lambda x: 2.0, allow_int=True)(1)
    assert type(z) is np.ndarray and z.dtype == dtypes.float0


def test_float0_tangents_pass_through_jit_as_in_jax():
    t0 = np.zeros((), dtypes.float0)
    jvp = jax.jit(lambda x, n, tx, tn: jax.jvp(lambda x, n: (x * n, n), (x, n), (tx, tn)))
    (y, n), (ty, tn) = jvp(2.0, 3, 1.0, t0)
    assert (y.tolist(), n.tolist(), ty.tolist()) == (6.0, 3, 3.0)
    assert type(tn) is np.ndarray and tn.dtype == dtypes.float0 and tn.shape == ()
    g = jax.jit(jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True))(2.0, 3)
    assert g[0].tolist() == 3.0 and type(g[1]) is np.ndarray and g[1].dtype == dtypes.float0
    _, tangents = jax.jit(lambda a, t: jax.jvp(jax.lax.linalg.qdwh, (a,), (t,)))(
        np.eye(2, dtype=np.float32), np.ones((2, 2), np.float32)
    )
    assert [t.dtype for t in tangents[2:]] == [dtypes.float0, dtypes.float0]


def test_pass_through_values_stay_as_given_as_in_jax():
    # vjp's pullback, jvp's and linearize's tangents, and aux values: JAX returns them
    # as they were passed (a float stays a float, a numpy array a numpy array).
    assert type(_vjp_pull(lambda x: x, 1.0)[0]) is float
    ones = np.ones(3, np.float32)
    assert type(jax.jvp(lambda x: x, (ones,), (ones,))[1]) is np.ndarray
    assert type(jax.linearize(lambda x: x, 1.0)[1](1.0)) is float
    aux = jax.grad(lambda x: (x, np.float32(3.0)), has_aux=True)(1.0)[1]
    assert type(aux) is np.float32


def test_the_traced_seed_stays_a_literal():
    assert str(jax.make_jaxpr(jax.grad(lambda x: x))(1.0)).endswith("in (1.0:~f32[],) }")


def test_vjp_primals_passed_through_are_canonical_numpy_arrays_as_in_jax():
    # JAX's vjp takes numpy primals at their canonical dtype (float64 is float32 with x64
    # off), so a primal output that is an input comes back as such an array; Python
    # scalars stay Python scalars (JAX: a float subclass carrying its dtype).
    for x, dtype in [
        (np.float64(1.0), np.float32),
        (np.ones(2), np.float32),
        (np.int64(3), np.int32),
    ]:
        out = jax.vjp(lambda v: v, x)[0]
        assert type(out) is np.ndarray and out.dtype == dtype and out.shape == np.shape(x)
    value = jax.value_and_grad(lambda v: v)(np.float32(1.0))[0]
    assert type(value) is np.ndarray and value.dtype == np.float32 and value.shape == ()
    aux = jax.grad(lambda v: (v, v), has_aux=True)(np.float64(1.0))[1]
    assert type(aux) is np.ndarray and aux.dtype == np.float32
    assert type(jax.vjp(lambda v: v, 1.0)[0]) is float
    # jvp and linearize pass them through as given, as JAX's do.
    assert type(jax.jvp(lambda v: v, (np.float64(1.0),), (np.float64(1.0),))[0]) is np.float64
