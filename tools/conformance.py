"""Run the Array API conformance suite on modjax.numpy and compare with JAX's failures.

`hatch run conformance:test [--max-examples N] [-- PYTEST ARGS]` (part of `hatch run all`).
The suite (data-apis/array-api-tests) is not part of this repository: it lives in
../shared/conformance beside the checkout, with JAX 0.10.2's list of failed tests
(array-api-jax-0.10.2-failed.txt). Without that folder this prints a note and passes.

The suite runs as ../shared/conformance/run-array-api-tests runs it (a scratch copy,
x64 on, derandomized examples, no deadline) but with fewer examples (5 by default;
the runner's 20 is the measurement of record), on every core when pytest-xdist is
there, and at the standard's revision 2024.12 (`--api-version`), where JAX's list was
measured: the runner tests the namespace's own revision, 2023.12 for modjax, which
has 161 tests fewer and skips 44 more.

The run fails only on a test that fails (or errors) and is in neither JAX's list
nor tools/conformance_known_failures.txt (tests JAX 0.10.2 fails too in this
configuration, each with the reason), so a regression fails CI and JAX's own gaps
do not. It prints the tests of JAX's list that modjax passes, for the record.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT.parent / "shared" / "conformance"
JAX_FAILED = "array-api-jax-0.10.2-failed.txt"
KNOWN = ROOT / "tools" / "conformance_known_failures.txt"
# The revision JAX 0.10.2 declares (jax.numpy.__array_api_version__), at which its list
# of failures was measured; modjax.numpy declares 2023.12 (numpy_api's README says why)
# and implements 2024.12's functions too.
API_VERSION = "2024.12"


def read_ids(path: Path) -> set[str]:
    """Test ids listed in ``path``, one a line; a ``FAILED``/``ERROR`` prefix and lines
    starting with ``#`` (comments) are ignored, so the runner's lists and ours read alike."""
    ids = set()
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("#"):
            continue
        for prefix in ("FAILED ", "ERROR "):
            if line.startswith(prefix):
                line = line[len(prefix) :]
        if line:
            ids.add(line)
    return ids


def outcomes(report: dict) -> dict[str, str]:
    """Each test id's outcome in a pytest-json-report, collection errors included."""
    result = {test["nodeid"]: test["outcome"] for test in report.get("tests", [])}
    for collector in report.get("collectors", []):
        if collector.get("outcome") == "failed":
            result[collector["nodeid"] or "<collection>"] = "error"
    return result


def compare(result: dict[str, str], expected_failures: set[str]) -> tuple[list[str], list[str]]:
    """The failed (or errored) tests not expected to fail, and the expected ones that passed."""
    bad = sorted(t for t, o in result.items() if o in ("failed", "error"))
    new = [t for t in bad if t not in expected_failures]
    fixed = sorted(t for t in expected_failures if result.get(t) == "passed")
    return new, fixed


def run_suite(
    suite: Path, python: str, max_examples: int, extra: list[str], api_version: str | None = None
) -> dict:
    """Run the suite in a scratch copy and return pytest-json-report's report.

    ``api_version`` sets the revision the suite tests (ARRAY_API_TESTS_VERSION; by
    default the namespace's ``__array_api_version__``). The suite reads each revision's
    signatures from ``array-api/src/array_api_stubs`` and only checks that its
    ``array-api/spec/<revision>/API_specification`` folder exists, which the shared copy
    has for 2023.12 alone: the scratch copy gets an empty one for another revision.
    """
    with tempfile.TemporaryDirectory(prefix="array-api-tests.") as work:
        work_dir = Path(work) / "suite"
        shutil.copytree(suite / "array-api-tests", work_dir)
        for path in work_dir.rglob("*"):  # the shared copy may be read-only
            path.chmod(path.stat().st_mode | 0o200)
        env = dict(os.environ, ARRAY_API_TESTS_MODULE="modjax.numpy", MODJAX_ENABLE_X64="1")
        if api_version is not None:
            env["ARRAY_API_TESTS_VERSION"] = api_version
            stubs = work_dir / "array-api" / "src" / "array_api_stubs"
            if not (stubs / ("_" + api_version.replace(".", "_"))).is_dir():
                raise SystemExit(f"conformance: the suite has no stubs of revision {api_version}")
            spec = work_dir / "array-api" / "spec" / api_version / "API_specification"
            spec.mkdir(parents=True, exist_ok=True)
        report_path = Path(work) / "report.json"
        has_xdist = subprocess.run([python, "-c", "import xdist"], capture_output=True).returncode
        cmd = [python, "-m", "pytest", *(extra or ["array_api_tests"]), "-q", "-p"]
        cmd += ["no:cacheprovider", f"--max-examples={max_examples}", "--derandomize"]
        cmd += ["--disable-deadline", "--json-report", f"--json-report-file={report_path}"]
        cmd += ["--json-report-omit", "log", "streams", "keywords"]
        if has_xdist == 0:
            cmd += ["-n", "auto", "--maxprocesses=4"]
        proc = subprocess.run(cmd, cwd=work_dir, env=env, capture_output=True, text=True)
        if not report_path.exists():
            sys.stdout.write(proc.stdout[-5000:] + proc.stderr[-5000:])
            raise SystemExit(f"conformance: pytest wrote no report (exit status {proc.returncode})")
        summary = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
        print("conformance:", summary[0])
        return json.loads(report_path.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", type=Path, default=SUITE, help="the conformance folder")
    parser.add_argument("--max-examples", type=int, default=5)
    parser.add_argument("--python", default=sys.executable, help="interpreter with modjax")
    parser.add_argument(
        "--api-version",
        default=API_VERSION,
        help="the standard's revision to test (JAX 0.10.2's failure list is at 2024.12)",
    )
    parser.add_argument("pytest_args", nargs="*", help="after --: paths, -k, ... for pytest")
    args = parser.parse_args(argv)
    if not (args.suite / "array-api-tests").is_dir():
        print(f"conformance: skipped, no suite at {args.suite}")
        return 0
    expected = read_ids(args.suite / JAX_FAILED) | read_ids(KNOWN)
    report = run_suite(
        args.suite, args.python, args.max_examples, args.pytest_args, args.api_version
    )
    result = outcomes(report)
    new, fixed = compare(result, expected)
    counts = {o: sum(v == o for v in result.values()) for o in sorted(set(result.values()))}
    print("conformance: outcomes", counts)
    if fixed:
        print(f"conformance: {len(fixed)} tests of JAX's failure list pass on modjax")
    if new:
        print(f"conformance: {len(new)} failures JAX 0.10.2 does not have:")
        print("\n".join(f"  {t}" for t in new))
        return 1
    print("conformance: no failure beyond JAX 0.10.2's")
    return 0


if __name__ == "__main__":
    sys.exit(main())
