"""Errors a user can cause, and the exit codes every command shares."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    VIOLATION = 1          # a property is violated (a counterexample was found)
    RUN_FAILED = 2         # the run itself failed: bad input or config, Java missing, a checker crashed
    DISAGREEMENT = 3       # two checkers disagreed (counts, verdicts, or a trace that does not replay)
    TOOL_UNAVAILABLE = 4   # an optional tool (Apalache) is not installed; nothing was checked
    INCONCLUSIVE = 5       # the check did not run in full (a budget, a bound, every solver call cancelled,
    #                        every pair skipped): nothing was found, nothing was shown to hold
    OUTPUT_CLOSED = 141    # stdout was closed by its reader (``| head``): the output was cut (128 + SIGPIPE)


class UserError(Exception):
    """A mistake in the user's input: printed as one clear line, exit code 2, never a traceback."""

    exit_code = ExitCode.RUN_FAILED


class Inconclusive(Exception):
    """The check stopped short of a verdict: printed as one line naming what was not checked, exit 5."""

    exit_code = ExitCode.INCONCLUSIVE


class ToolUnavailable(Exception):
    """An optional external tool is absent."""

    exit_code = ExitCode.TOOL_UNAVAILABLE


class Terminated(KeyboardInterrupt):
    """SIGTERM, turned into an exception so that a run ends as Ctrl-C ends it (exit 143 instead of 130)."""


def interruption(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The Ctrl-C / SIGTERM behind ``exc``, if any: inside a py4j call it surfaces as a Py4JError raised
    while handling it, so the chain of causes is searched."""
    seen = 0
    while exc is not None and seen < 20:
        if isinstance(exc, KeyboardInterrupt):
            return exc
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return None


def kept_note(exc: BaseException) -> str | None:
    """What an interrupted command said it kept (see :func:`rollcheck.runtime.console.on_interrupt`)."""
    return getattr(exc, "rollcheck_kept", None)
