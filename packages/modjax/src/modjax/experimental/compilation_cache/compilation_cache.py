"""The persistent compilation cache's folder (``jax.experimental.compilation_cache``)."""

from __future__ import annotations

from modjax.tracecore import config

__all__ = ["reset_cache", "set_cache_dir"]


def set_cache_dir(path) -> None:
    """Keep compiled programs in the folder ``path`` across processes (``set_cache_dir``).

    The same as ``config.update("jax_compilation_cache_dir", path)``.
    """
    config.update("compilation_cache_dir", None if path is None else str(path))


def reset_cache() -> None:
    """Stop using the persistent cache folder, as before ``set_cache_dir`` (``reset_cache``)."""
    config.update("compilation_cache_dir", None)
