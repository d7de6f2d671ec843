"""The HTML report as people see it: rendered by headless Chromium, its Plotly figures drawn (sequence
diagram of the counterexample with the violated property marked, growth chart), the mutation matrix
present, and a screenshot taken. `.ci/run` installs Chromium (Debian's package)."""

from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from rollcheck.core.errors import ExitCode
from rollcheck.core.transition import ProtocolEntry
from rollcheck.gate import GateConfig, run_gate
from rollcheck.gate.reports import write_outputs
from tests.toy import PROTOCOL, ToyConfig, ToySystem


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("headless Chromium is not installed (apt-get install chromium; .ci/run does it)")


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--virtual-time-budget=8000"]


def _broken() -> ProtocolEntry:
    return ProtocolEntry("toy", "broken toy", ToyConfig, PROTOCOL.configs,
                         lambda c: ToySystem(ToyConfig(c.profile, c.bound, True)), variants=PROTOCOL.variants)


def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    browser = _chromium()
    cfg = GateConfig(["toy"], {"toy": ["small"]}, ["kip"], ["explore"], tmp_path, mutants=True)
    result = run_gate(cfg, lookup=lambda _n: _broken())
    assert result.exit_code == ExitCode.VIOLATION
    html_path = Path(write_outputs(result, tmp_path)["html"])
    common = [browser, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([*common, "--dump-dom", html_path.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    # Plotly ran and drew its SVGs: the growth chart and the counterexample's sequence diagram.
    assert dom.count('class="main-svg"') >= 4, "Plotly figures were not rendered"
    assert "TOY-01 violated" in dom  # the violated property marked at its step
    assert "operator / environment" in dom and "IncA" in dom  # lifelines and arrows
    assert "state-space growth per BFS level" in dom
    assert "class=\"mutants\"" in dom and "TOY-M1" in dom
    shot = tmp_path / "report.png"
    subprocess.run([*common, "--window-size=1280,2000", f"--screenshot={shot}", html_path.as_uri()],
                   capture_output=True, timeout=120, check=True)
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert (width, height) == (1280, 2000)
    assert len(data) > 40_000, "the screenshot is (nearly) blank"
