"""fyexp.spec.tuning: resuming after kill -9 and several workers on one study lose and duplicate no trial.

The workers are this file run as a script (``python tests/train/test_tuning.py URL NAME BUDGET LOG SLEEP``); each
objective evaluation that completes appends the number of its retry series' first trial to LOG.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve()


def _worker(url: str, name: str, budget: int, log: Path, sleep: float, workers: int = 1):
    args = [sys.executable, str(HERE), url, name, str(budget), str(log), str(sleep)]
    env = {**os.environ, "PYTHONPATH": str(HERE.parents[2])}
    return [subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for _ in range(workers)]


def _wait(procs, timeout=120):
    for p in procs:
        _, err = p.communicate(timeout=timeout)
        assert p.returncode == 0, err.decode()[-2000:]


def _load(url, name):
    import optuna

    return optuna.load_study(study_name=name, storage=url)


def _check_exact(url, name, budget, log):
    from optuna.trial import TrialState

    from fyexp.spec.tuning import retry_root

    trials = _load(url, name).get_trials()
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    assert len(complete) == budget, [(t.number, t.state.name, t.user_attrs) for t in trials]
    roots = [int(line) for line in log.read_text().split()]
    assert sorted(roots) == sorted(retry_root(t) for t in complete)  # each evaluation recorded once
    assert len(set(roots)) == len(roots) == budget  # no parameter set evaluated twice
    for t in trials:  # every other trial is a dead worker's (retried) or a surplus draw (no parameters)
        if t.state == TrialState.FAIL:
            assert t.user_attrs.get("surplus") or any(retry_root(c) == t.number for c in complete)
            if t.user_attrs.get("surplus"):
                assert not t.params
    return trials


def test_budget_is_exact_in_one_process(tmp_path):
    import optuna

    from fyexp.spec.tuning import StudyOptions, counted_trials, default_storage_url, open_study, run_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url = default_storage_url(tmp_path)
    study = open_study("s", url, StudyOptions(n_startup_trials=2))
    assert run_study(study, lambda t: t.suggest_float("x", 0, 1) ** 2, budget=4) == 4
    again = open_study("s", url, StudyOptions(n_startup_trials=2))  # a rerun continues: nothing left to do
    assert run_study(again, lambda t: t.suggest_float("x", 0, 1) ** 2, budget=4) == 0
    assert run_study(again, lambda t: t.suggest_float("x", 0, 1) ** 2, budget=6) == 2
    assert run_study(again, lambda t: t.suggest_float("x", 0, 1) ** 2, n_trials=1) == 1
    assert counted_trials(again) == 7


def test_failed_objective_is_recorded_and_counted(tmp_path):
    import optuna

    from fyexp.spec.tuning import StudyOptions, default_storage_url, open_study, run_study, study_summary

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    study = open_study("f", default_storage_url(tmp_path), StudyOptions(n_startup_trials=1))

    def objective(trial):
        x = trial.suggest_float("x", 0, 1)
        if trial.number == 1:
            raise FloatingPointError("NaN loss")
        return x

    assert run_study(study, objective, budget=3) == 3
    summary = study_summary(study)
    assert summary["trials"]["complete"] == 2 and summary["trials"]["fail"] == 1
    assert "NaN loss" in study.trials[1].user_attrs["error"]


def test_a_call_judges_and_reports_its_own_trials_not_another_workers_last_one(tmp_path):
    """CI stop 57: two workers shared a journal study; one worker's trial completed while the study's last
    trial was the other worker's surplus trial, recorded FAIL, and the worker failed "every trial of this call
    failed (1); last error: unknown". Here a second handle on the storage plays the other worker."""
    import optuna

    from fyexp.core.errors import RunFailed
    from fyexp.spec.tuning import StudyOptions, default_storage_url, open_study, run_study

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    url = default_storage_url(tmp_path)
    study = open_study("w", url, StudyOptions(n_startup_trials=1))
    other = optuna.load_study(study_name="w", storage=url)

    def objective(trial):
        late = other.ask()  # drawn while this trial runs, so numbered after it: the study's last trial
        other.tell(late, state=optuna.trial.TrialState.FAIL)
        return trial.suggest_float("x", 0, 1)

    seen = []
    record = lambda _study, trial: seen.append((trial.number, trial.state.name))  # noqa: E731
    assert run_study(study, objective, n_trials=2, on_trial_end=record) == 2
    assert seen == [(0, "COMPLETE"), (2, "COMPLETE")]  # the other worker's trials 1 and 3 failed, not ours

    def failing(trial):
        late = other.ask()
        other.tell(late, values=[0.5])  # the other worker's trial completes; ours fails
        raise FloatingPointError("NaN loss at 1e-9")

    with pytest.raises(RunFailed, match=r"failed \(1\); last error: FloatingPointError: NaN loss at 1e-9"):
        run_study(study, failing, n_trials=1)


@pytest.mark.slow
def test_kill_minus_nine_then_resume_loses_and_duplicates_nothing(tmp_path):
    from fyexp.spec.tuning import default_storage_url

    url, log = default_storage_url(tmp_path), tmp_path / "log.txt"
    log.touch()
    (proc,) = _worker(url, "k", 5, log, 0.25)
    deadline = time.time() + 60
    while len(log.read_text().split()) < 2 and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)  # inside the third trial
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed = len(log.read_text().split())
    assert killed < 5
    time.sleep(3.5)  # past the grace period: the dead trial's heartbeat is stale
    _wait(_worker(url, "k", 5, log, 0.05))
    trials = _check_exact(url, "k", 5, log)
    assert any(t.state.name == "FAIL" and not t.user_attrs.get("surplus") for t in trials)  # the killed one, retried


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_two_workers_share_one_budget(tmp_path, backend):
    from fyexp.spec.tuning import default_storage_url

    if backend == "postgresql":
        url = os.environ.get("FYEXP_TEST_POSTGRES_URL")
        if not url:
            pytest.skip("FYEXP_TEST_POSTGRES_URL is not set (scripts/ci_postgres.sh starts a throw-away server)")
        name = f"two-{os.getpid()}-{time.time_ns()}"
    else:
        url, name = default_storage_url(tmp_path), "two"
    log = tmp_path / "log.txt"
    log.touch()
    _wait(_worker(url, name, 8, log, 0.02, workers=2))
    _check_exact(url, name, 8, log)


from dataclasses import dataclass, field  # noqa: E402

from fyexp.train import OptimizerConfig, TrainConfig  # noqa: E402


@dataclass
class Cfg:
    """A tunable toy config: a nested train: block and a search space."""

    width: int = 3
    train: TrainConfig = field(default_factory=lambda: TrainConfig(epochs=2, optimizer=OptimizerConfig(lr=0.5)))
    search: dict = field(default_factory=dict)
    n_trials: int = 5
    tune_seed: int = 0
    heartbeat_interval: int = 30
    grace_period: int = 120


def test_any_spec_with_a_search_space_tunes_and_best_applies_dotted_paths(tmp_path):
    """fyexp.spec.tuning.tune_experiment / with_best: generic over the config (nested train: paths), found via the
    spec."""
    from types import SimpleNamespace

    import yaml

    from fyexp.core.errors import ConfigValueError
    from fyexp.spec.specs import ResolvedSpec
    from fyexp.spec.tuning import check_search, tune_experiment, with_best

    class Quadratic:
        TRIAL_OBJECTIVE = "the quadratic"

        def trial(self, config, ctx, report, work_dir):
            value = (config.train.optimizer.lr - 0.01) ** 2 + (config.width - 4) ** 2
            report(1, value)
            return value

    search = {"train.optimizer.lr": {"low": 1e-3, "high": 1.0, "log": True}, "width": {"choices": [2, 4]}}
    config = Cfg(search=search)
    ctx = SimpleNamespace(experiment="toy", profile="quick", work_dir=tmp_path / "work", device="cpu")
    tune_experiment(Quadratic(), config, ctx, results_dir=tmp_path)
    best = yaml.safe_load((tmp_path / "toy" / "best_params-quick.yaml").read_text())
    assert sum(best["trials"].values()) == 5 and set(best["params"]) == {"train.optimizer.lr", "width"}
    resolved = ResolvedSpec(spec=SimpleNamespace(name="toy"), profile="quick", seeds=(0,), config=config, raw={})
    tuned = with_best(resolved, tmp_path).config
    assert tuned.train.optimizer.lr == best["params"]["train.optimizer.lr"] and tuned.width == best["params"]["width"]
    assert tuned.train.epochs == 2  # the rest of the nested config is kept
    with pytest.raises(ConfigValueError, match="search.train.optimiser.lr"):
        check_search({"train.optimiser.lr": {"low": 1, "high": 2}}, Cfg)
    with pytest.raises(ConfigValueError, match="search.width"):
        check_search({"width": {"low": 1}}, Cfg)



def _two_tuned_profiles(tmp_path):
    """The toy experiment tuned at profile ``short`` (best width 2), then ``long`` (best width 8); returns
    ``best_width(profile)``: the width ``--best`` runs at."""
    from types import SimpleNamespace

    import yaml

    from fyexp.spec.specs import ResolvedSpec
    from fyexp.spec.tuning import tune_experiment, with_best

    class Quadratic:
        TRIAL_OBJECTIVE = "the squared distance to the target"

        def __init__(self, target):
            self.target = target

        def trial(self, config, ctx, report, work_dir):
            value = (config.width - self.target) ** 2
            report(1, value)
            return value

    config = Cfg(search={"width": {"choices": [2, 4, 8]}}, n_trials=6)
    for profile, target in (("short", 2), ("long", 8)):
        ctx = SimpleNamespace(experiment="toy", profile=profile, work_dir=tmp_path / "work", device="cpu")
        tune_experiment(Quadratic(target), config, ctx, results_dir=tmp_path)
    for profile in ("short", "long"):  # each profile's summary in its own file: tuning one never overwrites another
        assert yaml.safe_load((tmp_path / "toy" / f"best_params-{profile}.yaml").read_text())["profile"] == profile

    def best_width(profile):
        resolved = ResolvedSpec(spec=SimpleNamespace(name="toy"), profile=profile, seeds=(0,), config=config, raw={})
        return with_best(resolved, tmp_path).config.width

    return best_width


def test_best_takes_the_asked_profiles_study_not_the_one_tuned_last(tmp_path):
    """Two profiles tuned one after the other: best_params.yaml then holds the second's summary, and --best for the
    first must still give the first study's best (it gave the second's: nvdm cpu ran cpu-long's parameters).  A
    profile never tuned is refused, naming what the file holds."""
    from fyexp.core.errors import FyexpError

    import yaml

    first = tmp_path / "toy" / "best_params.yaml"  # the one file of the first studies, for profile "long"
    first.parent.mkdir(parents=True)
    first.write_text(yaml.safe_dump({"study": "toy-long", "profile": "long", "params": {"width": 4}}))
    written = first.read_bytes()
    best_width = _two_tuned_profiles(tmp_path)
    assert first.read_bytes() == written  # never overwritten by a later study, of its profile or another's
    assert best_width("long") == 8      # from best_params-long.yaml, before the first studies' file
    assert best_width("short") == 2     # from best_params-short.yaml
    (tmp_path / "toy" / "best_params-short.yaml").unlink()
    assert best_width("short") == 2     # from study.db's toy-short
    (tmp_path / "toy" / "best_params-long.yaml").unlink()
    assert best_width("long") == 4      # the first studies' file, for the profile it names
    with pytest.raises(FyexpError, match="no tuning study of profile 'paper'.*holds the study of profile 'long'"):
        best_width("paper")


def test_a_study_is_opened_again_only_when_its_file_changed(tmp_path, monkeypatch):
    """report and claims ask --best's parameters of every row of a tuned profile: the study's answer is kept
    (fyexp.store.user_cache) while study.db is unchanged, and read again once it changed."""
    import optuna

    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    best_width = _two_tuned_profiles(tmp_path)
    (tmp_path / "toy" / "best_params-short.yaml").unlink()  # the study answers, not the profile's summary file
    assert best_width("short") == 2
    with monkeypatch.context() as patched:
        patched.setattr(optuna, "load_study", lambda **_: pytest.fail("opened an unchanged study"))
        assert best_width("short") == 2
    optuna.create_study(study_name="another", storage=f"sqlite:///{tmp_path / 'toy' / 'study.db'}")  # the file changes
    with monkeypatch.context() as patched:
        patched.setattr(optuna, "load_study", lambda **_: (_ for _ in ()).throw(RuntimeError("opened")))
        with pytest.raises(RuntimeError, match="opened"):
            best_width("short")
    assert best_width("short") == 2


if __name__ == "__main__":
    import optuna

    from fyexp.spec.tuning import StudyOptions, open_study, retry_root, run_study

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    url, name, budget, log, sleep = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4]), float(sys.argv[5])
    study = open_study(name, url, StudyOptions(heartbeat_interval=1, grace_period=3, n_startup_trials=2))

    def objective(trial):
        x = trial.suggest_float("x", -3.0, 3.0)
        for step in range(3):
            time.sleep(sleep)
            trial.report(x * x, step)
        with open(log, "a") as handle:
            handle.write(f"{retry_root(trial)}\n")
        return (x - 1.0) ** 2

    run_study(study, objective, budget=budget)


def test_tune_time_counts_rounds_of_workers_and_stops_at_the_timeout():
    from fyexp.spec.tuning import tune_time

    assert tune_time(7, 1, 30.0, None) == 210.0
    assert tune_time(7, 3, 30.0, None) == 90.0      # ⌈7/3⌉ = 3 rounds, not 7/3
    assert tune_time(6, 3, 30.0, None) == 60.0
    assert tune_time(7, 3, 30.0, 45.0) == 75.0      # none starts after 45 s: at most one more trial
    assert tune_time(7, 3, 30.0, 200.0) == 90.0     # a timeout past the rounds changes nothing
    assert tune_time(0, 2, 30.0, None) == 0.0


def test_trial_seconds_average_the_trials_that_ran_not_the_surplus_or_killed():
    import datetime

    import optuna
    from optuna.trial import TrialState, create_trial

    from fyexp.spec.tuning import trial_seconds

    def made(state, seconds, **attrs):
        dist = {"x": optuna.distributions.FloatDistribution(0, 1)}
        trial = create_trial(state=state, params={"x": 0.5}, distributions=dist, user_attrs=attrs,
                             value=0.1 if state == TrialState.COMPLETE else None)
        trial.datetime_start = datetime.datetime(2026, 1, 1)
        trial.datetime_complete = trial.datetime_start + datetime.timedelta(seconds=seconds)
        return trial

    assert trial_seconds([]) is None
    ran = [made(TrialState.COMPLETE, 40), made(TrialState.PRUNED, 10), made(TrialState.FAIL, 70, error="NaN")]
    assert trial_seconds(ran) == (40.0, 3)
    noise = [made(TrialState.FAIL, 0.2, surplus=True), made(TrialState.FAIL, 900)]   # surplus; killed, no error
    assert trial_seconds(ran + noise) == (40.0, 3)
    assert trial_seconds(noise) is None
