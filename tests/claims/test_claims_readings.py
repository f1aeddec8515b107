"""Readings as data (fyexp/claims/readings.py, fyexp/reference/readings.yaml): a departure of the authors' code
declared once rewrites every side it matches under each reading, each claim gets one headline per reading, the
JSON carries them, the terminal says where they differ with the finding that explains it, and the tallies count
each reading; the project's own file loads and names findings of claims.yaml."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from fyexp.claims.model import Finding, Selector, load_claims
from fyexp.claims.readings import AUTHORS, TEXT, claim_under, load_readings, touching
from fyexp.claims.render import as_json, print_table, short_lines, summary_line, summary_rows
from fyexp.claims.verdicts import NOT_RUN, REVERSED, SUPPORTED, judge_all
from fyexp.core.errors import FyexpError
from tests.claims.test_claims_rules import BASE, JITTER, claim_of

READINGS = """
readings:
  text: as written
  authors: as run
departures:
  - finding: f-variant
    paper: fyvi
    match: {{experiment: gmm-clustering, method: [x, z]}}
    text: {{params: {{variant: plain}}}}
    authors: {{params: {{variant: theirs}}}}
  - finding: f-metric
    paper: fyvi
    match: {{experiment: gmm-clustering, metric: adjusted_mi, method: x}}
    authors: {{metric: "{{metric}}_theirs"}}
{extra}
"""


def readings(tmp_path, extra="", findings=None):
    path = tmp_path / "readings.yaml"
    path.write_text(READINGS.format(extra=extra))
    return load_readings(path, findings)


def rows(values: dict) -> dict:
    """gmm-clustering rows: (method, variant, metric) → values, seeds 0.."""
    out = [{"experiment": "gmm-clustering", "profile": "paper", "method": m, "metric": metric, "value": v,
            "seed": i, "params": json.dumps({"variant": variant}), "status": "ok", "git_commit": "abc",
            "cell": f"{m}-{variant}-{i}", "freshness": "fresh"}
           for (m, variant, metric), vs in values.items() for i, v in enumerate(vs)]
    return {"gmm-clustering": pd.DataFrame(out)}


def a_claim(tmp_path):
    return claim_of(tmp_path, "    direction: greater\n    a: {method: x}\n    b: {method: y}\n")


def test_a_departure_rewrites_the_sides_it_matches_in_the_files_order(tmp_path):
    r = readings(tmp_path)
    claim = a_claim(tmp_path)
    assert [d.finding for d in touching(claim, r)] == ["f-variant", "f-metric"]
    authors, text = claim_under(claim, AUTHORS, r), claim_under(claim, TEXT, r)
    assert authors.sides["a"] == Selector("gmm-clustering", "adjusted_mi_theirs", method="x",
                                          params=(("variant", "theirs"),))
    assert text.sides["a"] == Selector("gmm-clustering", "adjusted_mi", method="x", params=(("variant", "plain"),))
    assert authors.sides["b"] == claim.sides["b"] == text.sides["b"]      # y is matched by no departure
    untouched = claim_of(tmp_path, "    direction: greater\n    a: {method: y}\n    b: {method: w}\n", name="u")
    assert touching(untouched, r) == () and claim_under(untouched, AUTHORS, r) == untouched


def test_a_reading_without_rows_of_ours_has_no_claim(tmp_path):
    r = readings(tmp_path, "  - finding: f-quoted\n    paper: fyvi\n    match: {experiment: gmm-clustering, "
                           "method: y}\n    authors: none\n")
    claim = a_claim(tmp_path)
    assert claim_under(claim, AUTHORS, r) is None and claim_under(claim, TEXT, r) is not None


def judged(tmp_path, authors_gain: float, text_gain: float):
    r = readings(tmp_path)
    claim = a_claim(tmp_path)
    f = rows({("x", "plain", "adjusted_mi"): BASE + text_gain + JITTER,
              ("x", "theirs", "adjusted_mi_theirs"): BASE + authors_gain + JITTER,
              ("x", "theirs", "adjusted_mi"): BASE - 5 + JITTER,          # the authors' code, our scoring: unread
              ("y", "plain", "adjusted_mi"): BASE})
    return judge_all([claim], f, readings=r)


def test_each_reading_gets_its_headline_and_the_json_carries_both(tmp_path):
    verdicts = judged(tmp_path, authors_gain=1.5, text_gain=-1.5)
    head, = [v for v in verdicts if v.headline]
    assert head.reading == TEXT and head.verdict == REVERSED and head.departures == ("f-variant", "f-metric")
    assert head.by_reading[AUTHORS].verdict == SUPPORTED and head.by_reading[TEXT] is head and head.differs()
    assert head.by_reading[AUTHORS].estimate == pytest.approx(1.5)
    row, = [r for r in json.loads(as_json(verdicts)) if r["headline"]]
    assert row["readings"][TEXT]["verdict"] == REVERSED and row["readings"][AUTHORS]["verdict"] == SUPPORTED
    assert row["readings_differ"] is True and row["departures"] == ["f-variant", "f-metric"]
    same, = [v for v in judged(tmp_path, 1.5, 1.4) if v.headline]
    assert not same.differs() and same.by_reading[AUTHORS].verdict == same.verdict == SUPPORTED


def test_a_reading_with_no_rows_of_ours_reads_not_run_and_differs_from_nothing(tmp_path):
    r = readings(tmp_path, "  - finding: f-quoted\n    paper: fyvi\n    match: {experiment: gmm-clustering, "
                           "method: y}\n    authors: none\n")
    f = rows({("x", "plain", "adjusted_mi"): BASE + 1 + JITTER, ("y", "plain", "adjusted_mi"): BASE})
    head, = [v for v in judge_all([a_claim(tmp_path)], f, readings=r) if v.headline]
    assert head.by_reading[AUTHORS].verdict == NOT_RUN and "no rows of ours under the authors reading" in \
        head.by_reading[AUTHORS].notes[0]
    assert not head.differs()   # one reading has no rows: nothing to differ from


def test_the_terminal_says_where_the_readings_differ_and_prints_the_finding_once(tmp_path):
    verdicts = judged(tmp_path, 1.5, -1.5)
    twin = [v for v in judged(tmp_path, 1.5, -1.5)]
    for v in twin:
        v.claim = type(v.claim)(**{**v.claim.__dict__, "id": "twin"})
    findings = [Finding("f-variant", "fyvi", "their variant drops a term", "toy"),
                Finding("f-metric", "fyvi", "their metric scores otherwise", "toy")]
    text = "\n".join(line for line, _ in short_lines(verdicts + twin, 100, findings=findings))
    assert "authors' code: supported at paper" in text
    assert text.count("finding f-variant: their variant drops a term") == 1
    assert "finding f-variant (above)" in text and text.count("readings differ:") == 2
    assert summary_line(verdicts, "fyvi") == ("fyvi: 1 claim; paper's text: 1 reversed (all at paper); authors' "
                                              "code: 1 supported (all at paper)")
    from fyexp.claims.render import long_lines

    long = [line for line, _ in long_lines(verdicts, 100, findings=findings)]
    assert any(line.startswith("  authors: supported at paper; ") for line in long)
    assert any(line.startswith("  differ: f-variant: their variant drops a term; f-metric:") for line in long)
    table = summary_rows(verdicts)
    assert [line.split(" | ")[1] for line in table[2:]] == ["paper's text", "authors' code"]


@pytest.mark.parametrize("edit, message", [
    (("  authors: as run\n", ""), "readings: expected a mapping of the readings text, authors"),
    (("    paper: fyvi\n    match: {experiment: gmm-clustering, method: [x, z]}",
      "    paper: fyvi\n    match: {method: [x, z]}"), "departure 'f-variant': match: expected a mapping with experiment"),
    (("    authors: {metric:", "    authors: {metrics:"), "departure 'f-metric': authors: expected 'none' or a mapping"),
    (("  - finding: f-metric\n", "  - finding: f-metric\n    reading: x\n"), "key 'reading': expected one of"),
])
def test_a_bad_readings_file_is_refused_in_one_line(tmp_path, edit, message):
    path = tmp_path / "readings.yaml"
    path.write_text(READINGS.format(extra="").replace(*edit))
    with pytest.raises(FyexpError, match=message) as info:
        load_readings(path)
    assert "\n" not in str(info.value)


def test_a_departure_must_name_a_finding_of_the_claims_file(tmp_path):
    with pytest.raises(FyexpError, match=r"departures\[1\].finding: expected the id of a finding"):
        readings(tmp_path, findings={"f-variant"})


def test_the_projects_readings_name_its_findings_and_touch_the_claims_the_issue_names():
    claims = load_claims(check=False)
    r = load_readings(findings={f.id for f in claims.findings})
    by_id = {c.id: c for c in claims.claims}
    touched = {c.id for c in claims.claims if touching(c, r)}
    assert {"fyvi-t2-mnist-latent-only-biweight", "frac-t1-tightest-bound", "fyvi-t3-fy-nvdm",
            "vr-t2-boston-vrmax-above-vi"} <= touched
    authors = claim_under(by_id["fyvi-t2-mnist-latent-only-biweight"], AUTHORS, r)
    assert authors.sides["a"].metric == "l1_reconstruction_error_gaussian_sample"
    assert dict(authors.sides["a"].params)["regularizer"] == "authors"
    assert dict(authors.sides["b"].params)["regularizer"] == "fy"       # the Gaussian encoder: no departure
    assert claim_under(by_id["vr-t2-boston-vrmax-above-vi"], AUTHORS, r) is None   # the VI column was quoted


def test_the_command_prints_the_readings_and_a_console_without_a_terminal_follows_columns(monkeypatch, tmp_path):
    from rich.console import Console

    from fyexp.claims.render import WIDTH, table_width

    monkeypatch.setenv("COLUMNS", "72")
    assert table_width(Console(file=io.StringIO())) == 72
    monkeypatch.setenv("COLUMNS", "wide")
    assert table_width(Console(file=io.StringIO())) == WIDTH
    monkeypatch.delenv("COLUMNS")
    assert table_width(Console(file=io.StringIO())) == WIDTH
    assert table_width(Console(file=io.StringIO(), force_terminal=True, width=120)) == 120
    assert table_width(Console(file=io.StringIO(), force_terminal=True, width=20)) == 40


@pytest.mark.parametrize("columns", [80, 120])
def test_piped_output_is_laid_out_at_columns(monkeypatch, tmp_path, capsys, columns):
    from rich.console import Console

    monkeypatch.setenv("COLUMNS", str(columns))
    long = [Finding("f-variant", "fyvi", "word " * 60, "toy"), Finding("f-metric", "fyvi", "m", "toy")]
    print_table(judged(tmp_path, 1.5, -1.5), Console(file=io.StringIO()), findings=long)
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns and max(len(line) for line in lines) > columns - 12
    assert any(line.startswith("    readings differ: finding f-variant: word word") for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("columns", [80, 120])
def test_the_committed_results_under_both_readings(monkeypatch, capsys, columns):
    """On the committed rows: FYVI's latent-only gain comes back under the authors' code, frac's L_0.1 bound is the
    highest only on bound_authors, every interval holds its own estimate, and the table fits the width asked."""
    from fyexp.cli.app import main
    from tests.conftest import ROOT

    monkeypatch.setenv("COLUMNS", str(columns))
    main(["claims", "--json", "--results-dir", str(ROOT / "results")])
    verdicts = json.loads(capsys.readouterr().out)
    for v in verdicts:
        for entry in [v, *v.get("readings", {}).values()]:
            if entry["low"] is not None and entry["estimate"] is not None:
                assert entry["low"] <= entry["estimate"] <= entry["high"], (v["id"], entry)
    heads = {v["id"]: v for v in verdicts if v["headline"]}
    biweight = heads["fyvi-t2-mnist-latent-only-biweight"]["readings"]
    assert biweight["text"]["verdict"] == REVERSED and biweight["authors"]["estimate"] < -1.0
    bound = heads["frac-t1-tightest-bound"]
    assert bound["readings_differ"] and bound["readings"]["authors"]["verdict"] == SUPPORTED
    assert list(heads["tvem-free-energy-monotone"]["readings"]) == ["both"]     # no departure touches tvem
    main(["claims", "frac", "--results-dir", str(ROOT / "results")])
    lines = capsys.readouterr().out.splitlines()
    assert max(len(line) for line in lines) <= columns
    at = next(i for i, line in enumerate(lines) if line.startswith("frac-t1-tightest-bound"))
    block = " ".join(" ".join(lines[at:at + 10]).split())
    assert "authors' code: supported at paper" in block and "readings differ: finding frac-bound-half:" in block
    summary = " ".join(" ".join(lines[next(i for i, line in enumerate(lines) if line.startswith("frac: ")):]).split())
    assert "paper's text:" in summary and "authors' code:" in summary and "at reduced profile claims" in summary
