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


def _identity(value: Any) -> Any:
    return value


def _coerce_bool(value: Any) -> bool:
    # Accept what a user plausibly passes for a flag; reject e.g. 2 or "maybe"
    # instead of letting Python truthiness turn "false" into True.
    if isinstance(value, str):
        return parse_bool(value)
    if isinstance(value, (bool, np.bool_)) or (type(value) is int and value in (0, 1)):
        return bool(value)
    raise TypeError(f"expected a bool, got {value!r} of type {type(value).__name__}")


# The default of ``option()``: no new value given.
_NO_VALUE: Any = object()


class Option:
    """One configuration option (counterpart of JAX's ``config.State``).

    ``option.value`` is the current value (a plain attribute: cheap to read on
    hot paths). ``option(v)`` returns a context manager (also usable as a
    decorator) that sets the value and restores the previous one on exit.
    """

    __slots__ = (
        "name",
        "value",
        "default",
        "env_var",
        "help",
        "trace_context",
        "parse",
        "_coerce",
        "_hooks",
    )

    def __init__(
        self,
        name: str,
        default: Any,
        coerce: Callable[[Any], Any],
        env_var: str | None = None,
        help: str = "",
        trace_context: bool = False,
        parse: Callable[[str], Any] = str,
    ):
        self.name = name
        self.default = default
        self.parse = parse
        self.env_var = env_var
        self.help = help
        self.trace_context = trace_context
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
    def __call__(self, new_val: Any = _NO_VALUE) -> Iterator[None]:
        """Set the option for the ``with`` block (a boolean one to True when not given)."""
        if new_val is _NO_VALUE:
            if self._coerce is not _coerce_bool:
                raise TypeError(
                    f"Context manager for {self.name} config option requires an argument "
                    "representing the new value for the config option."
                )
            new_val = True
        previous = self.value
        self.set(new_val)
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
        self.__dict__["_context_options"] = []
        self.__dict__["_context_hooks"] = []
        self.__dict__["use_absl"] = False
        self.__dict__["_absl_parsed"] = False

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
        trace_context: bool = False,
    ) -> Option:
        """Register a new option and return its :class:`Option` (JAX's ``config.*_state``).

        ``parse`` turns the environment variable's text into a value;
        ``validator(value)`` raises on a bad value (on update and at
        definition); ``on_update(new_value)`` runs after each change.
        ``trace_context``: the option changes what tracing a function produces
        (or where it runs), so its value is part of jit's cache keys
        (:meth:`trace_context`), as JAX's ``include_in_jit_key`` options are.
        """

        def coerce(value: Any) -> Any:
            if validator is not None:
                validator(value)
            return value

        return self._register(name, default, coerce, env_var, parse, help, on_update, trace_context)

    def define_bool_option(
        self,
        name: str,
        default: bool,
        env_var: str | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
        trace_context: bool = False,
    ) -> Option:
        """Register a boolean option (like JAX's ``config.bool_state``).

        The environment variable accepts 1/true/yes/on and 0/false/no/off.
        """
        return self._register(
            name, bool(default), _coerce_bool, env_var, parse_bool, help, on_update, trace_context
        )

    def define_enum_option(
        self,
        name: str,
        default: str,
        choices: tuple[str, ...] | list[str],
        env_var: str | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
        trace_context: bool = False,
        optional: bool = False,
    ) -> Option:
        """Register an option whose value is one of ``choices`` (JAX's ``config.enum_state``).

        ``optional``: None is a value too (JAX's ``optional_enum_state``).
        """
        allowed = tuple(choices)

        def coerce(value: Any) -> str | None:
            if value is None and optional:
                return None
            if value not in allowed:
                none = "None or " if optional else ""
                raise ValueError(
                    f"option {name!r}: new enum value must be {none}in {list(allowed)}, "
                    f"got {value!r} of type {type(value)}."
                )
            return value

        return self._register(name, default, coerce, env_var, str, help, on_update, trace_context)

    def define_typed_option(
        self,
        name: str,
        default: Any,
        kind: type,
        env_var: str | None = None,
        help: str = "",
        on_update: Callable[[Any], None] | None = None,
        optional: bool = False,
    ) -> Option:
        """Register an int, float or str option (JAX's ``int_state``, ``float_state``, ...).

        A value of another type is a ValueError, as in JAX (an int is accepted for a float);
        ``optional``: None is a value too (JAX's ``optional_string_state``).
        """

        def coerce(value: Any) -> Any:
            if value is None and optional:
                return None
            if kind is float and type(value) is int:
                return float(value)
            ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
            if not ok:
                raise ValueError(
                    f"option {name!r}: new {kind.__name__} config value must be None or of "
                    f"type {kind.__name__}, got {value!r} of type {type(value)}"
                )
            return value

        return self._register(name, default, coerce, env_var, kind, help, on_update, False)

    def _register(
        self, name, default, coerce, env_var, parse, help, on_update, trace_context=False
    ) -> Option:
        if name in self._options:
            raise ValueError(f"config option {name!r} is already defined")
        option = Option(name, coerce(default), coerce, env_var, help, trace_context, parse)
        # The environment wins over the default, read once at definition time.
        found = _environment_value(name, env_var)
        if found is not None:
            variable, text = found
            try:
                option.value = coerce(parse(text))
            except (TypeError, ValueError) as err:
                raise ValueError(
                    f"invalid value for environment variable {variable}: {err}"
                ) from None
        if on_update is not None:
            option.add_hook(on_update)
        if trace_context:
            self._context_options.append(option)
            option.add_hook(self._context_changed)
        self._options[name] = option
        return option

    # -- the trace context ----------------------------------------------------

    def trace_context(self) -> tuple:
        """Return the values of the options that change what jit traces or where it runs.

        jit keys its traces and executables on this tuple, so switching such an
        option for a block (``with default_matmul_precision("highest"):``) never
        reuses a program traced under another value, and switching back reuses
        the first one (JAX's trace context).
        """
        return tuple(option.value for option in self._context_options)

    def make_user_context(self, default_value: Any = None, *, name: str | None = None) -> Option:
        """Return a new context whose value is part of jit's keys (jax.make_user_context).

        ``with ctx(v):`` sets it for a block; a function jitted under one value is
        traced again under another (and reused when the value comes back). The
        value must be hashable. The context is not a named option of ``config``;
        ``name`` is how :meth:`trace_context_names` shows it.
        """
        name = name or f"user_context_{len(self._context_options)}"
        option = Option(name, default_value, _identity, None, "a user context", True)
        hash(default_value)  # it becomes part of cache keys
        self._context_options.append(option)
        option.add_hook(self._context_changed)
        return option

    def trace_context_names(self) -> tuple[str, ...]:
        """Return the names of the options :meth:`trace_context` reads, in its order."""
        return tuple(option.name for option in self._context_options)

    def on_trace_context_change(self, hook: Callable[[], None]) -> None:
        """Call ``hook()`` after any trace-context option changes (fast paths forget entries)."""
        self._context_hooks.append(hook)

    def _context_changed(self, _value: Any) -> None:
        for hook in self._context_hooks:
            hook()

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

    @property
    def x64_enabled(self) -> bool:
        """Tell whether 64-bit types are enabled (jax.config.x64_enabled)."""
        return self._options["enable_x64"].value

    @property
    def values(self) -> dict[str, Any]:
        """Return every option's current value by its JAX name (jax.config.values)."""
        return {_jax_name(name): option.value for name, option in self._options.items()}

    # -- absl flags ------------------------------------------------------------

    def config_with_absl(self) -> None:
        """Define an absl flag for every option, read once absl parses the command line.

        Counterpart of ``jax.config.config_with_absl`` (call it before ``app.run(main)``):
        ``--jax_enable_x64`` and the like set the options. Needs absl-py, which modjax
        does not depend on.
        """
        app, absl_flags = _absl()
        self.__dict__["use_absl"] = True
        for name, option in self._options.items():
            text = option.help or name
            if option.parse is parse_bool:
                absl_flags.DEFINE_bool(_jax_name(name), option.value, text)
            else:
                value = None if option.value is None else str(option.value)
                absl_flags.DEFINE_string(_jax_name(name), value, text)
        app.call_after_init(lambda: self.complete_absl_config(absl_flags))

    def complete_absl_config(self, absl_flags) -> None:
        """Set the options whose absl flags were given (jax.config.complete_absl_config)."""
        for name, option in self._options.items():
            try:
                flag = absl_flags.FLAGS[_jax_name(name)]
            except KeyError:
                continue  # an option defined after config_with_absl
            if flag.present:
                value = flag.value
                option.set(option.parse(value) if isinstance(value, str) else value)

    def parse_flags_with_absl(self) -> None:
        """Set options from the ``--jax...`` arguments of ``sys.argv``, once, through absl.

        Counterpart of ``jax.config.parse_flags_with_absl`` (test suites call it at import);
        the arguments after ``--`` are not read.
        """
        if self._absl_parsed:
            return
        import itertools  # noqa: PLC0415
        import sys  # noqa: PLC0415

        _, absl_flags = _absl()
        before_dashes = itertools.takewhile(lambda arg: arg != "--", sys.argv)
        self.config_with_absl()
        absl_flags.FLAGS(
            ["", *(a for a in before_dashes if a.startswith("--jax"))], known_only=True
        )
        self.complete_absl_config(absl_flags)
        self.__dict__["_absl_parsed"] = True

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


def _absl():
    """absl's ``app`` and ``flags`` modules: the caller's, modjax does not depend on absl-py."""
    try:
        from absl import app, flags  # noqa: PLC0415
    except ImportError as err:
        raise ImportError("config's absl methods need absl-py (pip install absl-py)") from err
    return app, flags


def _environment_value(name: str, env_var: str | None) -> tuple[str, str] | None:
    """Return ``(variable, text)`` of the environment variable that sets option ``name``.

    modjax's own spelling (``env_var``, ``MODJAX_ENABLE_X64``) comes first; then the
    variable JAX reads, the option's JAX name in capitals (``JAX_ENABLE_X64``), so that
    programs and CI set up for JAX configure modjax unchanged.
    """
    for variable in (env_var, _jax_name(name).upper()):
        if variable is not None and variable in os.environ:
            return variable, os.environ[variable]
    return None


def _jax_name(name: str) -> str:
    """Return the name JAX gives option ``name`` (``enable_x64``: ``jax_enable_x64``)."""
    return name if name.startswith("jax") else _JAX_PREFIX + name


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
    trace_context=True,
)

numpy_dtype_promotion = config.define_enum_option(
    "numpy_dtype_promotion",
    "standard",
    ("standard", "strict"),
    env_var="MODJAX_NUMPY_DTYPE_PROMOTION",
    help="'standard' follows the promotion lattice; 'strict' only lets weak types promote.",
    trace_context=True,
)
