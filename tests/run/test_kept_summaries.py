"""The summaries `fyexp report` keeps beside the results (fyexp.run.kept_summaries): read back after a clone, never
stale, never a second source of the estimates."""

from __future__ import annotations

import json
import shutil

import pytest

from fyexp.spec.specs import load_spec
from tests.conftest import ROOT, run_in_terminal, strip_ansi

EXPERIMENTS = ROOT / "experiments"
NAME = "vr-renyi-gaussians"   # small: 16 cell files, all at profile paper


@pytest.fixture
def folders(tmp_path, monkeypatch):
    """A specs folder holding one spec, a results folder holding its committed cell files, an empty user cache."""
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("FYEXP_MACHINE_SPEED", "1.5")
    specs, results = tmp_path / "experiments", tmp_path / "results"
    specs.mkdir()
    shutil.copy(EXPERIMENTS / f"{NAME}.yaml", specs)
    shutil.copytree(ROOT / "results" / NAME / "cells", results / NAME / "cells")
    return specs, results


def _clone(results, tmp_path, cache: str):
    """The folder as another checkout holds it (new inodes, times and path) and a user cache that never saw it."""
    import os

    clone = tmp_path / "clone" / "results"
    shutil.copytree(results, clone, copy_function=shutil.copy)   # contents only: new modification times
    os.environ["FYEXP_CACHE_DIR"] = str(tmp_path / cache)
    return clone


def test_a_clone_reads_the_kept_summaries_and_derives_nothing(folders, tmp_path, monkeypatch):
    from fyexp.run import kept_summaries, overview

    specs, results = folders
    spec = load_spec(NAME, specs)
    derived = overview.profile_summaries(spec, results)
    assert derived[0].source == str(results) and derived[0].estimate_s is not None   # its own cells' times
    path = overview.keep_summaries(results, specs)
    assert path == results / "summaries.json"
    row = json.loads(path.read_text())["experiments"][NAME]["summaries"][0]
    assert row["source"] == "@results"                      # a role, not this checkout's path
    clone = _clone(results, tmp_path, "cache-clone")

    derive = overview._profile_summaries

    def derived_again(*args, **kwargs):
        raise AssertionError("derived again although the clone's files are the kept ones")

    monkeypatch.setattr(overview, "_profile_summaries", derived_again)
    kept = overview.profile_summaries(spec, clone,
                                      kept=lambda: kept_summaries.read_kept(clone, specs, overview.ProfileSummary))
    monkeypatch.setattr(overview, "_profile_summaries", derive)
    fresh = overview.profile_summaries(spec, clone)          # the same, derived in the clone (cache now warm)
    assert kept == fresh and kept[0].source == str(clone)
    assert kept[0].estimate_s == pytest.approx(derived[0].estimate_s, rel=1e-12)   # × 1.5 both


def test_a_changed_byte_another_spec_or_format_is_a_miss(folders, tmp_path):
    from fyexp.run import kept_summaries, overview

    specs, results = folders
    overview.keep_summaries(results, specs)
    assert NAME in kept_summaries.read_kept(results, specs, overview.ProfileSummary)
    cell = sorted((results / NAME / "cells" / "paper").glob("*.csv"))[0]
    text = cell.read_text()
    cell.write_text(text.replace("ok", "oK", 1))
    assert kept_summaries.read_kept(results, specs, overview.ProfileSummary) == {}   # the key covers every byte
    cell.write_text(text)
    assert NAME in kept_summaries.read_kept(results, specs, overview.ProfileSummary)   # the same bytes: a hit

    store = results / "summaries.json"
    data = json.loads(store.read_text())
    for damage in ({"format": 2}, {"key": "0" * 64}):
        store.write_text(json.dumps({**data, **damage}))
        assert kept_summaries.read_kept(results, specs, overview.ProfileSummary) == {}
    row = data["experiments"][NAME]["summaries"][0]
    for bad in ({**row, "source": "@elsewhere"}, {**row, "source": "/abs/path"}, {k: row[k] for k in list(row)[1:]}):
        entry = {**data["experiments"][NAME], "summaries": [bad]}
        store.write_text(json.dumps({**data, "experiments": {NAME: entry}}))
        assert kept_summaries.read_kept(results, specs, overview.ProfileSummary) == {}
    store.write_text(json.dumps(data))
    assert NAME in kept_summaries.read_kept(results, specs, overview.ProfileSummary)

    path = specs / f"{NAME}.yaml"                               # another spec: another code digest, a miss
    path.write_text(path.read_text().replace("  paper:\n    seeds: [0]\n", "  paper:\n    seeds: [0, 1]\n"))
    assert kept_summaries.read_kept(results, specs, overview.ProfileSummary) == {}


def test_a_summary_read_from_another_folder_is_not_kept(folders):
    from dataclasses import replace

    from fyexp.run import kept_summaries, overview
    from fyexp.run.estimate import PROFILE_TIMES, committed_results

    specs, results = folders
    [summary] = [s for s in overview.profile_summaries(load_spec(NAME, specs), results) if s.name == "paper"]
    roles = kept_summaries._roles(results)
    assert kept_summaries._plain_summary(summary, roles)["source"] == "@results"
    for folder, role in ((committed_results(), "@committed"), (PROFILE_TIMES, "@profile-times"), ("", "")):
        row = kept_summaries._plain_summary(replace(summary, scaled_source=str(folder)), roles)
        assert row["scaled_source"] == role
        assert kept_summaries._summary_from(row, roles, overview.ProfileSummary).scaled_source == str(folder)
    assert kept_summaries._plain_summary(replace(summary, source="/another/results"), roles) is None


def test_kept_answers_never_make_each_other_stale(folders):
    """Writing the kept summaries changes neither the verdicts' content key nor the user cache's key, and the other
    way round; any other file changes both."""
    from fyexp.claims import stored
    from fyexp.run.derivation import tree_signature
    from fyexp.run.kept_summaries import summaries_key

    specs, results = folders
    before = stored.content_key(results, specs), summaries_key(results, specs), tree_signature(results)
    (results / "summaries.json").write_text("{}\n")
    (results / "claims").mkdir()
    (results / "claims" / "verdicts.json").write_text("{}\n")
    assert (stored.content_key(results, specs), summaries_key(results, specs), tree_signature(results)) == before
    (results / "claims" / "fyvi.md").write_text("a table\n")
    after = stored.content_key(results, specs), summaries_key(results, specs), tree_signature(results)
    assert all(a != b for a, b in zip(after, before))


def test_a_dangling_link_is_signed_as_itself_and_a_vanished_file_is_left_out(folders, monkeypatch):
    """A link in the results is never followed: a dangling one is signed (stop 58's CI failure: ``os.stat`` raised
    and ``report`` exited 1), and pointing it elsewhere is a change; a file the walk lists but a writer has removed
    since is left out."""
    import os

    from fyexp.run.derivation import tree_signature
    from fyexp.run.kept_summaries import summaries_key

    specs, results = folders
    link = results / "dangling.npz"
    link.symlink_to(results / "gone.npz")
    signed = tree_signature(results)
    assert "dangling.npz" in [name for name, *_ in signed]
    assert summaries_key(results, specs) is not None
    link.unlink()
    link.symlink_to(results / "gone-too.npz")
    assert tree_signature(results) != signed
    walk = os.walk
    monkeypatch.setattr(os, "walk", lambda folder: ((root, dirs, [*files, "vanished.csv"])
                                                   for root, dirs, files in walk(folder)))
    assert "vanished.csv" not in [name for name, *_ in tree_signature(results)]


def test_installed_report_keeps_them_and_a_clone_lists_the_same_text(folders, tmp_path):
    specs, results = folders
    env = {"FYEXP_EXPERIMENTS_DIR": str(specs), "FYEXP_MACHINE_SPEED": "1.5",
           "FYEXP_CACHE_DIR": str(tmp_path / "cache-report")}
    status, out = run_in_terminal("report", "--results-dir", str(results), env=env, columns=80)
    assert status == 0, out
    assert "summaries →" in strip_ansi(out) and (results / "summaries.json").is_file()
    clone = _clone(results, tmp_path, "unused")
    shutil.copytree(specs, clone.parent / "experiments")   # the specs at another path too, as in another checkout
    env["FYEXP_EXPERIMENTS_DIR"] = str(clone.parent / "experiments")
    listed = {}
    for case, cache in (("kept", "cache-a"), ("derived", "cache-b")):
        if case == "derived":
            (clone / "summaries.json").unlink()
        status, out = run_in_terminal("list", "--results-dir", str(clone), columns=80,
                                      env={**env, "FYEXP_CACHE_DIR": str(tmp_path / cache)})
        assert status == 0, out
        listed[case] = strip_ansi(out)
    assert "paper (3 cells" in listed["kept"].replace("\u00a0", " ")
    assert listed["kept"] == listed["derived"]

    # the clone's list reads the kept file: an estimate edited in it (its key covers the other files) is printed
    # (× 1: the folder's own times)
    (clone / "summaries.json").write_bytes((results / "summaries.json").read_bytes())
    data = json.loads((clone / "summaries.json").read_text())
    [paper] = [s for s in data["experiments"][NAME]["summaries"] if s["name"] == "paper"]
    paper["estimate_s"] = 7200.0
    (clone / "summaries.json").write_text(json.dumps(data))
    status, out = run_in_terminal("list", "--results-dir", str(clone), columns=80,
                                  env={**env, "FYEXP_CACHE_DIR": str(tmp_path / "cache-c")})
    assert status == 0 and "paper (3 cells, 2.0 h)" in strip_ansi(out).replace("\u00a0", " "), out


@pytest.mark.parametrize("fresh", ["absent", "empty folders"])
def test_a_new_users_results_folder_reads_the_committed_kept_summaries(folders, tmp_path, monkeypatch, fresh):
    """A results folder that holds no file reads the committed ``results/``'s kept summaries (derived from the same
    committed times: the same summaries as derived for it); one that holds a file derives its own."""
    from fyexp.run import estimate, kept_summaries, overview

    specs, committed = folders
    monkeypatch.setattr(estimate, "committed_results", lambda: committed.resolve())
    spec = load_spec(NAME, specs)
    overview.keep_summaries(committed, specs)
    mine = tmp_path / "mine" / "results"
    if fresh == "empty folders":
        (mine / NAME / "cells").mkdir(parents=True)
    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache-derived"))
    derived = overview.profile_summaries(spec, mine)
    assert derived[0].source == str(committed.resolve()) and derived[0].estimate_s is not None

    def derived_again(*args, **kwargs):
        raise AssertionError("derived although the committed kept summaries answer for an empty folder")

    monkeypatch.setenv("FYEXP_CACHE_DIR", str(tmp_path / "cache-kept"))
    monkeypatch.setattr(overview, "_profile_summaries", derived_again)
    kept = overview.profile_summaries(spec, mine,
                                      kept=lambda: kept_summaries.read_kept(mine, specs, overview.ProfileSummary))
    assert kept == derived
    (mine / "notes.txt").parent.mkdir(parents=True, exist_ok=True)
    (mine / "notes.txt").write_text("a file of the user's\n")
    assert kept_summaries.read_kept(mine, specs, overview.ProfileSummary) == {}
