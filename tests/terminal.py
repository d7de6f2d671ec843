"""Starting a command as a shell would, for the tests that signal it."""

from __future__ import annotations

import signal


def as_from_a_terminal() -> None:
    """``preexec_fn``: in the child before exec, Ctrl-C and SIGTERM at their defaults and unblocked, as a shell
    starts a command. An ignored disposition and a blocked mask are inherited through exec, and rollcheck
    rightly leaves an ignored SIGINT ignored (nohup, a background job): in CI's full suite the pytest worker
    had SIGINT ignored by the time some of these tests ran, and their commands never reacted to it."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
