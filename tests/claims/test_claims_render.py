"""The claims' files and summaries (Markdown, LaTeX, the index's tally, JSON) and ``fyexp claims``'s command, in
process, on synthetic rows: one headline per claim, checks apart, tallies of claims, errors in one line."""

from __future__ import annotations

import io
import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from rich.console import Console

from fyexp.claims.command import claims_command, known_profiles, verdicts_for
from fyexp.claims.render import (CHECKS_TITLE, as_json, latex, markdown, print_table, summary_markdown,
                                 write_paper_tables)
from fyexp.claims.verdicts import judge_all
from fyexp.core.errors import FyexpError
from tests.claims.test_claims_rules import BASE, JITTER, PAIR, claim_of, frames


def _mixed(tmp_path):
    """A claim judged at paper (supported) and cpu (reversed), and a check of ours."""
    claim = claim_of(tmp_path, PAIR.format(d="greater") + '    paper_numbers: "0.9 | 0.5"\n')
    check = claim_of(tmp_path, PAIR.format(d="greater") + "    kind: check\n    note: ours - a margin of ours\n",
                     name="ours")
    data = {"gmm-clustering": pd.concat([frames({"x": BASE + 1 + JITTER, "y": BASE}, "paper")["gmm-clustering"],
                                         frames({"x": BASE - 1 + JITTER, "y": BASE}, "cpu")["gmm-clustering"]],
                                        ignore_index=True)}
    return judge_all([claim, check], data)


def test_markdown_puts_headlines_first_checks_apart_and_other_profiles_last(tmp_path):
    text = markdown("fyvi", _mixed(tmp_path))
    head, rest = text.split(f"## {CHECKS_TITLE}")
    checks, others = rest.split("## Other profiles")
    assert "**fyvi: 1 claim (1 supported; all at paper); 1 check of ours.**" in head
    assert "| toy | toy |" in head and "“a toy sentence” (fyvi Table 9, line 12)" in head and "0.9 \\| 0.5" in head
    assert "| ours |" in checks and "ours - a margin of ours (Table 9)" in checks and "| toy | toy |" not in checks
    assert "reversed (reduced profile cpu)" in others and "supported |" not in others


def test_latex_has_the_claims_and_then_the_checks(tmp_path):
    text = latex("fyvi", _mixed(tmp_path))
    assert text.count(r"\begin{tabular}") == 2 and "% " + CHECKS_TITLE in text
    claims, checks = text.split("% " + CHECKS_TITLE)
    assert "toy &" in claims and "ours &" in checks and "reversed" not in text  # headlines only
    assert r"0.9 | 0.5" in claims and r"\&" not in text.replace(" & ", "")


def test_the_index_tally_counts_claims_and_checks_apart(tmp_path):
    lines = summary_markdown(_mixed(tmp_path), {"fyvi": "claims/fyvi.md"})
    row = next(line for line in lines if line.startswith("| `fyvi`"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[:4] == ["`fyvi`", "both readings", "1", "1"] and cells[-3:] == ["1", "0", "[md](claims/fyvi.md)"]
    assert sum(int(c) for c in cells[3:10]) == 1  # one claim, one verdict: not one per profile
    assert "Counts are claims" in lines[-1]


def test_paper_tables_are_written_per_paper(tmp_path):
    written = write_paper_tables(_mixed(tmp_path), [], tmp_path / "claims")
    assert list(written) == ["fyvi"] and all(p.is_file() for p in written["fyvi"])


def test_json_keeps_every_profile_and_marks_the_headline(tmp_path):
    rows = json.loads(as_json(_mixed(tmp_path)))
    toy = [r for r in rows if r["id"] == "toy"]
    assert sorted((r["profile"], r["headline"], r["profile_kind"]) for r in toy) == [
        ("cpu", False, "reduced"), ("paper", True, "paper")]
    assert {r["kind"] for r in rows} == {"claim", "check"} and toy[0]["quote"] == "a toy sentence"


def test_print_table_into_a_closed_pipe_raises_broken_pipe_for_the_command_to_end_quietly(tmp_path, monkeypatch):
    class Closed(io.StringIO):
        def write(self, _):
            raise BrokenPipeError

        def isatty(self):
            return False

    monkeypatch.setattr("sys.stdout", Closed())
    with pytest.raises(BrokenPipeError):
        print_table(_mixed(tmp_path), Console(file=io.StringIO()))


def test_print_table_wraps_at_the_terminal_width(tmp_path):
    buffer = io.StringIO()
    print_table(_mixed(tmp_path), Console(file=buffer, width=60, force_terminal=True, color_system=None))
    lines = buffer.getvalue().splitlines()
    assert max(len(line) for line in lines) <= 60 and any(line.startswith("toy ") for line in lines)


# ---- the command ------------------------------------------------------------------------------------------------
def _results(tmp_path, rows: list[dict] | None = None):
    """A results folder of gmm-clustering rows (default: four Sparse and four Standard EM AMIs at ``paper``), each
    cell file with a sound run record beside it (rows without one have unknown provenance, never evidence), and the
    ``results.csv`` of them."""
    from fyexp.claims.model import experiment_spec
    from fyexp.store.provenance.record import settings_hash, write_record
    from fyexp.store.provenance.source import git_commit
    from fyexp.store.results import ResultStore
    from fyexp.run.spec_freshness import spec_expectation

    rows = rows if rows is not None else [
        {"experiment": "gmm-clustering", "profile": "paper", "method": m, "paper_row": r, "metric": "adjusted_mi",
         "value": v, "seed": i, "params": "{}", "status": "ok", "cell": f"{m}{i}", "paper": "fyvi", "table": "1"}
        for m, r, values in (("sparse", "Sparse EM", BASE / 4 + 0.1), ("standard", "Standard EM", BASE / 4))
        for i, v in enumerate(values)]
    store = ResultStore(tmp_path / "results", "gmm-clustering")
    expect = spec_expectation(experiment_spec("gmm-clustering", None), tmp_path / "results")
    for (profile, cell), part in pd.DataFrame(rows).groupby(["profile", "cell"], sort=False):
        path = store.folder / "cells" / profile / f"{cell}.csv"
        first = part.iloc[0]
        row = {"profile": profile, "cell": cell, "method": first["method"], "seed": first["seed"],
               "params": first["params"], "superseded": False}   # recorded at the settings the spec asks now
        now = expect(SimpleNamespace(settings={"overrides": {}}), row).settings
        settings = {"experiment": "gmm-clustering", "profile": profile, "overrides": {}, "method": str(first["method"]),
                    "params": {}, "seed": int(first["seed"]), "data": None, "environment": {"device_kind": "cpu"},
                    **now}
        write_record(path, settings, None)
        path.parent.mkdir(parents=True, exist_ok=True)
        part.assign(git_commit=git_commit(), settings_hash=settings_hash(settings)).to_csv(path, index=False)
    store.consolidate()
    return tmp_path / "results"


def test_verdicts_for_judges_the_papers_claims_on_the_rows_it_finds(tmp_path):
    claims, verdicts = verdicts_for(_results(tmp_path), "fyvi")
    ami = [v for v in verdicts if v.claim.id == "fyvi-t1-sparse-ami"]
    assert len(ami) == 1 and ami[0].headline and ami[0].verdict != "not run" and ami[0].n == "4 pairs"
    assert {v.claim.paper for v in verdicts} == {"fyvi"}
    assert np.isclose(ami[0].estimate, 0.1)


def test_an_unknown_profile_or_a_missing_folder_is_one_line(tmp_path):
    results = _results(tmp_path)
    with pytest.raises(FyexpError, match="unknown profile 'nope'; expected one of") as info:
        verdicts_for(results, "fyvi", "nope")
    assert "\n" not in str(info.value) and "paper" in str(info.value)
    with pytest.raises(FyexpError, match="does not exist"):
        verdicts_for(tmp_path / "absent", "fyvi")
    verdicts_for(results, "fyvi", "quick")  # a profile of the specs, with no rows: no error


def test_known_profiles_are_the_specs_and_the_rows():
    class Spec:
        profiles = {"paper": {}, "quick": {}}

    frame = pd.DataFrame({"profile": ["cpu", "paper+lr=1"]})
    assert known_profiles({"e": frame, "f": pd.DataFrame()}, {"e": Spec()}) == {"paper", "quick", "cpu", "paper+lr=1"}


def test_the_command_prints_json_or_the_table(tmp_path, capsys):
    results = _results(tmp_path)
    claims_command("fyvi", None, True, results, None, Console(file=io.StringIO()))
    rows = json.loads(capsys.readouterr().out)
    assert any(r["id"] == "fyvi-t1-sparse-ami" and r["headline"] for r in rows)
    buffer = io.StringIO()
    claims_command("fyvi", None, False, results, None, Console(file=buffer, width=100, force_terminal=True),
                   all_profiles=True)
    assert "fyvi-t1-sparse-ami" in buffer.getvalue() and "fyvi: " in buffer.getvalue()
