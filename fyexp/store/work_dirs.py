"""A cell's work folder (``results/<exp>/work/<profile>/<cell>/``): whose checkpoints it holds, and how long the
processes before this one trained there.

A cell's identity on disk is its key (method, grid values, seed), but what it computes is its *settings*
(:mod:`fyexp.spec.settings`, :mod:`fyexp.store.provenance`).  The Trainer resumes whatever checkpoint its work folder
holds, so a folder left by a run at other settings (a YAML edit, a changed default) would be resumed, or, finished,
returned at once, under the new settings' name.  :func:`claim_work_dir` therefore marks each folder with the settings
hash it trains for and empties a folder marked for other settings, or holding anything without a mark: checkpoints of
unknown settings are unknown provenance, as a cell without its run record is (:mod:`fyexp.store.provenance.record`).
The runner claims the folder of every pending cell before any cell runs, since a cell may train in another's
folder (frac's Table 7 trains its reference ELBO cell there when that has not run).

:func:`earlier_training_s` is the training time a resumed cell spent in earlier processes: the sum of the
``epoch_time_s`` column of every per-epoch history (the Trainer's ``metrics.csv``) under the folder, read before
the cell runs.  A cell's ``wall_time_s`` adds it to this process's time, so a cell trained over three sessions
records its training time, not only the last segment's.  A member of an ensemble (``train.ensemble``) counts the
ensemble's epochs, which it shared with the other members.
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

__all__ = ["SETTINGS_MARK", "TRAINING_HISTORY", "claim_work_dir", "earlier_training_s"]

SETTINGS_MARK = "settings_hash"
TRAINING_HISTORY = "metrics.csv"  # :data:`fyexp.train._state.METRICS` (kept torch-free here; a test ties the two)


def claim_work_dir(work_dir: Path, settings_hash: str) -> bool:
    """Make ``work_dir`` hold only what was trained at ``settings_hash``; True when it held another settings' (or
    unmarked) checkpoints, which are removed.  Writes the mark (the folder is created)."""
    work_dir = Path(work_dir)
    mark = work_dir / SETTINGS_MARK
    discarded = False
    if mark.is_file():
        other = mark.read_text(encoding="utf-8").strip() != settings_hash
    else:
        other = work_dir.is_dir() and any(work_dir.iterdir())
    if other:
        shutil.rmtree(work_dir)
        discarded = True
    work_dir.mkdir(parents=True, exist_ok=True)
    if not mark.is_file():
        mark.write_text(settings_hash + "\n", encoding="utf-8")
    return discarded


def earlier_training_s(work_dir: Path) -> float:
    """Σ ``epoch_time_s`` over the per-epoch histories under ``work_dir`` (0 when there are none); a history that
    cannot be read counts 0 (it is the checkpoint's readable copy, not the checkpoint)."""
    total = 0.0
    for path in Path(work_dir).rglob(TRAINING_HISTORY) if Path(work_dir).is_dir() else ():
        try:
            with path.open(newline="", encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    value = float(row.get("epoch_time_s") or "nan")
                    total += value if math.isfinite(value) and value > 0 else 0.0
        except (OSError, ValueError, csv.Error):
            continue
    return total
