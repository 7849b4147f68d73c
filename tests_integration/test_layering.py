"""The package layering of design.md, checked on the source with `ast`.

A package may import only packages of lower layers (never a same-layer sibling
or a higher one), and only those it declares as dependencies (directly or
through them), so that its wheel works alone. Its own tests may import only
the package itself and its directly declared modjax dependencies. `jax` is
never imported; `jaxlib` only from the lowering layer up.

Third-party imports are held to the pyproject too, both ways: every module a
package's source imports (at the top or inside a function: a lazy import is
still an import) is a dependency it declares, and every third-party dependency
it declares is imported somewhere; a module behind an extra
(`modjax.testing` needs `modjax[testing]`) may import that extra's
dependencies. The tests pytest loads (test modules,
conftest.py and the helpers they import) may use the dependencies and the
`test` extra. An import inside `try: ... except ImportError` is optional and
needs no declaration. Import names are matched to distribution names
normalized (`ml_dtypes` is `ml-dtypes`); a distribution whose import name
differs needs an entry in IMPORT_NAME_TO_DISTRIBUTION.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# packages/<dir> -> (layer, the names under `modjax.` that the package provides)
LAYERS: dict[str, tuple[int, frozenset[str]]] = {
    "tracecore": (0, frozenset({"tracecore"})),
    "autodiff": (1, frozenset({"autodiff"})),
    "batching": (1, frozenset({"batching"})),
    "lowering": (1, frozenset({"lowering"})),
    "runtime": (2, frozenset({"runtime"})),
    "sharding": (3, frozenset({"sharding"})),
    "numpy_api": (
        4,
        frozenset(
            {
                "example_libraries",
                "ffi",
                "flatten_util",
                "image",
                "lax",
                "numpy",
                "ops",
                "random",
                "nn",
                "scipy",
            }
        ),
    ),
    # The metapackage owns `modjax` itself and every name no component provides.
    "modjax": (5, frozenset()),
}
METAPACKAGE = "modjax"
# jaxlib is XLA; the layers below lowering must run without it (design.md).
NO_JAXLIB = {"tracecore", "autodiff", "batching"}

# Import name -> distribution name, where normalizing the import name is not enough.
IMPORT_NAME_TO_DISTRIBUTION: dict[str, str] = {"yaml": "pyyaml", "PIL": "pillow"}

OWNER = {name: folder for folder, (_, names) in LAYERS.items() for name in names}


def owner_of(module: str) -> str | None:
    """The package folder that provides `module`, or None if it isn't modjax's."""
    parts = module.split(".")
    if parts[0] != "modjax":
        return None
    return OWNER.get(parts[1], METAPACKAGE) if len(parts) > 1 else METAPACKAGE


@dataclass(frozen=True)
class Import:
    line: int
    module: str  # absolute, e.g. "modjax.tracecore.core" or "numpy"
    optional: bool = False  # inside `try: ... except ImportError`


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    names = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(
        isinstance(name, ast.Name) and name.id in ("ImportError", "ModuleNotFoundError")
        for name in names
    )


def _statements(body: list[ast.stmt], guarded: bool = False):
    """Every statement in `body`, nested ones included, with whether it runs inside a
    `try` that catches ImportError. Imports are statements, so expressions (most of
    a module's nodes) are never visited: the walk stays fast on the whole checkout."""
    for node in body:
        yield node, guarded
        if isinstance(node, ast.Try | ast.TryStar):
            catches = any(map(_catches_import_error, node.handlers))
            yield from _statements(node.body, guarded or catches)
            for handler in node.handlers:
                yield from _statements(handler.body, guarded)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                yield from _statements(case.body, guarded)
        for field in ("body", "orelse", "finalbody"):
            if not isinstance(node, ast.Try | ast.TryStar) or field != "body":
                yield from _statements(getattr(node, field, []), guarded)


def imports_of(tree: ast.Module, package: tuple[str, ...] | None) -> list[Import]:
    """Every module an import statement names, relative imports made absolute
    against `package` (the importing file's package; None outside src/)."""
    found = []
    for node, optional in _statements(tree.body):
        if isinstance(node, ast.Import):
            found += [Import(node.lineno, alias.name, optional) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                if package is None or node.level > len(package):
                    module = "." * node.level + (node.module or "")
                    found.append(Import(node.lineno, module, optional))
                    continue
                base = list(package[: len(package) - node.level + 1])
            else:
                base = []
            module = ".".join(base + ([node.module] if node.module else []))
            # `from modjax import tracecore` imports the module modjax.tracecore.
            if module == "modjax":
                found += [
                    Import(node.lineno, f"modjax.{alias.name}", optional) for alias in node.names
                ]
            else:
                found.append(Import(node.lineno, module, optional))
    return found


def third_party_distribution(module: str, local: frozenset[str] = frozenset()) -> str | None:
    """The normalized distribution name that provides `module`, or None for the
    standard library, modjax, relative imports and the `local` modules."""
    top = module.split(".")[0]
    if not top or top == "modjax" or top in sys.stdlib_module_names or top in local:
        return None
    return normalize(IMPORT_NAME_TO_DISTRIBUTION.get(top, top))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    return normalize(re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement).group(1))


def read_projects(root: Path) -> tuple[dict[str, dict], list[str]]:
    """Each package folder -> its pyproject's [project] table, and the unreadable ones."""
    problems = []
    projects = {}
    for pyproject in sorted(root.glob("packages/*/pyproject.toml")):
        try:
            projects[pyproject.parent.name] = tomllib.loads(pyproject.read_text())["project"]
        except (tomllib.TOMLDecodeError, KeyError) as e:
            problems.append(f"{pyproject.relative_to(root)}: no readable [project] table: {e}")
    return projects, problems


def declared_local_deps(root: Path) -> tuple[dict[str, set[str]], list[str]]:
    """Each package folder -> the package folders its pyproject depends on."""
    projects, problems = read_projects(root)
    folder_of = {normalize(p.get("name", "")): folder for folder, p in projects.items()}
    deps = {
        folder: {
            folder_of[name]
            for name in map(requirement_name, project.get("dependencies", []))
            if name in folder_of
        }
        for folder, project in projects.items()
    }
    return deps, problems


def declared_third_party(project: dict) -> tuple[set[str], set[str], set[str]]:
    """The non-modjax distributions `project` depends on, those its extras other than
    `test` add (for the modules behind them), and those its `test` extra adds."""

    def names(requirements: list[str]) -> set[str]:
        return {n for n in map(requirement_name, requirements) if not n.startswith("modjax")}

    extras = project.get("optional-dependencies", {})
    features = set().union(*(names(deps) for extra, deps in extras.items() if extra != "test"))
    return names(project.get("dependencies", [])), features, names(extras.get("test", []))


def loaded_test_files(tests: Path, parse) -> list[Path]:
    """The files pytest loads from `tests`: test modules, conftest.py, and the local
    helper modules they import (a recording script run by hand is not among them).
    `parse` gives a file's tree, or None if it does not parse."""
    local = {path.stem: path for path in tests.rglob("*.py")}
    todo = [p for p in local.values() if p.name.startswith("test_") or p.name == "conftest.py"]
    seen = set(todo)
    while todo:
        tree = parse(todo.pop())
        for imp in imports_of(tree, None) if tree is not None else ():
            helper = local.get(imp.module.split(".")[0])
            if helper is not None and helper not in seen:
                seen.add(helper)
                todo.append(helper)
    return sorted(seen)


def closure(folder: str, deps: dict[str, set[str]]) -> set[str]:
    seen, todo = set(), [folder]
    while todo:
        for dep in deps.get(todo.pop(), ()):
            if dep not in seen:
                seen.add(dep)
                todo.append(dep)
    return seen


def find_violations(root: Path) -> list[str]:
    """Every layering violation under `root` (a checkout), one line each."""
    violations = []
    deps, problems = declared_local_deps(root)
    violations += problems
    projects, _ = read_projects(root)

    trees: dict[Path, ast.Module | None] = {}

    def parse(path: Path) -> ast.Module | None:
        if path not in trees:
            try:
                trees[path] = ast.parse(path.read_text(), str(path))
            except (SyntaxError, UnicodeDecodeError) as e:
                violations.append(f"{path.relative_to(root)}: cannot parse: {e}")
                trees[path] = None
        return trees[path]

    def check_third_party(where: str, folder: str | None, imp: Import) -> bool:
        """Report an import of jax, or of jaxlib below lowering; True if reported."""
        top = imp.module.split(".")[0]
        if top == "jax":
            violations.append(f"{where}: imports {imp.module}: modjax never imports jax")
        elif top == "jaxlib" and folder in NO_JAXLIB:
            violations.append(f"{where}: '{folder}' imports {imp.module}: no jaxlib below lowering")
        else:
            return False
        return True

    def check_declared(where: str, folder: str, imp: Import, declared: set[str], what: str):
        dist = third_party_distribution(imp.module, local_names)
        if dist is not None and dist not in declared and not imp.optional:
            violations.append(
                f"{where}: '{folder}' imports {imp.module} but {what} does not declare '{dist}'"
            )

    for package_dir in sorted(p for p in root.glob("packages/*") if p.is_dir()):
        folder = package_dir.name
        if folder not in LAYERS:
            violations.append(f"packages/{folder}: not in the layer table of test_layering.py")
            continue
        layer = LAYERS[folder][0]

        for dep in sorted(deps.get(folder, ())):
            if dep in LAYERS and LAYERS[dep][0] >= layer:
                violations.append(
                    f"packages/{folder}/pyproject.toml: layer {layer} '{folder}' depends on "
                    f"'{dep}' (layer {LAYERS[dep][0]})"
                )
        reachable = closure(folder, deps)
        runtime_deps, features, test_extra = declared_third_party(projects.get(folder, {}))
        imported: set[str] = set()
        local_names: frozenset[str] = frozenset()

        src = package_dir / "src"
        for path in sorted(src.rglob("*.py")):
            tree = parse(path)
            if tree is None:
                continue
            for imp in imports_of(tree, path.relative_to(src).parent.parts):
                where = f"{path.relative_to(root)}:{imp.line}"
                imported.add(third_party_distribution(imp.module))
                if not check_third_party(where, folder, imp):
                    check_declared(where, folder, imp, runtime_deps | features, "its pyproject")
                owner = owner_of(imp.module)
                if owner is None or owner == folder:
                    continue
                if LAYERS[owner][0] >= layer:
                    violations.append(
                        f"{where}: layer {layer} '{folder}' imports {imp.module} "
                        f"(layer {LAYERS[owner][0]} '{owner}')"
                    )
                elif owner not in reachable:
                    violations.append(
                        f"{where}: '{folder}' imports {imp.module} but does not declare "
                        f"a dependency on '{owner}' (directly or through its dependencies)"
                    )

        for dist in sorted(runtime_deps - imported):
            violations.append(
                f"packages/{folder}/pyproject.toml: '{folder}' declares '{dist}' "
                "but its source never imports it"
            )

        allowed_in_tests = {folder} | deps.get(folder, set())
        tests = package_dir / "tests"
        # The conftests put the repository's tools/ folder (the shared hypothesis
        # profiles) on sys.path, so its modules are local to every package's tests.
        local_names = frozenset(path.stem for path in tests.rglob("*.py")) | frozenset(
            path.stem for path in (root / "tools").glob("*.py")
        )
        for path in loaded_test_files(tests, parse):
            tree = parse(path)
            if tree is None:
                continue
            for imp in imports_of(tree, None):
                where = f"{path.relative_to(root)}:{imp.line}"
                if not check_third_party(where, folder, imp):
                    check_declared(
                        where,
                        folder,
                        imp,
                        runtime_deps | test_extra,
                        "its pyproject's `test` extra",
                    )
                owner = owner_of(imp.module)
                if owner is not None and owner not in allowed_in_tests:
                    violations.append(
                        f"{where}: tests of '{folder}' import {imp.module} ('{owner}'), "
                        f"which '{folder}' does not declare; whole-stack tests go in "
                        "tests_integration/"
                    )

    for path in sorted((root / "tests_integration").rglob("*.py")):
        tree = parse(path)
        if tree is not None:
            for imp in imports_of(tree, None):
                check_third_party(f"{path.relative_to(root)}:{imp.line}", None, imp)
    return violations


def test_packages_respect_layering():
    # Guards against a vacuous pass: the checker must be looking at the packages.
    assert (ROOT / "packages" / "tracecore" / "pyproject.toml").is_file()
    violations = find_violations(ROOT)
    if violations:
        pytest.fail("layering violations (see design.md):\n" + "\n".join(violations))


# The checker itself, on synthetic trees.


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def pyproject(name: str, *deps: str, test: tuple[str, ...] = ("pytest",)) -> str:
    listed = ", ".join(f'"{d}"' for d in deps)
    extra = ", ".join(f'"{d}"' for d in test)
    return (
        f'[project]\nname = "{name}"\nversion = "0"\ndependencies = [{listed}]\n'
        f"[project.optional-dependencies]\ntest = [{extra}]\n"
    )


def make_clean_tree(root: Path) -> None:
    write(root, "packages/tracecore/pyproject.toml", pyproject("modjax-tracecore", "numpy>=2"))
    write(root, "packages/tracecore/src/modjax/tracecore/__init__.py", "from . import core\n")
    write(root, "packages/tracecore/src/modjax/tracecore/core.py", "import numpy\n")
    write(root, "packages/tracecore/tests/test_core.py", "import modjax.tracecore\nimport pytest\n")
    # Lazy and optional imports, a local helper, and a recording script run by hand.
    write(
        root,
        "packages/tracecore/src/modjax/tracecore/lazy.py",
        "def f():\n    import numpy.linalg\n    try:\n        import scipy\n"
        "    except ImportError:\n        scipy = None\n",
    )
    write(root, "packages/tracecore/tests/test_helped.py", "import helper\n")
    write(root, "packages/tracecore/tests/helper.py", "import numpy as np\n")
    write(root, "packages/tracecore/tests/record_gen.py", "import scipy.special\n")
    # A module behind an extra (as modjax.testing needs modjax[testing]).
    write(
        root,
        "packages/autodiff/pyproject.toml",
        pyproject("modjax-autodiff", "modjax-tracecore").replace(
            "test = ", 'checks = ["hypothesis"]\ntest = '
        ),
    )
    write(root, "packages/autodiff/src/modjax/autodiff/checks.py", "import hypothesis\n")
    write(
        root,
        "packages/autodiff/src/modjax/autodiff/jvp.py",
        "from modjax.tracecore import core\nfrom modjax import tracecore\n",
    )
    write(root, "packages/autodiff/tests/test_jvp.py", "from modjax.tracecore import core\n")
    write(
        root,
        "packages/runtime/pyproject.toml",
        pyproject("modjax-runtime", "modjax-autodiff>=0.1,<0.2", "jaxlib>=0.10,<0.11"),
    )
    write(
        root,
        "packages/runtime/src/modjax/runtime/jit.py",
        "import jaxlib\nimport modjax.tracecore\n",
    )
    write(root, "tests_integration/test_stack.py", "import modjax.runtime\n")


def test_checker_accepts_a_clean_tree(tmp_path):
    make_clean_tree(tmp_path)
    assert find_violations(tmp_path) == []


def test_checker_reports_each_violation(tmp_path):
    make_clean_tree(tmp_path)
    bad = {
        "packages/tracecore/src/modjax/tracecore/up.py": "import modjax.autodiff.jvp\n",
        "packages/tracecore/src/modjax/tracecore/rel.py": "from ..runtime import jit\n",
        "packages/tracecore/src/modjax/tracecore/top.py": "from modjax import jit\n",
        "packages/batching/src/modjax/batching/sub/__init__.py": "from ... import autodiff\n",
        "packages/tracecore/src/modjax/tracecore/xla.py": "from jaxlib import xla_client\n",
        "packages/autodiff/src/modjax/autodiff/sib.py": "from modjax.batching import vmap\n",
        "packages/autodiff/src/modjax/autodiff/api.py": "def f():\n    import jax.numpy\n",
        "packages/runtime/src/modjax/runtime/undeclared.py": "import modjax.lowering\n",
        "packages/autodiff/tests/test_bad.py": "import modjax.runtime\n",
        "tests_integration/test_jax.py": "import jax\n",
        "packages/autodiff/src/modjax/autodiff/lazy.py": "def f():\n    import numpy\n",
        "packages/runtime/tests/test_needs.py": "import ml_dtypes\n",
        "packages/tracecore/tests/helper.py": "import numpy\nfrom scipy import special\n",
    }
    for relative, text in bad.items():
        write(tmp_path, relative, text)
    write(tmp_path, "packages/mystery/src/modjax/mystery/__init__.py", "")

    report = "\n".join(find_violations(tmp_path))
    expected = [
        "up.py:1: layer 0 'tracecore' imports modjax.autodiff.jvp (layer 1 'autodiff')",
        "rel.py:1: layer 0 'tracecore' imports modjax.runtime (layer 2 'runtime')",
        "top.py:1: layer 0 'tracecore' imports modjax.jit (layer 5 'modjax')",
        "xla.py:1: 'tracecore' imports jaxlib: no jaxlib below lowering",
        "sib.py:1: layer 1 'autodiff' imports modjax.batching (layer 1 'batching')",
        "__init__.py:1: layer 1 'batching' imports modjax.autodiff (layer 1 'autodiff')",
        "api.py:2: imports jax.numpy: modjax never imports jax",
        "undeclared.py:1: 'runtime' imports modjax.lowering but does not declare",
        "test_bad.py:1: tests of 'autodiff' import modjax.runtime",
        "test_jax.py:1: imports jax: modjax never imports jax",
        "packages/mystery: not in the layer table",
        "autodiff/lazy.py:2: 'autodiff' imports numpy but its pyproject does not declare 'numpy'",
        "test_needs.py:1: 'runtime' imports ml_dtypes but its pyproject's `test` extra does not "
        "declare 'ml-dtypes'",
        "tests/helper.py:2: 'tracecore' imports scipy but its pyproject's `test` extra does not "
        "declare 'scipy'",
    ]
    missing = [line for line in expected if line not in report]
    assert not missing, f"not reported: {missing}\nreport:\n{report}"
    assert len(report.splitlines()) == len(expected), report


def test_checker_reports_a_dependency_on_a_higher_layer(tmp_path):
    make_clean_tree(tmp_path)
    write(
        tmp_path,
        "packages/batching/pyproject.toml",
        pyproject("modjax-batching", "modjax-autodiff"),
    )
    assert find_violations(tmp_path) == [
        "packages/batching/pyproject.toml: layer 1 'batching' depends on 'autodiff' (layer 1)"
    ]


def test_checker_reports_a_dependency_never_imported(tmp_path):
    make_clean_tree(tmp_path)
    write(
        tmp_path,
        "packages/tracecore/pyproject.toml",
        pyproject("modjax-tracecore", "numpy>=2", "ml_dtypes>=0.5"),
    )
    assert find_violations(tmp_path) == [
        "packages/tracecore/pyproject.toml: 'tracecore' declares 'ml-dtypes' "
        "but its source never imports it"
    ]
