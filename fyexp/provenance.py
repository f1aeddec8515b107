"""Where a number came from: git commit, fyexp version, device, time."""

from __future__ import annotations

import datetime as _dt
import functools
import os
import platform
import subprocess
from pathlib import Path

from fyexp import __version__


@functools.lru_cache(maxsize=1)
def git_commit() -> str:
    """The source tree's commit (``+dirty`` when it has uncommitted changes), or ``unknown`` outside git."""
    source = Path(__file__).resolve().parents[1]
    env = os.environ.get("FYEXP_GIT_COMMIT")
    if env:
        return env
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=source, capture_output=True,
                             text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", "fyexp"],
                               cwd=source, capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + ("+dirty" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def device_description(device: str) -> str:
    """``cpu (2 cores)`` or ``cuda (NVIDIA H200)``."""
    if device.startswith("cuda"):
        import torch

        return f"cuda ({torch.cuda.get_device_name(0)})"
    return f"cpu ({os.cpu_count()} cores, {platform.machine()})"


def provenance(device: str, wall_time_s: float) -> dict:
    return {
        "git_commit": git_commit(),
        "fyexp_version": __version__,
        "device": device_description(device),
        "wall_time_s": round(float(wall_time_s), 3),
        "timestamp": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
