"""checkify over shard_map and pmap, and pmap's keyword arguments and disable_jit, on 8
devices: JAX 0.10.2's messages (found running chex's own tests on modjax)."""

from __future__ import annotations

import numpy as np
import pytest
from eight_device_checks import device_tests

import modjax as jax
import modjax.numpy as jnp
from modjax.experimental import checkify
from modjax.sharding import Mesh
from modjax.sharding import PartitionSpec as P
from modjax.sharding.testing import main

_X = jnp.array([1.0, -2.0, 3.0, -4.0, 5.0, 6.0, 7.0, -8.0])


def _body(x):
    checkify.check(jnp.all(x > 0), "bad {x}", x=x)
    return jnp.log(x)


def check_each_failing_device_reports_its_first_failure():
    mesh = Mesh(np.array(jax.devices()), ("i",))
    expected = (
        "at mapped index 1: bad [-2.] (`check` failed)\n"
        "at mapped index 3: bad [-4.] (`check` failed)\n"
        "at mapped index 7: bad [-8.] (`check` failed)"
    )
    for check_vma in (True, False):
        f = jax.shard_map(_body, mesh=mesh, in_specs=P("i"), out_specs=P("i"), check_vma=check_vma)
        for g in (
            checkify.checkify(f),
            checkify.checkify(jax.jit(f)),
            jax.jit(checkify.checkify(f)),
            checkify.checkify(f, errors=checkify.all_checks),
        ):
            error, out = g(_X)
            assert error.get() == expected, error.get()
            np.testing.assert_array_equal(np.isnan(out), np.asarray(_X) < 0)
        error, _ = checkify.checkify(f)(jnp.abs(_X))
        assert error.get() is None


def check_a_jit_program_holding_a_shard_map_runs_on_its_mesh():
    # checkify rebuilds the jit equation without shardings of its own.
    mesh = Mesh(np.array(jax.devices()), ("i",))
    f = jax.shard_map(jnp.log, mesh=mesh, in_specs=P("i"), out_specs=P("i"))

    def g(x):
        checkify.check(jnp.all(x > -10), "outer")
        return f(x)

    error, out = checkify.checkify(jax.jit(g))(_X)
    assert error.get() is None
    np.testing.assert_allclose(out[0::4], np.log([1.0, 5.0]))


def check_pmap_checks_and_keyword_arguments():
    pf = jax.pmap(lambda x: (checkify.check(x > 0, "p {x}", x=x), x * 2)[1])
    error, out = checkify.checkify(pf)(_X)
    assert error.get().splitlines()[0] == "at mapped index 1: p -2.0 (`check` failed)"
    g = jax.pmap(lambda x, y: x * 2 + y)
    expected = np.asarray(_X) * 3
    np.testing.assert_array_equal(g(_X, y=_X), expected)
    np.testing.assert_array_equal(g(x=_X, y=_X), expected)
    with pytest.raises(ValueError, match="rank at least 1, but was applied to a value of rank 0"):
        g(_X, 100)  # a Python scalar mapped over axis 0


def check_pmap_under_disable_jit():
    with jax.disable_jit():
        out = jax.pmap(lambda x: jax.lax.psum(x, "i"), axis_name="i")(_X)
    np.testing.assert_array_equal(out, np.full(8, float(np.sum(_X))))


CHECKS = [
    check_each_failing_device_reports_its_first_failure,
    check_a_jit_program_holding_a_shard_map_runs_on_its_mesh,
    check_pmap_checks_and_keyword_arguments,
    check_pmap_under_disable_jit,
]

results, test_on_8_devices = device_tests(__file__, CHECKS)

if __name__ == "__main__":
    main(CHECKS)
