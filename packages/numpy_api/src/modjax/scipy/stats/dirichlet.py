"""The Dirichlet distribution (jax.scipy.stats.dirichlet)."""

from __future__ import annotations

import modjax.numpy as jnp
from modjax.numpy._util import promote_dtypes_inexact
from modjax.scipy import special

from ._common import NEG_INF


def logpdf(x, alpha):
    """Compute the Dirichlet log density; the simplex runs along axis 0 of ``x``.

    (jax.scipy.stats.dirichlet.logpdf) ``x`` may omit the last component
    (it is then ``1 - sum``); points off the simplex (a component <= 0, or
    a sum off 1 by 1e-6 or more) give -inf.
    """
    x, alpha = (jnp.asarray(a) for a in promote_dtypes_inexact(x, alpha))
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry fewer; "
            f"got x.shape={x.shape}, alpha.shape={alpha.shape}"
        )
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    log_norm = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, alpha.shape + (1,) * (x.ndim - 1))
    out = jnp.sum(special.xlogy(alpha - 1, x), axis=0) - log_norm
    on_simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(on_simplex, out, NEG_INF)


def pdf(x, alpha):
    """Compute the Dirichlet density (jax.scipy.stats.dirichlet.pdf)."""
    return jnp.exp(logpdf(x, alpha))
