"""Stopping a run by a signal: SIGTERM and SIGHUP unwind exactly like Ctrl-C.

A batch scheduler, `timeout`, systemd and a Jupyter kernel shutdown send SIGTERM; a closed
terminal sends SIGHUP. Python's default for both ends the process at once, leaving containers,
VMs, namespaces and load generators running. While a run is in progress, the first of SIGINT,
SIGTERM or SIGHUP raises `RunStopped` (a KeyboardInterrupt, so every context manager that
removes what it started runs, as it does for Ctrl-C); any further signal until the run has
unwound is noted and ignored, so clean-up is never cut half-way. A signal the caller set to be
ignored (nohup, a background job of a non-interactive shell) stays ignored.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator

HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class RunStopped(KeyboardInterrupt):
    """The run was stopped by a signal; `exit_code` is the shell's 128 + signal number."""

    def __init__(self, signum: int):
        self.signum = signum
        self.run_root: str | None = None
        super().__init__(f"stopped by {signal.Signals(signum).name}")

    @property
    def signal_name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


_depth = 0
_received: int | None = None


def _handler(signum: int, _frame) -> None:
    global _received
    if _received is not None:  # clean-up is under way: let it finish
        name = signal.Signals(signum).name
        os.write(2, f"kit: {name} received while cleaning up; clean-up continues\n".encode())
        return
    _received = signum
    raise RunStopped(signum)


def stopping() -> bool:
    """True once a signal has asked the current run to stop."""
    return _received is not None


@contextlib.contextmanager
def stop_on_signals(until_exit: bool = False) -> Iterator[None]:
    """Inside this block SIGINT, SIGTERM and SIGHUP raise RunStopped once, then are ignored until the
    block is left. Nested blocks share the outermost one's handlers; outside the main thread (where
    Python cannot set handlers) it does nothing. `until_exit` (a command about to exit, not a kernel
    that goes on): once stopped, the signals are left ignored (SIG_IGN, which the interpreter keeps
    while it shuts down, unlike a Python handler), so a late one cannot end the process before it
    exits with the first signal's code."""
    global _depth, _received
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous: dict[int, object] = {}
    if _depth == 0:
        _received = None
        for sig in HANDLED:
            current = signal.getsignal(sig)
            if current == signal.SIG_IGN:
                continue
            previous[sig] = current
            signal.signal(sig, _handler)
    _depth += 1
    try:
        yield
    finally:
        _depth -= 1
        if _depth == 0:
            stopped_for_good = until_exit and _received is not None
            for sig, handler in previous.items():
                restored = handler if handler is not None else signal.SIG_DFL
                signal.signal(sig, signal.SIG_IGN if stopped_for_good else restored)
            _received = None


def stopped_message(exc: KeyboardInterrupt) -> str:
    """What `kit` prints when a run was stopped: why, that measured points are kept, what to do next."""
    name = exc.signal_name if isinstance(exc, RunStopped) else "SIGINT"
    where = f" in {exc.run_root}" if isinstance(exc, RunStopped) and exc.run_root else ""
    return (
        f"kit: run stopped by {name}; the points measured so far are kept{where} and running the same "
        "command again measures only the missing ones. Everything this run started was removed; if the "
        "run was killed before it could finish cleaning up, `kit clean` removes what remains."
    )


def exit_code(exc: KeyboardInterrupt) -> int:
    return exc.exit_code if isinstance(exc, RunStopped) else 130


def default_dispositions() -> None:
    """For a child's preexec_fn: SIGINT, SIGTERM and SIGHUP at their defaults whatever this process
    inherited, so the child reacts to them as it would started from a terminal."""
    for sig in HANDLED:
        signal.signal(sig, signal.SIG_DFL)
