"""Issue 18, class 8: at 80 and 100 columns the live bars keep their counts and ETA, `fyexp list` fits and
wraps between words, and `fyexp tune` prints one short line per trial (Optuna's own lines routed through it)."""

from __future__ import annotations

import io
import os
import re

import pytest
from rich.console import Console

from fyexp.run.progress import LiveProgress
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
    from fyexp.spec.specs import available_specs, load_spec

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
    assert all(re.search(r"complete in [\d.]+ s: validation loss [\d.e-]+ \(minimize; best ", line)
               for line in trial_lines), trial_lines  # the objective by name, and its direction
    assert "finished with value" not in result.stdout + result.stderr  # Optuna's 271-character lines


@pytest.mark.slow
def test_tune_prints_its_plan_first_and_points_to_run_best_at_the_end(tmp_path):
    """Before the first trial: the study and its storage, the trials to run of the budget and their time, the
    objective and its direction, where the best parameters go; at the end, the command that runs them.  A second
    call counts the trials the study holds and times the rest by them."""
    results = tmp_path / "results"
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(results), "COLUMNS": "80"}
    first = run_cli("tune", "toy", "--profile", "tune", "--n-trials", "2", env=env, timeout=300)
    assert first.returncode == 0, first.stderr
    db = results / "toy" / "study.db"
    assert first.stderr.splitlines()[:5] == [
        f"tune toy [tune]: study 'toy-tune' in sqlite:///{db.resolve()}",
        "  trials: 2 more trials (--n-trials; the study counts 0)",
        "  time: unknown (no finished trial in the study, no recorded cell of this profile)",
        "  objective: validation loss, minimize (lower is better)",
        f"  best parameters → {results / 'toy' / 'best_params-tune.yaml'}, for `fyexp run toy --profile tune --best`"]
    assert first.stdout.splitlines()[-1] == (f"best parameters → {results / 'toy' / 'best_params-tune.yaml'}; run "
                                             f"them with `fyexp run toy --profile tune --best`")
    again = run_cli("tune", "toy", "--profile", "tune", env=env, timeout=300)  # the profile's budget: 5 trials
    assert again.returncode == 0, again.stderr
    assert "  trials: 3 trials to run (the profile's budget 5, 2 counted so far)" in again.stderr.splitlines()
    [time] = [line for line in again.stderr.splitlines() if line.startswith("  time: ")]
    assert re.fullmatch(r"  time: about \d+ s \(\d+ s a trial: the mean of the study's 2 finished trials\)", time), time
    assert len(re.findall(r"^\[\d/5\] trial ", again.stdout, flags=re.M)) == 3, again.stdout


def test_trial_line_of_a_failed_trial_is_one_line_cut_after_a_word():
    import datetime

    import optuna
    from optuna.trial import TrialState, create_trial

    from fyexp.spec.tuning import trial_line

    trial = create_trial(state=TrialState.FAIL, params={"lr": 0.1},
                         distributions={"lr": optuna.distributions.FloatDistribution(1e-3, 1.0)},
                         user_attrs={"error": "ValueError: the model diverged\n" + "after many epochs " * 20})
    trial.number, trial.datetime_start = 7, datetime.datetime(2026, 1, 1)
    trial.datetime_complete = trial.datetime_start + datetime.timedelta(seconds=12.5)
    best = create_trial(value=0.25, params={"lr": 0.1},
                        distributions={"lr": optuna.distributions.FloatDistribution(1e-3, 1.0)})
    best.number = 0
    line = trial_line(trial, best, 8, 20, "validation RE", "maximize")
    assert line.startswith("[8/20] trial 7 fail in 12.5 s (maximize; best 0.25, trial 0); ValueError: the model "
                           "diverged"), line
    assert len(line) <= 100 and "\n" not in line and line.endswith("…")
    assert line[:-1].split()[-1] in {"after", "many", "epochs"}  # cut after a whole word


def test_trial_line_names_the_objective_and_its_direction():
    import datetime

    import optuna
    from optuna.trial import create_trial

    from fyexp.spec.tuning import trial_line

    dist = {"lr": optuna.distributions.FloatDistribution(1e-3, 1.0)}
    trial = create_trial(value=0.4512, params={"lr": 0.1}, distributions=dist)
    trial.number, trial.datetime_start = 1, datetime.datetime(2026, 1, 1)
    trial.datetime_complete = trial.datetime_start + datetime.timedelta(seconds=3.2)
    assert trial_line(trial, trial, 2, 6, "validation RE", "minimize") == \
        "[2/6] trial 1 complete in 3.2 s: validation RE 0.4512 (minimize; best 0.4512, trial 1)"
    assert trial_line(trial, None, 2, None, "held-out log-likelihood", "maximize") == \
        "[2] trial 1 complete in 3.2 s: held-out log-likelihood 0.4512 (maximize; no best yet)"


# ---- issue 49: 80 columns ---------------------------------------------------------------------------------------
PLAN = ("plan: fy-vae [quick]: 20 cells: 20 to run, 0 finished; estimate 12 min (from 4 recorded cells in "
        "/work/results, on the device that ran them); the rest 157,993 h")


def test_plain_lines_wrap_between_words_at_the_width():
    from fyexp.run.progress import wrapped

    lines = wrapped(PLAN + "\n  second line, indented, and long enough to be wrapped once more at forty", 40)
    assert max(len(line) for line in lines) <= 40, lines
    assert " ".join(" ".join(lines).split()) == " ".join((PLAN + " second line, indented, and long enough to be "
                                                          "wrapped once more at forty").split())  # no word cut
    assert all(line.startswith("  ") for line in lines[1:]), lines  # continuations indented
    assert lines[lines.index(next(l for l in lines if "second" in l)) + 1].startswith("    ")
    assert wrapped("short", 40) == ["short"] and wrapped("", 40) == [""]
    assert wrapped("a " + "x" * 60, 40) == ["a", "  " + "x" * 60]  # a word longer than the width stays whole


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "pipe"])
def test_say_wraps_on_a_terminal_only(terminal):
    from fyexp.run.progress import say

    console = Console(file=io.StringIO(), force_terminal=terminal, width=80, color_system=None)
    say(console, PLAN)
    text = console.file.getvalue()
    if terminal:
        assert len(text.splitlines()) == 3 and max(len(line) for line in text.splitlines()) <= 80, text
        assert "157,993" in text and "(from 4" in text  # the words the terminal broke ("(fro|m 4", "157,|993 h")
    else:
        assert text == PLAN + "\n"  # scripts and tests read one line


def test_line_progress_wraps_a_long_cell_key_at_80_columns():
    from fyexp.run.progress import LineProgress

    console = Console(file=io.StringIO(), force_terminal=True, width=80, color_system=None)
    progress = LineProgress(console)
    key = "bernoulli-biweight__dataset=FashionMNIST__latent_rho=1.5__obs_rho=1__seed=0"  # 72 characters
    progress.start("fy-vae [quick]", 20)
    progress.cell_finished(key + " and a long status text", "ok", 294.0)
    lines = console.file.getvalue().splitlines()
    assert len(lines) == 4 and max(len(line) for line in lines) <= 80 and any(key in line for line in lines), lines


FY_VAE_KEYS = [f"{m}__dataset={d}__latent_rho={lr}__obs_rho=1__regularizer={r}__seed=0"
               for m in ("bernoulli-biweight", "bernoulli-gaussian") for d in ("MNIST", "FashionMNIST")
               for lr in (1.5, 2) for r in ("fy", "authors")]


def test_labels_drop_shared_prefixes_and_names_of_words():
    labels = cell_labels_of(FY_VAE_KEYS)
    assert labels[FY_VAE_KEYS[1]] == "biweight MNIST latent_rho=1.5 authors"
    assert labels[FY_VAE_KEYS[0]] == "biweight MNIST latent_rho=1.5 fy"
    assert len(set(labels.values())) == len(FY_VAE_KEYS)


def cell_labels_of(keys):
    from fyexp.run.progress import cell_labels

    return cell_labels(keys)


def test_fit_label_keeps_every_word_and_every_value():
    from fyexp.run.progress import fit_label

    label = "biweight FashionMNIST latent_rho=1.5 authors"
    assert fit_label(label, 80) == label
    for width in (30, 24):
        fitted = fit_label(label, width)
        assert len(fitted) <= width and fitted.split()[-1].startswith("auth") and "=1.5" in fitted, fitted
        assert len(fitted.split()) == 4, fitted
    assert fit_label("biweight FashionMNIST latent_rho=1.5 fy", 24) != fit_label(label, 24)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_live_bar_tells_the_fy_cell_from_the_authors_cell(width):
    shown = {}
    for key in FY_VAE_KEYS[:2]:  # the same cell but for regularizer=fy / authors
        console = Console(file=io.StringIO(), force_terminal=True, width=width)
        progress = LiveProgress(console, FY_VAE_KEYS)
        progress.start("fy-vae [quick]", len(FY_VAE_KEYS))
        progress.cell_started(key)
        view = Console(file=io.StringIO(), width=width, record=True)
        view.print(progress.progress.get_renderable())
        progress.stop()
        shown[key] = view.export_text().splitlines()[0]
        assert len(shown[key]) <= width - 2, shown[key]  # room for the terminal's ^C echo
    fy, authors = shown.values()
    assert fy != authors and " fy " in fy and " authors " in authors, shown


def test_the_step_eta_shows_once_a_rate_is_known():
    """32 of 64 steps in one burst 40 s after the start: rich has no recent speed (one sample), the ETA column
    takes the average rate, 40 s for the 32 steps left; before any step it has none."""
    from rich.progress import Progress, TimeRemainingColumn

    from fyexp.run.progress import RemainingColumn

    clock = [0.0]
    progress = Progress(get_time=lambda: clock[0])
    task_id = progress.add_task("steps", total=64)
    task = progress.tasks[0]
    assert RemainingColumn().render(task).plain == "-:--:--"
    clock[0] = 40.0
    progress.update(task_id, advance=32)
    assert task.speed is None and TimeRemainingColumn().render(task).plain == "-:--:--"  # rich's own: no ETA
    assert RemainingColumn().render(task).plain == "0:00:40"
    clock[0] = 50.0
    progress.update(task_id, advance=16)  # two samples within 30 s: rich's speed, 1.6 steps/s, 16 left
    assert RemainingColumn().render(task).plain == TimeRemainingColumn().render(task).plain == "0:00:10"


@pytest.mark.slow
def test_ctrl_c_in_tmux_leaves_the_bar_printed_once(tmp_path):
    """In a tmux pane of 80 × 24, Ctrl-C during a run: the terminal echoes "^C" after the bar; the bar stays one line
    (it was printed twice when it filled the width and the echo wrapped the cursor)."""
    import shutil
    import subprocess
    import time

    from tests.conftest import ROOT, fyexp_script

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    socket, results = f"fyexp-test-{os.getpid()}", tmp_path / "results"
    command = (f"cd {ROOT} && PYTHONPATH={ROOT} FYEXP_EXPERIMENTS_DIR={TOY_SPECS} FYEXP_RESULTS_DIR={results} "
               f"{fyexp_script()} run toy --profile quick --set 'values=[1.0,2.0,3.0]' --set sleep_s=3; sleep 60")
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "80", "-y", "24", command], check=True)
    try:
        screen = ""
        for _ in range(120):  # the first cell has started: its label is on the bar
            time.sleep(0.5)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
            if "1/3 cells" in screen:
                break
        subprocess.run([*tmux, "send-keys", "-t", "t", "C-c"], check=True)
        for _ in range(40):
            time.sleep(0.5)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
            if "interrupted" in screen:
                break
    finally:
        subprocess.run([*tmux, "kill-server"], capture_output=True)
    assert "interrupted: finished cells are saved" in screen, screen
    bars = [line for line in screen.splitlines() if " cells " in line and "ETA" in line]
    assert len(bars) == 1, screen


def test_run_help_reads_at_80_columns():
    """The description column is wide (it was 22 characters beside three columns of option names) and the examples
    and option values are whole, not cut with "…"."""
    env = {"COLUMNS": "80"}
    helped = run_cli("run", "--help", env=env)
    assert helped.returncode == 0, helped.stderr
    lines = helped.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    assert "…" not in helped.stdout
    assert "    fyexp run gmm-clustering --seeds 0-9   ten seeds: variant paper+seeds=0-9" in lines
    assert "    fyexp run vr-vae --only dataset=caltech --dry-run" in lines
    described = [line for line in lines if line.startswith("  --set KEY=VALUE")][0]
    start = described.index("Override")
    assert start <= 32 and len(described) - start >= 40, described  # at least 40 characters of description
    assert "(train.optimizer.lr=1e-4," in helped.stdout  # an example value whole


def test_the_plans_and_shows_summary_read_at_80_columns_through_the_script(tmp_path):
    """`run --dry-run`'s plan line, `reproduce all --dry-run`'s totals and `show`'s summary comments: wrapped between
    words on an 80-column terminal (show's continuation lines stay comments, so its output is still YAML); whole
    lines off a terminal (scripts read them)."""
    import yaml

    env = {"FYEXP_RESULTS_DIR": str(tmp_path / "results"), "FYEXP_CACHE_DIR": str(tmp_path / "cache")}
    for args in (("run", "vr-vae", "--profile", "paper", "--dry-run"), ("reproduce", "all", "--dry-run"),
                 ("show", "vr-vae", "--profile", "paper")):
        code, text = run_in_terminal(*args, env=env, columns=80, timeout=300)
        lines = strip_ansi(text).replace("\r", "").splitlines()
        assert code == 0, text
        long = [line for line in lines if len(line) > 80 and " " in line.strip()
                and not line.lstrip().startswith(("- ", "/"))]
        if args[0] == "show":
            summary = [line for line in lines if line.startswith("#")]
            assert len(summary) > 4 and all(len(line) <= 80 for line in summary), summary
            yaml.safe_load("\n".join(lines))                          # still YAML
            long = [line for line in long if line.startswith("#")]
        assert not long, long
        piped = run_cli(*args, env=env)
        assert piped.returncode == 0 and any(len(line) > 80 for line in piped.stdout.splitlines()), args
