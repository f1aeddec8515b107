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


def reproduce_command(paper: str, *, profile: str, dry_run: bool, only: list[str] | None, run_options: dict,
                      results_dir: Path, experiments_dir: Path | None, console) -> None:
    """``fyexp reproduce``: the plan (``--dry-run``), or every experiment through ``fyexp run``, then report and
    claims; a failed cell does not stop the others, and the exit status is then 1."""
    import typer

    from fyexp import cli
    from fyexp.cell_filter import parse_only
    from fyexp.claims.model import PAPERS
    from fyexp.reproduce import describe, paper_experiments, plan

    papers = list(PAPERS) if paper == "all" else [paper]
    cell_filter = parse_only(only)
    if dry_run:
        for p in papers:
            print(describe(p, profile, plan(p, profile, results_dir, experiments_dir, cell_filter,
                                            run_options.get("sets"))))
        return
    failed = False
    for p in papers:
        for name in paper_experiments(p, experiments_dir):
            try:
                cli.run(name=name, profile=profile, seeds=None, experiments_dir=experiments_dir,
                        results_dir=results_dir, force=False, best=False, only=only, **run_options)
            except typer.Exit as exc:
                failed = failed or bool(exc.exit_code)
    cli.report(names=None, results_dir=results_dir, experiments_dir=experiments_dir, superseded=False)
    from fyexp.specs import available_specs

    present = set(available_specs(experiments_dir))
    for p in papers:
        needed = {e for c in load_claims(check=False).for_paper(p).claims for e in c.experiments}
        if needed <= present:
            claims_command(p, profile, False, results_dir, experiments_dir, console)
        else:  # a folder of one's own experiments: the paper's claims read rows it does not write
            print(f"claims of {p}: not judged (the experiments folder lacks {', '.join(sorted(needed - present))})")
    if failed:
        raise typer.Exit(1)
