"""The ``rollcheck`` command line. Each sub-command lives in ``rollcheck/cli/commands/<name>.py`` and
exposes ``register(subparsers)``; the command's ``run(args) -> int`` is set as the parser default.

User mistakes (unknown protocol, bad config, malformed file) print one line and exit 2, never a
traceback; so does an output that cannot be written (a full disk, a read-only file system, no permission:
the line names the path). An interrupted run exits 130 after the command has saved what it had; Ctrl-C
during start-up (the command modules take a second to import) is the same one line. A stdout closed by
its reader (``rollcheck list | head -1``) ends the command quietly with 141.

This module imports almost nothing at its top: the console script imports it before :func:`main` can
catch anything, so every import that takes time happens inside :func:`main`.
"""

from __future__ import annotations

import sys

from rollcheck import __version__
from rollcheck.core.errors import (
    ExitCode,
    Inconclusive,
    Terminated,
    ToolUnavailable,
    UserError,
    interruption,
    kept_note,
)

TYPE_CHECKING = False  # typing itself takes a while to import; mypy reads the block below
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any, NoReturn

# Command modules in the order `rollcheck --help` lists them; absent ones are skipped.
COMMANDS = (
    "gate", "list", "explore", "simulate", "tlc", "apalache", "conform", "prove", "mutants", "mutate", "fuzz",
    "replay", "export_test", "runbook", "kafka",
)


def _parser_class() -> type[argparse.ArgumentParser]:
    import argparse

    class _Parser(argparse.ArgumentParser):
        """A flag mistake is one line naming the command and what was wrong (exit 2), not the usage text:
        ``rollcheck explore --help`` shows that."""

        def error(self, message: str) -> NoReturn:
            self._fail(self.prog, message)

        def _fail(self, prog: str, message: str) -> NoReturn:
            self.exit(2, f"{prog}: error: {message} (see {prog} --help)\n")

        def parse_args(self, args: Sequence[str] | None = None,  # type: ignore[override]
                       namespace: None = None) -> argparse.Namespace:
            # argparse reports a subcommand's unknown flag from the top parser ("see rollcheck --help"); the
            # command's own help is the one that lists its flags.
            known, extras = self.parse_known_args(args, namespace)
            if extras:
                command = getattr(known, "command", None)
                prog = f"{self.prog} {command}" if command else self.prog
                self._fail(prog, f"unrecognized arguments: {' '.join(extras)}")
            # An old spelling of a flag (rollcheck.cli.commands.common.add_deprecated_spelling) is said once the
            # line parsed: a mistake elsewhere on it is then its one line.
            for line in getattr(known, "deprecated_spellings", ()):
                print(line, file=sys.stderr)
            return known

    return _Parser


def build_parser() -> argparse.ArgumentParser:
    import importlib
    import importlib.util

    parser = _parser_class()(
        prog="rollcheck",
        description="Verify Kafka's rolling-upgrade protocols: feature versions (KIP-584), "
        "metadata.version (KIP-778), ZooKeeper-to-KRaft migration (KIP-866), Streams version probing "
        "(KIP-268).",
    )
    parser.add_argument("--version", action="version", version=f"rollcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = f"rollcheck.cli.commands.{name}_cmd"
        if importlib.util.find_spec(module) is None:
            continue
        importlib.import_module(module).register(sub)
    return parser


# Writing an output failed for a reason of the machine's, not a bug: one line naming the path, exit 2.
_WRITE_ERRNOS = frozenset({"ENOSPC", "EDQUOT", "EROFS", "EACCES", "EPERM", "EFBIG"})


def main(argv: Sequence[str] | None = None) -> int:
    signals: _StopSignals | None = None
    try:
        if argv is None:
            from rollcheck.core.hashenv import reexec_for_stable_hashes, release_held_signals

            # Fingerprints are Python hashes: a checkpoint must be resumable by a later process and Spark
            # executors must hash as this process does (see rollcheck.core.hashenv); it also makes every set's
            # iteration order, and so every report, the same from run to run.
            reexec_for_stable_hashes(["-m", "rollcheck", *sys.argv[1:]], hold_interrupts=True)
            release_held_signals()  # a Ctrl-C held across the re-execution is raised here
        parser = build_parser()
        args = parser.parse_args(argv)
        signals = _StopSignals()
        if argv is None:
            signals.install()
        if not getattr(args, "run", None):
            parser.print_help(sys.stderr)
            return int(ExitCode.RUN_FAILED)
        # An output directory that cannot be written fails here, before the run, not after it.
        out = getattr(args, "out", None)
        if out is not None and not getattr(args, "dry_run", False):
            from rollcheck.runtime.userinput import check_output_dir

            check_output_dir(out)
        return int(args.run(args))
    except UserError as exc:
        print(f"rollcheck: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except ToolUnavailable as exc:
        print(f"rollcheck: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except Inconclusive as exc:  # the check stopped short of a verdict: what was not checked, exit 5
        print(f"rollcheck: inconclusive: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        return _stopped(exc, kept_note(exc), signals)
    except Exception as exc:
        stop = interruption(exc)  # Ctrl-C inside a py4j call surfaces as a Py4JError raised while handling it
        if stop is not None:
            return _stopped(stop, kept_note(exc) or kept_note(stop), signals)
        if isinstance(exc, BrokenPipeError) and _stdout_closed():
            return _stdout_gone()
        if isinstance(exc, OSError) and _errno_name(exc) in _WRITE_ERRNOS:
            print(f"rollcheck: error: {_failed_path(exc)}: {exc.strerror or exc}", file=sys.stderr)
            return int(ExitCode.RUN_FAILED)
        raise


def _errno_name(exc: OSError) -> str | None:
    import errno

    return errno.errorcode.get(exc.errno) if exc.errno is not None else None


def _failed_path(exc: OSError) -> str:
    """The file an OSError is about. A failed write() or flush() on an open file (a full disk) names none:
    then the ``path`` of the innermost function that had one (the writer's argument)."""
    import os

    if exc.filename is not None:
        return str(exc.filename)
    tb = exc.__traceback__
    found = None
    while tb is not None:
        path = tb.tb_frame.f_locals.get("path")
        if isinstance(path, (str, os.PathLike)):
            found = os.fspath(path)
        tb = tb.tb_next
    return str(found) if found is not None else "writing an output"


def _stdout_closed() -> bool:
    """Is stdout a pipe or socket whose reader has gone (``| head`` that has read its lines)?"""
    import select

    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # replaced by a test's capture, or closed
        return False
    poll = select.poll()
    poll.register(fd, 0)  # error and hang-up are always reported
    return any(events & (select.POLLERR | select.POLLHUP) for _fd, events in poll.poll(0))


def _stdout_gone() -> int:
    """The reader closed stdout: what is left to print goes to /dev/null, so that the interpreter's last
    flush of stdout at exit does not print "Exception ignored ... BrokenPipeError" either."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
    return int(ExitCode.OUTPUT_CLOSED)


class _StopSignals:
    """Ctrl-C and SIGTERM for one command run. Python raises a signal's KeyboardInterrupt wherever the main
    thread happens to be, and some places swallow it (a garbage-collector callback, which Hypothesis
    installs, prints "Exception ignored" and goes on), so after the first signal a helper thread raises
    it again every few seconds until the command has ended."""

    RESEND_SECONDS = 3.0
    # If the command has still not ended this long after the first signal (something swallowed every
    # interrupt), it stops hard: its child processes are terminated and it exits with the signal's code.
    HARD_STOP_SECONDS = 45.0

    def __init__(self) -> None:
        import threading

        self.done = threading.Event()
        self.started = False

    def install(self) -> None:
        import signal

        signal.signal(signal.SIGTERM, self.handle)
        default_hook = sys.unraisablehook

        def hook(unraisable: Any) -> None:  # a swallowed interrupt is resent, not printed as a traceback
            # Once a stop signal came, a finalizer's error is the interrupt's doing: an object whose __init__
            # it cut short (z3's AstRef.__del__ then finds no ctx) is collected as the run ends, and its
            # traceback would follow the one-line report.
            if not isinstance(unraisable.exc_value, KeyboardInterrupt) and not self.started:
                default_hook(unraisable)

        sys.unraisablehook = hook
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when SIGINT is ignored
            signal.signal(signal.SIGINT, self.handle)

    def handle(self, signum: int, _frame: object) -> None:
        import signal
        import threading

        if not self.started:
            self.started = True
            threading.Thread(target=self._resend, args=(signum,), name="rollcheck-signal", daemon=True).start()
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def _resend(self, signum: int) -> None:
        # A real signal to the main thread, not _thread.interrupt_main: that only sets a flag, which a main
        # thread blocked in select() (the gate waiting for its cells) would not see until a cell ended.
        import _thread
        import signal
        import threading

        main = threading.main_thread().ident
        waited = 0.0
        while not self.done.wait(self.RESEND_SECONDS):
            waited += self.RESEND_SECONDS
            if waited >= self.HARD_STOP_SECONDS:
                self._hard_stop(signum)
            if main is None:
                _thread.interrupt_main(signal.Signals(signum))
            else:
                signal.pthread_kill(main, signum)

    def _hard_stop(self, signum: int) -> NoReturn:
        import multiprocessing
        import os
        import signal
        import tempfile
        import threading
        import traceback
        from pathlib import Path

        for child in multiprocessing.active_children():
            child.terminate()
        # Where the main thread was, for a bug report: a place that swallows interrupts is a bug of ours.
        stack = "".join(traceback.format_stack(sys._current_frames().get(threading.main_thread().ident or 0)))
        where = Path(tempfile.gettempdir()) / f"rollcheck-hard-stop-{os.getpid()}.txt"
        try:
            where.write_text(stack, encoding="utf-8")
        except OSError:
            where = Path("(not written)")
        how, code = ("terminated", 143) if signum == signal.SIGTERM else ("interrupted", 130)
        print(f"rollcheck: {how}; the run did not stop within {self.HARD_STOP_SECONDS:.0f} s of the signal and "
              f"was stopped hard (its partial output may remain; where it was stuck: {where})", file=sys.stderr,
              flush=True)
        os._exit(code)


def _stopped(exc: KeyboardInterrupt, kept: str | None, signals: _StopSignals | None) -> int:
    """One line: how the run ended and what it kept (each command says, see console.on_interrupt); a
    Ctrl-C during start-up (``signals`` not made yet) kept nothing."""
    if signals is not None:
        signals.done.set()
    # CPython marks an interrupt that propagates out of code run by exec() of a string (dataclasses and
    # namedtuple build their methods so, at import) as unhandled, even when it is caught later, and at
    # exit the interpreter then kills itself with SIGINT instead of exiting with our code. Each exec() of
    # a string clears that mark.
    exec("pass", {})
    how, code = ("terminated", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
    print(f"rollcheck: {how}; {kept or 'nothing was written'}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
