"""tools/conformance.py (`hatch run conformance:test`): which conformance failures fail CI."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "conformance_tool", ROOT / "tools" / "conformance.py"
)
conformance = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(conformance)

T = "array_api_tests/test_special_cases.py::test_binary[__mod__(x1_i is -0 and x2_i > 0) -> +0]"


def _suite(tmp_path: Path, jax_failed: str) -> Path:
    (tmp_path / "array-api-tests").mkdir()
    (tmp_path / conformance.JAX_FAILED).write_text(jax_failed)
    return tmp_path


def test_lists_read_with_or_without_the_runner_prefix(tmp_path):
    listing = tmp_path / "list.txt"
    listing.write_text(
        f"FAILED {T}\n# why the next one fails\nERROR a.py::b\n\n  c.py::d[x - y]  \n"
    )
    assert conformance.read_ids(listing) == {T, "a.py::b", "c.py::d[x - y]"}


def test_outcomes_count_collection_errors():
    report = {
        "tests": [{"nodeid": "a.py::t", "outcome": "passed"}, {"nodeid": T, "outcome": "failed"}],
        "collectors": [
            {"nodeid": "b.py", "outcome": "failed"},
            {"nodeid": "a.py", "outcome": "passed"},
        ],
    }
    assert conformance.outcomes(report) == {"a.py::t": "passed", T: "failed", "b.py": "error"}


def test_only_unexpected_failures_count():
    result = {"a::x": "failed", "a::y": "error", "a::z": "passed", "a::s": "skipped"}
    new, fixed = conformance.compare(result, {"a::x", "a::z", "a::gone"})
    assert new == ["a::y"] and fixed == ["a::z"]


def test_main_fails_on_a_failure_jax_does_not_have(tmp_path, monkeypatch, capsys):
    suite = _suite(tmp_path, f"FAILED {T}\n")
    report = {
        "tests": [{"nodeid": T, "outcome": "failed"}, {"nodeid": "n::t", "outcome": "passed"}]
    }
    monkeypatch.setattr(conformance, "run_suite", lambda *args: report)
    assert conformance.main(["--suite", str(suite)]) == 0
    report["tests"][1]["outcome"] = "failed"
    assert conformance.main(["--suite", str(suite)]) == 1
    assert "  n::t" in capsys.readouterr().out


def test_main_passes_with_a_note_without_the_suite(tmp_path, capsys):
    assert conformance.main(["--suite", str(tmp_path / "absent")]) == 0
    assert "skipped" in capsys.readouterr().out


def test_known_failures_are_test_ids_with_reasons():
    lines = conformance.KNOWN.read_text().splitlines()
    ids = conformance.read_ids(conformance.KNOWN)
    assert ids and all(i.startswith("array_api_tests/") and "::" in i for i in ids)
    for i, line in enumerate(lines):  # every id has a comment right above it (its reason)
        if line.strip() in ids:
            assert lines[i - 1].startswith("#") or lines[i - 1].strip() in ids
