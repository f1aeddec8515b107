"""``fyexp claims [PAPER] [--profile P] [--all-profiles] [--long] [--json]``: every claim's verdict from the result
CSVs (read-only)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from fyexp.claims.model import load_claims
from fyexp.claims.render import as_json, print_table
from fyexp.claims.verdicts import judge_all, load_frames
from fyexp.errors import FyexpError


def known_profiles(frames: dict, specs: dict) -> set[str]:
    """The profiles a ``--profile`` may name: those of the claims' experiments' specs and those with rows."""
    names = {p for spec in specs.values() for p in (spec.profiles or {})}
    return names | {str(p) for f in frames.values() if not f.empty for p in f["profile"].unique()}


def verdicts_for(results_dir: Path, paper: str | None = None, profile: str | None = None,
                 experiments_dir: Path | None = None):
    if not Path(results_dir).is_dir():
        raise FyexpError(f"--results-dir / FYEXP_RESULTS_DIR: '{results_dir}' does not exist; expected the folder "
                         "of result CSVs (`fyexp run` writes it)")
    claims = load_claims(experiments_dir=experiments_dir).for_paper(paper)
    frames, specs = load_frames(results_dir, experiments_dir, [e for c in claims.claims for e in c.experiments])
    if profile is not None:
        known = known_profiles(frames, specs)
        if profile not in known:
            raise FyexpError(f"--profile: unknown profile '{profile}'; expected one of {', '.join(sorted(known))}")
    return claims, judge_all(claims.claims, frames, specs, profile)


def claims_command(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                   experiments_dir: Path | None, console, long: bool = False, all_profiles: bool = False) -> None:
    _, verdicts = verdicts_for(results_dir, paper, profile, experiments_dir)
    try:
        if json_out:
            print(as_json(verdicts))
        else:
            print_table(verdicts, console, long, all_profiles)
        sys.stdout.flush()
    except BrokenPipeError:  # `fyexp claims | head`: the reader left; end quietly, exit 0 (what is still buffered
        devnull = os.open(os.devnull, os.O_WRONLY)  # goes nowhere instead of failing at exit)
        os.dup2(devnull, sys.stdout.fileno())
