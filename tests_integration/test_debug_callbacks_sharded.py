"""Host callbacks in programs sharded over 4 CPU devices (one child process runs the checks).

XLA's SPMD partitioner needs a sharding on every side-effecting op; the callback
gets a maximal sharding on device 0, as in JAX, so ``debug.print`` prints the
whole value once and ``pure_callback`` sees the whole array; inside ``shard_map``
each device calls back with its block.
"""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.sharding import NamedSharding, P, shard_map
from modjax.sharding.testing import main, run_checks


def _sharded_x():
    mesh = jax.make_mesh((4,), ("x",))
    return jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x"))), mesh


def _printed(f, *args) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        f(*args)
        jax.effects_barrier()
    return out.getvalue().splitlines()


def check_debug_print_runs_once_with_the_whole_value():
    x, _ = _sharded_x()

    @jax.jit
    def f(x):
        jax.debug.print("x={}", x)
        return x * 2

    assert _printed(f, x) == ["x=[0. 1. 2. 3. 4. 5. 6. 7.]"]


def check_debug_print_with_in_shardings():
    x, mesh = _sharded_x()
    f = jax.jit(
        lambda x: (jax.debug.print("sum={}", x.sum()), x + 1)[1],
        in_shardings=NamedSharding(mesh, P("x")),
    )
    assert _printed(f, x) == ["sum=28.0"]


def check_pure_callback_sees_the_whole_array():
    x, _ = _sharded_x()
    spec = jax.ShapeDtypeStruct((8,), jnp.float32)
    got = jax.jit(lambda x: jax.pure_callback(lambda a: np.asarray(a)[::-1].copy(), spec, x))(x)
    np.testing.assert_array_equal(np.asarray(got), np.arange(8.0)[::-1])


def check_callbacks_in_shard_map_run_per_block():
    x, mesh = _sharded_x()

    def body(block):
        jax.debug.print("block {}", block)
        spec = jax.ShapeDtypeStruct(block.shape, block.dtype)
        return jax.pure_callback(lambda a: np.asarray(a) + 100, spec, block)

    f = jax.jit(shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        got = f(x)
        jax.effects_barrier()
    lines = sorted(out.getvalue().splitlines())  # devices print in any order
    assert lines == ["block [0. 1.]", "block [2. 3.]", "block [4. 5.]", "block [6. 7.]"]
    np.testing.assert_array_equal(np.asarray(got), np.arange(8.0) + 100)


def check_ordered_effects_are_refused():
    x, _ = _sharded_x()
    f = jax.jit(lambda x: jax.debug.print("{}", x, ordered=True))
    try:
        f(x)
    except NotImplementedError as err:
        assert "sharded over several devices" in str(err)
    else:
        raise AssertionError("an ordered effect in a sharded program ran")


CHECKS = [
    check_debug_print_runs_once_with_the_whole_value,
    check_debug_print_with_in_shardings,
    check_pure_callback_sees_the_whole_array,
    check_callbacks_in_shard_map_run_per_block,
    check_ordered_effects_are_refused,
]


@pytest.fixture(scope="module")
def outcomes():
    return run_checks(__file__, num_devices=4)


@pytest.mark.parametrize("check", [c.__name__ for c in CHECKS])
def test_sharded_callbacks(outcomes, check):
    assert outcomes[check] is None, outcomes[check]


if __name__ == "__main__":
    main(CHECKS)
