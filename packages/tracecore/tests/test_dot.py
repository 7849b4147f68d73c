"""Pictures of programs: to_dot's graph structure and render's files and errors."""

import html
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest
from tracecore_test_prims import add_p, mul_p, sin_p, sumdiff_p

from modjax.tracecore import call, make_jaxpr, subjaxprs
from modjax.tracecore.dot import render, to_dot

X = np.linspace(-1.0, 1.0, 3).astype(np.float32)
NODE = re.compile(r"^\s*(\w+) \[label=(<.*?>>|\"(?:[^\"\\]|\\.)*\")(.*)\];$", re.M)
EDGE = re.compile(r"^\s*(\w+) -> (\w+)(?: \[(.*)\])?;$", re.M)


def nested(x):
    a, b = sumdiff_p.bind(sin_p.bind(x), x)
    inner = call(lambda u, v: mul_p.bind(add_p.bind(u, 2.0), v), a, b, name="inner")
    return inner, b


@pytest.fixture(scope="module")
def program():
    closed = make_jaxpr(nested)(X)
    return closed, to_dot(closed)


def count_eqns(jaxpr):
    jaxpr = getattr(jaxpr, "jaxpr", jaxpr)
    return sum(1 + sum(count_eqns(s) for s in subjaxprs(e.params)) for e in jaxpr.eqns)


def test_every_equation_is_a_node_with_its_source_line(program):
    closed, text = program
    nodes = {name: (label, rest) for name, label, rest in NODE.findall(text)}
    eqns = {k: v for k, v in nodes.items() if k.startswith("eqn")}
    assert len(eqns) == count_eqns(closed) == 5  # sin, sumdiff, call, add, mul
    labels = [label for label, _ in eqns.values()]
    assert sorted(re.search(r"<b>(\w+)</b>", x).group(1) for x in labels) == sorted(
        ["test_sin", "test_sumdiff", "call", "test_add", "test_mul"]
    )
    # The literal operand is written in its equation's label.
    assert any("test_add" in x and "2.0:~f32[]" in x for x in labels)
    for _, rest in eqns.values():
        assert f"{__file__}:" in rest  # tooltip = the user's source line
    inputs = [rest for k, (_, rest) in nodes.items() if k.startswith("in")]
    assert sum("invhouse" in rest for rest in inputs) == 1  # x
    assert sum("ellipse" in rest for rest in inputs) == 2  # the call's jaxpr's u and v
    assert sum(k.startswith("out") for k in nodes) == 2


def test_edges_carry_names_and_types_as_the_text_prints_them(program):
    closed, text = program
    edge_labels = [re.search(r'label="([^"]*)"', attrs or "") for _, _, attrs in EDGE.findall(text)]
    labels = {m.group(1) for m in edge_labels if m}
    printed = str(closed)
    for label in labels:
        assert label in printed, label
    assert "a:f32[3]" in labels  # the input
    assert all(label.endswith("f32[3]") for label in labels)


def test_held_jaxprs_are_clusters_between_a_head_and_a_results_node(program):
    _, text = program
    assert text.count("subgraph cluster_") == 2  # the call, and its jaxpr param
    assert 'label="jaxpr"' in text
    head = re.search(r"(eqn\d+) \[label=<<b>call</b>", text).group(1)
    results = re.search(r'(res\d+) \[label="results"', text).group(1)
    edges = EDGE.findall(text)
    # The call's operands enter its head; its outputs leave from the results node.
    assert sum(t == head for _, t, _ in edges) == 2
    assert any(s == results and t.startswith("out") for s, t, _ in edges)
    assert any(s == head and "dotted" in attrs for s, _, attrs in edges)
    # Edges come after every cluster, so no node is pulled into a cluster by an edge.
    last_brace = max(i for i, line in enumerate(text.splitlines()) if line.strip() == "}")
    first_edge = min(i for i, line in enumerate(text.splitlines()) if "->" in line)
    assert first_edge > last_brace - text.count("->") - 1


def test_constants_and_literal_outputs_get_nodes():
    c = np.arange(3, dtype=np.float32)
    closed = make_jaxpr(lambda x: (add_p.bind(x, c), 3))(X)
    text = to_dot(closed)
    assert "shape=box3d" in text  # the closed-over array
    assert '"3:~i32[]"' in text  # the literal output


def test_effects_are_written_as_the_printer_writes_them():
    from tracecore_test_programs import effect_p

    closed = make_jaxpr(lambda x: effect_p.bind(sin_p.bind(x)))(X)
    assert "test_program_effect{Effect}" in str(closed)
    text = to_dot(closed)
    assert '<b>test_program_effect</b><font color="#b00000">{Effect}</font>' in text
    assert "label=<<b>test_sin</b>>" in text  # no effects, no params


def test_to_dot_rejects_other_values():
    with pytest.raises(TypeError, match="to_dot expects a ClosedJaxpr"):
        to_dot(lambda x: x)


def test_render_writes_dot_text_without_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", "")
    path = render(nested, tmp_path / "prog.dot", X)
    assert pathlib.Path(path).read_text() == to_dot(make_jaxpr(nested)(X))


def test_render_says_how_to_install_graphviz(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(RuntimeError, match="apt-get install graphviz"):
        render(nested, tmp_path / "prog.svg", X)
    with pytest.raises(ValueError, match="cannot tell the format"):
        render(nested, tmp_path / "prog.txt", X)
    with pytest.raises(TypeError, match="only for a function"):
        render(make_jaxpr(nested)(X), tmp_path / "prog.dot", X)


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_svg_with_graphviz(tmp_path, program):
    closed, text = program
    path = render(closed, tmp_path / "prog.svg")
    svg = html.unescape(pathlib.Path(path).read_text())
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    assert "test_sumdiff" in svg and "a:f32[3]" in svg
    assert f"{__file__}:" in svg  # tooltips survive
    checked = subprocess.run(["dot", "-Tcanon"], input=text.encode(), capture_output=True)
    assert checked.returncode == 0 and not checked.stderr
