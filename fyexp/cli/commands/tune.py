"""``fyexp tune NAME``: an Optuna study of the spec's ``search:`` space, here or as ``--executor`` workers sharing its
trial budget; a rerun continues it."""

from __future__ import annotations

import os

from rich.console import Console

from fyexp.cli.commands.options import Options, data_folder, resolve_experiment, results_folder
from fyexp.run.progress import make_progress, say


def tune_command(name: str, options: Options, *, n_trials: int | None, timeout: float | None,
                 storage: str | None, err: Console) -> bool:
    """Tune experiment ``name`` at ``options``' profile; False when a worker job failed.  The plan's time is the
    study's trials' mean, else one cell's time at this profile (as ``fyexp list`` estimates it)."""
    from fyexp.cli.devices import resolve_device
    from fyexp.core.constraints import check_options
    from fyexp.experiments import RunContext
    from fyexp.run.estimate import source_text
    from fyexp.run.overview import summary_as_recorded
    from fyexp.spec.specs import load_spec
    from fyexp.spec.tuning import default_storage_url, tune_experiment, tune_plan
    from fyexp.store.results import ResultStore

    check_options({"--n-trials": n_trials, "--timeout": timeout})
    experiment, resolved = resolve_experiment(name, options)
    results = results_folder(options.results_dir, writable=True)
    store = ResultStore(results, name)
    store.refuse_links_leaving()  # the study, its trials' work folders and best_params.yaml stay inside
    ctx = RunContext(experiment=name, profile=resolved.profile, device=resolve_device(options.device),
                     data_dir=data_folder(options.data_dir), work_dir=store.folder / "work" / resolved.profile / "tune",
                     artifact_dir=store.artifact_dir(resolved.profile))
    url = storage or default_storage_url(store.folder)
    workers = 1 if options.executor is None else (options.executor.jobs or os.cpu_count() or 1)
    cells = summary_as_recorded(load_spec(name, options.experiments_dir), resolved, results).at_speed()
    known = cells.cells - cells.unestimated
    cell = ((cells.estimate_s / known, f"times {source_text(cells.source)}") if known and cells.estimate_s is not None
            else (cells.scaled_s / cells.scaled, f"scaled from the '{', '.join(cells.scaled_from)}' profile's cells "
                  "(an extrapolation)") if cells.scaled and cells.scaled_s is not None else None)
    for line in tune_plan(experiment, resolved.config, name, resolved.profile, n_trials=n_trials, timeout=timeout,
                          storage=url, results_dir=results, workers=workers, cell_seconds=cell):
        say(err, line)
    if options.executor is None:
        tune_experiment(experiment, resolved.config, ctx, n_trials=n_trials, timeout=timeout, storage=url,
                        results_dir=results)
        return True
    from fyexp.run.executors import tune_as_jobs

    return not tune_as_jobs(experiment, resolved.config, ctx, options=options.executor, n_trials=n_trials,
                            timeout=timeout, storage=url, results_dir=results, progress=make_progress(err, live=True))
