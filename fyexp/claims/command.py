"""``fyexp claims [PAPER] [--profile P] [--json]``: every claim's verdict from the result CSVs (read-only)."""

from __future__ import annotations

from pathlib import Path

from fyexp.claims.model import load_claims
from fyexp.claims.render import as_json, print_table
from fyexp.claims.verdicts import judge_all, load_frames


def verdicts_for(results_dir: Path, paper: str | None = None, profile: str | None = None,
                 experiments_dir: Path | None = None):
    claims = load_claims(experiments_dir=experiments_dir).for_paper(paper)
    frames, specs = load_frames(results_dir, experiments_dir, [e for c in claims.claims for e in c.experiments])
    return claims, judge_all(claims.claims, frames, specs, profile)


def claims_command(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                   experiments_dir: Path | None, console, long: bool = False) -> None:
    _, verdicts = verdicts_for(results_dir, paper, profile, experiments_dir)
    if json_out:
        print(as_json(verdicts))
    else:
        print_table(verdicts, console, long)
