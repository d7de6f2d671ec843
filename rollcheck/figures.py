"""Pictures for the HTML report, drawn with Plotly (no hand-made SVG): a counterexample as a sequence
diagram, state-space growth per BFS level, and the mutation matrix.

The sequence diagram has one lifeline per node the trace's actions name (``broker=1``, ``instance=0``,
``voter=2``...; ``leader`` / ``controller`` parameters are the same kind of node as the trace's other
parameters) and one for the operator and the environment (actions with no node: an IBP roll, a ZooKeeper
outage). Each step is an arrow from the operator lifeline to the node it acts on, labelled with the
action; the step that violates the property is drawn in red and annotated with the property id.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import plotly.graph_objects as go
from plotly.offline import get_plotlyjs

from rollcheck.core.traces import Trace

NODE_KEYS = ("broker", "instance", "voter", "node", "member", "leader", "controller")
ROLE_KEYS = ("leader", "controller")  # a node in a role: drawn on that node's lifeline
OPERATOR = "operator / environment"


def plotly_script() -> str:
    """Plotly's JavaScript, inlined once per page so the report is self-contained."""
    return f"<script type='text/javascript'>{get_plotlyjs()}</script>"


def _nodes(params: Iterable[tuple[str, Any]], kind: str) -> list[str]:
    out = []
    for k, v in params:
        if k in NODE_KEYS and isinstance(v, int) and not isinstance(v, bool) and v >= 0:
            out.append(f"{kind if k in ROLE_KEYS else k} {v}")
    return out


def sequence_diagram(trace: Trace, property_id: str | None, title: str = "") -> go.Figure:
    """The trace as a sequence diagram: lifelines for nodes, arrows for actions, the violation in red."""
    steps = [s for s in trace.steps if s.action is not None]
    kind = next((k for s in steps for k, v in s.action.params if k in NODE_KEYS and k not in ROLE_KEYS  # type: ignore[union-attr]
                 and isinstance(v, int)), "node")
    lifelines = [OPERATOR]
    for s in steps:
        for n in _nodes(s.action.params, kind):  # type: ignore[union-attr]
            if n not in lifelines:
                lifelines.append(n)
    x_of = {name: i for i, name in enumerate(lifelines)}
    depth = len(steps) + 1
    fig = go.Figure()
    for x in x_of.values():
        fig.add_trace(go.Scatter(x=[x, x], y=[0, -depth], mode="lines", line={"dash": "dot", "color": "#888"},
                                 hoverinfo="skip", showlegend=False))
    fig.add_trace(go.Scatter(x=list(x_of.values()), y=[0.4] * len(x_of), mode="text", text=list(x_of),
                             textfont={"size": 13}, hoverinfo="skip", showlegend=False))
    for i, s in enumerate(steps, start=1):
        a = s.action
        assert a is not None
        last = i == len(steps) and property_id is not None
        color = "#b00020" if last else "#1f4e79"
        label = a.name + ("(" + ", ".join(f"{k}={v}" for k, v in a.params if k not in NODE_KEYS) + ")"
                          if any(k not in NODE_KEYS for k, _ in a.params) else "")
        targets = _nodes(a.params, kind)
        if not targets:
            fig.add_trace(go.Scatter(x=[0], y=[-i], mode="markers+text", text=[label], textposition="middle right",
                                     marker={"size": 10, "color": color}, showlegend=False, hovertext=repr(a)))
        for t in dict.fromkeys(targets):
            fig.add_annotation(x=x_of[t], y=-i, ax=0, ay=-i, xref="x", yref="y", axref="x", ayref="y",
                               showarrow=True, arrowhead=2, arrowwidth=2, arrowcolor=color, text="")
            fig.add_annotation(x=x_of[t] / 2, y=-i + 0.28, text=html.escape(label[:80]), showarrow=False,
                               font={"size": 11, "color": color})
        if last:
            fig.add_annotation(x=len(lifelines) - 0.5, y=-i, text=f"<b>{html.escape(property_id or '')} violated</b>",
                               showarrow=False, font={"color": "#b00020", "size": 13}, xanchor="left")
            fig.add_shape(type="rect", x0=-0.4, x1=len(lifelines) - 0.6, y0=-i - 0.4, y1=-i + 0.45,
                          line={"color": "#b00020"}, fillcolor="rgba(176,0,32,0.07)")
    fig.update_layout(title=title, height=140 + 46 * depth, margin={"l": 20, "r": 160, "t": 50, "b": 20},
                      plot_bgcolor="white", xaxis={"visible": False, "range": [-0.6, len(lifelines) + 0.4]},
                      yaxis={"visible": False, "range": [-depth - 0.5, 0.8]})
    return fig


def growth_chart(series: Mapping[str, Sequence[int]], title: str = "state-space growth per BFS level") -> go.Figure:
    """Distinct new states per BFS level, one line per protocol / config / profile."""
    fig = go.Figure()
    for name, levels in series.items():
        fig.add_trace(go.Scatter(x=list(range(len(levels))), y=list(levels), mode="lines+markers", name=name))
    fig.update_layout(title=title, xaxis_title="BFS level (depth)", yaxis_title="new distinct states",
                      yaxis_type="log", height=420, margin={"l": 60, "r": 20, "t": 50, "b": 50})
    return fig


def mutation_table(mutants: Sequence[Mapping[str, Any]], checkers: Sequence[str]) -> str:
    """The mutation matrix: one row per mutant, seconds to kill per checker, the first killer."""
    e = html.escape
    rows = ["<table class='mutants'><tr><th>mutant</th><th>story</th>"
            + "".join(f"<th>{e(c)}</th>" for c in checkers) + "<th>first killer</th></tr>"]
    for m in mutants:
        kills = {k["checker"]: k for k in m["kills"]}
        cells = []
        for c in checkers:
            k = kills.get(c)
            if k is None:
                cells.append("<td></td>")
            elif k["killed"]:
                props = e(", ".join(k["properties"]))
                cells.append(f"<td class='ok' title='{props}'>{k['elapsed_seconds']:.1f} s</td>")
            else:
                cells.append(f"<td class='violated'>{'error' if k['status'] == 'error' else 'survived'}</td>")
        first = m.get("first_killed_by")
        rows.append(f"<tr><td>{e(m['protocol'])}:{e(m['variant'])}</td><td>{e(m['story'])}</td>{''.join(cells)}"
                    f"<td class='{'ok' if first else 'violated'}'>{e(first or 'SURVIVED')}</td></tr>")
    rows.append("</table>")
    return "\n".join(rows)


def figure_html(fig: go.Figure, div_id: str) -> str:
    return str(fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                           config={"displaylogo": False, "responsive": True}))
