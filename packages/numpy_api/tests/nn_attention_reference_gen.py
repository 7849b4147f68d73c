"""Record JAX 0.10.2's bits of ``jax.nn.dot_product_attention`` and einsum's dot_generals.

Run with a JAX 0.10.2 Python from outside the repository:
    python nn_attention_reference_gen.py > nn_attention_reference.json
The cases live in ``nn_attention_cases.py`` (shared with the test).
"""

import importlib
import json
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))

# not a static import: modjax's sources and tests never import jax
jax = importlib.import_module("jax")
cases = importlib.import_module("nn_attention_cases")


def bits(tree):
    """The uint32 words of every float32 leaf, in tree order."""
    return [
        np.asarray(leaf, np.float32).view(np.uint32).ravel().tolist()
        for leaf in jax.tree.leaves(tree)
    ]


def main():
    args = cases.inputs()
    out = {"recorded_with": f"jax {jax.__version__}: nn_attention_reference_gen.py"}
    for name in cases.ATTENTION:
        out[name] = bits(cases.run_case(jax, name, False, *args))
    for name in cases.GROUPED:
        out["grouped " + name] = bits(cases.run_case(jax, name, True, *args))
    out["grad"] = bits(cases.run_grad(jax, False, *args))
    out["grouped grad"] = bits(cases.run_grad(jax, True, *args))
    out["einsum"] = {spec: cases.einsum_dots(jax, spec, shapes) for spec, shapes in cases.EINSUMS}
    out["take_along_axis"] = [cases.take_along_gathers(jax, *case) for case in cases.TAKE_ALONG]
    # Logits on which modjax's fused loss once came out 1 ulp off (its gather differed).
    rng = np.random.RandomState(5)
    logits = rng.randn(8, 10).astype(np.float32)
    labels = rng.randint(0, 10, 8).astype(np.int32)
    out["cross_entropy"] = {
        "logits": logits.view(np.uint32).ravel().tolist(),
        "labels": labels.tolist(),
        "bits": bits(cases.cross_entropy_step(jax, logits, labels)),
    }
    # Dropout's random bits come from JAX's rolled threefry loop on CPU, so XLA fuses the
    # bias gradient's reduction as it does for JAX (the bits of that sum depend on it).
    out["dropout"] = bits(cases.dropout_step(jax, *cases.dropout_inputs(), jax.random.key(1)))
    out["vmapped_linear"] = bits(cases.vmapped_linear_step(jax))
    json.dump(out, sys.stdout, separators=(",", ":"))
    print()


if __name__ == "__main__":
    main()
