"""shard_map on 8 CPU devices: collectives over mesh axes, autodiff, nesting, errors.

One child process (8 CPU devices) runs every check; each is reported as a
test. Collectives are checked against a numpy simulation of the devices'
blocks; programs against their single-device versions; a data-parallel MLP
training step against the single-device step.
"""

from __future__ import annotations

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax import lax
from modjax.sharding import Mesh, NamedSharding, P, shard_map
from modjax.sharding.testing import main


def _mesh(shape=(2, 4), names=("x", "y")):
    return Mesh(np.array(jax.devices()).reshape(shape), names)


def _close(got, want, tol=2e-5):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=tol, atol=tol)


def _blocks(x, rows, cols):
    """Split a 2-d array into a (rows, cols) grid of blocks: blocks[i][j]."""
    return [np.split(r, cols, axis=1) for r in np.split(x, rows, axis=0)]


def _join(blocks):
    return np.concatenate([np.concatenate(r, axis=1) for r in blocks], axis=0)


X = np.arange(128, dtype=np.float32).reshape(8, 16) / 7.0


def _run(body, out_specs=None, check_vma=False):
    mesh = _mesh()
    out_specs = P("x", "y") if out_specs is None else out_specs
    return jax.jit(shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=out_specs,
                             check_vma=check_vma))(X)  # fmt: skip


def check_reductions_over_each_axis():
    b = _blocks(X, 2, 4)
    for op, np_op in [(lax.psum, np.add), (lax.pmax, np.maximum), (lax.pmin, np.minimum)]:
        want_y = _join([[np_op.reduce([b[i][k] for k in range(4)])] * 4 for i in range(2)])
        _close(_run(lambda a, op=op: op(a, "y")), want_y)
        want_xy = np_op.reduce([b[i][j] for i in range(2) for j in range(4)])
        _close(_run(lambda a, op=op: op(a, ("x", "y")), out_specs=P()), want_xy)
    want_mean = np.mean([b[i][j] for i in range(2) for j in range(4)], axis=0)
    _close(_run(lambda a: lax.pmean(a, ("x", "y")), out_specs=P()), want_mean)


def check_all_gather_tiled_and_stacked():
    b = _blocks(X, 2, 4)
    tiled = _run(lambda a: lax.all_gather(a, "y", axis=1, tiled=True), out_specs=P("x"))
    _close(tiled[:4], np.concatenate(b[0], axis=1))
    stacked = _run(lambda a: lax.all_gather(a, "x"), out_specs=P(None, None, "y"))
    assert stacked.shape == (2, 4, 16)
    _close(stacked, np.stack([np.concatenate(b[0], 1), np.concatenate(b[1], 1)]))


def check_psum_scatter_and_all_to_all():
    b = _blocks(X, 2, 4)
    out = np.asarray(_run(lambda a: lax.psum_scatter(a, "y", scatter_dimension=0, tiled=True)))
    assert out.shape == (2, 16)  # each device keeps one row of its (4, 4) sum over y
    for i in range(2):
        summed = np.add.reduce([b[i][k] for k in range(4)])
        for j in range(4):
            _close(out[i, 4 * j : 4 * j + 4], summed[j])
    # all_to_all: each y-block's columns split in 4 and exchanged; twice is the identity.
    there = lambda a: lax.all_to_all(a, "y", 1, 1, tiled=True)  # noqa: E731
    _close(_run(lambda a: there(there(a))), X)
    moved = _run(lambda a: lax.all_to_all(a, "y", 0, 0, tiled=True))
    # device (0, j) receives row-chunk j of every y block, concatenated along rows.
    want = np.concatenate([b[0][k][:1] for k in range(4)], axis=0)
    _close(np.asarray(moved)[:4, :4], want)


def check_ppermute_axis_index_and_axis_size():
    b = _blocks(X, 2, 4)
    perm = [(0, 1), (1, 2), (2, 3), (3, 0)]
    shifted = _run(lambda a: lax.ppermute(a, "y", perm))
    _close(shifted, _join([[b[i][(j - 1) % 4] for j in range(4)] for i in range(2)]))
    index = _run(lambda a: a * 0 + lax.axis_index("y") + 10 * lax.axis_index("x"))
    _close(index, _join([[np.full((4, 4), j + 10 * i) for j in range(4)] for i in range(2)]))
    both = _run(lambda a: a * 0 + lax.axis_index(("x", "y")))
    _close(both, _join([[np.full((4, 4), 4 * i + j) for j in range(4)] for i in range(2)]))
    sizes = _run(lambda a: a * 0 + lax.axis_size("y") + 10 * lax.axis_size(("x", "y")))
    _close(sizes, np.full((8, 16), 84.0))
    from_two = _run(lambda a: lax.pbroadcast(a, "y", 2))
    _close(from_two, _join([[b[i][2] for _ in range(4)] for i in range(2)]))


def check_collectives_lower_to_xla_collectives():
    mesh = _mesh()
    f = jax.jit(shard_map(lambda a: lax.psum(a, "y"), mesh=mesh, in_specs=P("x", "y"),
                          out_specs=P("x")))  # fmt: skip
    text = f.lower(X).as_text()
    assert "sdy.manual_computation" in text and 'manual_axes={"x", "y"}' in text, text
    assert "replica_groups = dense<[[0, 1, 2, 3], [4, 5, 6, 7]]>" in text, text
    assert "all-reduce" in f.lower(X).compile().as_text()


def check_matmul_with_psum_equals_unsharded_on_every_mesh():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    for shape, names in [((1, 8), ("r", "k")), ((2, 4), ("r", "k")), ((8, 1), ("r", "k")),
                         ((2, 2, 2), ("r", "k", "z"))]:  # fmt: skip
        mesh = _mesh(shape, names)
        f = shard_map(lambda u, v: lax.psum(u @ v, "k"), mesh=mesh,
                      in_specs=(P("r", "k"), P("k")), out_specs=P("r"))  # fmt: skip
        _close(jax.jit(f)(a, w), a @ w, tol=1e-4)
        _close(f(a, w), a @ w, tol=1e-4)  # eagerly


def check_grad_of_shard_map():
    mesh = _mesh()
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 16)).astype(np.float32)
    w = rng.standard_normal((16,)).astype(np.float32)

    def loss_sharded(u, v):
        part = shard_map(lambda p, q: lax.psum(jnp.sum(jnp.tanh(p * q)), ("x", "y")),
                         mesh=mesh, in_specs=(P("x", "y"), P("y")), out_specs=P())  # fmt: skip
        return part(u, v)

    def loss(u, v):
        return jnp.sum(jnp.tanh(u * v))

    got = jax.jit(jax.grad(loss_sharded, argnums=(0, 1)))(a, w)
    want = jax.jit(jax.grad(loss, argnums=(0, 1)))(a, w)
    for g, h in zip(got, want, strict=True):
        _close(g, h, tol=1e-4)
    value, grads = jax.value_and_grad(loss_sharded)(a, w)
    _close(value, loss(a, w), tol=1e-4)
    _close(grads, want[0], tol=1e-4)


def check_shard_map_nested_in_jit_and_scan():
    mesh = _mesh()
    f = shard_map(lambda u: lax.psum(u.sum(0), "x"), mesh=mesh, in_specs=P("x", "y"),
                  out_specs=P("y"))  # fmt: skip

    def step(carry, x):
        return carry + f(x), None

    xs = np.stack([X, 2 * X, 3 * X])
    out, _ = jax.jit(lambda xs: lax.scan(step, jnp.zeros(16), xs))(xs)
    _close(out, 6 * X.sum(0), tol=1e-4)
    g = jax.jit(lambda x: jnp.tanh(f(x * 2)) + 1)
    _close(g(X), np.tanh(2 * X.sum(0)) + 1, tol=1e-5)


def check_vmap_of_shard_map():
    mesh = _mesh()
    f = shard_map(lambda u, v: lax.psum(u @ v, "y"), mesh=mesh, in_specs=(P("x", "y"), P("y")),
                  out_specs=P("x"))  # fmt: skip
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 8, 16)).astype(np.float32)
    w = rng.standard_normal((16, 4)).astype(np.float32)
    _close(jax.jit(jax.vmap(f, in_axes=(0, None)))(a, w), a @ w, tol=1e-4)
    ws = np.stack([w, 2 * w], axis=1)
    _close(jax.vmap(f, in_axes=(None, 1))(a[0], ws), np.stack([a[0] @ w, 2 * a[0] @ w]), tol=1e-4)


def check_errors_as_jax():
    mesh = _mesh()
    try:
        shard_map(lambda a: a, mesh=mesh, in_specs=P("y"), out_specs=P("y"))(np.ones((6, 2)))
    except ValueError as err:
        text = str(err)
        assert "not evenly divisible by the corresponding mesh axis sizes" in text, text
        assert "maps array axis 0 (of size 6) to mesh axis 'y' (of size 4), but 4 does not " \
            "evenly divide 6" in text, text  # fmt: skip
    else:
        raise AssertionError("an indivisible argument must fail")
    try:
        shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P())(np.ones((8, 2)))
    except ValueError as err:
        text = str(err)
        assert "out_specs is P() which implies that the corresponding output value is only " \
            "varying across mesh axes {} and not {x}, but it was inferred to be possibly " \
            "varying over {x}" in text, text  # fmt: skip
    else:
        raise AssertionError("a replication claim the body does not meet must fail")
    # psum makes the value replicated: no error; check_vma=False skips the check.
    shard_map(lambda a: lax.psum(a, "x"), mesh=mesh, in_specs=P("x"), out_specs=P())(
        np.ones((8, 2))
    )
    shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False)(
        np.ones((8, 2))
    )
    try:
        shard_map(lambda a: lax.psum(a, "z"), mesh=mesh, in_specs=P("x"), out_specs=P())(
            np.ones((8, 2))
        )
    except NameError as err:
        assert "unbound axis name: z" in str(err), err
    else:
        raise AssertionError("an axis name the mesh lacks must fail")


def _mlp_init(rng, sizes):
    return [
        (rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m), np.zeros(n, np.float32))
        for m, n in zip(sizes[:-1], sizes[1:], strict=False)
    ]


def _mlp_loss(params, x, y):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    logits = h @ w + b
    logp = logits - jax.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(logp * y, axis=1))


def _sgd(params, grads, lr=0.1):
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def check_data_parallel_mlp_step_equals_single_device():
    rng = np.random.default_rng(2)
    params = _mlp_init(rng, [32, 64, 64, 10])
    x = rng.standard_normal((64, 32)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 64)]
    mesh = Mesh(np.array(jax.devices()), ("d",))

    @jax.jit
    def step(params, x, y):
        return _sgd(params, jax.grad(_mlp_loss)(params, x, y))

    def local_step(params, x, y):
        grads = lax.pmean(jax.grad(_mlp_loss)(params, x, y), "d")
        return _sgd(params, grads)

    def typed_local_step(params, x, y):
        # With check_vma, the gradient of the invariant parameters is already summed
        # over "d" (JAX 0.10.2 transposes the inserted pvary to a psum): divide, no pmean.
        grads = jax.grad(_mlp_loss)(params, x, y)
        return _sgd(params, jax.tree.map(lambda g: g / 8, grads))

    specs = {"in_specs": (P(), P("d"), P("d")), "out_specs": P()}
    dp_step = jax.jit(shard_map(local_step, mesh=mesh, check_vma=False, **specs))
    typed_step = jax.jit(shard_map(typed_local_step, mesh=mesh, **specs))
    want, got, typed = params, params, params
    for _ in range(3):
        want = step(want, x, y)
        got = dp_step(got, x, y)
        typed = typed_step(typed, x, y)
    for g, t, w in zip(*map(jax.tree.leaves, (got, typed, want)), strict=True):
        _close(g, w, tol=1e-5)
        _close(t, w, tol=1e-5)
    # The same step through jit shardings (batch sharded, parameters replicated).
    rows = NamedSharding(mesh, P("d"))
    sharded = jax.jit(step, in_shardings=(NamedSharding(mesh, P()), rows, rows))
    got = params
    for _ in range(3):
        got = sharded(got, x, y)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
        _close(g, w, tol=1e-5)


def check_pmap_on_shard_map():
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    f = jax.pmap(lambda v: v * 2 - lax.psum(v, "i"), axis_name="i")
    out = f(x)
    _close(out, x * 2 - x.sum(0))
    assert out.shape == (8, 4) and len(out.addressable_shards) == 8
    g = jax.pmap(lambda v, w: v @ w, in_axes=(0, None))
    _close(g(x, np.ones((4, 3), np.float32)), x @ np.ones((4, 3)))
    h = jax.pmap(lambda v: lax.axis_index("i") + v.sum(), axis_name="i")
    _close(h(x[:4]), np.arange(4) + x[:4].sum(1))
    s = jax.pmap(lambda v, k: v * k, static_broadcasted_argnums=1)
    _close(s(x, 3), x * 3)
    # As JAX: lowering binds the static argument; the Compiled takes the others.
    lowered = s.lower(x, 3)
    assert str(lowered.in_tree) == "PyTreeDef(((*,), {}))"
    _close(lowered.compile()(x), x * 3)
    d = jax.pmap(lambda tree: tree["a"] + tree["b"], donate_argnums=0)
    pair = {"a": jnp.asarray(x), "b": jnp.asarray(x)}
    assert str(d.lower(pair).in_tree) == "PyTreeDef((({'a': *, 'b': *},), {}))"
    _close(d(pair), x * 2)
    try:
        s(x)
    except ValueError as err:
        assert "static_broadcasted_argnums=(1,) but was called with only 1 positional" in str(err)
    else:
        raise AssertionError("a static argument left out must fail as in JAX")
    try:
        jax.pmap(lambda v: v)(np.ones((9, 2)))
    except ValueError as err:
        assert "requires 9 logical devices, but only 8 XLA devices are available" in str(err)
    else:
        raise AssertionError("mapping 9 elements over 8 devices must fail")


def check_key_arrays_through_pmap_and_shard_map():
    # A key array's stored values have a trailing dimension its spec leaves whole (flax's
    # nnx.pmap over split Rngs failed to lower before). Each device's sample is the one
    # its key gives alone.
    keys = jax.random.split(jax.random.key(0), 8)
    want = np.stack([np.asarray(jax.random.normal(k, (3,))) for k in keys])
    _close(jax.pmap(lambda k: jax.random.normal(k, (3,)))(keys), want, tol=0)
    mesh = Mesh(np.array(jax.devices()), ("d",))
    body = shard_map(
        lambda k: jax.random.split(k[0])[None], mesh=mesh, in_specs=P("d"), out_specs=P("d")
    )
    split = jax.jit(body)(keys)
    assert split.shape == (8, 2) and split.dtype == keys.dtype
    want_split = np.stack([np.asarray(jax.random.key_data(jax.random.split(k))) for k in keys])
    np.testing.assert_array_equal(np.asarray(jax.random.key_data(split)), want_split)
    # Eager operations on a key array pmap placed on one device.
    one = jax.pmap(lambda k: k)(keys[:1])
    assert bool(jnp.all(one == keys[:1])) and not bool(jnp.any(one != keys[:1]))
    # Constraints and a nested jit's shardings on key arrays lower with the stored dims.
    with jax.set_mesh(mesh):
        constrained = jax.jit(lambda k: lax.with_sharding_constraint(k, P("d")))(keys)
        nested = jax.jit(lambda k: jax.jit(lambda a: a, out_shardings=NamedSharding(mesh, P()))(k))
        for got in (constrained, nested(keys)):
            data = np.asarray(jax.random.key_data(got))
            np.testing.assert_array_equal(data, np.asarray(jax.random.key_data(keys)))


def check_eager_results_keep_the_out_specs_as_given():
    # As JAX 0.10.2: eager shard_map's results are NamedShardings of the out_specs
    # written (flax's tensor-parallel test reads P(None) back).
    mesh = Mesh(np.array(jax.devices()), ("d",))
    x = np.ones((8, 2), np.float32)
    for spec in (P(None), P(), P(None, None), P("d"), P("d", None)):
        out = shard_map(lambda a: a, mesh=mesh, in_specs=P(), out_specs=spec)(x)
        assert out.sharding.spec == spec, (spec, out.sharding.spec)


CHECKS = [
    check_pmap_on_shard_map,
    check_eager_results_keep_the_out_specs_as_given,
    check_key_arrays_through_pmap_and_shard_map,
    check_reductions_over_each_axis,
    check_all_gather_tiled_and_stacked,
    check_psum_scatter_and_all_to_all,
    check_ppermute_axis_index_and_axis_size,
    check_collectives_lower_to_xla_collectives,
    check_matmul_with_psum_equals_unsharded_on_every_mesh,
    check_grad_of_shard_map,
    check_shard_map_nested_in_jit_and_scan,
    check_vmap_of_shard_map,
    check_errors_as_jax,
    check_data_parallel_mlp_step_equals_single_device,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
