"""Record JAX 0.10.2's bits of ``jax.nn.dot_product_attention`` and einsum's dot_generals.

Run with a JAX 0.10.2 Python from outside the repository:
    python nn_attention_reference_gen.py > nn_attention_reference.json
The cases live in ``nn_attention_cases.py`` (shared with the test).
"""

import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))

import jax  # noqa: E402
from nn_attention_cases import (  # noqa: E402
    ATTENTION,
    EINSUMS,
    GROUPED,
    TAKE_ALONG,
    cross_entropy_step,
    dropout_inputs,
    dropout_step,
    einsum_dots,
    inputs,
    run_case,
    run_grad,
    take_along_gathers,
    vmapped_linear_step,
)


def bits(tree):
    """The uint32 words of every float32 leaf, in tree order."""
    return [
        np.asarray(leaf, np.float32).view(np.uint32).ravel().tolist()
        for leaf in jax.tree.leaves(tree)
    ]


def main():
    args = inputs()
    out = {"recorded_with": f"jax {jax.__version__}: nn_attention_reference_gen.py"}
    for name in ATTENTION:
        out[name] = bits(run_case(jax, name, False, *args))
    for name in GROUPED:
        out["grouped " + name] = bits(run_case(jax, name, True, *args))
    out["grad"] = bits(run_grad(jax, False, *args))
    out["grouped grad"] = bits(run_grad(jax, True, *args))
    out["einsum"] = {spec: einsum_dots(jax, spec, shapes) for spec, shapes in EINSUMS}
    out["take_along_axis"] = [take_along_gathers(jax, *case) for case in TAKE_ALONG]
    # Logits on which modjax's fused loss once came out 1 ulp off (its gather differed).
    rng = np.random.RandomState(5)
    logits = rng.randn(8, 10).astype(np.float32)
    labels = rng.randint(0, 10, 8).astype(np.int32)
    out["cross_entropy"] = {
        "logits": logits.view(np.uint32).ravel().tolist(),
        "labels": labels.tolist(),
        "bits": bits(cross_entropy_step(jax, logits, labels)),
    }
    # Dropout's random bits come from JAX's rolled threefry loop on CPU, so XLA fuses the
    # bias gradient's reduction as it does for JAX (the bits of that sum depend on it).
    out["dropout"] = bits(dropout_step(jax, *dropout_inputs(), jax.random.key(1)))
    out["vmapped_linear"] = bits(vmapped_linear_step(jax))
    json.dump(out, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
