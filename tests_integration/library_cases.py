"""Programs written with libraries built on JAX, whose answers modjax gives as JAX 0.10.2 does.

The libraries: flax (linen and nnx), equinox, chex, haiku, jaxopt, diffrax, lineax,
optimistix, jmp, blackjax, numpyro, dm-pix and jraph (with optax where a case trains).

Each case is a function of the ``jax`` module returning a JSON-able answer (floats,
shapes, the class name of an exception). ``data/libraries_jax.json`` holds JAX
0.10.2's answers, recorded by running this file with a Python that has JAX and the
libraries (the versions the ``libs`` hatch environment pins)::

    PYTHONPATH=<those libraries and their dependencies, but not jax> \\
      /work/jaxref/bin/python tests_integration/library_cases.py \\
      tests_integration/data/libraries_jax.json

``test_library_cases.py`` runs the same cases on modjax (through the jax
alias) and compares floats within float32 rounding; the ``bits`` digests (a hash of
every bit of a case's main results) it compares exactly, on the processor kind that
recorded them (XLA compiles for the host's vector extensions, and JAX's own bits
move with them). The libraries are imported inside
the cases, after the caller has made ``import jax`` mean the library under test.
"""

from __future__ import annotations

import functools

import numpy as np
from recorded_answers import cpu_kind, raised, write_record


def _total(jax, tree) -> float:
    return float(sum(float(np.sum(np.asarray(leaf))) for leaf in jax.tree_util.tree_leaves(tree)))


def _shapes(jax, tree) -> list:
    return [list(np.shape(leaf)) for leaf in jax.tree_util.tree_leaves(tree)]


def flax_mlp_trains_with_optax(jax):
    """A flax.linen MLP trained by optax.adam under jit: the losses of 30 steps."""
    import flax.linen as nn
    import optax

    jnp = jax.numpy

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(1)(nn.relu(nn.Dense(16)(x)))

    model = MLP()
    x = jnp.asarray(np.random.default_rng(0).standard_normal((8, 4)), jnp.float32)
    y = jnp.sum(x, axis=1, keepdims=True)
    params = model.init(jax.random.key(0), x)
    tx = optax.adam(1e-2)
    state = tx.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((model.apply(p, x) - y) ** 2))(params)
        updates, state = tx.update(grads, state, params)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(30):
        params, state, loss = step(params, state)
        losses.append(float(loss))
    return {"shapes": _shapes(jax, params), "losses": losses}


def flax_cnn_batchnorm_dropout(jax):
    """Conv, BatchNorm (mutable batch_stats), Dropout (rngs), pooling and LayerNorm."""
    import flax.linen as nn

    jnp = jax.numpy

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x, train):
            x = nn.Conv(4, (3, 3))(x)
            x = nn.BatchNorm(use_running_average=not train)(x)
            x = nn.avg_pool(nn.relu(x), (2, 2), strides=(2, 2))
            x = nn.Dropout(0.5, deterministic=not train)(x)
            return nn.Dense(3)(nn.LayerNorm()(x.reshape((x.shape[0], -1))))

    x = jnp.asarray(np.random.default_rng(1).standard_normal((4, 8, 8, 2)), jnp.float32)
    model = CNN()
    variables = model.init({"params": jax.random.key(0), "dropout": jax.random.key(1)}, x, False)
    y, updated = model.apply(
        variables, x, True, rngs={"dropout": jax.random.key(2)}, mutable=["batch_stats"]
    )
    table = nn.tabulate(CNN(), jax.random.key(0))(x, False)
    return {
        "out": _total(jax, y),
        "batch_stats": _total(jax, updated),
        "eval": _total(jax, model.apply(variables, x, False)),
        "tabulated": "CNN Summary" in table,
    }


def flax_lifted_transforms(jax):
    """nn.scan (broadcast params), nn.remat under grad, nn.vmap, nn.jit and nn.RNN."""
    import flax.linen as nn

    jnp = jax.numpy

    class Cell(nn.Module):
        @nn.compact
        def __call__(self, c, x):
            c = nn.tanh(nn.Dense(5)(c) + nn.Dense(5)(x))
            return c, c

    scan = nn.scan(
        Cell, variable_broadcast="params", split_rngs={"params": False}, in_axes=1, out_axes=1
    )
    xs, c0 = jnp.ones((2, 6, 3)), jnp.zeros((2, 5))
    scanned = scan().init(jax.random.key(3), c0, xs)
    carry, ys = scan().apply(scanned, c0, xs)

    class Remat(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.remat(nn.Dense)(7)(x).sum()

    remat_vars = Remat().init(jax.random.key(4), jnp.ones((2, 3)))
    remat_grads = jax.grad(lambda p: Remat().apply(p, jnp.ones((2, 3))))(remat_vars)
    vmapped = nn.vmap(
        nn.Dense, in_axes=0, out_axes=0, variable_axes={"params": 0}, split_rngs={"params": True}
    )
    vmap_vars = vmapped(4).init(jax.random.key(5), jnp.ones((3, 2, 6)))

    class Jitted(nn.Module):
        @nn.jit
        @nn.compact
        def __call__(self, x):
            return nn.Dense(2)(x)

    jit_vars = Jitted().init(jax.random.key(8), jnp.ones((1, 3)))
    rnn = nn.RNN(nn.LSTMCell(6))
    rnn_vars = rnn.init(jax.random.key(9), jnp.ones((2, 4, 3)))
    return {
        "scan": [_total(jax, carry), _total(jax, ys), _shapes(jax, scanned)],
        "remat_grad": _total(jax, remat_grads),
        "vmap": _shapes(jax, vmap_vars),
        "jit": _total(jax, Jitted().apply(jit_vars, jnp.ones((1, 3)))),
        "rnn": _total(jax, rnn.apply(rnn_vars, jnp.ones((2, 4, 3)))),
    }


def flax_attention_and_embedding(jax):
    """MultiHeadDotProductAttention with a causal mask, and Embed."""
    import flax.linen as nn

    jnp = jax.numpy
    attention = nn.MultiHeadDotProductAttention(num_heads=2, qkv_features=8)
    q = jnp.asarray(np.random.default_rng(2).standard_normal((2, 5, 8)), jnp.float32)
    variables = attention.init(jax.random.key(6), q)
    out = attention.apply(variables, q, mask=nn.make_causal_mask(jnp.ones((2, 5))))
    embed = nn.Embed(10, 4)
    table = embed.init(jax.random.key(7), jnp.array([1, 2]))
    return {
        "attention": _total(jax, out),
        "embed": _total(jax, embed.apply(table, jnp.array([[1, 2], [3, 9]]))),
    }


def flax_nnx_models(jax):
    """flax.nnx: a CNN trained by nnx.Optimizer with metrics; split/merge; lifted transforms."""
    import optax
    from flax import nnx

    jnp = jax.numpy

    class CNN(nnx.Module):
        def __init__(self, rngs):
            self.conv = nnx.Conv(1, 4, (3, 3), rngs=rngs)
            self.bn = nnx.BatchNorm(4, rngs=rngs)
            self.drop = nnx.Dropout(0.5, rngs=rngs)
            self.lin = nnx.Linear(4 * 4 * 4, 3, rngs=rngs)
            self.ln = nnx.LayerNorm(3, rngs=rngs)

        def __call__(self, x):
            x = nnx.avg_pool(nnx.relu(self.bn(self.conv(x))), (2, 2), strides=(2, 2))
            return self.ln(self.lin(self.drop(x).reshape(x.shape[0], -1)))

    model = CNN(nnx.Rngs(0, dropout=1))
    x = jnp.asarray(np.random.default_rng(0).standard_normal((2, 8, 8, 1)), jnp.float32)
    y = jnp.asarray([0, 2])
    opt = nnx.Optimizer(model, optax.sgd(0.1, momentum=0.9), wrt=nnx.Param)
    metrics = nnx.MultiMetric(loss=nnx.metrics.Average("loss"), acc=nnx.metrics.Accuracy())

    @nnx.jit
    def step(model, opt, metrics, x, y):
        def loss_fn(model):
            logits = model(x)
            return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean(), logits

        (loss, logits), grads = nnx.value_and_grad(loss_fn, has_aux=True)(model)
        opt.update(model, grads)
        metrics.update(loss=loss, logits=logits, labels=y)
        return loss

    losses = [float(step(model, opt, metrics, x, y)) for _ in range(4)]
    model.eval()
    evaluated = float(model(x).sum())

    graphdef, state = nnx.split(nnx.Linear(3, 2, rngs=nnx.Rngs(0)))
    doubled = nnx.merge(graphdef, jax.tree.map(lambda a: a * 2, state))

    @nnx.vmap(in_axes=0, out_axes=0)
    def make_layers(key):
        return nnx.Linear(3, 3, rngs=nnx.Rngs(key))

    layers = make_layers(jax.random.split(jax.random.key(0), 4))

    @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
    def forward(h, layer):
        return jnp.tanh(layer(h))

    layer = nnx.Linear(3, 3, rngs=nnx.Rngs(1))
    remat_sin = nnx.remat(lambda m, v: jnp.sin(m(v)))
    remat_grad = nnx.grad(lambda m: remat_sin(m, jnp.ones((1, 3))).sum())
    branch = nnx.cond(False, lambda m, v: m(v), lambda m, v: -m(v), layer, jnp.ones((1, 3)))
    looped = nnx.fori_loop(0, 3, lambda i, v: layer(v), jnp.ones((1, 3)))
    attention = nnx.MultiHeadAttention(
        num_heads=2, in_features=8, qkv_features=8, decode=False, rngs=nnx.Rngs(0)
    )
    embedded = nnx.Embed(10, 8, rngs=nnx.Rngs(1))(jnp.asarray([[1, 2, 3], [4, 5, 6]]))
    attended = attention(embedded, mask=nnx.make_causal_mask(jnp.ones((2, 3))))
    rnn = nnx.RNN(nnx.LSTMCell(3, 4, rngs=nnx.Rngs(0)))(jnp.ones((2, 5, 3)))
    abstract = nnx.eval_shape(lambda: nnx.Linear(4, 5, rngs=nnx.Rngs(0)))
    rngs = nnx.Rngs(params=0, dropout=3)
    return {
        "losses": losses,
        "evaluated": evaluated,
        "metrics": {k: float(v) for k, v in metrics.compute().items()},
        "batch_mean": float(model.bn.mean[...].sum()),
        "state_shapes": _shapes(jax, state),
        "merged": float(doubled.kernel[...].sum()),
        "param_names": sorted(str(k) for k in nnx.state(doubled, nnx.Param)),
        "stacked": list(layers.kernel[...].shape),
        "scanned": float(forward(jnp.ones((2, 3)), layers).sum()),
        "remat_grad": float(remat_grad(layer).kernel[...].sum()),
        "cond": float(branch.sum()),
        "fori_loop": float(looped.sum()),
        "attention": float(attended.sum()),
        "rnn": float(rnn.sum()),
        "eval_shape": [list(abstract.kernel.shape), str(abstract.kernel.dtype)],
        "rngs": [
            np.asarray(jax.random.key_data(rngs.dropout())).tolist(),
            np.asarray(rngs.params.uniform((2,))).tolist(),
        ],
    }


def equinox_models(jax):
    """equinox's MLP trained with filter_jit/filter_value_and_grad, and its layers."""
    import equinox as eqx
    import optax

    jnp = jax.numpy
    key = jax.random.key(0)
    model = eqx.nn.MLP(3, 2, 16, 2, key=key)
    x = jnp.asarray(np.random.default_rng(3).standard_normal((5, 3)), jnp.float32)
    y = jnp.zeros((5, 2))

    @eqx.filter_jit
    def loss(m, x, y):
        return jnp.mean((jax.vmap(m)(x) - y) ** 2)

    opt = optax.sgd(0.1)
    state = opt.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def step(m, state):
        value, grads = eqx.filter_value_and_grad(loss)(m, x, y)
        updates, state = opt.update(grads, state, m)
        return eqx.apply_updates(m, updates), state, value

    losses = []
    for _ in range(20):
        model, state, value = step(model, state)
        losses.append(float(value))
    linear = eqx.nn.Linear(4, 2, key=key)
    zeroed = eqx.tree_at(lambda m: m.weight, linear, jnp.zeros((2, 4)))
    return {
        "losses": losses,
        "conv": _total(jax, eqx.nn.Conv2d(2, 3, 3, key=key)(jnp.ones((2, 6, 6)))),
        "gru": _total(jax, eqx.nn.GRUCell(3, 4, key=key)(jnp.ones(3), jnp.zeros(4))),
        "layer_norm": _total(jax, eqx.nn.LayerNorm(4)(jnp.arange(4.0))),
        "partition": _shapes(jax, eqx.partition(linear, eqx.is_array)[0]),
        "tree_at": _total(jax, zeroed(jnp.ones(4))),
        "error_if": raised(
            lambda: eqx.filter_jit(lambda a: eqx.error_if(a, a > 0, "positive"))(jnp.array(1.0)),
            message=False,
        ),
    }


def chex_assertions(jax):
    """chex's assertions, chexify, dataclasses, fake_jit and restrict_backends."""
    import chex

    jnp = jax.numpy
    x = jnp.ones((5, 3))
    chex.assert_shape(x, (5, 3))
    chex.assert_rank(x, 2)
    chex.assert_type(x, float)
    chex.assert_trees_all_close({"a": x}, {"a": x + 1e-9})

    @functools.partial(chex.chexify, async_check=False)
    @jax.jit
    def finite(a):
        chex.assert_tree_all_finite(a)
        return a

    @chex.dataclass
    class Pair:
        a: jnp.ndarray
        b: jnp.ndarray

    pair = jax.tree_util.tree_map(lambda v: v * 2, Pair(a=jnp.ones(3), b=jnp.ones(2)))
    with chex.fake_jit():
        faked = float(jax.jit(lambda a: a * 2)(3.0))

    def forbidden_compile():
        with chex.restrict_backends(forbidden=["cpu"]):
            jax.jit(lambda a: a + 41)(1.0)

    return {
        "wrong_shape": raised(lambda: chex.assert_shape(x, (4, 3)), message=False),
        "chexify": raised(lambda: finite(jnp.array([1.0, jnp.nan])), message=False),
        "chexify_ok": _total(jax, finite(jnp.ones(2))),
        "dataclass": _total(jax, pair),
        "fake_jit": faked,
        "restrict_backends": raised(forbidden_compile, message=False),
    }


def haiku_models(jax):
    """haiku's transform and transform_with_state: an optax-trained MLP, BatchNorm, LSTM."""
    import haiku as hk
    import optax

    jnp = jax.numpy
    x = jnp.asarray(np.random.default_rng(1).standard_normal((8, 4)), jnp.float32)
    y = jnp.sum(x, axis=1, keepdims=True)
    mlp = hk.without_apply_rng(hk.transform(lambda v: hk.nets.MLP([16, 1])(v)))
    params = mlp.init(jax.random.PRNGKey(0), x)
    tx = optax.sgd(0.05, momentum=0.9)
    state = tx.init(params)

    @jax.jit
    def step(params, state):
        loss, grads = jax.value_and_grad(lambda p: jnp.mean((mlp.apply(p, x) - y) ** 2))(params)
        updates, state = tx.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    losses = []
    for _ in range(20):
        params, state, loss = step(params, state)
        losses.append(float(loss))

    def with_state(v, is_training):
        v = hk.Conv2D(3, 3)(v)
        v = hk.BatchNorm(True, True, 0.9)(v, is_training)
        return hk.Linear(2)(hk.Flatten()(v))

    bn = hk.transform_with_state(with_state)
    images = jnp.ones((2, 5, 5, 1))
    bn_params, bn_state = bn.init(jax.random.PRNGKey(1), images, True)
    out, bn_state = jax.jit(bn.apply, static_argnums=4)(bn_params, bn_state, None, images, True)
    lstm = hk.without_apply_rng(
        hk.transform(lambda seq: hk.dynamic_unroll(hk.LSTM(4), seq, hk.LSTM(4).initial_state(2))[0])
    )
    seq = jnp.ones((3, 2, 5))
    lstm_params = lstm.init(jax.random.PRNGKey(2), seq)
    return {
        "losses": losses,
        "param_shapes": _shapes(jax, params),
        "batchnorm_out": _total(jax, out),
        "batchnorm_state": _shapes(jax, bn_state),
        "lstm": _total(jax, lstm.apply(lstm_params, seq)),
        "bits": _bits_digest(jax, (params, out, bn_state, lstm.apply(lstm_params, seq))),
    }


def jaxopt_solvers(jax):
    """jaxopt's LBFGS, GradientDescent and Bisection, and implicit differentiation."""
    import jaxopt

    jnp = jax.numpy
    a = jnp.asarray([[3.0, 1.0], [1.0, 2.0]])

    def quad(w, b):
        return 0.5 * w @ a @ w - b @ w

    b = jnp.asarray([1.0, -1.0])
    lbfgs = jaxopt.LBFGS(fun=quad, maxiter=50, tol=1e-6)
    sol = lbfgs.run(jnp.zeros(2), b)
    gd = jaxopt.GradientDescent(fun=quad, maxiter=200, stepsize=0.2, tol=1e-6)
    gd_sol = jax.jit(lambda b: gd.run(jnp.zeros(2), b).params)(b)
    # d(argmin)/db by implicit differentiation: a^-1.
    jac = jax.jacobian(lambda b: lbfgs.run(jnp.zeros(2), b).params)(b)
    root = jaxopt.Bisection(lambda x: x**3 - 2.0, lower=0.0, upper=2.0, tol=1e-6).run().params
    # grad runs Bisection's Python bracket check on concrete values, as JAX does.
    cube_root = jaxopt.Bisection(lambda x, a: x**3 - a, lower=0.0, upper=2.0, tol=1e-6)
    droot = jax.grad(lambda a: cube_root.run(a=a).params)(2.0)
    return {
        "lbfgs": np.asarray(sol.params).tolist(),
        "lbfgs_iters": int(sol.state.iter_num) > 0,
        "gd": np.asarray(gd_sol).tolist(),
        "implicit_jacobian": np.asarray(jac).tolist(),
        "bisection": float(root),
        "bisection_grad": float(droot),
        "bits": _bits_digest(jax, (sol.params, gd_sol, jac, root, droot)),
    }


def diffrax_odes(jax):
    """diffrax: Tsit5 with an adaptive step, saved times, a gradient through the solve."""
    import diffrax

    jnp = jax.numpy
    term = diffrax.ODETerm(lambda t, y, args: -args * y)
    ts = jnp.linspace(0.0, 1.0, 5)

    def solve(y0, rate):
        return diffrax.diffeqsolve(
            term,
            diffrax.Tsit5(),
            t0=0.0,
            t1=1.0,
            dt0=0.1,
            y0=y0,
            args=rate,
            saveat=diffrax.SaveAt(ts=ts),
            stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-8),
        )

    sol = jax.jit(solve)(jnp.asarray([1.0, 2.0]), 0.5)
    grad = jax.grad(lambda r: jnp.sum(solve(jnp.asarray([1.0, 2.0]), r).ys[-1]))(0.5)
    fixed = diffrax.diffeqsolve(term, diffrax.Heun(), 0.0, 1.0, 0.05, jnp.ones(2), args=1.0)
    return {
        "ys": np.asarray(sol.ys).tolist(),
        "steps": int(sol.stats["num_steps"]) > 0,
        "grad_rate": float(grad),
        "heun": np.asarray(fixed.ys).tolist(),
        "bits": _bits_digest(jax, (sol.ys, grad, fixed.ys)),
    }


def lineax_and_optimistix(jax):
    """lineax's solvers (LU, Cholesky, CG) with gradients; optimistix root, minimise, lstsq."""
    import lineax as lx
    import optimistix as optx

    jnp = jax.numpy
    m = jnp.asarray([[4.0, 1.0], [1.0, 3.0]])
    b = jnp.asarray([1.0, 2.0])
    op = lx.MatrixLinearOperator(m, lx.positive_semidefinite_tag)
    lu = lx.linear_solve(lx.MatrixLinearOperator(m), b, lx.LU()).value
    chol = jax.jit(lambda b: lx.linear_solve(op, b, lx.Cholesky()).value)(b)
    cg = lx.linear_solve(op, b, lx.CG(rtol=1e-6, atol=1e-6)).value
    dsolve = jax.grad(lambda b: jnp.sum(lx.linear_solve(lx.MatrixLinearOperator(m), b).value))(b)
    root = optx.root_find(lambda y, args: y**2 - args, optx.Newton(1e-6, 1e-6), 1.0, args=2.0)
    minimum = optx.minimise(
        lambda y, args: jnp.sum((y - args) ** 2) + jnp.sum(y**4),
        optx.BFGS(1e-6, 1e-6),
        jnp.zeros(2),
        args=jnp.asarray([1.0, -0.5]),
    )
    fit = optx.least_squares(
        lambda p, args: p[0] * args + p[1] - 2.0 * args,
        optx.LevenbergMarquardt(1e-6, 1e-6),
        jnp.zeros(2),
        args=jnp.arange(4.0),
    )
    return {
        "lu": np.asarray(lu).tolist(),
        "cholesky": np.asarray(chol).tolist(),
        "cg": np.asarray(cg).tolist(),
        "grad_solve": np.asarray(dsolve).tolist(),
        "root": float(root.value),
        "minimise": np.asarray(minimum.value).tolist(),
        "least_squares": np.asarray(fit.value).tolist(),
        "bits": _bits_digest(jax, (lu, chol, cg, dsolve, root.value, minimum.value, fit.value)),
    }


def blackjax_samplers(jax):
    """blackjax: NUTS steps under jit, window adaptation, and a random-walk chain."""
    import blackjax

    jnp = jax.numpy

    def logdensity(x):
        return -0.5 * jnp.sum((x - 1.0) ** 2)

    nuts = blackjax.nuts(logdensity, step_size=0.5, inverse_mass_matrix=jnp.ones(2))
    state = nuts.init(jnp.zeros(2))
    step = jax.jit(nuts.step)
    key = jax.random.key(0)
    positions = []
    for _ in range(10):
        key, sub = jax.random.split(key)
        state, info = step(sub, state)
        positions.append(state.position)
    warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)
    (adapted, params), _ = warmup.run(jax.random.key(1), jnp.zeros(2), num_steps=30)
    walk = blackjax.additive_step_random_walk.normal_random_walk(logdensity, sigma=jnp.ones(2))

    def one_step(state, key):
        state, _ = walk.step(key, state)
        return state, state.position

    _, chain = jax.lax.scan(one_step, walk.init(jnp.zeros(2)), jax.random.split(key, 20))
    return {
        "nuts": np.asarray(jnp.stack(positions)).tolist(),
        "acceptance": float(info.acceptance_rate),
        "step_size": float(params["step_size"]),
        "adapted": np.asarray(adapted.position).tolist(),
        "random_walk": np.asarray(chain).tolist(),
        "bits": _bits_digest(jax, (positions, params, adapted.position, chain)),
    }


def numpyro_models(jax):
    """numpyro: distributions' samples and densities, HMC and NUTS on a regression, SVI."""
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import HMC, MCMC, NUTS, SVI, Trace_ELBO
    from numpyro.infer.autoguide import AutoNormal

    jnp = jax.numpy
    key = jax.random.key(2)
    densities = {}
    for name, d in [
        ("gamma", dist.Gamma(2.0, 3.0)),
        ("beta", dist.Beta(2.0, 3.0)),
        ("dirichlet", dist.Dirichlet(jnp.ones(3))),
        ("mvn", dist.MultivariateNormal(jnp.zeros(2), jnp.eye(2))),
        ("poisson", dist.Poisson(3.0)),
        ("student", dist.StudentT(3.0)),
        ("lkj", dist.LKJCholesky(3, 2.0)),
        ("binomial", dist.Binomial(10, 0.3)),
    ]:
        sample = d.sample(key, (3,))
        densities[name] = [float(jnp.sum(sample)), float(jnp.sum(d.log_prob(sample)))]

    def regression(x, y=None):
        a = numpyro.sample("a", dist.Normal(0, 1))
        b = numpyro.sample("b", dist.Normal(0, 1))
        s = numpyro.sample("s", dist.HalfNormal(1))
        numpyro.sample("y", dist.Normal(a + b * x, s), obs=y)

    x = jnp.linspace(0, 1, 20)
    y = 1.0 + 2.0 * x + np.random.default_rng(0).normal(0.0, 0.3, 20).astype(np.float32)
    # A chain's U-turn and acceptance decisions turn on the last bit of a float, so a
    # rounding difference anywhere (e.g. in a fused op) moves an adaptive chain
    # elsewhere: the digest below holds NUTS's samples to JAX's bits.
    hmc = HMC(regression, step_size=0.05, num_steps=10, adapt_step_size=False)
    hmc_chain = MCMC(hmc, num_warmup=0, num_samples=20, progress_bar=False)
    hmc_chain.run(jax.random.key(0), x, y)
    nuts = MCMC(NUTS(regression), num_warmup=100, num_samples=100, progress_bar=False)
    nuts.run(jax.random.key(0), x, y)
    slope = float(nuts.get_samples()["b"].mean())

    def location(y):
        m = numpyro.sample("m", dist.Normal(0, 10))
        with numpyro.plate("N", y.shape[0]):
            numpyro.sample("obs", dist.Normal(m, 1), obs=y)

    svi = SVI(location, AutoNormal(location), numpyro.optim.Adam(0.1), Trace_ELBO())
    result = svi.run(jax.random.key(1), 100, jnp.arange(5.0), progress_bar=False)
    return {
        "densities": densities,
        "hmc_samples": {
            k: np.asarray(v).tolist() for k, v in sorted(hmc_chain.get_samples().items())
        },
        "nuts_slope_near_2": abs(slope - 2.0) < 0.5,
        "svi_loc": float(result.params["m_auto_loc"]),
        "svi_last_loss": float(result.losses[-1]),
        "bits": _bits_digest(
            jax, (hmc_chain.get_samples(), nuts.get_samples(), result.params, result.losses)
        ),
    }


def jmp_mixed_precision(jax):
    """jmp's policies cast parameters and outputs; its loss scales scale and unscale."""
    import jmp

    jnp = jax.numpy
    policy = jmp.get_policy("params=float32,compute=bfloat16,output=float32")
    params = {"w": jnp.ones((2, 2)), "n": jnp.arange(2)}
    cast = policy.cast_to_compute(params)
    scale = jmp.DynamicLossScale(jnp.asarray(2.0**15, jnp.float32))
    grads = {"w": jnp.full((2,), 2.0**15)}
    unscaled = scale.unscale(grads)
    finite = jmp.all_finite({"a": jnp.ones(2), "b": jnp.asarray([jnp.inf])})
    bigger = scale.adjust(jnp.asarray(True))
    return {
        "compute_dtypes": sorted(str(v.dtype) for v in jax.tree_util.tree_leaves(cast)),
        "output": str(policy.cast_to_output(jnp.ones(2, jnp.bfloat16)).dtype),
        "scaled": float(scale.scale(jnp.asarray(1.0))),
        "unscaled": _total(jax, unscaled),
        "all_finite": bool(finite),
        "adjusted_scale": float(bigger.loss_scale),
    }


def pix_and_jraph(jax):
    """dm-pix's image ops (blur, colour spaces, SSIM, augmentations); jraph's graph networks."""
    import dm_pix as pix
    import jraph

    jnp = jax.numpy
    image = jnp.asarray(np.random.default_rng(0).uniform(size=(8, 8, 3)), jnp.float32)
    graph = jraph.GraphsTuple(
        nodes=jnp.arange(6.0).reshape(3, 2),
        edges=jnp.ones((2, 1)),
        senders=jnp.asarray([0, 1]),
        receivers=jnp.asarray([1, 2]),
        n_node=jnp.asarray([3]),
        n_edge=jnp.asarray([2]),
        globals=jnp.ones((1, 1)),
    )
    convolved = jax.jit(jraph.GraphConvolution(lambda n: n * 2.0))(graph)
    padded = jraph.pad_with_graphs(graph, 5, 4)
    return {
        "blur": float(pix.gaussian_blur(image, 1.0, 3).sum()),
        "hsv": float(pix.rgb_to_hsv(image).sum()),
        "ssim": float(pix.ssim(image, image * 0.9)),
        "flipped": np.asarray(pix.flip_left_right(image)[0, 0]).tolist(),
        "brightness": float(pix.random_brightness(jax.random.key(0), image, 0.2).sum()),
        "affine": float(pix.affine_transform(image, jnp.eye(3)).sum()),
        "graph_nodes": np.asarray(convolved.nodes).tolist(),
        "batched_nodes": int(jraph.batch([graph, graph]).n_node.sum()),
        "segment_softmax": np.asarray(
            jraph.segment_softmax(jnp.arange(4.0), jnp.asarray([0, 0, 1, 1]), 2)
        ).tolist(),
        "padded_shape": list(padded.nodes.shape),
        "bits": _bits_digest(
            jax,
            (
                pix.gaussian_blur(image, 1.0, 3),
                pix.rgb_to_hsv(image),
                pix.ssim(image, image * 0.9),
                pix.random_brightness(jax.random.key(0), image, 0.2),
                pix.affine_transform(image, jnp.eye(3)),
                convolved.nodes,
            ),
        ),
    }


def _bits_digest(jax, tree) -> str:
    """A digest of every leaf's bytes: equal only when every bit is."""
    import hashlib

    data = b"".join(np.asarray(leaf).tobytes() for leaf in jax.tree_util.tree_leaves(tree))
    return hashlib.sha256(data).hexdigest()[:16]


def training_steps_are_jax_bits(jax):
    """Three jitted training steps of a flax.linen CNN (BatchNorm, Dropout, pooling) with
    optax.adamw, a flax.nnx model (BatchNorm, Dropout, LayerNorm) and an equinox model
    (strided conv, LayerNorm, MLP under vmap): digests of the parameters and statistics
    after them, which equal JAX's only when every bit does."""
    import equinox as eqx
    import flax.linen as nn
    import optax
    from flax import nnx

    jnp = jax.numpy
    rng = np.random.default_rng(0)
    x = jnp.asarray(rng.standard_normal((8, 8, 8, 3)), jnp.float32)
    labels = jnp.asarray(rng.integers(0, 4, 8), jnp.int32)
    out = {}

    class CNN(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.BatchNorm(use_running_average=False)(nn.Conv(4, (3, 3))(x)))
            x = nn.Dropout(0.2, deterministic=False)(nn.avg_pool(x, (2, 2), (2, 2)))
            return nn.Dense(4)(x.reshape(x.shape[0], -1))

    cnn = CNN()
    variables = cnn.init({"params": jax.random.key(0), "dropout": jax.random.key(1)}, x)
    params, stats = variables["params"], variables["batch_stats"]
    opt = optax.adamw(1e-2)
    state = opt.init(params)

    @jax.jit
    def linen_step(params, stats, state, key):
        def loss(p):
            logits, upd = cnn.apply(
                {"params": p, "batch_stats": stats},
                x,
                mutable=["batch_stats"],
                rngs={"dropout": key},
            )
            return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean(), upd

        (_, upd), g = jax.value_and_grad(loss, has_aux=True)(params)
        updates, state = opt.update(g, state, params)
        return optax.apply_updates(params, updates), upd["batch_stats"], state

    for i in range(3):
        params, stats, state = linen_step(params, stats, state, jax.random.key(10 + i))
    out["flax_linen"] = _bits_digest(jax, (params, stats))

    class Net(nnx.Module):
        def __init__(self, rngs):
            self.l1, self.bn = nnx.Linear(12, 16, rngs=rngs), nnx.BatchNorm(16, rngs=rngs)
            self.do, self.ln = nnx.Dropout(0.1, rngs=rngs), nnx.LayerNorm(16, rngs=rngs)
            self.l2 = nnx.Linear(16, 4, rngs=rngs)

        def __call__(self, v):
            return self.l2(self.ln(self.do(nnx.gelu(self.bn(self.l1(v))))))

    model = Net(nnx.Rngs(0, dropout=1))
    optimizer = nnx.Optimizer(model, optax.adam(1e-2), wrt=nnx.Param)
    flat = x[:, :2, :2, :].reshape(8, 12)

    @nnx.jit
    def nnx_step(model, optimizer):
        def loss(m):
            return optax.softmax_cross_entropy_with_integer_labels(m(flat), labels).mean()

        optimizer.update(model, nnx.grad(loss)(model))

    for _ in range(3):
        nnx_step(model, optimizer)
    out["flax_nnx"] = _bits_digest(jax, nnx.state(model, nnx.Param, nnx.BatchStat))

    class Small(eqx.Module):
        conv: eqx.nn.Conv2d
        norm: eqx.nn.LayerNorm
        mlp: eqx.nn.MLP

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.conv = eqx.nn.Conv2d(3, 4, 3, stride=2, key=k1)
            self.norm = eqx.nn.LayerNorm(36)
            self.mlp = eqx.nn.MLP(36, 4, 16, 2, key=k2)

        def __call__(self, v):
            return self.mlp(self.norm(jax.nn.relu(self.conv(v)).reshape(-1)))

    small = Small(jax.random.key(2))
    images = jnp.transpose(x[:, :7, :7, :], (0, 3, 1, 2))
    eqx_opt = optax.adam(1e-2)
    eqx_state = eqx_opt.init(eqx.filter(small, eqx.is_array))

    @eqx.filter_jit
    def eqx_step(m, s):
        def loss(m):
            return optax.softmax_cross_entropy_with_integer_labels(
                jax.vmap(m)(images), labels
            ).mean()

        g = eqx.filter_grad(loss)(m)
        updates, s = eqx_opt.update(g, s, m)
        return eqx.apply_updates(m, updates), s

    for _ in range(3):
        small, eqx_state = eqx_step(small, eqx_state)
    out["equinox"] = _bits_digest(jax, eqx.filter(small, eqx.is_array))
    return {"bits": out}


CASES = [
    flax_mlp_trains_with_optax,
    flax_cnn_batchnorm_dropout,
    flax_lifted_transforms,
    flax_attention_and_embedding,
    flax_nnx_models,
    equinox_models,
    chex_assertions,
    haiku_models,
    jaxopt_solvers,
    diffrax_odes,
    lineax_and_optimistix,
    jmp_mixed_precision,
    blackjax_samplers,
    numpyro_models,
    pix_and_jraph,
    training_steps_are_jax_bits,
]


def record(jax) -> dict:
    """Every case's answer, by name, and the processor kind that computed them."""
    return {**{case.__name__: case(jax) for case in CASES}, "cpu": cpu_kind()}


if __name__ == "__main__":
    write_record(record)
