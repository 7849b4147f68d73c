"""``lower_with_sharding_in_types``: an op's value constrained to its aval's explicit sharding."""

from __future__ import annotations

__all__ = ["lower_with_sharding_in_types"]


def lower_with_sharding_in_types(ctx, op, aval):
    """Return ``op`` constrained to ``aval``'s sharding type (``jax.extend.mlir``'s function).

    A value whose type names no explicit mesh axis needs no constraint and is returned
    as is; modjax's lowering rules type explicit shardings themselves, so constraining
    one here is not supported yet (NotImplementedError).
    """
    sharding = getattr(aval, "type_sharding", None)
    spec = getattr(sharding, "spec", None)
    if not spec or all(entry is None for entry in spec):
        return op
    raise NotImplementedError(
        "jax.extend.mlir.lower_with_sharding_in_types of a value with an explicit sharding "
        f"type ({aval.str_short()}): modjax's lowering rules constrain such values themselves"
    )
