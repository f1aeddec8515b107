"""Provenance that can be checked (fyexp/store/provenance/source.py): the module tree of an experiment, its code hash,
stale
rows after an edit of an imported module, and the refusal of a dirty tree for --profile paper."""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from fyexp.store.provenance import source as prov
from fyexp.core.errors import FyexpError


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git checkout holding a miniature fyexp package: an experiment importing a model importing a map."""
    root = tmp_path / "checkout"
    files = {
        "fyexp/__init__.py": "",
        "fyexp/experiments/__init__.py": "",
        "fyexp/experiments/toy.py": "from fyexp.models import net\nfrom fyexp.store.results import store\n"
                                    "def report():\n    from fyexp.report import figures\n",
        "fyexp/models/__init__.py": "",
        "fyexp/models/net.py": "from ..maps.entmax import f\nVALUE = 1\n",
        "fyexp/maps/__init__.py": "",
        "fyexp/maps/entmax.py": "def f(x):\n    return x\n",
        "fyexp/unrelated.py": "X = 0\n",
        "fyexp/store/results.py": "def store():\n    pass\n",
        "fyexp/report/__init__.py": "", "fyexp/report/figures.py": "",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    _git(root, "init", "-q")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "add", ".")
    _git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    return root


def test_module_tree_follows_imports_and_skips_bookkeeping(repo):
    tree = [p.as_posix() for p in prov.module_tree("fyexp.experiments.toy", repo)]
    assert tree == ["fyexp/__init__.py", "fyexp/experiments/__init__.py", "fyexp/experiments/toy.py",
                    "fyexp/maps/__init__.py", "fyexp/maps/entmax.py", "fyexp/models/__init__.py",
                    "fyexp/models/net.py"]


def test_dirty_tree_is_refused_unless_allowed(repo):
    prov.require_clean_tree(False, "fyexp.experiments.toy", root=repo)  # clean: fine
    assert not prov.git_commit(repo).endswith("+dirty")
    (repo / "fyexp/maps/entmax.py").write_text("def f(x):\n    return -x\n")
    with pytest.raises(FyexpError, match="uncommitted changes .*fyexp/maps/entmax.py.*--allow-dirty"):
        prov.require_clean_tree(False, "fyexp.experiments.toy", root=repo)
    prov.require_clean_tree(True, "fyexp.experiments.toy", root=repo)  # --allow-dirty
    prov.git_commit.cache_clear()
    assert prov.git_commit(repo).endswith("+dirty")  # ... and the rows say so
    prov.git_commit.cache_clear()
    prov.require_clean_tree(False, "tests.toy_experiment", root=repo)  # a runner outside the package: not checked


def test_cli_refuses_paper_profile_on_dirty_tree(monkeypatch, tmp_path):
    from fyexp.cli.app import app

    monkeypatch.setattr(prov, "dirty_files", lambda root=prov.SOURCE_ROOT: ["fyexp/em/estep.py"])
    result = CliRunner().invoke(app, ["run", "gmm-clustering", "--profile", "paper", "--results-dir", str(tmp_path)])
    assert isinstance(result.exception, FyexpError) and "--allow-dirty" in str(result.exception)
    assert not (tmp_path / "gmm-clustering").exists()  # refused before anything ran


# ---- the one freshness rule (fyexp/store/provenance/freshness.py), each decision on both sides
# --------------------------
from fyexp.store.provenance import freshness as fr  # noqa: E402
from fyexp.store.provenance.executed import function_hashes  # noqa: E402
from fyexp.store.provenance.record import RunRecord, load_record, settings_hash, write_record  # noqa: E402
from fyexp.store.results import Cell, ResultStore  # noqa: E402

SETTINGS = {"experiment": "toy", "profile": "quick", "overrides": {}, "config": {"train": {"lr": 0.003}, "k": 7},
            "method": "m", "params": {"x": 2}, "seed": 4, "data": None,
            "environment": {"device_kind": "cpu", "torch": "9.9", "numpy": "8.8"}}


def _finished(store: ResultStore, settings: dict | None, commit: str | None = None) -> Path:
    """A finished cell of ``store`` with its rows naming ``settings`` (``None``: rows naming no hash, no record) and
    ``commit`` (default: the source tree's, which the run record states)."""
    cell = Cell("m", 4, {"x": 2})
    commit = prov.git_commit() if commit is None else commit
    columns = {"git_commit": commit, **({"settings_hash": settings_hash(settings)} if settings else {})}
    store.write_cell("quick", cell, [{"metric": "a", "value": 1.25}], columns)
    path = store.cell_path("quick", cell)
    if settings:
        write_record(path, settings, None)
    return path


def _changed(settings: dict, **config) -> dict:
    return {**settings, "config": {**settings["config"], **config}}


def test_same_settings_are_finished_and_changed_ones_are_at_old_settings(tmp_path):
    store = ResultStore(tmp_path, "toy")
    _finished(store, SETTINGS)
    cell = Cell("m", 4, {"x": 2})
    same = store.freshness("quick", cell, fr.Expected(settings=SETTINGS))
    assert same.kind == fr.CURRENT and same.old_settings is False and store.is_finished("quick", cell,
                                                                                         fr.Expected(settings=SETTINGS))
    moved = store.freshness("quick", cell, fr.Expected(settings=_changed(SETTINGS, train={"lr": 0.004})))
    assert moved.kind == fr.OLD_SETTINGS and moved.old_settings is True and not moved.finished
    assert moved.reason == "settings changed: config.train.lr"
    # the report states only the config: another machine's environment is not "old settings" there; run states it
    other_machine = {**SETTINGS, "environment": {**SETTINGS["environment"], "torch": "10.0"}}
    assert store.freshness("quick", cell, fr.Expected(settings={"config": other_machine["config"]})).finished
    assert store.freshness("quick", cell, fr.Expected(settings=other_machine)).kind == fr.OLD_SETTINGS
    no_env = {k: v for k, v in other_machine.items() if k != "environment"}  # the device queue's expectation
    assert store.is_finished("quick", cell, fr.Expected(settings=no_env))
    assert store.freshness("quick", Cell("m", 5, {"x": 2}), fr.Expected(settings=SETTINGS)) is None  # never ran


def test_a_profile_that_no_longer_resolves_puts_rows_at_old_settings(tmp_path):
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    record = load_record(path, settings_hash(SETTINGS))
    assert fr.judge(record, fr.Expected(settings={"config": SETTINGS["config"]})).old_settings is False
    assert fr.judge(record, fr.Expected(gone="its profile quick is gone")).kind == fr.OLD_SETTINGS
    assert fr.judge(record, fr.Expected()).old_settings is None  # cannot be told: kept (not old settings)
    assert fr.judge(record, fr.Expected()).finished


def test_rows_without_a_settings_hash_or_a_run_record_are_unknown_provenance_and_rerun(tmp_path, capsys):
    """One record form: a cell whose rows name no settings hash (the form before settings were recorded), or whose
    record is missing, is of unknown provenance whatever is expected of it: never current, and ``run`` redoes it."""
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, None, commit="0123abcd4567")
    record = load_record(path, None, "0123abcd4567")
    assert record.problem == f"the rows of {path.name} name no settings hash"
    found = fr.judge(record, fr.Expected(settings=SETTINGS))
    assert found.kind == fr.UNKNOWN_PROVENANCE and not found.finished
    assert not store.is_finished("quick", Cell("m", 4, {"x": 2}), fr.Expected(settings=SETTINGS))
    path = _finished(store, SETTINGS)
    path.with_suffix(".record.json").unlink()
    record = load_record(path, settings_hash(SETTINGS), prov.git_commit())
    assert record.problem == f"the rows of {path.name} name settings {settings_hash(SETTINGS)}"
    assert "missing run record" in capsys.readouterr().err
    # a superseded file's record is not read: no record there is no problem
    assert load_record(path, settings_hash(SETTINGS), settings=False).problem is None


def test_a_damaged_record_is_unknown_provenance_before_anything_else(tmp_path, capsys):
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    cell = Cell("m", 4, {"x": 2})
    changed = fr.Expected(settings=_changed(SETTINGS, k=8))
    assert store.freshness("quick", cell, changed).kind == fr.OLD_SETTINGS
    record = json.loads(path.with_suffix(".record.json").read_text())
    path.with_suffix(".record.json").write_text(json.dumps({**record, "settings": _changed(SETTINGS, k=8)}))
    found = store.freshness("quick", cell, changed)  # a record of other settings than the rows'
    assert found.kind == fr.UNKNOWN_PROVENANCE and "the cell's rows name" in found.reason and not found.finished
    assert not store.is_finished("quick", cell, fr.Expected(settings=SETTINGS))
    assert store.is_finished("quick", cell)  # the file itself is complete: only its record is refused
    frame = store.load().assign(freshness=fr.code_column(fr.frame_freshness(store.load(), store.folder)))
    assert fr.evidence(frame).empty
    assert "damaged run record" in capsys.readouterr().err


MODULE_V1 = "SCALE = 2\n\ndef f(x):\n    return SCALE * x\n\ndef g(x):\n    return x + 1\n"


def _tree(root: Path, text: str) -> Path:
    (root / "fyexp").mkdir(parents=True, exist_ok=True)
    (root / "fyexp" / "mod.py").write_text(text)
    return root


def test_rows_are_stale_exactly_when_a_function_their_cell_executed_changed(tmp_path):
    head = _tree(tmp_path / "head", MODULE_V1)
    record = RunRecord(tmp_path / "c.csv", "h", "unknown", None, function_hashes({"fyexp/mod.py:f"}, head))
    assert fr.code_state(record, None, head=head)[0] == fr.FRESH
    assert fr.judge(record, None, fr.code_state(record, None, head=head)).kind == fr.CURRENT
    _tree(head.parent / "head", MODULE_V1.replace("x + 1", "x + 2"))  # g: never executed by the cell
    assert fr.code_state(record, None, head=head)[0] == fr.FRESH
    _tree(head.parent / "head", MODULE_V1.replace("SCALE * x", "SCALE * x + 1"))  # f: executed
    state = fr.code_state(record, None, head=head)
    assert state == (fr.STALE, "1 executed function(s) differ at HEAD (fyexp/mod.py:f)")
    assert fr.judge(record, None, state).kind == fr.STALE


def test_without_a_code_record_the_code_cannot_be_told():
    """One code-staleness rule, the executed functions: a cell that recorded none (``FYEXP_RECORD_CODE=0``) is
    *unknown* on the code axis, whatever its commit (the import-tree rule that judged such rows is gone)."""
    for commit in ("0123abcd4567", "unknown"):
        record = RunRecord(Path("c.csv"), None, commit)
        assert fr.code_state(record, "toy") == (fr.UNKNOWN, "its cell recorded no executed code")
        assert fr.judge(record, None, fr.code_state(record, "toy")).kind == fr.UNKNOWN


@pytest.mark.slow
def test_a_stale_row_whose_fingerprint_held_at_its_commit_is_behaviour_unchanged(repo, monkeypatch):
    monkeypatch.setattr(prov, "fingerprint_difference", functools.partial(prov.fingerprint_difference, root=repo))
    fingerprints = repo / "fyexp" / "reference" / "fingerprints.json"
    fingerprints.parent.mkdir(parents=True)

    def commit(text: str, entmax: str) -> str:
        fingerprints.write_text(text)
        (repo / "fyexp/maps/entmax.py").write_text(entmax)
        _git(repo, "add", "-A")
        _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "step")
        prov.head_tree.cache_clear()  # HEAD moved: unpacked again
        return _git(repo, "rev-parse", "--short=12", "HEAD")

    row = commit('{"toy": {"m/a": 1.5}}', "def f(x):\n    return x\n")
    commit('{"toy": {"m/a": 1.5}}', "def f(x):\n    return x * 1\n")  # code changed, fingerprint held
    ran = {"fyexp/maps/entmax.py:f": "0" * 12}   # f as it was at the row's commit (differs at HEAD)
    record = RunRecord(repo / "c.csv", None, row, code=ran, fingerprint={"m/a": 1.5})  # its stored fingerprint
    state = fr.code_state(record, "toy", head=repo)
    assert state[0] == fr.BEHAVIOUR_UNCHANGED and fr.judge(record, None, state).kind == fr.BEHAVIOUR_UNCHANGED
    commit('{"toy": {"m/a": 1.6}}', "def f(x):\n    return x * 2\n")  # and now the fingerprint moved
    assert fr.code_state(record, "toy", head=repo)[0] == fr.STALE
    dirty = RunRecord(repo / "c.csv", None, row + "+dirty", code=ran, fingerprint={"m/a": 1.6})  # never counts
    assert fr.code_state(dirty, "toy", head=repo)[0] == fr.STALE


def test_old_settings_come_before_stale_code_and_the_report_keeps_both_axes(tmp_path):
    head = _tree(tmp_path / "head", MODULE_V1)
    record = RunRecord(tmp_path / "c.csv", settings_hash(SETTINGS), "unknown", SETTINGS,
                       function_hashes({"fyexp/mod.py:f"}, head))
    _tree(head.parent / "head", MODULE_V1.replace("SCALE * x", "-x"))
    found = fr.judge(record, fr.Expected(settings=_changed(SETTINGS, k=1)), fr.code_state(record, None,
                                                                                         head=head))
    assert (found.kind, found.code, found.old_settings) == (fr.OLD_SETTINGS, fr.STALE, True)
    # why the code axis is stale survives the settings verdict: the report judges both axes in one pass and lists it
    because = "no fingerprint of toy was kept at abc1234"
    both = fr.judge(record, fr.Expected(settings=_changed(SETTINGS, k=1)), (fr.STALE, "code changed", because))
    assert (both.kind, both.stale_because) == (fr.OLD_SETTINGS, because)
    assert fr.judge(record, fr.Expected(settings=SETTINGS), (fr.STALE, "code changed", because)).stale_because == because


# ---- the run record: one file, one form ----------------------------------------------------------------------
def test_a_run_record_is_one_file_read_back_whole(tmp_path, capsys):
    code = function_hashes({"fyexp/spec/specs.py:deep_merge"})
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    write_record(path, SETTINGS, code)
    assert sorted(p.name for p in path.parent.iterdir()) == ["m__x=2__seed=4.csv", "m__x=2__seed=4.record.json"]
    new = load_record(path, settings_hash(SETTINGS), prov.git_commit())
    assert (new.settings, new.code, new.problem) == (SETTINGS, code, None)
    assert new.fingerprint is None  # "toy" has no fingerprint in the source tree
    assert capsys.readouterr().err == ""  # a sound record: not a word


def test_the_two_file_form_before_the_one_file_record_is_unknown_provenance(tmp_path, capsys):
    """``<cell>.settings.json`` + ``<cell>.code.json`` (the form the committed results were upgraded from, by
    ``scripts/migrate_records.py``) are read by nobody: the cell has no run record, and ``run`` redoes it."""
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    path.with_suffix(".record.json").unlink()
    path.with_suffix(".settings.json").write_text(json.dumps(SETTINGS))
    path.with_suffix(".code.json").write_text(json.dumps(function_hashes({"fyexp/spec/specs.py:deep_merge"})))
    record = load_record(path, settings_hash(SETTINGS), prov.git_commit())
    assert record.problem is not None and record.settings is None and record.code is None
    assert fr.judge(record, fr.Expected(settings=SETTINGS)).kind == fr.UNKNOWN_PROVENANCE
    assert "missing run record" in capsys.readouterr().err


def _record(**change) -> dict:
    """A sound one-file record, changed by ``change``; its commit ``COMMIT`` stands for the source tree's, filled in
    when the test runs (the commit moves under a long test session)."""
    return {"settings": SETTINGS, "code": None, "commit": "COMMIT", "fingerprint": None, **change}


RECORD_DAMAGE = {  # class → (the record's text, a phrase of the warning)
    "garbage": ("{garbage", "not JSON"),
    "a JSON list": ('["fyexp/train/loop.py:fit"]', "a JSON list"),
    "a key missing": (json.dumps({k: v for k, v in _record().items() if k != "commit"}), "missing key(s) commit"),
    "a key too many": (json.dumps(_record(extra=1)), "unexpected key(s) extra"),
    "settings not an object": (json.dumps(_record(settings=[1])), "'settings' is a JSON list"),
    "settings of other settings": (json.dumps(_record(settings=_changed(SETTINGS, k=8))), "its settings hash"),
    "code naming /etc/passwd": (json.dumps(_record(code={"/etc/passwd:root": "0123456789ab"})),
                                "does not name a function"),
    "code not a hash": (json.dumps(_record(code={"fyexp/spec/specs.py:deep_merge": "zz"})), "is not a function hash"),
    "another commit": (json.dumps(_record(commit="0123abcd4567")), "made at commit '0123abcd4567'"),
    "fingerprint not numbers": (json.dumps(_record(fingerprint={"m/a": "1.5"})), "is not a number"),
}


@pytest.mark.parametrize("damage", list(RECORD_DAMAGE), ids=list(RECORD_DAMAGE))
def test_each_damaged_run_record_is_one_warning_line_and_unknown_provenance(tmp_path, capsys, damage):
    text, phrase = RECORD_DAMAGE[damage]
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    record_file = path.with_suffix(".record.json")
    record_file.write_text(text.replace('"COMMIT"', json.dumps(prov.git_commit())))
    found = store.freshness("quick", Cell("m", 4, {"x": 2}), fr.Expected(settings=SETTINGS))
    assert found.kind == fr.UNKNOWN_PROVENANCE and not found.finished and phrase in found.reason
    frame = store.load()
    judged = fr.frame_freshness(frame, store.folder, code=False)
    assert [f.kind for f in judged] == [fr.UNKNOWN_PROVENANCE]
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and phrase in lines[0]
    assert lines[0].startswith(f"warning: damaged run record {record_file} (")


def test_a_sound_record_beside_the_damaged_ones_says_nothing_and_a_missing_one_is_one_line(tmp_path, capsys):
    store = ResultStore(tmp_path, "toy")
    path = _finished(store, SETTINGS)
    path.with_suffix(".record.json").write_text(json.dumps(_record(commit=prov.git_commit())))
    assert store.freshness("quick", Cell("m", 4, {"x": 2}), fr.Expected(settings=SETTINGS)).kind == fr.CURRENT
    assert capsys.readouterr().err == ""
    path.with_suffix(".record.json").unlink()
    found = store.freshness("quick", Cell("m", 4, {"x": 2}), fr.Expected(settings=SETTINGS))
    assert found.kind == fr.UNKNOWN_PROVENANCE
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: missing run record {path.with_suffix('.record.json')}")


def test_the_stored_fingerprint_alone_decides_behaviour_unchanged(repo, monkeypatch):
    monkeypatch.setattr(prov, "fingerprint_difference", functools.partial(prov.fingerprint_difference, root=repo))
    row = _git(repo, "rev-parse", "--short=12", "HEAD")  # a commit without any fingerprints file
    (repo / "fyexp" / "reference").mkdir()
    (repo / "fyexp" / "reference" / "fingerprints.json").write_text('{"toy": {"m/a": 1.5}}')
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "fingerprints")
    prov.head_tree.cache_clear()
    ran = {"fyexp/maps/entmax.py:f": "0" * 12}   # a function that differs at HEAD: stale by code
    none = RunRecord(repo / "c.csv", None, row, code=ran)  # no fingerprint kept when it was made: stale
    assert fr.code_state(none, "toy", head=repo)[0] == fr.STALE
    held = RunRecord(repo / "c.csv", None, row, code=ran, fingerprint={"m/a": 1.5})
    assert fr.code_state(held, "toy", head=repo)[0] == fr.BEHAVIOUR_UNCHANGED
    moved = RunRecord(repo / "c.csv", None, row, code=ran, fingerprint={"m/a": 1.6})
    assert fr.code_state(moved, "toy", head=repo)[0] == fr.STALE
    dirty = RunRecord(repo / "c.csv", None, row + "+dirty", code=ran, fingerprint={"m/a": 1.5})
    assert fr.code_state(dirty, "toy", head=repo)[0] == fr.STALE
    other = RunRecord(repo / "c.csv", None, row, code=ran, fingerprint={"m/a": 1.5})
    assert fr.code_state(other, "other-experiment", head=repo)[0] == fr.STALE  # HEAD has none of its own


def test_the_report_and_the_claims_compare_each_row_settings_once(tmp_path, monkeypatch):
    """`report` counts old settings (profile_runs) and `claims` keeps the current rows (current_rows): with one
    spec object, each cell's settings now are scoped once, and the answers are the same."""
    import fyexp.spec.settings
    from fyexp.experiments import get_settings_scope
    from fyexp.run.spec_freshness import row_freshness, spec_expectation
    from fyexp.store.provenance.freshness import settings_column
    from fyexp.spec.specs import load_spec, resolve
    from tests.conftest import TOY_SPECS

    spec = load_spec("toy", TOY_SPECS)
    scope = get_settings_scope(spec.runner)
    resolved = resolve(spec, "quick", scope.Config)
    store = ResultStore(tmp_path, "toy")
    for seed in (0, 1):
        cell = Cell("toy", seed, {"x": 1})
        settings = fyexp.spec.settings.cell_settings(resolved, cell, "cpu", None, scope)
        if seed == 0:
            settings = {**settings, "config": {**settings["config"], "no_such_key": 1}}  # at other settings
        store.write_cell("quick", cell, [{"metric": "a", "value": 1.0}, {"metric": "b", "value": 2.0}],
                         {"git_commit": prov.git_commit(), "settings_hash": settings_hash(settings)})
        write_record(store.cell_path("quick", cell), settings, None)
    asked = []
    real = fyexp.spec.settings.scoped_config
    monkeypatch.setattr(fyexp.spec.settings, "scoped_config",
                        lambda experiment, config, cell: asked.append(cell.key) or real(experiment, config, cell))
    frame = store.load()

    def settings_changed(spec, frame, folder):
        return settings_column(row_freshness(spec, frame, folder, code=False))

    first, second = settings_changed(spec, frame, store.folder), settings_changed(spec, frame, store.folder)
    assert first.tolist() == second.tolist() == [True, True, False, False]
    assert sorted(asked) == ["toy__x=1__seed=0", "toy__x=1__seed=1"]  # once per cell, not per row or call
    assert spec_expectation(spec) is spec_expectation(spec)
    other = load_spec("toy", TOY_SPECS)  # another spec object (the spec read again) asks again
    settings_changed(other, frame, store.folder)
    assert len(asked) == 4


def test_a_cell_run_with_best_is_current_and_follows_its_study(tmp_path):
    """A tuned profile's cell run with ``--best`` records the study's parameters: current when they are the study's
    best now, at old settings once the study's best moves; a cell at the spec's own values stays current."""
    store = ResultStore(tmp_path, "toy")
    tuned = _changed(SETTINGS, train={"lr": 0.004})
    _finished(store, tuned)
    cell = Cell("m", 4, {"x": 2})
    plain = {"config": SETTINGS["config"]}
    same = store.freshness("quick", cell, fr.Expected(settings=plain, tuned={"config": tuned["config"]}))
    assert same.kind == fr.CURRENT and same.old_settings is False and "run --best" in same.reason
    moved = store.freshness("quick", cell, fr.Expected(settings=plain, tuned={"config": {**tuned["config"], "k": 8}}))
    assert moved.kind == fr.OLD_SETTINGS
    assert moved.reason == "settings changed: config.train.lr (and from `run --best`'s: config.k)"
    assert store.freshness("quick", cell, fr.Expected(settings=plain)).kind == fr.OLD_SETTINGS  # no study
    assert store.freshness("quick", cell, fr.Expected(settings={"config": tuned["config"]},
                                                     tuned={"config": {**tuned["config"], "k": 8}})).finished


def test_report_rows_of_a_best_run_follow_the_profiles_study(tmp_path):
    """Through the spec (the report's and the claims' rule): nvdm ``quick`` cells written at the study's best
    parameters are at current settings while ``best_params.yaml`` names them, at old settings once it names others;
    a cell at the spec's own parameters stays current either way."""
    import yaml

    from fyexp.experiments import get_settings_scope
    from fyexp.spec.settings import cell_settings
    from fyexp.run.spec_freshness import row_freshness
    from fyexp.spec.specs import load_spec, resolve
    from fyexp.spec.tuning import with_best

    spec = load_spec("nvdm")
    scope = get_settings_scope(spec.runner)
    best = {"learning_rate": 0.0021, "batch_size": 512, "epochs": 3, "alternating_epochs": 1, "n_topics": 20}
    study = tmp_path / "nvdm" / "best_params.yaml"
    study.parent.mkdir(parents=True)
    study.write_text(yaml.safe_dump({"study": "nvdm-quick", "profile": "quick", "params": best}))
    store = ResultStore(tmp_path, "nvdm")
    plain = resolve(spec, "quick", scope.Config)
    tuned = with_best(plain, tmp_path)  # the config class's aliases: best_params.yaml's flat names
    for resolved in (plain, tuned):
        cell = Cell("NVDM", 0, {k: v for k, v in best.items()} if resolved is tuned else {"tag": "plain"})
        store.write_cell("quick", cell, [{"metric": "a", "value": 1.0}],
                         {"git_commit": prov.git_commit(),
                          "settings_hash": settings_hash(cell_settings(resolved, cell, "cpu", None, scope))})
        write_record(store.cell_path("quick", cell), cell_settings(resolved, cell, "cpu", None, scope), None)

    def old_settings() -> dict:
        frame = store.load()
        judged = row_freshness(load_spec("nvdm"), frame, tmp_path / "nvdm", code=False)
        return {json.loads(p).get("tag", "best"): f.old_settings for p, f in zip(frame["params"], judged)}

    assert old_settings() == {"best": False, "plain": False}
    study.write_text(yaml.safe_dump({"study": "nvdm-quick", "profile": "quick", "params": {**best, "n_topics": 50}}))
    assert old_settings() == {"best": True, "plain": False}
