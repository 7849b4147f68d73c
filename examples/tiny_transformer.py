"""A tiny transformer language model, its layers stacked and scanned.

A two-layer, two-head decoder (token and position embeddings, pre-layernorm
causal self-attention and MLP blocks) learns a toy language: each sequence is 8
random tokens followed by the same 8 tokens again, so the second half is
predictable only by attending 8 positions back. The layers' parameters are
stacked along a leading axis and applied with ``lax.scan`` (one traced layer, not
one per layer), and the layer body is wrapped in ``jax.checkpoint``, so the
backward pass recomputes each layer's activations instead of storing them.
The optimizer is ``example_libraries.optimizers.adam``.

Run it with ``python examples/tiny_transformer.py [--steps N]``.
"""

from __future__ import annotations

import argparse

import modjax as jax
import modjax.numpy as jnp
from modjax.example_libraries import optimizers

VOCAB, HALF, WIDTH, HEADS, LAYERS, BATCH = 16, 8, 32, 2, 2, 64
SEQ = 2 * HALF


def init_params(key):
    """Embeddings, ``LAYERS`` blocks stacked along axis 0, and the final layernorm."""
    keys = jax.random.split(key, 6)

    def dense(k, *shape):
        return jax.random.normal(k, shape) / jnp.sqrt(shape[-2])

    return {
        "tokens": jax.random.normal(keys[0], (VOCAB, WIDTH)) * 0.1,
        "positions": jax.random.normal(keys[1], (SEQ, WIDTH)) * 0.1,
        "layers": {
            "ln1": jnp.ones((LAYERS, WIDTH)),
            "qkv": dense(keys[2], LAYERS, WIDTH, 3 * WIDTH),
            "out": dense(keys[3], LAYERS, WIDTH, WIDTH),
            "ln2": jnp.ones((LAYERS, WIDTH)),
            "up": dense(keys[4], LAYERS, WIDTH, 4 * WIDTH),
            "down": dense(keys[5], LAYERS, 4 * WIDTH, WIDTH),
        },
        "ln_final": jnp.ones(WIDTH),
    }


def layernorm(x, scale):
    """Normalize the last axis to zero mean and unit variance, then scale."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.var(x, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def attention(x, qkv, out):
    """Causal multi-head self-attention over the sequence axis of ``x`` [batch, seq, width]."""
    batch, seq, _ = x.shape
    q, k, v = jnp.split(x @ qkv, 3, axis=-1)
    heads = lambda t: t.reshape(batch, seq, HEADS, WIDTH // HEADS)  # noqa: E731
    scores = jnp.einsum("bqhd,bkhd->bhqk", heads(q), heads(k)) / jnp.sqrt(WIDTH // HEADS)
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
    mixed = jnp.einsum("bhqk,bkhd->bqhd", weights, heads(v)).reshape(batch, seq, WIDTH)
    return mixed @ out


@jax.checkpoint
def block(x, layer):
    """One pre-layernorm transformer block (recomputed in the backward pass)."""
    x = x + attention(layernorm(x, layer["ln1"]), layer["qkv"], layer["out"])
    hidden = jax.nn.gelu(layernorm(x, layer["ln2"]) @ layer["up"])
    return x + hidden @ layer["down"]


def logits(params, tokens):
    """Next-token logits for every position of ``tokens`` [batch, seq]."""
    x = params["tokens"][tokens] + params["positions"][: tokens.shape[1]]
    x, _ = jax.lax.scan(lambda x, layer: (block(x, layer), None), x, params["layers"])
    return layernorm(x, params["ln_final"]) @ params["tokens"].T  # tied embeddings


def loss(params, tokens):
    """Mean cross-entropy of each next token (every position predicts the following one)."""
    log_probs = jax.nn.log_softmax(logits(params, tokens[:, :-1]))
    targets = tokens[:, 1:]
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], axis=-1))


@jax.jit
def copy_accuracy(params, tokens):
    """How often the model predicts the repeated half (the only predictable part)."""
    predicted = jnp.argmax(logits(params, tokens[:, :-1]), axis=-1)[:, HALF - 1 :]
    return jnp.mean(predicted == tokens[:, HALF:])


@jax.jit
def batch_of_sequences(key):
    """``BATCH`` sequences: ``HALF`` random tokens, then the same tokens again."""
    first = jax.random.randint(key, (BATCH, HALF), 0, VOCAB)
    return jnp.concatenate([first, first], axis=1)


def main(steps: int) -> None:
    init_key, data_key, test_key = jax.random.split(jax.random.key(0), 3)
    opt_init, opt_update, get_params = optimizers.adam(3e-3)
    opt_state = opt_init(init_params(init_key))
    test_tokens = batch_of_sequences(test_key)

    @jax.jit
    def train_step(i, opt_state, tokens):
        value, grads = jax.value_and_grad(loss)(get_params(opt_state), tokens)
        return opt_update(i, grads, opt_state), value

    print(f"A {LAYERS}-layer transformer learning to repeat {HALF} random tokens:")
    print("  the layer stack is one scan of a checkpointed block:")
    jaxpr = str(jax.make_jaxpr(loss)(get_params(opt_state), test_tokens))
    scans, remats = jaxpr.count("scan["), jaxpr.count("remat")
    print(f"  {scans} scan, {remats} remat (checkpoint) in the loss's jaxpr")
    report_every = max(steps // 5, 1)
    for step in range(steps):
        data_key, key = jax.random.split(data_key)
        opt_state, value = train_step(step, opt_state, batch_of_sequences(key))
        if (step + 1) % report_every == 0 or step + 1 == steps:
            accuracy = copy_accuracy(get_params(opt_state), test_tokens)
            print(
                f"  step {step + 1:4d}  loss {float(value):.4f}  "
                f"accuracy on the repeated half {float(accuracy):.3f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="training steps")
    main(parser.parse_args().steps)
