"""Run the tests of the packages a change touches (`hatch run changed [BASE] [--integration]`).

A package is touched when a file under packages/<folder>/ differs from BASE (a git
revision, `main` by default; compared from where the branch left it, committed,
staged, unstaged and untracked changes included); the packages that depend on a
touched one (directly or not, as their pyprojects declare) are tested too, since a
change may break them. tests_integration/ runs when one of its files changed, or
with `--integration`. Arguments after `--` go to pytest (`-- -x -k grad`);
`--list` prints the selection and runs nothing.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INTEGRATION = "tests_integration"
# The flags of hatch.toml's `test` script.
PYTEST = [
    "-q",
    "-p",
    "no:cacheprovider",
    "--import-mode=importlib",
    "--continue-on-collection-errors",
    "-n",
    "auto",
    "--maxprocesses=4",
    "--dist",
    "worksteal",
]


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def local_dependencies(root: Path) -> dict[str, set[str]]:
    """Each package folder -> the package folders its pyproject depends on directly."""
    projects = {
        path.parent.name: tomllib.loads(path.read_text())["project"]
        for path in sorted(root.glob("packages/*/pyproject.toml"))
    }
    folder_of = {_normalize(project["name"]): folder for folder, project in projects.items()}
    return {
        folder: {
            folder_of[name]
            for name in (
                _normalize(re.match(r"\s*([A-Za-z0-9._-]+)", r).group(1))
                for r in project.get("dependencies", [])
            )
            if name in folder_of
        }
        for folder, project in projects.items()
    }


def select(
    changed: list[str], deps: dict[str, set[str]], integration: bool = False
) -> tuple[list[str], bool]:
    """The package folders to test for the `changed` paths (relative to the root),
    touched ones and their dependents, and whether to run tests_integration."""
    touched = {p.split("/")[1] for p in changed if p.startswith("packages/") and p.count("/") > 1}
    touched &= deps.keys()  # a deleted package has nothing left to test
    selected = set(touched)
    grew = True
    while grew:  # add every package that depends on a selected one, until none is new
        dependents = {folder for folder, needs in deps.items() if needs & selected}
        grew = not dependents <= selected
        selected |= dependents
    integration = integration or any(p.startswith(INTEGRATION + "/") for p in changed)
    return sorted(selected), integration


def changed_files(base: str, root: Path) -> list[str]:
    """The paths that differ from where HEAD left `base`, uncommitted work included."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=root, check=True, capture_output=True, text=True
        ).stdout

    fork = git("merge-base", base, "HEAD").strip()
    tracked = git("diff", "--name-only", fork).splitlines()
    untracked = git("ls-files", "--others", "--exclude-standard").splitlines()
    return sorted(set(tracked) | set(untracked))


def main(argv: list[str]) -> int:
    split = argv.index("--") if "--" in argv else len(argv)
    ours, pytest_args = argv[:split], argv[split + 1 :]
    parser = argparse.ArgumentParser(prog="hatch run changed", description=__doc__.split("\n")[0])
    parser.add_argument("base", nargs="?", default="main", help="git revision (default: main)")
    parser.add_argument("--integration", action="store_true", help="run tests_integration too")
    parser.add_argument("--list", action="store_true", help="print the selection, run nothing")
    args = parser.parse_args(ours)
    packages, integration = select(
        changed_files(args.base, ROOT), local_dependencies(ROOT), args.integration
    )
    paths = [f"packages/{folder}/tests" for folder in packages]
    paths += [INTEGRATION] if integration else []
    paths = [p for p in paths if (ROOT / p).is_dir()]
    print(f"changed since {args.base}: " + (", ".join(paths) or "no package or integration test"))
    if args.list or not paths:
        return 0
    return subprocess.run(
        [sys.executable, "-m", "pytest", *PYTEST, *paths, *pytest_args], cwd=ROOT
    ).returncode


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
