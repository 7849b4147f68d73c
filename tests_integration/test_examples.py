"""The examples run as a user would run them, and print what they promise.

Each runs in its own interpreter: the DSL example registers tracer operators
globally, as a DSL author would, which must not leak into other tests.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run_example(name: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_custom_dsl_example_runs_and_agrees():
    out = run_example("custom_dsl.py")
    assert "dsl_matvec" in out
    assert "FLOPs: 36" in out
    assert "def compiled(" in out
    assert "agree" in out
    # Part 2: the same primitives with every rule, under jit, grad and vmap.
    assert "stablehlo.maximum" in out and "d2/dw dx at x=1: 0.5" in out
    assert "jit, grad and vmap of the DSL agree with numpy" in out


def test_demo_trains_the_tour_mlp_prints_its_jaxpr_and_hits_the_cache():
    out = run_example("demo.py")
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("  step")]
    assert len(losses) >= 5 and losses[-1] < 0.1 * losses[0], losses
    assert "{ lambda" in out and "tanh" in out and "dot_general" in out
    assert "a cache hit" in out and "Eager (op by op) gives the same value" in out


def test_tracecore_tour_round_trips_and_splits():
    out = run_example("tracecore_tour.py")
    assert "parses back to an equal jaxpr: True" in out
    assert "Partial evaluation" in out


def test_readme_tracecore_snippet_runs_with_the_whole_stack_imported():
    import re

    readme = (EXAMPLES.parent / "README.md").read_text()
    snippet = re.findall(r"```python\n(.*?)```", readme, re.S)[0]
    assert "make_jaxpr" in snippet and "parse_jaxpr" in snippet
    # The workspace has modjax.lax, which declares its own `sin`: the snippet must
    # still parse its jaxpr back.
    done = subprocess.run(
        [sys.executable, "-c", "import modjax.numpy\n" + snippet],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "sin a" in done.stdout


def run_example_with(name: str, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_mlp_classifier_accuracy_rises():
    out = run_example_with("mlp_classifier.py", "--steps", "10")
    accuracies = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("  step")]
    assert len(accuracies) >= 3 and accuracies[-1] > 0.8 > accuracies[0], accuracies


def test_per_example_grads_agree_with_a_loop_and_clip():
    out = run_example_with("per_example_grads.py", "--steps", "3")
    assert "vmap(grad) agrees with a loop" in out and "gradient of the mean loss" in out
    assert out.count("clipped") == 3


def test_physics_sim_conserves_energy_and_differentiates_through_the_scan():
    out = run_example_with("physics_sim.py", "--steps", "200")
    errors = {
        line.split()[0]: float(line.split()[-2])
        for line in out.splitlines()
        if "energy error" in line
    }
    assert errors["velocity"] < 0.1 < errors["explicit"], errors
    grad_line = next(line for line in out.splitlines() if "central difference" in line)
    by_grad, by_difference = (float(part.split()[-1]) for part in grad_line.split(","))
    assert abs(by_grad - by_difference) < 1e-2 * abs(by_difference), grad_line
    assert "final length 1.5000 m" in out


def test_tiny_transformer_scans_checkpointed_layers_and_trains():
    out = run_example_with("tiny_transformer.py", "--steps", "3")
    assert "1 scan, 1 remat (checkpoint)" in out
    losses = [float(line.split()[3]) for line in out.splitlines() if line.startswith("  step")]
    assert len(losses) == 3 and losses[-1] < losses[0], losses


def test_writing_a_primitive_doc_runs_and_its_rules_check():
    import re

    page = (EXAMPLES.parent / "docs" / "writing-a-primitive.md").read_text()
    program = "\n".join(re.findall(r"```python\n(.*?)```", page, re.S))
    assert "check_primitive" in program and "register_lowering" in program
    done = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert "multiply_add a b c" in done.stdout


def test_every_readme_snippet_runs_as_printed(tmp_path):
    import re

    readme = (EXAMPLES.parent / "README.md").read_text()
    snippets = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert len(snippets) >= 3
    for snippet in snippets:
        # Each in a fresh interpreter (the jax alias must come before any import of jax),
        # in a scratch folder (the tour writes loss.dot).
        done = subprocess.run(
            [sys.executable, "-c", snippet],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
        assert done.returncode == 0, (snippet, done.stderr)
