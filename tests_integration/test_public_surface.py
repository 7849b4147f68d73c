"""modjax has every public name of JAX 0.10.2's modules that it mirrors.

``jax_public_names.json`` lists, per module, the public names of JAX 0.10.2 (recorded
from a real JAX with the script kept inside the file). Each must exist on the modjax
module of the same path, unless a table below says why not: names another open
issue is adding (``OTHER_ISSUES``), or names of issue #14 still to do (``NOT_YET``).
The names JAX still serves with a DeprecationWarning (``deprecated`` in the record:
its modules' ``_deprecations`` entries that have a value) must exist too.
Each public function must also take every call JAX's signature takes: its keyword
names, as many positional arguments, no required argument JAX lacks
(``SIGNATURES_DIFFER`` lists the exceptions, each with its reason).
"""

from __future__ import annotations

import importlib
import inspect
import json
import warnings
from pathlib import Path

import pytest

RECORDED = json.loads((Path(__file__).parent / "jax_public_names.json").read_text())
MODULES = RECORDED["modules"]
DEPRECATED = RECORDED["deprecated"]
SIGNATURES = RECORDED["signatures"]


def _table(*groups: tuple[str, str, str]) -> dict[str, dict[str, str]]:
    """(module, space-separated names, reason) groups -> {module: {name: reason}}."""
    table: dict[str, dict[str, str]] = {}
    for module, names, reason in groups:
        table.setdefault(module, {}).update(dict.fromkeys(names.split(), reason))
    return table


# Names that other open issues are adding right now, each named with its issue.
SHARDING = "#13 sharding"
OTHER_ISSUES = _table()

# Issue #14's names not done yet, with what is missing.
NOT_YET = _table(
    (
        "jax.lax",
        "eq_to_p le_to_p lt_to_p",
        "JAX-internal comparisons of symbolic dimension sizes (shape polymorphism), which "
        "modjax does not have",
    ),
    (
        "jax.lax",
        "select_and_scatter_p",
        "JAX-internal: no lax function binds it; modjax has select_and_scatter_add_p, the "
        "max/min-pool gradient JAX uses",
    ),
    (
        "jax.experimental.multihost_utils",
        "global_array_to_host_local_array_impl global_array_to_host_local_array_p "
        "gtl_abstract_eval host_local_array_to_global_array_impl "
        "host_local_array_to_global_array_p ltg_abstract_eval ltg_batcher",
        "JAX-internal primitives (and their rules) of its host-local/global conversions; "
        "modjax converts with make_array_from_process_local_data, without a primitive",
    ),
    (
        "jax.experimental.multihost_utils",
        "live_devices",
        "JAX's fault tolerance (a block over the devices still alive): modjax has none",
    ),
    (
        "jax.extend.core.primitives",
        "empty2_p select_and_scatter_p",
        "no such primitive in modjax (jnp.empty fills zeros with broadcast_in_dim; "
        "select_and_scatter_p: see jax.lax above)",
    ),
    (
        "jax.custom_derivatives",
        "remat_opt_p",
        "JAX-internal primitive of its custom_vjp-under-remat optimization; modjax's "
        "checkpoint of custom_vjp needs none",
    ),
)


def _modjax_module(jax_name: str):
    try:
        return importlib.import_module("modjax" + jax_name[len("jax") :])
    except ModuleNotFoundError:
        return None


def missing_names(jax_name: str, names=None) -> list[str]:
    """The names of ``jax_name`` (by default its public ones) that the modjax module lacks."""
    module = _modjax_module(jax_name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return [
            n
            for n in (MODULES[jax_name] if names is None else names)
            if module is None or not hasattr(module, n)
        ]


@pytest.mark.parametrize("jax_name", sorted(MODULES))
def test_modjax_has_every_public_name_of_the_jax_module(jax_name):
    excused = {**OTHER_ISSUES.get(jax_name, {}), **NOT_YET.get(jax_name, {})}
    unexplained = [n for n in missing_names(jax_name) if n not in excused]
    assert not unexplained, f"modjax{jax_name[3:]} lacks {unexplained}"


@pytest.mark.parametrize("jax_name", sorted(DEPRECATED))
def test_modjax_serves_every_name_jax_serves_deprecated(jax_name):
    excused = NOT_YET.get(jax_name, {})
    unexplained = [n for n in missing_names(jax_name, DEPRECATED[jax_name]) if n not in excused]
    assert not unexplained, f"modjax{jax_name[3:]} lacks the deprecated {unexplained}"


@pytest.mark.parametrize(
    ("jax_name", "name"),
    [("jax.core", "find_top_trace"), ("jax.interpreters.pxla", "thread_resources")],
)
def test_deprecated_names_warn_as_in_jax(jax_name, name):
    module = _modjax_module(jax_name)
    with pytest.warns(DeprecationWarning, match=f"{jax_name}.{name} is deprecated"):
        getattr(module, name)


def test_the_tables_name_only_recorded_names():
    for table in (OTHER_ISSUES, NOT_YET):
        for jax_name, names in table.items():
            recorded = set(MODULES.get(jax_name, ())) | set(DEPRECATED.get(jax_name, ()))
            assert set(names) <= recorded, (jax_name, set(names) - recorded)


def test_unknown_config_options_raise_naming_them():
    import modjax

    with pytest.raises(AttributeError, match="jax_no_such_option"):
        modjax.config.update("jax_no_such_option", True)


# Public functions whose parameters differ from JAX 0.10.2's, with the reason.
SIGNATURES_DIFFER = _table(
    (
        "jax.api_util",
        "flatten_fun flatten_fun_nokwargs",
        "JAX-internal: they wrap a linear_util.WrappedFun with its generator arguments; "
        "modjax's take (f, in_tree) of tracecore's WrappedFun",
    ),
    (
        "jax.export",
        "export",
        "_override_lowering_rules is JAX-private (lowering-rule overrides for export tests)",
    ),
    (
        "jax.interpreters.mlir",
        "aval_to_ir_type aval_to_ir_types dense_int_elements i32_attr i64_attr ir_attribute "
        "ir_constant",
        "lowering helpers: the same calls by position (aval_to_ir_type takes JAX's ctx "
        "first, or the aval alone); the parameter names and ir_constant's const_lowering/aval "
        "keywords of JAX's internals differ",
    ),
    (
        "jax.lax",
        "random_gamma_grad",
        "JAX's takes *args and binds them as (a, x); modjax names the two it takes",
    ),
)

_KIND_MARKS = (
    ("**", inspect.Parameter.VAR_KEYWORD),
    ("*", inspect.Parameter.VAR_POSITIONAL),
    ("/", inspect.Parameter.POSITIONAL_ONLY),
    (":", inspect.Parameter.KEYWORD_ONLY),
    ("", inspect.Parameter.POSITIONAL_OR_KEYWORD),
)
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
_BY_NAME = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
_VARIADIC = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def _recorded_parameters(text: str) -> list[tuple[inspect._ParameterKind, str, bool]]:
    """(kind, name, has a default) per word of a recorded signature ("/x", ":y=", "*args")."""
    out = []
    for word in text.split():
        name, has_default = word.rstrip("="), word.endswith("=")
        mark, kind = next((m, k) for m, k in _KIND_MARKS if name.startswith(m))
        out.append((kind, name[len(mark) :], has_default))
    return out


def signature_mismatches(recorded: str, signature: inspect.Signature) -> list[str]:
    """The calls JAX's parameters (``recorded``) take that ``signature`` refuses."""
    jax_params = _recorded_parameters(recorded)
    ours = list(signature.parameters.values())
    kinds = {p.kind for p in ours}
    by_name = {p.name: p for p in ours}
    problems = []
    takes_any_keyword = inspect.Parameter.VAR_KEYWORD in kinds
    for kind, name, _ in jax_params:
        if kind not in _BY_NAME or takes_any_keyword:
            continue
        if name not in by_name or by_name[name].kind not in _BY_NAME:
            problems.append(f"no keyword {name!r}")
    jax_positional = [not default for kind, _, default in jax_params if kind in _POSITIONAL]
    if inspect.Parameter.VAR_POSITIONAL not in kinds:
        if any(kind is inspect.Parameter.VAR_POSITIONAL for kind, _, _ in jax_params):
            problems.append("no *args")
        elif sum(p.kind in _POSITIONAL for p in ours) < len(jax_positional):
            problems.append(f"fewer than {len(jax_positional)} positional parameters")
    jax_required = {name for kind, name, default in jax_params if not default}
    for i, p in enumerate(ours):
        if p.default is not p.empty or p.kind in _VARIADIC or p.name in jax_required:
            continue
        if p.kind in _POSITIONAL and i < len(jax_positional) and jax_positional[i]:
            continue  # required at the same position, under another name
        problems.append(f"requires {p.name!r}")
    return problems


def _signature_cases():
    for jax_name, functions in sorted(SIGNATURES.items()):
        for name, recorded in sorted(functions.items()):
            yield jax_name, name, recorded


@pytest.mark.parametrize("jax_name", sorted(SIGNATURES))
def test_public_functions_take_every_call_jax_takes(jax_name):
    from modjax._unsupported import Unsupported

    module = _modjax_module(jax_name)
    excused = SIGNATURES_DIFFER.get(jax_name, {})
    unexplained = {}
    for name, recorded in sorted(SIGNATURES[jax_name].items()):
        ours = getattr(module, name, None)
        if ours is None or isinstance(ours, Unsupported) or name in excused:
            continue
        try:
            signature = inspect.signature(ours)
        except (TypeError, ValueError):  # not a function here (a type alias, a builtin)
            continue
        problems = signature_mismatches(recorded, signature)
        if problems:
            unexplained[name] = problems
    assert not unexplained, f"modjax{jax_name[3:]}: {unexplained}"


def test_signature_check_finds_what_it_should():
    assert signature_mismatches("x y :out_dtype=", inspect.signature(lambda x, y: 0)) == [
        "no keyword 'out_dtype'"
    ]
    assert signature_mismatches("/fun= :a=", inspect.signature(lambda fun, *, a=1: 0)) == [
        "requires 'fun'"
    ]
    assert signature_mismatches("x1 x2", inspect.signature(lambda a, b, /: 0)) == [
        "no keyword 'x1'",
        "no keyword 'x2'",
    ]
    assert signature_mismatches("*args", inspect.signature(lambda a: 0)) == [
        "no *args",
        "requires 'a'",
    ]
    assert signature_mismatches("x y= z=", inspect.signature(lambda v, **kw: 0)) == [
        "fewer than 3 positional parameters"
    ]
    assert signature_mismatches("x :y=", inspect.signature(lambda x, y=2, *a, **k: 0)) == []


def test_the_signature_table_names_only_recorded_functions():
    for jax_name, names in SIGNATURES_DIFFER.items():
        unknown = set(names) - set(SIGNATURES[jax_name])
        assert not unknown, (jax_name, unknown)
