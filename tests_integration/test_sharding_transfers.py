"""Moving sharded Arrays between devices and meshes, and programs over several meshes.

One child process (8 CPU devices) runs every check; each is reported as a
test. ``device_put`` between device sets (disjoint, overlapping, reordered,
one device and many) and between meshes over the same devices moves data
device to device as JAX 0.10.2 does (checked with the host transfer guards
at ``disallow_explicit`` and with the host path refused); a ``jit`` may use
several meshes over the same devices (one Shardy mesh each, as JAX emits);
a jit nested in another transformation keeps its ``in_shardings`` and
``out_shardings`` on its equation, transformed by vmap, jvp and transposition
as JAX 0.10.2 does, and constrains its call boundary when lowered; arrays
move between memory kinds (``device``, ``pinned_host``, ``unpinned_host``) and
to ``jax.memory.Space``s; ``device_put`` to a Sharding inside jit is a
``device_put`` equation typed and placed as JAX's; pickling matches JAX's.
"""

from __future__ import annotations

import numpy as np
from eight_device_checks import device_tests

import modjax as jax
from modjax.sharding import (
    AxisType,
    Mesh,
    NamedSharding,
    P,
    SingleDeviceSharding,
    reshard,
    with_sharding_constraint,
)
from modjax.sharding.testing import main


def _value():
    return np.arange(64.0, dtype=np.float32).reshape(8, 8)


def _no_host():
    """Refuse any host round trip: the guards at disallow_explicit, the host path patched out."""
    import contextlib

    from modjax.runtime import array as runtime_array

    @contextlib.contextmanager
    def guard():
        put = runtime_array.put_host_value

        def refuse(*args, **kwargs):
            raise AssertionError("the transfer went through the host")

        runtime_array.put_host_value = refuse
        try:
            with (
                jax.transfer_guard_device_to_host("disallow_explicit"),
                jax.transfer_guard_host_to_device("disallow_explicit"),
            ):
                yield
        finally:
            runtime_array.put_host_value = put

    return guard()


def _check_placed(y, sharding, want):
    assert y.sharding == sharding, (y.sharding, sharding)
    assert y.committed
    np.testing.assert_array_equal(np.asarray(y), want)
    for shard in y.addressable_shards:
        np.testing.assert_array_equal(np.asarray(shard.data), want[shard.index])
        assert shard.data.devices() == {shard.device}


def _cases():
    d = jax.devices()
    D = np.array(d)
    xy = NamedSharding(Mesh(D.reshape(2, 4), ("x", "y")), P("x", "y"))
    row8 = NamedSharding(Mesh(D, ("x",)), P("x"))
    low4 = Mesh(D[:4], ("x",))
    high4 = Mesh(D[4:], ("x",))
    return {
        "reversed order": (xy, NamedSharding(Mesh(D[::-1].reshape(2, 4), ("x", "y")), P("x", "y"))),
        "reversed order, other layout": (
            xy,
            NamedSharding(Mesh(D[::-1].reshape(2, 4), ("x", "y")), P("y")),
        ),
        "disjoint, same layout": (NamedSharding(low4, P("x")), NamedSharding(high4, P("x"))),
        "disjoint, other layout": (NamedSharding(low4, P("x")), NamedSharding(high4, P(None, "x"))),
        "4 to 8 devices": (NamedSharding(low4, P("x")), row8),
        "4 replicated to 8": (NamedSharding(low4, P()), row8),
        "8 to 2 of them": (
            NamedSharding(Mesh(D.reshape(2, 4), ("x", "y")), P("x")),
            NamedSharding(Mesh(D[2:4], ("z",)), P("z")),
        ),
        "1 to 8": (SingleDeviceSharding(d[0]), row8),
        "1 to 8 replicated": (SingleDeviceSharding(d[5]), NamedSharding(Mesh(D, ("x",)), P())),
        "8 to 1": (row8, SingleDeviceSharding(d[3])),
        "8 replicated to 1": (NamedSharding(Mesh(D, ("x",)), P()), SingleDeviceSharding(d[3])),
        "other mesh shape": (xy, NamedSharding(Mesh(D.reshape(4, 2), ("x", "y")), P("x", "y"))),
        "other axis names": (xy, NamedSharding(Mesh(D.reshape(2, 4), ("a", "b")), P("b"))),
    }


def check_device_put_between_device_sets_stays_on_devices():
    want = _value()
    for name, (source, target) in _cases().items():
        x = jax.device_put(want, source)
        with _no_host():
            try:
                y = jax.device_put(x, target)
            except Exception as err:
                raise AssertionError(f"{name}: {err!r}") from err
        _check_placed(y, target, want)
        assert not x.is_deleted()
        # back again, and the donating form deletes the source
        before = {b.unsafe_buffer_pointer() for b in y._arrays}
        with _no_host():
            z = jax.device_put(y, source, donate=True)
        _check_placed(z, source, want)
        # pieces already in place are reused (then nothing is deleted)
        reused = any(b.unsafe_buffer_pointer() in before for b in z._arrays)
        assert y.is_deleted() != reused, name


def check_uncommitted_arrays_move_into_a_sharded_program_on_devices():
    D = np.array(jax.devices())
    mesh = Mesh(D[4:].reshape(2, 2), ("x", "y"))
    x = jax.device_put(_value())  # uncommitted, on device 0
    f = jax.jit(lambda v: v * 2, in_shardings=NamedSharding(mesh, P("x", "y")))
    with _no_host():
        y = f(x)
    np.testing.assert_array_equal(np.asarray(y), 2 * _value())
    assert y.sharding.mesh is mesh


def check_explicit_types_follow_the_target_mesh():
    D = np.array(jax.devices())
    low = Mesh(D[:4].reshape(2, 2), ("x", "y"), axis_types=(AxisType.Explicit,) * 2)
    high = Mesh(D[4:].reshape(4), ("z",), axis_types=(AxisType.Explicit,))
    x = jax.device_put(_value(), NamedSharding(low, P("x", "y")))
    assert str(jax.typeof(x)) == "float32[8@x,8@y]", jax.typeof(x)
    with _no_host():
        y = jax.device_put(x, NamedSharding(high, P(None, "z")))
        z = reshard(x, NamedSharding(high, P("z")))
    assert str(jax.typeof(y)) == "float32[8,8@z]", jax.typeof(y)
    assert str(jax.typeof(z)) == "float32[8@z,8]", jax.typeof(z)
    np.testing.assert_array_equal(np.asarray(y), _value())
    np.testing.assert_array_equal(np.asarray(z), _value())


def check_two_meshes_over_the_same_devices_in_one_jit():
    D = np.array(jax.devices())
    m1 = Mesh(D.reshape(2, 4), ("x", "y"))
    m2 = Mesh(D.reshape(2, 4), ("a", "b"))
    m3 = Mesh(D.reshape(4, 2), ("x", "y"))
    want = _value()
    x = jax.device_put(want, NamedSharding(m1, P("x", "y")))
    f = jax.jit(
        lambda v: with_sharding_constraint(v * 2, NamedSharding(m3, P("y"))),
        out_shardings=NamedSharding(m2, P("b")),
    )
    text = f.lower(x).as_text()
    # as JAX 0.10.2 emits it: one Shardy mesh per mesh, in order of use
    for line in (
        'sdy.mesh @mesh = <["x"=2, "y"=4]>',
        'sdy.mesh @mesh_0 = <["a"=2, "b"=4]>',
        'sdy.mesh @mesh_1 = <["x"=4, "y"=2]>',
        '#sdy.sharding<@mesh, [{"x"}, {"y"}]>',
        '#sdy.sharding<@mesh_0, [{"b"}, {}]>',
        'sdy.sharding_constraint %1 <@mesh_1, [{"y"}, {}]>',
    ):
        assert line in text, (line, text)
    y = f(x)
    assert y.sharding == NamedSharding(m2, P("b"))
    assert y.addressable_shards[1].index == (slice(2, 4), slice(None))
    np.testing.assert_array_equal(np.asarray(y), 2 * want)
    # arguments on two meshes: the result is on the first argument's mesh, as in JAX
    other = jax.device_put(np.ones((8, 8), np.float32), NamedSharding(m3, P()))
    z = jax.jit(lambda u, v: u + v)(x, other)
    assert z.sharding == NamedSharding(m1, P("x", "y")), z.sharding
    np.testing.assert_array_equal(np.asarray(z), want + 1)
    # a mesh over the same devices in another order is rejected, as JAX does
    backwards = Mesh(D[::-1].reshape(2, 4), ("x", "y"))
    try:
        jax.jit(lambda v: v + 1, out_shardings=NamedSharding(backwards, P("x")))(x)
    except ValueError as err:
        assert "incompatible devices" in str(err), err
    else:
        raise AssertionError("a mesh over the devices in another order must be rejected")


def _inner_jit():
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    ins, outs = NamedSharding(mesh, P("x")), NamedSharding(mesh, P(None, "y"))
    return mesh, ins, outs, jax.jit(lambda v: v * 2, in_shardings=ins, out_shardings=outs)


def check_nested_jit_keeps_its_shardings():
    mesh, ins, outs, inner = _inner_jit()
    x = _value()
    (eqn,) = [
        e for e in jax.make_jaxpr(lambda v: inner(v) + 1)(x).eqns if e.primitive.name == "jit"
    ]
    assert eqn.params["in_shardings"] == (ins,), eqn.params
    assert eqn.params["out_shardings"] == (outs,), eqn.params
    outer = jax.jit(lambda v: inner(v) + 1)
    text = outer.lower(x).as_text()
    # the call boundary is constrained to the inner jit's shardings
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {}]>' in text, text
    assert 'sdy.sharding_constraint %1 <@mesh, [{}, {"y"}]>' in text, text
    y = outer(x)
    assert y.sharding == outs, y.sharding
    np.testing.assert_array_equal(np.asarray(y), 2 * x + 1)

    # in scan's body, eagerly and under jit
    def body(c, r):
        return c + inner(r).sum(), None

    xs = np.stack([x, x + 1, x - 1])
    want = float(2 * xs.sum())
    assert float(jax.lax.scan(body, 0.0, xs)[0]) == want
    assert float(jax.jit(lambda v: jax.lax.scan(body, 0.0, v))(xs)[0]) == want


def check_nested_jit_shardings_under_vmap():
    mesh, ins, outs, inner = _inner_jit()
    xs = np.stack([_value()] * 3)
    (eqn,) = jax.make_jaxpr(jax.vmap(inner))(xs).eqns
    # the batch dimension is inserted unsplit (as JAX 0.10.2 prints it)
    assert eqn.params["in_shardings"] == (NamedSharding(mesh, P(None, "x")),), eqn.params
    assert eqn.params["out_shardings"] == (NamedSharding(mesh, P(None, None, "y")),)
    jaxpr = jax.make_jaxpr(jax.vmap(inner, in_axes=1, out_axes=2))(xs.transpose(1, 0, 2))
    (eqn,) = [e for e in jaxpr.eqns if e.primitive.name == "jit"]
    assert eqn.params["in_shardings"] == (NamedSharding(mesh, P("x")),), eqn.params
    assert eqn.params["out_shardings"] == (NamedSharding(mesh, P(None, None, "y")),)
    y = jax.jit(jax.vmap(inner))(xs)
    assert y.sharding == NamedSharding(mesh, P(None, None, "y")), y.sharding
    np.testing.assert_array_equal(np.asarray(y), 2 * xs)
    # spmd_axis_name splits the batch dimension over those mesh axes
    rows = NamedSharding(mesh, P("x"))
    by_rows = jax.jit(lambda v: v * 2, in_shardings=rows, out_shardings=rows)
    (eqn,) = jax.make_jaxpr(jax.vmap(by_rows, spmd_axis_name="y"))(xs).eqns
    assert eqn.params["in_shardings"] == (NamedSharding(mesh, P("y", "x")),), eqn.params
    assert eqn.params["out_shardings"] == (NamedSharding(mesh, P("y", "x")),), eqn.params
    try:  # the result's spec would use "y" twice, as JAX 0.10.2 reports
        jax.make_jaxpr(jax.vmap(inner, spmd_axis_name="y"))(xs)
    except Exception as err:
        assert type(err).__name__ == "DuplicateSpecError", err
        assert "P('y', None, 'y')" in str(err), err
    else:
        raise AssertionError("a mesh axis used twice must be rejected")


def check_nested_jit_shardings_under_grad():
    mesh, ins, outs, inner = _inner_jit()
    x = _value()
    loss = lambda v: inner(v).sum()  # noqa: E731
    eqns = [e for e in jax.make_jaxpr(jax.grad(loss))(x).eqns if e.primitive.name == "jit"]
    forward, backward = eqns
    assert forward.params["in_shardings"] == (ins,), forward.params
    # the transpose takes the result's cotangent laid out as the result, and returns
    # the operand's cotangent laid out as the operand (as JAX 0.10.2 prints it)
    assert backward.params["in_shardings"] == (outs,), backward.params
    assert backward.params["out_shardings"] == (ins,), backward.params
    for g in (jax.grad(loss)(x), jax.jit(jax.grad(loss))(x)):
        assert g.sharding == ins, g.sharding
        np.testing.assert_array_equal(np.asarray(g), np.full((8, 8), 2.0, np.float32))
    (eqn,) = jax.make_jaxpr(lambda v: jax.jvp(inner, (v,), (v,)))(x).eqns
    assert eqn.params["in_shardings"] == (ins, ins), eqn.params
    assert eqn.params["out_shardings"] == (outs, outs), eqn.params


def check_memory_kinds_and_memory_spaces():
    d = jax.devices()
    mesh = Mesh(np.array(d).reshape(2, 4), ("x", "y"))
    want = _value()
    assert [m.kind for m in d[0].addressable_memories()] == [
        "device",
        "pinned_host",
        "unpinned_host",
    ]
    x = jax.device_put(want, NamedSharding(mesh, P("x")))
    targets = [
        NamedSharding(mesh, P("x"), memory_kind="pinned_host"),
        NamedSharding(mesh, P("y"), memory_kind="pinned_host"),
        NamedSharding(mesh, P(), memory_kind="unpinned_host"),
        SingleDeviceSharding(d[2], memory_kind="pinned_host"),
    ]
    for target in targets:
        with _no_host():
            y = jax.device_put(x, target)
            z = jax.device_put(y, NamedSharding(mesh, P("x")))
        _check_placed(y, target, want)
        assert y.sharding.memory_kind == target.memory_kind
        _check_placed(z, NamedSharding(mesh, P("x")), want)
        assert z.sharding.memory_kind == "device"
    # jax.memory.Space: the same devices and layout in that memory (JAX 0.10.2's answers)
    with _no_host():
        y = jax.device_put(x, jax.memory.Space.Host)
    assert y.sharding == NamedSharding(mesh, P("x"), memory_kind="pinned_host"), y.sharding
    back = jax.device_put(y, jax.memory.Space.Device)
    assert back.sharding == NamedSharding(mesh, P("x")), back.sharding
    h = jax.device_put(np.ones(3, np.float32), jax.memory.Space.Host)
    assert h.sharding == SingleDeviceSharding(d[0], memory_kind="pinned_host") and h.committed
    np.testing.assert_array_equal(np.asarray(h), np.ones(3, np.float32))
    for bad, error in (
        (lambda: NamedSharding(mesh, P(), memory_kind="bogus"), ValueError),
        (lambda: jax.device_put(1.0, jax.memory.Space.Any), ValueError),
    ):
        try:
            bad()
        except error:
            pass
        else:
            raise AssertionError(f"expected {error.__name__}")


def check_jit_shardings_in_other_memory_kinds():
    d = jax.devices()
    mesh = Mesh(np.array(d).reshape(2, 4), ("x", "y"))
    want = _value()
    x = jax.device_put(want, NamedSharding(mesh, P("x")))
    pinned = NamedSharding(mesh, P(), memory_kind="pinned_host")
    unpinned = NamedSharding(mesh, P(), memory_kind="unpinned_host")
    # out_shardings in another memory: the result is moved there (JAX 0.10.2's answers)
    f = jax.jit(lambda v, w: (v * 2, w), out_shardings=(pinned, None))
    a, b = f(x, x)
    assert a.sharding == pinned and b.sharding == NamedSharding(mesh, P("x")), (a, b)
    assert b.sharding.memory_kind == "device"
    np.testing.assert_array_equal(np.asarray(a), want * 2)
    np.testing.assert_array_equal(np.asarray(b), want)
    text = f.lower(x, x).as_text()
    # as JAX lowers it: every argument and result carries its memory kind, and the
    # result in pinned_host is placed there by annotate_device_placement
    assert text.count('mhlo.memory_kind = "device"') == 3, text
    assert text.count('mhlo.memory_kind = "pinned_host"') == 1, text
    assert (
        'stablehlo.custom_call @annotate_device_placement(%1) {backend_config = "", '
        "has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "
        '"pinned_host"}}' in text
    ), text
    c = jax.jit(lambda v: v * 2, out_shardings=unpinned)(x)
    assert c.sharding == unpinned, c.sharding
    np.testing.assert_array_equal(np.asarray(c), want * 2)
    # in_shardings in another memory: arguments there are taken as they are; host
    # values are put there (typed Device, so is the result, as JAX's)
    y = jax.device_put(x, pinned)
    g = jax.jit(lambda v: v * 2, in_shardings=pinned)
    np.testing.assert_array_equal(np.asarray(g(y)), want * 2)
    assert 'mhlo.memory_kind = "pinned_host", sdy.sharding' in g.lower(y).as_text()
    h = g(np.ones((8, 8), np.float32))
    assert h.sharding == NamedSharding(mesh, P()), h.sharding
    np.testing.assert_array_equal(np.asarray(h), np.full((8, 8), 2.0, np.float32))
    try:
        g(x)
    except ValueError as err:
        assert str(err) == (
            "Memory kinds passed to jax.jit does not match memory kind on the respective "
            "arg. Got jit memory kind: pinned_host, arg memory kind: device for arg type: "
            "float32[8,8]"
        ), err
    else:
        raise AssertionError("expected ValueError")


def check_one_device_jit_shardings_in_other_memory_kinds():
    # SingleDeviceShardings in other memory kinds: values, memory kinds and the lowered
    # mhlo.memory_kind / annotate_device_placement of JAX 0.10.2 on CPU
    d = jax.devices()
    x = np.arange(3.0, dtype=np.float32)
    pinned = SingleDeviceSharding(d[2], memory_kind="pinned_host")
    unpinned = SingleDeviceSharding(d[2], memory_kind="unpinned_host")
    f = jax.jit(lambda v: v + 1, out_shardings=pinned)
    r = f(x)
    assert r.sharding == pinned and r.committed, r.sharding  # the sharding picks the device
    np.testing.assert_array_equal(np.asarray(r), x + 1)
    text = f.lower(x).as_text()
    assert text.count('mhlo.memory_kind = "pinned_host"') == 1, text
    assert "%arg0: tensor<3xf32>)" in text, text  # an argument without a sharding: no kind
    assert (
        'stablehlo.custom_call @annotate_device_placement(%1) {backend_config = "", '
        "has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "
        '"pinned_host"}}' in text
    ), text
    u = jax.jit(lambda v: v + 1, out_shardings=unpinned)(x)
    assert u.sharding == unpinned, u.sharding
    np.testing.assert_array_equal(np.asarray(u), x + 1)
    # in_shardings: arguments there are taken as they are, host values put there
    y = jax.device_put(x, pinned)
    g = jax.jit(lambda v: v * 2, in_shardings=pinned)
    r = g(y)
    assert r.sharding == pinned and str(jax.typeof(r)) == "float32<host>[3]", r.sharding
    np.testing.assert_array_equal(np.asarray(r), x * 2)
    text = g.lower(y).as_text()
    assert "%arg0: tensor<3xf32> {mhlo.memory_kind = " + '"pinned_host"}' in text, text
    assert "annotate_device_placement" not in text, text
    h = g(x)
    assert h.sharding == SingleDeviceSharding(d[2]), h.sharding
    np.testing.assert_array_equal(np.asarray(h), x * 2)
    try:
        g(jax.device_put(x, d[2]))
    except ValueError as err:
        assert str(err) == (
            "Memory kinds passed to jax.jit does not match memory kind on the respective "
            "arg. Got jit memory kind: pinned_host, arg memory kind: device for arg type: "
            "float32[3]"
        ), err
    else:
        raise AssertionError("expected ValueError")
    # from pinned_host memory to the device's: the result is moved there
    back = jax.jit(lambda v: v * 2, in_shardings=pinned, out_shardings=SingleDeviceSharding(d[2]))
    r = back(y)
    assert r.sharding == SingleDeviceSharding(d[2]), r.sharding
    np.testing.assert_array_equal(np.asarray(r), x * 2)
    text = back.lower(y).as_text()
    assert '_xla_buffer_placement = "device"' in text, text
    # two results, each where its sharding (or its type) says
    two = jax.jit(
        lambda v, w: (v + 1, w * 2), in_shardings=(pinned, None), out_shardings=(None, pinned)
    )
    a, b = two(y, x)
    assert a.sharding == pinned and b.sharding == pinned, (a.sharding, b.sharding)
    np.testing.assert_array_equal(np.asarray(a), x + 1)
    np.testing.assert_array_equal(np.asarray(b), x * 2)
    text = two.lower(y, x).as_text()
    assert text.count('mhlo.memory_kind = "pinned_host"') == 3, text
    assert text.count("annotate_device_placement") == 1, text
    # a committed argument on another device than out_shardings': JAX's ValueError
    try:
        f(jax.device_put(x, d[0]))
    except ValueError as err:
        assert "Received incompatible devices for jitted computation" in str(err), err
        assert "explicit output sharding with device ids [2]" in str(err), err
    else:
        raise AssertionError("expected ValueError")
    # in_shardings on one device: a committed argument on another device is moved there,
    # one on several devices is JAX's ValueError (JAX 0.10.2's answers)
    moved = jax.jit(lambda v: v + 1, in_shardings=SingleDeviceSharding(d[1]))(
        jax.device_put(x, d[0])
    )
    assert moved.sharding == SingleDeviceSharding(d[1]), moved.sharding
    np.testing.assert_array_equal(np.asarray(moved), x + 1)
    mesh = Mesh(np.array(d), ("x",))
    spread = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x")))
    try:
        jax.jit(lambda v: v + 1, in_shardings=SingleDeviceSharding(d[1]))(spread)
    except ValueError as err:
        assert "Sharding passed to jit does not match the sharding" in str(err), err
    else:
        raise AssertionError("expected ValueError")
    # a nested jit's shardings under jvp (its equation runs eagerly)
    p, t = jax.jvp(f, (x,), (np.ones(3, np.float32),))
    assert p.sharding == pinned and t.sharding == pinned, (p.sharding, t.sharding)
    np.testing.assert_array_equal(np.asarray(t), np.ones(3, np.float32))
    # device_put to another memory inside jit on one device: the type says where
    k = jax.jit(lambda v: jax.device_put(v * 2, pinned))
    r = k(x)
    assert r.sharding == pinned and str(jax.typeof(r)) == "float32<host>[3]", r.sharding
    np.testing.assert_array_equal(np.asarray(r), x * 2)
    # unpinned_host memory is typed Device: such a device_put inside jit stays on the device
    assert jax.jit(lambda v: jax.device_put(v * 2, unpinned))(x).sharding.memory_kind == "device"


def check_memory_spaces_in_types():
    d = jax.devices()
    mesh = Mesh(np.array(d).reshape(2, 4), ("x", "y"))
    want = _value()
    x = jax.device_put(want, NamedSharding(mesh, P("x")))
    pinned = NamedSharding(mesh, P(), memory_kind="pinned_host")
    # an array's type says its memory space: pinned_host is Host, the others Device
    assert repr(jax.typeof(jax.device_put(x, pinned))) == "ShapedArray(float32<host>[8,8])"
    assert jax.typeof(jax.device_put(x, pinned)).memory_space is jax.memory.Space.Host
    unpinned = jax.device_put(x, NamedSharding(mesh, P(), memory_kind="unpinned_host"))
    assert jax.typeof(unpinned).memory_space is jax.memory.Space.Device
    assert jax.typeof(x).memory_space is jax.memory.Space.Device
    # device_put to another memory inside jit: an equation whose type says where (JAX 0.10.2)
    f = jax.jit(lambda v: jax.device_put(v * 2, jax.memory.Space.Host))
    text = str(jax.make_jaxpr(lambda v: jax.device_put(v * 2, jax.memory.Space.Host))(x))
    assert "f32<host>[8,8] = device_put[" in text, text
    assert "devices=(MemorySpace.Host,)" in text, text
    y = f(x)
    assert y.sharding == NamedSharding(mesh, P("x"), memory_kind="pinned_host"), y.sharding
    assert jax.typeof(y).memory_space is jax.memory.Space.Host
    np.testing.assert_array_equal(np.asarray(y), want * 2)
    lowered = f.lower(x).as_text()
    assert '%arg0: tensor<8x8xf32> {mhlo.memory_kind = "device", sdy.sharding' in lowered, lowered
    assert '-> (tensor<8x8xf32> {mhlo.memory_kind = "pinned_host"})' in lowered, lowered
    assert "annotate_device_placement" not in lowered, lowered
    # to a sharding in another memory kind, and back to the device
    g = jax.jit(lambda v: jax.device_put(v, pinned))
    assert (
        g(x).sharding.memory_kind == "pinned_host" and jax.typeof(g(x)).memory_space.name == "Host"
    )
    back = jax.jit(
        lambda v: (
            jax.device_put(jax.device_put(v, jax.memory.Space.Host), jax.memory.Space.Device) * 2
        )
    )
    z = back(x)
    assert z.sharding == NamedSharding(mesh, P("x")), z.sharding
    np.testing.assert_array_equal(np.asarray(z), want * 2)
    assert '-> (tensor<8x8xf32> {mhlo.memory_kind = "device"})' in back.lower(x).as_text()
    # a jit of Host values computes Host values; unpinned_host ones are Device (JAX's answers)
    h = jax.device_put(x, pinned)
    r = jax.jit(lambda v: v * 2)(h)
    assert r.sharding.memory_kind == "pinned_host", r.sharding
    assert repr(jax.typeof(r)) == "ShapedArray(float32<host>[8,8])"
    np.testing.assert_array_equal(np.asarray(r), want * 2)
    assert jax.jit(lambda v: v * 2)(unpinned).sharding.memory_kind == "device"
    # in_shardings in pinned_host: the result is Host too
    k = jax.jit(lambda v: v * 2, in_shardings=pinned)(h)
    assert k.sharding == pinned, k.sharding
    # mixing memory spaces in one operation: JAX's ValueError
    try:
        jax.jit(lambda a, b: a + b)(h, x)
    except ValueError as err:
        assert str(err) == (
            "memory_space of all inputs passed to `add` must be the same. Got one operand "
            "with type: float32<host>[8,8] and another operand with type: float32[8,8]"
        ), err
    else:
        raise AssertionError("expected ValueError")
    # eager operations follow the types too
    e = jax.device_put(np.arange(3.0, dtype=np.float32), jax.memory.Space.Host)
    assert str(jax.typeof(e)) == "float32<host>[3]" and str(jax.typeof(e * 2)) == "float32<host>[3]"
    assert (e * 2).sharding.memory_kind == "pinned_host"
    try:
        e + jax.device_put(np.arange(3.0, dtype=np.float32))
    except ValueError as err:
        assert "memory_space of all inputs passed to `add` must be the same" in str(err), err
    else:
        raise AssertionError("expected ValueError")
    # a scatter's result is in its operand's space, whatever its indices' and updates'
    s = jax.jit(lambda a, i: a.at[i].add(jax.numpy.ones(2)))(e, jax.numpy.array([0, 2]))
    assert str(jax.typeof(s)) == "float32<host>[3]", jax.typeof(s)
    np.testing.assert_array_equal(np.asarray(s), [1.0, 1.0, 3.0])
    # vmap keeps the memory space of device_put's result
    v = jax.jit(jax.vmap(lambda a: jax.device_put(a, jax.memory.Space.Host) * 2))(
        np.ones((2, 3), np.float32)
    )
    assert str(jax.typeof(v)) == "float32<host>[2,3]", jax.typeof(v)
    # one device: a host value put in Host memory inside jit
    one = jax.jit(lambda a: jax.device_put(a + 1, jax.memory.Space.Host))
    o = one(np.ones(3, np.float32))
    assert o.sharding == SingleDeviceSharding(d[0], memory_kind="pinned_host"), o.sharding
    np.testing.assert_array_equal(np.asarray(o), np.full(3, 2.0, np.float32))
    text = one.lower(np.ones(3, np.float32)).as_text()
    assert (
        '@main(%arg0: tensor<3xf32>) -> (tensor<3xf32> {mhlo.memory_kind = "pinned_host"})' in text
    ), text


def _raises(fn, error, message):
    try:
        fn()
    except error as err:
        assert str(err) == message, err
    else:
        raise AssertionError(f"expected {error.__name__}: {message}")


def check_derivatives_check_memory_spaces():
    # JAX 0.10.2's answers (8 CPU devices): a value in host memory wants its cotangent
    # there (the VJP function's check), and the transpose checks each cotangent's
    # memory space against its value's type
    import modjax.numpy as jnp

    host, device = jax.memory.Space.Host, jax.memory.Space.Device
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    pinned = NamedSharding(mesh, P(), memory_kind="pinned_host")
    x = np.arange(8.0, dtype=np.float32)
    f = jax.jit(lambda v: v * 2, out_shardings=pinned)
    vjp_error = (
        "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got {0}, but "
        "expected {1} because the corresponding output of the differentiated function had JAX "
        "type {1}"
    )
    _raises(
        lambda: jax.grad(lambda v: f(v).sum())(x),
        ValueError,
        vjp_error.format("float32[]", "float32<host>[]"),
    )
    _raises(
        lambda: jax.vjp(f, x)[1](jnp.ones(8)),
        ValueError,
        vjp_error.format("float32[8]", "float32<host>[8]"),
    )
    _raises(
        lambda: jax.vjp(f, x)[1](jax.device_put(jnp.ones(8), host)),
        ValueError,
        "Expected cotangent type float32[8] but got float32<host>[8]",
    )
    # jit of grad: the gradient lands in device memory
    g = jax.jit(jax.grad(lambda v: f(v).sum()))(x)
    assert g.sharding == NamedSharding(mesh, P()), g.sharding
    assert str(jax.typeof(g)) == "float32[8]", jax.typeof(g)
    np.testing.assert_array_equal(np.asarray(g), np.full(8, 2.0, np.float32))
    lowered = jax.jit(jax.grad(lambda v: f(v).sum())).lower(x).as_text()
    assert '-> (tensor<8xf32> {mhlo.memory_kind = "device"})' in lowered, lowered
    # forward mode keeps the results in host memory
    p, t = jax.jvp(f, (x,), (jnp.ones(8),))
    assert p.sharding == pinned and t.sharding == pinned, (p.sharding, t.sharding)
    assert str(jax.typeof(t)) == "float32<host>[8]", jax.typeof(t)
    np.testing.assert_array_equal(np.asarray(t), np.full(8, 2.0, np.float32))
    lin = jax.linearize(f, x)[1](jnp.ones(8))
    assert lin.sharding == pinned, lin.sharding
    # device_put to host memory and back: the cotangent goes back to host memory
    _raises(
        lambda: jax.grad(lambda v: jax.device_put(v * 2, host).sum())(x),
        ValueError,
        vjp_error.format("float32[]", "float32<host>[]"),
    )
    _raises(
        lambda: jax.grad(lambda v: jax.device_put(jax.device_put(v, host) * 2, device).sum())(x),
        ValueError,
        "Expected cotangent type float32[8] but got float32<host>[8]",
    )
    # a function of a value in host memory: its gradient is there too
    h = jax.device_put(np.arange(3.0, dtype=np.float32), host)
    for grad in (
        jax.grad(lambda v: jax.device_put(jnp.sin(v), device).sum()),
        jax.jit(jax.grad(lambda v: jax.device_put(jnp.sin(v), device).sum())),
    ):
        r = grad(h)
        assert str(jax.typeof(r)) == "float32<host>[3]", jax.typeof(r)
        assert r.sharding.memory_kind == "pinned_host", r.sharding
        np.testing.assert_allclose(np.asarray(r), np.cos(np.arange(3.0)), rtol=1e-6)
    r = jax.vjp(lambda v: v * 2, h)[1](jax.device_put(jnp.ones(3), host))[0]
    assert str(jax.typeof(r)) == "float32<host>[3]", jax.typeof(r)
    _raises(
        lambda: jax.vjp(lambda v: v * 2, h)[1](jnp.ones(3)),
        ValueError,
        vjp_error.format("float32[3]", "float32<host>[3]"),
    )


def check_device_put_to_a_pytree_of_targets():
    # JAX 0.10.2's answers: the targets are a pytree prefix of the values
    d = jax.devices()
    host = jax.memory.Space.Host
    x = np.arange(3.0, dtype=np.float32)
    a, b = jax.device_put((x, x), (host, d[3]))
    assert a.sharding == SingleDeviceSharding(d[0], memory_kind="pinned_host"), a.sharding
    assert b.sharding == SingleDeviceSharding(d[3]) and b.committed, b.sharding
    tree = jax.device_put({"a": x, "b": (x, x)}, {"a": None, "b": host})
    assert not tree["a"].committed and tree["a"].sharding.memory_kind == "device"
    assert [v.sharding.memory_kind for v in tree["b"]] == ["pinned_host", "pinned_host"]
    text = str(jax.make_jaxpr(lambda v: jax.device_put((v, v * 2), (host, d[0])))(x))
    assert "c:f32<host>[3] d:f32[3] = device_put[" in text, text
    assert "devices=(MemorySpace.Host, CpuDevice(id=0))" in text, text
    r = jax.jit(lambda v: jax.device_put((v, v * 2), (host, d[0])))(x)
    assert [v.sharding.memory_kind for v in r] == ["pinned_host", "device"], r
    np.testing.assert_array_equal(np.asarray(r[1]), x * 2)
    try:
        jax.device_put((x, x), (host, host, host))
    except ValueError as err:
        assert str(err).startswith(
            "device_put device specification must be a tree prefix of the corresponding value"
        ), err
    else:
        raise AssertionError("expected ValueError")


def check_jaxprs_with_memory_spaces_parse_back():
    from modjax.tracecore import eval_jaxpr, jaxpr_equal, parse_jaxpr

    d = jax.devices()
    x = np.arange(3.0, dtype=np.float32)
    host, device = jax.memory.Space.Host, jax.memory.Space.Device
    pinned = SingleDeviceSharding(d[1], memory_kind="pinned_host")
    programs = [
        lambda v: jax.device_put(v * 2, host) + 1,
        lambda v: jax.device_put(jax.device_put(v, host), device) * 2,
        jax.jit(lambda v: jax.device_put(v * 2, host)),
        lambda v: jax.device_put(v, pinned) * 3,
        lambda v: jax.numpy.sin(v) * 2,
    ]
    args = [x, x, x, x, jax.device_put(x, host)]
    for f, arg in zip(programs, args, strict=True):
        closed = jax.make_jaxpr(f)(arg)
        text = str(closed)
        assert "f32<host>[3]" in text, text
        back = parse_jaxpr(text, consts=closed.consts)
        assert jaxpr_equal(back, closed) and str(back) == text, (text, str(back))
        (want,) = eval_jaxpr(closed.jaxpr, closed.consts, arg)
        (got,) = eval_jaxpr(back.jaxpr, back.consts, arg)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        assert got.sharding == want.sharding, (got.sharding, want.sharding)
        assert str(jax.typeof(got)) == str(jax.typeof(want)), text


def check_pickling_follows_jax():
    import pickle

    from modjax.sharding import AbstractMesh

    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"))
    # as in JAX 0.10.2 on CPU: specs and abstract meshes pickle; devices do not, so
    # neither do meshes and shardings over them (TypeError)
    for obj in (P("x", None), P(("x", "y")), AbstractMesh((2, 4), ("x", "y"))):
        assert pickle.loads(pickle.dumps(obj)) == obj, obj
    for obj in (mesh, NamedSharding(mesh, P("x")), SingleDeviceSharding(jax.devices()[0])):
        try:
            pickle.dumps(obj)
        except TypeError as err:
            assert "Device" in str(err), err
        else:
            raise AssertionError(f"{obj!r} pickled")


def check_device_put_to_a_sharding_inside_jit():
    import modjax.numpy as jnp

    mesh = Mesh(np.array(jax.devices()), ("x",), axis_types=(AxisType.Explicit,))
    s = NamedSharding(mesh, P("x"))
    row = NamedSharding(mesh, P("x", None))
    # Known answers of JAX 0.10.2 (8 CPU devices): a device_put equation whose type
    # has the explicit axes; the program's result is sharded as the type says.
    made = jax.jit(lambda: jax.device_put(jnp.ones((8, 4)), s))
    out = made()
    assert out.sharding == row, out.sharding
    np.testing.assert_array_equal(np.asarray(out), np.ones((8, 4), np.float32))
    text = str(jax.make_jaxpr(lambda: jax.device_put(jnp.ones((8, 4)), s))())
    assert "b:f32[8@x,4] = device_put[" in text and "spec=P('x',)" in text, text
    lowered = made.lower().as_text()
    assert 'sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>' in lowered, lowered
    # traced arguments and a pytree of leaves
    x = np.arange(64, dtype=np.float32).reshape(8, 8)
    a, b = jax.jit(lambda v: jax.device_put((v, v + 1), s))(x)
    assert a.sharding == row and b.sharding == row, (a.sharding, b.sharding)
    np.testing.assert_array_equal(np.asarray(b), x + 1)
    # jnp.asarray(device=) is a sharding constraint, not a device_put: explicit axes
    # outside a mesh context raise JAX 0.10.2's ValueError (test_sharding_api_details).
    try:
        jax.jit(lambda: jnp.asarray(x, device=s))()
    except ValueError as err:
        assert "can only refer to Auto axes of the mesh" in str(err), err
    else:
        raise AssertionError("jnp.asarray(device=) of explicit axes must raise")
    # grad: the cotangent goes back through a device_put to the source
    g = jax.jit(jax.grad(lambda v: jax.device_put(v, s).sum()))(x)
    assert g.sharding == row, g.sharding
    np.testing.assert_array_equal(np.asarray(g), np.ones_like(x))
    # an Auto mesh: the equation has no type sharding; JAX 0.10.2 replicates the result
    auto = Mesh(np.array(jax.devices()), ("x",), axis_types=(AxisType.Auto,))
    sa = NamedSharding(auto, P("x"))
    text = str(jax.make_jaxpr(lambda v: jax.device_put(v * 2, sa))(x))
    assert "c:f32[8,8] = device_put[" in text, text
    r = jax.jit(lambda v: jax.device_put(v * 2, sa))(x)
    assert r.sharding == NamedSharding(auto, P()), r.sharding
    np.testing.assert_array_equal(np.asarray(r), x * 2)
    # a SingleDeviceSharding target drops the type's sharding, as JAX's
    typed = jax.device_put(x, row)
    text = str(
        jax.make_jaxpr(lambda v: jax.device_put(v, SingleDeviceSharding(jax.devices()[3])))(typed)
    )
    assert "b:f32[8,8] = device_put[" in text and "SingleDeviceSharding" in text, text
    # and runs the program on its device (committed), JAX's ValueError against another
    d = jax.devices()
    one = jax.jit(lambda v: jax.device_put(v * 2, SingleDeviceSharding(d[3])))(x)
    assert one.sharding == SingleDeviceSharding(d[3]) and one.committed, one.sharding
    np.testing.assert_array_equal(np.asarray(one), x * 2)
    try:
        jax.jit(lambda v: jax.device_put(v, SingleDeviceSharding(d[3])))(jax.device_put(x, d[1]))
    except ValueError as err:
        assert "incompatible devices" in str(err), err
    else:
        raise AssertionError("a device_put to device 3 of an argument on device 1 ran")


CHECKS = [
    check_device_put_between_device_sets_stays_on_devices,
    check_uncommitted_arrays_move_into_a_sharded_program_on_devices,
    check_explicit_types_follow_the_target_mesh,
    check_two_meshes_over_the_same_devices_in_one_jit,
    check_nested_jit_keeps_its_shardings,
    check_nested_jit_shardings_under_vmap,
    check_nested_jit_shardings_under_grad,
    check_memory_kinds_and_memory_spaces,
    check_jit_shardings_in_other_memory_kinds,
    check_one_device_jit_shardings_in_other_memory_kinds,
    check_derivatives_check_memory_spaces,
    check_device_put_to_a_pytree_of_targets,
    check_memory_spaces_in_types,
    check_jaxprs_with_memory_spaces_parse_back,
    check_pickling_follows_jax,
    check_device_put_to_a_sharding_inside_jit,
]


results, test_on_8_devices = device_tests(__file__, CHECKS)


if __name__ == "__main__":
    main(CHECKS)
