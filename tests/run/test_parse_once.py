"""One judgement per cell per command: ``fyexp run``'s plan classifies the grid and hands it to the run, and a finished
cell's files (its cell file and its run record) are each parsed once in the command (issue 48)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import fyexp.store.damaged
import fyexp.store.results
import fyexp.run.runner
from fyexp.cli.commands.options import Options, resolve_experiment
from fyexp.run.plan import run_plan
from fyexp.run.runner import run_experiment
from tests.conftest import TOY_SPECS


def _counting(monkeypatch) -> tuple[Counter, Counter, list]:
    """Count, per file, the parses of cell files and the reads of run records, and the classifications of grids."""
    cells, records, classified = Counter(), Counter(), []
    parse, read = fyexp.store.results._read_cell_file, fyexp.store.damaged._parse_json
    classify = fyexp.run.runner.classify_cells
    monkeypatch.setattr(fyexp.store.results, "_read_cell_file",
                        lambda path, *a: cells.update([Path(path).name]) or parse(path, *a))
    monkeypatch.setattr(fyexp.store.damaged, "_parse_json",
                        lambda path, *a: records.update([Path(path).name]) or read(path, *a))
    monkeypatch.setattr(fyexp.run.runner, "classify_cells", lambda *a, **kw: classified.append(1) or classify(*a, **kw))
    return cells, records, classified


def test_run_judges_each_finished_cell_once_and_parses_its_files_once(tmp_path, monkeypatch):
    monkeypatch.setenv("FYEXP_CACHE_DIR", "off")   # no user cache: every parse in this process is counted
    experiment, resolved = resolve_experiment("toy", Options(profile="paper", experiments_dir=TOY_SPECS))
    results = tmp_path / "results"
    first = run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=results,
                           show_progress=False)
    assert first.ran >= 2 and first.skipped == 0
    fyexp.store.damaged._parsed.cache_clear()    # a new command: nothing parsed yet
    cells, records, classified = _counting(monkeypatch)
    plan = run_plan(resolved, experiment, results)
    again = run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=results,
                           show_progress=False, pending=plan.pending)
    assert (plan.finished, again.ran, again.skipped) == (first.ran, 0, first.ran)
    assert len(classified) == 1                    # the plan's classification, handed to the run
    finished = sorted(p.name for p in (results / "toy" / "cells" / "paper").glob("*.csv"))
    assert sorted(cells) == finished and set(cells.values()) == {1}
    assert sorted(records) == sorted(n.replace(".csv", ".record.json") for n in finished)
    assert set(records.values()) == {1}
    # without the plan's classification the run classifies (and judges) again, still parsing nothing twice
    fyexp.store.damaged._parsed.cache_clear()
    cells.clear(), records.clear()
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=results, show_progress=False)
    assert len(classified) == 2 and set(cells.values()) == {1} and set(records.values()) == {1}


def _judging(monkeypatch) -> Counter:
    """Count the judgements (the run records fyexp.store.provenance.freshness reads to judge a cell) per cell
    file."""
    import fyexp.store.provenance.freshness as fr

    judged, load = Counter(), fr.load_record
    monkeypatch.setattr(fr, "load_record", lambda cell_file, *a, **kw: judged.update(
        [Path(cell_file).relative_to(Path(cell_file).parents[2]).as_posix()]) or load(cell_file, *a, **kw))
    return judged


def test_the_report_and_the_claims_judge_each_cell_once_on_both_axes(tmp_path, monkeypatch):
    from fyexp.claims.verdicts import load_frames
    from fyexp.report import build_report

    experiment, resolved = resolve_experiment("toy", Options(profile="paper", experiments_dir=TOY_SPECS))
    results = tmp_path / "results"
    run_experiment(resolved, experiment, device="cpu", data_dir=None, results_dir=results, show_progress=False)
    finished = sorted(f"cells/paper/{p.name}" for p in (results / "toy" / "cells" / "paper").glob("*.csv"))
    judged = _judging(monkeypatch)
    frames, _ = load_frames(results, TOY_SPECS, ["toy"])
    assert sorted(judged) == finished and set(judged.values()) == {1}   # the claims' evidence: once a cell
    assert set(frames["toy"]["freshness"]) == {"fresh"} and len(frames["toy"]) == len(finished)
    judged.clear()
    list(build_report(["toy"], results, TOY_SPECS, superseded=False, cache=False))
    assert sorted(judged) == finished and set(judged.values()) == {1}   # the report's counts and tables: once
