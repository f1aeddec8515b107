"""``fyexp reproduce PAPER|all``: every experiment a paper needs, at a profile, then ``report`` and ``claims``.

A paper needs the experiments whose spec says ``paper: PAPER`` and those its claims read (fyvl's read fyvi's).
``--dry-run`` prints a line per experiment from ``fyexp run``'s own plan (:func:`fyexp.run.plan.run_plan`) and a
total; ``all`` plans each experiment once.  A real run asks once when the total is long, then runs each experiment
as ``fyexp run`` does (:func:`fyexp.cli.commands.run.run_command`), then the report and the claims.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from rich.console import Console

from fyexp.run.cell_filter import CellFilter
from fyexp.cli.commands.options import Options, results_folder
from fyexp.core.errors import FyexpError, SpecError
from fyexp.core.words import counted, duration
from fyexp.reference import papers
from fyexp.run.estimate import extrapolated_text, per_cell, scaled_text
from fyexp.run.plan import long_plan_reason, plan_inputs
from fyexp.run.progress import say

NO_PROFILE, LEFT_OUT = "no profile", "left out"   # why an experiment has no cell in the plan


@dataclass(frozen=True)
class PlanLine:
    experiment: str
    cells: int
    finished: int
    to_run: int
    estimate_s: float | None  # of the cells to run less the unestimated ones (fyexp run's plan); None: of none
    note: str = ""
    excluded: str = ""      # NO_PROFILE or LEFT_OUT (by --only) when the experiment runs nothing
    unestimated: int = 0    # cells to run on data no recorded cell of the profile used: not in estimate_s
    extrapolated: str = ""  # fyexp run's "N of them at another K than any recorded cell", when some are
    scaled: str = ""        # fyexp run's "about … for N of them, scaled from the 'cpu' profile's cells …", if any
    scaled_s: float | None = None  # that time (fyexp.run.estimate.with_scaled)
    scaled_cells: int = 0   # and how many cells it covers


def paper_experiments(paper: str, experiments_dir: Path | None = None) -> list[str]:
    """The experiments of ``paper``: those whose spec names it, then those its claims read."""
    from fyexp.claims.model import load_claims
    from fyexp.spec.specs import available_specs, load_spec

    if paper not in papers():
        raise FyexpError(f"reproduce: unknown paper '{paper}'; expected one of {', '.join(papers())} or all")
    known = available_specs(experiments_dir)
    names = [n for n in known if load_spec(n, experiments_dir).paper == paper]
    try:
        read = [e for c in load_claims(experiments_dir=experiments_dir, check=False).for_paper(paper).claims
                for e in c.experiments]
    except FyexpError:
        read = []
    return list(dict.fromkeys(names + [e for e in read if e in known]))


def plan(paper: str, profile: str, results_dir: Path, experiments_dir: Path | None = None,
         only: CellFilter | None = None, sets: list[str] | None = None,
         names: list[str] | None = None) -> list[PlanLine]:
    """One line per experiment of ``paper`` (or of ``names``): its cells, finished, to run, and the estimate."""
    from fyexp.experiments import get_experiment
    from fyexp.run.estimate import with_scaled
    from fyexp.run.plan import grid_cells, run_plan
    from fyexp.spec.specs import load_spec, parse_sets, resolve

    lines = []
    for name in paper_experiments(paper, experiments_dir) if names is None else names:
        spec = load_spec(name, experiments_dir)
        if profile not in spec.profile_names():
            lines.append(PlanLine(name, 0, 0, 0, None, f"{NO_PROFILE} '{profile}'", NO_PROFILE))
            continue
        experiment = get_experiment(spec.runner)
        try:
            resolved = resolve(spec, profile, experiment.Config, None, parse_sets(sets))  # --set: the variant
            grid_cells(resolved, experiment)
        except SpecError as exc:
            if exc.file != "--set":
                raise
            raise SpecError(f"--set, for experiment {name}", exc.key, exc.expected, exc.got) from None
        try:
            one = with_scaled(run_plan(resolved, experiment, results_dir, False, only), resolved, experiment,
                              results_dir)
        except FyexpError as exc:  # --only names a key or value this experiment's grid lacks
            lines.append(PlanLine(name, 0, 0, 0, None, f"{LEFT_OUT}: {exc}", LEFT_OUT))
            continue
        lines.append(PlanLine(name, one.cells, one.finished, one.to_run, one.estimate_s,
                              unestimated=one.unestimated if one.estimate_s is not None else 0,
                              extrapolated=extrapolated_text(one.extrapolated, one.extrapolated_keys),
                              scaled=scaled_text(one.scaled_s, one.scaled, one.scaled_from),
                              scaled_s=one.scaled_s, scaled_cells=one.scaled))
    return lines


def _total(lines: list[PlanLine]) -> tuple[int, float | None, bool]:
    """Cells to run, the estimate of those with recorded times (None if none has) and whether some lack one."""
    known = [x.estimate_s for x in lines if x.to_run and x.estimate_s is not None]
    unknown = any(x.to_run and (x.estimate_s is None or x.unestimated) for x in lines)
    return sum(x.to_run for x in lines), sum(known) if known else (None if unknown else 0.0), unknown


def total_line(label: str, lines: list[PlanLine]) -> str:
    """The plan's total: cells, to run, the recorded estimate; and, apart, the time scaled for cells without one
    (their experiments' lines say from which profiles)."""
    from fyexp.run.speed import machine_speed, speed_text

    todo, seconds, unknown = _total(lines)
    scaled = [x for x in lines if x.to_run and x.scaled_cells and x.scaled_s is not None]
    apart = (f"; about {duration(sum(x.scaled_s for x in scaled))} for {sum(x.scaled_cells for x in scaled)} cells "
             f"without one, scaled from other profiles (an extrapolation)") if scaled else ""
    head = f"  {label}: {counted(sum(x.cells for x in lines))}, {todo} to run, estimate"
    if seconds is None:
        return f"{head} unknown (no recorded times){apart}"
    return (f"{head} {duration(seconds)}{' (+ cells without recorded times)' if unknown else ''} from recorded "
            f"times, those of the project's machine {speed_text(machine_speed())}{apart}")


def describe(paper: str, profile: str, lines: list[PlanLine], listed_above: list[str] = ()) -> str:
    """The dry run of one paper: a line per experiment (``0 s`` with nothing to run; ``13 min``; ``23.6 h for 40
    of them, unknown for 14``; ``unknown``), those planned for an earlier paper, the total."""
    out = [f"{paper} paper at profile '{profile}':"]
    for x in lines:
        if x.note:
            out.append(f"  {x.experiment}: {x.note}")
            continue
        estimate = duration(x.estimate_s) if x.to_run else "0 s"
        if x.to_run and x.estimate_s is not None and x.unestimated:
            estimate += f" for {x.to_run - x.unestimated} of them, unknown for {x.unestimated}"
        each = per_cell(x.estimate_s, x.to_run, x.unestimated)
        per = "" if each is None else f" ({duration(each)} per cell)"
        other = "".join(f"; {text}" for text in (x.extrapolated, x.scaled) if text)
        out.append(f"  {x.experiment}: {counted(x.cells)}, {x.finished} finished, {x.to_run} to run, "
                   f"estimate {estimate}{per}{other}")
    if listed_above:
        out.append(f"  also needs {', '.join(listed_above)} (listed above)")
    if lines:
        out.append(total_line("total", lines))
    return "\n".join(out)


def reproduce_papers(paper: str, options: Options, *, out: Console, err: Console,
                     ask: Callable[[str], bool | None]) -> bool:
    """``fyexp reproduce``: the plan (``options.dry_run``), or every experiment of the paper (``all``: of the five,
    each once; a failed cell does not stop the others), then the report and the claims.  A plan in which no
    experiment runs because of the options is refused, dry run or not; a long plan is confirmed once
    (:func:`fyexp.run.plan.confirm`), each run then starts without asking.  Returns whether every run succeeded."""
    from fyexp.run.cell_filter import parse_only
    from fyexp.store.user_cache import remembered

    results_dir = results_folder(options.results_dir, writable=not options.dry_run)
    experiments_dir, profile = options.experiments_dir, options.profile
    ids = list(papers()) if paper == "all" else [paper]
    cell_filter = parse_only(options.only)

    def planned():   # per paper: its lines for experiments no earlier paper planned, and those it shares
        seen, plans = [], []
        for p in ids:
            names = paper_experiments(p, experiments_dir)
            new = [n for n in names if n not in seen]
            plans.append((p, plan(p, profile, results_dir, experiments_dir, cell_filter, list(options.sets), new),
                          [n for n in names if n in seen]))
            seen += new
        return plans

    # planning imports every runner (torch) and judges every finished cell's settings (seconds): the plan is kept in
    # the user cache under plan_inputs, all it is derived from (None, never kept: a spec's runner outside fyexp)
    key = plan_inputs(results_dir, experiments_dir)
    plans = planned() if key is None else remembered("reproduce-plan", repr((
        tuple(ids), profile, str(results_dir.resolve()), str(Path(experiments_dir).resolve()) if experiments_dir
        else None, cell_filter.conditions, tuple(options.sets))), key, planned)
    every = [line for _, lines, _ in plans for line in lines]
    if every and all(x.excluded == NO_PROFILE for x in every):   # no experiment runs because of the options
        from fyexp.spec.specs import load_spec

        known = sorted({p for x in every for p in load_spec(x.experiment, experiments_dir).profile_names()})
        raise FyexpError(f"--profile: unknown profile '{profile}' for the experiments of {paper} "
                         f"({', '.join(x.experiment for x in every)}); expected one of {', '.join(known)}")
    if cell_filter.conditions and every and all(x.excluded for x in every):
        why = "; ".join(f"{x.experiment} {x.note}" for x in every if x.excluded == LEFT_OUT)
        raise FyexpError(f"--only {' '.join(cell_filter.describe())}: selects no cell of any experiment of {paper} "
                         f"({why})")
    if options.dry_run:
        for p, lines, shared in plans:   # whole lines off a terminal (scripts read them), wrapped on one
            say(out, describe(p, profile, lines, shared))
        if len(ids) > 1:
            say(out, f"all {len(ids)} papers, each experiment once ({len(every)} experiments):")
            say(out, total_line("total", every))
        return True
    from fyexp.claims.command import claims_command   # a real run only: a dry run stays light
    from fyexp.claims.model import load_claims
    from fyexp.cli.commands.report import report_command
    from fyexp.cli.commands.run import run_command
    from fyexp.run.plan import confirm
    from fyexp.spec.specs import available_specs

    todo, seconds, unknown = _total(every)
    what = f"fyexp reproduce {paper}"
    if not confirm(long_plan_reason(todo, None if unknown else seconds, profile), options.yes, what, ask):
        say(err, f"{what}: not started")
        return False
    each = replace(options, results_dir=results_dir, yes=True)  # the whole plan was confirmed above
    ok = True
    for line in every:
        if not line.excluded:
            ok = run_command(line.experiment, each, err=err, ask=ask) and ok
    report_command(None, results_dir, experiments_dir, superseded=False, out=out, err=err)
    present = set(available_specs(experiments_dir))
    for p in ids:
        needed = {e for c in load_claims(check=False).for_paper(p).claims for e in c.experiments}
        if needed <= present:
            claims_command(p, profile, False, results_dir, experiments_dir, out)
        else:  # a folder of one's own experiments: the paper's claims read rows it does not write
            print(f"claims of {p}: not judged (the experiments folder lacks {', '.join(sorted(needed - present))})")
    return ok
