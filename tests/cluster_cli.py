"""The one-line refusal of ``rollcheck runbook ... --cluster`` the cluster tests expect of bad input."""

from __future__ import annotations

import pytest

from rollcheck.cli import main


def runbook_error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """``rollcheck runbook ARGV``'s stderr, asserted to be one line, exit 2, no traceback."""
    code = main(["runbook", *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err
