"""Pictures of real programs: to_dot on an MLP's gradient, a scan and a cond."""

import pathlib
import re
import shutil

import numpy as np
import pytest

import modjax as jax
import modjax.numpy as jnp
from modjax.tracecore import subjaxprs
from modjax.tracecore.dot import render, to_dot

EDGE_LABEL = re.compile(r'-> \w+ \[label="([^"]+)"')


def all_eqns(jaxpr):
    for eqn in getattr(jaxpr, "jaxpr", jaxpr).eqns:
        yield eqn
        for sub in subjaxprs(eqn.params):
            yield from all_eqns(sub)


def check_structure(closed, text):
    """Every equation is a node, every held jaxpr a cluster, every edge a typed variable."""
    eqns = list(all_eqns(closed))
    assert len(re.findall(r"^\s*eqn\d+ \[", text, re.M)) == len(eqns)
    held = sum(len(list(subjaxprs(e.params))) for e in eqns)
    higher = sum(1 for e in eqns if any(True for _ in subjaxprs(e.params)))
    assert len(re.findall(r"subgraph cluster_(?!stack)", text)) == held + higher
    assert len(re.findall(r'\[label="results"', text)) == higher
    printed = str(closed)
    labels = EDGE_LABEL.findall(text)
    assert labels and all(re.fullmatch(r"\w+:~?\w+\[[\d,]*\]", x) for x in labels)
    assert all(x in printed for x in labels)  # the names of str(jaxpr)
    return eqns


def mlp_loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = params[-1]
    return jnp.mean((x @ w + b - y) ** 2)


def test_mlp_gradient_picture():
    params = [(jnp.ones((4, 8)), jnp.zeros(8)), (jnp.ones((8, 2)), jnp.zeros(2))]
    closed = jax.make_jaxpr(jax.grad(mlp_loss))(params, jnp.ones((5, 4)), jnp.ones((5, 2)))
    text = to_dot(closed)
    eqns = check_structure(closed, text)
    assert any(e.primitive.name == "dot_general" for e in eqns)
    assert text.count("shape=invhouse") == 6  # four parameters, x and y
    assert text.count("shape=house") == 4  # one gradient per parameter
    assert re.search(r'label="\w+:f32\[8,2\]"', text)  # a weight's gradient on an edge
    assert "test_program_pictures.py:" in text  # source lines as tooltips
    # The forward and backward passes are clusters named by their name stacks (the
    # transposed equations' as JAX's: transpose outside jvp).
    assert re.findall(r'subgraph cluster_stack\d+ \{\n.*label="([^"]*)"', text) == [
        "jvp",
        "transpose/jvp",
    ]


def test_scan_body_is_a_cluster():
    def f(h, xs):
        return jax.lax.scan(lambda h, x: (jnp.tanh(h + x), h.sum()), h, xs)

    closed = jax.make_jaxpr(f)(jnp.ones(3), jnp.ones((4, 3)))
    text = to_dot(closed)
    check_structure(closed, text)
    assert 'label="jaxpr"' in text and "length=4" in text
    head = re.search(r"(eqn\d+) \[label=<<b>scan</b>", text).group(1)
    assert len(re.findall(rf"-> {head} \[label", text)) == 2  # h and xs enter the head
    results = re.search(r'(res\d+) \[label="results"', text).group(1)
    assert len(re.findall(rf"^\s*{results} -> out\d+", text, re.M)) == 2


def test_cond_branches_are_clusters():
    def f(p, x):
        return jax.lax.cond(p, lambda x: jnp.sin(x) * 2.0, lambda x: x - 1.0, x)

    closed = jax.make_jaxpr(f)(True, jnp.ones(3))
    text = to_dot(closed)
    check_structure(closed, text)
    assert 'label="branches[0]"' in text and 'label="branches[1]"' in text
    results = re.search(r'(res\d+) \[label="results"', text).group(1)
    assert len(re.findall(rf"-> {results} \[label", text)) == 2  # one output per branch


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot is not installed")
def test_render_png_of_a_jitted_function(tmp_path):
    f = jax.jit(lambda x: jnp.sum(jnp.sin(x) ** 2))
    path = render(f, tmp_path / "f.png", np.ones(3, np.float32))
    assert pathlib.Path(path).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
