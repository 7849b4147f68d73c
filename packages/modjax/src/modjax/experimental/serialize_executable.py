"""``jax.experimental.serialize_executable``: compiled programs as bytes and back.

``serialize(compiled) -> (payload, in_tree, out_tree)`` and
``deserialize_and_load(payload, in_tree, out_tree, backend=None,
execution_devices=None) -> Compiled`` (modjax.runtime.serialize). Loading
unpickles the payload: never load bytes you do not trust.
"""

from modjax.runtime.serialize import deserialize_and_load, serialize

__all__ = ["deserialize_and_load", "serialize"]
