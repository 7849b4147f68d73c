"""Every package's metadata, checked on the pyprojects: a license and a readme, the
root LICENSE shipped by each wheel, `py.typed`, and version bounds between modjax's
own distributions.

The per-package wheel check (`hatch run pkg:test`) checks the same files are in the
installed wheel; this test says which file is missing without building anything.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_layering import LAYERS, METAPACKAGE, ROOT, normalize, read_projects

# `modjax-x>=0.1,<0.2`: the version range of one minor release.
BOUND = re.compile(r"^\s*(modjax(?:-[a-z_]+)?)\s*>=\s*(\d+)\.(\d+)\s*,\s*<\s*(\d+)\.(\d+)\s*$")


def packaging_problems(root: Path) -> list[str]:
    """Every metadata problem of the packages under `root`, one line each."""
    projects, problems = read_projects(root)
    version_of = {normalize(p["name"]): p.get("version", "") for p in projects.values()}
    license_text = (root / "LICENSE").read_bytes() if (root / "LICENSE").is_file() else None
    if license_text is None:
        problems.append("LICENSE: missing at the root")
    for folder, project in sorted(projects.items()):
        where = f"packages/{folder}"
        for field in ("license", "readme"):
            if field not in project:
                problems.append(f"{where}/pyproject.toml: no `{field}`")
        if "LICENSE" not in project.get("license-files", []):
            problems.append(f"{where}/pyproject.toml: `license-files` does not list LICENSE")
        copy = root / "packages" / folder / "LICENSE"
        if not copy.is_file() or copy.read_bytes() != license_text:
            problems.append(f"{where}/LICENSE: not a copy of the root LICENSE")
        names = LAYERS.get(folder, (0, frozenset()))[1]
        marked = [f"src/modjax/{name}/py.typed" for name in sorted(names)]
        if folder == METAPACKAGE:
            marked = ["src/modjax/py.typed"]
        for relative in marked:
            if not (root / "packages" / folder / relative).is_file():
                problems.append(f"{where}/{relative}: missing")
        for requirement in project.get("dependencies", []):
            name = normalize(re.split(r"[\s<>=!~;\[]", requirement.strip(), maxsplit=1)[0])
            if name not in version_of:
                continue
            major, minor = version_of[name].split(".")[:2]
            expected = f"{name}>={major}.{minor},<{major}.{int(minor) + 1}"
            match = BOUND.match(requirement)
            bounds = (major, minor, major, str(int(minor) + 1))
            if match is None or normalize(match[1]) != name or match.groups()[1:] != bounds:
                problems.append(
                    f"{where}/pyproject.toml: depends on {requirement!r}, expected {expected!r}"
                )
    return problems


def test_packages_have_complete_metadata():
    assert (ROOT / "packages" / "tracecore" / "pyproject.toml").is_file()
    problems = packaging_problems(ROOT)
    if problems:
        pytest.fail("packaging problems:\n" + "\n".join(problems))


def write(root: Path, relative: str, text: str) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def make_package(root: Path, folder: str, name: str, *deps: str, version: str = "0.3.1") -> None:
    listed = ", ".join(f'"{d}"' for d in deps)
    write(
        root,
        f"packages/{folder}/pyproject.toml",
        f'[project]\nname = "{name}"\nversion = "{version}"\nlicense = "Apache-2.0"\n'
        f'readme = "README.md"\nlicense-files = ["LICENSE"]\ndependencies = [{listed}]\n',
    )
    write(root, f"packages/{folder}/LICENSE", "the license\n")
    write(root, f"packages/{folder}/src/modjax/{folder}/py.typed", "")


def test_checker_accepts_complete_metadata(tmp_path):
    write(tmp_path, "LICENSE", "the license\n")
    make_package(tmp_path, "tracecore", "modjax-tracecore", "numpy>=2")
    make_package(tmp_path, "autodiff", "modjax-autodiff", "modjax-tracecore>=0.3,<0.4")
    assert packaging_problems(tmp_path) == []


def test_checker_reports_each_problem(tmp_path):
    write(tmp_path, "LICENSE", "the license\n")
    make_package(tmp_path, "tracecore", "modjax-tracecore", "numpy>=2")
    make_package(tmp_path, "autodiff", "modjax-autodiff", "modjax-tracecore")
    make_package(tmp_path, "batching", "modjax-batching", "modjax_tracecore>=0.1,<0.2")
    write(tmp_path, "packages/batching/LICENSE", "another license\n")
    (tmp_path / "packages/batching/src/modjax/batching/py.typed").unlink()
    write(tmp_path, "packages/lowering/pyproject.toml", '[project]\nname = "modjax-lowering"\n')
    assert packaging_problems(tmp_path) == [
        "packages/autodiff/pyproject.toml: depends on 'modjax-tracecore', "
        "expected 'modjax-tracecore>=0.3,<0.4'",
        "packages/batching/LICENSE: not a copy of the root LICENSE",
        "packages/batching/src/modjax/batching/py.typed: missing",
        "packages/batching/pyproject.toml: depends on 'modjax_tracecore>=0.1,<0.2', "
        "expected 'modjax-tracecore>=0.3,<0.4'",
        "packages/lowering/pyproject.toml: no `license`",
        "packages/lowering/pyproject.toml: no `readme`",
        "packages/lowering/pyproject.toml: `license-files` does not list LICENSE",
        "packages/lowering/LICENSE: not a copy of the root LICENSE",
        "packages/lowering/src/modjax/lowering/py.typed: missing",
    ]
