"""The ``fyexp`` command line: parse the options (those several commands take declared once, as ``Annotated``
types), hand them to the command's function (``run``, ``tune``, ``reproduce``: one
:class:`~fyexp.cli.commands.options.Options` of ``ctx.params``), print; :func:`main` turns every error into one line
and an exit status."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Annotated, List, Optional

import typer
from rich.console import Console

from fyexp import __version__
from fyexp.cli.commands.options import Options, results_folder
from fyexp.core.errors import FyexpError
from fyexp.run.progress import say

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False, rich_markup_mode=None,
                  help="Reproduce the tables and figures of five papers on generalized variational inference.\n\n"
                       "Experiments are YAML specs in experiments/; results go to results/ as tidy CSVs; "
                       "`fyexp report` rebuilds every table and figure from those CSVs.")
out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)

RESULTS_HELP = "Where results are written and read. Default: $FYEXP_RESULTS_DIR or ./results."
EXPERIMENTS_HELP = "Folder of the experiment specs. Default: $FYEXP_EXPERIMENTS_DIR, ./experiments, or fyexp's own."

# ---- options several commands take, declared once --------------------------------------------------------------
Name = Annotated[str, typer.Argument(metavar="NAME", help="Experiment name (see `fyexp list`).")]
Profile = Annotated[str, typer.Option("--profile", "-p", metavar="PROFILE", help="Spec profile: 'paper' (the paper's exact settings), 'quick' (a smoke run of about two minutes on 2 cores; `fyexp list` gives each profile's estimate) or any other the spec defines.")]
Sets = Annotated[Optional[List[str]], typer.Option("--set", metavar="KEY=VALUE", help="Override one parameter of the resolved spec: KEY=VALUE, KEY a dotted path (train.optimizer.lr=1e-4, grid.latent_rho=[1.5]), VALUE read as YAML (null unsets a setting that may be unset) and validated like the spec. Repeatable. The rows form a variant of the profile (e.g. 'paper+lr=1e-4'), never scored as the profile itself; `reproduce` applies it to every experiment of the paper.")]
Only = Annotated[Optional[List[str]], typer.Option("--only", metavar="KEY=PATTERN", help="Run part of the grid: KEY=PATTERN[,PATTERN...], KEY a cell parameter, 'method' or 'seed', PATTERN shell-style (e.g. --only dataset=caltech --only K=5). Repeat to narrow further; the other cells are left for a later run. `reproduce` leaves out the experiments whose grid it selects nothing of.")]
Device = Annotated[str, typer.Option(metavar="auto|cpu|cuda", help="auto (CUDA when available, else CPU), cpu or cuda.")]
DataDir = Annotated[Optional[Path], typer.Option(metavar="DIR", help="Root of the datasets (MNIST/, FashionMNIST/, 20newsgroups/, UCI/ ...). Default: $FYEXP_DATA_DIR; without either, datasets are downloaded where there is internet.")]
ResultsDir = Annotated[Optional[Path], typer.Option(metavar="DIR", help=RESULTS_HELP)]
ExperimentsDir = Annotated[Optional[Path], typer.Option(metavar="DIR", help=EXPERIMENTS_HELP)]
AllowDirty = Annotated[bool, typer.Option("--allow-dirty", help="With --profile paper: run although the source tree has uncommitted changes (every row is then marked +dirty).")]
Yes = Annotated[bool, typer.Option("--yes", help="Start without asking: a plan estimated over two hours (or of unknown length at a paper profile), or a grid larger than the limit of cells one run may start (fyexp/core/constraints.py). `reproduce` asks once, for the whole plan.")]
Executor = Annotated[Optional[str], typer.Option("--executor", help="Run as jobs of submitit: 'local' (this machine, --jobs at once) or 'slurm' (a job array); `run` and `reproduce` make a job of each cell, `tune` --jobs Optuna workers on one study. Default: in this process, one cell (or trial) after another.")]
Jobs = Annotated[Optional[int], typer.Option("--jobs", help="Jobs at once: cells (local default one per core; slurm: the array's parallelism, default all), or `tune`'s workers on the study, which share one exact trial budget (default one per core).")]
ThreadsPerJob = Annotated[Optional[int], typer.Option("--threads-per-job", help="Threads of each job (torch and BLAS); default 1: one single-threaded cell per core is fastest on a CPU.")]
SlurmPartition = Annotated[Optional[str], typer.Option("--slurm-partition", help="SLURM partition of the jobs.")]
SlurmGpus = Annotated[Optional[int], typer.Option("--slurm-gpus-per-job", help="GPUs per SLURM job (default 0; use with --device cuda).")]
SlurmCpus = Annotated[Optional[int], typer.Option("--slurm-cpus-per-job", help="CPUs per SLURM job (default: --threads-per-job).")]
SlurmMem = Annotated[Optional[float], typer.Option("--slurm-mem-gb", help="Memory per SLURM job in GiB (default: the partition's).")]
SlurmTime = Annotated[Optional[int], typer.Option("--slurm-time", help="Time limit of each SLURM job, in minutes (default 1440, a day).")]


def _ask(question: str) -> bool | None:
    """A yes or no at a terminal (default no); None off a terminal, where nobody can answer."""
    if not (sys.stdin.isatty() and err.is_terminal):
        return None
    return typer.confirm(question, default=False, err=True)


@app.command("list")
def list_experiments(experiments_dir: ExperimentsDir = None,
                     results_dir: Annotated[Optional[Path], typer.Option(help=RESULTS_HELP + " Recorded wall times there (else in the repository's results/) give the estimates.")] = None,
                     as_json: bool = typer.Option(False, "--json", help="Print a JSON list (name, title, tables, figures, profiles with cells and estimated seconds) for scripts."),
                     plain: bool = typer.Option(False, "--plain", help="One tab-separated line per experiment (the default when the output is not a terminal).")) -> None:
    """List the experiments, the tables and figures each reproduces, and their profiles with cells and time."""
    from fyexp.run.overview import list_json, list_plain, list_text

    if plain or (not as_json and not out.is_terminal):
        for line in list_plain(experiments_dir):
            print(line)
    elif as_json:
        print(list_json(experiments_dir, results_folder(results_dir)))
    else:
        for line in list_text(experiments_dir, results_folder(results_dir), max(out.width, 60)):
            say(out, line)


@app.command()
def show(name: Name, profile: Profile = "paper", sets: Sets = None, experiments_dir: ExperimentsDir = None,
         results_dir: Annotated[Optional[Path], typer.Option(help=RESULTS_HELP + " Its recorded wall times give the estimate.")] = None) -> None:
    """Print a summary of one experiment and profile (cells, methods, data sets, estimate), then its resolved spec:
    every hyperparameter that a run will use."""
    from fyexp.run.overview import comments_wrapped, show_text

    text = show_text(name, profile, sets, experiments_dir, results_folder(results_dir))
    if out.is_terminal:   # the summary's comment lines wrapped between words, still comments (valid YAML)
        text = comments_wrapped(text, out.width)
    out.print(text, end="", markup=False, highlight=False)


@app.command()
def run(ctx: typer.Context, name: Name, profile: Profile = "paper",
        seeds: Optional[str] = typer.Option(None, metavar="SEEDS", help="Other seeds than the profile's: '0,1,2', a range '0-9' or both. Like --set, they make a variant of the profile (e.g. 'paper+seeds=0-9'), never scored as the profile itself; the profile's own seeds are the profile, and a part of them is --only seed=0,1."),
        sets: Sets = None, device: Device = "auto", data_dir: DataDir = None, results_dir: ResultsDir = None,
        experiments_dir: ExperimentsDir = None,
        force: bool = typer.Option(False, "--force", help="Redo cells that are already finished (default: skip them); a cell whose training a forced run left unfinished resumes, and one trained since its last result but not measured is measured."),
        allow_dirty: AllowDirty = False,
        best: bool = typer.Option(False, "--best", help="Use the best parameters found by `fyexp tune NAME` (tuned experiments only)."),
        only: Only = None,
        progress: bool = typer.Option(True, "--progress/--no-progress", help="Live progress bars on a terminal (default); --no-progress prints one plain line per cell instead (as does output that is not a terminal)."),
        executor: Executor = None, jobs: Jobs = None, threads_per_job: ThreadsPerJob = None,
        slurm_partition: SlurmPartition = None, slurm_gpus_per_job: SlurmGpus = None,
        slurm_cpus_per_job: SlurmCpus = None, slurm_mem_gb: SlurmMem = None, slurm_time: SlurmTime = None,
        dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan (cells to run, finished, at old settings; the time estimate) and run nothing; with --executor slurm also the sbatch script and the array's cells."),
        strict: bool = typer.Option(False, "--strict", help="A cell skipped because its data is missing fails the run (exit 1)."),
        yes: Yes = False) -> None:
    """Run an experiment's grid of cells; finished cells are kept and skipped on a rerun.

    \b
    Examples:
      fyexp run gmm-clustering               FYVI Table 1, the paper's settings
      fyexp run gmm-clustering --seeds 0-9   ten seeds: variant paper+seeds=0-9
      fyexp run fy-vae -p quick --data-dir DIR
      fyexp run vr-vae --only dataset=caltech --dry-run
    """
    from fyexp.cli.commands.run import run_command

    if not run_command(name, Options.from_params(ctx.params), err=err, ask=_ask):
        raise typer.Exit(1)


@app.command()
def tune(ctx: typer.Context,
         name: Annotated[str, typer.Argument(help="Experiment name with a tuning study (e.g. nvdm, fy-nvdm).")],
         profile: Profile = "paper", sets: Sets = None,
         n_trials: Optional[int] = typer.Option(None, help="Trials still to run in this study (default: the profile's)."),
         timeout: Optional[float] = typer.Option(None, help="Stop starting new trials after this many seconds."),
         storage: Optional[str] = typer.Option(None, help="SQLAlchemy URL of the study database, or journal:PATH (Optuna's journal file, for workers on a cluster's shared file system). Default: SQLite under the results folder."),
         device: Device = "auto", data_dir: DataDir = None, results_dir: ResultsDir = None,
         experiments_dir: ExperimentsDir = None,
         executor: Executor = None, jobs: Jobs = None, threads_per_job: ThreadsPerJob = None,
         slurm_partition: SlurmPartition = None, slurm_gpus_per_job: SlurmGpus = None,
         slurm_cpus_per_job: SlurmCpus = None, slurm_mem_gb: SlurmMem = None, slurm_time: SlurmTime = None) -> None:
    """Tune an experiment's hyperparameters with Optuna; rerunning continues the same study."""
    from fyexp.cli.commands.tune import tune_command

    if not tune_command(name, Options.from_params(ctx.params), n_trials=n_trials, timeout=timeout, storage=storage,
                        err=err):
        raise typer.Exit(1)


@app.command()
def report(names: Optional[List[str]] = typer.Argument(None, help="Experiments to report (default: all)."),
           results_dir: ResultsDir = None, experiments_dir: ExperimentsDir = None,
           superseded: bool = typer.Option(False, "--superseded", help="Also report the rows of cells since rerun at other settings (kept under results/NAME/superseded/), each set as a profile of its own ('paper~superseded-<hash>'), never pooled with the current rows."),
           no_cache: bool = typer.Option(False, "--no-cache", help="Draw every table and figure again, even those whose inputs (rows, artifacts, paper values, drawing code) are unchanged since the last report (recorded in RESULTS/report-manifest.json)."),
           vector: bool = typer.Option(False, "--vector", help="Also write each figure as a PDF beside its PNG (the same figure, its text and lines as vectors: for a paper). PNGs stay the default and what the index links.")) -> None:
    """Rebuild tables (Markdown + LaTeX, ours beside the paper's) and figures (PNG; with --vector a PDF too) from the result CSVs."""
    from fyexp.cli.commands.report import report_command

    report_command(names, results_folder(results_dir, writable=True), experiments_dir, superseded=superseded,
                   cache=not no_cache, vector=vector, out=out, err=err)


@app.command()
def claims(paper: Optional[str] = typer.Argument(None, help="fyvi, fyvl, vr, tvem or frac (default: all five)."),
           profile: Optional[str] = typer.Option(None, "--profile", "-p", help="Judge at this profile only (default: every profile with the claim's rows; the headline is the paper profile's)."),
           as_json: bool = typer.Option(False, "--json", help="Print a JSON list of verdicts for scripts."),
           long: bool = typer.Option(False, "--long", help="Each verdict in full: the claim, where the paper says it and its words, the paper's numbers, ours with the 95% interval, the notes."),
           all_profiles: bool = typer.Option(False, "--all-profiles", help="Also each claim's verdict at its other profiles (reduced ones, variants) under its headline verdict."),
           results_dir: ResultsDir = None, experiments_dir: ExperimentsDir = None) -> None:
    """Which claims of the papers hold: one headline verdict per claim (at the paper profile when it ran, else at
    the `claims` profile when it ran, else the reduced profile with the most rows, labelled): supported, supported in direction not in magnitude, not
    resolved at this n, not supported, reversed, not run, data missing; our own checks apart."""
    from fyexp.cli.commands.claims import claims_command

    claims_command(paper, profile, as_json, results_folder(results_dir), experiments_dir, out, long, all_profiles)


@app.command()
def reproduce(ctx: typer.Context,
              paper: str = typer.Argument(..., help="fyvi, fyvl, vr, tvem, frac, or all."),
              profile: Profile = "paper",
              dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan: experiments, cells finished / to run, and a time estimate from recorded wall times; run nothing."),
              device: Device = "auto", data_dir: DataDir = None, results_dir: ResultsDir = None,
              experiments_dir: ExperimentsDir = None, only: Only = None, sets: Sets = None,
              allow_dirty: AllowDirty = False,
              executor: Executor = None, jobs: Jobs = None, threads_per_job: ThreadsPerJob = None,
              slurm_partition: SlurmPartition = None, slurm_gpus_per_job: SlurmGpus = None,
              slurm_cpus_per_job: SlurmCpus = None, slurm_mem_gb: SlurmMem = None, slurm_time: SlurmTime = None,
              yes: Yes = False) -> None:
    """Reproduce a paper: run every experiment it needs at the profile (resuming), then `report` and `claims`."""
    from fyexp.cli.reproduce import reproduce_papers

    if not reproduce_papers(paper, Options.from_params(ctx.params), out=out, err=err, ask=_ask):
        raise typer.Exit(1)


def _version(value: bool) -> None:
    if value:
        out.print(f"fyexp {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print fyexp's version and exit."),
          debug: bool = typer.Option(False, "--debug", help="Show the full traceback of an error (also $FYEXP_DEBUG=1).")) -> None:
    """The options before the command (``--debug`` is read by :func:`main`)."""


_SIGTERM: list[int] = []   # the SIGTERM received: typer returns 130 for it as for Ctrl-C


def _on_sigterm(signum, frame) -> None:
    """SIGTERM (a scheduler's first signal) raised as Ctrl-C is, so that every clean-up written for Ctrl-C runs for it
    too; :func:`main` then exits 143 (128 + 15, as a shell reports a process SIGTERM killed) instead of 130."""
    import signal

    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second SIGTERM must not cut the clean-up short
    _SIGTERM.append(signum)
    raise KeyboardInterrupt()


def _fail(exc: BaseException, debug: bool) -> None:
    """Exit on ``exc`` with one line on stderr: typer's usage errors with their status (a bare command: its help);
    a :class:`FyexpError` with its; the sizes asked for exceeding this machine's memory 2 (the user's input); a full
    disk or another failing file operation 1; any other error 1, or its traceback with ``--debug``."""
    text = str(exc) or type(exc).__name__
    if hasattr(exc, "format_message") and isinstance(getattr(exc, "exit_code", None), int):  # typer's usage errors
        if type(exc).__name__ == "NoArgsIsHelpError":  # bare `fyexp` or `fyexp run`: show the help
            exc.show()
            sys.exit(exc.exit_code)
        command = exc.ctx.command_path if getattr(exc, "ctx", None) is not None else "fyexp"
        line, code = f"error: {command}: {exc.format_message()} (see '{command} --help')", exc.exit_code or 2
    elif debug:
        raise exc
    elif isinstance(exc, FyexpError):
        line, code = f"error: {text}", exc.exit_code
    elif isinstance(exc, MemoryError):
        line, code = (f"error: out of memory ({text}): a setting asks for more memory than this machine has; lower "
                      f"the sizes in the spec (or --set) and rerun"), 2
    elif isinstance(exc, OSError):
        where = f" '{exc.filename}'" if exc.filename else ""
        line, code = (f"error: disk full while writing{where}; finished cells are kept, free space and rerun to resume"
                      if exc.errno == errno.ENOSPC else f"error:{where} {exc.strerror or text}"), 1
    else:
        line, code = f"error: unexpected {type(exc).__name__}: {text} (rerun with --debug for the traceback)", 1
    say(err, " ".join(line.split()))
    sys.exit(code)


def main(argv: Optional[List[str]] = None) -> None:
    """Console entry point: every error is one line on stderr, no traceback (unless --debug).  Exit status: 0
    success; 2 bad input (usage, spec, option, missing file); 1 the environment failed (an unwritable folder, a full
    disk) or an unexpected error; 130 interrupted (finished cells are kept); 143 SIGTERM (:func:`_on_sigterm`)."""
    import signal

    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or os.environ.get("FYEXP_DEBUG", "") not in ("", "0")
    if argv is None:  # the console script (in-process callers, the tests' CliRunner, keep their own handlers)
        signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        code = app(args=args, prog_name="fyexp", standalone_mode=False)  # Ctrl-C in a command: typer returns 130
    except typer.Abort as exc:  # Ctrl-C at a prompt, or click's wrapping of an EOFError (a truncated file)
        cause = exc.__cause__ or exc.__context__
        code = 130 if cause is None or isinstance(cause, KeyboardInterrupt) else _fail(cause, debug)
    except KeyboardInterrupt:
        code = 130
    except Exception as exc:
        _fail(exc, debug)
    if code == 130:
        say(err, f"{'terminated (SIGTERM)' if _SIGTERM else 'interrupted'}: finished cells are saved; rerun the same "
                 f"command to resume")
        code = 143 if _SIGTERM else 130
    if code:
        sys.exit(code)
