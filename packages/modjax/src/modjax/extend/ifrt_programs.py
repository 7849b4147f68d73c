"""``jax.extend.ifrt_programs``: jaxlib's IFRT program builders (``ifrt_programs``)."""

from modjax.runtime._xla import ifrt_programs

__all__ = ["ifrt_programs"]
