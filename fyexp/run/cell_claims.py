"""One job per cell at a time: a cell is *claimed* before it runs, so two runs into one results folder (two
``fyexp run --executor slurm``, a job array and a login-node run, ...) never train the same cell at once.

A claim is an exclusive ``flock`` on ``results/<exp>/work/<profile>/claims/<cell key>.claim``, held while the cell
runs, the file holding the claimer's host, pid and SLURM job id.  A second claimer does not wait: it skips the cell
(its job ends ``ok``).  A claimer that gets the lock checks again whether the cell finished meanwhile, unless
``--force``.  On completion the holder removes the file while still locking it; a claimer that locked a file just
removed sees that the path names another file, or none, and claims again.  A dead holder (SIGKILL, ``scancel``, a
lost node) needs no clean-up: the kernel (on NFS, the server once the lease ends) drops its lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import socket
from pathlib import Path
from typing import Any, Callable

from fyexp.spec.settings import expectation
from fyexp.store.results import Cell, ResultStore

RUNNING_ELSEWHERE = "ok: running in another job"
FINISHED_ELSEWHERE = "ok: finished by another job"


def claim_path(store: ResultStore, profile: str, cell: Cell) -> Path:
    """The claim file of ``cell`` (beside the cells' work folders)."""
    return store.folder / "work" / profile / "claims" / f"{cell.key}.claim"


class CellClaim:
    """``with CellClaim(path) as claim:`` — ``claim.held`` tells whether this process holds the cell (else
    ``claim.holder`` says who does); released, and its file removed, on leaving the block."""

    def __init__(self, path: Path):
        self.path, self.held, self.holder, self._fd = Path(path), False, "", None

    def __enter__(self) -> CellClaim:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a live holder
                self.holder = _describe(os.pread(fd, 4096, 0))
                os.close(fd)
                return self
            with contextlib.suppress(FileNotFoundError):
                if os.stat(self.path).st_ino == os.fstat(fd).st_ino:   # the path still names the file we locked
                    break
            os.close(fd)  # its holder finished and removed it between our open and our lock: claim afresh
        job, task = os.environ.get("SLURM_ARRAY_JOB_ID"), os.environ.get("SLURM_ARRAY_TASK_ID")
        holder = {"host": socket.gethostname(), "pid": os.getpid(),   # as _describe says it
                  "SLURM job": f"{job}_{task}" if job and task else os.environ.get("SLURM_JOB_ID")}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(holder) + "\n").encode(), 0)
        self._fd, self.held = fd, True
        return self

    def __exit__(self, *exc) -> None:
        if self._fd is not None:
            self.path.unlink(missing_ok=True)  # still locked: no claimer can take this file for the live one
            os.close(self._fd)
            self._fd, self.held = None, False


def _describe(record: bytes) -> str:
    """``host H, pid P, SLURM job J`` from a claim file's record; ``another process`` while it is being written."""
    try:
        return ", ".join(f"{label} {value}" for label, value in json.loads(record).items() if value)
    except (ValueError, AttributeError):  # being written, or not a record
        return "another process"


def claims_cell(execute: Callable[..., str]) -> Callable[..., str]:
    """Decorate :func:`fyexp.run.runner.execute_cell` so that it runs a cell only under its claim (module docstring):
    :data:`RUNNING_ELSEWHERE` when another process holds it, :data:`FINISHED_ELSEWHERE` when it finished at the
    same settings before the claim was got (not with ``force``), else what ``execute`` returns."""

    @functools.wraps(execute)
    def claimed(resolved: Any, experiment: Any, cell: Cell, store: ResultStore, *, device: str,
                data_dir: Path | None, force: bool, progress: Any) -> str:
        with CellClaim(claim_path(store, resolved.profile, cell)) as claim:
            if not claim.held:
                progress.note(f"cell {cell.key}: claimed by another job ({claim.holder}); skipped here")
                return RUNNING_ELSEWHERE
            if not force and store.is_finished(resolved.profile, cell,
                                               expectation(resolved, experiment, cell, device, data_dir)):
                return FINISHED_ELSEWHERE
            return execute(resolved, experiment, cell, store, device=device, data_dir=data_dir, force=force,
                           progress=progress)

    return claimed
