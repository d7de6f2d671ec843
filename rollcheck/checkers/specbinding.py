"""What the TLA+ checkers share: the protocol's spec binding, or a skipped report for a protocol without a spec."""

from __future__ import annotations

from typing import Any

from rollcheck.checkers.inputs import PROPERTIES, REFERENCE, SPEC, TLA, file_digest
from rollcheck.checkers.report import CheckerReport, Status
from rollcheck.core.errors import UserError
from rollcheck.core.transition import ProtocolEntry


def binding_or_skip(entry: ProtocolEntry, report: CheckerReport) -> Any:
    """The protocol's spec binding (:mod:`rollcheck.tla.binding`); None, with ``report`` skipped and saying
    why, for a protocol with no spec yet."""
    from rollcheck.tla.binding import binding_for

    try:
        return binding_for(entry.name)
    except UserError as exc:
        report.status = Status.SKIPPED
        report.message = str(exc)
        return None


def tla_tools_problem() -> str | None:
    """Why TLC cannot run here (no Java, no tla2tools.jar), or None."""
    from rollcheck.core.errors import ToolUnavailable
    from rollcheck.tla.tlc import tla2tools_jar

    try:
        tla2tools_jar()
    except ToolUnavailable as exc:
        return str(exc)
    return None


# What a checker of the TLA+ spec reads: the reference and its properties, the binding and the spec file.
TLA_READS = frozenset({REFERENCE, PROPERTIES, SPEC, TLA})


def tlc_jar() -> str:
    """The version of TLC: the digest of the tla2tools.jar that runs it."""
    from rollcheck.core.errors import ToolUnavailable
    from rollcheck.tla.tlc import tla2tools_jar

    try:
        jar = tla2tools_jar()
    except ToolUnavailable as exc:
        return f"absent: {exc}"
    return f"tla2tools.jar {file_digest(jar)}"
