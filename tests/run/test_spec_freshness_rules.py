"""fyexp/store/provenance/freshness.py's spec expectation, rule by rule: what each row's cell would run at now (its
profile resolved again with the row's ``--set`` overrides, scoped to its cell; with its tuning study's best parameters
for a tuned profile), the cache that makes the report and the claims compare each row once, and which axis
``row_freshness`` judges, read by ``code_column`` / ``settings_column`` (see docs/contributing/mutation.md)."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

import fyexp.spec.settings
import fyexp.run.spec_freshness as sf
from fyexp.store.provenance.freshness import code_column, settings_column
import fyexp.spec.specs
from fyexp.store.provenance.freshness import Freshness
from fyexp.store.provenance.record import RunRecord
from fyexp.spec.specs import load_spec
from tests.conftest import TOY_SPECS

RECORDED = RunRecord(Path("c.csv"), "hash", "abc123", settings={"overrides": {}})
UNREAD = RunRecord(Path("c.csv"), None, "abc123")   # no settings read (a superseded file's)


def _row(profile="quick", params='{"x": 0.5}', seed=0, superseded=False, method="toy"):
    return {"profile": profile, "cell": "toy__x=0.5__seed=0", "method": method, "seed": seed, "params": params,
            "superseded": superseded}


def _with(overrides: dict) -> RunRecord:
    return RunRecord(Path("c.csv"), "hash", "abc123", settings={"overrides": overrides})


def _toy():
    return load_spec("toy", TOY_SPECS)


def _study(results: Path, lr: float, profile: str = "tune") -> Path:
    path = results / "toy" / "best_params.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"study": f"toy-{profile}", "profile": profile, "params": {"lr": lr}}))
    return results


# ---- the settings a recorded row would run at now -------------------------------------------------------------
def test_a_recorded_row_expects_its_profile_now_and_no_tuned_config_outside_a_tuned_profile(tmp_path):
    expect = sf.spec_expectation(_toy(), _study(tmp_path, 0.02))
    wanted = expect(RECORDED, _row())
    assert wanted.settings["config"]["values"] == [0.5] and wanted.settings["config"]["lr"] == 0.1
    assert set(wanted.settings) == {"config"}
    assert wanted.tuned is None and wanted.gone is None
    paper = expect(RECORDED, _row("paper"))
    assert paper.settings["config"]["values"] == [1.0, 2.0]


def test_a_rows_set_overrides_are_applied_again_and_a_variant_label_resolves_its_base_profile(tmp_path):
    expect = sf.spec_expectation(_toy(), tmp_path)
    wanted = expect(_with({"values": [3.0], "mode": "cube"}), _row("quick+mode=cube,values=3"))
    assert wanted.settings["config"]["values"] == [3.0] and wanted.settings["config"]["mode"] == "cube"
    assert wanted.settings["config"]["n_trials"] == 4          # quick's, not tune's: the base is the part before '+'
    assert expect(_with({}), _row("quick+x")).settings["config"]["values"] == [0.5]


def test_a_tuned_profile_expects_its_studys_best_too_and_only_with_a_results_folder(tmp_path):
    wanted = sf.spec_expectation(_toy(), _study(tmp_path, 0.02))(RECORDED, _row("tune"))
    assert wanted.settings["config"]["lr"] == 0.1 and wanted.tuned["config"]["lr"] == 0.02
    assert set(wanted.tuned) == {"config"} and wanted.tuned["config"]["n_trials"] == 5
    variant = sf.spec_expectation(_toy(), tmp_path)(_with({"n_trials": 7}), _row("tune+n_trials=7"))
    assert variant.settings["config"]["n_trials"] == 7
    assert variant.tuned is None             # a variant's study is its own (`tune+n_trials=7`), and there is none
    assert sf.spec_expectation(_toy(), None)(RECORDED, _row("tune")).tuned is None      # no folder: the spec only
    assert sf.spec_expectation(_toy(), tmp_path / "none")(RECORDED, _row("tune")).tuned is None  # no study yet


def test_a_profile_gone_or_no_longer_valid_says_so(tmp_path):
    expect = sf.spec_expectation(_toy(), tmp_path)
    assert expect(RECORDED, _row("gone")).gone == "its profile gone is gone or no longer validates"
    assert expect(RECORDED, _row("gone")).settings is None
    invalid = expect(_with({"mode": "quartic"}), _row("quick+mode=quartic"))   # the override no longer validates
    assert invalid.gone == "its profile quick is gone or no longer validates"


def test_superseded_rows_expect_nothing_and_a_row_without_settings_read_cannot_be_told(tmp_path):
    expect = sf.spec_expectation(_toy(), tmp_path)
    assert expect(RECORDED, _row(superseded=True)) is None
    assert expect(UNREAD, _row(superseded=True)) is None
    told = expect(UNREAD, _row("quick"))
    assert (told.settings, told.gone, told.tuned) == (None, None, None)


@pytest.mark.parametrize("params, seed, cell", [("not json", 0, None), ('{"x": 1}', "one", None),
                                               (None, 0, ("toy", 0, {})), (float("nan"), 3, ("toy", 3, {})),
                                               ('{"x": 1}', "2", ("toy", 2, {"x": 1}))])
def test_a_row_whose_cell_cannot_be_read_is_compared_without_a_cell(tmp_path, monkeypatch, params, seed, cell):
    """Params that are not JSON or a seed that is not an integer: no cell; no params text (a cell without
    parameters, read from CSV as NaN): a cell with none."""
    from fyexp.store.results import Cell

    cells = []
    real = fyexp.spec.settings.scoped_config
    monkeypatch.setattr(fyexp.spec.settings, "scoped_config",
                        lambda experiment, config, cell: cells.append(cell) or real(experiment, config, cell))
    assert sf.spec_expectation(_toy(), tmp_path)(RECORDED, _row("paper", params=params, seed=seed)).settings
    assert cells == [None if cell is None else Cell(*cell)]


def _counted(monkeypatch) -> tuple[list, list]:
    """The profiles resolved and the cells scoped from here on, in order (the real functions still answer)."""
    resolved, scoped = [], []
    real_resolve, real_scope = fyexp.spec.specs.resolve, fyexp.spec.settings.scoped_config
    monkeypatch.setattr(fyexp.spec.specs, "resolve", lambda spec, base, *rest: resolved.append(base) or
                        real_resolve(spec, base, *rest))
    monkeypatch.setattr(fyexp.spec.settings, "scoped_config", lambda experiment, config, cell:
                        scoped.append(cell.key) or real_scope(experiment, config, cell))
    return resolved, scoped


def test_each_profile_is_resolved_once_per_overrides_and_each_cell_scoped_once(tmp_path, monkeypatch):
    resolved, scoped = _counted(monkeypatch)
    expect = sf.spec_expectation(_toy(), _study(tmp_path, 0.02))
    for _ in range(3):
        expect(RECORDED, _row())
    assert resolved == ["quick", "quick"] and scoped == ["toy__x=0.5__seed=0"]   # plain and best: once each
    expect(_with({"mode": "cube"}), _row())
    assert resolved[2:] == ["quick", "quick"]                               # other overrides: resolved again
    expect(RECORDED, _row(params='{"x": 1.0}'))
    assert len(resolved) == 4 and scoped[-1] == "toy__x=1__seed=0"          # another cell: scoped, not resolved
    expect(RECORDED, _row("tune"))
    expect(RECORDED, _row("tune"))
    assert resolved[4:] == ["tune", "tune"]


def test_scoping_a_cell_uses_the_config_resolved_for_it(tmp_path, monkeypatch):
    seen = []
    monkeypatch.setattr(fyexp.spec.settings, "scoped_config",
                        lambda experiment, config, cell: seen.append((type(experiment).__name__, config.values,
                                                                       cell.seed)) or {"v": config.values})
    wanted = sf.spec_expectation(_toy(), None)(_with({"values": [4.0]}), _row("paper", seed=1))
    assert wanted.settings == {"config": {"v": [4.0]}} and seen == [("Toy", [4.0], 1)]


# ---- the cache of expectations ---------------------------------------------------------------------------------
def test_one_expectation_per_spec_object_and_results_folder_kept_with_its_spec(tmp_path):
    spec = _toy()
    first = sf.spec_expectation(spec, tmp_path)
    assert sf.spec_expectation(spec, tmp_path) is first
    assert sf.spec_expectation(spec, str(tmp_path)) is first                 # the folder as text: the same key
    assert sf.spec_expectation(spec, tmp_path / "other") is not first
    assert sf.spec_expectation(spec, None) is not first
    assert sf.spec_expectation(spec, None) is sf.spec_expectation(spec, None)
    assert sf.spec_expectation(_toy(), tmp_path) is not first                # another spec object
    key = (id(spec), str(tmp_path))
    assert sf._EXPECTATIONS[key] is first
    del spec
    gc.collect()
    assert sf._EXPECTATIONS[key] is first      # the expectation holds its spec: its id is not reused while kept


@pytest.mark.parametrize("runner", ["tests.no_such_runner", "no_such_runner"])
def test_a_runner_that_cannot_be_loaded_gives_no_expectation_and_none_is_kept(tmp_path, runner):
    spec = _toy()
    object.__setattr__(spec, "runner", runner) if hasattr(spec, "__dataclass_fields__") else None
    before = dict(sf._EXPECTATIONS)
    assert sf.spec_expectation(spec, tmp_path) is None
    assert sf._EXPECTATIONS == before


# ---- which axis each entry point judges ------------------------------------------------------------------------
def _captured(monkeypatch, codes=("fresh", "stale"), old=(True, None)):
    calls = []

    def frame_freshness(frame, folder, name, expectation, *, code):
        calls.append({"folder": folder, "name": name, "expectation": expectation, "code": code})
        return pd.Series([Freshness("k", "r", c, o) for c, o in zip(codes, old)], index=frame.index, dtype=object)

    monkeypatch.setattr(sf, "frame_freshness", frame_freshness)
    return calls


FRAME = pd.DataFrame({"profile": ["quick", "quick"], "cell": ["a", "b"]}, index=[5, 7])


def test_row_freshness_judges_settings_through_the_specs_expectation_for_the_folders_parent(tmp_path, monkeypatch):
    calls = _captured(monkeypatch)
    spec = _toy()
    folder = tmp_path / "toy"
    judged = sf.row_freshness(spec, FRAME, folder)
    assert [f.code for f in judged] == ["fresh", "stale"] and list(judged.index) == [5, 7]
    call, = calls
    assert (call["folder"], call["name"], call["code"]) == (folder, "toy", True)
    assert call["expectation"] is sf.spec_expectation(spec, tmp_path)
    sf.row_freshness(spec, FRAME, str(folder), code=False)
    assert calls[1]["code"] is False and calls[1]["expectation"] is sf.spec_expectation(spec, tmp_path)
    sf.row_freshness(spec, FRAME, folder, settings=False)
    sf.row_freshness(spec, FRAME, None)
    assert calls[2]["expectation"] is None and calls[3]["expectation"] is None and calls[3]["folder"] is None


def test_row_freshness_names_a_nameless_spec_none(monkeypatch, tmp_path):
    calls = _captured(monkeypatch)

    class Nameless:
        runner = "gmm_clustering"

    sf.row_freshness(Nameless(), FRAME, None)
    assert calls[0]["name"] is None


def test_the_code_column_is_the_code_axis_judged_without_settings(tmp_path, monkeypatch):
    calls = _captured(monkeypatch, codes=("stale", "behaviour unchanged"))
    states = code_column(sf.row_freshness(_toy(), FRAME, tmp_path / "toy", settings=False))
    assert states.tolist() == ["stale", "behaviour unchanged"] and list(states.index) == [5, 7]
    assert calls[0]["expectation"] is None and calls[0]["code"] is True and calls[0]["folder"] == tmp_path / "toy"


def _settings_changed(spec, frame, folder):
    return settings_column(sf.row_freshness(spec, frame, folder, code=False))


def test_the_settings_column_is_the_settings_axis_judged_without_code(tmp_path, monkeypatch):
    calls = _captured(monkeypatch, old=(True, False))
    spec = _toy()
    changed = _settings_changed(spec, FRAME, tmp_path / "toy")
    assert changed.tolist() == [True, False] and list(changed.index) == [5, 7]
    assert calls[0]["code"] is False and calls[0]["expectation"] is sf.spec_expectation(spec, tmp_path)


def test_settings_cannot_be_told_without_a_folder_and_are_empty_for_no_rows(tmp_path):
    unknown = _settings_changed(_toy(), FRAME, None)
    assert unknown.tolist() == [None, None] and list(unknown.index) == [5, 7] and unknown.dtype == object
    empty = _settings_changed(_toy(), FRAME.iloc[:0], tmp_path / "toy")
    assert empty.empty and empty.dtype == object


def test_the_rules_agree_with_the_real_frame_freshness_on_a_written_cell(tmp_path):
    """End to end on the toy's files: a cell written at ``quick`` now is at current settings; after the spec's
    quick profile changes its mode the same row is at old settings."""
    from fyexp.experiments import get_settings_scope
    from fyexp.store.provenance.source import git_commit
    from fyexp.store.provenance.record import write_record
    from fyexp.store.results import Cell, ResultStore
    from fyexp.spec.settings import cell_settings, settings_hash
    from fyexp.spec.specs import resolve

    spec = _toy()
    scope = get_settings_scope(spec.runner)
    store = ResultStore(tmp_path, "toy")
    cell = Cell("toy", 0, {"x": 0.5})
    resolved = resolve(spec, "quick", scope.Config)
    settings = cell_settings(resolved, cell, "cpu", None, scope)
    store.write_cell("quick", cell, [{"metric": "a", "value": 1.0}],
                     {"git_commit": git_commit(), "settings_hash": settings_hash(settings)})
    write_record(store.cell_path("quick", cell), settings, None)
    assert _settings_changed(spec, store.load(), store.folder).tolist() == [False]
    folder = tmp_path / "specs"
    folder.mkdir()
    text = (TOY_SPECS / "toy.yaml").read_text().replace("    values: [0.5]", "    values: [0.5]\n    mode: cube")
    (folder / "toy.yaml").write_text(text)
    assert _settings_changed(load_spec("toy", folder), store.load(), store.folder).tolist() == [True]
    assert json.loads(store.load()["params"].iloc[0]) == {"x": 0.5}


# ---- the edges the first mutation run found (docs/contributing/mutation.md) -------------------------------------------------
def test_a_folder_named_none_is_not_the_absent_folder():
    spec = _toy()
    assert sf.spec_expectation(spec, "None") is not sf.spec_expectation(spec, None)


def test_the_same_overrides_in_another_order_are_resolved_and_scoped_once(tmp_path, monkeypatch):
    resolved, scoped = _counted(monkeypatch)
    expect = sf.spec_expectation(_toy(), None)
    one = expect(_with({"mode": "cube", "lr": 0.5}), _row("quick+lr=0.5,mode=cube"))
    other = expect(_with({"lr": 0.5, "mode": "cube"}), _row("quick+lr=0.5,mode=cube"))
    assert one.settings == other.settings and one.settings["config"]["lr"] == 0.5
    assert resolved == ["quick", "quick"] and scoped == ["toy__x=0.5__seed=0"]   # plain and best, once each
    expect(_with({"lr": 0.5, "mode": "cube"}), _row("quick+lr=0.5,mode=cube", params='{"x": 1.0}'))
    assert resolved == ["quick", "quick"] and scoped[1:] == ["toy__x=1__seed=0"]  # another cell: the same config


def test_a_variants_study_is_found_by_its_label_from_the_overrides_as_typed(tmp_path):
    _study(tmp_path, 0.03, profile="tune+n_trials=7")
    wanted = sf.spec_expectation(_toy(), tmp_path)(_with({"n_trials": 7}), _row("tune+n_trials=7"))
    assert wanted.tuned["config"]["lr"] == 0.03 and wanted.tuned["config"]["n_trials"] == 7


def test_a_config_without_a_search_has_no_tuned_settings(tmp_path):
    row = {"profile": "quick", "cell": "standard__seed=0", "method": "standard", "seed": 0, "params": "{}",
           "superseded": False}
    wanted = sf.spec_expectation(load_spec("gmm-clustering"), tmp_path)(RECORDED, row)
    assert wanted.tuned is None and wanted.settings["config"]["n_iter"] == 30


def test_a_recorded_row_whose_cell_cannot_be_read_is_compared_with_the_whole_config(tmp_path):
    wanted = sf.spec_expectation(_toy(), tmp_path)(RECORDED, _row(params="not json"))
    assert wanted.settings["config"]["values"] == [0.5] and wanted.gone is None


def test_a_plus_inside_an_override_leaves_the_base_profile_before_the_first_plus(tmp_path):
    wanted = sf.spec_expectation(_toy(), tmp_path)(_with({"lr": 1000.0}), _row("quick+lr=1e+3"))
    assert wanted.gone is None and wanted.settings["config"]["lr"] == 1000.0
    assert wanted.settings["config"]["values"] == [0.5]


def test_a_record_without_overrides_is_compared_with_its_profile_as_written(tmp_path):
    record = RunRecord(Path("c.csv"), "hash", "abc123", settings={"environment": {}})
    wanted = sf.spec_expectation(_toy(), _study(tmp_path, 0.02))(record, _row("tune"))
    assert wanted.settings["config"]["lr"] == 0.1 and wanted.tuned["config"]["lr"] == 0.02
