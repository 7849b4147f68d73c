"""Pictures of programs: a jaxpr as a Graphviz DOT graph, and rendering it to a file.

``to_dot`` draws inputs, equations and outputs as nodes and each variable as an
edge labelled with its name and type (``b:f32[3]``), using the same variable
names as ``str(jaxpr)``. An equation that holds jaxprs (found with the
``subjaxprs`` protocol: scan bodies, cond branches, jit calls, ...) becomes a
cluster: its operands enter a head node, each held jaxpr is a sub-cluster whose
inputs hang below the head, and its outputs meet in a results node from which
the equation's outputs leave, so data flows top to bottom through the body.
Every equation's tooltip (shown by SVG viewers) is its source line and name
stack. ``render`` traces a function (or takes a jaxpr) and runs Graphviz's
``dot`` program to write SVG, PNG or PDF; ``.dot`` files need no Graphviz.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from collections.abc import Callable
from typing import Any

from .jaxpr import ClosedJaxpr, DropVar, Jaxpr, JaxprEqn, Literal, subjaxprs
from .pretty import (
    WIDTH,
    _holds_jaxprs,
    _param_printers,
    _Printer,
    format_aval,
    format_effects,
    format_param_value,
)

__all__ = ["to_dot", "render", "GRAPHVIZ_FORMATS"]

# Output formats `render` hands to `dot -T<format>`.
GRAPHVIZ_FORMATS = ("svg", "png", "pdf")
_DOT_SUFFIXES = ("dot", "gv")
# A param whose text is longer than this is cut in node labels (tooltips keep it whole).
_PARAM_CHARS = 32

_GRAPH_ATTRS = (
    'graph [rankdir=TB, newrank=true, nodesep=0.2, ranksep=0.3, fontname="Helvetica", '
    'fontsize=11, labeljust=l, tooltip=" "]',
    'node [shape=box, style="rounded,filled", fillcolor="#fff7d6", color="#8a7a3a", '
    'fontname="Helvetica", fontsize=10, margin="0.08,0.03", height=0.3]',
    'edge [fontname="Helvetica", fontsize=8, color="#555555", fontcolor="#333377", arrowsize=0.6]',
)
# Node styles by role; nested clusters alternate fill colors by depth.
_STYLES = {
    "input": 'shape=invhouse, fillcolor="#d9f2d9", color="#3a7a3a"',
    "const": 'shape=box3d, style=filled, fillcolor="#e6e6e6", color="#666666"',
    "output": 'shape=house, fillcolor="#d6e6ff", color="#3a5a8a"',
    "literal": 'shape=plaintext, style="", fontcolor="#555555"',
    "inner_input": 'shape=ellipse, fillcolor="#eef8ee", color="#6a9a6a", fontsize=9',
    "head": 'fillcolor="#ffe0b3", color="#a06a1a"',
    "results": 'shape=invtrapezium, style=filled, fillcolor="#ffe0b3", color="#a06a1a"',
}
_HANG = 'style=dotted, arrowhead=none, color="#a06a1a"'  # head -> a held jaxpr's inputs
_CLUSTER_FILLS = ("#f4f4fb", "#fbf4ee", "#eef7f7")


def _quote(text: str) -> str:
    """Return ``text`` as a DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _param_texts(eqn: JaxprEqn) -> list[str]:
    """Return ``name=value`` for each param that is not a jaxpr, as the printer writes it."""
    texts = []
    for key in sorted(eqn.params):
        value = eqn.params[key]
        printer = _param_printers.get((eqn.primitive, key))
        if printer is not None:
            text = printer(value)
            if text is not None:  # None: a default left out
                texts.append(f"{key}={text}")
        elif not _holds_jaxprs(value):
            texts.append(f"{key}={format_param_value(value)}")
    return texts


def _tooltip(eqn: JaxprEqn, params: list[str]) -> str:
    info = eqn.source_info
    lines = []
    if info is not None and info.frame is not None:
        lines.append(str(info.frame))
    if info is not None and info.name_stack:
        lines.append("[" + "/".join(info.name_stack) + "]")
    lines.append(eqn.primitive.name + ("[" + " ".join(params) + "]" if params else ""))
    return "\n".join(lines)


class _Drawer:
    """Emits DOT statements for one jaxpr and everything nested in it."""

    def __init__(self, names: _Printer):
        self.names = names
        self.lines: list[str] = []
        self.counter = 0
        self.producer: dict[int, str] = {}  # id(var) -> node that makes it
        self.nodes: list[str] = []  # node ids in the order they were drawn
        # Edges go after every cluster: an edge written inside a cluster would pull
        # both of its nodes into it.
        self.edges: list = []  # statements, or (variable, target node) pairs

    def new_id(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * (depth + 1) + text)

    def node(self, depth: int, node_id: str, label: str, role: str | None, **attrs) -> None:
        extra = "".join(f", {k}={_quote(v)}" for k, v in attrs.items())
        style = f", {_STYLES[role]}" if role else ""
        self.nodes.append(node_id)
        self.emit(depth, f"{node_id} [label={label}{style}{extra}];")

    def var_label(self, var) -> str:
        return f"{self.names.name(var)}:{format_aval(var.aval)}"

    def edge(self, atom, target: str) -> None:
        """Draw the flow of variable ``atom`` into node ``target`` (literals are in labels)."""
        if isinstance(atom, Literal):
            return
        self.edges.append((atom, target))  # resolved by finish(): producers may come later

    def finish(self) -> list[str]:
        """Return the edge statements, each variable's edge starting at its producer."""
        lines = []
        for edge in self.edges:
            if isinstance(edge, str):
                lines.append(edge)
                continue
            atom, target = edge
            label = _quote(self.var_label(atom))
            source = self.producer[id(atom)]
            lines.append(f"  {source} -> {target} [label={label}, tooltip={label}];")
        return lines

    def binders(self, depth: int, variables, role: str, prefix: str) -> list[str]:
        ids = []
        for var in variables:
            node_id = self.new_id(prefix)
            self.producer[id(var)] = node_id
            self.node(depth, node_id, _quote(self.var_label(var)), role)
            ids.append(node_id)
        return ids

    def jaxpr(self, jaxpr: Jaxpr, depth: int, outputs_to: str | None) -> None:
        """Draw a jaxpr's body; its outputs go to ``outputs_to`` or to output nodes."""
        top = outputs_to is None
        consts = self.binders(depth, jaxpr.constvars, "const", "const")
        inputs = self.binders(depth, jaxpr.invars, "input" if top else "inner_input", "in")
        if top and inputs + consts:
            self.emit(depth, "{rank=source; " + " ".join(inputs + consts) + "}")
        self.equations(jaxpr.eqns, depth)
        outs = []
        for i, atom in enumerate(jaxpr.outvars):
            target = outputs_to
            if top:
                target = self.new_id("out")
                self.node(depth, target, _quote(f"out {i}"), "output")
                outs.append(target)
            if isinstance(atom, Literal):  # an output that is a constant gets a node
                source = self.new_id("lit")
                self.node(depth, source, _quote(self.names.atom(atom)), "literal")
                self.edges.append(f"  {source} -> {target};")
            else:
                self.edge(atom, target)  # type: ignore[arg-type]  # set when not top
        if outs:
            self.emit(depth, "{rank=sink; " + " ".join(outs) + "}")

    def equations(self, eqns, depth: int) -> None:
        """Draw equations; when their name stacks differ (say ``jvp`` and ``jvp/transpose``,
        a gradient's forward and backward passes), the equations of each stack are a cluster."""
        by_stack: dict[str, list] = {}
        for eqn in eqns:
            by_stack.setdefault(_stack(eqn), []).append(eqn)
        if len(by_stack) < 2:
            for eqn in eqns:
                self.equation(eqn, depth)
            return
        for stack, run in by_stack.items():
            self.emit(depth, f"subgraph {self.new_id('cluster_stack')} {{")
            self.emit(
                depth + 1,
                f'style="dotted"; color="#7777aa"; fontcolor="#555588"; label={_quote(stack)};',
            )
            for eqn in run:
                self.equation(eqn, depth + 1)
            self.emit(depth, "}")

    def equation(self, eqn: JaxprEqn, depth: int) -> None:
        params = _param_texts(eqn)
        tooltip = _tooltip(eqn, params)
        literals = [self.names.atom(x) for x in eqn.invars if isinstance(x, Literal)]
        label = _html_label(eqn.primitive.name, params, literals, format_effects(eqn.effects))
        inner = list(_held_jaxprs(eqn))
        node_id = self.new_id("eqn")
        if not inner:
            self.node(depth, node_id, label, None, tooltip=tooltip)
            for atom in eqn.invars:
                self.edge(atom, node_id)
            results = node_id
        else:
            results = self.new_id("res")
            fill = _CLUSTER_FILLS[depth % len(_CLUSTER_FILLS)]
            self.emit(depth, f"subgraph cluster_{node_id} {{")
            self.emit(
                depth + 1,
                f'style="rounded,filled"; fillcolor="{fill}"; color="#a06a1a"; label=""; '
                f"tooltip={_quote(tooltip)};",
            )
            self.node(depth + 1, node_id, label, "head", tooltip=tooltip)
            for atom in eqn.invars:
                self.edge(atom, node_id)
            for title, sub in inner:
                self.held(sub, title, node_id, results, depth + 1)
            self.node(
                depth + 1,
                results,
                _quote("results"),
                "results",
                tooltip=tooltip,
            )
            self.emit(depth, "}")
        for var in eqn.outvars:
            if not isinstance(var, DropVar):
                self.producer[id(var)] = results

    def held(self, sub: ClosedJaxpr | Jaxpr, title: str, head: str, results: str, depth: int):
        """Draw one held jaxpr as a cluster between the head and the results nodes."""
        jaxpr = sub.jaxpr if isinstance(sub, ClosedJaxpr) else sub
        cluster = self.new_id("cluster_")
        self.emit(depth, f"subgraph {cluster} {{")
        self.emit(depth + 1, f'style="dashed,rounded"; color="#888888"; label={_quote(title)};')
        first = len(self.nodes)
        self.jaxpr(jaxpr, depth + 1, results)
        self.emit(depth, "}")
        # Hang the body's inputs (or, without inputs, its first node) below the head.
        starts = [self.producer[id(v)] for v in jaxpr.constvars + jaxpr.invars]
        if not starts and len(self.nodes) > first:
            starts = [self.nodes[first]]
        for start in starts:
            self.edges.append(f"  {head} -> {start} [{_HANG}];")


def _held_jaxprs(eqn: JaxprEqn):
    """Yield ``(title, jaxpr)`` for each jaxpr the equation holds: ``jaxpr``, ``branches[1]``."""
    for key in sorted(eqn.params):
        value = eqn.params[key]
        if isinstance(value, ClosedJaxpr | Jaxpr):
            yield key, value
        elif isinstance(value, tuple | list):
            held = list(subjaxprs({key: value}))
            for i, item in enumerate(held):
                yield f"{key}[{i}]", item


def _stack(eqn: JaxprEqn) -> str:
    info = eqn.source_info
    return "/".join(info.name_stack) if info is not None and info.name_stack else ""


def _html_label(name: str, params: list[str], literals: list[str], effects: str = "") -> str:
    """Return an HTML-like label: the primitive in bold, its params small below.

    Literal operands are written in the label (in italics) rather than as nodes;
    effects (``{IO}``, as the printer writes them) in red, so that they stand out.
    """
    rows = [f"<b>{html.escape(name)}</b>"]
    if effects:
        rows[0] += f'<font color="#b00000">{html.escape(effects)}</font>'
    if literals:
        rows[0] += " <i>" + html.escape(", ".join(literals)) + "</i>"
    for text in params:
        if len(text) > _PARAM_CHARS:
            text = text[: _PARAM_CHARS - 1] + "…"
        rows.append(f'<font point-size="8">{html.escape(text)}</font>')
    return "<" + "<br/>".join(rows) + ">"


def to_dot(jaxpr: ClosedJaxpr | Jaxpr, *, title: str | None = None) -> str:
    """Return a Graphviz DOT graph of a jaxpr (no JAX counterpart).

    Inputs (green), constants (gray) and outputs (blue) are nodes at the top and
    bottom; each equation is a node labelled with its primitive and params, whose
    tooltip is the equation's source line and name stack; each edge carries the
    variable's name and type, named as ``str(jaxpr)`` names them. Equations that
    hold jaxprs (scan, cond, while, jit, custom rules, ...) are clusters holding
    one sub-cluster per jaxpr; equations of different name stacks (a gradient's
    forward and backward passes) are grouped by stack. Render the text with
    Graphviz, or use ``render``.
    """
    if not isinstance(jaxpr, ClosedJaxpr | Jaxpr):
        raise TypeError(f"to_dot expects a ClosedJaxpr or Jaxpr, got {type(jaxpr).__name__}")
    inner = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    names = _Printer(False, False, WIDTH)
    names.mark_unused(inner)
    names.jaxpr_block(inner, 0)  # names variables as str(jaxpr) does
    drawer = _Drawer(names)
    drawer.jaxpr(inner, 0, None)
    if title is None and inner.debug_info is not None:
        title = inner.debug_info.func_name
    head = ["digraph jaxpr {", *("  " + a + ";" for a in _GRAPH_ATTRS)]
    if title:
        head.append(f"  labelloc=t; label={_quote(title)};")
    return "\n".join(head + drawer.lines + drawer.finish() + ["}"]) + "\n"


_INSTALL_HINT = (
    "modjax's render needs Graphviz's `dot` program, which was not found on PATH. "
    "Install Graphviz (Debian/Ubuntu: `apt-get install graphviz`; Fedora: `dnf install "
    "graphviz`; macOS: `brew install graphviz`; conda: `conda install graphviz`), or "
    "write a .dot file with render(..., 'program.dot') and draw it elsewhere."
)


def render(
    fn_or_jaxpr: Callable | ClosedJaxpr | Jaxpr, path: str | os.PathLike, *args: Any, **kwargs: Any
) -> str:
    """Write a picture of a program to ``path`` (no JAX counterpart; see ``to_dot``).

    ``fn_or_jaxpr`` is a jaxpr, or a function traced with ``make_jaxpr`` on
    ``args``/``kwargs``. The format follows the suffix: ``.svg``, ``.png`` or
    ``.pdf`` run Graphviz's ``dot`` (a ``RuntimeError`` says how to install it
    when it is missing); ``.dot``/``.gv`` write the DOT text itself. Returns the
    path written.
    """
    from .tracing import make_jaxpr

    path = os.fspath(path)
    suffix = os.path.splitext(path)[1].lstrip(".").lower()
    if suffix not in GRAPHVIZ_FORMATS + _DOT_SUFFIXES:
        raise ValueError(
            f"render: cannot tell the format of {path!r}; use a name ending in "
            + ", ".join("." + s for s in GRAPHVIZ_FORMATS + _DOT_SUFFIXES)
        )
    if isinstance(fn_or_jaxpr, ClosedJaxpr | Jaxpr):
        if args or kwargs:
            raise TypeError("render: arguments are only for a function, not for a jaxpr")
        jaxpr = fn_or_jaxpr
    else:
        jaxpr = make_jaxpr(fn_or_jaxpr)(*args, **kwargs)
    text = to_dot(jaxpr)
    if suffix in _DOT_SUFFIXES:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path
    program = shutil.which("dot")
    if program is None:
        raise RuntimeError(_INSTALL_HINT)
    done = subprocess.run(
        [program, f"-T{suffix}", "-o", path], input=text.encode(), capture_output=True
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"render: Graphviz's dot failed writing {path!r}: "
            + done.stderr.decode(errors="replace").strip()
        )
    return path
