"""jax.export.SymbolicScope: symbolic dimensions of one scope go together, as in JAX 0.10.2.

Messages are JAX 0.10.2's (checked with ``/work/jaxref/bin/python``).
"""

from __future__ import annotations

import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax import export


def _sum_both(x, y):
    return x.sum() + y.sum()


def test_dimensions_of_one_scope_compare_and_export_together():
    scope = export.SymbolicScope()
    (a,) = export.symbolic_shape("a", scope=scope)
    (b,) = export.symbolic_shape("b", scope=scope)
    assert a.scope is scope and a >= 1
    exported = export.export(jax.jit(_sum_both))(
        jax.ShapeDtypeStruct((a,), jnp.float32), jax.ShapeDtypeStruct((b,), jnp.float32)
    )
    assert [str(av.shape[0]) for av in exported.in_avals] == ["a", "b"]
    back = export.deserialize(exported.serialize())
    assert float(back.call(jnp.ones(3), jnp.ones(5))) == 8.0
    specs = export.symbolic_args_specs((jnp.ones(3), jnp.ones(4)), ("a", "b"))
    assert specs[0].shape[0].scope is specs[1].shape[0].scope  # one scope for all


def test_mixing_scopes_raises_jax_value_error():
    (a,) = export.symbolic_shape("a")
    (c,) = export.symbolic_shape("c")  # each call without a scope makes its own
    with pytest.raises(
        ValueError, match="Invalid mixing of symbolic scopes when comparing 'a' >= 'c'"
    ):
        a >= c  # noqa: B015
    with pytest.raises(
        ValueError, match="Invalid mixing of symbolic scopes when exporting _sum_both"
    ):
        export.export(jax.jit(_sum_both))(
            jax.ShapeDtypeStruct((a,), jnp.float32), jax.ShapeDtypeStruct((c,), jnp.float32)
        )


def test_scope_and_constraints_errors():
    scope = export.SymbolicScope()
    with pytest.raises(ValueError, match="Cannot specify both a `scope` and `constraints`"):
        export.symbolic_shape("a", scope=scope, constraints=["a >= 2"])
    with pytest.raises(NotImplementedError, match="constraints are not supported yet"):
        export.SymbolicScope(["a >= 4"])
    with pytest.raises(ValueError, match="sequence of strings"):
        export.SymbolicScope("a >= 4")
    assert "created at" in repr(scope)
