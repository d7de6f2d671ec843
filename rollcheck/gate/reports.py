"""Gate outputs: JSON summary, JUnit XML and a self-contained HTML report."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rollcheck.checkers import BOUNDED, HOLDS, PROVED, REACHED, VACUOUS, VIOLATED, Status, all_checkers
from rollcheck.core.traces import write_json_atomic, write_text_atomic
from rollcheck.gate import GateResult, kept_names
from rollcheck.gate.tables import RUN_HEADER, run_rows, variant_differential_line, verdict_matrix
from rollcheck.runtime.rundir import record_run


def junit_xml(result: GateResult) -> str:
    """One ``testcase`` per property x checker x config; a violation's trace is the failure text."""
    suites = ET.Element("testsuites", name="rollcheck gate", time=f"{result.elapsed:.3f}")
    by_suite: dict[str, list[ET.Element]] = {}
    counts: dict[str, dict[str, int]] = {}
    for r in result.reports:
        suite_name = f"{r.protocol}.{r.config}.{r.profile}"
        cases = by_suite.setdefault(suite_name, [])
        first = len(cases)
        c = counts.setdefault(suite_name, {"tests": 0, "failures": 0, "errors": 0, "skipped": 0})
        if r.status == Status.ERROR:
            case = ET.Element("testcase", classname=suite_name, name=f"[{r.checker}] run",
                              time=f"{r.elapsed:.3f}")
            err = ET.SubElement(case, "error", message=r.message)
            err.text = str(r.stats.get("traceback", r.message))
            cases.append(case)
            c["tests"] += 1
            c["errors"] += 1
            continue
        for v in r.properties.values():
            case = ET.Element("testcase", classname=suite_name, name=f"{v.id} [{r.checker}]",
                              time=f"{r.elapsed / max(len(r.properties), 1):.3f}")
            c["tests"] += 1
            if v.status == VIOLATED:
                fail = ET.SubElement(case, "failure", message=v.message or f"{v.id} violated")
                fail.text = (v.trace_text or v.message) + (f"\nITF: {v.trace_path}" if v.trace_path else "")
                c["failures"] += 1
            elif v.status == VACUOUS:
                fail = ET.SubElement(case, "failure", message=f"{v.id} vacuous: the story it names never happened")
                fail.text = v.message
                c["failures"] += 1
            elif v.status not in (HOLDS, PROVED, REACHED):
                # A bounded verdict's message says it all ("holds up to depth 6"); no "x: x" repeats.
                text = v.message if v.status == BOUNDED or v.message.startswith(v.status) else \
                    f"{v.status}: {v.message}".strip(": ")
                ET.SubElement(case, "skipped", message=text)
                c["skipped"] += 1
            cases.append(case)
        if r.cached is not None:  # each of its cases says where its result came from
            for case in cases[first:]:
                _cached_properties(case, r)
    for f in result.findings:
        if f.kind != "disagreement":
            continue
        suite_name = f"{f.protocol}.{f.config}.{f.profile}"
        case = ET.Element("testcase", classname=suite_name, name=f"agreement [{f.checker}]")
        fail = ET.SubElement(case, "failure", message="checkers disagree")
        fail.text = f.message
        by_suite.setdefault(suite_name, []).append(case)
        c = counts.setdefault(suite_name, {"tests": 0, "failures": 0, "errors": 0, "skipped": 0})
        c["tests"] += 1
        c["failures"] += 1
    for name, cases in by_suite.items():
        suite = ET.SubElement(suites, "testsuite", {"name": name, **{k: str(v) for k, v in counts[name].items()}})
        suite.extend(cases)
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def _cached_properties(case: ET.Element, r: Any) -> None:
    props = ET.Element("properties")
    ET.SubElement(props, "property", name="cached", value="true")
    for name in ("run", "time", "commit", "key"):
        ET.SubElement(props, "property", name=f"cached.{name}", value=str(r.cached.get(name) or ""))
    case.insert(0, props)


_STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}
th{background:#f3f3f3}.holds,.proved,.ok,.agree{color:#176f2c}.violated,.error,.disagree{color:#b00020;font-weight:bold}
.unknown,.not-checked,.skipped,.known-bug{color:#8a6d00}pre{background:#f7f7f7;padding:1em;overflow:auto}
"""


def html_report(result: GateResult) -> str:
    """A self-contained page (Plotly inlined, no external assets): verdict, findings, the property x checker
    matrix, state-space growth per BFS level, each counterexample as a sequence diagram, the mutation matrix."""
    from rollcheck.figures import figure_html, growth_chart, mutation_table, plotly_script, sequence_diagram

    e = html.escape
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>rollcheck gate</title>"
             f"<style>{_STYLE}</style>{plotly_script()}</head><body>",
             f"<h1>rollcheck gate: <span id='verdict' class='{'ok' if result.exit_code == 0 else 'violated'}'>"
             f"{e(result.exit_code.name)}</span></h1>",
             _plan_line(result)]
    header, rows = verdict_matrix(result.reports, result.mutants)
    parts.append(_table("summary", header, rows, status_columns=range(2, len(header))))
    if result.skipped:
        parts.append("<p>Not run: " + e("; ".join(f"{s['checker']} ({s['reason']})" for s in result.skipped))
                     + "</p>")
    if result.findings:
        parts.append("<h2>Findings</h2><table id='findings'><tr><th>kind</th><th>where</th><th>checker</th>"
                     "<th>message</th></tr>")
        for f in result.findings:
            parts.append(f"<tr><td class='{e(f.kind)}'>{e(f.kind)}</td><td>{e(f.protocol)}/{e(f.config)}/"
                         f"{e(f.profile)}</td><td>{e(f.checker)}</td><td>{e(f.message)}</td></tr>")
        parts.append("</table>")
    # The levels of the checker whose count sizes the cells (the local explorer): one curve per config.
    sizing = {c.name for c in all_checkers() if c.capabilities.sizes_cells}
    growth = {f"{r.protocol}/{r.config}/{r.profile}": r.stats["levels"] for r in result.reports
              if r.checker in sizing and isinstance(r.stats.get("levels"), list) and r.stats["levels"]}
    if growth:
        parts.append("<h2>State-space growth</h2>" + figure_html(growth_chart(growth), "growth"))
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for r in result.reports:
        groups.setdefault(r.key, []).append(r)
    n_diagram = 0
    for (proto, conf, prof), reports in groups.items():
        parts.append(f"<h2>{e(proto)} / {e(conf)} / {e(prof)}</h2>")
        parts.append(_table("", list(RUN_HEADER[3:]), [row[3:] for row in run_rows(
            reports, result.config.context)], status_columns=[1]))
        # A checker's own matrix (``stats["matrix"]``: title, header, rows; the Kafka oracle's release x verdict),
        # its last column a status.
        for r in reports:
            m = r.stats.get("matrix")
            if isinstance(m, dict) and isinstance(m.get("header"), list) and isinstance(m.get("rows"), list):
                parts.append(f"<h3>{e(str(m.get('title') or r.checker))}</h3>" + _table(
                    "", [str(h) for h in m["header"]], [[str(c) for c in row] for row in m["rows"]],
                    status_columns=[len(m["header"]) - 1]))
        ids: list[str] = []
        for r in reports:
            for pid in r.properties:
                if pid not in ids:
                    ids.append(pid)
        parts.append("<table><tr><th>property</th>" + "".join(f"<th>{e(r.checker)}</th>" for r in reports)
                     + "</tr>")
        for pid in ids:
            row = [f"<td>{e(pid)}</td>"]
            for r in reports:
                v = r.properties.get(pid)
                status = "error" if r.status == Status.ERROR else (v.status if v else "-")
                row.append(f"<td class='{e(status.replace(' ', '-'))}' title='{e(v.message if v else '')}'>"
                           f"{e(status)}</td>")
            parts.append("<tr>" + "".join(row) + "</tr>")
        parts.append("</table>")
        for r in reports:
            for v in r.properties.values():
                if v.status == VIOLATED and v.trace is not None and v.trace.steps:
                    n_diagram += 1
                    fig = sequence_diagram(v.trace, v.id, f"{v.id} counterexample ({r.checker}, "
                                           f"{len(v.trace.steps) - 1} steps)")
                    parts.append(f"<h3>{e(v.id)} counterexample ({e(r.checker)})</h3>"
                                 + figure_html(fig, f"cex-{n_diagram}"))
                    if v.trace_text:
                        parts.append(f"<details><summary>states</summary><pre>{e(v.trace_text)}</pre></details>")
    if result.mutants:
        sc = result.mutants["scores"]
        parts.append(f"<h2>Mutation matrix</h2><p>killed {sc['killed']} of {sc['mutants']}; per checker: "
                     + e(", ".join(f"{c} {v['killed']}/{v['run']}" for c, v in sc["per_checker"].items())) + "</p>")
        parts.append(mutation_table(result.mutants["mutants"], result.mutants["checkers"]))
        if variant_differential_line(result.mutants):
            parts.append(f"<p id='variant-differentials'>{e(variant_differential_line(result.mutants))}</p>")
    parts.append("</body></html>")
    return "\n".join(parts)


def _plan_line(result: GateResult) -> str:
    plan = result.plan or {}
    est = plan.get("estimated_wall_seconds")
    return (f"<p id='plan'>tier <b>{html.escape(result.config.tier)}</b>, {len(result.reports)} checker runs on "
            f"{plan.get('parallel', 1)} slots in {result.elapsed:.1f} s"
            + (f" (estimated {est:.1f} s from the last run)" if est is not None else " (no earlier run to estimate)")
            + f"; protocols {html.escape(', '.join(result.config.protocols))}; profiles "
            f"{html.escape(', '.join(result.config.profiles))}." + _cache_line(result) + "</p>")


def _cache_line(result: GateResult) -> str:
    c = result.cache
    if c is None:
        return ""
    cells = len((result.plan or {}).get("cells") or [])
    return (f" <span id='cache'>{c['hits']} of {cells} cells' results from the cache "
            f"{html.escape(str(c['dir']))} (marked cached), {c['stored']} stored.</span>")


def _table(table_id: str, header: list[str], rows: list[list[str]], status_columns: Iterable[int] = ()) -> str:
    """An HTML table; cells of ``status_columns`` are classed by their first word (ok, violated, ...)."""
    e = html.escape
    out = [f"<table{f' id={table_id!r}' if table_id else ''}><tr>" + "".join(f"<th>{e(h)}</th>" for h in header)
           + "</tr>"]
    cols = set(status_columns)
    for row in rows:
        tds = []
        for i, v in enumerate(row):
            cls = f" class='{e(v.split(' ', 1)[0])}'" if i in cols and v else ""
            tds.append(f"<td{cls}>{e(v)}</td>")
        out.append("<tr>" + "".join(tds) + "</tr>")
    out.append("</table>")
    return "".join(out)


def write_outputs(result: GateResult, out_dir: Path) -> dict[str, str]:
    """``summary.json``, ``junit.xml`` and ``report.html`` under ``out_dir``, each written atomically (a link
    standing at one of those names is replaced, never written through), then the run's manifest."""
    out_dir = Path(out_dir)
    paths = {
        "summary": write_json_atomic(out_dir / "summary.json", result.to_json(), root=out_dir),
        "junit": write_text_atomic(out_dir / "junit.xml", junit_xml(result), root=out_dir),
        "html": write_text_atomic(out_dir / "report.html", html_report(result), root=out_dir),
    }
    if out_dir.resolve() == result.config.out_dir.resolve():
        record_run(out_dir, result.preexisting, kept_names(result.config))
    return {k: str(v) for k, v in paths.items()}
