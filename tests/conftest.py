"""Shared fixtures: run the CLI in-process against the toy experiment in tests/specs/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOY_SPECS = ROOT / "tests" / "specs"


def run_cli(*args: str, env: dict | None = None, cwd: Path | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run ``python -m fyexp.cli ARGS`` in a subprocess (as a user would), returning its result."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
                "COLUMNS": "200", **(env or {})}
    return subprocess.run([sys.executable, "-m", "fyexp.cli", *args], capture_output=True, text=True,
                          env=full_env, cwd=cwd or ROOT, timeout=timeout)


@pytest.fixture
def toy_env(tmp_path):
    """Environment pointing fyexp at the toy specs and a fresh results folder."""
    return {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
