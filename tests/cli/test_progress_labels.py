"""The live bar at 80 columns names the current cell by what tells it apart, and nested bars carry their unit."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from fyexp.run.progress import LiveProgress, cell_labels
from tests.conftest import TOY_SPECS, run_in_terminal, strip_ansi

KEYS = [f"{m}__K={k}__L=1__dataset={d}__fold={f}__seed=0" for m in ("vae", "iwae") for k in (5, 50)
        for d in ("freyface", "mnist") for f in range(3)]


def test_labels_keep_the_values_that_vary_and_the_seed():
    labels = cell_labels(KEYS)
    assert labels["iwae__K=50__L=1__dataset=mnist__fold=2__seed=0"] == "iwae K=50 mnist fold=2"  # L, seed constant
    seeds = cell_labels(["standard__seed=0", "standard__seed=1", "sparse__rho=2__seed=0"])
    assert seeds == {"standard__seed=0": "standard seed=0", "standard__seed=1": "standard seed=1",
                     "sparse__rho=2__seed=0": "sparse rho=2 seed=0"}
    assert cell_labels(["toy__x=1__seed=0"]) == {"toy__x=1__seed=0": "toy__x=1__seed=0"}  # alone: the key itself


def test_at_80_columns_the_label_and_the_units_show_whole():
    console = Console(file=io.StringIO(), force_terminal=True, width=80)
    progress = LiveProgress(console, KEYS)
    progress.start("vr-vae [paper]", len(KEYS))
    progress.cell_started(KEYS[7])
    progress.cell_finished(KEYS[7], "ok", 1.0)
    progress.subtask("vr-vae/" + KEYS[7], 200)(84, info="epoch 3/50 loss 123.4")
    progress.subtask("CAVI fits, table 1", 30, unit="fits")(3)
    view = Console(file=io.StringIO(), width=80, record=True)
    view.print(progress.progress.get_renderable())
    progress.stop()
    lines = view.export_text().splitlines()
    assert len(lines) == 3 and max(len(line) for line in lines) <= 80
    assert "vae K=50 freyface fold=1" in lines[0] and "1/24 cells" in lines[0]
    assert "└" in lines[1] and "84/200 steps" in lines[1] and "freyface" not in lines[1]  # no repeat of the key
    assert "└ CAVI" in lines[2] and "3/30 fits" in lines[2]


@pytest.mark.slow
def test_installed_run_shows_the_cell_label_on_the_live_bar(tmp_path):
    env = {"FYEXP_EXPERIMENTS_DIR": str(TOY_SPECS), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    code, screen = run_in_terminal("run", "toy", "--profile", "quick", "--set", "values=[1.0, 2.0, 3.0]",
                                   "--set", "sleep_s=0.3", env=env, columns=80)
    text = strip_ansi(screen)
    assert code == 0, text
    assert "x=3" in text and "3/3 cells" in text and "toy__x=3" not in text.split("cells run")[0].split("\n", 2)[-1]


def test_a_cells_nested_work_carries_its_unit_to_the_display(tmp_path):
    """RunContext.subtask hands the unit on (EM iterations, CAVI fits); the line display prints it."""
    import io

    from rich.console import Console

    from fyexp.experiments.base import RunContext
    from fyexp.run.progress import LineProgress

    out = io.StringIO()
    progress = LineProgress(Console(file=out, width=80))
    progress.heartbeat_s = 0.0
    ctx = RunContext("toy", "quick", "cpu", None, tmp_path, tmp_path, progress=progress)
    ctx.subtask("em", 10, "iterations")(3)
    ctx.subtask("train", 4)(1)
    text = out.getvalue()
    assert "em: 3/10 iterations" in text and "train: 1/4 steps" in text


def test_a_tuning_study_counts_workers_not_cells(monkeypatch, tmp_path):
    """`fyexp tune --jobs N`'s bar counts its N workers (unit "workers"), not cells, and names the shared budget."""
    from collections import Counter
    from types import SimpleNamespace

    from fyexp.run import executors
    from fyexp.spec import tuning

    monkeypatch.setattr(tuning, "open_study", lambda *a, **k: None)
    monkeypatch.setattr(tuning, "counted_trials", lambda study: 2)
    monkeypatch.setattr(executors, "_run_jobs", lambda *a, **k: Counter(failed=1))
    started = []

    class Progress:
        def start(self, title, total, unit="cells"):
            started.append((title, total, unit))

        def stop(self):
            started.append("stopped")

    failed = executors.tune_as_jobs(None, SimpleNamespace(n_trials=9), SimpleNamespace(experiment="toy", profile="q"),
                                    options=executors.ExecutorOptions(jobs=3), n_trials=5, timeout=None,
                                    storage="sqlite://", results_dir=tmp_path, progress=Progress())
    assert failed == 1
    assert started == [("tune toy [q]: 3 workers, budget 7 trials", 3, "workers"), "stopped"]
