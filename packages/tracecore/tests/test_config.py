"""Tests of modjax.tracecore.config: the option registry, update, contexts and env vars."""

import os
import subprocess
import sys
import threading
import types

import numpy as np
import pytest

from modjax.tracecore.config import (
    Config,
    config,
    enable_x64,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    parse_bool,
)


@pytest.fixture
def cfg():
    """A private registry, so tests can define options freely."""
    return Config()


def test_builtin_options_and_defaults():
    assert {"enable_x64", "numpy_rank_promotion", "numpy_dtype_promotion"} <= set(config.names())
    assert numpy_rank_promotion.default == "allow"
    assert numpy_dtype_promotion.default == "standard"
    assert enable_x64.default is False
    assert enable_x64.env_var == "MODJAX_ENABLE_X64"


def test_update_and_read_with_both_spellings():
    before = enable_x64.value
    try:
        config.update("enable_x64", True)
        assert enable_x64.value is True
        assert config.enable_x64 is True
        assert config.jax_enable_x64 is True
        assert config.read("jax_enable_x64") is True
        config.update("jax_enable_x64", False)
        assert config.read("enable_x64") is False
        assert config.enable_x64 is False
    finally:
        config.update("enable_x64", before)


def test_unknown_option_names_the_option():
    with pytest.raises(AttributeError, match="jax_no_such_option"):
        config.update("jax_no_such_option", 1)
    with pytest.raises(AttributeError, match="no_such_option"):
        config.read("no_such_option")
    with pytest.raises(AttributeError, match="no_such_option"):
        _ = config.no_such_option
    assert not hasattr(config, "no_such_option")


def test_config_attributes_are_read_only():
    with pytest.raises(AttributeError, match="update"):
        config.enable_x64 = True


def test_context_manager_sets_and_restores():
    assert enable_x64.value is False
    with enable_x64(True):
        assert enable_x64.value is True
        assert config.jax_enable_x64 is True
        with enable_x64(False):
            assert enable_x64.value is False
        assert enable_x64.value is True
    assert enable_x64.value is False


def test_context_manager_restores_after_exception():
    with pytest.raises(RuntimeError), enable_x64(True):
        raise RuntimeError("boom")
    assert enable_x64.value is False


def test_context_manager_as_decorator():
    @numpy_rank_promotion("raise")
    def inner():
        return numpy_rank_promotion.value

    assert inner() == "raise"
    assert inner() == "raise"  # reusable: a fresh context per call
    assert numpy_rank_promotion.value == "allow"


def test_values_are_global_not_thread_local():
    seen = []
    with enable_x64(True):
        thread = threading.Thread(target=lambda: seen.append(enable_x64.value))
        thread.start()
        thread.join()
    assert seen == [True]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), (False, False), (1, True), (0, False), (np.bool_(True), True)]
    + [("true", True), ("0", False), ("off", False)],
)
def test_bool_option_accepts_flags(cfg, value, expected):
    opt = cfg.define_bool_option("flag", not expected)
    opt.set(value)
    assert opt.value is expected


@pytest.mark.parametrize("value", [2, "maybe", None, 1.5])
def test_bool_option_rejects_non_flags(cfg, value):
    opt = cfg.define_bool_option("flag", False)
    with pytest.raises((TypeError, ValueError)):
        opt.set(value)
    assert opt.value is False


def test_enum_option_validates():
    with pytest.raises(ValueError, match="bogus"):
        config.update("jax_numpy_rank_promotion", "bogus")
    with pytest.raises(ValueError, match="strict"):
        config.update("numpy_dtype_promotion", "loose")
    assert numpy_rank_promotion.value == "allow"
    with numpy_dtype_promotion("strict"):
        assert config.numpy_dtype_promotion == "strict"
    assert config.numpy_dtype_promotion == "standard"


def test_define_option_open_registry(cfg):
    cache_dir = cfg.define_option("compilation_cache_dir", None, help="where compiled programs go")
    assert cfg.compilation_cache_dir is None
    cfg.update("jax_compilation_cache_dir", "/tmp/x")
    assert cache_dir.value == "/tmp/x"
    assert "compilation_cache_dir" in cfg.names()
    assert cfg.option("compilation_cache_dir") is cache_dir


def test_duplicate_definition_raises(cfg):
    cfg.define_bool_option("log_compiles", False)
    with pytest.raises(ValueError, match="log_compiles"):
        cfg.define_bool_option("log_compiles", True)


def test_validator_runs_on_default_and_update(cfg):
    def positive(v):
        if v <= 0:
            raise ValueError(f"must be positive, got {v}")

    opt = cfg.define_option("num_cpu_devices", 1, parse=int, validator=positive)
    opt.set(4)
    with pytest.raises(ValueError, match="positive"):
        cfg.update("num_cpu_devices", 0)
    assert opt.value == 4
    with pytest.raises(ValueError, match="positive"):
        cfg.define_option("bad_default", -1, validator=positive)


def test_on_update_hook_runs_on_changes_only(cfg):
    calls = []
    opt = cfg.define_bool_option("flag", False, on_update=calls.append)
    cfg.update("flag", False)  # no change: no call
    cfg.update("flag", True)
    with opt(False):
        pass
    assert calls == [True, False, True]
    opt.add_hook(lambda v: calls.append(("second", v)))
    opt.set(False)
    assert calls[-2:] == [False, ("second", False)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("1", True), ("true", True), ("TRUE", True), ("yes", True), ("on", True), ("0", False)]
    + [("false", False), ("no", False), ("off", False), ("", False)],
)
def test_env_var_parsing(cfg, monkeypatch, text, expected):
    monkeypatch.setenv("MODJAX_TEST_FLAG", text)
    opt = cfg.define_bool_option("flag", not expected, env_var="MODJAX_TEST_FLAG")
    assert opt.value is expected
    assert opt.default is (not expected)  # the env var changes the value, not the default


def test_env_var_invalid_value_names_the_variable(cfg, monkeypatch):
    monkeypatch.setenv("MODJAX_TEST_FLAG", "sometimes")
    with pytest.raises(ValueError, match="MODJAX_TEST_FLAG"):
        cfg.define_bool_option("flag", False, env_var="MODJAX_TEST_FLAG")
    monkeypatch.setenv("MODJAX_TEST_MODE", "loose")
    with pytest.raises(ValueError, match="MODJAX_TEST_MODE"):
        cfg.define_enum_option("mode", "a", ("a", "b"), env_var="MODJAX_TEST_MODE")


def test_env_var_with_custom_parse(cfg, monkeypatch):
    monkeypatch.setenv("MODJAX_TEST_COUNT", "8")
    opt = cfg.define_option("count", 1, env_var="MODJAX_TEST_COUNT", parse=int)
    assert opt.value == 8


def test_parse_bool_rejects_garbage():
    with pytest.raises(ValueError, match="perhaps"):
        parse_bool("perhaps")


def test_env_var_falls_back_to_the_variable_jax_reads(cfg, monkeypatch):
    monkeypatch.setenv("JAX_TEST_FLAG", "1")
    assert cfg.define_bool_option("test_flag", False, env_var="MODJAX_TEST_FLAG").value is True
    monkeypatch.setenv("JAX_TEST_COUNT", "7")
    assert cfg.define_option("jax_test_count", 1, parse=int).value == 7
    monkeypatch.setenv("JAX_TEST_MODE", "loose")
    with pytest.raises(ValueError, match="JAX_TEST_MODE"):
        cfg.define_enum_option("test_mode", "a", ("a", "b"), env_var="MODJAX_TEST_MODE")


def test_modjax_env_var_wins_over_jax_one(cfg, monkeypatch):
    monkeypatch.setenv("JAX_TEST_FLAG", "1")
    monkeypatch.setenv("MODJAX_TEST_FLAG", "0")
    assert cfg.define_bool_option("test_flag", True, env_var="MODJAX_TEST_FLAG").value is False


@pytest.mark.parametrize("variable", ["MODJAX_ENABLE_X64", "JAX_ENABLE_X64"])
@pytest.mark.parametrize(("env_value", "expected"), [("1", "True"), ("false", "False")])
def test_enable_x64_env_var_in_a_fresh_process(variable, env_value, expected):
    env = {k: v for k, v in os.environ.items() if not k.endswith("JAX_ENABLE_X64")}
    env.update({variable: env_value, "PYTHONPATH": os.pathsep.join(sys.path)})
    code = (
        "from modjax.tracecore.config import config, enable_x64\n"
        "from modjax.tracecore import dtypes\n"
        "print(enable_x64.value, config.jax_enable_x64, dtypes.default_int_dtype())"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    width = "64" if expected == "True" else "32"
    assert out.stdout.split() == [expected, expected, f"int{width}"]


class _FakeFlag:
    def __init__(self, default):
        self.value = default
        self.present = False


class _FakeAbslFlags(types.ModuleType):
    """The part of ``absl.flags`` that config's absl methods use (absl is not a dependency)."""

    def __init__(self):
        super().__init__("absl.flags")
        self.FLAGS = self
        self.defined = {}

    def DEFINE_bool(self, name, default, help_text):  # noqa: N802 - absl's name
        assert name not in self.defined, f"flag {name} defined twice"
        self.defined[name] = _FakeFlag(default)

    DEFINE_string = DEFINE_bool  # noqa: N815

    def __getitem__(self, name):
        return self.defined[name]

    def __call__(self, argv, known_only=False):
        for arg in argv[1:]:
            name, _, text = arg[2:].partition("=")
            if name in self.defined:
                flag = self.defined[name]
                flag.present = True
                flag.value = text if text else True


@pytest.fixture
def fake_absl(monkeypatch):
    flags = _FakeAbslFlags()
    after_init = []
    app = types.ModuleType("absl.app")
    app.call_after_init = after_init.append
    absl = types.ModuleType("absl")
    absl.flags, absl.app = flags, app
    for name, module in (("absl", absl), ("absl.flags", flags), ("absl.app", app)):
        monkeypatch.setitem(sys.modules, name, module)
    return flags, after_init


def test_parse_flags_with_absl_reads_the_jax_arguments_before_dashes(cfg, fake_absl, monkeypatch):
    flags, _ = fake_absl
    x64 = cfg.define_bool_option("enable_x64", False)
    rank = cfg.define_enum_option("numpy_rank_promotion", "allow", ("allow", "warn", "raise"))
    size = cfg.define_typed_option("cache_size", 3, int)
    argv = [
        "prog",
        "--jax_enable_x64",
        "--jax_cache_size=7",
        "--other",
        "--",
        "--jax_numpy_rank_promotion=raise",
    ]
    monkeypatch.setattr(sys, "argv", argv)
    assert not cfg.use_absl
    cfg.parse_flags_with_absl()
    assert (x64.value, rank.value, size.value, cfg.use_absl) == (True, "allow", 7, True)
    assert cfg.x64_enabled and set(flags.defined) == {
        "jax_enable_x64",
        "jax_numpy_rank_promotion",
        "jax_cache_size",
    }
    cfg.parse_flags_with_absl()  # once only, as JAX's: the flags are not defined again
    assert cfg.values == {
        "jax_enable_x64": True,
        "jax_numpy_rank_promotion": "allow",
        "jax_cache_size": 7,
    }


def test_config_with_absl_sets_the_options_after_absl_parses(cfg, fake_absl):
    flags, after_init = fake_absl
    rank = cfg.define_enum_option("numpy_rank_promotion", "allow", ("allow", "warn", "raise"))
    cfg.config_with_absl()
    flags(["prog", "--jax_numpy_rank_promotion=warn"])
    assert rank.value == "allow"
    (complete,) = after_init
    complete()
    assert rank.value == "warn"
