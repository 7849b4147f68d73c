"""modjax.scipy: SciPy-style functions on modjax arrays (the counterpart of ``jax.scipy``).

It has the submodules of ``jax.scipy`` (``sparse`` with ``sparse.linalg``'s iterative
solvers; there are no sparse array types, as in JAX).
"""

__all__ = [
    "cluster",
    "fft",
    "integrate",
    "interpolate",
    "linalg",
    "ndimage",
    "optimize",
    "signal",
    "sparse",
    "spatial",
    "special",
    "stats",
]


def __getattr__(name: str):
    # Each submodule is imported when first reached (``jax.scipy.special.erf``), as
    # JAX's are: most programs use one or two of them, if any.
    if name in __all__:
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
