"""The docs cannot drift (issue #21 item 6).

Every ``$ rollcheck ...`` line in a fenced block of README.md and docs/ (docs/extending.md excepted:
tests/test_extending.py runs its commands) must parse with the real command-line parser and name protocols,
configs and variants that exist; a few cheap documented commands run for real; README.md stays short, its
test command stays the one CI runs, and every relative link (and anchor) in README.md and docs/ resolves.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.cli import build_parser
from rollcheck.core.registry import get_protocol, protocol_names

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
OWN_TESTS = {DOCS / "extending.md"}  # tests/test_extending.py follows that page literally
README_LIMIT = 12 * 1024
EXPLORE_OUT = Path("rollcheck-out/explore")  # explore's default --out, as the worked example shows it

FENCE = re.compile(r"^\s*(```|~~~)")


def doc_files() -> list[Path]:
    return [README, *sorted(DOCS.rglob("*.md"))]


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _split_fenced(path: Path) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(lines inside fenced code blocks, lines outside them), each with its 1-based line number."""
    inside: list[tuple[int, str]] = []
    outside: list[tuple[int, str]] = []
    fenced = False
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            fenced = not fenced
            continue
        (inside if fenced else outside).append((n, line))
    return inside, outside


def documented_commands() -> list[tuple[str, str]]:
    """(``file:line``, the command without its ``$ ``) for every ``$ rollcheck `` line in a fenced block."""
    found = []
    for path in doc_files():
        if path in OWN_TESTS:
            continue
        for n, line in _split_fenced(path)[0]:
            text = line.strip()
            if text.startswith("$ rollcheck "):
                found.append((f"{_rel(path)}:{n}", text[2:]))
    return found


def command_argv(line: str) -> list[str]:
    """The arguments after ``rollcheck``: only the part before a pipe, without a trailing ``# comment`` and
    without a redirection."""
    line = line.split("|", 1)[0]
    line = re.split(r"\s#", line, maxsplit=1)[0]
    words = shlex.split(line)
    for i, word in enumerate(words):
        if re.match(r"^\d*(>|<|&>)", word):
            words = words[:i]
            break
    assert words and words[0] == "rollcheck", line
    return words[1:]


COMMANDS = documented_commands()
# Each documented command as its words (``rollcheck list``), without its comment.
DOCUMENTED = {shlex.join(["rollcheck", *command_argv(line)]) for _, line in COMMANDS}


def _as_list(value: object) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return [str(value)]


def test_the_docs_show_commands() -> None:
    files = {where.rsplit(":", 1)[0] for where, _ in COMMANDS}
    assert "README.md" in files
    assert len(files) >= 10, files
    assert len(COMMANDS) >= 40, len(COMMANDS)


@pytest.mark.parametrize(("where", "line"), COMMANDS, ids=[where for where, _ in COMMANDS])
def test_a_documented_command_parses(where: str, line: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = command_argv(line)
    try:
        args = build_parser().parse_args(argv)
    except SystemExit as exc:
        pytest.fail(f"{where}: `{line}` does not parse (exit {exc.code}): {capsys.readouterr().err.strip()}")
    assert getattr(args, "run", None), f"{where}: `{line}` names no command"
    # What only a run would check: the protocols, configs and variants the line names exist.
    names = protocol_names()
    protocols = _as_list(getattr(args, "protocol", None))
    for name in protocols:
        assert name in names, f"{where}: `{line}`: no protocol {name!r} (registered: {names})"
    if isinstance(getattr(args, "protocol", None), str):
        entry = get_protocol(args.protocol)
        for config in _as_list(getattr(args, "config", None)):
            if not config.endswith(".toml"):
                assert config in entry.configs, f"{where}: `{line}`: {entry.name} has no config {config!r}"
        variant = getattr(args, "variant", None)
        if variant:
            assert variant in {v.id for v in entry.variants}, f"{where}: `{line}`: no variant {variant!r}"
        for profile in _as_list(getattr(args, "profile", None)):
            assert entry.profile_problem(profile) is None, f"{where}: `{line}`: {entry.profile_problem(profile)}"


# ----------------------------------------------------------------------------------- documented runs


def _run(line: str, out: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """Run a documented command as a user would (``python -m rollcheck``), with its ``--out`` pointed at
    ``out``, and a path it names under the default ``rollcheck-out/explore`` taken under ``out`` too."""
    assert line in DOCUMENTED, f"`{line}` is not a command the docs show"
    argv = [str(out / Path(w).relative_to(EXPLORE_OUT)) if Path(w).is_relative_to(EXPLORE_OUT) else w
            for w in command_argv(line)]
    if hasattr(build_parser().parse_args(argv), "out"):
        argv += ["--out", str(out)]
    return subprocess.run([sys.executable, "-m", "rollcheck", *argv], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, check=False)


def _cheap_commands() -> list[str]:
    """Cheap documented commands (each a few seconds at most): listings, the gate's plan, and the exhaustive
    search of every protocol's ``small`` config that the docs show."""
    wanted = ["rollcheck list", "rollcheck list --properties", "rollcheck gate --dry-run"]
    wanted += [f"rollcheck explore {p} --config small" for p in protocol_names()]
    wanted += ["rollcheck runbook runbooks/metadata_version/kraft-upgrade.toml"]
    return [c for c in wanted if c in DOCUMENTED]


CHEAP = _cheap_commands()


def test_the_cheap_commands_are_documented() -> None:
    assert "rollcheck list" in CHEAP and "rollcheck gate --dry-run" in CHEAP
    assert "rollcheck explore features --config small" in CHEAP  # README's worked example
    assert len([c for c in CHEAP if c.startswith("rollcheck explore ")]) >= 4


@pytest.mark.parametrize("line", CHEAP)
def test_a_cheap_documented_command_runs(line: str, tmp_path: Path) -> None:
    res = _run(line, tmp_path / "out")
    assert res.returncode == 0, f"`{line}` exited {res.returncode}:\n{res.stdout[-2000:]}\n{res.stderr[-2000:]}"
    assert res.stdout.strip(), f"`{line}` printed nothing on stdout"


def test_the_worked_example_finds_and_replays_its_counterexample(tmp_path: Path) -> None:
    """README's worked example: the broken variant's search exits 1 with FEAT-01's counterexample where the
    example's ``ls`` shows it, and ``rollcheck replay`` on the directory reports FEAT-01 failing (exit 1)."""
    out = tmp_path / "explore"
    res = _run("rollcheck explore features --variant FEAT-M1 --config small", out)
    assert res.returncode == 1, res.stderr[-2000:]
    assert "FEAT-01 violated" in res.stdout
    inside, _ = _split_fenced(README)
    shown = [line.strip()[2:] for _, line in inside if line.strip().startswith("$ ls rollcheck-out/explore/")]
    assert len(shown) == 1, shown
    listed, expected = shown[0][len("ls "):].split("#", 1)
    folder = out / Path(listed.strip()).relative_to(EXPLORE_OUT)
    assert (folder / expected.strip()).is_file(), sorted(p.name for p in out.rglob("*"))
    replay = _run("rollcheck replay rollcheck-out/explore/", out)
    assert replay.returncode == 1, replay.stdout + replay.stderr
    assert "FEAT-01 fails at the last step" in replay.stdout


# ----------------------------------------------------------------------------------- README and links


def test_the_readme_stays_short() -> None:
    size = README.stat().st_size
    assert size < README_LIMIT, f"README.md is {size} bytes; keep it under {README_LIMIT}: move detail to docs/"


def test_the_readme_test_command_is_the_one_ci_runs() -> None:
    """.ci/run runs README.md's test command: the two must stay in step."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(ci) if line.startswith("# README.md"))
    command = ci[marker + 1].strip()
    inside, _ = _split_fenced(README)
    assert any(command in line for _, line in inside), f"README.md no longer shows CI's command: {command}"


LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def _prose(path: Path) -> str:
    """The file outside fenced blocks, inline code spans blanked."""
    text = "\n".join(line for _, line in _split_fenced(path)[1])
    return re.sub(r"`[^`\n]*`", "``", text)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for _, line in _split_fenced(path)[1]:
        m = HEADING.match(line)
        if not m:
            continue
        slug = _slug(m.group(1))
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links() -> list[tuple[str, str]]:
    found = []
    for path in doc_files():
        for target in LINK.findall(_prose(path)):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            found.append((_rel(path), target))
    return found


LINKS = relative_links()


def test_the_docs_link_to_each_other() -> None:
    assert len(LINKS) >= 30
    targets = {target.split("#", 1)[0] for where, target in LINKS if where == "README.md"}
    for page in sorted(DOCS.rglob("*.md")):
        assert _rel(page) in targets, f"README.md does not link to {_rel(page)}"


@pytest.mark.parametrize(("where", "target"), LINKS, ids=[f"{w}->{t}" for w, t in LINKS])
def test_a_relative_link_resolves(where: str, target: str) -> None:
    source = ROOT / where
    file_part, _, anchor = target.partition("#")
    dest = (source.parent / file_part).resolve() if file_part else source
    assert dest.exists(), f"{where}: link to {target}: {dest} does not exist"
    if anchor and dest.suffix == ".md":
        assert anchor in anchors(dest), f"{where}: link to {target}: no heading with anchor #{anchor} in {dest.name}"
