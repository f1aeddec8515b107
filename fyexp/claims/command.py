"""``fyexp claims [PAPER] [--profile P] [--all-profiles] [--long] [--json]``: every claim's verdict from the result
CSVs (read-only)."""

from __future__ import annotations

from pathlib import Path

from fyexp.claims.model import load_claims
from fyexp.claims.readings import load_readings
from fyexp.claims.render import answer
from fyexp.claims.verdicts import judge_all, load_frames
from fyexp.core.errors import FyexpError
from fyexp.run.progress import emit_answer, table_width


def known_profiles(frames: dict, specs: dict) -> set[str]:
    """The profiles a ``--profile`` may name: those of the claims' experiments' specs and those with rows."""
    names = {p for spec in specs.values() for p in (spec.profiles or {})}
    return names | {str(p) for f in frames.values() if not f.empty for p in f["profile"].unique()}


def verdicts_for(results_dir: Path, paper: str | None = None, profile: str | None = None,
                 experiments_dir: Path | None = None):
    if not Path(results_dir).is_dir():
        raise FyexpError(f"--results-dir / FYEXP_RESULTS_DIR: '{results_dir}' does not exist; expected the folder "
                         "of result CSVs (`fyexp run` writes it)")
    everything = load_claims(experiments_dir=experiments_dir)
    readings = load_readings(findings={f.id for f in everything.findings})   # each departure names a finding
    claims = everything.for_paper(paper)
    frames, specs = load_frames(results_dir, experiments_dir, [e for c in claims.claims for e in c.experiments])
    if profile is not None:
        known = known_profiles(frames, specs)
        if profile not in known:
            raise FyexpError(f"--profile: unknown profile '{profile}'; expected one of {', '.join(sorted(known))}")
    return claims, judge_all(claims.claims, frames, specs, profile, readings)


def claims_answer(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                  experiments_dir: Path | None, width: int, long: bool = False, all_profiles: bool = False):
    """What ``fyexp claims`` prints (:func:`fyexp.claims.render.answer`), judged now."""
    claims, verdicts = verdicts_for(results_dir, paper, profile, experiments_dir)
    return answer(verdicts, claims.findings, json_out, width, long, all_profiles)


def claims_command(paper: str | None, profile: str | None, json_out: bool, results_dir: Path,
                   experiments_dir: Path | None, console, long: bool = False, all_profiles: bool = False) -> None:
    """``fyexp claims`` judged afresh (``fyexp reproduce``'s last step; the command line reads the user cache
    first: :mod:`fyexp.cli.commands.claims`)."""
    width = table_width(console)
    emit_answer(claims_answer(paper, profile, json_out, results_dir, experiments_dir, width, long, all_profiles),
                console, width)
