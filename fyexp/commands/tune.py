"""``fyexp tune NAME``: an Optuna study of the spec's ``search:`` space, in this process or as worker jobs.

Without ``--executor`` one worker runs in this process (:func:`fyexp.tuning.tune_experiment`); with one, ``--jobs``
workers share the study and its exact trial budget (:func:`fyexp.executors.tune_as_jobs`).  A variant profile
(``paper+lr=1e-4``) tunes in a study of its own; rerunning continues the same study.  The plan (study, storage,
trials, objective and direction, where the best parameters go) is printed before the first trial
(:func:`fyexp.tuning.tune_plan`).
"""

from __future__ import annotations

import os

from rich.console import Console

from fyexp.commands.lines import say
from fyexp.commands.options import Options, data_folder, resolve_experiment, results_folder


def tune_command(name: str, options: Options, *, n_trials: int | None, timeout: float | None,
                 storage: str | None, err: Console) -> bool:
    """Tune experiment ``name`` at ``options``' profile and overrides; False when a worker job failed."""
    from fyexp.devices import resolve_device
    from fyexp.domains import check_options
    from fyexp.experiments import RunContext
    from fyexp.results import ResultStore
    from fyexp.tuning import default_storage_url, tune_experiment, tune_plan

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
    for line in tune_plan(experiment, resolved.config, name, resolved.profile, n_trials=n_trials, timeout=timeout,
                          storage=url, results_dir=results, workers=workers):
        say(err, line)
    if options.executor is None:
        tune_experiment(experiment, resolved.config, ctx, n_trials=n_trials, timeout=timeout, storage=url,
                        results_dir=results)
        return True
    from fyexp.executors import tune_as_jobs
    from fyexp.progress import make_progress

    failed = tune_as_jobs(experiment, resolved.config, ctx, options=options.executor, n_trials=n_trials,
                          timeout=timeout, storage=url, results_dir=results,
                          progress=make_progress(err, live=True))
    return not failed
