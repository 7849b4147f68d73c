"""dot_product_attention, einsum, take_along_axis, logsumexp, threefry and the batching
of broadcasting ops compute JAX 0.10.2's programs, so JAX's bits.

Known answers: ``nn_attention_reference.json`` (``nn_attention_reference_gen.py``
run under JAX 0.10.2, on the cases of ``nn_attention_cases.py``).
"""

import pathlib
import types

import numpy as np
import pytest
from cpu_kind import load_reference
from nn_attention_cases import (
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

import modjax.numpy as jnp
from modjax import lax, nn, random
from modjax.autodiff import grad, value_and_grad
from modjax.batching import vmap
from modjax.runtime import jit
from modjax.tracecore import make_jaxpr, tree_util

REFERENCE = load_reference(pathlib.Path(__file__).parent / "nn_attention_reference.json")
# The part of the jax namespace the cases use.
JAX = types.SimpleNamespace(
    jit=jit,
    grad=grad,
    value_and_grad=value_and_grad,
    vmap=vmap,
    make_jaxpr=make_jaxpr,
    nn=nn,
    lax=lax,
    random=random,
    numpy=jnp,
    tree=types.SimpleNamespace(leaves=tree_util.tree_leaves),
)
ARGS = inputs()


def _bits(tree):
    return [
        np.asarray(leaf, np.float32).view(np.uint32).ravel().tolist()
        for leaf in tree_util.tree_leaves(tree)
    ]


@pytest.mark.parametrize("name", list(ATTENTION))
def test_attention_is_jax_bits(name):
    assert _bits(run_case(JAX, name, False, *ARGS)) == REFERENCE[name]


@pytest.mark.parametrize("name", GROUPED)
def test_grouped_query_attention_is_jax_bits(name):
    assert _bits(run_case(JAX, name, True, *ARGS)) == REFERENCE["grouped " + name]


@pytest.mark.parametrize("grouped", [False, True])
def test_attention_gradients_are_jax_bits(grouped):
    key = "grouped grad" if grouped else "grad"
    assert _bits(run_grad(JAX, grouped, *ARGS)) == REFERENCE[key]


@pytest.mark.parametrize("spec,shapes", EINSUMS, ids=[spec for spec, _ in EINSUMS])
def test_einsum_dot_generals_are_jax_ones(spec, shapes):
    # Operand order and dimension numbers decide how XLA accumulates a dot.
    assert einsum_dots(JAX, spec, shapes) == REFERENCE["einsum"][spec]


@pytest.mark.parametrize("case", TAKE_ALONG, ids=[str(case) for case in TAKE_ALONG])
def test_take_along_axis_gather_is_jax_one(case):
    # One gather whose other dimensions are batching dimensions, as JAX's.
    assert take_along_gathers(JAX, *case) == REFERENCE["take_along_axis"][TAKE_ALONG.index(case)]


def test_cross_entropy_loss_and_gradient_are_jax_bits():
    # optax's integer-label cross entropy: logsumexp minus the label's logit, averaged.
    ref = REFERENCE["cross_entropy"]
    logits = np.asarray(ref["logits"], np.uint32).view(np.float32).reshape(8, 10)
    labels = np.asarray(ref["labels"], np.int32)
    assert _bits(cross_entropy_step(JAX, logits, labels)) == ref["bits"]


def test_dropout_gradients_are_jax_bits():
    # The random bits are JAX's either way; the bias gradient's sum rounds as JAX's only
    # when threefry is lowered as JAX lowers it on CPU (a rolled loop XLA does not fuse).
    got = dropout_step(JAX, *dropout_inputs(), random.key(1))
    assert _bits(got) == REFERENCE["dropout"]


def test_vmapped_layer_loss_and_gradients_are_jax_bits():
    # JAX's batching of broadcasting ops and broadcast_in_dim (batch axis to the front).
    assert _bits(vmapped_linear_step(JAX)) == REFERENCE["vmapped_linear"]
