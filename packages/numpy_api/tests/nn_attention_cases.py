"""Cases shared by ``nn_attention_reference_gen.py`` (run under JAX) and its test.

Each attention case maps a name to ``make(nn, jnp) -> f`` with ``f(q, k, v, bias, mask)``
one jitted program; the einsum cases are subscripts with operand shapes; the
take_along_axis cases are array and index shapes with an axis. Inputs come from a
seeded numpy generator, so both sides compute on the same bits.
"""

import numpy as np

B, T, S, N, K, H = 2, 4, 5, 4, 2, 8


def inputs():
    """Query, key/value with N heads, key/value with K < N heads, bias and mask."""
    rng = np.random.RandomState(0)
    q = rng.randn(B, T, N, H).astype(np.float32)
    kv = [rng.randn(B, S, N, H).astype(np.float32) for _ in range(2)]
    gqa = [rng.randn(B, S, K, H).astype(np.float32) for _ in range(2)]
    bias = rng.randn(B, N, T, S).astype(np.float32)
    mask = rng.rand(B, N, T, S) > 0.3
    return q, kv, gqa, bias, mask


LENGTHS = (np.array([2, 4], np.int32), np.array([3, 5], np.int32))

ATTENTION = {
    "basic": lambda nn, jnp: lambda q, k, v, b, m: nn.dot_product_attention(q, k, v),
    "bias_mask": lambda nn, jnp: lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, b, m),
    "causal": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, is_causal=True)
    ),
    "scale_bias_shared_head": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, b[:, :1], scale=0.5)
    ),
    "seq_lengths": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(
            q, k, v, query_seq_lengths=LENGTHS[0], key_value_seq_lengths=LENGTHS[1]
        )
    ),
    "window": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, local_window_size=(1, 2))
    ),
    "window_causal_int": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, local_window_size=1, is_causal=True)
    ),
    "unbatched": lambda nn, jnp: lambda q, k, v, b, m: nn.dot_product_attention(q[0], k[0], v[0]),
    "bfloat16": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(
            q.astype(jnp.bfloat16), k.astype(jnp.bfloat16), v.astype(jnp.bfloat16), is_causal=True
        ).astype(jnp.float32)
    ),
    "residual": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(
            q, k, v, b, is_causal=True, return_residual=True
        )
    ),
    "mask_all_false": lambda nn, jnp: (
        lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, mask=m & False)
    ),
}

ATTENTION["causal_bias"] = lambda nn, jnp: (
    lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, b, is_causal=True)
)

# These cases also run with the grouped key/value (K < N heads).
GROUPED = ("basic", "causal_bias")


def run_case(jax, name, grouped, q, kv, gqa, bias, mask):
    """The case's result: one jitted call (a pair: the output and the residual)."""
    f = jax.jit(ATTENTION[name](jax.nn, jax.numpy))
    k, v = gqa if grouped else kv
    return f(q, k, v, bias, mask)


def run_grad(jax, grouped, q, kv, gqa, bias, mask):
    """Gradients of a causal attention with bias with respect to q, k, v and the bias."""

    def loss(q, k, v, b):
        out = jax.nn.dot_product_attention(q, k, v, b, is_causal=True)
        return (out * jax.numpy.arange(out.shape[-1], dtype=out.dtype)).sum()

    k, v = gqa if grouped else kv
    return jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))(q, k, v, bias)


EINSUMS = [
    ("ij,jk->ik", [(3, 4), (4, 5)]),
    ("ij,jk->ki", [(3, 4), (4, 5)]),
    ("ij,kj->ik", [(3, 4), (5, 4)]),
    ("bij,bjk->bki", [(2, 3, 4), (2, 4, 5)]),
    ("bij,jk->bik", [(2, 3, 4), (4, 5)]),
    ("i,j->ji", [(3,), (4,)]),
    ("ij,ij->j", [(3, 4), (3, 4)]),
    ("bthd,bshd->bhts", [(2, 3, 4, 5), (2, 6, 4, 5)]),
    ("bhts,bshd->bthd", [(2, 4, 3, 6), (2, 6, 4, 5)]),
    ("ikj,jlk->il", [(2, 4, 3), (3, 5, 4)]),
    ("ij,jk,kl->il", [(3, 4), (4, 5), (5, 6)]),
    ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]),
    ("bn,nm,bm->b", [(2, 3), (3, 4), (2, 4)]),
]


def einsum_dots(jax, spec, shapes):
    """Each dot_general of ``jnp.einsum(spec)``: its operands in order (``in<i>`` for an
    input, else the primitive that made it) and its dimension numbers as plain lists."""
    rng = np.random.RandomState(1)
    ops = [rng.randn(*shape).astype(np.float32) for shape in shapes]
    jaxpr = jax.make_jaxpr(lambda *a: jax.numpy.einsum(spec, *a))(*ops).jaxpr
    origin = {id(v): f"in{i}" for i, v in enumerate(jaxpr.invars)}
    dots = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
            operands = [origin.get(id(v), "literal") for v in eqn.invars]
            dots.append([operands, [[int(d) for d in dims] for dims in (lc, rc, lb, rb)]])
        for outvar in eqn.outvars:
            origin[id(outvar)] = eqn.primitive.name
    return dots


TAKE_ALONG = [
    ((8, 10), (8, 1), 1),
    ((8, 10), (8, 1), -1),
    ((2, 3, 4), (2, 1, 4), 2),
    ((2, 3, 4), (1, 5, 4), 1),
    ((2, 1, 4), (2, 3, 4), 0),
    ((5,), (3,), 0),
]


def take_along_gathers(jax, arr_shape, idx_shape, axis):
    """The gather of ``jnp.take_along_axis``: its dimension numbers and slice sizes."""
    arr = np.zeros(arr_shape, np.float32)
    idx = np.zeros(idx_shape, np.int32)
    jaxpr = jax.make_jaxpr(lambda a, i: jax.numpy.take_along_axis(a, i, axis=axis))(arr, idx)
    eqns = list(jaxpr.jaxpr.eqns)
    while eqns:  # into nested jits (JAX's take_along_axis is one)
        eqn = eqns.pop(0)
        if eqn.primitive.name == "gather":
            d = eqn.params["dimension_numbers"]
            fields = ("offset_dims", "collapsed_slice_dims", "start_index_map")
            fields += ("operand_batching_dims", "start_indices_batching_dims")
            dims = [[int(x) for x in getattr(d, f)] for f in fields]
            return dims + [[int(x) for x in eqn.params["slice_sizes"]]]
        eqns += [e for sub in eqn.params.values() if hasattr(sub, "eqns") for e in sub.eqns]
        eqns += [e for sub in eqn.params.values() if hasattr(sub, "jaxpr") for e in sub.jaxpr.eqns]
    return None


def cross_entropy_step(jax, logits, labels):
    """optax's softmax cross entropy with integer labels, its mean and gradient, jitted."""
    jnp = jax.numpy

    def loss(p, y):
        picked = jnp.take_along_axis(p, jnp.expand_dims(y, 1), axis=1).take(0, axis=1)
        return (jax.nn.logsumexp(p, axis=1) - picked).mean()

    return jax.jit(jax.value_and_grad(loss))(logits, labels)


def dropout_step(jax, kernel, bias, x, w, key):
    """Gradients of a strided convolution with bias followed by dropout (flax's form)."""
    jnp, lax = jax.numpy, jax.lax

    def loss(kernel, bias):
        h = lax.conv_general_dilated(
            x, kernel, (2, 2), ((0, 1), (0, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC")
        )
        h = h + bias.reshape(1, 1, 1, -1)
        keep = jax.random.bernoulli(key, 0.8, h.shape)
        return (lax.select(keep, h / 0.8, jnp.zeros_like(h)) * w).sum()

    return jax.jit(jax.grad(loss, argnums=(0, 1)))(kernel, bias)


def dropout_inputs():
    rng = np.random.RandomState(0)
    x = rng.rand(4, 8, 8, 3).astype(np.float32)
    kernel = rng.randn(3, 3, 3, 8).astype(np.float32) * 0.3
    bias = rng.randn(8).astype(np.float32)
    w = rng.randn(4, 4, 4, 8).astype(np.float32)
    return kernel, bias, x, w


def vmapped_linear_step(jax):
    """Loss and gradients of a per-example linear layer under vmap (equinox's style)."""
    jnp = jax.numpy
    rng = np.random.RandomState(0)
    weight = rng.randn(2, 16).astype(np.float32)
    bias = rng.randn(2).astype(np.float32)
    x = rng.randn(8, 16).astype(np.float32)
    y = rng.randn(8, 2).astype(np.float32)

    def loss(weight, bias, x, y):
        # The batched add of an unbatched bias moves the batch axis to the front, as JAX's
        # vmap does: the bias gradient then sums over the leading axis, as JAX's.
        out = jax.vmap(lambda xi: weight @ xi + bias)(x)
        return jnp.mean((out - y) ** 2)

    return jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(weight, bias, x, y)
