"""``fyexp reproduce PAPER|all``: every experiment a paper needs, at a profile, then ``report`` and ``claims``.

A paper needs the experiments whose spec says ``paper: PAPER`` and those its claims read (fyvl's claims read the
fyvi experiments).  ``--dry-run`` prints the plan: per experiment the cells of the grid (the runner's own listing,
:func:`fyexp.runner.pending_cells`, with ``--only``), how many are finished and how many are to run, and an
estimate of the time: the mean ``wall_time_s`` of the cells already recorded for the same experiment and profile,
times the cells to run ("unknown" where none is recorded).  Running is the CLI's (``fyexp run`` / ``fyexp report``,
passed in as callables), so this module never imports the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fyexp.cell_filter import CellFilter
from fyexp.claims.model import PAPERS, load_claims
from fyexp.errors import FyexpError


@dataclass(frozen=True)
class PlanLine:
    experiment: str
    cells: int
    finished: int
    to_run: int
    seconds_per_cell: float | None
    note: str = ""

    @property
    def estimate_s(self) -> float | None:
        return None if self.seconds_per_cell is None else self.seconds_per_cell * self.to_run


def paper_experiments(paper: str, experiments_dir: Path | None = None) -> list[str]:
    from fyexp.specs import available_specs, load_spec

    if paper not in PAPERS:
        raise FyexpError(f"reproduce: unknown paper '{paper}'; expected one of {', '.join(PAPERS)} or all")
    names = [n for n in available_specs(experiments_dir) if load_spec(n, experiments_dir).paper == paper]
    try:
        read = [e for c in load_claims(experiments_dir=experiments_dir, check=False).for_paper(paper).claims
                for e in c.experiments]
    except FyexpError:
        read = []
    known = set(available_specs(experiments_dir))
    return list(dict.fromkeys(names + [e for e in read if e in known]))


def seconds_per_cell(frame, profile: str) -> float | None:
    """Mean recorded wall time of one finished cell of ``profile`` (each cell's rows carry its wall time)."""
    if frame.empty or "wall_time_s" not in frame:
        return None
    rows = frame[(frame["profile"].astype(str) == profile) & (frame["status"].fillna("ok") == "ok")]
    times = rows.drop_duplicates("cell")["wall_time_s"].dropna() if "cell" in rows else rows["wall_time_s"].dropna()
    return float(times.mean()) if len(times) else None


def plan(paper: str, profile: str, results_dir: Path, experiments_dir: Path | None = None,
         only: CellFilter | None = None, sets: list[str] | None = None) -> list[PlanLine]:
    from fyexp.claims.verdicts import _read_only
    from fyexp.experiments import get_experiment
    from fyexp.results import ResultStore
    from fyexp.runner import pending_cells
    from fyexp.specs import load_spec, parse_sets, resolve

    lines = []
    for name in paper_experiments(paper, experiments_dir):
        spec = load_spec(name, experiments_dir)
        if profile not in spec.profile_names():
            lines.append(PlanLine(name, 0, 0, 0, None, f"no profile '{profile}'"))
            continue
        experiment = get_experiment(spec.runner)
        resolved = resolve(spec, profile, experiment.Config, None, parse_sets(sets))  # --set: the variant
        store = ResultStore(results_dir, name)
        try:
            cells, todo = pending_cells(resolved, experiment, store, False, only)
        except FyexpError as exc:  # --only names a key or value this experiment's grid lacks
            lines.append(PlanLine(name, 0, 0, 0, None, f"left out: {exc}"))
            continue
        lines.append(PlanLine(name, len(cells), len(cells) - len(todo), len(todo),
                              seconds_per_cell(_read_only(store), resolved.profile)))
    return lines


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "unknown"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 7200 else f"{seconds / 3600:.1f} h"


def describe(paper: str, profile: str, lines: list[PlanLine]) -> str:
    out = [f"{paper} paper at profile '{profile}':"]
    for line in lines:
        if line.note:
            out.append(f"  {line.experiment}: {line.note}")
            continue
        per = "" if line.seconds_per_cell is None else f" ({_duration(line.seconds_per_cell)} per recorded cell)"
        out.append(f"  {line.experiment}: {line.cells} cells, {line.finished} finished, {line.to_run} to run, "
                   f"estimate {_duration(line.estimate_s) if line.to_run else '0 s'}{per}")
    todo = sum(x.to_run for x in lines)
    known = [x.estimate_s for x in lines if x.to_run and x.estimate_s is not None]
    unknown = any(x.to_run and x.estimate_s is None for x in lines)
    total = _duration(sum(known)) if known else ("unknown" if unknown else "0 s")
    out.append(f"  total: {sum(x.cells for x in lines)} cells, {todo} to run, estimate {total}"
               + (" (+ experiments without recorded times)" if unknown and known else "")
               + " on the device that recorded them")
    return "\n".join(out)


def reproduce_papers(paper: str, *, profile: str, dry_run: bool, only: list[str] | None, sets: list[str] | None,
                     results_dir: Path, experiments_dir: Path | None, console, run_one: Callable[[str], bool],
                     report_all: Callable[[], None]) -> bool:
    """``fyexp reproduce``: the plan (``dry_run``), or every experiment of the paper (``all``: of the five) through
    ``run_one(name)`` (``fyexp run``; False when a cell failed — the others still run), then ``report_all()`` and
    the claims.  Returns whether every run succeeded."""
    from fyexp.cell_filter import parse_only
    from fyexp.claims.command import claims_command
    from fyexp.specs import available_specs

    papers = list(PAPERS) if paper == "all" else [paper]
    cell_filter = parse_only(only)
    if dry_run:
        for p in papers:
            print(describe(p, profile, plan(p, profile, results_dir, experiments_dir, cell_filter, sets)))
        return True
    ok = True
    for p in papers:
        for name in paper_experiments(p, experiments_dir):
            ok = run_one(name) and ok
    report_all()
    present = set(available_specs(experiments_dir))
    for p in papers:
        needed = {e for c in load_claims(check=False).for_paper(p).claims for e in c.experiments}
        if needed <= present:
            claims_command(p, profile, False, results_dir, experiments_dir, console)
        else:  # a folder of one's own experiments: the paper's claims read rows it does not write
            print(f"claims of {p}: not judged (the experiments folder lacks {', '.join(sorted(needed - present))})")
    return ok
