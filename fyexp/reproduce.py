"""``fyexp reproduce PAPER|all``: every experiment a paper needs, at a profile, then ``report`` and ``claims``.

A paper needs the experiments whose spec says ``paper: PAPER`` and those its claims read (fyvl's claims read the
fyvi experiments).  ``--dry-run`` prints the plan: per experiment the cells of the grid (the runner's own listing,
:func:`fyexp.runner.pending_cells`, with ``--only``), how many are finished and how many are to run, and an
estimate of the time, that of ``fyexp run``'s plan (:mod:`fyexp.plan`: the recorded ``wall_time_s`` of the
experiment's finished cells at the profile, per method; "unknown" where none is recorded).  ``all`` lists each
experiment once (fyvl's are fyvi's) and ends with a total.  A real run asks first when the total is long
(:func:`fyexp.plan.long_plan_reason`), then runs each experiment once.  Running is the CLI's (``fyexp run`` /
``fyexp report``, passed in as callables), so this module never imports the command line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from fyexp.cell_filter import CellFilter
from fyexp.claims.model import PAPERS, load_claims
from fyexp.errors import FyexpError
from fyexp.plan import duration, long_plan_reason


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


def plan(paper: str, profile: str, results_dir: Path, experiments_dir: Path | None = None,
         only: CellFilter | None = None, sets: list[str] | None = None,
         names: list[str] | None = None) -> list[PlanLine]:
    """One line per experiment of ``paper`` (or of ``names``): its cells, finished, to run, and the estimate."""
    from fyexp.experiments import get_experiment
    from fyexp.plan import run_plan
    from fyexp.specs import load_spec, parse_sets, resolve

    lines = []
    for name in paper_experiments(paper, experiments_dir) if names is None else names:
        spec = load_spec(name, experiments_dir)
        if profile not in spec.profile_names():
            lines.append(PlanLine(name, 0, 0, 0, None, f"no profile '{profile}'"))
            continue
        experiment = get_experiment(spec.runner)
        resolved = resolve(spec, profile, experiment.Config, None, parse_sets(sets))  # --set: the variant
        try:
            one = run_plan(resolved, experiment, results_dir, False, only)
        except FyexpError as exc:  # --only names a key or value this experiment's grid lacks
            lines.append(PlanLine(name, 0, 0, 0, None, f"left out: {exc}"))
            continue
        lines.append(PlanLine(name, one.cells, one.finished, one.to_run, one.seconds_per_cell))
    return lines


def _total(lines: list[PlanLine]) -> tuple[int, int, float | None, bool]:
    """Cells, cells to run, the estimate of those with recorded times (None if none has) and whether some lack."""
    known = [x.estimate_s for x in lines if x.to_run and x.estimate_s is not None]
    unknown = any(x.to_run and x.estimate_s is None for x in lines)
    todo = sum(x.to_run for x in lines)
    return sum(x.cells for x in lines), todo, (sum(known) if known else (None if unknown else 0.0)), unknown


def total_line(label: str, lines: list[PlanLine]) -> str:
    cells, todo, seconds, unknown = _total(lines)
    if seconds is None:
        return f"  {label}: {cells} cells, {todo} to run, estimate unknown (no recorded times)"
    return (f"  {label}: {cells} cells, {todo} to run, estimate {duration(seconds)}"
            + (" (+ experiments without recorded times)" if unknown else "") + " on the device that recorded them")


def describe(paper: str, profile: str, lines: list[PlanLine], listed_above: list[str] = ()) -> str:
    out = [f"{paper} paper at profile '{profile}':"]
    for line in lines:
        if line.note:
            out.append(f"  {line.experiment}: {line.note}")
            continue
        per = "" if line.seconds_per_cell is None else f" ({duration(line.seconds_per_cell)} per cell)"
        out.append(f"  {line.experiment}: {line.cells} cells, {line.finished} finished, {line.to_run} to run, "
                   f"estimate {duration(line.estimate_s) if line.to_run else '0 s'}{per}")
    if listed_above:
        out.append(f"  also needs {', '.join(listed_above)} (listed above)")
    if lines:
        out.append(total_line("total", lines))
    return "\n".join(out)


def plan_papers(papers: list[str], profile: str, results_dir: Path, experiments_dir: Path | None = None,
                only: CellFilter | None = None, sets: list[str] | None = None):
    """Per paper: its plan lines for experiments not planned for an earlier paper, and those it shares."""
    seen: list[str] = []
    out = []
    for p in papers:
        names = paper_experiments(p, experiments_dir)
        new = [n for n in names if n not in seen]
        out.append((p, plan(p, profile, results_dir, experiments_dir, only, sets, names=new),
                    [n for n in names if n in seen]))
        seen += new
    return out


def reproduce_papers(paper: str, *, profile: str, dry_run: bool, only: list[str] | None, sets: list[str] | None,
                     results_dir: Path, experiments_dir: Path | None, console, run_one: Callable[[str], bool],
                     report_all: Callable[[], None], confirm: Callable[[str | None], None] = lambda reason: None
                     ) -> bool:
    """``fyexp reproduce``: the plan (``dry_run``), or every experiment of the paper (``all``: of the five, each
    once) through ``run_one(name)`` (``fyexp run``; False when a cell failed — the others still run), then
    ``report_all()`` and the claims.  Before running, ``confirm(reason)`` is called with why the whole plan is long
    (:func:`fyexp.plan.long_plan_reason`; None when it is not).  Returns whether every run succeeded."""
    from fyexp.cell_filter import parse_only
    from fyexp.claims.command import claims_command
    from fyexp.specs import available_specs

    papers = list(PAPERS) if paper == "all" else [paper]
    cell_filter = parse_only(only)
    plans = plan_papers(papers, profile, results_dir, experiments_dir, cell_filter, sets)
    every = [line for _, lines, _ in plans for line in lines]
    if dry_run:
        for p, lines, shared in plans:
            print(describe(p, profile, lines, shared))
        if len(papers) > 1:
            print(f"all {len(papers)} papers, each experiment once ({len(every)} experiments):")
            print(total_line("total", every))
        return True
    _, todo, seconds, unknown = _total(every)
    confirm(long_plan_reason(todo, None if unknown else seconds, profile))
    ok = True
    for line in every:
        if not line.note:
            ok = run_one(line.experiment) and ok
    report_all()
    present = set(available_specs(experiments_dir))
    for p in papers:
        needed = {e for c in load_claims(check=False).for_paper(p).claims for e in c.experiments}
        if needed <= present:
            claims_command(p, profile, False, results_dir, experiments_dir, console)
        else:  # a folder of one's own experiments: the paper's claims read rows it does not write
            print(f"claims of {p}: not judged (the experiments folder lacks {', '.join(sorted(needed - present))})")
    return ok
