"""Per-example gradients with ``vmap(grad(loss))``, and DP-SGD-style clipping.

``grad`` of a loss on one example, mapped over the batch with
``vmap(..., in_axes=(None, 0, 0))`` (the parameters shared, the examples mapped),
gives every example's gradient in one compiled program. The example checks it
against a Python loop of single-example gradients, then uses the per-example
gradient norms the way differentially private SGD does: clip each example's
gradient to a norm bound, average, add Gaussian noise, and train a logistic
regression with it.

Run it with ``python examples/per_example_grads.py [--steps N]``.
"""

from __future__ import annotations

import argparse

import numpy as np

import modjax as jax
import modjax.numpy as jnp

BATCH, FEATURES = 32, 5
CLIP_NORM, NOISE_MULTIPLIER, LEARNING_RATE = 1.0, 0.5, 0.5


def predict(params, x):
    """Logistic regression: the probability of label 1."""
    return jax.nn.sigmoid(x @ params["w"] + params["b"])


def example_loss(params, x, y):
    """Binary cross-entropy of one example (``x`` a vector, ``y`` a scalar)."""
    p = predict(params, x)
    return -(y * jnp.log(p) + (1 - y) * jnp.log1p(-p))


per_example_grads = jax.jit(jax.vmap(jax.grad(example_loss), in_axes=(None, 0, 0)))


def global_norms(grads):
    """The norm of each example's whole gradient (all parameters together)."""
    squares = [jnp.sum(g.reshape(g.shape[0], -1) ** 2, axis=1) for g in jax.tree.leaves(grads)]
    return jnp.sqrt(sum(squares))


@jax.jit
def private_step(params, key, x, y):
    """One DP-SGD step: clip every example's gradient, average, add noise, descend."""
    grads = per_example_grads(params, x, y)
    norms = global_norms(grads)
    scale = jnp.minimum(1.0, CLIP_NORM / (norms + 1e-12))
    clipped = jax.tree.map(lambda g: g * scale.reshape((-1,) + (1,) * (g.ndim - 1)), grads)
    leaves, treedef = jax.tree.flatten(clipped)
    keys = jax.random.split(key, len(leaves))
    noisy = [
        (jnp.sum(g, axis=0) + NOISE_MULTIPLIER * CLIP_NORM * jax.random.normal(k, g.shape[1:]))
        / x.shape[0]
        for g, k in zip(leaves, keys, strict=True)
    ]
    update = jax.tree.unflatten(treedef, noisy)
    new_params = jax.tree.map(lambda p, u: p - LEARNING_RATE * u, params, update)
    return new_params, norms


def main(steps: int) -> None:
    data_key, w_key, train_key = jax.random.split(jax.random.key(0), 3)
    true_w = jax.random.normal(w_key, (FEATURES,))
    x = jax.random.normal(data_key, (BATCH, FEATURES))
    y = (x @ true_w > 0).astype(jnp.float32)
    params = {"w": jnp.zeros(FEATURES), "b": jnp.zeros(())}

    grads = per_example_grads(params, x, y)
    print("Per-example gradients:", {k: v.shape for k, v in grads.items()})
    one_grad = jax.jit(jax.grad(example_loss))  # one example at a time, compiled once
    loop = [one_grad(params, x[i], y[i]) for i in range(BATCH)]
    for name in ("w", "b"):
        stacked = np.stack([np.asarray(g[name]) for g in loop])
        np.testing.assert_allclose(np.asarray(grads[name]), stacked, rtol=1e-5, atol=1e-6)
    print(f"  vmap(grad) agrees with a loop of {BATCH} single-example grads")
    mean_grad = jax.grad(lambda p: jnp.mean(jax.vmap(example_loss, (None, 0, 0))(p, x, y)))(params)
    np.testing.assert_allclose(
        np.asarray(grads["w"].mean(0)), np.asarray(mean_grad["w"]), rtol=1e-5
    )
    print("  and their mean is the gradient of the mean loss")

    print(
        f"\nDP-SGD (clip norm {CLIP_NORM}, noise multiplier {NOISE_MULTIPLIER}) for {steps} steps:"
    )
    report_every = max(steps // 5, 1)
    for step in range(1, steps + 1):
        train_key, step_key = jax.random.split(train_key)
        params, norms = private_step(params, step_key, x, y)
        if step % report_every == 0 or step == steps:
            acc = jnp.mean((predict(params, x) > 0.5) == (y > 0.5))
            clipped = int(jnp.sum(norms > CLIP_NORM))
            print(
                f"  step {step:3d}  accuracy {float(acc):.3f}  "
                f"median gradient norm {float(jnp.median(norms)):.3f}  "
                f"clipped {clipped}/{BATCH}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100, help="training steps")
    main(parser.parse_args().steps)
