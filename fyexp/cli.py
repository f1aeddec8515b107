"""The ``fyexp`` command line: parse options, resolve a spec, hand it to a runner.  No experiment logic here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
import yaml
from rich.console import Console
from rich.markup import escape

from fyexp import __version__
from fyexp.errors import EnvironmentFailure, FyexpError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce the tables and figures of five papers on generalized variational inference.\n\n"
                       "Experiments are YAML specs in experiments/; results go to results/ as tidy CSVs; "
                       "`fyexp report` rebuilds every table and figure from those CSVs.")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

PROFILE_HELP = "Spec profile: 'paper' (the paper's exact settings), 'quick' (minutes on 2 cores) or any other the spec defines."
DATA_HELP = "Root of the datasets (MNIST/, FashionMNIST/, 20newsgroups/, UCI/ ...). Default: $FYEXP_DATA_DIR; without either, datasets are downloaded where there is internet."
RESULTS_HELP = "Where results are written and read. Default: $FYEXP_RESULTS_DIR or ./results."
SET_HELP = ("Override one parameter of the resolved spec: KEY=VALUE, KEY a dotted path (train.optimizer.lr=1e-4, "
            "grid.latent_rho=1.5), VALUE read as YAML and validated like the spec. Repeatable. The rows form a "
            "variant of the profile (e.g. 'paper+lr=1e-4'), never scored as the profile itself.")
EXPERIMENTS_HELP = "Folder of the experiment specs. Default: $FYEXP_EXPERIMENTS_DIR, ./experiments, or fyexp's own."


def _results_dir(option: Optional[Path], writable: bool = False) -> Path:
    """The results folder; with ``writable`` it must be (or become) a folder this process can write to."""
    path = option or Path(_env_setting("FYEXP_RESULTS_DIR") or "results")
    if path.exists() and not path.is_dir():
        raise FyexpError(f"--results-dir / FYEXP_RESULTS_DIR: '{path}' is a file; expected a folder")
    if writable:
        check_writable_folder(path, "--results-dir / FYEXP_RESULTS_DIR")
    return path


def _env_setting(name: str) -> str | None:
    """An environment setting, or None when unset; set but empty (or blank) is an error, not the current folder."""
    value = os.environ.get(name)
    if value is not None and not value.strip():
        raise FyexpError(f"{name}: expected a folder, got an empty value (unset it to use the default)")
    return value


def check_writable_folder(path: Path, what: str) -> None:
    """Create ``path`` if needed and prove that a file can be written there (else one line, exit 1)."""
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".fyexp-write-check."):
            pass
    except (FileExistsError, NotADirectoryError):
        raise FyexpError(f"{what}: '{path}' (or a parent of it) is a file; expected a folder") from None
    except OSError as exc:
        raise EnvironmentFailure(f"{what}: cannot write to '{path}' ({exc.strerror})") from None


def _data_dir(option: Optional[Path]) -> Optional[Path]:
    path = option or (Path(_env_setting("FYEXP_DATA_DIR")) if _env_setting("FYEXP_DATA_DIR") else None)
    if path is not None and not path.is_dir():
        raise FyexpError(f"--data-dir / FYEXP_DATA_DIR: '{path}' is not a folder")
    return path


def _resolve(name: str, profile: str, seeds: Optional[str], experiments_dir: Optional[Path],
             sets: Optional[List[str]] = None):
    from fyexp.experiments import get_experiment
    from fyexp.specs import load_spec, parse_seeds, parse_sets, resolve

    overrides = parse_sets(sets)
    spec = load_spec(name, experiments_dir)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, profile, experiment.Config, parse_seeds(seeds), overrides)
    return spec, experiment, resolved


@app.command("list")
def list_experiments(experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
                     results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP + " Recorded wall times there (else in the repository's results/) give the estimates."),
                     as_json: bool = typer.Option(False, "--json", help="Print a JSON list (name, title, tables, figures, profiles with cells and estimated seconds) for scripts."),
                     plain: bool = typer.Option(False, "--plain", help="One tab-separated line per experiment (the default when the output is not a terminal).")) -> None:
    """List the experiments, the tables and figures each reproduces, and their profiles with cells and time."""
    import json

    from fyexp.overview import list_blocks, profile_summaries
    from fyexp.specs import available_specs, load_spec

    specs = [load_spec(name, experiments_dir) for name in available_specs(experiments_dir)]
    if plain or (not as_json and not out.is_terminal):
        for s in specs:
            print("\t".join([s.name, ",".join(s.profile_names()), "; ".join(s.tables + s.figures), s.title]))
        return
    results = _results_dir(results_dir)
    summaries = {s.name: profile_summaries(s, results) for s in specs}
    if as_json:
        body = [{"name": s.name, "title": s.title, "tables": list(s.tables), "figures": list(s.figures),
                 "profiles": s.profile_names(),
                 "cells": {p.name: p.cells for p in summaries[s.name]},
                 "estimate_s": {p.name: p.estimate_s for p in summaries[s.name]}} for s in specs]
        print(json.dumps(body, indent=1, ensure_ascii=False))
        return
    for line in list_blocks(specs, summaries, max(out.width, 60)):
        out.print(line, markup=False, highlight=False, soft_wrap=True)


@app.command()
def show(name: str = typer.Argument(..., help="Experiment name (see `fyexp list`)."),
         profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
         sets: Optional[List[str]] = typer.Option(None, "--set", help=SET_HELP),
         experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
         results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP + " Its recorded wall times give the estimate.")) -> None:
    """Print a summary of one experiment and profile (cells, methods, data sets, estimate), then its resolved spec:
    every hyperparameter that a run will use."""
    import dataclasses

    from fyexp.experiments import get_config_class
    from fyexp.overview import show_summary, summarize
    from fyexp.specs import load_spec, parse_sets, resolve

    spec = load_spec(name, experiments_dir)   # only the Config: the runner (torch) is imported to run a cell
    resolved = resolve(spec, profile, get_config_class(spec.runner), None, parse_sets(sets))
    summary = show_summary(spec, summarize(spec, resolved, _results_dir(results_dir)))
    body = {"name": spec.name, "title": spec.title, "runner": spec.runner, "profile": resolved.profile,
            "seeds": list(resolved.seeds), "tables": list(spec.tables), "figures": list(spec.figures),
            "config": dataclasses.asdict(resolved.config)}
    out.print("\n".join(summary), markup=False, highlight=False, soft_wrap=True)
    out.print(yaml.safe_dump(_plain(body), sort_keys=False, allow_unicode=True), end="", markup=False,
              highlight=False)


def _plain(obj):
    if isinstance(obj, dict):
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


@app.command()
def run(name: str = typer.Argument(..., help="Experiment name (see `fyexp list`)."),
        profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
        seeds: Optional[str] = typer.Option(None, help="Override the profile's seeds: '0,1,2' or a range '0-4'."),
        sets: Optional[List[str]] = typer.Option(None, "--set", help=SET_HELP),
        device: str = typer.Option("auto", help="auto (CUDA when available, else CPU), cpu or cuda."),
        data_dir: Optional[Path] = typer.Option(None, help=DATA_HELP),
        results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
        experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
        force: bool = typer.Option(False, "--force", help="Redo cells that are already finished (default: skip them)."),
        allow_dirty: bool = typer.Option(False, "--allow-dirty", help="With --profile paper: run although the source tree has uncommitted changes (every row is then marked +dirty)."),
        best: bool = typer.Option(False, "--best", help="Use the best parameters found by `fyexp tune NAME` (tuned experiments only)."),
        only: Optional[list[str]] = typer.Option(None, "--only", help="Run part of the grid: KEY=PATTERN[,PATTERN...], KEY a cell parameter, 'method' or 'seed', PATTERN shell-style (e.g. --only dataset=caltech --only K=5). Repeat to narrow further; the other cells are left for a later run."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Live progress bars on a terminal (default); --no-progress prints one plain line per cell instead (as does output that is not a terminal)."),
        executor: Optional[str] = typer.Option(None, "--executor", help="Run the cells as jobs of submitit: 'local' (this machine, --jobs at once) or 'slurm' (a job array). Default: in this process, one cell after another.", rich_help_panel="Executors"),
        jobs: Optional[int] = typer.Option(None, "--jobs", help="Cells at once: local default one per core; slurm: the array's parallelism (default all).", rich_help_panel="Executors"),
        threads_per_job: int = typer.Option(1, "--threads-per-job", help="Threads of each job (torch and BLAS). One single-threaded cell per core is fastest on a CPU.", rich_help_panel="Executors"),
        slurm_partition: Optional[str] = typer.Option(None, "--slurm-partition", help="SLURM partition of the jobs.", rich_help_panel="Executors"),
        slurm_gpus_per_job: int = typer.Option(0, "--slurm-gpus-per-job", help="GPUs per SLURM job (use with --device cuda).", rich_help_panel="Executors"),
        slurm_cpus_per_job: Optional[int] = typer.Option(None, "--slurm-cpus-per-job", help="CPUs per SLURM job (default: --threads-per-job).", rich_help_panel="Executors"),
        slurm_mem_gb: Optional[float] = typer.Option(None, "--slurm-mem-gb", help="Memory per SLURM job in GiB (default: the partition's).", rich_help_panel="Executors"),
        slurm_time: int = typer.Option(24 * 60, "--slurm-time", help="Time limit of each SLURM job, in minutes.", rich_help_panel="Executors"),
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (cells to run, finished, at old settings; the time estimate) and run nothing; with --executor slurm also the sbatch script and the array's cells."),
        strict: bool = typer.Option(False, "--strict", help="A cell skipped because its data is missing fails the run (exit 1)."),
        yes: bool = typer.Option(False, "--yes", help="Start without asking: a plan estimated over two hours (or of unknown length at a paper profile), or a grid larger than the limit of cells one run may start (fyexp/domains.py).")) -> None:
    """Run an experiment's grid of cells; finished cells are kept and skipped on a rerun."""
    from fyexp.cell_filter import parse_only
    from fyexp.devices import resolve_device
    from fyexp.domains import check_cell_memory, check_grid_size, check_options
    from fyexp.runner import run_experiment

    check_options({"--jobs": jobs, "--threads-per-job": threads_per_job, "--slurm-gpus-per-job": slurm_gpus_per_job,
                   "--slurm-cpus-per-job": slurm_cpus_per_job, "--slurm-mem-gb": slurm_mem_gb,
                   "--slurm-time": slurm_time})
    cell_filter = parse_only(only)
    spec, experiment, resolved = _resolve(name, profile, seeds, experiments_dir, sets)
    one_seed = experiment.cells(resolved.config, resolved.seeds[:1])  # sizes and memory do not depend on the seed
    check_grid_size(cell_filter.count(one_seed, resolved.seeds), yes)
    check_cell_memory(experiment, resolved.config, one_seed, yes)
    if profile == "paper" and not dry_run:
        from fyexp.provenance import require_clean_tree

        require_clean_tree(allow_dirty, type(experiment).__module__)
    results = _results_dir(results_dir, writable=not dry_run)
    if best:
        from fyexp.tuning import with_best

        resolved = (with_best(resolved, results, getattr(experiment, "PARAM_ALIASES", None))
                    if getattr(resolved.config, "search", None) else _no_best(name))
    options = None
    if executor is not None:
        from fyexp.executors import ExecutorOptions

        options = ExecutorOptions(kind=executor, jobs=jobs, threads_per_job=threads_per_job,
                                  slurm_partition=slurm_partition, slurm_gpus_per_job=slurm_gpus_per_job,
                                  slurm_cpus_per_job=slurm_cpus_per_job, slurm_mem_gb=slurm_mem_gb,
                                  slurm_time_min=slurm_time, dry_run=dry_run and executor == "slurm")
    elif jobs is not None:
        raise FyexpError("--jobs needs --executor local or slurm")
    from fyexp.plan import describe_plan, long_plan_reason, run_plan

    plan = run_plan(resolved, experiment, results, force, cell_filter, device=resolve_device(device),
                    data_dir=_data_dir(data_dir))
    if dry_run:
        print(describe_plan(plan))
        if options is not None and options.kind == "slurm":
            _dry_run_slurm(resolved, experiment, results, force, cell_filter, device, data_dir, options)
        return
    _say(describe_plan(plan))
    _confirm(long_plan_reason(plan.to_run, plan.estimate_s, profile), yes, f"fyexp run {name}")
    from fyexp.progress import make_progress

    summary = run_experiment(resolved, experiment, device=resolve_device(device), data_dir=_data_dir(data_dir),
                             results_dir=results, force=force, console=err, executor=options, only=cell_filter,
                             progress=make_progress(err, live=progress, keys=plan.todo_keys))
    err.print(f"[green]{escape(f'{name} [{resolved.profile}]')}:[/] {summary.ran} cells run, {summary.skipped} already "
              f"finished, {summary.failed} failed, {summary.data_missing} skipped (data missing), "
              f"{summary.wall_time_s:.1f} s → {escape(str(summary.results_csv))}")
    if summary.failed or (strict and summary.data_missing):
        raise typer.Exit(1)


def _dry_run_slurm(resolved, experiment, results: Path, force: bool, cell_filter, device: str,
                   data_dir: Optional[Path], options) -> None:
    """``run --dry-run --executor slurm``: the sbatch script and which cell each array task runs."""
    from fyexp.devices import resolve_device
    from fyexp.executors import describe_slurm_submission
    from fyexp.results import ResultStore
    from fyexp.runner import pending_cells

    store = ResultStore(results, resolved.name)
    todo = pending_cells(resolved, experiment, store, force, cell_filter, device=resolve_device(device),
                         data_dir=_data_dir(data_dir))[1]
    print(describe_slurm_submission(resolved, todo, store, options))
    err.print(f"dry run: {len(todo)} cells would be submitted as one SLURM array; nothing was submitted",
              markup=False, highlight=False)


def _confirm(reason: Optional[str], yes: bool, what: str) -> None:
    """A long plan (``reason``) starts only when confirmed: ``--yes``, or a yes at a terminal; off a terminal
    without ``--yes`` it stops with one line (exit 2)."""
    if reason is None or yes:
        return
    if sys.stdin.isatty() and err.is_terminal:
        if typer.confirm(f"{what}: {reason}. Start it?", default=False, err=True):
            return
        _say(f"{what}: not started")
        raise typer.Exit(1)
    raise FyexpError(f"{what}: not started: {reason}; pass --yes to start it (--dry-run shows the plan)")


def _no_best(name: str):
    raise FyexpError(f"--best: experiment '{name}' has no tuning study")


@app.command()
def tune(name: str = typer.Argument(..., help="Experiment name with a tuning study (e.g. nvdm, fy-nvdm)."),
         profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
         sets: Optional[List[str]] = typer.Option(None, "--set", help=SET_HELP),
         n_trials: Optional[int] = typer.Option(None, help="Trials still to run in this study (default: the profile's)."),
         timeout: Optional[float] = typer.Option(None, help="Stop starting new trials after this many seconds."),
         storage: Optional[str] = typer.Option(None, help="SQLAlchemy URL of the study database, or journal:PATH (Optuna's journal file, for workers on a cluster's shared file system). Default: SQLite under the results folder."),
         device: str = typer.Option("auto", help="auto, cpu or cuda."),
         data_dir: Optional[Path] = typer.Option(None, help=DATA_HELP),
         results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
         experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
         executor: Optional[str] = typer.Option(None, "--executor", help="Run --jobs Optuna workers as submitit jobs on one study: 'local' or 'slurm'. Default: one worker in this process.", rich_help_panel="Executors"),
         jobs: Optional[int] = typer.Option(None, "--jobs", help="Workers (jobs) on the study; they share one exact trial budget. Default: one per core.", rich_help_panel="Executors"),
         threads_per_job: int = typer.Option(1, "--threads-per-job", help="Threads of each worker.", rich_help_panel="Executors"),
         slurm_partition: Optional[str] = typer.Option(None, "--slurm-partition", help="SLURM partition of the workers.", rich_help_panel="Executors"),
         slurm_gpus_per_job: int = typer.Option(0, "--slurm-gpus-per-job", help="GPUs per worker.", rich_help_panel="Executors"),
         slurm_time: int = typer.Option(24 * 60, "--slurm-time", help="Time limit of each worker, in minutes.", rich_help_panel="Executors")) -> None:
    """Tune an experiment's hyperparameters with Optuna; rerunning continues the same study."""
    from fyexp.devices import resolve_device
    from fyexp.domains import check_options
    from fyexp.experiments import RunContext
    from fyexp.results import ResultStore

    check_options({"--n-trials": n_trials, "--timeout": timeout, "--jobs": jobs, "--threads-per-job": threads_per_job,
                   "--slurm-gpus-per-job": slurm_gpus_per_job, "--slurm-time": slurm_time})
    spec, experiment, resolved = _resolve(name, profile, None, experiments_dir, sets)
    results = _results_dir(results_dir, writable=True)
    store = ResultStore(results, name)
    profile = resolved.profile  # a variant ('paper+lr=1e-4') tunes in a study of its own
    ctx = RunContext(experiment=name, profile=profile, device=resolve_device(device), data_dir=_data_dir(data_dir),
                     work_dir=store.folder / "work" / profile / "tune", artifact_dir=store.artifact_dir(profile))
    from fyexp.tuning import default_storage_url, tune_experiment

    if executor is None:
        if jobs is not None:
            raise FyexpError("--jobs needs --executor local or slurm")
        tune_experiment(experiment, resolved.config, ctx, n_trials=n_trials, timeout=timeout, storage=storage,
                        results_dir=results)
        return
    from fyexp.executors import ExecutorOptions, tune_as_jobs
    from fyexp.progress import make_progress

    options = ExecutorOptions(kind=executor, jobs=jobs, threads_per_job=threads_per_job,
                              slurm_partition=slurm_partition, slurm_gpus_per_job=slurm_gpus_per_job,
                              slurm_time_min=slurm_time)
    failed = tune_as_jobs(experiment, resolved.config, ctx, options=options, n_trials=n_trials, timeout=timeout,
                          storage=storage or default_storage_url(store.folder), results_dir=results,
                          progress=make_progress(err, live=True))
    if failed:
        raise typer.Exit(1)


@app.command()
def report(names: Optional[List[str]] = typer.Argument(None, help="Experiments to report (default: all)."),
           results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
           experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
           superseded: bool = typer.Option(False, "--superseded", help="Also report the rows of cells since rerun at other settings (kept under results/NAME/superseded/), each set as a profile of its own ('paper~superseded-<hash>'), never pooled with the current rows."),
           no_cache: bool = typer.Option(False, "--no-cache", help="Draw every table and figure again, even those whose inputs (rows, artifacts, paper values, drawing code) are unchanged since the last report (recorded in RESULTS/report-manifest.json).")) -> None:
    """Rebuild tables (Markdown + LaTeX, ours beside the paper's) and figures (PNG) from the result CSVs."""
    from fyexp.report import build_report
    from fyexp.report.runs import damaged_studies
    from fyexp.results import ResultStore
    from fyexp.specs import available_specs

    results = _results_dir(results_dir, writable=True)
    for name in names or available_specs(experiments_dir):  # damaged cell files and records: ResultStore.load warns
        for path, problem in damaged_studies(ResultStore(results, name).folder):
            err.print(f"warning: skipped damaged study file {path} ({problem}); move it away and rerun `fyexp tune`",
                      markup=False, highlight=False)
    for rep in build_report(names, results, experiments_dir, superseded=superseded, cache=not no_cache):
        for title, profile, status, files in rep.tables:
            out.print(f"{rep.spec.name}: {title} [{profile}] {status} → {files[0]}", markup=False, highlight=False)
        for path in rep.figures:
            out.print(f"{rep.spec.name}: figure → {path}", markup=False, highlight=False)
        if not rep.rows:
            out.print(f"{rep.spec.name}: not yet run", markup=False, highlight=False)
    out.print(f"index → {results / 'README.md'}", markup=False, highlight=False)
    _report_findings(results, experiments_dir)


def _report_findings(results: Path, experiments_dir: Optional[Path]) -> None:
    """Rewrite the findings block of the README beside a results folder named ``results`` (the project's own
    layout; a folder of another name, such as ``my-results``, leaves the README alone)."""
    from fyexp.report.findings import update_findings

    folder = results.resolve()
    readme = folder.parent / "README.md"
    if folder.name == "results" and update_findings(readme, results, experiments_dir):
        out.print(f"findings → {readme}", markup=False, highlight=False)


@app.command()
def claims(paper: Optional[str] = typer.Argument(None, help="fyvi, fyvl, vr, tvem or frac (default: all five)."),
           profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Judge at this profile only (default: every profile with the claim's rows; the headline is the paper profile's)."),
           as_json: bool = typer.Option(False, "--json", help="Print a JSON list of verdicts for scripts."),
           long: bool = typer.Option(False, "--long", help="Each verdict in full: the claim, where the paper says it and its words, the paper's numbers, ours with the 95% interval, the notes."),
           all_profiles: bool = typer.Option(False, "--all-profiles", help="Also each claim's verdict at its other profiles (reduced ones, variants) under its headline verdict."),
           results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
           experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP)) -> None:
    """Which claims of the papers hold: one headline verdict per claim (at the paper profile when it ran, else at
    the reduced profile with the most rows, labelled): supported, supported in direction not in magnitude, not
    resolved at this n, not supported, reversed, not run, data missing; our own checks apart."""
    from fyexp.claims.command import claims_command

    claims_command(paper, profile, as_json, _results_dir(results_dir), experiments_dir, out, long, all_profiles)


@app.command()
def reproduce(paper: str = typer.Argument(..., help="fyvi, fyvl, vr, tvem, frac, or all."),
              profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
              dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan: experiments, cells finished / to run, and a time estimate from recorded wall times; run nothing."),
              device: str = typer.Option("auto", help="auto, cpu or cuda."),
              data_dir: Optional[Path] = typer.Option(None, help=DATA_HELP),
              results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
              experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
              only: Optional[list[str]] = typer.Option(None, "--only", help="As for `run`: KEY=PATTERN[,PATTERN...]; experiments whose grid lacks KEY are left out."),
              sets: Optional[List[str]] = typer.Option(None, "--set", help="As for `run` (" + SET_HELP + "); applied to every experiment of the paper, whose rows then form the variant profile."),
              allow_dirty: bool = typer.Option(False, "--allow-dirty", help="As for `run`."),
              executor: Optional[str] = typer.Option(None, "--executor", help="As for `run`: local or slurm."),
              jobs: Optional[int] = typer.Option(None, "--jobs", help="As for `run`."),
              yes: bool = typer.Option(False, "--yes", help="Start without asking when the whole plan is estimated over two hours, or of unknown length at a paper profile.")) -> None:
    """Reproduce a paper: run every experiment it needs at the profile (resuming), then `report` and `claims`."""
    from fyexp.reproduce import reproduce_papers

    results = _results_dir(results_dir, writable=not dry_run)
    # every parameter of `run` given explicitly: called as a function, Typer's defaults would be OptionInfo objects
    options = dict(device=device, data_dir=data_dir, allow_dirty=allow_dirty, progress=True, executor=executor,
                   jobs=jobs, threads_per_job=1, slurm_partition=None, slurm_gpus_per_job=0,
                   slurm_cpus_per_job=None, slurm_mem_gb=None, slurm_time=24 * 60, dry_run=False, sets=sets,
                   strict=False, yes=True)  # the whole plan is confirmed once, below

    def run_one(name: str) -> bool:
        """``fyexp run NAME`` with reproduce's options; False when it exits non-zero (a cell failed)."""
        try:
            run(name=name, profile=profile, seeds=None, experiments_dir=experiments_dir, results_dir=results,
                force=False, best=False, only=only, **options)
        except typer.Exit as exc:
            return not exc.exit_code
        return True

    def report_all() -> None:
        report(names=None, results_dir=results, experiments_dir=experiments_dir, superseded=False, no_cache=False)

    if not reproduce_papers(paper, profile=profile, dry_run=dry_run, only=only, sets=sets, results_dir=results,
                            experiments_dir=experiments_dir, console=out, run_one=run_one, report_all=report_all,
                            confirm=lambda reason: _confirm(reason, yes, f"fyexp reproduce {paper}")):
        raise typer.Exit(1)


def version_callback(value: bool) -> None:
    if value:
        out.print(f"fyexp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True,
                                       help="Print fyexp's version and exit."),
          debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an error (also $FYEXP_DEBUG=1).")) -> None:
    """fyexp: reproduce generalized variational inference papers."""


INTERRUPTED = "interrupted: finished cells are saved; rerun the same command to resume"


def _say(message: str) -> None:
    """One line on stderr, never read as markup, never wrapped."""
    err.print(message, markup=False, highlight=False, soft_wrap=True)


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _os_error(exc: OSError) -> str:
    import errno

    where = f" '{exc.filename}'" if exc.filename else ""
    if exc.errno == errno.ENOSPC:
        return f"error: disk full while writing{where}; finished cells are kept, free space and rerun to resume"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"error: cannot write{where} ({exc.strerror}); choose a writable --results-dir"
    if exc.errno in (errno.ENOTDIR, errno.EEXIST, errno.EISDIR):
        return f"error:{where} {exc.strerror}: a file stands where a folder is expected, or the reverse"
    return f"error:{where} {exc.strerror or exc}"


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: every error is one line on stderr, no traceback (unless --debug).

    Exit status: 0 success; 2 bad input (usage, spec, option, missing file); 1 the environment failed (an
    unwritable folder, a full disk) or an unexpected error; 130 interrupted (finished cells are kept).
    """
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or os.environ.get("FYEXP_DEBUG", "") not in ("", "0")
    try:
        code = app(args=args, prog_name="fyexp", standalone_mode=False)
        if code == 130:  # typer turns Ctrl-C into Exit(130), returned as the exit code here
            _say(INTERRUPTED)
        if isinstance(code, int) and code:
            sys.exit(code)
    except SystemExit:
        raise
    except FyexpError as exc:
        if debug:
            raise
        _say(f"error: {_one_line(exc)}")
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort) as exc:
        cause = exc.__cause__ or exc.__context__
        if isinstance(exc, typer.Abort) and cause is not None and not isinstance(cause, KeyboardInterrupt):
            # click turns an EOFError (a truncated file, not Ctrl-C) into Abort: only SIGINT is an interruption
            if debug:
                raise cause
            _say(f"error: unexpected {type(cause).__name__}: {_one_line(cause) or 'end of file'} "
                 f"(rerun with --debug for the traceback)")
            sys.exit(1)
        _say(INTERRUPTED)
        sys.exit(130)
    except typer.Exit as exc:
        if exc.exit_code == 130 or isinstance(exc.__cause__, KeyboardInterrupt):  # typer turns Ctrl-C into Exit(130)
            _say(INTERRUPTED)
            sys.exit(130)
        sys.exit(exc.exit_code)
    except MemoryError as exc:  # the sizes asked for (a spec's or --set's) exceed this machine: the user's input
        if debug:
            raise
        _say(f"error: out of memory ({_one_line(exc) or 'MemoryError'}): a setting asks for more memory than this "
             f"machine has; lower the sizes in the spec (or --set) and rerun")
        sys.exit(2)
    except OSError as exc:
        if debug:
            raise
        _say(_one_line(_os_error(exc)))
        sys.exit(1)
    except Exception as exc:
        if _is_usage_error(exc):
            _usage_error(exc)
        if debug:
            raise
        _say(f"error: unexpected {type(exc).__name__}: {_one_line(exc)} (rerun with --debug for the traceback)")
        sys.exit(1)


def _is_usage_error(exc: Exception) -> bool:
    """Typer's usage errors (its own copy of click's since typer 0.26, click's before), found by their shape."""
    return hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int)


def _usage_error(exc: Exception) -> None:
    if type(exc).__name__ == "NoArgsIsHelpError":  # bare `fyexp` or `fyexp run`: show the help
        exc.show()
        sys.exit(exc.exit_code)
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "fyexp"
    _say(f"error: {command}: {_one_line(exc.format_message())} (see '{command} --help')")
    sys.exit(exc.exit_code or 2)


if __name__ == "__main__":
    main()
