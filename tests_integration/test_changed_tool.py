"""tools/changed.py (`hatch run changed`): which tests a change selects."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("changed_tool", ROOT / "tools" / "changed.py")
changed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(changed)

# A small layering: b and c need a, d needs b.
DEPS = {"a": set(), "b": {"a"}, "c": {"a"}, "d": {"b"}}


def test_a_change_selects_the_package_and_everything_above_it():
    assert changed.select(["packages/b/src/m.py"], DEPS) == (["b", "d"], False)
    assert changed.select(["packages/a/README.md"], DEPS) == (["a", "b", "c", "d"], False)
    assert changed.select(["packages/d/tests/test_x.py"], DEPS) == (["d"], False)


def test_files_outside_packages_select_no_package():
    assert changed.select(["README.md", "hatch.toml", "packages/x.txt"], DEPS) == ([], False)
    assert changed.select(["packages/gone/src/m.py"], DEPS) == ([], False)


def test_integration_runs_when_its_files_change_or_when_asked():
    assert changed.select(["tests_integration/test_x.py"], DEPS) == ([], True)
    assert changed.select(["packages/c/src/m.py"], DEPS, integration=True) == (["c"], True)


def test_the_real_layering():
    deps = changed.local_dependencies(ROOT)
    assert deps["tracecore"] == set()
    selected, _ = changed.select(["packages/tracecore/src/modjax/tracecore/core.py"], deps)
    assert selected == sorted(deps)  # every package is built on tracecore
    selected, _ = changed.select(["packages/sharding/src/modjax/sharding/mesh.py"], deps)
    assert selected == ["modjax", "numpy_api", "sharding"]


def test_git_finds_committed_and_untracked_changes(tmp_path):
    def git(*args):
        subprocess.run(["git", *args], cwd=tmp_path, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "t@example.com")
    git("config", "user.name", "t")
    (tmp_path / "packages" / "a").mkdir(parents=True)
    (tmp_path / "packages" / "a" / "m.py").write_text("x = 1\n")
    git("add", ".")
    git("commit", "-q", "-m", "base")
    git("checkout", "-q", "-b", "work")
    (tmp_path / "packages" / "a" / "m.py").write_text("x = 2\n")
    git("commit", "-q", "-am", "change")
    (tmp_path / "tests_integration").mkdir()
    (tmp_path / "tests_integration" / "test_new.py").write_text("")
    assert changed.changed_files("main", tmp_path) == [
        "packages/a/m.py",
        "tests_integration/test_new.py",
    ]


def test_list_prints_the_selection():
    out = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "changed.py"), "HEAD", "--list"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.startswith("changed since HEAD: ")
