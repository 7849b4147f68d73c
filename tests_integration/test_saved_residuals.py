"""print_saved_residuals, Recompute/Saveable/Offloadable: as JAX 0.10.2 prints and decides.

The expected lines are JAX 0.10.2's output for the same functions (checked with
``/work/jaxref/bin/python``), whose locations read ``file:line:column (function)``;
modjax's read ``file:line (function)``.
"""

from __future__ import annotations

import inspect

import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import ad_checkpoint as ac
from modjax.autodiff import saved_residuals

HERE = __file__


def _layer(x, y):
    z = jnp.sin(x) * y
    w = ac.checkpoint_name(jnp.cos(z), "w")
    return (w @ y.T).sum()


def _at(offset: int, fn) -> str:
    """``file:line (fn)`` of the line ``offset`` lines below ``fn``'s ``def``."""
    return f"{HERE}:{inspect.getsourcelines(fn)[1] + offset} ({fn.__name__})"


def _printed(capsys, f, *args, **kwargs) -> list[str]:
    ac.print_saved_residuals(f, *args, **kwargs)
    return capsys.readouterr().out.splitlines()


def test_print_saved_residuals_names_each_residual_as_jax_does(capsys):
    x = y = jnp.ones((2, 3))
    assert _printed(capsys, _layer, x, y) == [
        "f32[2,3] from the argument y",
        f"f32[2,3] output of sin from {_at(1, _layer)}",
        f"f32[2,3] output of cos from {_at(1, _layer)}",
        f"f32[2,3] output of sin from {_at(2, _layer)}",
        f"f32[2,3] named 'w' from {_at(2, _layer)}",
        f"f32[3,2] output of transpose from {_at(3, _layer)}",
    ]
    assert _printed(capsys, jax.checkpoint(_layer), x, y) == [
        "f32[2,3] from the argument x",
        "f32[2,3] from the argument y",
    ]
    policy = jax.checkpoint_policies.save_only_these_names("w")
    assert _printed(capsys, jax.checkpoint(_layer, policy=policy), x, y) == [
        "f32[2,3] from the argument x",
        "f32[2,3] from the argument y",
        f"f32[2,3] named 'w' from {_at(2, _layer)}",
    ]


def _tree_fn(x, y, *, z):
    return (x["a"] * y * z * jnp.sin(x["b"][0])).sum()


def test_residuals_of_pytree_and_keyword_arguments_and_of_a_jitted_function(capsys):
    args = ({"a": 1.0, "b": [2.0, 3.0]}, 4.0)
    arguments = [
        "f32[] from the argument x['a']",
        "f32[] from the argument y",
        "f32[] from the argument z",
    ]
    assert _printed(capsys, _tree_fn, *args, z=5.0) == arguments + [
        f"f32[] output of mul from {_at(1, _tree_fn)}",
        f"f32[] output of mul from {_at(1, _tree_fn)}",
        f"f32[] output of sin from {_at(1, _tree_fn)}",
        f"f32[] output of cos from {_at(1, _tree_fn)}",
    ]
    jitted = _printed(capsys, jax.jit(_tree_fn), *args, z=5.0)
    assert jitted[:3] == arguments and len(jitted) == 7
    assert all(
        line.startswith("f32[] output of jitted function '_tree_fn' from") for line in jitted[3:]
    )


def test_policies_may_answer_recompute_saveable_or_offloadable():
    x = y = jnp.ones((2, 3))
    grad = jax.grad(_layer)(x, y)

    def residuals(answer):
        policy = lambda *_, **__: answer  # noqa: E731
        f = jax.checkpoint(_layer, policy=policy)
        assert jnp.allclose(jax.grad(f)(x, y), grad)
        return len(saved_residuals(f, x, y))

    assert residuals(ac.Recompute) == residuals(False) == 2
    assert residuals(ac.Saveable) == residuals(True) == 6
    # One memory per device here: an offloadable residual is saved where it is.
    assert residuals(ac.Offloadable("device", "pinned_host")) == 6
    assert ac.Offloadable("device", "pinned_host").dst == "pinned_host"
    assert repr(ac.Recompute) == "Recompute" and bool(ac.Recompute)
    with pytest.raises(TypeError, match="instead of an instantiated `Offloadable"):
        residuals(ac.Offloadable)
    with pytest.raises(TypeError, match="should be a bool or `ad_checkpoint.Recompute`"):
        residuals("save")
