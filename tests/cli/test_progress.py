"""The progress display cannot take a run down: a broken live display falls back to plain lines, every cell lands."""

from __future__ import annotations

import io

import pandas as pd
from rich.console import Console

from fyexp.run.progress import LineProgress, LiveProgress, make_progress
from fyexp.run.runner import run_experiment
from fyexp.spec.specs import load_spec, resolve
from tests.conftest import TOY_SPECS
from tests.toy_experiment import Toy


def _terminal() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, force_terminal=True, width=100), buffer


def test_live_bar_on_a_terminal_and_lines_otherwise():
    console, _ = _terminal()
    assert isinstance(make_progress(console, live=True), LiveProgress)
    assert isinstance(make_progress(console, live=False), LineProgress)
    assert isinstance(make_progress(Console(file=io.StringIO()), live=True), LineProgress)  # not a terminal


def test_nested_tasks_with_fields_and_markup_in_names_do_not_break_the_bar():
    console, buffer = _terminal()
    progress = LiveProgress(console)
    progress.start("toy [quick]", 2)
    progress.cell_started("cell [a]")
    advance = progress.subtask("epochs [1/2]", 3)
    advance(1)
    advance(1, info="loss [x] 0.5")
    advance(1)
    advance(1)  # past its total: ignored
    progress.cell_finished("cell [a]", "ok", 0.1)
    progress.stop()
    assert progress.fallback is None
    assert "toy [quick]" in buffer.getvalue()


def test_a_display_that_raises_falls_back_to_lines_and_every_cell_lands(tmp_path, monkeypatch):
    console, buffer = _terminal()
    progress = LiveProgress(console)
    calls = {"n": 0}
    real_update = progress.progress.update

    def broken_update(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] >= 2:
            raise KeyError("info")  # the very failure of rich columns that once crashed every run
        return real_update(*args, **kwargs)

    monkeypatch.setattr(progress.progress, "update", broken_update)
    spec = load_spec("toy", TOY_SPECS)
    resolved = resolve(spec, "paper", Toy.Config)
    summary = run_experiment(resolved, Toy(), device="cpu", data_dir=None, results_dir=tmp_path, console=console,
                             progress=progress)
    assert summary.ran == 4 and summary.failed == 0
    assert progress.fallback is not None
    text = buffer.getvalue()
    assert "progress display failed (KeyError" in text and "continuing with plain progress lines" in text
    assert len(pd.read_csv(tmp_path / "toy" / "results.csv")) == 4


def test_plain_lines_report_each_cell_and_a_heartbeat():
    buffer = io.StringIO()
    progress = LineProgress(Console(file=buffer, width=200), heartbeat_s=0.0)
    progress.start("toy [quick]", 1)
    progress.cell_started("c0")
    progress.subtask("training", 2)(1, info="loss 3")
    progress.cell_finished("c0", "ok", 1.5)
    lines = buffer.getvalue().splitlines()
    assert lines == ["toy [quick]: 1 cell(s) to run", "[1/1] c0 ...", "    training: 1/2 steps loss 3", "[1/1] c0 ok in 1.5 s"]
