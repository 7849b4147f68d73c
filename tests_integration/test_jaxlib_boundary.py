"""jaxlib is reached through one module per package (design.md, "jaxlib").

jaxlib's ``_jax``, ``xla_client`` and MLIR bindings are its internals, not a
stable API, so an upgrade must touch one place: runtime's ``_xla.py`` for the
runtime (clients, buffers, executables, the C++ fast path, its version) and
lowering's ``_mlir.py`` for MLIR. Every other module of every package imports
what it needs from those two. (The layers below lowering may not import
jaxlib at all: ``test_layering.py``.)
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# package folder -> the one module of it allowed to import jaxlib (None: no module may)
BOUNDARIES = {
    "tracecore": None,
    "autodiff": None,
    "batching": None,
    "lowering": "src/modjax/lowering/_mlir.py",
    "runtime": "src/modjax/runtime/_xla.py",
    "sharding": None,
    "numpy_api": None,
    "modjax": None,
}


def test_every_package_has_a_boundary():
    folders = {p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists()}
    assert folders == set(BOUNDARIES)


def jaxlib_imports(source: str) -> list[int]:
    """Return the line of each import of jaxlib in ``source`` (nested ones too)."""
    lines = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        else:
            continue
        if any(name == "jaxlib" or name.startswith("jaxlib.") for name in names):
            lines.append(node.lineno)
    return lines


@pytest.mark.parametrize("package", sorted(BOUNDARIES))
def test_only_the_boundary_module_imports_jaxlib(package):
    folder = ROOT / "packages" / package
    boundary = BOUNDARIES[package]
    offenders = [
        f"{path.relative_to(folder)}:{line}"
        for path in sorted((folder / "src").rglob("*.py"))
        if str(path.relative_to(folder)) != boundary
        for line in jaxlib_imports(path.read_text())
    ]
    assert offenders == [], f"modjax-{package} must reach jaxlib through {boundary}"
    if boundary is not None:
        assert jaxlib_imports((folder / boundary).read_text())


def test_the_checker_sees_every_form_of_import():
    source = (
        "import jaxlib\nimport jaxlib.xla_client as xc\nfrom jaxlib import _jax\n"
        "from jaxlib.mlir import ir\nimport jaxlibx\nfrom .jaxlib import y\n"
        "def f():\n    from jaxlib.cpu import _lapack\n"
    )
    assert jaxlib_imports(source) == [1, 2, 3, 4, 8]
