"""Gaussian kernel density estimation (jax.scipy.stats.gaussian_kde).

The estimator is a pytree (its arrays are the leaves), so it passes through
jit and vmap. Evaluation whitens data and points by the Cholesky factor of
the inverse kernel covariance, then sums (or log-sum-exps) the kernels.
"""

from __future__ import annotations

import math
from functools import partial

import numpy as np

import modjax.numpy as jnp
from modjax import random
from modjax.lax._common import kind
from modjax.numpy._util import aval, check_arraylike, promote_dtypes_inexact
from modjax.runtime import jit
from modjax.scipy import linalg, special
from modjax.tracecore.tree_util import register_pytree_node_class


@partial(jit, static_argnums=0)  # one program, eager too, as JAX's kernel evaluation
def _log_kernel_sums(in_log, data, weights, points, precision):
    """Evaluate the weighted Gaussian kernel sum (or its log) at each column of ``points``."""
    data, weights, points, precision = promote_dtypes_inexact(data, weights, points, precision)
    d = data.shape[0]
    if points.shape[0] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    data_w = jnp.dot(data.T, whitening)  # (n, d)
    points_w = jnp.dot(points.T, whitening)  # (m, d)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * math.log(2 * math.pi)
    sq = jnp.sum(jnp.square(points_w[:, None, :] - data_w[None, :, :]), axis=-1)  # (m, n)
    arg = log_norm - 0.5 * sq
    if in_log:
        return special.logsumexp(arg + jnp.log(weights)[None, :], axis=1)
    return jnp.sum(weights[None, :] * jnp.exp(arg), axis=1)


def _convolve(chol, norm, data, weights, mean):
    # integral of the KDE against a Gaussian at ``mean`` whose summed covariance is ``chol``
    diff = data - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    return norm * jnp.sum(jnp.exp(-0.5 * jnp.sum(diff * alpha, axis=0)) * weights)


@register_pytree_node_class
class gaussian_kde:  # noqa: N801 (JAX's name)
    """A Gaussian kernel density estimate of ``dataset`` (jax.scipy.stats.gaussian_kde).

    ``bw_method`` is "scott" (default), "silverman", a scalar factor or a
    callable of the estimator; ``weights`` weight the points.
    """

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if kind(dataset.dtype) == "c":
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = (jnp.asarray(v) for v in promote_dtypes_inexact(dataset, weights))
            weights = jnp.atleast_1d(weights)
            weights = weights / jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            (dataset,) = (jnp.asarray(v) for v in promote_dtypes_inexact(dataset))
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._set("dataset", dataset)
        self._set("weights", weights)
        neff = self._set("neff", 1 / jnp.sum(weights**2))
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = jnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = jnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif np.ndim(bw_method) == 0 and not isinstance(bw_method, str) and not callable(bw_method):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
        data_inv_cov = jnp.linalg.inv(data_cov)
        self._set("covariance", data_cov * factor**2)
        self._set("inv_cov", data_inv_cov / factor**2)

    def _set(self, name, value):
        object.__setattr__(self, name, value)
        return value

    def tree_flatten(self):
        """Flatten into the arrays (neff, dataset, weights, covariance, inv_cov)."""
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        """Rebuild an estimator from ``tree_flatten``'s arrays."""
        del aux_data
        kde = cls.__new__(cls)
        for name, value in zip(
            ("neff", "dataset", "weights", "covariance", "inv_cov"), children, strict=True
        ):
            kde._set(name, value)
        return kde

    @property
    def d(self):
        """Return the number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """Return the number of data points."""
        return self.dataset.shape[1]

    def _reshape_points(self, points):
        if kind(aval(points).dtype) == "c":
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def evaluate(self, points):
        """Evaluate the density at ``points`` (``(d, m)``) (gaussian_kde.evaluate)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        return _log_kernel_sums(False, self.dataset, self.weights, points, self.inv_cov)

    def __call__(self, points):
        """Evaluate the density at ``points`` (gaussian_kde.__call__)."""
        return self.evaluate(points)

    def pdf(self, x):
        """Evaluate the density at ``x`` (gaussian_kde.pdf)."""
        return self.evaluate(x)

    def logpdf(self, x):
        """Evaluate the log density at ``x``, by log-sum-exp (gaussian_kde.logpdf)."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        return _log_kernel_sums(True, self.dataset, self.weights, x, self.inv_cov)

    def integrate_gaussian(self, mean, cov):
        """Integrate the density times N(mean, cov) (gaussian_kde.integrate_gaussian)."""
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        return _convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """Integrate a 1-D density over [low, high] (gaussian_kde.integrate_box_1d)."""
        return _integrate_box_1d(self, low, high)

    def _integrate_box_1d(self, low, high):
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other):
        """Integrate the product of two density estimates (gaussian_kde.integrate_kde)."""
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = 1.0 / (math.sqrt(2 * math.pi) ** self.d * jnp.prod(jnp.diag(chol[0])))
        small, large = (self, other) if self.n < other.n else (other, self)
        total = 0.0
        for j in range(small.n):  # small.n is static; each term is one kernel convolution
            term = _convolve(chol, norm, large.dataset, large.weights, small.dataset[:, j])
            total = total + term * small.weights[j]
        return total

    def resample(self, key, shape=()):
        """Draw samples of ``shape`` from the estimate: ``(d,) + shape`` (gaussian_kde.resample)."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(
            eps_key,
            jnp.zeros(self.d, self.covariance.dtype),
            self.covariance,
            shape=shape,
            dtype=self.dataset.dtype,
        ).T
        return self.dataset[:, ind] + eps

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented, as in JAX: use ``integrate_box_1d`` (gaussian_kde.integrate_box)."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not implemented, as in JAX (gaussian_kde.set_bandwidth)."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")


# one program, eager too, as JAX's jitted method (the estimator is a pytree)
_integrate_box_1d = jit(gaussian_kde._integrate_box_1d)
