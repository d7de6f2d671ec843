"""Bad input, as a new user gives it: every case ends with one line on stderr naming what was wrong,
exit 2, no traceback, before any work starts (issue #20; more classes land with it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rollcheck.cli import main

# Every command with an output directory; the rest of each command line is valid.
COMMANDS = {
    "explore": ["explore", "streams_probing", "--config", "small"],
    "prove": ["prove", "streams_probing", "--config", "small"],
    "gate": ["gate", "--protocol", "streams_probing", "--checker", "explore"],
    "simulate": ["simulate", "streams_probing"],
    "mutants": ["mutants", "--protocol", "streams_probing"],
    "tlc": ["tlc", "streams_probing", "--config", "small"],
    "conform": ["conform", "streams_probing"],
    "fuzz": ["fuzz", "streams_probing", "--minutes", "0.01"],
    "apalache": ["apalache", "streams_probing"],
    "runbook": ["runbook", str(Path(__file__).resolve().parent.parent / "runbooks" / "metadata_version"
                               / "kraft-upgrade.toml")],
}


def _bad_out(kind: str, tmp_path: Path) -> tuple[Path, str]:
    if kind == "a file":
        f = tmp_path / "taken"
        f.write_text("keep me")
        return f, "exists and is not a directory"
    if kind == "under a file":
        f = tmp_path / "taken"
        f.write_text("keep me")
        return f / "sub" / "dir", "is a file, so no directory can be made under it"
    return Path("/proc/rollcheck-no-such-dir/out"), "cannot write under /proc"  # not writable, even as root


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "Traceback" not in err[0]
    return err[0]


@pytest.mark.parametrize("kind", ["a file", "under a file", "unwritable"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_an_out_that_cannot_be_written_fails_before_the_run(command: str, kind: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    out, says = _bad_out(kind, tmp_path)
    assert main([*COMMANDS[command], "--out", str(out)]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("rollcheck: error: --out ") and says in line
    if kind != "unwritable":
        assert (tmp_path / "taken").read_text() == "keep me"  # nothing the user had is lost


def test_the_gate_configs_out_is_checked_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "taken").write_text("x")
    cfg = tmp_path / "g.toml"
    cfg.write_text(f"[gate]\nprotocols = ['streams_probing']\ncheckers = ['explore']\nout = '{tmp_path / 'taken'}'\n")
    assert main(["gate", "--gate-config", str(cfg)]) == 2
    assert "out " in _one_error_line(capsys)


@pytest.mark.parametrize(("text", "says"), [
    ("[gaet]\nprotocols = ['features']\n", "unknown table or key ['gaet']"),
    ("checkers = ['explore']\n", "unknown table or key ['checkers']"),
    ("[gate]\nout = 17\n", "'out' must be a directory path"),
    ("[gate]\nz3_depth = -3\n", "z3_depth must be at least 1, not -3"),
    ("[gate]\nz3_depth = 0\n", "z3_depth must be at least 1, not 0"),
    ("[gate]\nhypothesis_examples = 0\n", "hypothesis_examples must be at least 1"),
    ("[gate]\nhypothesis_steps = 2.5\n", "hypothesis_steps must be a whole number"),
    ("[gate]\ntimeout_seconds = nan\n", "timeout_seconds must be a finite number above 0"),
    ("[gate]\ntimeout_seconds = -inf\n", "timeout_seconds must be a finite number above 0"),
    ("[gate]\nseed = true\n", "seed must be a whole number"),
    ("[gate]\noptions = { conform_max_state = 5 }\n", "unknown options ['conform_max_state']"),
    ("[gate]\noptions = { fuzz_minutes = inf }\n", "options.fuzz_minutes must be a finite number above 0"),
    ("[gate]\noptions = { spark_min = -1 }\n", "options.spark_min must be at least 0"),
    ("[gate]\noptions = { tlc_witnesses = 1 }\n", "options.tlc_witnesses must be true or false, not 1"),
])
def test_gate_config_mistakes_are_one_line(text: str, says: str, tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "rollcheck.toml"
    cfg.write_text(text)
    assert main(["gate", "--gate-config", str(cfg), "--out", str(tmp_path / "out")]) == 2
    line = _one_error_line(capsys)
    assert says in line and str(cfg) in line, line
    assert not (tmp_path / "out").exists()


def test_a_config_the_gate_names_is_read_before_any_cell_runs(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    cfg = tmp_path / "rollcheck.toml"
    cfg.write_text("[gate]\nprotocols = ['streams_probing']\nconfigs = ['default', 'missing.toml']\n")
    assert main(["gate", "--gate-config", str(cfg), "--out", str(tmp_path / "out")]) == 2
    assert "config file not found: missing.toml" in _one_error_line(capsys)
    assert not (tmp_path / "out" / "summary.json").exists()


@pytest.mark.parametrize("kind", ["not UTF-8", "a directory"])
@pytest.mark.parametrize("command", ["gate", "explore"])
def test_config_files_that_are_not_text_files(command: str, kind: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "c.toml"
    if kind == "a directory":
        path.mkdir()
    else:
        path.write_bytes(b"[gate]\nprotocols = ['\xff\xfe']\n")
    argv = (["gate", "--gate-config", str(path)] if command == "gate"
            else ["explore", "streams_probing", "--config", str(path)]) + ["--out", str(tmp_path / "out")]
    assert main(argv) == 2
    line = _one_error_line(capsys)
    assert str(path) in line and ("is not UTF-8 text" in line or "is a directory" in line), line


def test_the_command_itself_prints_one_line_and_exits_2(tmp_path: Path) -> None:
    """The same through the installed entry point (re-executed for stable hashes): no traceback anywhere."""
    (tmp_path / "taken").write_text("x")
    proc = subprocess.run([sys.executable, "-m", "rollcheck", "explore", "streams_probing", "--out",
                           str(tmp_path / "taken")], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 2
    assert proc.stderr.strip() == f"rollcheck: error: --out {tmp_path / 'taken'}: exists and is not a directory"


@pytest.mark.parametrize(("argv", "says"), [
    (["fuzz", "features", "--minutes", "inf"], "--minutes: must be a finite number above 0: inf"),
    (["fuzz", "features", "--minutes", "nan"], "--minutes: must be a finite number above 0: nan"),
    (["fuzz", "features", "--minutes", "0"], "--minutes: must be a finite number above 0: 0"),
    (["fuzz", "features", "--minutes", "1", "--spark-walks", "-1"], "--spark-walks: must be at least 0: -1"),
    (["prove", "features", "--timeout", "nan"], "--timeout: must be a finite number above 0: nan"),
    (["prove", "features", "--depth", "0"], "--depth: must be at least 1: 0"),
    (["simulate", "features", "--seed", "-2"], "--seed: must be at least 0: -2"),
    (["explore", "features", "--max-states", "0"], "--max-states: must be at least 1: 0"),
    (["explore", "features", "--max-depth", "x"], "--max-depth: not a whole number: 'x'"),
    (["gate", "--parallel", "0"], "--parallel: must be at least 1: 0"),
    (["gate", "--tier", "weekly"], "--tier: invalid choice: 'weekly'"),
    (["explore", "features", "--bogus"], "rollcheck explore: error: unrecognized arguments: --bogus"),
    (["export-test", "t.itf.json", "--zz"], "unrecognized arguments: --zz (see rollcheck export-test --help)"),
    (["--bogus"], "rollcheck: error: unrecognized arguments: --bogus (see rollcheck --help)"),
])
def test_numeric_and_unknown_flags_are_one_line(argv: list[str], says: str,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(argv)
    assert stop.value.code == 2
    line = _one_error_line(capsys)
    assert says in line and line.startswith("rollcheck") and "--help" in line, line


def test_tables_off_a_terminal_are_not_cut(capsys: pytest.CaptureFixture[str]) -> None:
    """`rollcheck list | grep metadata_version` must find the protocol (rich folds to 80 columns otherwise)."""
    assert main(["list"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if "metadata_version" in line]
    assert rows and "KIP-778 metadata.version in KRaft" in rows[0]


@pytest.mark.parametrize(("content", "says"), [
    (b"\x89PNG\r\n\x1a\n\xff\xfe random bytes", "not UTF-8 text (byte 0)"),
    (b"{not json", "is not JSON"),
    (b'{"vars": ["x"]}', "no 'states' list"),
    (b'{"states": []}', "'states' is empty"),
    (b'{"states": [{"x": 1}, 7]}', "states[1] is not a record"),
    (b'{"states": [{"x": 1, "#meta": []}]}', "states[0]['#meta'] is not a record"),
])
def test_malformed_itf_is_a_value_error_naming_the_file_and_position(content: bytes, says: str,
                                                                    tmp_path: Path) -> None:
    from rollcheck.core.traces import read_itf

    path = tmp_path / "t.itf.json"
    path.write_bytes(content)
    with pytest.raises(ValueError) as caught:
        read_itf(path)
    assert str(path) in str(caught.value) and says in str(caught.value)


def test_a_config_a_profile_refuses_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """streams_probing's kafka-latest config names a release only the kafka profile knows."""
    assert main(["explore", "streams_probing", "--config", "kafka-latest", "--profile", "kip",
                 "--out", str(tmp_path / "out")]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("rollcheck: error: streams_probing/kafka-latest under profile kip: "), line


@pytest.mark.parametrize("argv", [
    ["explore", "features", "--config", "small", "--profile", "kafka-2.0"],
    ["prove", "features", "--config", "small", "--profile", "kafka-2.0"],
    ["tlc", "features", "--config", "small", "--profile", "kafka-2.0"],
    ["conform", "features", "--profile", "kip", "--profile", "kafka-2.0"],
    ["gate", "--protocol", "features", "--profile", "kafka-2.0", "--dry-run"],
    ["runbook", str(Path(__file__).resolve().parent.parent / "runbooks" / "features"), "--profile", "kafka-2.0"],
])
def test_a_profile_the_protocol_does_not_have_is_one_line(argv: list[str], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """Profiles are per protocol: kafka-2.0 is streams_probing's, not features'. The error names the protocol and
    its profiles, before any work."""
    out = [] if "--dry-run" in argv else ["--out", str(tmp_path / "out")]
    assert main([*argv, *out]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("rollcheck: error: ") and line.endswith(
        "protocol features has no profile 'kafka-2.0'; its profiles: kip, kafka"), line
    assert not (tmp_path / "out").exists()


def test_an_unknown_profile_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from rollcheck.core.registry import known_profiles

    assert main(["explore", "features", "--profile", "kafka-9", "--out", str(tmp_path)]) == 2
    assert _one_error_line(capsys) == ("rollcheck: error: --profile: protocol features has no profile "
                                       "'kafka-9'; its profiles: kip, kafka")
    assert main(["gate", "--profile", "kafka-9", "--dry-run"]) == 2
    line = _one_error_line(capsys)
    assert line.startswith("rollcheck: error: --profile: unknown profile 'kafka-9': none of ") and line.endswith(
        f"has it; their profiles: {', '.join(known_profiles())}"), line


def test_conform_exits_3_when_a_divergence_was_found_even_if_a_later_step_failed() -> None:
    """A mutated view (streams system.py:149, ``upgrade_from`` False for "") diverges on replay, then TLC's trace
    validation cannot compare the value: the divergence is the verdict (3), not a failed run (2)."""
    from rollcheck.cli.commands.conform_cmd import _exit_code

    diverged = {"ok": False, "reports": [{"replay": {"divergences": ["no initial state of the reference has this "
                                                                     "view"]}, "error": "TLC (trace validation)"}]}
    failed = {"ok": False, "reports": [{"replay": {"divergences": []}, "error": "java is missing"}]}
    agreed = {"ok": True, "reports": [{"replay": {"divergences": []}, "error": None}]}
    assert (_exit_code(diverged), _exit_code(failed), _exit_code(agreed)) == (3, 2, 0)
