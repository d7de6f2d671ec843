"""The export-test round trip on every broken variant of every protocol (not a test).

    python benchmarks/export_roundtrip.py                        # every protocol's variants
    python benchmarks/export_roundtrip.py --protocol features    # one protocol (repeatable)

For each broken variant it runs the gate's mutation cell (the explorer on the variant's own config, as
``rollcheck gate`` does), exports every counterexample trace the cell wrote with ``rollcheck.explore.regression``
(what ``rollcheck export-test`` and ``rollcheck gate --export-tests`` call), then runs each exported file with
pytest in a fresh process: once as it is (on the reference: it must PASS) and once with
``ROLLCHECK_EXPORT_VARIANT=<the variant>`` (on the bug: it must FAIL). A variant round-trips when it has at
least one exported trace and every one of them behaves so. A variant with no trace to export (killed by a
vacuous witness, which has no counterexample, or not killed) is listed with the reason. Each row also says how
the reference passes: the fix disables a recorded step, or the property holds on the states it reaches.

Rows go to ``benchmarks/results/export_roundtrip-<UTC time>-<commit>.json`` with the machine and the commit;
exit 1 if a variant with a trace does not round-trip.
"""

from __future__ import annotations

import argparse
import os
import runpy
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchresults import write as write_results

from rollcheck.checkers import VACUOUS, VIOLATED, CheckContext
from rollcheck.core.registry import protocol_names
from rollcheck.explore.regression import VARIANT_ENV, check_regression, export_reports
from rollcheck.gate.cellrun import run_cells
from rollcheck.gate.mutants import mutant_cells


def _pytest(path: Path, variant: str | None, cwd: Path) -> tuple[int, str]:
    """Run one exported file in a fresh process, from a directory outside the repository."""
    env = {k: v for k, v in os.environ.items() if k != VARIANT_ENV}
    if variant:
        env[VARIANT_ENV] = variant
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0", str(path)],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600, check=False)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("E ") or "passed" in ln or "failed" in ln]
    return proc.returncode, (lines[0] if lines else proc.stdout.strip()[-300:])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--protocol", action="append", default=None, help="only this protocol (repeatable)")
    parser.add_argument("--parallel", type=int, default=os.cpu_count() or 1, help="mutation cells at once")
    parser.add_argument("--json", type=Path, default=None, help="write the rows here instead")
    args = parser.parse_args()
    protocols = args.protocol or protocol_names()
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="export-roundtrip-") as tmp:
        work = Path(tmp)
        ctx = CheckContext(out_dir=work / "gate")
        results = run_cells(mutant_cells(protocols, ["explore"], subdir="mutants"), ctx, parallel=args.parallel)
        found_at = time.perf_counter() - t0
        for res in results:
            cell, report = res.cell, res.report
            assert cell.variant is not None
            row: dict[str, Any] = {"protocol": cell.entry.name, "variant": cell.variant, "config": cell.label,
                                   "profile": cell.config.profile, "killed_by": [], "traces": []}
            row["killed_by"] = [f"{pid} ({v.status})" for pid, v in report.properties.items()
                                if v.status in (VIOLATED, VACUOUS)]
            written, errors = export_reports([report], work / "tests")
            for _report, message in errors:
                row["traces"].append({"error": message, "round_trips": False})
            for e in written:
                outcome = check_regression(runpy.run_path(e.path)["TRACE"])
                ref_code, ref_line = _pytest(Path(e.path), None, work)
                bug_code, bug_line = _pytest(Path(e.path), cell.variant, work)
                row["traces"].append({
                    "property": e.property_id, "steps": e.steps, "test": e.test,
                    "reference_passes": ref_code == 0, "variant_fails": bug_code == 1,
                    "round_trips": ref_code == 0 and bug_code == 1,
                    "how_the_reference_passes": ("disables step " + str(outcome.disabled_step)
                                                 if outcome.disabled_step is not None else "property holds")
                    if outcome.passed else None,
                    "reference_message": outcome.message, "variant_pytest": bug_line,
                    "reference_pytest": ref_line if ref_code != 0 else "passed"})
            if not row["traces"]:
                vacuous = [pid for pid, v in report.properties.items() if v.status == VACUOUS]
                row["reason"] = (f"no counterexample trace: killed only by vacuous witness(es) {', '.join(vacuous)} "
                                 "(a witness no reachable state satisfies has no trace)" if vacuous else
                                 f"no counterexample trace: the explorer did not kill it ({report.status}: "
                                 f"{report.message})")
            row["round_trips"] = bool(row["traces"]) and all(t["round_trips"] for t in row["traces"])
            rows.append(row)
            status = "round-trips" if row["round_trips"] else row.get("reason", "DOES NOT ROUND-TRIP")
            hows = ", ".join(f"{t.get('property')}: {t.get('how_the_reference_passes') or t.get('error')}"
                             for t in row["traces"])
            print(f"{row['protocol']:16} {row['variant']:8} {status}  [{hows}]", flush=True)
    with_trace = [r for r in rows if r["traces"]]
    ok = [r for r in with_trace if r["round_trips"]]
    elapsed = time.perf_counter() - t0
    summary = {"variants": len(rows), "with_trace": len(with_trace), "round_trip": len(ok),
               "without_trace": [f"{r['protocol']}:{r['variant']}: {r['reason']}" for r in rows if not r["traces"]],
               "failing": [f"{r['protocol']}:{r['variant']}" for r in with_trace if not r["round_trips"]],
               "seconds_finding": round(found_at, 1), "seconds_total": round(elapsed, 1)}
    rows.append({"summary": summary})
    path = write_results("export_roundtrip", rows, {"protocols": protocols, "checker": "explore",
                                                    "parallel": args.parallel}, args.json)
    print(f"{len(ok)}/{len(rows) - 1} variants round-trip ({len(with_trace)} have a counterexample trace; "
          f"{len(with_trace) - len(ok)} of those fail); {elapsed:.0f} s; rows written to {path}")
    return 0 if len(ok) == len(with_trace) else 1


if __name__ == "__main__":
    sys.exit(main())
