"""Optuna studies (SQLite in the results folder, a database URL or ``journal:PATH``) that resume, survive ``kill -9``
(a stale worker's trial is retried) and share one exact trial budget between workers; TPE with the constant liar,
median pruning on per-epoch values."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import logging
import math
import operator
import os
import shutil
import textwrap
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

import yaml

from fyexp.core.errors import FyexpError, RunFailed
from fyexp.store.io import atomic_write_text
from fyexp.spec.specs import check_search, hint_at  # noqa: F401  (check_search: read by the tests, nvdm's config)

if TYPE_CHECKING:   # optuna and SQLAlchemy are imported where a study is opened
    import optuna
    from optuna.storages import RDBStorage
    from optuna.trial import FrozenTrial, Trial

STUDY_DB = "study.db"
BEST_PARAMS = "best_params.yaml"
# every line tune prints (its own and Optuna's) fits a 100-column terminal, cut after a word
_one_line = functools.partial(textwrap.shorten, width=100, placeholder="…")
STORAGE_EXPECTED = "expected sqlite:///PATH, the URL of a reachable database, or journal:PATH"
BEST_PARAMS_EXPECTED = ("expected the best-parameters file `fyexp tune` writes (a YAML mapping whose params map "
                        "config paths to values)")
DB_EXPECTED = "expected the SQLite study file `fyexp tune` writes"
RUN_BEST = "fyexp run {} --profile {} --best"   # runs a profile's grid at its study's best parameters


@dataclass(frozen=True)
class StudyOptions:
    """How a study is stored and searched (Optuna's parameters of the same names)."""

    direction: str = "minimize"
    seed: int = 0
    heartbeat_interval: int = 30
    grace_period: int = 120
    max_retry: int = 3
    n_startup_trials: int = 10
    n_warmup_steps: int = 5


def default_storage_url(folder: Path) -> str:
    """``sqlite:///<folder>/study.db`` (the folder is created)."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(Path(folder) / STUDY_DB).resolve()}"


def make_storage(url: str, options: StudyOptions = StudyOptions()) -> RDBStorage:
    """An RDB storage with heartbeats, retry of dead workers' trials and a 60 s SQLite timeout (concurrent writers
    wait); ``journal:PATH``: Optuna's journal file (a cluster's shared file system; no heartbeat)."""
    import optuna
    import sqlalchemy

    if url.startswith("journal:"):
        from optuna.storages.journal import JournalFileBackend

        path = Path(url[len("journal:"):].removeprefix("//"))
        path.parent.mkdir(parents=True, exist_ok=True)
        return optuna.storages.JournalStorage(JournalFileBackend(str(path)))
    engine_kwargs = {"connect_args": {"timeout": 60.0}} if url.startswith("sqlite") else {"pool_pre_ping": True}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        stale = getattr(optuna.storages, "RetryHeartbeatStaleTrialCallback", None)  # optuna >= 4.9
        retry = ({"heartbeat_stale_trial_callback": stale(max_retry=options.max_retry)} if stale is not None else
                 {"failed_trial_callback": optuna.storages.RetryFailedTrialCallback(max_retry=options.max_retry)})
        for attempt in range(5):  # two workers creating the same fresh database race on its tables
            try:
                return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs, grace_period=options.grace_period,
                                                  heartbeat_interval=options.heartbeat_interval, **retry)
            except sqlalchemy.exc.DBAPIError as exc:
                reason = str(getattr(exc, "orig", exc))
                time.sleep(0.5 * (attempt + 1) if attempt < 4 else 0)
            except (sqlalchemy.exc.ArgumentError, ImportError, ValueError) as exc:  # bad URL, unknown dialect/driver
                reason = str(exc).split(" (Background")[0]
                break
    raise FyexpError(f"--storage: cannot open '{public_url(url)}' ({reason}); {STORAGE_EXPECTED}")


def open_study(name: str, storage: str | RDBStorage, options: StudyOptions = StudyOptions()) -> optuna.Study:
    """Create or load the study ``name``; the sampler's seed is offset by the trials already in it (a resumed or
    concurrent worker does not replay the same start-up points)."""
    import optuna

    if isinstance(storage, str):
        storage = make_storage(storage, options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        pruner = optuna.pruners.MedianPruner(n_startup_trials=options.n_startup_trials,
                                             n_warmup_steps=options.n_warmup_steps)
        study = optuna.create_study(study_name=name, storage=storage, direction=options.direction,
                                    pruner=pruner, load_if_exists=True)
        offset = len(study.get_trials(deepcopy=False))
        study.sampler = optuna.samplers.TPESampler(seed=options.seed + 7919 * offset, constant_liar=True,
                                                   n_startup_trials=options.n_startup_trials)
    return study


def retry_root(trial: Trial | FrozenTrial) -> int:
    """The number of the first trial of a retry series."""
    from optuna.trial import FrozenTrial

    if not isinstance(trial, FrozenTrial):
        trial = next(t for t in trial.study.get_trials(deepcopy=False) if t.number == trial.number)
    return trial.system_attrs.get("failed_trial", trial.number)   # Optuna's retry callbacks: the series' first


def counted_trials(study: optuna.Study, below: int | None = None) -> int:
    """Trials (numbered below ``below``) that use up the budget: all but a surplus draw or a killed worker's."""
    return sum(t.state.name in ("COMPLETE", "PRUNED", "RUNNING", "WAITING")
               or (t.state.name == "FAIL" and "error" in t.user_attrs)
               for t in study.get_trials(deepcopy=False) if below is None or t.number < below)


def run_study(study: optuna.Study, objective: Callable[[Trial], float], *, budget: int | None = None,
              n_trials: int | None = None, timeout: float | None = None,
              on_trial_end: Callable[[optuna.Study, FrozenTrial], None] | None = None) -> int:
    """Run trials of ``objective`` until the ``budget`` (counted trials of the whole study), ``n_trials`` (of this
    call) or ``timeout`` says stop, ``on_trial_end(study, trial)`` after each; the number this call ran.  Only its own
    trials decide its outcome (with shared workers, the study's last trial is often another's)."""
    import optuna

    for handler in optuna.logging._get_library_root_logger().handlers:   # Optuna's log lines as tune's
        handler.addFilter(_one_short_line)
    mine: list[FrozenTrial] = []  # this call's trials, as Optuna hands them to its callbacks
    fatal: list[Exception] = []

    def guarded(trial: Trial) -> float:
        if budget is not None and counted_trials(study, below=trial.number) >= budget:
            trial.set_user_attr("surplus", True)
            raise RuntimeError(f"surplus trial {trial.number}: the budget of {budget} trials is used up")
        try:
            return objective(trial)
        except optuna.TrialPruned:
            raise
        except Exception as exc:  # recorded on the trial, counted, not retried
            trial.set_user_attr("error", f"{type(exc).__name__}: {exc}"[:500])
            if isinstance(exc, (FyexpError, OSError)):  # a bad data file, a full disk, a spec error: not the model
                fatal.append(exc)
            raise

    def after(study: optuna.Study, trial: FrozenTrial) -> None:
        if fatal:  # the data, a file or the spec is wrong: every further trial would fail the same way
            raise fatal[0]
        if not trial.user_attrs.get("surplus"):
            mine.append(trial)
            if on_trial_end is not None:
                on_trial_end(study, trial)
        if trial.user_attrs.get("surplus") or (budget is not None and counted_trials(study) >= budget):
            study.stop()

    if budget is None or counted_trials(study) < budget:
        study.optimize(guarded, n_trials=n_trials, timeout=timeout, catch=(Exception,), callbacks=[after],
                       gc_after_trial=False, show_progress_bar=False)
    if mine and all(t.state.name == "FAIL" for t in mine):
        raise RunFailed(f"every trial of this call failed ({len(mine)}); last error: "
                        f"{mine[-1].user_attrs.get('error', 'unknown')}")
    return len(mine)


def trial_line(trial: FrozenTrial, best: FrozenTrial | None, done: int, total: int | None,
               objective: str = "value", direction: str = "minimize") -> str:
    """``[2/6] trial 1 complete in 3.2 s: validation RE 0.4512 (minimize; best 0.4512, trial 1)``."""
    count = f"[{done}/{total}]" if total else f"[{done}]"
    seconds = trial.duration.total_seconds() if trial.duration is not None else 0.0
    value = f": {objective} {trial.value:.5g}" if trial.value is not None else ""
    best_part = f"best {best.value:.5g}, trial {best.number}" if best is not None else "no best yet"
    why = trial.user_attrs.get("error", "") if trial.state.name == "FAIL" else ""
    return _one_line(f"{count} trial {trial.number} {trial.state.name.lower()} in {seconds:.1f} s{value} ({direction}; "
                     f"{best_part})" + (f"; {why}" if why else ""))


def _one_short_line(record: logging.LogRecord) -> bool:
    """Optuna's per-trial INFO lines dropped (:func:`trial_line` replaces them), any other one short line."""
    if record.levelno <= logging.INFO:
        return False
    record.msg, record.args, record.exc_info, record.exc_text = _one_line(record.getMessage()), None, None, None
    return True


def study_summary(study: optuna.Study) -> dict:
    """Counts by state, and the best finite trial's number, value and parameters (None before the first completes)."""
    import optuna
    from optuna.trial import TrialState

    trials = study.get_trials(deepcopy=False)
    completed = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None and math.isfinite(t.value)]
    pick = min if study.direction == optuna.study.StudyDirection.MINIMIZE else max
    best = pick(completed, key=lambda t: t.value, default=None)
    counts = {state.name.lower(): sum(t.state == state for t in trials) for state in TrialState}
    return {"study": study.study_name, "trials": counts, "best_trial": best and best.number,
            "best_value": best and float(best.value), "params": best and dict(best.params)}


def best_params_path(folder: Path, profile: str) -> Path:
    """One file per profile (the first studies' ``best_params.yaml`` is still read for the profile it names)."""
    return Path(folder) / f"best_params-{profile}.yaml"


def best_params_file_problem(path: Path) -> tuple[dict, str | None]:
    """``(the mapping, None)`` of the best-parameters file ``path`` (someone else's data: at most 1 MiB of YAML whose
    ``params`` maps config paths to numbers, text or booleans), or ``({}, the problem)``."""
    from fyexp.store.damaged import read_record_text
    from fyexp.spec.specs import yaml_bound_problem

    text, problem = read_record_text(Path(path), 1 << 20)   # fyexp writes under 1 KB
    if problem := problem or yaml_bound_problem(text):
        return {}, problem
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}, "not valid YAML"
    if not isinstance(data := {} if data is None else data, dict):
        return {}, f"a YAML {type(data).__name__}, not a mapping"
    if not isinstance(params := data.get("params", {}), (dict, type(None))):
        return {}, f"its params is a {type(params).__name__}, not a mapping"
    for key, value in (params or {}).items():
        if not isinstance(key, str) or not all(part.isidentifier() for part in key.split(".")):
            return {}, f"its params key {key!r} is not a config path (e.g. train.optimizer.lr)"
        if not isinstance(value, (str, int, float, bool)):
            return {}, f"its params.{key} is a {type(value).__name__}, not a number, text or boolean"
    return data, None


def study_file_problem(path: Path) -> str | None:
    """What makes ``path`` no SQLite file (by its header), or None: before Optuna opens it (a FIFO would block)."""
    from fyexp.store.damaged import open_regular

    handle, problem = open_regular(path)
    if problem is not None:
        return problem
    with handle:
        head = handle.read(16)
    return None if head == b"SQLite format 3\x00" else "empty (0 bytes)" if not head else "not an SQLite database"


def read_only_storage(path: Path) -> RDBStorage:
    """An Optuna storage over the SQLite file ``path`` opened ``mode=ro``; the caller disposes of its engine."""
    import sqlite3
    from urllib.parse import quote

    import optuna

    uri = f"file:{quote(str(Path(path).resolve()))}?mode=ro"   # any character of the path quoted
    return optuna.storages.RDBStorage("sqlite://", {"creator": lambda: sqlite3.connect(uri, uri=True)},
                                      skip_compatibility_check=True, skip_table_creation=True)


# ------------------------------------------------------------------------------ any spec with a search space
def config_with(config: Any, params: dict, source: Path | str, where: str = "params") -> Any:
    """``config`` with the values of ``params`` (dotted paths) set, validated like a spec (errors name ``source``)."""
    from fyexp.store.plain import jsonable
    from fyexp.spec.specs import build_config

    values = jsonable(config)
    for path, value in params.items():
        *parents, leaf = path.split(".")
        functools.reduce(operator.getitem, parents, values)[leaf] = value
    return build_config(type(config), values, Path(source), where)


def suggest(trial: Trial, search: dict, config: Any) -> dict:
    """One value per entry of ``search``, typed by the config's annotation at that path."""
    values = {}
    for path, space in search.items():
        if "choices" in space:
            values[path] = trial.suggest_categorical(path, list(space["choices"]))
        elif hint_at(type(config), path) is int:
            values[path] = trial.suggest_int(path, int(space["low"]), int(space["high"]),
                                             step=int(space.get("step", 1)), log=bool(space.get("log")))
        else:
            values[path] = trial.suggest_float(path, float(space["low"]), float(space["high"]),
                                               log=bool(space.get("log")))
    return values


def public_url(url: str) -> str:
    """A storage URL without its password."""
    import sqlalchemy.engine

    if url.startswith("journal:"):
        return url
    try:
        return sqlalchemy.engine.make_url(url).render_as_string(hide_password=True)
    except sqlalchemy.exc.ArgumentError:
        raise FyexpError(f"--storage: '{url}' is not a database URL; {STORAGE_EXPECTED}") from None


def tune_experiment(experiment: Any, config: Any, ctx: Any, *, n_trials: int | None = None,
                    timeout: float | None = None, storage: str | None = None,
                    results_dir: Path | None = None, budget: int | None = None) -> None:
    """``fyexp tune NAME``: ``experiment.trial(config, ctx, report, work_dir)`` trains, calls ``report(epoch, value)``
    after each epoch (pruning) and returns the metric; the best parameters go to :func:`best_params_path`."""
    import optuna
    from optuna.trial import TrialState

    from fyexp.train import allocator

    allocator.tune_allocator()   # malloc set up for training loops (no number changes)
    search, folder = config.search, Path(results_dir or "results") / ctx.experiment
    n_budget = getattr(config, "n_trials", 20)
    epochs = search.get("train.epochs")   # the fewest epochs a trial trains: the pruner waits for half of them
    lowest_epochs = ((int(min(epochs["choices"])) if "choices" in epochs else int(epochs["low"])) if epochs
                     else getattr(getattr(config, "train", None), "epochs", 5))
    options = StudyOptions(direction=getattr(config, "direction", "minimize"), seed=getattr(config, "tune_seed", 0),
                           heartbeat_interval=getattr(config, "heartbeat_interval", 30),
                           grace_period=getattr(config, "grace_period", 120),
                           n_startup_trials=min(10, max(2, n_budget // 5)),
                           n_warmup_steps=max(1, min(5, lowest_epochs // 2)))
    url = storage or default_storage_url(folder)
    study = open_study(f"{ctx.experiment}-{ctx.profile}", url, options)
    objective_name = experiment.TRIAL_OBJECTIVE
    if study.user_attrs.get("objective") != objective_name:  # for readers of the study (its figure's axis)
        study.set_user_attr("objective", objective_name)

    def objective(trial: Trial) -> float:
        trial_config = config_with(config, suggest(trial, search, config), f"{ctx.experiment} trial {trial.number}")
        work = ctx.work_dir / f"trial-{retry_root(trial)}"

        def report(step: int, value: float) -> None:
            trial.report(value, step)
            if trial.should_prune():
                raise optuna.TrialPruned(f"validation value {value:.4g} after epoch {step}")

        try:
            return experiment.trial(trial_config, ctx, report, work)
        finally:  # a finished or pruned trial's checkpoints are not needed; a killed one's are kept
            shutil.rmtree(work, ignore_errors=True)

    if budget is None and n_trials is None:  # an explicit budget (workers sharing one study) wins
        budget = n_budget
    done = itertools.count(1)

    def save_best(study: optuna.Study, trial: FrozenTrial | None = None) -> bool:
        """The finished ``trial``'s line, then the study's summary for `run --best`; whether any trial completed."""
        complete = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if trial is not None:
            print(trial_line(trial, study.best_trial if complete else None, next(done), n_trials or budget,
                             objective_name, options.direction), flush=True)
        if complete:
            summary = {**study_summary(study), "profile": ctx.profile, "storage": public_url(url),
                       "objective": objective_name, "direction": options.direction}
            atomic_write_text(best_params_path(folder, ctx.profile), yaml.safe_dump(summary, sort_keys=False))
        return bool(complete)

    ran = run_study(study, objective, budget=budget, n_trials=n_trials, timeout=timeout, on_trial_end=save_best)
    complete = save_best(study)
    print(f"{ctx.experiment}: {ran} trials run in this call; study '{study.study_name}' in {public_url(url)}")
    if complete:
        print(f"best parameters → {best_params_path(folder, ctx.profile)}; run them with "
              f"`{RUN_BEST.format(ctx.experiment, ctx.profile)}`")


def trial_seconds(trials: list[FrozenTrial]) -> tuple[float, int] | None:
    """The mean wall seconds of the trials that ran (not a surplus or killed one) and how many, or ``None``."""
    ran = [t for t in trials if t.datetime_start and t.datetime_complete
           and (t.state.name in ("COMPLETE", "PRUNED") or "error" in t.user_attrs)]
    seconds = sum((t.datetime_complete - t.datetime_start).total_seconds() for t in ran)
    return (seconds / len(ran), len(ran)) if ran else None


def tune_time(to_run: int, workers: int, per_trial: float, timeout: float | None) -> float:
    """The wall time of ⌈to_run / workers⌉ rounds of trials, at most ``timeout`` plus one trial."""
    seconds = math.ceil(to_run / max(1, workers)) * per_trial
    return min(seconds, timeout + per_trial) if timeout else seconds


def tune_plan(experiment: Any, config: Any, name: str, profile: str, *, n_trials: int | None,
              timeout: float | None, storage: str, results_dir: Path, workers: int = 1,
              cell_seconds: tuple[float, str] | None = None) -> list[str]:
    """What ``fyexp tune`` will do: study, trials and their time (the study's finished trials' mean, else
    ``cell_seconds``: a trial trains as a cell does), objective, best parameters."""
    if not getattr(config, "search", None):
        raise FyexpError(f"{name}: the profile '{profile}' defines no 'search' space")
    import optuna

    from fyexp.core.words import counted as count_of, duration

    direction, study_name = getattr(config, "direction", "minimize"), f"{name}-{profile}"
    try:
        study = optuna.load_study(study_name=study_name, storage=make_storage(storage))
    except KeyError:   # no such study yet
        study = None
    counted, budget = counted_trials(study) if study else 0, getattr(config, "n_trials", 20)
    to_run = n_trials if n_trials is not None else max(0, budget - counted)
    trials = (f"{count_of(to_run, 'more trial')} (--n-trials; the study counts {counted})" if n_trials is not None
              else f"{count_of(to_run, 'trial')} to run (the profile's budget {budget}, {counted} counted so far)")
    finished = trial_seconds(study.get_trials(deepcopy=False)) if study else None
    per_trial, source = ((finished[0], f"the mean of the study's {count_of(finished[1], 'finished trial')}") if finished
                         else (cell_seconds[0], f"one cell's time at this profile, {cell_seconds[1]}") if cell_seconds
                         else (None, ""))
    when = ("none" if not to_run else
            "unknown (no finished trial in the study, no recorded cell of this profile)" if per_trial is None else
            f"about {duration(tune_time(to_run, workers, per_trial, timeout))} ({duration(per_trial)} a trial: "
            f"{source})")
    return [f"tune {name} [{profile}]: study '{study_name}' in {public_url(storage)}",
            f"  trials: {trials}" + (f", none started after {timeout:g} s" if timeout else "")
            + (f", {workers} workers" if workers > 1 else ""),
            f"  time: {when}",
            f"  objective: {experiment.TRIAL_OBJECTIVE}, {direction} "
            f"({'lower' if direction == 'minimize' else 'higher'} is better)",
            f"  best parameters → {best_params_path(Path(results_dir) / name, profile)}, for "
            f"`{RUN_BEST.format(name, profile)}`"]


def best_params_of(name: str, profile: str, results_dir: Path) -> tuple[dict, str]:
    """The best parameters of the profile's study and where they were read: its own file, else ``best_params.yaml``
    naming this profile, else the study in ``study.db`` (remembered while the file and this module are unchanged:
    report and claims ask it of every row, and opening a study costs about a second)."""
    from fyexp.store.user_cache import code_key, file_signature, remembered

    folder = Path(results_dir) / name
    own, first, database, study_name = (best_params_path(folder, profile), folder / BEST_PARAMS, folder / STUDY_DB,
                                        f"{name}-{profile}")
    file = own if os.path.lexists(own) else first   # a FIFO or a link too: refused, never skipped
    data, problem = best_params_file_problem(file) if os.path.lexists(file) else ({}, None)
    if problem is not None:
        raise FyexpError(f"--best: {file}: {problem}; {BEST_PARAMS_EXPECTED}")
    if file == own or data.get("profile") == profile:
        if not data.get("params"):
            raise FyexpError(f"--best: {file}: no completed trial yet")
        return dict(data["params"]), str(file)

    def read() -> tuple[bool, dict]:   # (whether the study is in the database, its best parameters or {})
        import sqlite3

        import optuna
        from optuna.exceptions import OptunaError
        from sqlalchemy.exc import SQLAlchemyError

        storage = None
        try:
            storage = read_only_storage(database)
            return True, study_summary(optuna.load_study(study_name=study_name, storage=storage))["params"] or {}
        except KeyError:   # no such study in the file
            return False, {}
        except (OptunaError, SQLAlchemyError, sqlite3.Error, ValueError) as exc:
            reason = " ".join(str(getattr(exc, "orig", None) or exc).split("[SQL:")[0].split())
            raise FyexpError(f"--best: {database}: not a readable Optuna study ({reason}); {DB_EXPECTED}") from None
        finally:
            if storage is not None:
                storage.engine.dispose()

    if os.path.lexists(database):
        if problem := study_file_problem(database):
            raise FyexpError(f"--best: {database}: {problem}; {DB_EXPECTED}")
        found, params = remembered("study-best", f"{database.resolve()}::{study_name}",
                                   (code_key(__file__), *file_signature(database)), read)
        if params:
            return dict(params), f"{database} (study {study_name})"
        if found:
            raise FyexpError(f"--best: study '{study_name}' in {database} has no completed trial yet")
    held = f"{first} holds the study of profile '{data['profile']}'" if data.get("profile") else f"no {first}"
    raise FyexpError(f"--best: no tuning study of profile '{profile}' ({held}, and {database} has no study "
                     f"'{study_name}'); run `fyexp tune {name} --profile {profile}` first")


def with_best(resolved: Any, results_dir: Path) -> Any:
    """``resolved`` with its profile's best parameters, older flat names (``learning_rate``) read as the config class's
    ``PARAM_ALIASES`` map them; a path naming no parameter is refused."""
    aliases = getattr(type(resolved.config), "PARAM_ALIASES", {})
    params, source = best_params_of(resolved.name, resolved.profile, results_dir)
    params = {aliases.get(k, k): v for k, v in params.items()}
    for path in params:
        try:
            hint_at(type(resolved.config), path)
        except (KeyError, TypeError, AttributeError):
            raise FyexpError(f"--best: {source}: its params key '{path}' is not a parameter of the experiment's "
                             f"config; {BEST_PARAMS_EXPECTED}") from None
    return dataclasses.replace(resolved, config=config_with(resolved.config, params, source, "params"),
                               raw={**resolved.raw, **params})
