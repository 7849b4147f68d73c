"""jit with shardings on 8 CPU devices: sharded programs equal unsharded ones.

One child process (8 CPU devices) runs every check; each is reported as a
test. Programs (elementwise, matmuls split on the contracting or the batch
dimension, reductions, scan, gather) run on meshes 1x8, 2x4, 8x1 and 2x2x2
with several specs, through ``in_shardings``/``out_shardings``, committed
arguments and ``with_sharding_constraint``, and must equal the single-device
result; the compiled HLO must hold the collectives the split needs.
"""

from __future__ import annotations

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax.sharding import Mesh, NamedSharding, P, reshard, with_sharding_constraint
from modjax.sharding.testing import main

MESHES = {
    "1x8": ((1, 8), ("a", "b")),
    "2x4": ((2, 4), ("a", "b")),
    "8x1": ((8, 1), ("a", "b")),
    "2x2x2": ((2, 2, 2), ("a", "b", "c")),
}


def _mesh(name):
    shape, names = MESHES[name]
    return Mesh(np.array(jax.devices()).reshape(shape), names)


def _rng(seed=0):
    return np.random.default_rng(seed)


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=2e-5)


def _gather(x, i):
    return jnp.take(x, i, axis=0)


def _scan(x):
    def body(carry, row):
        carry = jnp.tanh(carry + row)
        return carry, carry.sum()

    return jax.lax.scan(body, jnp.zeros(x.shape[1:], x.dtype), x)


PROGRAMS = {
    "elementwise": (lambda x, y: jnp.sin(x) * y + 1.0, ((8, 8), (8, 8))),
    "matmul": (lambda x, y: x @ y, ((8, 16), (16, 8))),
    "batched_matmul": (lambda x, y: jnp.einsum("bij,bjk->bik", x, y), ((8, 8, 16), (8, 16, 8))),
    "reductions": (lambda x, y: (x.sum(0), jnp.max(x * y, axis=1), jnp.mean(x)), ((8, 8), (8, 8))),
}


def _specs(mesh):
    names = mesh.axis_names
    return [P(names[0]), P(None, names[-1]), P(names)]


def check_programs_equal_unsharded_on_every_mesh():
    for mesh_name in MESHES:
        mesh = _mesh(mesh_name)
        for prog_name, (fn, shapes) in PROGRAMS.items():
            rng = _rng(len(prog_name))
            args = [rng.standard_normal(s).astype(np.float32) for s in shapes]
            want = jax.jit(fn)(*args)
            for spec in _specs(mesh):
                shardings = tuple(NamedSharding(mesh, P(*spec[: len(s)])) for s in shapes)
                got = jax.jit(fn, in_shardings=shardings)(*args)
                for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
                    _close(g, w)
            # Committed arguments carry their shardings in (one spec per program).
            committed = [jax.device_put(a, s) for a, s in zip(args, shardings, strict=True)]
            got = jax.jit(fn)(*committed)
            for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
                _close(g, w)


def check_scan_and_gather_sharded():
    for mesh_name in MESHES:
        mesh = _mesh(mesh_name)
        rng = _rng(3)
        x = rng.standard_normal((6, 8)).astype(np.float32)
        idx = np.array([5, 0, 3, 3, 1, 7], np.int32)
        want_scan = jax.jit(_scan)(x)
        want_gather = jax.jit(_gather)(x.T, idx)
        s = NamedSharding(mesh, P(None, mesh.axis_names[-1]))
        got = jax.jit(_scan, in_shardings=s)(x)
        for g, w in zip(got, want_scan, strict=True):
            _close(g, w)
        rows = NamedSharding(mesh, P(mesh.axis_names[0]))
        _close(jax.jit(_gather, in_shardings=(rows, None))(x.T, idx), want_gather)


def check_contracting_split_has_an_all_reduce_and_batch_split_none():
    mesh = _mesh("2x4")
    x = np.ones((8, 16), np.float32)
    y = np.ones((16, 8), np.float32)
    contracting = jax.jit(
        lambda a, b: a @ b,
        in_shardings=(NamedSharding(mesh, P(None, "b")), NamedSharding(mesh, P("b"))),
        out_shardings=NamedSharding(mesh, P("a")),
    )
    hlo = contracting.lower(x, y).compile().as_text()
    assert "all-reduce" in hlo, hlo
    batch = jax.jit(
        lambda a, b: a @ b,
        in_shardings=(NamedSharding(mesh, P(("a", "b"))), NamedSharding(mesh, P())),
        out_shardings=NamedSharding(mesh, P(("a", "b"))),
    )
    hlo = batch.lower(x, y).compile().as_text()
    for collective in ("all-reduce", "all-gather", "all-to-all", "collective-permute"):
        assert collective not in hlo, hlo


def check_lowered_module_has_shardy_annotations():
    mesh = _mesh("2x4")
    f = jax.jit(
        lambda a, b: a @ b,
        in_shardings=(NamedSharding(mesh, P("a", "b")), NamedSharding(mesh, P("b", None))),
        out_shardings=NamedSharding(mesh, P("a")),
    )
    text = f.lower(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)).as_text()
    assert 'sdy.mesh @mesh = <["a"=2, "b"=4]>' in text, text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {"b"}]>' in text, text
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"b"}, {}]>' in text, text
    assert "mhlo.num_partitions = 8" in text, text


def check_out_shardings_and_propagated_output_shardings():
    mesh = _mesh("2x4")
    x = jax.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), NamedSharding(mesh, P("a")))
    y = jax.jit(lambda v: v + 1)(x)
    assert y.sharding is NamedSharding(mesh, P("a")), y.sharding
    assert jax.jit(lambda v: v.sum())(x).sharding is NamedSharding(mesh, P())
    z = jax.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P(("a", "b"))))(x)
    assert z.sharding is NamedSharding(mesh, P(("a", "b")))
    _close(z, np.arange(16.0).reshape(8, 2) * 2)
    outs = jax.jit(
        lambda v: {"p": v, "q": v.T},
        out_shardings={"p": NamedSharding(mesh, P()), "q": None},
    )(x)
    assert outs["p"].sharding is NamedSharding(mesh, P())
    assert outs["p"].is_fully_replicated


def check_in_shardings_prefixes_and_none():
    mesh = _mesh("2x4")
    row = NamedSharding(mesh, P("a"))
    params = {"w": np.ones((8, 4), np.float32), "b": np.ones((4,), np.float32)}
    x = np.ones((8, 8), np.float32)
    f = jax.jit(lambda p, v: v @ p["w"] + p["b"], in_shardings=(None, row))
    _close(f(params, x), x @ params["w"] + params["b"])
    g = jax.jit(
        lambda p, v: v @ p["w"] + p["b"],
        in_shardings=({"w": row, "b": NamedSharding(mesh, P())}, row),
    )
    _close(g(params, x), x @ params["w"] + params["b"])
    h = jax.jit(lambda v: v * 3, in_shardings=row)
    _close(h(x), x * 3)


def check_committed_mismatch_and_incompatible_devices_raise():
    mesh = _mesh("2x4")
    x = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("a")))
    f = jax.jit(lambda v: v + 1, in_shardings=NamedSharding(mesh, P("b")))
    try:
        f(x)
    except ValueError as err:
        assert "does not match the sharding" in str(err), err
    else:
        raise AssertionError("a committed argument with another sharding must fail")
    small = Mesh(np.array(jax.devices()[:4]).reshape(2, 2), ("a", "b"))
    y = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(small, P("a")))
    try:
        jax.jit(lambda u, v: u + v)(x, y)
    except ValueError as err:
        assert "incompatible devices" in str(err), err
    else:
        raise AssertionError("arguments on different device sets must fail")


def check_with_sharding_constraint_inside_jit():
    mesh = _mesh("2x4")
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)

    def f(v):
        v = with_sharding_constraint(v * 2, NamedSharding(mesh, P(None, "b")))
        return v + 1

    text = jax.jit(f).lower(x).as_text()
    assert "sdy.sharding_constraint %" in text and '<@mesh, [{}, {"b"}]>' in text, text
    out = jax.jit(f)(x)
    _close(out, x * 2 + 1)
    assert out.sharding.mesh is mesh
    with mesh:
        g = jax.jit(lambda v: with_sharding_constraint(v, P("a")) * 2)
        _close(g(x), x * 2)
    eager = with_sharding_constraint(jnp.asarray(x), NamedSharding(mesh, P("a")))
    assert eager.sharding is NamedSharding(mesh, P("a"))
    moved = jax.jit(lambda v: reshard(v * 2, NamedSharding(mesh, P(("a", "b")))))(x)
    assert moved.sharding is NamedSharding(mesh, P(("a", "b")))
    _close(moved, x * 2)
    grads = jax.grad(lambda v: jnp.sum(f(v) ** 2))(x)
    _close(grads, 4 * (2 * x + 1))
    batched = jax.jit(jax.vmap(f))(np.ones((3, 8, 8), np.float32))
    _close(batched, np.full((3, 8, 8), 3.0))


def check_grad_of_sharded_jit_and_eager_ops():
    mesh = _mesh("2x4")
    s = NamedSharding(mesh, P("a", "b"))
    x = jax.device_put(np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8), s)
    g = jax.jit(jax.grad(lambda v: jnp.sum(jnp.tanh(v) ** 2)))(x)
    want = 2 * np.tanh(np.asarray(x)) * (1 - np.tanh(np.asarray(x)) ** 2)
    _close(g, want)
    y = jnp.sin(x)
    assert y.sharding is s
    _close(y, np.sin(np.asarray(x)))
    _close(x + 1, np.asarray(x) + 1)


def check_cached_sharded_call_takes_the_fast_path():
    mesh = _mesh("2x4")
    x = jax.device_put(np.ones(8, np.float32), NamedSharding(mesh, P("a")))
    f = jax.jit(lambda v: v + 1)
    f(x)
    before = dict(f._stats)
    for _ in range(5):
        y = f(x)
    assert dict(f._stats) == before
    assert y.sharding is x.sharding
    _close(y, np.full(8, 2.0))


def check_tensor_parallel_mlp_step_equals_single_device():
    # Megatron-style: the first layer's columns and the second layer's rows split over
    # 'b', the batch over 'a'; XLA inserts the all-reduces.
    mesh = _mesh("2x4")
    rng = _rng(5)
    params = {
        "w1": rng.standard_normal((16, 32)).astype(np.float32) / 4,
        "w2": rng.standard_normal((32, 8)).astype(np.float32) / 6,
    }
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.standard_normal((8, 8)).astype(np.float32)

    def loss(p, x, y):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)

    def step(p, x, y):
        return jax.tree.map(lambda a, g: a - 0.1 * g, p, jax.grad(loss)(p, x, y))

    param_shardings = {"w1": NamedSharding(mesh, P(None, "b")), "w2": NamedSharding(mesh, P("b"))}
    batch = NamedSharding(mesh, P("a"))
    tp = jax.jit(step, in_shardings=(param_shardings, batch, batch), out_shardings=param_shardings)
    single = jax.jit(step)
    want, got = params, params
    for _ in range(3):
        want, got = single(want, x, y), tp(got, x, y)
    assert got["w1"].sharding is param_shardings["w1"]
    for name in params:
        _close(got[name], want[name])
    hlo = tp.lower(params, x, y).compile().as_text()
    assert "all-reduce" in hlo


def check_device_put_between_layouts_of_one_mesh_stays_on_devices():
    from modjax.runtime import array as runtime_array

    mesh = _mesh("2x4")
    v = _rng(3).standard_normal((8, 8)).astype(np.float32)
    x = jax.device_put(v, NamedSharding(mesh, P("a", "b")))
    host_put = runtime_array.put_host_value

    def refuse(*args, **kwargs):
        raise AssertionError("resharding on one mesh went through the host")

    other = Mesh(mesh.devices.reshape(4, 2), ("p", "q"))  # another mesh: on devices too
    runtime_array.put_host_value = refuse
    try:
        for spec in (P("b", None), P(), P(None, ("a", "b"))):
            y = jax.device_put(x, NamedSharding(mesh, spec))
            assert y.sharding.spec == spec, (y.sharding, spec)
            _close(y, v)
        _close(jax.device_put(x, NamedSharding(other, P("p"))), v)
    finally:
        runtime_array.put_host_value = host_put


def check_partition_specs_with_the_current_mesh():
    mesh = _mesh("2x4")
    x = np.arange(64.0, dtype=np.float32).reshape(8, 8)
    for call, kind, text in [
        (lambda: jax.device_put(x, P("a")), ValueError, "Please set a mesh via `jax.set_mesh`"),
        (lambda: jax.jit(lambda v: v, in_shardings=P("a"))(x), RuntimeError,
         "jit requires a non-empty mesh in context if you are passing `PartitionSpec`s to "
         "in_shardings"),
    ]:  # fmt: skip
        try:
            call()
        except kind as err:
            assert text in str(err), err
        else:
            raise AssertionError("a PartitionSpec without a mesh must fail")
    with jax.set_mesh(mesh):
        assert jax.device_put(x, P("a")).sharding is NamedSharding(mesh, P("a"))
        f = jax.jit(lambda v: v * 2, in_shardings=P("a"), out_shardings=P(None, "b"))
        out = f(x)
        assert out.sharding is NamedSharding(mesh, P(None, "b"))
        _close(out, 2 * x)


CHECKS = [
    check_partition_specs_with_the_current_mesh,
    check_tensor_parallel_mlp_step_equals_single_device,
    check_programs_equal_unsharded_on_every_mesh,
    check_scan_and_gather_sharded,
    check_contracting_split_has_an_all_reduce_and_batch_split_none,
    check_lowered_module_has_shardy_annotations,
    check_out_shardings_and_propagated_output_shardings,
    check_in_shardings_prefixes_and_none,
    check_committed_mismatch_and_incompatible_devices_raise,
    check_with_sharding_constraint_inside_jit,
    check_grad_of_sharded_jit_and_eager_ops,
    check_cached_sharded_call_takes_the_fast_path,
    check_device_put_between_layouts_of_one_mesh_stays_on_devices,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
