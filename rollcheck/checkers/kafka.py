"""The Kafka oracle in the gate: a protocol config checked against Apache Kafka's released classes
(:mod:`rollcheck.oracle.check`), one cell per protocol x config x profile covering the tier's releases (``ci``: the
releases whose ``tiers`` name ci, on the ci configs; ``nightly``: every release, on the gate configs). A release
whose answers differ from the reference's is a disagreement (the gate fails); Java or Maven missing, or a release
the registry does not serve (offline), skips the cell with the one line saying what is missing, as Apalache's
cells are skipped. The report's ``stats["matrix"]`` is the release x verdict table the HTML report shows."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from typing import Any

from rollcheck.checkers.base import Capabilities, Cell, CellSpec, CheckerBase, Placement, reusable
from rollcheck.checkers.inputs import ORACLE, PROPERTIES, REFERENCE, CellInputs, java_version
from rollcheck.checkers.report import VIOLATED, CheckContext, CheckerReport, PropertyVerdict, Status, unavailable
from rollcheck.core.errors import UserError
from rollcheck.core.traces import write_json_atomic

MATRIX_HEADER = ["release", "line", "states", "decisions", "disagreements", "verdict"]
PROFILE = "kafka"  # the oracle compares with Apache Kafka's code: the profile that models it
# Simulate walks replayed per cell by a binding with trace replay (rollcheck.oracle.replay), beside the config's
# counterexamples and witnesses: a few in the ci tier, more at night.
TRACES = {"ci": 2, "nightly": 16}


def tier_releases(binding: Any, tier: str) -> list[Any]:
    """The releases a tier checks: ``nightly`` every one, any other tier those whose ``tiers`` name it."""
    return [r for r in binding.releases if tier == "nightly" or tier in r.tiers]


def check_kafka(cell: Cell, ctx: CheckContext) -> CheckerReport:
    from rollcheck.oracle import report as oracle_report
    from rollcheck.oracle.check import binding_of, run_check

    entry, label, config = cell.entry, cell.label, cell.config
    report = CheckerReport("kafka", entry.name, label, config.profile)
    if entry.oracle is None:
        report.status = Status.SKIPPED
        report.message = f"protocol {entry.name} has no Kafka oracle binding"
        return report
    if PROFILE in entry.profiles and config.profile != PROFILE:
        report.status = Status.SKIPPED
        report.message = f"the Kafka oracle compares with Apache Kafka's code: it runs under profile {PROFILE}"
        return report
    problem = _java_problem()
    if problem is not None:
        return _unavailable(report, problem)
    try:
        binding = binding_of(entry)
    except UserError as exc:
        report.status = Status.ERROR
        report.message = str(exc)
        return report
    tier = str(cell.settings.get("tier") or "ci")
    releases = tier_releases(binding, tier)
    if not releases:
        report.status = Status.SKIPPED
        report.message = f"{entry.name}'s binding lists no release of tier {tier}"
        return report
    rows: list[list[str]] = []
    missing: list[str] = []
    disagree: list[str] = []
    violated: list[str] = []
    known: list[str] = []
    runs: list[dict[str, Any]] = []
    for release in releases:
        try:
            result = run_check(entry, release.name, label, profile=config.profile, progress=ctx.progress,
                               traces=TRACES.get(tier, TRACES["ci"]))
        except UserError as exc:
            if _is_unavailable(exc):
                missing.append(f"{release.name}: {exc}")
                rows.append([release.name, release.line, "", "", "", "unavailable"])
                continue
            report.status = Status.ERROR
            report.message = f"Kafka {release.name}: {exc}"
            rows.append([release.name, release.line, "", "", "", "error"])
            break
        report.elapsed += result.timings.get("total_seconds", 0.0)
        rows.append(oracle_report.matrix_row(result))
        folder = ctx.out_dir / "kafka" / f"{entry.name}-{label}-{release.name}"
        doc = oracle_report.write_run(result, folder, folder) if result.verdict != "agree" else \
            oracle_report.summary(result)
        runs.append({k: doc[k] for k in ("release", "verdict", "states", "decisions", "distinct_requests",
                                         "round_trips", "kinds", "timings")})
        known.extend(f"{release.name}: {bug} ({n} disagreements)" for bug, n in result.known_bugs.items())
        if result.unexplained:
            first = next((f for f in result.disagreements if f.known is None), None)
            disagree.append(f"Kafka {release.name}: {result.unexplained} disagreements"
                            + (f", first {first.kind}: {first.difference} (ITF: {folder / 'disagreements'})"
                               if first else ""))
        for v in result.violations:
            pid = f"{v['property']}@kafka-{release.name}"
            violated.append(pid)
            path = folder / "counterexamples" / f"{v['property']}.itf.json"
            report.properties[pid] = PropertyVerdict(pid, VIOLATED, f"{v['description']} (config as Kafka "
                                                     f"{release.name})", trace_path=str(path))
    report.stats = {"tier": tier, "releases": runs, "unavailable_releases": missing,
                    "matrix": {"title": f"{entry.name} / {label} against Kafka releases", "header": MATRIX_HEADER,
                               "rows": rows}}
    if report.status == Status.ERROR:
        return report
    if disagree:
        report.status = Status.DIVERGED
        report.message = "Kafka and the reference disagree: " + "; ".join(disagree)
    elif violated:
        report.status = Status.VIOLATED
    elif missing and not runs:
        return _unavailable(report, "; ".join(missing))
    elif missing:
        report.message = "not checked (unavailable): " + "; ".join(missing)
    if known and report.status not in (Status.DIVERGED,):
        # A release with a known Kafka bug answers as the bug says it would: said, not a new finding.
        report.message = "; ".join(filter(None, [report.message, "known Kafka bugs: " + "; ".join(known)]))
    if runs:
        write_json_atomic(ctx.out_dir / "kafka" / f"{entry.name}-{label}-matrix.json", report.stats,
                          root=ctx.out_dir)
    return report


def _unavailable(report: CheckerReport, why: str) -> CheckerReport:
    return unavailable(report, why)


def _is_unavailable(exc: UserError) -> bool:
    try:
        from rollcheck.oracle.build import OracleUnavailable
    except ImportError:
        return False
    return isinstance(exc, OracleUnavailable)


def _java_problem() -> str | None:
    try:
        from rollcheck.oracle.tools import java_problem
    except ImportError:
        return "the Kafka oracle's engine (rollcheck.oracle.tools) is not installed"
    return java_problem()


class KafkaChecker(CheckerBase):
    name = "kafka"
    description = "Apache Kafka's released classes as an oracle (Java and Maven)"
    order = 75
    module = "rollcheck.oracle.check"
    # Each release's JVM and first build cost seconds: in the ci tier only the ci configs (small) are checked.
    capabilities = Capabilities(ci_configs_only=True, out_dirs=("kafka",))

    def tool_problem(self) -> str | None:
        return _java_problem()

    def cell_spec(self, placement: Placement) -> CellSpec:
        return CellSpec(differential_only=placement.compare_only, settings={"tier": placement.tier or "ci"})

    def rerun(self, report: CheckerReport, values: Mapping[str, Any]) -> str:
        release = "all" if report.stats.get("tier") == "nightly" else next(
            (r["release"] for r in report.stats.get("releases", [])), "all")
        return (f"rollcheck kafka {shlex.quote(report.protocol)} --release {shlex.quote(release)} "
                f"--config {shlex.quote(report.config)} --profile {report.profile}")

    def run(self, cell: Cell, ctx: CheckContext) -> CheckerReport:
        return check_kafka(cell, ctx)

    deterministic = True  # the released jars of a version do not change; the walks it replays are seeded

    def inputs(self, cell: Cell, ctx: CheckContext) -> CellInputs:
        # The reference, its properties and its oracle binding; the Java adapters (their whole folder) and the
        # jars each release of the tier was built against.
        adapters, jars = _oracle_inputs(cell)
        tier = str(cell.settings.get("tier") or "ci")
        return self.declare(ctx, reads=frozenset({REFERENCE, PROPERTIES, ORACLE}), paths=adapters,
                            tools={"java": java_version, f"kafka-jars {cell.entry.name} {tier}": jars})

    def cacheable(self, report: CheckerReport) -> bool:
        # A disagreement is kept out: its ITF folders under the run's output are what it is investigated by.
        return (reusable(report) and report.status != Status.DIVERGED
                and not report.stats.get("unavailable_releases"))


def _oracle_inputs(cell: Cell) -> tuple[tuple[Any, ...], Any]:
    """What the builds of the cell's protocol compile (its adapters folder, the common request loop, the source
    folders each adapter's pom adds) and a probe of the jars its tier's releases run on."""
    from rollcheck.oracle.build import common_sources, pom_sources, repo_root
    from rollcheck.oracle.check import binding_of

    try:
        binding = binding_of(cell.entry)
    except UserError as exc:
        why = str(exc)
        return (), lambda: f"no binding: {why}"
    tier = str(cell.settings.get("tier") or "ci")
    adapters_dir = repo_root() / binding.adapters_dir
    releases = [(r.name, r.adapter) for r in tier_releases(binding, tier)]
    extra = [s for d in sorted(adapters_dir.iterdir()) if d.is_dir() for s in pom_sources(d)] \
        if adapters_dir.is_dir() else []
    return (adapters_dir, common_sources(), *dict.fromkeys(extra)), lambda: release_jars(adapters_dir, releases)


def release_jars(adapters_dir: Any, releases: list[tuple[str, str]]) -> str:
    """Each release with the jars its adapter was built against (names, sizes, modification times), "not built"
    for one not built yet (the key changes once it is: one more run, never a stale result)."""
    import hashlib
    import json
    from pathlib import Path

    from rollcheck.oracle.build import cache_root, sources_hash

    out = []
    for name, adapter in releases:
        try:
            folder = cache_root() / "kafka-oracle" / f"{adapter}-{sources_hash(Path(adapters_dir) / adapter)}" / name
            doc = json.loads((folder / "built.json").read_text(encoding="utf-8"))
            h = hashlib.sha256()
            for entry in doc.get("classpath", []):
                path = Path(entry)
                if path.is_file():
                    st = path.stat()
                    h.update(f"{path.name}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
            out.append(f"{name} {adapter} {h.hexdigest()}")
        except (OSError, ValueError, AttributeError) as exc:
            out.append(f"{name} {adapter} not built ({type(exc).__name__})")
    return "; ".join(out)


CHECKER = KafkaChecker()
