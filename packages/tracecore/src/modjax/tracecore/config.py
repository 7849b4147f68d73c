"""Global configuration options (the counterpart of ``jax.config``).

Every option is an :class:`Option` held in one open registry, ``config``.
Packages define their options at import time::

    enable_x64 = config.define_bool_option("enable_x64", False,
                                           env_var="MODJAX_ENABLE_X64")

and read them on hot paths through the ``Option`` object (``enable_x64.value``
is a plain slot read). Users change them with ``config.update("enable_x64",
True)`` (JAX's ``"jax_enable_x64"`` spelling works too) or temporarily with
``with enable_x64(True): ...``.

Values are **process-global, not thread-local**: a context manager entered in
one thread is visible in every thread until it exits and restores the previous
value. This keeps reads a single attribute access; code that needs per-thread
settings must not share one process.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

__all__ = [
    "Config",
    "Option",
    "config",
    "enable_x64",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "parse_bool",
]

# JAX spells its options "jax_<name>"; we register the bare name and strip
# this prefix on lookup so JAX programs' config calls work unchanged.
_JAX_PREFIX = "jax_"

_TRUE_STRINGS = frozenset({"1", "true", "t", "yes", "y", "on"})
_FALSE_STRINGS = frozenset({"0", "false", "f", "no", "n", "off", ""})


def parse_bool(text: str) -> bool:
    """Parse an environment-variable style truth value ("1", "true", "0", "off", ...).

    Counterpart of JAX's ``bool_env`` parsing; raise ValueError on anything else.
    """
    lowered = text.strip().lower()
    if lowered in _TRUE_STRINGS:
        return True
    if lowered in _FALSE_STRINGS:
        return False
    raise ValueError(
        f"invalid truth value {text!r}; expected one of 1/true/yes/on or 0/false/no/off"
    )


def _coerce_bool(value: Any) -> bool:
    # Accept what a user plausibly passes for a flag; reject e.g. 2 or "maybe"
    # instead of letting Python truthiness turn "false" into True.
    if isinstance(value, str):
        return parse_bool(value)
    if isinstance(value, (bool, np.bool_)) or (type(value) is int and value in (0, 1)):
        return bool(value)
    raise TypeError(f"expected a bool, got {value!r} of type {type(value).__name__}")


class Option:
    """One configuration option (counterpart of JAX's ``config.State``).

    ``option.value`` is the current value (a plain attribute: cheap to read on
    hot paths). ``option(v)`` returns a context manager (also usable as a
    decorator) that sets the value and restores the previous one on exit.
    """

    __slots__ = ("name", "value", "default", "env_var", "help", "_coerce", "_hooks")

    def __init__(
        self,
        name: str,
        default: Any,
        coerce: Callable[[Any], Any],
        env_var: str | None = None,
        help: str = "",
    ):
        self.name = name
        self.default = default
        self.env_var = env_var
        self.help = help
        self._coerce = coerce
        self._hooks: list[Callable[[Any], None]] = []
        self.value = default

    def set(self, value: Any) -> None:
        """Validate and set the value, running the change hooks if it changed."""
        value = self._coerce(value)
        if value == self.value and type(value) is type(self.value):
            return
        self.value = value
        for hook in self._hooks:
            hook(value)

    def add_hook(self, hook: Callable[[Any], None]) -> None:
        """Call ``hook(new_value)`` after every change of this option (e.g. to drop caches)."""
        self._hooks.append(hook)

    @contextlib.contextmanager
    def __call__(self, value: Any) -> Iterator[None]:
        previous = self.value
        self.set(value)
        try:
            yield
        finally:
            self.set(previous)

    def __repr__(self) -> str:
        return f"Option({self.name}={self.value!r})"


class Config:
    """The registry of options (counterpart of ``jax.config``).

    Options are read as attributes (``config.enable_x64`` or
    ``config.jax_enable_x64``) or with :meth:`read`, and changed with
    :meth:`update`.
    """

    def __init__(self) -> None:
        # Set through __dict__ so __getattr__ below never sees a half-built object.
        self.__dict__["_options"] = {}

    # -- defining ------------------------------------------------------------

    def define_option(
        self,
        name: str,
        default: Any,
        env_var: str | None = None,
        parse: Callable[[str], Any] = str,
        validator: Callable[[Any], None] | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
    ) -> Option:
        """Register a new option and return its :class:`Option` (JAX's ``config.*_state``).

        ``parse`` turns the environment variable's text into a value;
        ``validator(value)`` raises on a bad value (on update and at
        definition); ``on_update(new_value)`` runs after each change.
        """

        def coerce(value: Any) -> Any:
            if validator is not None:
                validator(value)
            return value

        return self._register(name, default, coerce, env_var, parse, help, on_update)

    def define_bool_option(
        self,
        name: str,
        default: bool,
        env_var: str | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
    ) -> Option:
        """Register a boolean option (like JAX's ``config.bool_state``).

        The environment variable accepts 1/true/yes/on and 0/false/no/off.
        """
        return self._register(
            name, bool(default), _coerce_bool, env_var, parse_bool, help, on_update
        )

    def define_enum_option(
        self,
        name: str,
        default: str,
        choices: tuple[str, ...] | list[str],
        env_var: str | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
    ) -> Option:
        """Register an option whose value is one of ``choices`` (JAX's ``config.enum_state``)."""
        allowed = tuple(choices)

        def coerce(value: Any) -> str:
            if value not in allowed:
                raise ValueError(f"option {name!r} must be one of {list(allowed)}, got {value!r}")
            return value

        return self._register(name, default, coerce, env_var, str, help, on_update)

    def _register(self, name, default, coerce, env_var, parse, help, on_update) -> Option:
        if name in self._options:
            raise ValueError(f"config option {name!r} is already defined")
        option = Option(name, coerce(default), coerce, env_var, help)
        # The environment wins over the default, read once at definition time.
        if env_var is not None and env_var in os.environ:
            try:
                option.value = coerce(parse(os.environ[env_var]))
            except (TypeError, ValueError) as err:
                raise ValueError(
                    f"invalid value for environment variable {env_var}: {err}"
                ) from None
        if on_update is not None:
            option.add_hook(on_update)
        self._options[name] = option
        return option

    # -- reading and writing -------------------------------------------------

    def option(self, name: str) -> Option:
        """Return the :class:`Option` called ``name`` (a ``jax_`` prefix is accepted)."""
        options = self._options
        if name in options:
            return options[name]
        if name.startswith(_JAX_PREFIX) and name[len(_JAX_PREFIX) :] in options:
            return options[name[len(_JAX_PREFIX) :]]
        raise AttributeError(f"Unrecognized config option: {name}")

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` to ``value`` (counterpart of ``jax.config.update``)."""
        self.option(name).set(value)

    def read(self, name: str) -> Any:
        """Return the current value of option ``name`` (counterpart of ``jax.config.read``)."""
        return self.option(name).value

    def names(self) -> list[str]:
        """Return the names of all defined options, sorted."""
        return sorted(self._options)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for option names.
        if name.startswith("__"):
            raise AttributeError(name)
        return self.option(name).value

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"use config.update({name!r}, value) to change an option")

    def __dir__(self) -> list[str]:
        return [*super().__dir__(), *self._options]


config = Config()

enable_x64 = config.define_bool_option(
    "enable_x64",
    False,
    env_var="MODJAX_ENABLE_X64",
    help="Enable 64-bit types (int64, float64, complex128); off, they canonicalize to 32 bits.",
)

numpy_rank_promotion = config.define_enum_option(
    "numpy_rank_promotion",
    "allow",
    ("allow", "warn", "raise"),
    env_var="MODJAX_NUMPY_RANK_PROMOTION",
    help="What to do when an operation broadcasts arrays of different ranks.",
)

numpy_dtype_promotion = config.define_enum_option(
    "numpy_dtype_promotion",
    "standard",
    ("standard", "strict"),
    env_var="MODJAX_NUMPY_DTYPE_PROMOTION",
    help="'standard' follows the promotion lattice; 'strict' only lets weak types promote.",
)
