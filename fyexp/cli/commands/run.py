"""``fyexp run NAME`` (and each experiment of ``fyexp reproduce``): resolve the spec, check that the run may start
(:mod:`fyexp.run.plan`), print its plan, confirm, run (:func:`fyexp.run.runner.run_experiment`), summarize."""

from __future__ import annotations

from typing import Callable

from rich.console import Console
from rich.markup import escape

from fyexp.cli.commands.options import Options, data_folder, resolve_experiment, results_folder
from fyexp.core.errors import FyexpError
from fyexp.run.progress import say


def run_command(name: str, options: Options, *, err: Console, ask: Callable[[str], bool | None]) -> bool:
    """Run experiment ``name`` with ``options``, printing the plan and the summary on ``err``; ``ask`` is the
    confirmation of a long plan (:func:`fyexp.run.plan.confirm`).  Returns False when the run did not succeed: a cell
    failed, a cell's data was missing under ``--strict``, or the plan was not confirmed."""
    from fyexp.run.cell_filter import parse_only
    from fyexp.cli.devices import resolve_device
    from fyexp.run.plan import check_start, confirm, describe_plan, long_plan_reason, run_plan
    from fyexp.core.words import counted
    from fyexp.run.estimate import with_scaled

    only = parse_only(options.only)
    experiment, resolved = resolve_experiment(name, options)
    check_start(resolved, experiment, only, yes=options.yes, allow_dirty=options.allow_dirty,
                dry_run=options.dry_run)
    results = results_folder(options.results_dir, writable=not options.dry_run)
    if options.best:   # the parameters the tuning study found
        if not getattr(resolved.config, "search", None):
            raise FyexpError(f"--best: experiment '{resolved.name}' has no tuning study")
        from fyexp.spec.tuning import with_best

        resolved = with_best(resolved, results)
    device, data_dir = resolve_device(options.device), data_folder(options.data_dir)
    plan = with_scaled(run_plan(resolved, experiment, results, options.force, only, device=device,
                                data_dir=data_dir), resolved, experiment, results)
    if options.dry_run:
        say(Console(soft_wrap=True), describe_plan(plan))   # stdout: whole off a terminal, wrapped on one
        if options.executor is not None and options.executor.kind == "slurm":
            from fyexp.run.executors import describe_slurm_submission
            from fyexp.store.results import ResultStore

            print(describe_slurm_submission(resolved, list(plan.todo), ResultStore(results, name), options.executor))
            say(err, f"dry run: {counted(plan.to_run)} would be submitted as one SLURM array; nothing was submitted")
        return True
    say(err, describe_plan(plan))
    what = f"fyexp run {name}"
    reason = long_plan_reason(plan.to_run, plan.estimate_s, resolved.profile, plan.unestimated, plan.scaled_s,
                              plan.scaled)
    if not confirm(reason, options.yes, what, ask):
        say(err, f"{what}: not started")
        return False
    from fyexp.run import runner
    from fyexp.run.progress import make_progress

    summary = runner.run_experiment(resolved, experiment, device=device, data_dir=data_dir, results_dir=results,
                                    force=options.force, console=err, executor=options.executor, only=only,
                                    progress=make_progress(err, live=options.progress, keys=[c.key for c in plan.todo]),
                                    pending=plan.pending)
    err.print(f"[green]{escape(f'{name} [{resolved.profile}]')}:[/] {counted(summary.ran)} run, "
              f"{summary.skipped} already finished, {summary.failed} failed, "
              f"{summary.data_missing} skipped (data missing), "
              f"{f'{summary.elsewhere} run by another process, ' if summary.elsewhere else ''}"
              f"{summary.wall_time_s:.1f} s → {escape(str(summary.results_csv))}",
              soft_wrap=not err.is_terminal)  # on a terminal wrapped between words, else one line for scripts
    return not (summary.failed or (options.strict and summary.data_missing))
