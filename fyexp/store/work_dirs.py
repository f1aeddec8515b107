"""A cell's work folder (``results/<exp>/work/<profile>/<cell>/``): whose checkpoints it holds, and how long earlier
processes trained there.  The Trainer resumes whatever checkpoint its folder holds, but a cell's key does not name its
settings, so :func:`claim_work_dir` marks each folder with its settings hash and empties one of other or unknown
settings (the runner claims every pending cell's folder first: a cell may train in another's); a resumed cell's
``wall_time_s`` adds :func:`earlier_training_s` to this process's time.
"""

from __future__ import annotations

import csv
import math
import shutil
from pathlib import Path

SETTINGS_MARK = "settings_hash"
TRAINING_HISTORY = "metrics.csv"  # :data:`fyexp.train._state.METRICS` (kept torch-free here; a test ties the two)


def claim_work_dir(work_dir: Path, settings_hash: str) -> bool:
    """Make ``work_dir`` (created, marked) hold only what was trained at ``settings_hash``; True when it held
    another settings' (or unmarked) checkpoints, which are removed."""
    work_dir, mark = Path(work_dir), Path(work_dir) / SETTINGS_MARK
    other = (mark.read_text(encoding="utf-8").strip() != settings_hash if mark.is_file() else
             work_dir.is_dir() and any(work_dir.iterdir()))
    if other:
        shutil.rmtree(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    if not mark.is_file():
        mark.write_text(settings_hash + "\n", encoding="utf-8")
    return other


def earlier_training_s(work_dir: Path) -> float:
    """Σ ``epoch_time_s`` over the Trainer's histories under ``work_dir`` (an ensemble member's: the shared epochs);
    an unreadable history counts 0 (it is the checkpoint's readable copy, not the checkpoint)."""
    total = 0.0
    for path in Path(work_dir).rglob(TRAINING_HISTORY):  # none under a folder that is not there
        try:
            with path.open(newline="", encoding="utf-8") as handle:
                for row in csv.DictReader(handle):
                    value = float(row.get("epoch_time_s") or "nan")
                    total += value if math.isfinite(value) and value > 0 else 0.0
        except (OSError, ValueError, csv.Error):
            continue
    return total
