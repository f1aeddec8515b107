"""What the claims refuse, read, count and print, at the edges the whole-package mutation run found untested
(``fyexp/claims/MUTATION.md``, the AFTER run): the claims file's validation (each bad field refused in one line
naming the claim, the field and what was expected; each good one read as written), the selectors' description a
``data missing`` verdict prints, the tally and summary of a paper, the terminal, Markdown and LaTeX views (the
verdict words, the quote and its place, the numbers), the derived TV-EM rows and the command's closed pipe.

Values are toy ones (a gmm-clustering experiment, ``adjusted_mi``), never the papers'.
"""

from __future__ import annotations

import io
import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from fyexp.claims.model import ClaimsFile, Selector, load_claims
from fyexp.core.errors import FyexpError

TOY = {"id": "toy", "paper": "fyvi", "where": "Table 9", "line": 12, "quote": "a toy sentence", "claim": "toy",
       "direction": "greater", "rows": {"experiment": "gmm-clustering", "metric": "adjusted_mi"},
       "a": {"method": "x"}, "b": {"method": "y"}}


def write(tmp_path, claims: list[dict], findings: list[dict] | None = None, name: str = "claims.yaml"):
    body = {"claims": claims} | ({"findings": findings} if findings is not None else {})
    path = tmp_path / name
    path.write_text(yaml.safe_dump(body, sort_keys=False))
    return path


def toy(**changes) -> dict:
    """The toy claim with ``changes`` (a value of ``None`` drops the key)."""
    body = {**TOY, **changes}
    return {k: v for k, v in body.items() if v is not None}


def load_one(tmp_path, check: bool = False, **changes):
    return load_claims(write(tmp_path, [toy(**changes)]), check=check).claims[0]


def refused(tmp_path, claims, findings=None, check: bool = False) -> str:
    """The one-line message a bad claims file is refused with."""
    path = write(tmp_path, claims, findings)
    with pytest.raises(FyexpError) as info:
        load_claims(path, check=check)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{path}: ")
    return message[len(f"{path}: "):]


# ---- the claims file: what is refused, in one line naming the claim and the field ----------------------------
@pytest.mark.parametrize("changes, message", [
    ({"id": 5}, "claims[0]: id: expected a string, got 5"),
    ({"paper": "fyvx"}, "claim 'toy': paper: expected one of fyvi, fyvl, vr, tvem, frac, got 'fyvx'"),
    ({"paper": None}, "claim 'toy': paper: expected one of fyvi, fyvl, vr, tvem, frac"),
    ({"direction": "bigger"}, "claim 'toy': direction: expected one of greater, less, approx, best_of, monotone, "
                              "fraction, ratio_below, ratio_above, noninferior, group_best, coverage, got 'bigger'"),
    ({"b": None}, "claim 'toy': b: expected set for direction 'greater' (mean(a) > mean(b) (or > than))"),
    ({"direction": "less", "a": None}, "claim 'toy': a: expected set for direction 'less'"),
    ({"direction": "approx"}, "claim 'toy': delta: expected set for direction 'approx' (|mean(a) - mean(b)| <= "
                              "delta (or - than))"),
    ({"direction": "approx", "delta": 0.1, "b": None}, "claim 'toy': b: expected set for direction 'approx'"),
    ({"direction": "best_of", "others": [{"method": "z"}]}, "claim 'toy': better: expected set for direction "
                                                            "'best_of'"),
    ({"direction": "best_of", "better": "less"}, "claim 'toy': others: expected set for direction 'best_of'"),
    ({"direction": "monotone", "series": [{"method": "x"}, {"method": "y"}]},
     "claim 'toy': trend: expected set for direction 'monotone'"),
    ({"direction": "fraction"}, "claim 'toy': at_least: expected set for direction 'fraction' (share of runs"),
    ({"direction": "ratio_below"}, "claim 'toy': threshold: expected set for direction 'ratio_below' "
                                   "(mean(a) / mean(b) < threshold)"),
    ({"direction": "ratio_above"}, "claim 'toy': threshold: expected set for direction 'ratio_above' "
                                   "(mean(a) / mean(b) > threshold)"),
    # a constant stands in for b only in a pairwise comparison, never in a ratio
    ({"direction": "ratio_below", "threshold": 1, "than": 2.0, "b": None},
     "claim 'toy': than: expected no constant for direction 'ratio_below' (than stands in for b in greater, less, "
     "approx, noninferior only), got 2.0"),
    ({"a": "x"}, "claim 'toy': a: expected a mapping of selectors or null, got 'x'"),
    ({"b": {"methd": "y"}}, "claim 'toy': b: key 'methd': expected one of columns, experiment, method, metric, paper_row, "
                            "params, profile, setting, table"),
    ({"b": {"method": True}}, "claim 'toy': b.method: expected a string or a number or null, got True"),
    ({"rows": {"metric": "adjusted_mi"}}, "claim 'toy': a.experiment: expected a string (here or in the claim's "
                                          "rows)"),
    ({"rows": {"experiment": "gmm-clustering", "metric": 3}}, "claim 'toy': a.metric: expected a string (here or "
                                                              "in the claim's rows), got 3"),
    ({"a": {"method": "x", "params": [1, 2]}}, "claim 'toy': a.params: expected a mapping of params keys to values "
                                               "or null, got [1, 2]"),
    ({"direction": "best_of", "better": "less", "others": {"method": "z"}},
     "claim 'toy': others: expected a list of selectors or null, got {'method': 'z'}"),
    ({"direction": "monotone", "trend": "increasing", "series": {"method": "z"}},
     "claim 'toy': series: expected a list of selectors or null, got {'method': 'z'}"),
    ({"direction": "best_of", "better": "less", "others": [{"method": "z"}, "w"]},
     "claim 'toy': others[1]: expected a mapping of selectors, got 'w'"),
    ({"direction": "monotone", "trend": "increasing", "series": [{"method": "z"}]},
     "claim 'toy': series: expected at least two selectors in order"),
    ({"better": "more"}, "claim 'toy': better: expected one of greater, less or null, got 'more'"),
    ({"trend": "up"}, "claim 'toy': trend: expected one of increasing, decreasing or null, got 'up'"),
    ({"kind": "ours"}, "claim 'toy': kind: expected one of claim, check, theorem_check, table_reading, got 'ours'"),
    ({"line": True}, "claim 'toy': line: expected an integer >= 1 or null, got True"),
    ({"line": "12"}, "claim 'toy': line: expected an integer >= 1 or null, got '12'"),
    ({"line": 0}, "claim 'toy': line: expected an integer >= 1 or null, got 0"),
    ({"line": -3}, "got -3"),
    ({"quote": "   "}, "claim 'toy': quote: expected the paper's words (quote) and their line (line) for a claim; "
                        "a check of ours is kind: check"),
    ({"quote": 7}, "claim 'toy': quote: expected a string or null, got 7"),
    ({"line": None}, "claim 'toy': quote: expected the paper's words"),
    ({"kind": "check", "note": "  "}, "claim 'toy': note: expected why this check is ours (kind: check)"),
    ({"magnitude_kind": "percent"},
     "claim 'toy': magnitude_kind: expected one of absolute, relative, got 'percent'"),
    # numbers are numbers (as in a spec: no "0.25" read as 0.25), and a word is no number
    ({"magnitude": "0.25"}, "claim 'toy': magnitude: expected a number or null, got '0.25'"),
    ({"magnitude": "large"}, "claim 'toy': magnitude: expected a number or null, got 'large'"),
    ({"direction": "approx", "delta": True}, "claim 'toy': delta: expected a number or null, got True"),
    ({"where": 9}, "claim 'toy': where: expected a string, got 9"),
])
def test_a_bad_claim_is_refused_in_one_line_naming_its_field(tmp_path, changes, message):
    assert message in refused(tmp_path, [toy(**changes)])


def test_an_unknown_key_is_named_first_in_order_with_the_keys_a_claim_may_have(tmp_path):
    message = refused(tmp_path, [toy(zeta=1, magnitudes=2)])
    head, allowed = message.split(": expected one of ")
    assert head == "claim 'toy': key 'magnitudes'"  # of two unknown keys, the first in order
    assert allowed.split(", ") == sorted(allowed.split(", ")) and {"magnitude", "threshold", "quote", "kind"} <= set(
        allowed.split(", "))
    assert "a: key 'zeta'" in refused(tmp_path, [toy(a={"method": "x", "zeta": 1, "zzz": 2})])  # a selector's too


def test_an_id_used_twice_or_a_file_that_is_no_claims_file_is_refused(tmp_path):
    assert refused(tmp_path, [toy(), toy(claim="other")]) == "claim 'toy': expected a unique id (it appears twice)"
    path = tmp_path / "claims.yaml"
    for text in ("[1, 2]\n", "claims: {toy: 1}\n", "findings: []\n", ""):
        path.write_text(text)
        with pytest.raises(FyexpError, match="top level: expected a mapping with a list 'claims'"):
            load_claims(path, check=False)
    path.write_text("claims: [\n")
    with pytest.raises(FyexpError, match=r"claims.yaml: not valid YAML \(") as info:
        load_claims(path, check=False)
    assert "\n" not in str(info.value)
    with pytest.raises(FyexpError, match="absent.yaml: no such claims file"):
        load_claims(tmp_path / "absent.yaml", check=False)
    path.write_text("claims:\n  - 3\n")  # an entry that is no mapping: as one without an id
    with pytest.raises(FyexpError, match=r"claims\[0\]: id: expected a string$"):
        load_claims(path, check=False)


# ---- the claims file: what is accepted is read as written ----------------------------------------------------
def test_a_claim_is_read_as_written(tmp_path):
    claim = load_one(tmp_path, where="App. B, Table 9", line=1, quote="a toy\n   sentence  over lines",
                     paper_numbers="0.3 vs 0.2", magnitude=0.25, note="a caveat", magnitude_kind="relative",
                     a={"method": 3, "table": 2, "profile": None, "params": {"rho": 1.5, "alpha": 0}},
                     b={"method": "y", "metric": "other_metric"})
    assert (claim.id, claim.paper, claim.where, claim.text, claim.direction, claim.kind) == (
        "toy", "fyvi", "App. B, Table 9", "toy", "greater", "claim")
    assert claim.quote == "a toy sentence over lines" and claim.line == 1  # line 1 is a line; whitespace as one
    assert (claim.paper_numbers, claim.magnitude, claim.magnitude_kind, claim.note) == (
        "0.3 vs 0.2", 0.25, "relative", "a caveat")
    assert (claim.delta, claim.at_least, claim.threshold, claim.than) == (None, None, None, None)
    assert (claim.better, claim.trend, claim.others, claim.series) == ("greater", "increasing", (), ())
    a, b = claim.sides["a"], claim.sides["b"]
    assert a == Selector("gmm-clustering", "adjusted_mi", method="3", table="2",
                         params=(("alpha", 0), ("rho", 1.5)))  # values as text, params sorted by key
    assert (b.metric, b.method, b.profile) == ("other_metric", "y", None)  # a side's own key wins over rows
    assert claim.place == "fyvi App. B, Table 9, line 1" and claim.experiments == ["gmm-clustering"]


def test_blank_optional_fields_read_as_empty(tmp_path):
    claim = load_one(tmp_path, paper_numbers=None, note=None, where=None, claim=None, magnitude_kind=None)
    assert (claim.paper_numbers, claim.note, claim.where, claim.text, claim.magnitude_kind) == (
        "", "", "", "", "absolute")
    claim = load_claims(write(tmp_path, [toy() | {"paper_numbers": None, "note": None}]), check=False).claims[0]
    assert (claim.paper_numbers, claim.note) == ("", "")  # written as null: empty, not "None"


@pytest.mark.parametrize("direction, changes, numbers", [
    ("less", {"than": 0.4, "b": None}, {"than": 0.4}),
    ("approx", {"than": 1, "delta": 0.05, "b": None}, {"than": 1.0, "delta": 0.05}),
    ("fraction", {"at_least": 1, "b": None}, {"at_least": 1.0}),
    ("ratio_above", {"threshold": 2}, {"threshold": 2.0}),
])
def test_each_directions_numbers_are_read_as_numbers(tmp_path, direction, changes, numbers):
    claim = load_one(tmp_path, direction=direction, **changes)
    for key, value in numbers.items():
        assert getattr(claim, key) == value and isinstance(getattr(claim, key), float)
    assert claim.direction == direction and ("b" in claim.sides) == ("b" not in changes)


def test_best_of_and_monotone_read_their_sides_in_order(tmp_path):
    best = load_one(tmp_path, direction="best_of", better="less", b=None,
                    others=[{"method": "z"}, {"method": "w", "experiment": "gmm-other"}])
    assert best.better == "less" and [s.method for s in best.others] == ["z", "w"]
    assert best.experiments == ["gmm-clustering", "gmm-other"]  # each once, in order
    assert [s.method for s in best.selectors()] == ["x", "z", "w"]
    mono = load_one(tmp_path, direction="monotone", trend="decreasing", a=None, b=None,
                    series=[{"method": "s3"}, {"method": "s1"}, {"method": "s2"}])
    assert mono.trend == "decreasing" and [s.method for s in mono.series] == ["s3", "s1", "s2"]
    check = load_one(tmp_path, kind="check", note="ours", quote=None)
    assert check.kind == "check" and check.quote == ""


def test_a_selector_describes_the_rows_it_names():
    assert Selector("e", "m").describe() == "e:m"
    full = Selector("e", "m", method="x", paper_row="Row A", setting="s", table="2", profile="cpu",
                    params=(("alpha", 0.5), ("k", 3)))
    assert full.describe() == "e:m[method=x, paper_row=Row A, setting=s, table=2, alpha=0.5, k=3]"
    assert Selector("e", "m", params=(("k", 3),)).describe() == "e:m[k=3]"
    assert Selector("e", "m", table="1").describe() == "e:m[table=1]"


def test_a_claim_without_a_line_names_only_its_place():
    from fyexp.claims.model import Claim

    claim = Claim("c", "vr", "Sec. 4", "t", "greater", {})
    assert claim.place == "vr Sec. 4" and claim.selectors() == [] and claim.experiments == []


# ---- findings and the rows every selector names -------------------------------------------------------------
FINDING = {"id": "f1", "paper": "fyvi", "claim": "toy", "where": "the authors' code", "finding": "they differ",
           "rows": [{"experiment": "gmm-clustering", "metric": "adjusted_mi", "method": "x"}]}


def test_a_finding_is_read_and_checked(tmp_path):
    found, = load_claims(write(tmp_path, [toy()], [FINDING]), check=False).findings
    assert (found.id, found.paper, found.claim, found.where, found.text) == (
        "f1", "fyvi", "toy", "the authors' code", "they differ")
    assert found.rows == (Selector("gmm-clustering", "adjusted_mi", method="x"),)
    bare, = load_claims(write(tmp_path, [toy()], [{"id": "f2", "paper": "vr", "claim": "toy"}]), check=False).findings
    assert (bare.rows, bare.where, bare.text) == ((), "", "")
    for body, message in (
            ({**FINDING, "id": 3}, "findings[0]: id: expected a string, got 3"),
            ({**FINDING, "claim": "nope"}, "finding 'f1': claim: expected the id of a claim in this file, got 'nope'"),
            ({**FINDING, "paper": "fyvx"}, "finding 'f1': paper: expected one of fyvi, fyvl, vr, tvem, frac, "
                                           "got 'fyvx'"),
            ({**FINDING, "rows": [{"metric": "adjusted_mi"}]}, "finding 'f1': rows[0].experiment: expected a string"),
            ({**FINDING, "rows": [FINDING["rows"][0], {"experiment": "gmm-clustering", "metric": "adjusted_mi",
                                                       "colour": 1}]},
             "finding 'f1': rows[1]: key 'colour': expected one of")):
        assert message in refused(tmp_path, [toy()], [body])
    assert "findings[0]: id: expected a string" in refused(tmp_path, [toy()], ["f1"])


def test_every_selector_is_checked_against_what_the_experiments_write(tmp_path):
    assert load_claims(write(tmp_path, [toy(b={"method": "y", "paper_row": "Sparse EM"})])).claims  # a real row
    message = refused(tmp_path, [toy(b={"method": "y", "paper_row": "Sparse EMM"})], check=True)
    assert message == "claim 'toy': paper_row 'Sparse EMM' is no row of paper_tables.csv"
    message = refused(tmp_path, [toy(b={"method": "y", "experiment": "nope"})], check=True)
    assert message.startswith("claim 'toy': experiment 'nope' does not exist; expected one of ")
    names = message.split("expected one of ")[1].split(", ")
    assert "gmm-clustering" in names and names == sorted(names)
    bad_row = {**FINDING, "rows": [{"experiment": "gmm-clustering", "metric": "no_such_metric"}]}
    assert refused(tmp_path, [toy()], [bad_row], check=True) == (
        "finding 'f1': experiment 'gmm-clustering' writes no metric 'no_such_metric'")
    unchecked = load_claims(write(tmp_path, [toy(b={"method": "y", "experiment": "nope"})], [bad_row]), check=False)
    assert unchecked.claims[0].sides["b"].experiment == "nope"  # check=False reads without checking


def test_one_papers_claims_and_findings(tmp_path):
    other = toy(id="vr-toy", paper="vr")
    path = write(tmp_path, [toy(), other], [FINDING, {**FINDING, "id": "f2", "paper": "vr", "claim": "vr-toy"}])
    everything = load_claims(path, check=False)
    assert everything.for_paper(None) is everything
    vr = everything.for_paper("vr")
    assert [c.id for c in vr.claims] == ["vr-toy"] and [f.id for f in vr.findings] == ["f2"]
    with pytest.raises(FyexpError, match="claims: unknown paper 'vrr'; expected one of fyvi, fyvl, vr, tvem, frac$"):
        everything.for_paper("vrr")
    assert ClaimsFile().for_paper("frac").claims == []


# ---- what a reader sees: the tally, the terminal views, Markdown, LaTeX --------------------------------------
def a_claim(cid="toy", paper="fyvi", kind="claim", numbers="0.31 vs 0.27", note=""):
    from fyexp.claims.model import Claim

    side = Selector("gmm-clustering", "adjusted_mi")
    return Claim(cid, paper, "Table 9", f"{cid} beats the baseline", "greater", {"a": side, "b": side},
                 paper_numbers=numbers, kind=kind, quote=f"the quote of {cid}" if kind == "claim" else "", line=12,
                 note=note)


def a_verdict(claim, verdict="supported", profile="paper", headline=True, notes=(), ours="0.42 vs 0.3", n="4 pairs",
              stale=(), dirty=()):
    from fyexp.claims.verdicts import Verdict

    return Verdict(claim, profile, verdict, ours, n, list(notes), stale=frozenset(stale), dirty=frozenset(dirty),
                   headline=headline)


def test_a_papers_summary_counts_its_claims_by_headline_in_the_order_of_the_verdicts():
    from fyexp.claims.render import summary_line, tally

    one, two, three = a_claim("one"), a_claim("two"), a_claim("three")
    verdicts = [a_verdict(one, "reversed", stale={("s", 1)}, dirty={("d", 1)}),
                a_verdict(one, "supported", "cpu", headline=False, stale={("s", 2)}),
                a_verdict(two, "supported", stale={("s", 1)}), a_verdict(three, "reversed"),
                a_verdict(a_claim("ours", kind="check", note="why"), "supported"),
                a_verdict(a_claim("vr-one", paper="vr"), "supported", stale={("v", 1)}, dirty={("v", 2)})]
    claims, counts, checks, stale, dirty = tally(verdicts, "fyvi")
    assert (claims, dict(counts), checks, stale, dirty) == (3, {"reversed": 2, "supported": 1}, 1, 2, 1)
    assert summary_line(verdicts, "fyvi") == ("fyvi: 3 claims (1 supported, 2 reversed; all at paper); 1 check of ours; "
                                              "2 stale rows behind these verdicts; 1 dirty")
    assert summary_line(verdicts, "vr") == ("vr: 1 claim (1 supported; all at paper); 1 stale row behind these "
                                            "verdicts; 1 dirty")
    only_checks = [a_verdict(a_claim("c1", kind="check", note="w")), a_verdict(a_claim("c2", kind="check", note="w"))]
    assert summary_line(only_checks, "fyvi") == "fyvi: 0 claims; 2 checks of ours"
    assert tally(verdicts, "frac") == (0, {}, 0, 0, 0) and summary_line([], "frac") == "frac: 0 claims"


def test_the_default_view_shows_each_claims_headline_its_place_and_the_papers_numbers():
    from fyexp.claims.render import CHECKS_TITLE, short_lines

    claim, check = a_claim(), a_claim("ours", kind="check", note="a margin of ours", numbers="")
    verdicts = [a_verdict(claim, notes=["n = 1, sign only", "another note"]),
                a_verdict(claim, "reversed", "cpu", headline=False, notes=["at cpu"], ours="", n=""),
                a_verdict(check, "not supported", ours="0.1 vs 0.2", n="3 vs 3"),
                a_verdict(a_claim("vr-one", paper="vr", numbers=""), "not run", profile=None, ours="", n="")]
    lines = short_lines(verdicts, 100)
    assert lines[0] == ("id" + " " * 30 + "verdict" + " " * 8 + "n" + " " * 8 + "profile" + " " * 5 + "ours", "bold")
    assert lines[1] == ("toy" + " " * 29 + "supported" + " " * 6 + "4 pairs  paper       0.42 vs 0.3", "")
    assert lines[2] == ("    n = 1, sign only; another note", "dim")
    assert lines[3] == ("  fyvi Table 9, line 12: toy beats the baseline · paper: 0.31 vs 0.27", "dim")
    assert lines[4][0].startswith("vr-one") and lines[4][0].split()[1:] == ["not", "run", "—", "—", "—"]
    assert lines[5] == ("  vr Table 9, line 12: vr-one beats the baseline", "dim")  # no numbers printed: none shown
    assert lines[6:8] == [("", ""), (CHECKS_TITLE, "bold")]
    assert lines[8][0].split() == ["ours", "not", "supported", "3", "vs", "3", "paper", "0.1", "vs", "0.2"]
    assert lines[9] == ("  fyvi Table 9, line 12: ours beats the baseline", "dim")
    assert lines[10:] == [("", ""), ("fyvi: 1 claim (1 supported; all at paper); 1 check of ours", ""),
                          ("vr: 1 claim (1 not run)", "")]
    verdicts[1].notes.append("and more")
    verdicts.append(a_verdict(check, "reversed", "quick", headline=False, ours="0.3 vs 0.2"))
    every = short_lines(verdicts, 100, all_profiles=True)
    assert every[:3] == lines[:3]  # the headline still leads its block
    also = [(line, style) for line, style in every if "also at" in line]
    assert [(line.split(), style) for line, style in also] == [
        (["also", "at", "reversed", "—", "cpu*", "—"], "dim"),
        (["also", "at", "reversed", "4", "pairs", "quick*", "0.3", "vs", "0.2"], "dim")]  # a check's too
    assert every[every.index(also[0]) + 1] == ("    at cpu; and more", "dim")
    assert every[-1] == ("* a reduced profile: the verdict holds at that profile only, never at the paper's", "dim")


def test_the_reduced_mark_is_explained_only_when_a_reduced_verdict_is_shown():
    from fyexp.claims.render import short_lines

    claim = a_claim()
    hidden = [a_verdict(claim), a_verdict(claim, "reversed", "cpu", headline=False)]
    assert not any(line.startswith("* a reduced") for line, _ in short_lines(hidden))
    shown = [a_verdict(claim, profile="cpu")]
    lines = short_lines(shown)
    assert lines[1][0].split()[4] == "cpu*" and lines[-1][0].startswith("* a reduced profile")


def test_the_long_view_prints_every_field_named_claims_first():
    from fyexp.claims.render import long_lines

    claim, check = a_claim(note="the baseline is the authors' own"), a_claim("ours", kind="check", note="a margin")
    verdicts = [a_verdict(check, "reversed", "cpu", ours="0.1 vs 0.3", n="3 vs 3"),
                a_verdict(claim, notes=["n = 1, sign only", "more"]),
                a_verdict(claim, "reversed", "paper+lr=1", headline=False, ours="", n="")]
    lines = long_lines(verdicts, 100)
    assert lines[:9] == [
        ("toy  supported  n = 4 pairs  profile paper", "bold"),
        ("  claim:  toy beats the baseline", ""), ("  where:  fyvi Table 9, line 12", ""),
        ("  says:   the quote of toy", ""), ("  paper:  0.31 vs 0.27", ""), ("  ours:   0.42 vs 0.3", ""),
        ("  notes:  n = 1, sign only; more", ""), ("  caveat: the baseline is the authors' own", ""), ("", "")]
    assert lines[9:15] == [
        ("ours  reversed (reduced profile)  n = 3 vs 3  profile cpu  [our check]", "bold"),
        ("  claim:  ours beats the baseline", ""), ("  where:  fyvi Table 9, line 12", ""),
        ("  paper:  0.31 vs 0.27", ""), ("  ours:   0.1 vs 0.3", ""), ("  why:    a margin", "")]
    assert lines[-1] == ("fyvi: 1 claim (1 supported; all at paper); 1 check of ours", "")
    every = long_lines(verdicts, 100, all_profiles=True)
    assert ("toy  reversed (variant)  n = —  profile paper+lr=1  (not the headline)", "bold") in every
    wrapped = long_lines([a_verdict(claim, ours="0.42 vs 0.3 " * 12)], 60)
    ours = [line for line, _ in wrapped if line.startswith("  ours:") or line.startswith(" " * 10)]
    assert len(ours) > 1 and all(len(line) <= 60 for line in ours)
    assert " ".join(line[10:] for line in ours).split() == ("0.42 vs 0.3 " * 12).split()  # nothing cut


def test_piped_output_is_laid_out_for_100_columns_whatever_the_consoles_width():
    from rich.console import Console

    from fyexp.claims.render import print_table

    claim = a_claim(numbers="")
    verdicts = [a_verdict(claim, ours="0.42 vs 0.3; diff 0.12")]
    buffer = io.StringIO()
    print_table(verdicts, Console(file=buffer, width=60, force_terminal=True, color_system=None))
    assert max(len(line) for line in buffer.getvalue().splitlines()) <= 60
    piped = io.StringIO()
    old = sys.stdout
    sys.stdout = piped
    try:
        print_table(verdicts, Console(file=io.StringIO(), width=60))  # not a terminal: rich writes to stdout
        print_table(verdicts, Console(file=io.StringIO(), width=60), long=True)
    finally:
        sys.stdout = old
    lines = piped.getvalue().splitlines()
    assert lines[1].startswith("toy ") and lines[1].endswith("diff 0.12") and 60 < len(lines[1]) <= 100
    assert "toy  supported  n = 4 pairs  profile paper" in lines


def test_markdown_and_latex_cells_read_the_verdict_the_quote_and_its_place():
    from fyexp.claims.render import latex, markdown

    claim = a_claim(numbers="0.31 | 0.27")
    check = a_claim("ours", kind="check", note="a margin of 1_000 & 5% {ours}", numbers="")
    verdicts = [a_verdict(claim, "reversed", "cpu", notes=["n = 1, sign only"]),
                a_verdict(check, ours="", n="", profile=None)]
    text = markdown("fyvi", verdicts)
    lines = text.splitlines()
    assert lines[0] == "# Claims of `fyvi`" and lines[4] == "**fyvi: 1 claim (1 reversed; 1 at reduced profile cpu); 1 check of ours.**"
    assert ("| toy | toy beats the baseline | “the quote of toy” (fyvi Table 9, line 12) | 0.31 \\| 0.27 | 0.42 vs 0.3 "
            "| reversed (reduced profile cpu); n = 1, sign only | 4 pairs | cpu |") in lines
    assert "| ours | ours beats the baseline | a margin of 1_000 & 5% {ours} (Table 9) | — | — | supported | — | — |" \
        in lines
    assert "## Other profiles" not in text and "## Findings" not in text
    tex = latex("fyvi", verdicts)
    assert (r"toy & toy beats the baseline & “the quote of toy” (fyvi Table 9, line 12) & 0.31 | 0.27 & 0.42 vs 0.3 "
            r"& reversed (reduced profile cpu); n = 1, sign only & 4 pairs & cpu \\") in tex
    assert r"a margin of 1\_000 \& 5\% \{ours\} (Table 9)" in tex
    assert latex("fyvi", verdicts[:1]).count(r"\begin{tabular}") == 1 and "% Our checks" not in latex("fyvi",
                                                                                                    verdicts[:1])


def test_latex_escapes_what_tex_would_read_as_markup():
    from fyexp.claims.render import tex_escape

    assert tex_escape("a & b % c _ d # e $ f ^ g { h } i ± j → k δ") == (
        r"a \& b \% c \_ d \# e \$ f \textasciicircum{} g \{ h \} i $\pm$ j $\to$ k $\delta$")


def test_markdown_lists_the_findings_and_the_other_profiles(tmp_path):
    from fyexp.claims.model import Finding
    from fyexp.claims.render import markdown, write_paper_tables

    claim, vr = a_claim(), a_claim("vr-one", paper="vr")
    finding = Finding("f1", "fyvi", "the code departs", "toy", (Selector("e", "m", method="x"), Selector("e", "n")),
                      "the authors' code")
    verdicts = [a_verdict(claim), a_verdict(claim, "reversed", "cpu", headline=False), a_verdict(vr)]
    text = markdown("fyvi", verdicts[:2], [finding])
    others = text.split("## Other profiles (not the headline; variants never are)")[1]
    assert "| toy |" in others and "reversed (reduced profile cpu)" in others
    assert text.rstrip().endswith("- **f1** (claim `toy`; the authors' code): the code departs; rows: `e:m[method=x]`, "
                                  "`e:n`")
    written = write_paper_tables(verdicts, [finding], tmp_path)
    assert {p: [f.name for f in files] for p, files in written.items()} == {"fyvi": ["fyvi.md", "fyvi.tex"],
                                                                          "vr": ["vr.md", "vr.tex"]}
    vr_text = (tmp_path / "vr.md").read_text()
    assert "vr-one" in vr_text and "| toy |" not in vr_text and "f1" not in vr_text
    assert "**f1**" in (tmp_path / "fyvi.md").read_text() and "vr-one" not in (tmp_path / "fyvi.tex").read_text()


def test_the_index_summary_has_a_row_per_paper_counting_each_verdict():
    from fyexp.claims.render import SHORT, summary_markdown
    from fyexp.claims.verdicts import VERDICTS

    one, two = a_claim("one"), a_claim("two")
    verdicts = [a_verdict(one, "reversed", stale={("s", 1)}), a_verdict(one, "supported", "cpu", headline=False),
                a_verdict(two, "not resolved at this n", stale={("s", 2)}),
                a_verdict(a_claim("c", kind="check", note="w"), "reversed"),
                a_verdict(a_claim("vr-one", paper="vr"), "data missing")]
    lines = summary_markdown(verdicts, {"fyvi": "claims/fyvi.md"})
    assert lines[0] == ("| paper | reading | claims | " + " | ".join(SHORT[k] for k in VERDICTS)
                        + " | profiles | theorem checks | checks of ours | stale rows | table |")
    assert lines[1] == "|---|---|---:|" + "---:|" * 7 + "---|---:|---:|---|---|"
    assert lines[2] == ("| `fyvi` | both readings | 2 | 0 | 0 | 1 | 0 | 1 | 0 | 0 | all at paper | 0 | 1 | 2 | "
                        "[md](claims/fyvi.md) |")
    assert lines[3] == "| `vr` | both readings | 1 | 0 | 0 | 0 | 0 | 0 | 0 | 1 | — | 0 | 0 | 0 | [md]() |"
    assert not any(line.startswith("| `frac`") for line in lines)


def test_the_markdown_renders_as_tables_with_a_link_to_the_claims_file(tmp_path):
    from fyexp.claims.model import Finding
    from fyexp.claims.render import CHECKS_TITLE, COLUMNS, markdown

    claim = a_claim()
    check = a_claim("ours", kind="check", note="a margin\nover two lines | ours")
    verdicts = [a_verdict(claim), a_verdict(check), a_verdict(claim, "reversed", "cpu", headline=False)]
    text = markdown("fyvi", verdicts, [Finding("f1", "fyvi", "departs", "toy", (), "code")])
    assert text.endswith("\n") and not text.endswith("\n\n")
    lines = text.splitlines()
    header = "| " + " | ".join(COLUMNS) + " |"
    assert header == "| id | claim | the paper says | paper | ours | verdict | n | profile |"
    starts = [i for i, line in enumerate(lines) if line == header]
    assert len(starts) == 3  # claims, our checks, other profiles
    for i in starts:  # a table: a blank line, the header, its rule, one row per verdict on one line each
        assert lines[i - 1] == "" and lines[i + 1] == "|---|---|---|---|---|---|---|---|"
        assert lines[i + 2].startswith("| ") and lines[i + 2].endswith(" |") and lines[i + 2].count(" | ") == 7
    headings = [i for i, line in enumerate(lines) if line.startswith("## ")]
    assert [lines[i] for i in headings] == [f"## {CHECKS_TITLE}", "## Other profiles (not the headline; variants "
                                            "never are)", "## Findings (the authors' code against the paper's text)"]
    assert all(lines[i - 1] == "" and lines[i + 1] == "" for i in headings)
    assert "| ours | ours beats the baseline | a margin over two lines \\| ours (Table 9) |" in text
    assert lines[1] == "" and lines[3] == "" and lines[5] == ""
    intro = lines[2]
    assert intro.startswith("Regenerated by `fyexp report`") and "Each claim quotes the paper" in intro
    link = intro.split("[`claims.yaml`](")[1].split(")")[0]
    written_in = Path(__file__).resolve().parents[2] / "results" / "claims"  # where `fyexp report` writes it
    assert (written_in / link).resolve() == (Path(__file__).resolve().parents[2] / "fyexp" / "reference"
                                            / "claims.yaml")


def test_the_latex_is_one_tabular_per_part_each_row_ended():
    from fyexp.claims.render import latex

    claim, check = a_claim(), a_claim("ours", kind="check", note="n")
    text = latex("fyvi", [a_verdict(claim), a_verdict(claim, "reversed", "cpu", headline=False), a_verdict(check)])
    lines = text.split("\n")
    assert lines[-1] == "" and lines[-2] == r"\end{tabular}"
    first = lines[:lines.index(r"\end{tabular}") + 1]
    assert first == [r"\begin{tabular}{p{2.4cm}p{3.2cm}p{3.6cm}p{1.8cm}p{2.6cm}p{2.4cm}ll}", r"\hline",
                     r"id & claim & the paper says & paper & ours & verdict & n & profile \\", r"\hline",
                     r"toy & toy beats the baseline & “the quote of toy” (fyvi Table 9, line 12) & 0.31 vs 0.27 & "
                     r"0.42 vs 0.3 & supported & 4 pairs & paper \\", r"\hline", r"\end{tabular}"]
    rest = lines[len(first):]
    assert rest[:2] == ["", "% Our checks (not claims of the paper; never counted in its tally)"]
    assert rest[2:] == [*first[:4], r"ours & ours beats the baseline & n (Table 9) & 0.31 vs 0.27 & 0.42 vs 0.3 & "
                        r"supported & 4 pairs & paper \\", r"\hline", r"\end{tabular}", ""]


def test_each_papers_files_carry_its_own_title_and_findings(tmp_path):
    from fyexp.claims.model import Finding
    from fyexp.claims.render import write_paper_tables

    verdicts = [a_verdict(a_claim("vr-one", paper="vr")), a_verdict(a_claim("tvem-one", paper="tvem"))]
    findings = [Finding("fv", "vr", "vr's finding", "vr-one"), Finding("ft", "tvem", "tvem's finding", "tvem-one")]
    written = write_paper_tables(verdicts, findings, tmp_path)
    assert list(written) == ["vr", "tvem"]  # in the papers' order; fyvi, fyvl, frac: no verdicts, no file
    vr = (tmp_path / "vr.md").read_text()
    assert vr.startswith("# Claims of `vr`\n") and "**vr: 1 claim (1 supported; all at paper).**" in vr
    assert "**fv**" in vr and "ft" not in vr and "tvem" not in vr
    assert "**ft**" in (tmp_path / "tvem.md").read_text() and "vr-one" in (tmp_path / "vr.tex").read_text()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tvem.md", "tvem.tex", "vr.md", "vr.tex"]


def test_an_id_longer_than_the_terminal_is_folded_not_cut():
    from rich.console import Console

    from fyexp.claims.render import print_table

    cid = "toy-" + "x" * 70
    buffer = io.StringIO()
    print_table([a_verdict(a_claim(cid))], Console(file=buffer, width=50, force_terminal=True, color_system=None))
    lines = buffer.getvalue().splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("toy-"))
    assert max(len(line) for line in lines) <= 50 and lines[first] + lines[first + 1] == cid


# ---- which rows a selector reads, and the n a note names -----------------------------------------------------
def test_a_selector_reads_a_table_or_a_param_written_as_a_number_or_as_text():
    from fyexp.claims.verdicts import select

    frame = pd.DataFrame({"metric": "m", "value": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                          "table": [3, "3.0", "13", 3.5, "3", None],
                          "params": ['{"rho": 2}', '{"rho": "2.0"}', '{"rho": 2.5}', "{}", "", '{"rho": 2, "k": 1}'],
                          "status": ["ok", None, "ok", "ok", "ok", "failed"]})
    by_table = select(frame, Selector("e", "m", table="3"))
    assert list(by_table["value"]) == [1.0, 2.0, 5.0]  # 3, "3.0" and "3" are table 3; 13 and 3.5 are not
    by_param = select(frame, Selector("e", "m", params=(("rho", "2"),)))
    assert list(by_param["value"]) == [1.0, 2.0]  # rho 2 or "2.0"; not 2.5, not absent; a failed row never
    assert list(select(frame, Selector("e", "m", params=(("rho", "2.5"),)))["value"]) == [3.0]
    named = frame.assign(table=["Table 3", "3", "table 3", None, None, None])
    assert list(select(named, Selector("e", "m", table="Table 3"))["value"]) == [1.0]  # text: as written


@pytest.mark.parametrize("n_wanted, note", [(999.5, "about n = 1000 would resolve it"),
                                             (1000.5, "even 1000 runs would not resolve it")])
def test_the_n_a_note_names_stops_at_a_thousand_runs(tmp_path, n_wanted, note):
    from tests.claims.test_claims_rules import BASE, HALF, JITTER, pair, verdict_of

    magnitude = float(HALF * (4 / n_wanted) ** 0.5)  # 4 pairs: n = ceil(4 (HALF / magnitude)^2)
    v = verdict_of(pair(tmp_path, extra=f"    magnitude: {magnitude!r}\n"), {"x": BASE + 0.001 + JITTER, "y": BASE})
    assert v.verdict == "not resolved at this n" and v.n_to_resolve == round(n_wanted + 0.5)
    assert v.notes[-1] == f"the interval holds 0 and the paper's {magnitude:.4g}; {note}"


def test_a_tie_at_a_printed_zero_says_only_that_the_interval_holds_it(tmp_path):
    from tests.claims.test_claims_rules import BASE, JITTER, pair, verdict_of

    v = verdict_of(pair(tmp_path, extra="    magnitude: 0\n"), {"x": BASE + 0.1 + JITTER, "y": BASE})
    assert v.notes == ["the interval holds 0 and the paper's 0"]  # no n resolves a difference of 0: none named


# ---- the command ---------------------------------------------------------------------------------------------
def _results(tmp_path):
    from tests.claims.test_claims_render import _results as results

    rows = pd.read_csv(results(tmp_path / "paper") / "gmm-clustering" / "results.csv")
    rows = rows.drop(columns=["git_commit", "settings_hash"])  # the paper rows, and the quick rows reversed
    both = pd.concat([rows, rows.assign(profile="quick", value=rows["value"][::-1].to_numpy())])
    return results(tmp_path, both.to_dict("records"))


def _command(results, capsys, paper="fyvi", profile=None, json_out=True, **kw):
    from rich.console import Console

    from fyexp.claims.command import claims_command

    buffer = io.StringIO()
    claims_command(paper, profile, json_out, results, None, Console(file=buffer, width=100, force_terminal=True),
                   **kw)
    return json.loads(capsys.readouterr().out) if json_out else buffer.getvalue()


def test_the_command_judges_the_paper_and_profile_asked_for(tmp_path, capsys):
    results = _results(tmp_path)
    everything = _command(results, capsys)
    assert {r["paper"] for r in everything} == {"fyvi"}
    ami = [r for r in everything if r["id"] == "fyvi-t1-sparse-ami"]
    assert sorted(r["profile"] for r in ami) == ["paper", "quick"]
    quick = [r for r in _command(results, capsys, profile="quick") if r["id"] == "fyvi-t1-sparse-ami"]
    assert [(r["profile"], r["headline"]) for r in quick] == [("quick", True)]
    assert {r["paper"] for r in _command(results, capsys, paper="vr")} == {"vr"}


@pytest.mark.slow
def test_the_commands_table_is_the_short_one_unless_asked(tmp_path, capsys):
    results = _results(tmp_path)
    short = _command(results, capsys, json_out=False)
    assert "fyvi-t1-sparse-ami" in short and "also at" not in short and "  claim:" not in short
    assert "also at" in _command(results, capsys, json_out=False, all_profiles=True)
    long = _command(results, capsys, json_out=False, long=True)
    assert "  claim:" in long and "  says:" in long and "(not the headline)" not in long
    assert "(not the headline)" in _command(results, capsys, json_out=False, long=True, all_profiles=True)


def test_the_command_into_a_closed_pipe_ends_quietly_and_sends_the_rest_nowhere(tmp_path, monkeypatch):
    from rich.console import Console

    from fyexp.claims.command import claims_command

    results = _results(tmp_path)
    target = tmp_path / "stdout"
    fd = os.open(target, os.O_WRONLY | os.O_CREAT)

    class Closed(io.StringIO):
        def write(self, _):
            raise BrokenPipeError

        def fileno(self):
            return fd

    monkeypatch.setattr("sys.stdout", Closed())
    try:
        claims_command("fyvi", None, True, results, None, Console(file=io.StringIO()))  # no exception
        os.write(fd, b"what was still buffered")
    finally:
        os.close(fd)
    assert target.read_bytes() == b""  # the descriptor now writes to the null device


def test_the_json_a_script_reads_has_every_field_of_the_verdict():
    from fyexp.claims.render import as_json
    from fyexp.claims.verdicts import Verdict

    claim = a_claim(note="n")
    v = Verdict(claim, "cpu", "not resolved at this n", "0.42 vs 0.3", "4 pairs", ["a note"], low=-0.1, high=0.3,
                estimate=0.12, rows_read=8, stale=frozenset({("s", 1), ("s", 2)}), dirty=frozenset({("d", 1)}),
                n_to_resolve=17, headline=True)
    row, = json.loads(as_json([v]))
    assert row == {"id": "toy", "paper": "fyvi", "kind": "claim", "where": "Table 9", "line": 12,
                   "quote": "the quote of toy", "claim": "toy beats the baseline", "paper_numbers": "0.31 vs 0.27",
                   "profile": "cpu", "profile_kind": "reduced", "headline": True, "verdict": "not resolved at this n",
                   "reduced": True, "ours": "0.42 vs 0.3", "n": "4 pairs", "estimate": 0.12, "low": -0.1, "high": 0.3,
                   "n_to_resolve": 17, "stale_rows": 2, "dirty_rows": 1, "notes": ["a note"], "reading": "both",
                   "departures": [], "readings_differ": False,
                   "readings": {"both": {"verdict": "not resolved at this n", "profile": "cpu",
                                         "profile_kind": "reduced", "ours": "0.42 vs 0.3", "n": "4 pairs",
                                         "estimate": 0.12, "low": -0.1, "high": 0.3, "notes": ["a note"]}}}
    at_paper, = json.loads(as_json([Verdict(a_claim("c", kind="check", note="w"), "paper", "supported")]))
    assert (at_paper["kind"], at_paper["profile_kind"], at_paper["reduced"], at_paper["headline"]) == (
        "check", "paper", False, False)


def test_a_wrapped_line_continues_indented_so_that_column_0_holds_only_what_starts_a_block():
    from fyexp.claims.render import long_lines, short_lines

    words = "1677.2 ± 3.4, 1672.8 ± 5.9, 1639.3 ± 4.5 " * 3
    claim = a_claim(numbers=words)
    many = [a_verdict(a_claim(f"c{i}", numbers=words), "reversed" if i % 2 else "supported") for i in range(40)]
    verdicts = [a_verdict(claim, ours=words, notes=[words]), a_verdict(claim, "reversed", "cpu", headline=False,
                                                                       ours=words, notes=[words]), *many]
    short = short_lines(verdicts, 60, all_profiles=True)
    starts = [line for line, _ in short if line and not line[0].isspace()]
    ids = {v.claim.id for v in verdicts}
    assert all(line.split()[0] in ids | {"id", "fyvi:", "*", "[note"} for line in starts), starts  # [note k]: shared
    assert sum(line.startswith("fyvi: 41 claims") for line in starts) == 1 and len(short) > len(verdicts) * 3
    long = long_lines(verdicts, 60)
    starts = [line for line, _ in long if line and not line[0].isspace()]
    assert all(line.split()[0] in ids | {"fyvi:"} for line in starts), starts
    field = [line for line, _ in long if line.startswith("  paper:")][0]
    follow = long[[line for line, _ in long].index(field) + 1][0]
    assert follow.startswith(" " * 10) and not follow.startswith(" " * 11)  # under the field's text


@pytest.mark.parametrize("length, own_line", [(31, False), (32, True)])
def test_an_id_too_long_for_its_column_gets_a_line_of_its_own(length, own_line):
    from fyexp.claims.render import short_lines

    cid = "c" * length
    lines = [line for line, _ in short_lines([a_verdict(a_claim(cid))])]
    assert (lines[1] == cid) == own_line and lines[1 + own_line].split()[-5:] == (
        ["supported", "4", "pairs", "paper", "0.42", "vs", "0.3"][-5:])


def test_the_index_summary_keeps_its_note_out_of_the_table():
    from fyexp.claims.render import summary_markdown

    lines = summary_markdown([a_verdict(a_claim())], {})
    assert lines[2].startswith("| `fyvi` |") and lines[3] == "" and lines[4].startswith("Counts are claims")


def test_the_command_reads_the_experiments_folder_it_is_given(tmp_path):
    from rich.console import Console

    from fyexp.claims.command import claims_command

    results = _results(tmp_path)
    empty = tmp_path / "no-experiments"
    empty.mkdir()
    with pytest.raises(FyexpError, match="experiment '.*' does not exist") as info:
        claims_command("fyvi", None, True, results, empty, Console(file=io.StringIO()))
    assert "\n" not in str(info.value)


def test_ours_against_a_constant_prints_as_mean_and_interval_and_a_relative_difference_prints_both_means(tmp_path):
    from scipy import stats

    from tests.claims.test_claims_rules import BASE, HALF, JITTER, claim_of, pair, verdict_of

    claim = claim_of(tmp_path, "    direction: greater\n    than: 2.8\n    a: {method: x}\n")
    ci = stats.ttest_1samp(BASE, 0.0).confidence_interval(0.95)
    v = verdict_of(claim, {"x": BASE})
    assert (v.ours, v.n) == (f"3.05 [{ci.low:.4g}, {ci.high:.4g}] vs 2.8", "4")  # a's mean and interval, not a − 2.8
    one = verdict_of(claim, {"x": np.array([3.5])})
    assert (one.ours, one.n) == ("3.5 vs 2.8", "1")
    relative = pair(tmp_path, extra="    magnitude: 30\n    magnitude_kind: relative\n")
    r = verdict_of(relative, {"x": BASE + 1 + JITTER, "y": BASE})
    assert r.ours == f"4.05 vs 3.05 (+32.8%); diff 1 [{1 - HALF:.4g}, {1 + HALF:.4g}]" and r.n == "4 pairs"


def test_an_experiment_whose_rows_are_all_of_unknown_provenance_is_judged_as_missing_not_a_crash():
    """Rows there, none of them evidence (every record damaged or missing): the experiment has no frame among the
    evidence, and the claim reads 'data missing' — `fyexp report` crashed here with KeyError 'profile'."""
    from fyexp.claims.verdicts import MISSING, judge, split_by_metric

    rows = pd.DataFrame({"experiment": ["gmm-clustering"] * 2, "profile": ["paper"] * 2, "cell": ["a", "b"],
                         "metric": ["adjusted_mi"] * 2, "value": [0.3, 0.4], "status": ["ok"] * 2,
                         "freshness": ["unknown provenance"] * 2})
    verdicts = judge(a_claim(), {"gmm-clustering": rows}, by_metric=split_by_metric({}))
    assert [v.verdict for v in verdicts] == [MISSING]
