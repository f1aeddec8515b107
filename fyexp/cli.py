"""The ``fyexp`` command line: parse options, resolve a spec, hand it to a runner.  No experiment logic here."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import List, Optional

import typer
import yaml
from rich.console import Console
from rich.table import Table

from fyexp import __version__
from fyexp.errors import FyexpError

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Reproduce the tables and figures of five papers on generalized variational inference.\n\n"
                       "Experiments are YAML specs in experiments/; results go to results/ as tidy CSVs; "
                       "`fyexp report` rebuilds every table and figure from those CSVs.")
out = Console(soft_wrap=True)
err = Console(stderr=True)

PROFILE_HELP = "Spec profile: 'paper' (the paper's exact settings), 'quick' (minutes on 2 cores) or any other the spec defines."
DATA_HELP = "Root of the datasets (MNIST/, FashionMNIST/, 20newsgroups/, UCI/ ...). Default: $FYEXP_DATA_DIR; without either, datasets are downloaded where there is internet."
RESULTS_HELP = "Where results are written and read. Default: $FYEXP_RESULTS_DIR or ./results."
EXPERIMENTS_HELP = "Folder of the experiment specs. Default: $FYEXP_EXPERIMENTS_DIR, ./experiments, or fyexp's own."


def _results_dir(option: Optional[Path]) -> Path:
    return option or Path(os.environ.get("FYEXP_RESULTS_DIR", "results"))


def _data_dir(option: Optional[Path]) -> Optional[Path]:
    path = option or (Path(os.environ["FYEXP_DATA_DIR"]) if os.environ.get("FYEXP_DATA_DIR") else None)
    if path is not None and not path.is_dir():
        raise FyexpError(f"--data-dir / FYEXP_DATA_DIR: '{path}' is not a folder")
    return path


def _resolve(name: str, profile: str, seeds: Optional[str], experiments_dir: Optional[Path]):
    from fyexp.experiments import get_experiment
    from fyexp.specs import load_spec, parse_seeds, resolve

    spec = load_spec(name, experiments_dir)
    experiment = get_experiment(spec.runner)
    resolved = resolve(spec, profile, experiment.Config, parse_seeds(seeds))
    return spec, experiment, resolved


@app.command("list")
def list_experiments(experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP)) -> None:
    """List the experiments, the tables and figures each reproduces, and their profiles."""
    from fyexp.specs import available_specs, load_spec

    table = Table(title="fyexp experiments")
    for column in ("name", "title", "tables", "figures", "profiles"):
        table.add_column(column)
    for name in available_specs(experiments_dir):
        spec = load_spec(name, experiments_dir)
        table.add_row(name, spec.title, "\n".join(spec.tables), "\n".join(spec.figures), ", ".join(spec.profiles))
    out.print(table)


@app.command()
def show(name: str = typer.Argument(..., help="Experiment name (see `fyexp list`)."),
         profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
         experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP)) -> None:
    """Print the resolved spec of one experiment and profile: every hyperparameter that a run will use."""
    import dataclasses

    spec, _, resolved = _resolve(name, profile, None, experiments_dir)
    body = {"name": spec.name, "title": spec.title, "runner": spec.runner, "profile": profile,
            "seeds": list(resolved.seeds), "tables": list(spec.tables), "figures": list(spec.figures),
            "config": dataclasses.asdict(resolved.config)}
    out.print(yaml.safe_dump(_plain(body), sort_keys=False), end="", markup=False, highlight=False)


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
        device: str = typer.Option("auto", help="auto (CUDA when available, else CPU), cpu or cuda."),
        data_dir: Optional[Path] = typer.Option(None, help=DATA_HELP),
        results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
        experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP),
        force: bool = typer.Option(False, "--force", help="Redo cells that are already finished (default: skip them)."),
        allow_dirty: bool = typer.Option(False, "--allow-dirty", help="With --profile paper: run although the source tree has uncommitted changes (every row is then marked +dirty)."),
        best: bool = typer.Option(False, "--best", help="Use the best parameters found by `fyexp tune NAME` (tuned experiments only)."),
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Show progress bars.")) -> None:
    """Run an experiment's grid of cells; finished cells are kept and skipped on a rerun."""
    from fyexp.devices import resolve_device
    from fyexp.runner import run_experiment

    spec, experiment, resolved = _resolve(name, profile, seeds, experiments_dir)
    if profile == "paper":
        from fyexp.provenance import require_clean_tree

        require_clean_tree(allow_dirty, type(experiment).__module__)
    results = _results_dir(results_dir)
    if best:
        resolved = experiment.with_best(resolved, results) if hasattr(experiment, "with_best") else _no_best(name)
    summary = run_experiment(resolved, experiment, device=resolve_device(device), data_dir=_data_dir(data_dir),
                             results_dir=results, force=force, console=err, show_progress=progress)
    err.print(f"[green]{name} [{profile}]:[/] {summary.ran} cells run, {summary.skipped} already finished, "
              f"{summary.failed} failed, {summary.wall_time_s:.1f} s → {summary.results_csv}")
    if summary.failed:
        raise typer.Exit(1)


def _no_best(name: str):
    raise FyexpError(f"--best: experiment '{name}' has no tuning study")


@app.command()
def tune(name: str = typer.Argument(..., help="Experiment name with a tuning study (e.g. nvdm, fy-nvdm)."),
         profile: str = typer.Option("paper", "--profile", "-p", help=PROFILE_HELP),
         n_trials: Optional[int] = typer.Option(None, help="Trials still to run in this study (default: the profile's)."),
         timeout: Optional[float] = typer.Option(None, help="Stop starting new trials after this many seconds."),
         storage: Optional[str] = typer.Option(None, help="SQLAlchemy URL of the study database. Default: SQLite under the results folder."),
         device: str = typer.Option("auto", help="auto, cpu or cuda."),
         data_dir: Optional[Path] = typer.Option(None, help=DATA_HELP),
         results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
         experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP)) -> None:
    """Tune an experiment's hyperparameters with Optuna; rerunning continues the same study."""
    from fyexp.devices import resolve_device
    from fyexp.experiments import RunContext
    from fyexp.results import ResultStore

    spec, experiment, resolved = _resolve(name, profile, None, experiments_dir)
    results = _results_dir(results_dir)
    store = ResultStore(results, name)
    ctx = RunContext(experiment=name, profile=profile, device=resolve_device(device), data_dir=_data_dir(data_dir),
                     work_dir=store.folder / "work" / profile / "tune", artifact_dir=store.artifact_dir(profile))
    experiment.tune(resolved.config, ctx, n_trials=n_trials, timeout=timeout, storage=storage, results_dir=results)


@app.command()
def report(names: Optional[List[str]] = typer.Argument(None, help="Experiments to report (default: all)."),
           results_dir: Optional[Path] = typer.Option(None, help=RESULTS_HELP),
           experiments_dir: Optional[Path] = typer.Option(None, help=EXPERIMENTS_HELP)) -> None:
    """Rebuild tables (Markdown + LaTeX, ours beside the paper's) and figures (PNG) from the result CSVs."""
    from fyexp.report import build_report

    results = _results_dir(results_dir)
    for rep in build_report(names, results, experiments_dir):
        for title, profile, status, files in rep.tables:
            out.print(f"{rep.spec.name}: {title} [{profile}] {status} → {files[0]}")
        for path in rep.figures:
            out.print(f"{rep.spec.name}: figure → {path}")
        if not rep.rows:
            out.print(f"{rep.spec.name}: not yet run")
    out.print(f"index → {results / 'README.md'}")


def version_callback(value: bool) -> None:
    if value:
        out.print(f"fyexp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=version_callback, is_eager=True,
                                       help="Print fyexp's version and exit.")) -> None:
    """fyexp: reproduce generalized variational inference papers."""


def main() -> None:
    """Console entry point: user errors print one line and exit 2; Ctrl-C exits 130 with finished cells kept."""
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except FyexpError as exc:
        err.print(f"error: {exc}", style="bold red", markup=False, highlight=False)
        sys.exit(2)
    except KeyboardInterrupt:
        err.print("[yellow]interrupted: finished cells are saved; rerun the same command to resume[/]")
        sys.exit(130)
    except typer.Exit as exc:
        sys.exit(exc.exit_code)
    except typer.Abort:
        sys.exit(130)
    except Exception as exc:  # click usage errors
        import click

        if isinstance(exc, click.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        raise


if __name__ == "__main__":
    main()
