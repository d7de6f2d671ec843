"""The ``rollcheck`` command line. Each sub-command lives in ``rollcheck/commands/<name>.py`` and
exposes ``register(subparsers)``; the command's ``run(args) -> int`` is set as the parser default.

User mistakes (unknown protocol, bad config, malformed file) print one line and exit 2, never a
traceback; an interrupted run exits 130 after the command has saved what it had.
"""

from __future__ import annotations

import _thread
import argparse
import importlib
import importlib.util
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from rollcheck import __version__
from rollcheck.errors import ExitCode, Terminated, ToolUnavailable, UserError, interruption, kept_note
from rollcheck.hashenv import reexec_for_stable_hashes
from rollcheck.userinput import check_output_dir

# Command modules in the order `rollcheck --help` lists them; absent ones are skipped.
COMMANDS = (
    "gate", "list", "explore", "simulate", "tlc", "apalache", "conform", "prove", "mutants", "fuzz",
    "replay", "export_test", "runbook",
)


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
        return known


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rollcheck",
        description="Verify Kafka's rolling-upgrade protocols: feature versions (KIP-584), "
        "metadata.version (KIP-778), ZooKeeper-to-KRaft migration (KIP-866), Streams version probing "
        "(KIP-268).",
    )
    parser.add_argument("--version", action="version", version=f"rollcheck {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        module = f"rollcheck.commands.{name}_cmd"
        if importlib.util.find_spec(module) is None:
            continue
        importlib.import_module(module).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        # Fingerprints are Python hashes: a checkpoint must be resumable by a later process and Spark
        # executors must hash as this process does (see rollcheck.hashenv); it also makes every set's
        # iteration order, and so every report, the same from run to run.
        reexec_for_stable_hashes(["-m", "rollcheck", *sys.argv[1:]])
    parser = build_parser()
    args = parser.parse_args(argv)
    signals = _StopSignals()
    if argv is None:
        signals.install()
    if not getattr(args, "run", None):
        parser.print_help(sys.stderr)
        return int(ExitCode.RUN_FAILED)
    try:
        # An output directory that cannot be written fails here, before the run, not after it.
        out = getattr(args, "out", None)
        if out is not None and not getattr(args, "dry_run", False):
            check_output_dir(out)
        return int(args.run(args))
    except UserError as exc:
        print(f"rollcheck: error: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except ToolUnavailable as exc:
        print(f"rollcheck: {exc}", file=sys.stderr)
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        return _stopped(exc, kept_note(exc), signals)
    except Exception as exc:
        stop = interruption(exc)  # Ctrl-C inside a py4j call surfaces as a Py4JError raised while handling it
        if stop is not None:
            return _stopped(stop, kept_note(exc) or kept_note(stop), signals)
        raise


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
        self.done = threading.Event()
        self.started = False

    def install(self) -> None:
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
        if not self.started:
            self.started = True
            threading.Thread(target=self._resend, args=(signum,), name="rollcheck-signal", daemon=True).start()
        raise Terminated() if signum == signal.SIGTERM else KeyboardInterrupt()

    def _resend(self, signum: int) -> None:
        # A real signal to the main thread, not _thread.interrupt_main: that only sets a flag, which a main
        # thread blocked in select() (the gate waiting for its cells) would not see until a cell ended.
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
        import tempfile
        import traceback

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


def _stopped(exc: KeyboardInterrupt, kept: str | None, signals: _StopSignals) -> int:
    """One line: how the run ended and what it kept (each command says, see console.on_interrupt)."""
    signals.done.set()
    how, code = ("terminated", 143) if isinstance(exc, Terminated) else ("interrupted", 130)
    print(f"rollcheck: {how}; {kept or 'nothing was written'}", file=sys.stderr)
    return code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
