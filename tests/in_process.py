"""``fyexp ARGS`` in this process, with :func:`tests.conftest.run_cli`'s signature and its timeout: for the tests whose
point is what a command does, not that an interpreter starts (each spawned one imports torch again, seconds of CPU).
Each file that uses it keeps at least one case through the installed script (what a user runs), and every case that
needs a real process (a signal, a fresh module state, the terminal's width read at import, the memory an endless
read would fill) stays spawned."""

from __future__ import annotations

import contextlib
import signal
import subprocess
import threading
from pathlib import Path

from tests.conftest import call_main


@contextlib.contextmanager
def deadline(seconds: float):
    """A command in this process that blocks (a FIFO opened for reading) or reads without end fails after
    ``seconds``: SIGALRM raises :class:`TimeoutError` in it, as the timeout of a spawned one fails the test instead
    of hanging the run.  No guard off the main thread, where no signal handler can be set."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds:g} s: a blocking or endless read")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def run_here(*args: str, env: dict | None = None, cwd: Path | None = None,
             timeout: float = 600) -> subprocess.CompletedProcess:
    """:func:`tests.conftest.run_cli`'s ``fyexp ARGS`` through :func:`fyexp.cli.app.main` in this process (under
    ``env``, in ``cwd``, the wide terminal of :func:`tests.conftest.cli_env`), failing after ``timeout`` seconds."""
    from fyexp.cli.app import main

    return call_here(main, list(args), env, cwd, timeout)


def call_here(main, args: list[str], env: dict | None = None, cwd: Path | None = None,
              timeout: float = 600) -> subprocess.CompletedProcess:
    """:func:`tests.conftest.call_main` of another entry point (``scripts/gpu_lease.py``'s ``main``), failing after
    ``timeout`` seconds."""
    with deadline(timeout):
        return call_main(main, list(args), {"COLUMNS": "200", **(env or {})}, cwd)
