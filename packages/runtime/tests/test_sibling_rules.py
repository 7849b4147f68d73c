"""The rules the runtime registers between autodiff, batching and lowering.

As a DSL author on top of modjax.runtime would: a handful of primitives of our
own (``tr_sin``, ``tr_cos``, ``tr_mul``, ``tr_neg``) with lowerings, device
impls, JVP, transpose and batching rules, composed with ``jit``, ``grad`` and
``vmap``. Only tracecore, autodiff, batching, lowering and runtime are used.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

from modjax import runtime as R
from modjax.autodiff import (
    SymbolicZero,
    add_any_p,
    checkpoint,
    custom_jvp,
    custom_vjp,
    defbilinear,
    defjvp,
    deflinear,
    grad,
    jvp,
    linear_transpose,
    name_p,
    stop_gradient,
    zeros_like_p,
)
from modjax.autodiff.testing import check_grads
from modjax.batching import (
    broadcast,
    defbroadcasting,
    defvectorized,
    expand_dims,
    iota,
    moveaxis,
    squeeze,
    vmap,
)
from modjax.lowering import LoweringError, hlo, ir_type, register_lowering
from modjax.runtime import compile_cache
from modjax.runtime.jit import jit_p
from modjax.runtime.jit_primitive import jit_batching_update_params
from modjax.runtime.sibling_rules.sum_batch import sum_batch, sum_batch_p
from modjax.tracecore import core, dtypes, make_jaxpr
from modjax.tracecore.abstract import ShapedArray

# --- the DSL ----------------------------------------------------------------------------------


def _result(*avals):
    ranked = [a.shape for a in avals if a.shape]
    shape = ranked[0] if ranked else ()
    for other in ranked:  # equal ranks; size-1 axes broadcast (what defbroadcasting needs)
        if len(other) != len(shape) or any(
            a != b and 1 not in (a, b) for a, b in zip(other, shape, strict=True)
        ):
            raise TypeError(f"tr: incompatible shapes {[a.shape for a in avals]}")
        shape = tuple(max(a, b) for a, b in zip(other, shape, strict=True))
    strong = [a for a in avals if not a.weak_type]
    return ShapedArray(shape, (strong or avals)[0].dtype, not strong)


def _elementwise(name, hlo_fn):
    prim = core.Primitive(name)

    def lowering(ctx, *operands):
        out = ctx.avals_out[0]
        args = [
            v
            if a.shape == out.shape
            else hlo.broadcast_in_dim(ir_type(out), v, list(range(len(a.shape))))
            for v, a in zip(operands, ctx.avals_in, strict=True)
        ]
        return hlo_fn(*args)

    prim.def_abstract_eval(_result)
    prim.def_impl(functools.partial(R.apply_primitive, prim))
    register_lowering(prim, lowering)
    return prim


def _unbroadcast(ct, aval):
    """Sum ``ct`` over the axes that an operand of type ``aval`` was broadcast along."""
    shape = core.to_aval(ct).shape
    if shape == aval.shape:
        return ct
    if not aval.shape:
        return total(ct)
    for axis in reversed(range(len(shape))):
        if aval.shape[axis] == 1 and shape[axis] != 1:
            ct = expand_dims(sum_batch(ct, axis), (axis,))
    return ct


sin_p = _elementwise("tr_sin", hlo.sine)
cos_p = _elementwise("tr_cos", hlo.cosine)
neg_p = _elementwise("tr_neg", hlo.negate)
mul_p = _elementwise("tr_mul", hlo.multiply)


def sin(x):
    return sin_p.bind(x)


def cos(x):
    return cos_p.bind(x)


def mul(x, y):
    return mul_p.bind(x, y)


defjvp(sin_p, lambda g, x: mul(g, cos(x)))
defjvp(cos_p, lambda g, x: neg_p.bind(mul(g, sin(x))))
deflinear(neg_p, lambda ct, x: [neg_p.bind(ct)])
defbilinear(
    mul_p,
    lambda ct, x, y: _unbroadcast(mul(ct, y), x.aval),
    lambda ct, x, y: _unbroadcast(mul(x, ct), y.aval),
)
for _p in (sin_p, cos_p, neg_p):
    defvectorized(_p)
defbroadcasting(mul_p)

X = np.array([0.3, -1.2, 2.0], np.float32)
XS = np.array([[0.5, 1.0, -0.7], [2.0, -0.3, 0.1], [0.9, 1.5, -1.1], [-2.0, 0.4, 0.6]], np.float32)


def total(x):
    """Sum of all elements, with the runtime's ``sum_batch``."""
    while core.to_aval(x).shape:
        x = sum_batch(x, 0)
    return x


def f(x):
    return total(mul(sin(x), x))


def f_grad(x):
    return np.cos(x) * x + np.sin(x)


def jit_eqns(closed):
    return [e for e in closed.jaxpr.eqns if e.primitive is jit_p]


# --- jit's call primitive -----------------------------------------------------------------------


def test_grad_of_jit_splits_into_two_calls():
    jf = R.jit(f)
    np.testing.assert_allclose(grad(jf)(X), f_grad(X), rtol=1e-6)
    closed = make_jaxpr(grad(jf))(X)
    forward, backward = jit_eqns(closed)
    assert sin_p in {e.primitive for e in forward.params["jaxpr"].jaxpr.eqns}
    assert sin_p not in {e.primitive for e in backward.params["jaxpr"].jaxpr.eqns}
    for eqn in (forward, backward):
        assert len(eqn.params["donated_invars"]) == len(eqn.invars)


def test_jit_of_grad_is_one_program():
    g = R.jit(grad(R.jit(f)))
    np.testing.assert_allclose(g(X), f_grad(X), rtol=1e-6)
    (call,) = jit_eqns(make_jaxpr(g)(X))
    text = g.lower(X).as_text()  # one program: main calls the forward and backward parts
    assert text.count("func.func public") == 1 and text.count("func.func private") == 2
    assert len(call.params["donated_invars"]) == len(call.invars)


def test_jvp_of_jit_tangents_are_never_donated():
    jf = R.jit(lambda x: mul(sin(x), 2.0), donate_argnums=0)
    closed = make_jaxpr(lambda x, t: jvp(jf, (x,), (t,)))(X, X)
    (call,) = jit_eqns(closed)
    assert call.params["donated_invars"] == (True, False)
    y, t = jvp(jf, (R.device_put(X),), (R.device_put(X),))
    np.testing.assert_allclose(t, 2 * np.cos(X) * X, rtol=1e-6)


def test_vmap_of_jit_batches_the_program_once():
    jf = R.jit(lambda x: mul(sin(x), total(x)))
    out = vmap(jf)(XS)
    np.testing.assert_allclose(out, np.sin(XS) * XS.sum(1, keepdims=True), rtol=1e-6)
    (a,) = jit_eqns(make_jaxpr(vmap(jf))(XS))
    b1, b2 = jit_eqns(make_jaxpr(vmap(lambda x: jf(jf(x))))(XS))
    assert a.params["jaxpr"] is b1.params["jaxpr"] is b2.params["jaxpr"]
    out = vmap(jf, in_axes=1, out_axes=1)(XS.T)
    np.testing.assert_allclose(out, np.sin(XS.T) * XS.sum(1), rtol=1e-6)


def test_grad_of_jit_derives_the_forward_and_backward_calls_once():
    jf = R.jit(f)
    first = [e.params["jaxpr"] for e in jit_eqns(make_jaxpr(grad(jf))(X))]
    second = [e.params["jaxpr"] for e in jit_eqns(make_jaxpr(grad(jf))(X))]
    assert len(first) == 2 and all(a is b for a, b in zip(first, second, strict=True))


def test_eager_grad_of_jit_does_not_lower_again():
    jf = R.jit(f)
    x = R.device_put(X)
    np.testing.assert_allclose(grad(jf)(x), f_grad(X), rtol=1e-6)
    stats = dict(compile_cache.stats)
    for xs in (x, R.device_put(2 * X)):  # same shapes: the same executables
        np.testing.assert_allclose(grad(jf)(xs), f_grad(np.asarray(xs)), rtol=1e-6)
    # Every lowering reaches the compile cache (a compile or a memory hit): none did.
    assert compile_cache.stats == stats
    R.clear_caches()  # the derived programs go too: the next call lowers again
    np.testing.assert_allclose(grad(jf)(x), f_grad(X), rtol=1e-6)
    assert compile_cache.stats != stats


def test_batching_keeps_donated_invars_in_step():
    params = {"jaxpr": None, "donated_invars": (True, False), "name": "f"}
    new = jit_batching_update_params(params, (None, None, 0, None), (0,), "J")
    assert new["donated_invars"] == (False, False, True, False) and new["jaxpr"] == "J"
    jf = R.jit(lambda x, y: mul(x, y), donate_argnums=0)
    (call,) = jit_eqns(make_jaxpr(vmap(jf, in_axes=(0, None)))(XS, X))
    assert call.params["donated_invars"] == (True, False)


def test_grad_never_donates_a_residual_to_the_forward_call():
    jf = R.jit(lambda x, y: mul(x, y), donate_argnums=0)
    x = R.device_put(X)
    g = grad(lambda y: total(jf(x, y)))(R.device_put(X * 2))
    np.testing.assert_allclose(g, X, rtol=1e-6)
    assert not x.is_deleted()
    jg = R.jit(lambda x, y: total(mul(sin(x), y)), donate_argnums=0)
    x = R.device_put(X)
    np.testing.assert_allclose(grad(jg)(x, X * 2), np.cos(X) * X * 2, rtol=1e-6)
    assert x.is_deleted()  # as JAX: the forward call consumed it


# --- lowerings and eager impls -------------------------------------------------------------------


def test_lowerings_of_autodiff_and_batching_primitives():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)

    def program(x):
        y = add_any_p.bind(x, x)
        z = zeros_like_p.bind(aval=ShapedArray((2, 3), np.dtype(np.float32)))
        m = moveaxis(add_any_p.bind(y, z), 0, 1)  # (3, 2)
        b = broadcast(m, 4, 1)  # (3, 4, 2)
        e = expand_dims(b, (0,))  # (1, 3, 4, 2)
        s = squeeze(e, (0,))
        r = sum_batch(stop_gradient(name_p.bind(s, name="n")), 1)  # (3, 2)
        return r, iota(5)

    eager = program(x)
    compiled = R.jit(program)(x)
    expected = np.broadcast_to((2 * x).T[:, None, :], (3, 4, 2)).sum(1)
    for got in (eager, compiled):
        np.testing.assert_allclose(got[0], expected)
        np.testing.assert_array_equal(got[1], np.arange(5))
        assert isinstance(got[0], R.Array)  # eager impls run on the device
    assert isinstance(add_any_p.bind(x, x), R.Array)


def test_float0_values_stay_numpy():
    z = np.zeros((3,), dtypes.float0)
    assert add_any_p.bind(z, z).dtype == dtypes.float0
    assert moveaxis(np.zeros((2, 3), dtypes.float0), 0, 1).shape == (3, 2)


def test_remat_lowers_behind_an_optimization_barrier_when_asked():
    for prevent_cse in (True, False):
        h = checkpoint(lambda x: sin(sin(x)), prevent_cse=prevent_cse)
        g = R.jit(grad(lambda x, h=h: total(h(x))))
        np.testing.assert_allclose(g(X), np.cos(np.sin(X)) * np.cos(X), rtol=1e-6)
        assert ("optimization_barrier" in g.lower(X).as_text()) == prevent_cse


def test_custom_lin_never_lowers():
    @custom_vjp
    def c(x):
        return sin(x)

    c.defvjp(lambda x: (sin(x), x), lambda x, ct: (mul(ct, cos(x)),))
    with pytest.raises(LoweringError, match="forward-mode"):
        R.jit(lambda x: jvp(c, (x,), (x,)))(X)
    # jacfwd is vmap of jvp: batching custom_lin raises JAX's TypeError too.
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        vmap(lambda t: jvp(c, (X,), (t,)))(np.stack([X, X]))


# --- derivatives of batching's primitives ---------------------------------------------------------


def test_batching_primitives_are_linear():
    def g(x):  # (2, 3) -> (3,)
        m = moveaxis(x, 0, 1)
        b = broadcast(m, 4, 0)
        e = squeeze(expand_dims(b, (1,)), (1,))
        return sum_batch(sum_batch(e, 0), 1)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_grads(g, (x,), order=2, modes=("fwd", "rev"), atol=1e-2, rtol=1e-2)
    (t,) = linear_transpose(g, x)(np.ones(3, np.float32))
    np.testing.assert_allclose(t, np.full((2, 3), 4.0))
    _, tangent = jvp(lambda x: total(mul(iota(3, np.float32), x)), (X,), (X,))
    np.testing.assert_allclose(tangent, (np.arange(3) * X).sum(), rtol=1e-6)


# --- batching of autodiff's primitives ------------------------------------------------------------


def test_add_any_stop_gradient_and_name_under_vmap():
    for in_axes in [(0, 0), (0, None), (None, 1), (1, 0)]:
        a = XS if in_axes[0] == 0 else (XS.T if in_axes[0] == 1 else XS[0])
        b = XS if in_axes[1] == 0 else (XS.T if in_axes[1] == 1 else XS[0])
        out = vmap(add_any_p.bind, in_axes=in_axes)(a, b)
        np.testing.assert_allclose(
            out,
            (XS if in_axes[0] is not None else XS[0])
            + (XS if in_axes[1] is not None else XS[0]) * np.ones_like(XS),
        )
    out = vmap(lambda x: stop_gradient(name_p.bind(x, name="a")), in_axes=1)(XS)
    np.testing.assert_allclose(out, XS.T)
    g = vmap(grad(lambda x: total(mul(stop_gradient(x), x))))(XS)
    np.testing.assert_allclose(g, XS)


def test_remat_under_vmap_and_grad():
    h = checkpoint(lambda x: sin(sin(x)))
    expected = np.cos(np.sin(XS)) * np.cos(XS)
    np.testing.assert_allclose(vmap(grad(lambda x: total(h(x))))(XS), expected, rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: total(vmap(h)(x)))(XS), expected, rtol=1e-6)
    np.testing.assert_allclose(R.jit(vmap(h))(XS), np.sin(np.sin(XS)), rtol=1e-6)


@custom_jvp
def twice_sin(x):
    return sin(x)


@twice_sin.defjvp
def _twice_sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sin(x), mul(mul(cos(x), t), 2.0)


def test_custom_jvp_under_vmap():
    expected = 2 * np.cos(XS)
    np.testing.assert_allclose(R.jit(vmap(twice_sin))(XS), np.sin(XS), rtol=1e-6)
    np.testing.assert_allclose(grad(lambda x: total(vmap(twice_sin)(x)))(XS), expected, rtol=1e-6)
    np.testing.assert_allclose(vmap(grad(lambda x: total(twice_sin(x))))(XS), expected, rtol=1e-6)
    _, t = jvp(vmap(twice_sin, in_axes=1, out_axes=1), (XS.T,), (np.ones_like(XS.T),))
    np.testing.assert_allclose(t, expected.T, rtol=1e-6)
    two = vmap(vmap(twice_sin))
    np.testing.assert_allclose(grad(lambda x: total(two(x)))(XS[None]), expected[None], rtol=1e-6)


def test_custom_jvp_with_symbolic_zeros_under_vmap():
    @custom_jvp
    def scaled(x, y):
        return mul(x, y)

    def rule(primals, tangents):
        (x, y), (tx, ty) = primals, tangents
        assert type(ty) is SymbolicZero  # y is not differentiated: the zero stays symbolic
        return mul(x, y), mul(tx, y)

    scaled.defjvp(rule, symbolic_zeros=True)
    g = grad(lambda x: total(vmap(scaled, in_axes=(0, None))(x, X)))(XS)
    np.testing.assert_allclose(g, np.broadcast_to(X, XS.shape), rtol=1e-6)


def test_custom_vjp_under_vmap_sums_unbatched_cotangents():
    @custom_vjp
    def scale(x, s):
        return mul(x, s)

    scale.defvjp(
        lambda x, s: (mul(x, s), (x, s)),
        lambda res, ct: (mul(mul(ct, res[1]), 2.0), total(mul(ct, res[0]))),
    )
    s = np.float32(1.5)
    gs = grad(lambda s: total(vmap(scale, in_axes=(0, None))(XS, s)))(s)
    np.testing.assert_allclose(gs, XS.sum(), rtol=1e-5)
    gx = R.jit(grad(lambda x: total(vmap(scale, in_axes=(0, None))(x, s))))(XS)
    np.testing.assert_allclose(gx, np.full_like(XS, 3.0), rtol=1e-6)
    gv = vmap(grad(lambda x: total(scale(x, s))))(XS)
    np.testing.assert_allclose(gv, np.full_like(XS, 3.0), rtol=1e-6)
    assert sum_batch_p in {
        e.primitive
        for e in make_jaxpr(grad(lambda s: total(vmap(scale, in_axes=(0, None))(XS, s))))(
            s
        ).jaxpr.eqns
    }
