"""Shared fixtures: run the CLI in-process against the toy experiment in tests/specs/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOY_SPECS = ROOT / "tests" / "specs"
REPO_RESULTS = ROOT / "results"


# ---- the repository's results are read by tests, never written --------------------------------------------------
def results_snapshot(folder: Path = REPO_RESULTS) -> dict[str, tuple[int, int, str]]:
    """Every file under ``folder``: its path relative to it → ``(size, modification time in ns, SHA-256)``."""
    import hashlib

    found = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink()) if folder.is_dir() else ():
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "link"
        found[str(path.relative_to(folder))] = (st.st_size, st.st_mtime_ns, digest)
    return found


def snapshot_changes(before: dict, after: dict) -> list[str]:
    """What differs between two snapshots (:func:`results_snapshot`), one phrase per file (added, removed, rewritten,
    touched)."""
    out = []
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        what = ("added" if old is None else "removed" if new is None
                else "rewritten" if old[2] != new[2] else "touched (same bytes, new modification time)")
        out.append(f"{name}: {what}")
    return out


# ---- tests in parallel (pytest -n 2, pytest-xdist): each worker sees the terminal settings of the command ----------
_TERMINAL_ENV = ("COLUMNS", "LINES", "TERM")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """xdist's hook, on the controller: hand each worker the terminal variables of ``pytest``'s own environment
    (a worker starts with ``COLUMNS=80``, ``LINES=24`` and ``TERM=xterm`` of its own, which would lay piped tables
    out at another width than a plain ``pytest`` run)."""
    node.workerinput["fyexp_terminal_env"] = {k: os.environ.get(k) for k in _TERMINAL_ENV}


def _terminal_env_of_the_controller(config) -> None:
    given = getattr(config, "workerinput", {}).get("fyexp_terminal_env")
    for key, value in (given or {}).items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def pytest_sessionstart(session):
    _terminal_env_of_the_controller(session.config)
    session.config._fyexp_results_before = results_snapshot()
    # fyexp's cache of derived values (fyexp.store.user_cache) goes to a folder of this session, not the user's
    # ~/.cache; subprocesses inherit it, so the installed-script tests exercise it as well
    import tempfile

    os.environ["FYEXP_CACHE_DIR"] = tempfile.mkdtemp(prefix="fyexp-test-cache-")
    # and the key that signs its entries (fyexp.store.user_cache.secret_key) is this session's too, kept outside it
    os.environ["FYEXP_CACHE_KEY_FILE"] = os.path.join(tempfile.mkdtemp(prefix="fyexp-test-cache-key-"), "cache-key")
    # the toy runners of tests/ are runners of the user's own (fyexp.experiments.known_runners): named here, as a
    # user names theirs, and inherited by the installed-script tests
    os.environ["FYEXP_RUNNERS"] = "tests.toy_experiment,tests.toy_broken"
    # estimates exactly as recorded (fyexp.run.speed's factor 1), whatever machine runs the tests: tests that pin an
    # estimate stay exact; tests/run/test_speed.py measures and sets the factor itself
    os.environ["FYEXP_MACHINE_SPEED"] = "1"


# ---- the cluster tests, said in the summary: CI's log shows that they ran on the cluster, not only dots ---------
# tests/run/test_slurm.py's own lines
_CLUSTER_SAYS = ("faults: ", "two submissions: ", "tune: ", "gmm-clustering: ")
_cluster_lines: list[str] = []


def pytest_runtest_logreport(report):
    """Keep, per test of tests/run/test_slurm.py, its outcome, time and the summary line it printed (counts of lost,
    duplicated and corrupt cells, ``IDENTICAL``...), or why it skipped; :func:`pytest_terminal_summary` prints
    them."""
    if "test_slurm.py::" not in report.nodeid or not (report.when == "call" or report.outcome != "passed"):
        return
    name = report.nodeid.split("::")[-1]
    if report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _cluster_lines.append(f"SKIPPED {name}: {reason.removeprefix('Skipped: ')}")
        return
    said = [line for line in report.capstdout.splitlines() if line.startswith(_CLUSTER_SAYS)]
    said = "".join(f"; {line}" for line in said)
    _cluster_lines.append(f"{report.outcome.upper()} {name} ({report.duration:.0f} s){said}")


def pytest_terminal_summary(terminalreporter):
    """A section "SLURM cluster tests" with one line per cluster test, when any ran (SLURM_CONF named if set)."""
    if _cluster_lines:
        terminalreporter.section(f"SLURM cluster tests (SLURM_CONF={os.environ.get('SLURM_CONF', 'unset')})")
        for line in _cluster_lines:
            terminalreporter.write_line(line)


def pytest_sessionfinish(session, exitstatus):
    """Fail the session if any test wrote under the repository's ``results/`` (a test reads committed results only
    from a copy or read-only: a command that consolidates there rewrites ``results.csv``)."""
    before = getattr(session.config, "_fyexp_results_before", None)
    if before is None:
        return
    changes = snapshot_changes(before, results_snapshot())
    if changes:
        shown = "\n  ".join(changes[:20]) + (f"\n  ... and {len(changes) - 20} more" if len(changes) > 20 else "")
        session.config.get_terminal_writer().line(
            f"\nFAILED: the tests changed {len(changes)} file(s) under {REPO_RESULTS} "
            f"(tests must read committed results from a copy):\n  {shown}", red=True)
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def fyexp_script() -> str:
    """The installed ``fyexp`` console script of this interpreter's environment (what a user runs)."""
    script = Path(sys.executable).parent / "fyexp"
    if not script.is_file():
        found = shutil.which("fyexp")
        if found is None:
            pytest.fail("the `fyexp` console script is not installed: run `pip install -e .` first")
        script = Path(found)
    return str(script)


def cli_env(env: dict | None = None) -> dict:
    """The environment of a spawned CLI: the toy runner importable, a wide terminal for rich."""
    return {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
            "COLUMNS": "200", **(env or {})}


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the installed ``fyexp ARGS`` in a subprocess (as a user would), returning its result."""
    return subprocess.run([fyexp_script(), *args], capture_output=True, text=True,
                          env=cli_env(env), cwd=cwd or ROOT, timeout=timeout)


def call_main(main, argv: list[str], env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """``main(argv)`` called in this process under ``env`` (set, then restored) and in ``cwd``, its exit status (what
    it returned or raised as :class:`SystemExit`) and what it printed, as :func:`run_cli` returns a spawned one's: for
    tests whose point is what a command does, not that an interpreter starts (each spawned one imports torch again,
    seconds of CPU; tests/cli/test_e2e.py and the other installed-script tests keep spawning)."""
    import contextlib
    import io

    stdout, stderr = io.StringIO(), io.StringIO()
    with (pytest.MonkeyPatch.context() as patch, contextlib.redirect_stdout(stdout),
          contextlib.redirect_stderr(stderr)):
        for key, value in (env or {}).items():
            patch.setenv(key, value)
        if cwd is not None:
            patch.chdir(cwd)
        try:
            code = main(argv) or 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    return subprocess.CompletedProcess(argv, code, stdout.getvalue(), stderr.getvalue())


def run_in_process(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``fyexp ARGS`` through :func:`fyexp.cli.app.main` in this process (:func:`call_main`), with the wide terminal
    of :func:`cli_env`; its output is the script's off a terminal (the consoles soft-wrap, nothing is coloured)."""
    from fyexp.cli.app import main

    return call_main(main, list(args), {"COLUMNS": "200", **(env or {})})


@pytest.fixture(autouse=True)
def _default_dtype_is_restored():
    """A test that changes torch's default dtype at import or in its body must not leak it into the next test."""
    import torch

    torch.set_default_dtype(torch.float32)
    yield
    changed = torch.get_default_dtype()
    torch.set_default_dtype(torch.float32)
    assert changed == torch.float32, f"the test left torch's default dtype at {changed}"


@pytest.fixture
def float64_default():
    """torch's default dtype float64 for one test (closed forms are compared in double precision), then back."""
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(previous)


@pytest.fixture
def toy_env(tmp_path):
    """Environment pointing fyexp at the toy specs and a fresh results folder."""
    return {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}


def run_in_terminal(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 600,
                    columns: int = 100, answer: tuple[bytes, bytes] | None = None) -> tuple[int, str]:
    """Run the installed ``fyexp ARGS`` under a pseudo-terminal (rich draws its live bars there, as for a user).

    ``answer = (prompt, keys)`` types ``keys`` once ``prompt`` has appeared on the screen.  Returns the exit status
    and everything the program wrote to the terminal (stdout and stderr together).
    """
    import pty
    import select
    import time

    master, slave = pty.openpty()
    full_env = cli_env({"TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": "40", **(env or {})})
    full_env.pop("NO_COLOR", None)
    proc = subprocess.Popen([fyexp_script(), *args], stdin=slave, stdout=slave, stderr=slave, env=full_env,
                            cwd=cwd or ROOT, close_fds=True)
    os.close(slave)
    chunks, deadline = [], time.time() + timeout
    try:
        while time.time() < deadline:
            ready, _, _ = select.select([master], [], [], 0.2)
            if ready:
                try:
                    data = os.read(master, 65536)
                except OSError:  # the terminal closed: the program has exited
                    break
                if not data:
                    break
                chunks.append(data)
                if answer is not None and answer[0] in b"".join(chunks):
                    os.write(master, answer[1])
                    answer = None
            elif proc.poll() is not None:
                break
        else:
            proc.kill()
            pytest.fail(f"fyexp {' '.join(args)} did not finish in {timeout} s")
        code = proc.wait(timeout=30)
    finally:
        os.close(master)
    return code, b"".join(chunks).decode("utf-8", errors="replace")


def strip_ansi(text: str) -> str:
    """Terminal output without colour and cursor escape sequences."""
    import re

    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text)


def committed_paper_seconds(experiment: str = "gmm-clustering", profile: str = "paper") -> float:
    """Σ of the committed ``profile`` cells' recorded wall times, read from their cell files: what a plan of all of
    them estimates (each method's mean × its cells), recomputed here without the planner."""
    import csv

    total = 0.0
    for path in sorted((ROOT / "results" / experiment / "cells" / profile).glob("*.csv")):
        with path.open(newline="", encoding="utf-8") as handle:
            row = next(csv.DictReader(handle))
        total += float(row["wall_time_s"])
    return total
