"""Regenerate scipy_stats_reference.json: JAX 0.10.2's jax.scipy.stats values on fixed grids.

Run with a Python that has JAX (modjax never imports it):
    python scipy_stats_reference_gen.py
The JSON stores this script's text under "recorded_with". Each case is
(module.function, argument arrays); the grids include points outside the
support and invalid parameters, so the recorded -inf / 0 / NaN are JAX's.
"""

import json
import pathlib

import numpy as np

X = [-3.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 2.5, 7.0]
Q = [-0.1, 0.0, 1e-6, 0.05, 0.3, 0.5, 0.8, 0.999, 1.0, 1.1]
K = [-1.0, 0.0, 1.0, 2.0, 2.5, 3.0, 5.0, 8.0, 10.0, 12.0]


def cases():
    loc_scale = {"x": X, "loc": 0.5, "scale": 1.5}
    out = []
    for mod in [
        "norm",
        "cauchy",
        "logistic",
        "laplace",
        "expon",
        "uniform",
        "gumbel_l",
        "gumbel_r",
    ]:
        for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
            out.append((f"{mod}.{fn}", [X, 0.5, 1.5]))
        for fn in ["ppf", "isf"]:
            out.append((f"{mod}.{fn}", [Q, 0.5, 1.5]))
    out.append(("gumbel_r.logpdf", [X, 0.0, -1.0]))
    del loc_scale
    for fn in ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"]:
        out.append(
            (f"gamma.{fn}", [X, [0.5, 1.0, 2.5, 4.0, 0.7, 1.2, 3.0, 2.0, 9.0, 1.5], 0.0, 1.2])
        )
        out.append(
            (f"chi2.{fn}", [X, [1.0, 2.0, 3.0, 5.0, 0.5, 4.0, 1.5, 2.5, 6.0, 3.5], -0.5, 1.0])
        )
        out.append(
            (f"beta.{fn}", [X, [0.5, 2.0, 1.0, 3.0, 2.0, 0.7, -1.0, 2.0, 1.5, 2.0], 2.5, -1.0, 4.0])
        )
        out.append((f"pareto.{fn}", [X, 2.5, -1.5, 1.0]))
        out.append(
            (
                f"truncnorm.{fn}",
                [X, -1.0, [2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, -2.0, 9.0, 9.0], 0.0, 1.0],
            )
        )
        out.append((f"truncnorm.{fn}", [X, 3.0, 6.0, -2.0, 0.5]))
    out.append(("pareto.ppf", [Q, 2.5, -1.5, 1.0]))
    for fn in ["logpdf", "pdf"]:
        out.append((f"t.{fn}", [X, [1.0, 2.0, 5.0, 30.0, 0.5, 3.0, 1.0, 2.0, 4.0, 1.5], 0.3, 2.0]))
        out.append((f"vonmises.{fn}", [X, [0.5, 1.0, 4.0, 0.0, -1.0, 2.0, 30.0, 0.1, 1.0, 3.0]]))
        out.append((f"wrapcauchy.{fn}", [X, [0.5, 0.1, 0.9, 0.0, 1.0, 0.3, 0.5, 0.7, 0.2, 0.5]]))
        out.append((f"gennorm.{fn}", [X, [0.5, 1.0, 2.0, 3.0, 1.5, 8.0, 1.0, 2.0, 0.8, 4.0]]))
    out.append(("gennorm.cdf", [X, [0.5, 1.0, 2.0, 3.0, 1.5, 8.0, 1.0, 2.0, 0.8, 4.0]]))
    for fn in ["logpmf", "pmf"]:
        out.append((f"bernoulli.{fn}", [K, 0.3, 0.0]))
        out.append(
            (f"binom.{fn}", [K, 10.0, [0.3, 0.5, 0.0, 1.0, 0.2, 0.9, 0.5, 0.5, 1.0, 0.1], 0.0])
        )
        out.append(
            (
                f"betabinom.{fn}",
                [K, 10.0, [0.5, 2.0, 1.0, -1.0, 3.0, 0.7, 2.0, 5.0, 1.0, 0.3], 1.5, 0.0],
            )
        )
        out.append((f"geom.{fn}", [K, 0.35, 0.0]))
        out.append((f"nbinom.{fn}", [K, 3.0, 0.4, 0.0]))
        out.append((f"poisson.{fn}", [K, 3.5, 0.0]))
    out.append(("bernoulli.cdf", [K, [0.3, 0.3, 0.3, -0.1, 0.3, 1.2, 0.3, 0.3, 0.3, 0.3]]))
    out.append(("bernoulli.ppf", [Q, 0.3]))
    out.append(("poisson.cdf", [K, 3.5, 1.0]))
    out.append(("poisson.entropy", [[0.0, 0.5, 3.0, 9.9, 10.0, 50.0, 99.0, 100.0, 500.0, 1e4]]))
    return out


def record():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    import jax.scipy.stats as stats

    table = []
    for name, args in cases():
        mod, fn = name.split(".")
        if not hasattr(getattr(stats, mod), fn):  # the grid loops ask for more than some have
            continue
        value = getattr(getattr(stats, mod), fn)(*(jnp.asarray(a, jnp.float64) for a in args))
        table.append({"name": name, "args": args, "expected": np.asarray(value).tolist()})
    x = np.array([[0.1, 0.5, 1.2], [0.3, 0.4, 0.6]])
    mvn_cov = np.array([[1.0, 0.3, 0.1], [0.3, 2.0, 0.2], [0.1, 0.2, 1.5]])
    mean = np.array([0.2, -0.1, 0.4])
    extra = {
        "mvn": stats.multivariate_normal.logpdf(x, mean, mvn_cov),
        "mvn_iso": stats.multivariate_normal.logpdf(x, mean, 1.7),
        "dirichlet": stats.dirichlet.logpdf(
            np.array([[0.2, 0.5], [0.3, 0.1], [0.5, 0.4]]), np.array([1.5, 2.0, 0.7])
        ),
        "dirichlet_short": stats.dirichlet.logpdf(np.array([0.2, 0.3]), np.array([1.5, 2.0, 0.7])),
        "multinomial": stats.multinomial.logpmf(np.array([1, 2, 3]), 6, np.array([0.2, 0.3, 0.5])),
        "multinomial_bad": stats.multinomial.logpmf(
            np.array([1, 2, 3]), 5, np.array([0.2, 0.3, 0.5])
        ),
        "rankdata": {
            m: stats.rankdata(np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0]), m)
            for m in ["average", "min", "max", "dense", "ordinal"]
        },
        "rankdata_axis1": stats.rankdata(np.array([[3, 1, 3], [2, 2, 1]]), axis=1),
        "mode": list(stats.mode(np.array([[1, 2, 1, 3], [3, 1, 3, 3], [1, 2, 2, 3]]))),
        "mode_axis1": list(
            stats.mode(np.array([[1, 2, 1, 3], [3, 1, 3, 3], [1, 2, 2, 3]]), axis=1)
        ),
        "sem": stats.sem(np.array([[2.0, 4, 1], [1, 3, 4], [4, 2, 3.5]])),
        "sem_omit": stats.sem(np.array([2.0, np.nan, 1, 5]), nan_policy="omit"),
    }
    data = np.array([[0.1, 0.9, -0.4, 1.3, 0.2, 2.0, -1.1], [0.5, -0.2, 0.3, 1.0, 0.0, 0.8, -0.6]])
    kde = stats.gaussian_kde(data, weights=np.array([1.0, 2, 1, 1, 3, 1, 1]))
    pts = np.array([[0.0, 0.5, 1.5], [0.1, -0.3, 0.7]])
    kde1 = stats.gaussian_kde(data[0], bw_method="silverman")
    extra.update(
        kde_evaluate=kde.evaluate(pts),
        kde_logpdf=kde.logpdf(pts),
        kde_covariance=kde.covariance,
        kde_gauss=kde.integrate_gaussian(np.array([0.2, 0.1]), np.array([[1.0, 0.2], [0.2, 0.5]])),
        kde_kde=kde.integrate_kde(stats.gaussian_kde(data[:, :4])),
        kde1_box=kde1.integrate_box_1d(-0.5, 1.0),
        kde1_eval=kde1(np.array([0.0, 1.0, 3.0])),
        kde_scalar_bw=stats.gaussian_kde(data, bw_method=0.4).evaluate(pts),
    )
    as_list = jax.tree_util.tree_map(lambda v: np.asarray(v).tolist(), extra)
    return {
        "recorded_with": pathlib.Path(__file__).read_text(),
        "cases": table,
        "extra": as_list,
        "kde_data": data.tolist(),
        "kde_points": pts.tolist(),
    }


if __name__ == "__main__":
    path = pathlib.Path(__file__).with_name("scipy_stats_reference.json")
    path.write_text(json.dumps(record(), indent=0) + "\n")
    print(path, path.stat().st_size)
