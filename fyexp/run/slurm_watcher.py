"""Which SLURM jobs have ended, asked of ``squeue`` — a cluster without accounting answers no ``sacct``.

submitit's :class:`submitit.slurm.slurm.SlurmInfoWatcher` asks ``sacct``, which a cluster without ``slurmdbd`` (the
one-node cluster of ``scripts/ci_slurm.sh``) does not answer, so submitit waits for ever on a job that ended without
its result (cancelled, killed, past its time limit).  ``squeue`` lists a job from ``sbatch`` on, while pending and
running, and for ``MinJobAge`` seconds after it ended (its final state); a job it no longer lists has ended (``ENDED``).
"""

from __future__ import annotations

import subprocess
import time
from submitit.core import logger
from submitit.slurm.slurm import SlurmInfoWatcher

ENDED = "ENDED"  # listed no more: ended, its final state forgotten by the controller


class SqueueWatcher(SlurmInfoWatcher):
    """submitit's watcher with ``squeue --array --states=all`` in place of ``sacct`` (one call for all jobs); its
    ``JOBID|STATE`` lines (an array task as ``MAIN_INDEX``) read into submitit's ``{job id: {"JobID", "State"}}``."""

    def update(self) -> None:
        active = self._registered - self._finished
        if not (main_ids := sorted({job_id.split("_")[0] for job_id in active})):
            return
        self._num_calls += 1
        answer = subprocess.run(["squeue", "--noheader", "--array", "--states=all", "--format=%i|%T", "--jobs",
                                 ",".join(main_ids)], capture_output=True, text=True)
        if answer.returncode == 0 or "Invalid job id" in answer.stderr:  # the latter: squeue lists none of them
            text = answer.stdout if answer.returncode == 0 else ""
            rows = (line.strip().partition("|") for line in text.splitlines())
            listed = {job: {"JobID": job, "State": state.split()[0]} for job, _, state in rows if job and state}
            self._info_dict.update({job_id: {"JobID": job_id, "State": ENDED} for job_id in active - set(listed)})
            self._info_dict.update(listed)
        else:  # the controller did not answer: keep the states known so far, ask again later
            logger.get_logger().warning(f"squeue failed ({answer.stderr.strip()[:200]}); job states may be stale")
        self._last_status_check = time.time()
        self._finished.update(job_id for job_id in active if self.is_done(job_id, mode="cache"))
