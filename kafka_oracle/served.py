"""Which Kafka artifacts the Maven registry serves, resolved with ``mvn`` (the table in docs/kafka-oracle.md).

For every release given, one throw-away Maven project depends on each artifact (main jar and ``test``
classifier) at that version and ``mvn dependency:resolve`` resolves them with their dependencies; Maven names
every artifact it cannot resolve, so one run per release tells what is served. Writes JSON rows
(release, artifact, classifier, served) to --out, merged with the rows already there for other releases, and
prints the markdown table of every release in the file (``--table`` prints it without resolving anything).

    python kafka_oracle/served.py --out kafka_oracle/served.json 0.10.0.1 0.10.1.1 ... 4.4.0
    python kafka_oracle/served.py --out kafka_oracle/served.json --table
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ARTIFACTS = ("kafka-metadata", "kafka-server-common", "kafka-clients", "kafka-raft", "kafka-streams")
SCALA = ("kafka_2.13", "kafka_2.12", "kafka_2.11")  # the broker jar: the newest Scala build a release has


def _pom(release: str, deps: list[tuple[str, str]]) -> str:
    body = "".join(
        f"<dependency><groupId>org.apache.kafka</groupId><artifactId>{a}</artifactId><version>{release}</version>"
        + (f"<classifier>{c}</classifier>" if c else "") + "</dependency>"
        for a, c in deps)
    return ("<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>"
            "<groupId>rollcheck</groupId><artifactId>served</artifactId><version>1</version>"
            f"<dependencies>{body}</dependencies></project>")


def _missing(release: str, deps: list[tuple[str, str]]) -> set[tuple[str, str]]:
    with tempfile.TemporaryDirectory() as d:
        (Path(d) / "pom.xml").write_text(_pom(release, deps))
        run = subprocess.run(["mvn", "-B", "-q", "dependency:resolve"], cwd=d, capture_output=True, text=True)
    if run.returncode == 0:
        return set()
    text = run.stdout + run.stderr
    gone = set()
    # "org.apache.kafka:kafka-metadata:jar:test:4.4.0" / "org.apache.kafka:kafka-metadata:jar:4.4.0"
    for m in re.finditer(r"org\.apache\.kafka:([\w.-]+):jar:(?:(test):)?" + re.escape(release), text):
        gone.add((m.group(1), m.group(2) or ""))
    if not gone:  # a dependency of a served artifact is missing: name the whole release as not resolving
        raise SystemExit(f"{release}: mvn failed without naming a Kafka artifact:\n{text[-2000:]}")
    return gone


def _key(release: str) -> list[int]:
    return [int(x) for x in release.split(".")]


def table(rows: list[dict[str, object]]) -> str:
    """The docs' table: one line per release, a cell per artifact ("main + test", "main only", "—")."""
    arts = [*ARTIFACTS[2:3], *ARTIFACTS[4:5], *ARTIFACTS[:2], *ARTIFACTS[3:4], *SCALA[:3]]
    served = {(r["release"], r["artifact"], r["classifier"]): r["served"] for r in rows}
    lines = ["| release | " + " | ".join(arts) + " |", "|---" * (len(arts) + 1) + "|"]
    for release in sorted({str(r["release"]) for r in rows}, key=_key):
        cells = []
        for art in arts:
            main, test = served.get((release, art, "main")), served.get((release, art, "test"))
            cells.append("main + test" if main and test else "main only" if main else "—")
        lines.append(f"| {release} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("releases", nargs="*")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--table", action="store_true", help="print the table of --out and resolve nothing")
    a = p.parse_args(argv)
    old: list[dict[str, object]] = json.loads(a.out.read_text()) if a.out.exists() else []
    if a.table:
        print(table(old))
        return 0
    if not a.releases:
        p.error("name at least one release (or --table)")
    rows = [r for r in old if r["release"] not in a.releases]
    for release in a.releases:
        deps = [(art, c) for art in (*ARTIFACTS, *SCALA) for c in ("", "test")]
        gone: set[tuple[str, str]] = set()
        # Maven stops at the first unresolvable batch: drop what it named and resolve the rest again.
        while True:
            missing = _missing(release, [d for d in deps if d not in gone])
            if not missing:
                break
            gone |= missing
        for art, c in deps:
            rows.append({"release": release, "artifact": art, "classifier": c or "main",
                         "served": (art, c) not in gone})
        print(f"{release}: {sum(1 for d in deps if d not in gone)} of {len(deps)} resolve", file=sys.stderr)
    rows.sort(key=lambda r: _key(str(r["release"])))
    a.out.write_text(json.dumps(rows, indent=1) + "\n")
    print(table(rows))
    return 0

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
