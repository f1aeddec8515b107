"""The verdicts kept beside the results (:mod:`fyexp.claims.stored`): every field of a verdict survives the file,
the kept answer is the judged answer byte for byte, the content key moves with any byte (never with a modification
time, so a clone keeps it), a damaged or foreign file is a miss, and ``fyexp claims`` reads them without pandas."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from unittest import mock

import numpy as np
import pytest

from fyexp.store import damaged
from fyexp.claims import stored
from fyexp.claims.command import verdicts_for
from fyexp.claims.model import Claim, Finding, Selector, Spread
from fyexp.claims.render import answer
from fyexp.claims.verdict import REVERSED, SUPPORTED, Verdict
from fyexp.core.errors import FyexpError
from tests.conftest import REPO_RESULTS, ROOT, run_cli


def _selector(metric: str) -> Selector:
    return Selector(experiment="gmm-clustering", metric=metric, method="fy", paper_row="row", setting="s",
                    table="1", profile="paper", params=(("K", 3), ("rho", 1.5), ("on", True)),
                    columns=(("alpha", ("0.5", "1")),))


def _claim(cid: str = "toy") -> Claim:
    values = {"id": cid, "paper": "fyvi", "where": "Table 9", "text": "x beats y", "direction": "greater",
              "sides": {"a": _selector("x"), "b": _selector("y")}, "others": (_selector("o"),),
              "series": (_selector("s1"), _selector("s2")), "paper_numbers": "0.9 | 0.5", "magnitude": 0.4,
              "magnitude_kind": "relative", "better": "less", "trend": "decreasing", "delta": 0.1, "at_least": 0.6,
              "threshold": 2.0, "than": 0.0, "note": "a note", "kind": "check", "quote": "a sentence", "line": 12,
              "group": (_selector("g"),), "margin": 0.05, "nominal": 0.95, "side": "overconfident", "per_run": True,
              "per": ("alpha", "K"), "uncertainty": 0.02, "spread": Spread(of="m", sd="sd", n="n")}
    claim = Claim(**values)
    for f in dataclasses.fields(Claim):   # a field added to Claim must be given a non-default value here
        assert getattr(claim, f.name) != f.default, f.name
    return claim


def _verdicts() -> list[Verdict]:
    """Two verdicts with every field set, one a headline whose readings name itself and the other."""
    head = Verdict(claim=_claim(), profile="paper", verdict=SUPPORTED, ours="0.41 [0.2, 0.6]", n="5 vs 5",
                   notes=["one", "two"], low=0.2, high=float("inf"), estimate=np.float64(0.41),
                   rows_read=np.int64(10), stale=frozenset({("e", "paper", "c", "m")}),
                   dirty=frozenset({("e", "paper", "d", "m")}), n_to_resolve=40, headline=True, reading="text",
                   departures=("finding-a",))
    other = dataclasses.replace(head, claim=_claim("toy-authors"), verdict=REVERSED, headline=False,
                                reading="authors", estimate=float("nan"), by_reading={})
    head.by_reading = {"text": head, "authors": other}
    for f in dataclasses.fields(Verdict):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        assert getattr(head, f.name) != default, f.name
    return [head, other]


def _text(verdicts, findings=()) -> str:
    return json.dumps(stored.as_plain(verdicts, list(findings)), sort_keys=True, default=stored._plain)


def test_every_field_of_a_verdict_survives_the_file():
    verdicts = _verdicts()
    findings = [Finding(id="finding-a", paper="fyvi", text="the code differs", claim="toy", rows=(_selector("x"),),
                        where="App. B")]
    plain = json.loads(json.dumps(stored.as_plain(verdicts, findings), default=stored._plain))
    back, back_findings = stored.from_plain(plain)
    assert _text(back, back_findings) == _text(verdicts, findings)
    assert back_findings == findings and back[0].claim == verdicts[0].claim and back[1].claim.id == "toy-authors"
    assert back[0].by_reading["text"] is back[0] and back[0].by_reading["authors"] is back[1]
    assert back[0].stale == verdicts[0].stale and back[0].departures == ("finding-a",)
    assert type(back[0].rows_read) is int and back[0].estimate == 0.41 and np.isnan(back[1].estimate)


def test_a_verdict_of_another_form_is_refused():
    plain = json.loads(json.dumps(stored.as_plain(_verdicts(), []), default=stored._plain))
    del plain["verdicts"][0]["ours"]
    with pytest.raises(ValueError):
        stored.from_plain(plain)


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    """The committed gmm-calibration and vr-bnn results (the latter at two profiles), copied, with their verdicts
    kept (twice: a second report rewrites them); and each paper's verdicts as ``fyexp claims`` judges them
    (:func:`~fyexp.claims.command.verdicts_for`)."""
    folder = tmp_path_factory.mktemp("kept") / "results"
    for name in ("gmm-calibration", "vr-bnn"):
        shutil.copytree(REPO_RESULTS / name, folder / name)
    with mock.patch.object(damaged, "_WARNED", set()):   # what earlier tests of this process warned of
        for _ in range(2):
            assert stored.keep_verdicts(folder, None) == stored.store_path(folder)
    return folder, {paper: verdicts_for(folder, paper, None, None) for paper in (None, "frac", "vr")}


@pytest.fixture(scope="module")
def kept_folder(judged):
    return judged[0]


@pytest.mark.slow
@pytest.mark.parametrize("paper", [None, "frac", "vr"])
def test_the_kept_answer_is_the_judged_answer(judged, paper):
    folder, by_paper = judged
    claims, verdicts = by_paper[paper]
    assert any(v.verdict not in ("not run", "data missing") for v in verdicts)   # rows were judged
    if paper == "vr":   # a claim judged at two profiles: --all-profiles prints more than the headline
        assert answer(verdicts, claims.findings, False, 80, False, True) != answer(verdicts, claims.findings,
                                                                                    False, 80, False, False)
    for json_out, width, long, every in [(True, 80, False, False), (False, 80, False, False),
                                         (False, 120, True, True), (False, 57, False, True)]:
        kept = stored.kept_answer(paper, None, json_out, folder, None, width, long, every)
        assert kept is not None
        assert kept == answer(verdicts, claims.findings, json_out, width, long, every)


def test_an_unknown_paper_is_the_judgings_one_line(kept_folder):
    with pytest.raises(FyexpError, match="unknown paper 'nope'"):
        stored.kept_answer("nope", None, False, kept_folder, None, 80, False, False)


def test_a_profile_asked_for_is_judged(kept_folder):
    assert stored.kept_answer(None, "paper", False, kept_folder, None, 80, False, False) is None


def test_the_key_follows_the_bytes_not_the_times(kept_folder, tmp_path, monkeypatch):
    copy = tmp_path / "results"
    shutil.copytree(kept_folder, copy)           # a clone: other paths and modification times
    assert stored.read_store(copy, None) is not None
    cell = next((copy / "gmm-calibration" / "cells").rglob("*.csv"))
    os.utime(cell, (1, 1))
    assert stored.read_store(copy, None) is not None
    data = cell.read_bytes()
    cell.write_bytes(data[:-2] + bytes([data[-2] ^ 1]) + data[-1:])
    assert stored.read_store(copy, None) is None
    cell.write_bytes(data)
    assert stored.read_store(copy, None) is not None
    (copy / "gmm-calibration" / "new.txt").write_text("x")      # a file more
    assert stored.read_store(copy, None) is None
    (copy / "gmm-calibration" / "new.txt").unlink()
    monkeypatch.setattr("fyexp.run.derivation.environment", lambda: ("another python", "", ""))
    assert stored.read_store(copy, None) is None


@pytest.mark.parametrize("damage", ["truncated", "another format", "not a mapping", "a symbolic link", "a folder"])
def test_a_damaged_kept_file_is_a_miss(kept_folder, tmp_path, damage):
    copy = tmp_path / "results"
    shutil.copytree(kept_folder, copy)
    path = stored.store_path(copy)
    text = path.read_text()
    if damage == "truncated":
        path.write_text(text[: len(text) // 2])
    elif damage == "another format":
        path.write_text(text.replace('"format":1', '"format":2'))
    elif damage == "not a mapping":
        path.write_text("[1, 2]")
    elif damage == "a symbolic link":
        (tmp_path / "elsewhere.json").write_text(text)
        path.unlink()
        path.symlink_to(tmp_path / "elsewhere.json")
    else:
        path.unlink()
        path.mkdir()
    assert stored.read_store(copy, None) is None


@pytest.mark.slow
def test_a_folder_that_warned_keeps_no_verdicts(kept_folder, tmp_path, monkeypatch):
    copy = tmp_path / "results"
    shutil.copytree(kept_folder, copy)
    monkeypatch.setattr("fyexp.store.damaged._WARNED", {("some file", "damaged")})
    assert stored.keep_verdicts(copy, None) is None
    assert not stored.store_path(copy).exists()


def test_claims_from_the_installed_script_reads_them_without_pandas(judged, tmp_path):
    kept_folder, by_paper = judged
    cache = tmp_path / "cache"
    cache.mkdir()
    out = run_cli("claims", "--json", "--results-dir", str(kept_folder),
                  env={"FYEXP_CACHE_DIR": str(cache), "PYTHONPROFILEIMPORTTIME": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.rstrip("\n") == answer(by_paper[None][1], (), True, 80).rstrip("\n")
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if line.startswith("import time")}
    assert "fyexp.claims.stored" in imported
    assert not {"pandas", "scipy", "fyexp.claims.verdicts"} & imported


def test_a_numpy_number_is_written_as_the_number_and_anything_else_refused():
    assert stored._plain(np.float32(0.5)) == 0.5 and type(stored._plain(np.int64(3))) is int
    with pytest.raises(TypeError, match="object is not a JSON value"):
        stored._plain(object())


@pytest.mark.slow
def test_the_specs_are_in_the_key(kept_folder, tmp_path):
    """Verdicts kept with another experiments folder are not this one's, and are that one's."""
    specs = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments", specs)
    spec = next(iter(sorted(specs.glob("*.yaml"))))
    spec.write_text(spec.read_text() + "# one byte more\n")
    copy = tmp_path / "results"
    shutil.copytree(kept_folder, copy)
    with mock.patch.object(damaged, "_WARNED", set()):
        assert stored.keep_verdicts(copy, specs) == stored.store_path(copy)
    assert stored.read_store(copy, specs) is not None and stored.read_store(copy, None) is None
    assert stored.kept_answer(None, None, True, copy, specs, 80, False, False) is not None
    assert stored.kept_answer(None, None, True, copy, None, 80, False, False) is None


def test_a_folder_whose_claims_cannot_be_judged_keeps_none(kept_folder, tmp_path):
    """Specs without the claims' experiments (a folder of one's own): no verdicts, and the old file goes."""
    copy = tmp_path / "results"
    shutil.copytree(kept_folder, copy)
    assert stored.keep_verdicts(copy, ROOT / "tests" / "specs") is None
    assert not stored.store_path(copy).exists()


def test_links_special_files_and_odd_names_are_named_never_followed(tmp_path):
    folder = tmp_path / "results"
    (folder / "x").mkdir(parents=True)
    (folder / "x" / "a.csv").write_text("1")
    base = stored.content_key(folder, None)
    os.symlink("a.csv", folder / "x" / "link")
    linked = stored.content_key(folder, None)
    (folder / "x" / "link").unlink()
    os.symlink("elsewhere", folder / "x" / "link")
    moved = stored.content_key(folder, None)
    (folder / "x" / "link").unlink()
    (folder / "x" / "link").write_text("1")   # a file of the same name and the link target's bytes
    as_file = stored.content_key(folder, None)
    (folder / "x" / "link").unlink()
    os.mkfifo(folder / "x" / "link")          # opened, it would block
    as_fifo = stored.content_key(folder, None)
    assert len({base, linked, moved, as_file, as_fifo}) == 5
    (folder / "x" / "link").unlink()
    odd = os.path.join(os.fsencode(folder / "x"), b"\xff.csv")   # a name that is no UTF-8
    with open(odd, "wb") as handle:
        handle.write(b"1")
    assert stored.content_key(folder, None) not in {base, linked, moved, as_file, as_fifo}
