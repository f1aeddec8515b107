"""Issue 18, class 8: at 80 and 100 columns the live bars keep their counts and ETA, `fyexp list` fits and
wraps between words, and `fyexp tune` prints one short line per trial (Optuna's own lines routed through it)."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from fyexp.progress import LiveProgress
from tests.conftest import TOY_SPECS, run_cli, run_in_terminal, strip_ansi

WIDTHS = [80, 100]
LONG_TITLE = "gvi-gmm: quick profile, 48 cells of an experiment with a rather long and descriptive title"
LONG_KEY = "gvi-gmm/method=renyi_alpha/alpha=0.5/seed=3/n_components=4/covariance=full/init=kmeans++"


@pytest.mark.parametrize("width", WIDTHS)
def test_live_bars_keep_counts_elapsed_and_eta(width):
    console = Console(file=io.StringIO(), force_terminal=True, width=width, record=True)
    progress = LiveProgress(console)
    progress.start(LONG_TITLE, 48)
    progress.cell_started(LONG_KEY)
    progress.cell_finished(LONG_KEY, "ok", 1.0)
    progress.subtask("epochs of a nested task with a long description", 100)(
        3, info="loss=123.456 elbo=-99.9 and a long tail of fields")
    view = Console(file=io.StringIO(), width=width, record=True)
    view.print(progress.progress.get_renderable())
    progress.stop()
    lines = view.export_text().splitlines()
    assert len(lines) == 2, lines  # one line per bar, nothing wrapped
    for line, count in zip(lines, ["1/48", "3/100"]):
        assert len(line) <= width and count in line and "ETA" in line, line
        assert re.search(r"\d:\d\d:\d\d ETA (-:--:--|\d:\d\d:\d\d)", line), line  # elapsed and remaining whole
    assert "…" in lines[0]  # the description gave way, not the numbers


@pytest.mark.slow
@pytest.mark.parametrize("width", WIDTHS)
def test_list_fits_the_terminal_and_never_breaks_a_word(width):
    from fyexp.specs import available_specs, load_spec

    code, text = run_in_terminal("list", columns=width, timeout=120)
    assert code == 0, text
    lines = strip_ansi(text).replace("\r", "").splitlines()
    assert max(len(line) for line in lines) <= width, max(lines, key=len)
    words = set(" ".join(lines).split())
    for name in available_specs():
        spec = load_spec(name)
        missing = [w for w in spec.title.split() if w not in words]
        assert not missing, (name, missing)  # every word of the title shown whole
        assert all(p in " ".join(lines).replace(",", " ").split() for p in spec.profile_names())


@pytest.mark.slow
def test_tune_prints_one_short_line_per_trial_and_no_optuna_lines(tmp_path):
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results"), "COLUMNS": "80"}
    result = run_cli("tune", "toy", "--profile", "tune", "--n-trials", "3", env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    trial_lines = [line for line in result.stdout.splitlines() if re.match(r"\[\d/3\] trial \d+ ", line)]
    assert [line.split("]")[0] for line in trial_lines] == ["[1/3", "[2/3", "[3/3"], result.stdout
    assert all(len(line) <= 100 and "best" in line for line in trial_lines), trial_lines
    assert "finished with value" not in result.stdout + result.stderr  # Optuna's 271-character lines


def test_trial_line_of_a_failed_trial_is_one_line_cut_after_a_word():
    import datetime

    import optuna
    from optuna.trial import TrialState, create_trial

    from fyexp.tuning import trial_line

    trial = create_trial(state=TrialState.FAIL, params={"lr": 0.1},
                         distributions={"lr": optuna.distributions.FloatDistribution(1e-3, 1.0)},
                         user_attrs={"error": "ValueError: the model diverged\n" + "after many epochs " * 20})
    trial.number, trial.datetime_start = 7, datetime.datetime(2026, 1, 1)
    trial.datetime_complete = trial.datetime_start + datetime.timedelta(seconds=12.5)
    best = create_trial(value=0.25, params={"lr": 0.1},
                        distributions={"lr": optuna.distributions.FloatDistribution(1e-3, 1.0)})
    best.number = 0
    line = trial_line(trial, best, 8, 20)
    assert line.startswith("[8/20] trial 7 fail in 12.5 s; best 0.25 (trial 0); ValueError: the model diverged")
    assert len(line) <= 100 and "\n" not in line and line.endswith("…")
    assert line[:-1].split()[-1] in {"after", "many", "epochs"}  # cut after a whole word
