"""The gaps the whole-package mutation run left (``fyexp/claims/MUTATION.md``, "Left (a real gap)"), each closed by
a test that fails under its mutant: a claim naming both ``b`` and ``than`` (refused at load), the derived TV-EM
rows' source and guard, the results-folder path of :func:`~fyexp.claims.verdicts.load_frames` and
:func:`~fyexp.claims.command.verdicts_for` (the experiments folder, the names, the derived rows' folder), and
wrapped titles, summaries and about lines whose continuation must never start at column 0.

Values are toy ones (the toy experiment of ``tests/specs``, a gmm-clustering ``adjusted_mi``), never the papers'.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from fyexp.claims.model import load_claims
from fyexp.core.errors import FyexpError
from fyexp.store.plain import safe_yaml
from tests.conftest import ROOT, TOY_SPECS
from tests.claims.test_claims_mutation_edges import a_claim, a_verdict, refused, toy
from tests.claims.test_claims_render import _results


# ---- a constant in place of b, never beside it ------------------------------------------------------------------
@pytest.mark.parametrize("direction, extra", [("greater", {}), ("less", {}), ("approx", {"delta": 0.1})])
def test_a_claim_naming_both_b_and_than_is_refused(tmp_path, direction, extra):
    message = refused(tmp_path, [toy(direction=direction, than=0.5, **extra)])
    assert message == "claim 'toy': than: expected either b or than (a constant in place of b), not both, got 0.5"
    claim = load_claims(_written(tmp_path, toy(direction=direction, than=0.5, b=None, **extra)), check=False).claims[0]
    assert (claim.than, set(claim.sides)) == (0.5, {"a"})  # than alone: a against the constant
    claim = load_claims(_written(tmp_path, toy(direction=direction, **extra)), check=False).claims[0]
    assert (claim.than, set(claim.sides)) == (None, {"a", "b"})  # b alone


@pytest.mark.parametrize("direction, extra", [
    ("ratio_below", {"threshold": 0.9}), ("ratio_above", {"threshold": 1.1}),
    ("best_of", {"better": "less", "others": [{"method": "z"}], "b": None}),
    ("fraction", {"at_least": 0.5, "b": None}),
    ("monotone", {"trend": "decreasing", "series": [{"method": "x"}, {"method": "y"}], "a": None, "b": None})])
def test_than_in_a_direction_without_a_side_b_to_replace_is_refused(tmp_path, direction, extra):
    message = refused(tmp_path, [toy(direction=direction, than=2, **extra)])
    assert message == (f"claim 'toy': than: expected no constant for direction '{direction}' (than stands in for b "
                       "in greater, less, approx, noninferior only), got 2")
    assert load_claims(_written(tmp_path, toy(direction=direction, **extra)), check=False).claims[0].than is None


def _written(tmp_path, body: dict):
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump({"claims": [body]}, sort_keys=False))
    return path


def test_against_a_constant_prints_a_against_the_constant_and_a_pair_prints_both(tmp_path):
    """``ours`` and ``n`` of a claim against ``than`` are a's mean against the constant; with a side b, both means."""
    import numpy as np

    from tests.claims.test_claims_rules import pair, verdict_of

    constant = load_claims(_written(tmp_path, toy(than=0.25, b=None)), check=False).claims[0]
    one = verdict_of(constant, {"x": np.array([0.375])})
    assert (one.ours, one.n) == ("0.375 vs 0.25", "1")
    two = verdict_of(pair(tmp_path), {"x": np.array([0.375]), "y": np.array([0.25])})
    assert (two.ours, two.n) == ("0.375 vs 0.25", "1 vs 1")


# ---- the derived TV-EM rows --------------------------------------------------------------------------------------
def _tvem_rows(experiment="tvem-bsc"):
    return pd.DataFrame([{"experiment": experiment, "profile": "cpu", "cell": "tv__seed=3", "metric": m, "value": v,
                          "seed": 3, "git_commit": "abc", "freshness": "fresh"}
                         for m, v in (("free_energy", -41.0), ("log_likelihood", -40.25))])


def _trace(folder, values=(-50.0, -44.0, -44.5, -41.0)):
    fits = folder / "artifacts" / "cpu" / "fits"
    fits.mkdir(parents=True)
    (fits / "tv__seed=3.json").write_text(json.dumps({"free_energy": list(values)}))


def test_the_largest_drop_row_names_the_free_energy_row_it_reads(tmp_path):
    from fyexp.claims.derived import GAP, LARGEST_DROP, with_derived

    _trace(tmp_path)
    out = with_derived("tvem-bsc", _tvem_rows(), tmp_path)
    drop = out[out["metric"] == LARGEST_DROP]
    assert list(drop["value"]) == [0.5] and list(drop["source_metric"]) == ["free_energy"]
    assert list(out[out["metric"] == GAP]["value"]) == [0.75]
    assert out["source_metric"].isna().sum() == 2  # the rows it read are not derived


def test_only_a_derived_experiments_rows_with_cells_are_derived_from(tmp_path):
    from fyexp.claims.derived import with_derived

    _trace(tmp_path)
    other = _tvem_rows("gmm-clustering")  # the same metrics, another experiment: nothing derived
    assert with_derived("gmm-clustering", other, tmp_path) is other
    empty = pd.DataFrame()
    assert with_derived("tvem-bsc", empty, tmp_path) is empty
    cell_less = _tvem_rows().drop(columns="cell")
    assert with_derived("tvem-bsc", cell_less, tmp_path) is cell_less
    assert len(with_derived("tvem-bsc", _tvem_rows(), tmp_path)) == 4


def test_without_a_folder_the_traces_are_read_under_the_working_directory(tmp_path, monkeypatch):
    from fyexp.claims.derived import LARGEST_DROP, with_derived

    _trace(tmp_path, (-50.0, -49.0, -49.125))
    monkeypatch.chdir(tmp_path)
    out = with_derived("tvem-bsc", _tvem_rows(), None)
    assert list(out[out["metric"] == LARGEST_DROP]["value"]) == [0.125]


# ---- the results-folder path ---------------------------------------------------------------------------------------
def test_claim_rows_read_the_traces_in_the_experiments_results_folder(tmp_path, monkeypatch):
    import fyexp.run.spec_freshness
    import fyexp.store.provenance.freshness as fr
    from fyexp.claims.derived import LARGEST_DROP
    from fyexp.claims.verdicts import claim_rows

    asked = []

    def row_freshness(spec, frame, folder, *, code):  # the settings axis, as asked: the spec and folder given
        asked.append((spec, len(frame), folder, code))
        return pd.Series([fr.Freshness("k", "r", None, False)] * len(frame), index=frame.index, dtype=object)

    monkeypatch.setattr(fyexp.run.spec_freshness, "row_freshness", row_freshness)
    _trace(tmp_path, (-50.0, -45.0, -45.375, -41.0))
    spec = object()
    out = claim_rows("tvem-bsc", spec, _tvem_rows(), tmp_path)
    assert list(out[out["metric"] == LARGEST_DROP]["value"]) == [0.375]
    assert asked == [(spec, 2, tmp_path, False)]


def _toy_results(root):
    from fyexp.store.results import Cell, ResultStore

    prov = {"git_commit": "unknown", "fyexp_version": "0", "device": "cpu", "wall_time_s": 3.0,
            "timestamp": "2026-01-01T00:00:00+00:00"}
    store = ResultStore(root, "toy")
    for seed in (0, 1):
        store.write_cell("paper", Cell("toy", seed, {"x": 1.5}), [{"metric": "adjusted_mi", "value": 0.5 + seed}],
                         prov)
    return root


def test_load_frames_reads_the_specs_of_the_experiments_folder_it_is_given(tmp_path):
    from fyexp.claims.verdicts import load_frames

    frames, specs = load_frames(_toy_results(tmp_path / "results"), TOY_SPECS, ["toy", "no-such", "toy"])
    assert list(frames) == ["toy"] and list(specs) == ["toy"] and specs["toy"].name == "toy"
    assert sorted(frames["toy"]["value"]) == [0.5, 1.5] and "freshness" in frames["toy"]


def _experiments(tmp_path):
    """The shipped specs, gmm-clustering with one more profile (``mine``), and the toy spec with its own
    (``onlytoy``)."""
    folder = tmp_path / "experiments"
    shutil.copytree(ROOT / "experiments", folder)
    for path, profile in ((folder / "gmm-clustering.yaml", "mine"), (folder / "toy.yaml", "onlytoy")):
        if not path.exists():
            shutil.copy(TOY_SPECS / "toy.yaml", path)
        spec = yaml.safe_load(path.read_text())
        spec["profiles"][profile] = {"seeds": [7]}
        path.write_text(yaml.safe_dump(spec, sort_keys=False))
    return folder


def test_verdicts_for_knows_the_profiles_of_its_papers_experiments_in_the_folder_given(tmp_path):
    from fyexp.claims.command import verdicts_for

    results, experiments = _results(tmp_path), _experiments(tmp_path)
    claims, verdicts = verdicts_for(results, "fyvi", "mine", experiments)  # gmm-clustering's profile there
    assert claims.claims and {v.claim.paper for v in verdicts} == {"fyvi"}
    with pytest.raises(FyexpError, match="unknown profile 'mine'"):
        verdicts_for(results, "fyvi", "mine")  # not in the shipped specs
    with pytest.raises(FyexpError, match="unknown profile 'onlytoy'") as info:
        verdicts_for(results, "fyvi", "onlytoy", experiments)  # a profile of an experiment no claim reads
    assert "mine" in str(info.value) and "onlytoy" not in str(info.value).split("expected one of")[1]


# ---- wrapped lines: a continuation is indented, never at column 0 -------------------------------------------------
def _indents(lines, first):
    """The indent of each line of the wrapped block starting with ``first``."""
    text = [line for line, _ in lines]
    start = next(i for i, line in enumerate(text) if line.startswith(first))
    block = [text[start]]
    for line in text[start + 1:]:
        if not line or not line[0].isspace():
            break
        block.append(line)
    return [len(line) - len(line.lstrip(" ")) for line in block]


LONG_ID = "an-id-" + "long" * 9  # longer than the id column and than a narrow line


def test_a_long_title_wraps_with_its_continuation_indented_two_columns():
    from fyexp.claims.render import long_lines

    v = a_verdict(a_claim(LONG_ID), "not resolved at this n", "cpu", headline=True)
    lines = long_lines([v], width=48)
    title = [line for line, style in lines if style == "bold"]
    assert len(title) >= 2 and title[0].startswith(f"{LONG_ID}  ") and all(line.startswith("  ") and line[2] != " "
                                                           for line in title[1:])
    assert " ".join(" ".join(title).split()) == (
        f"{LONG_ID} not resolved at this n (reduced profile) n = 4 pairs profile cpu")


def test_a_long_summary_line_wraps_with_its_continuation_indented_two_columns():
    from fyexp.claims.render import long_lines, short_lines

    verdicts = [a_verdict(a_claim(f"c{i}"), v, stale={(f"s{i}", 1)}, dirty={(f"d{i}", 1)})
                for i, v in enumerate(("supported", "reversed", "not supported", "supported in direction, not in "
                                                                                 "magnitude"))]
    for lines in (short_lines(verdicts, 40), long_lines(verdicts, 40)):
        indents = _indents(lines, "fyvi: 4 claims")
        assert len(indents) >= 3 and indents[0] == 0 and set(indents[1:]) == {2}, indents


def test_the_about_line_and_the_verdict_line_wrap_under_their_own_indents():
    from fyexp.claims.render import short_lines

    v = a_verdict(a_claim("c1", numbers="0.61 vs 0.58 vs 0.57 vs 0.55 vs 0.52"), ours="0.43 vs 0.41 " * 8)
    lines = short_lines([v], 72)
    about = _indents(lines, "  fyvi Table 9")
    assert len(about) >= 2 and about[0] == 2 and set(about[1:]) == {4}, about
    verdict = _indents(lines, "c1 ")  # the verdict line, wrapped, then the about line under it
    assert verdict == [0, 6, 6] + about, verdict


def test_a_verdict_without_a_profile_prints_a_dash_in_the_long_title_and_a_long_id_plain():
    from fyexp.claims.render import long_lines, short_lines

    v = a_verdict(a_claim("c9"), "not run", None, n=None, ours=None)
    assert long_lines([v])[0] == ("c9  not run  n = —  profile —", "bold")
    lines = short_lines([a_verdict(a_claim(LONG_ID))])
    assert lines[1] == (LONG_ID, "") and lines[2][1] == ""  # the id and its verdict line: plain, not dimmed
    assert lines[0][1] == "bold" and all(style == "dim" for _, style in lines[3:4])  # the about line dimmed


def test_load_frames_reads_every_experiment_of_the_folder_by_default_each_against_its_own_results(tmp_path,
                                                                                                   monkeypatch):
    """Without names: every experiment with a spec; each experiment's rows pass :func:`claim_rows` with its name,
    spec, results folder and their judgement, :func:`row_freshness` against that folder (once, both axes), whose
    code axis is their freshness."""
    import fyexp.claims.verdicts as verdicts
    import fyexp.run.spec_freshness
    import fyexp.store.provenance.freshness
    from fyexp.store.provenance.freshness import Freshness

    results = _toy_results(tmp_path / "results")
    asked = []
    real = verdicts.claim_rows

    def claim_rows(name, spec, frame, folder, judged):
        asked.append((name, spec.name, len(frame), folder, list(judged.index) == list(frame.index)))
        return real(name, spec, frame, folder, judged)

    monkeypatch.setattr(verdicts, "claim_rows", claim_rows)
    monkeypatch.setattr(fyexp.run.spec_freshness, "row_freshness", lambda spec, frame, folder: pd.Series(
        [Freshness("k", "r", f"{spec.name} at {folder.name}", False)] * len(frame), index=frame.index, dtype=object))
    frames, specs = verdicts.load_frames(results, TOY_SPECS)
    assert list(frames) == list(specs) == ["toy"]
    assert asked == [("toy", "toy", 2, results / "toy", True)]
    assert list(frames["toy"]["freshness"]) == ["toy at toy", "toy at toy"]


def test_verdicts_for_names_the_missing_folder_and_the_known_profiles_in_full(tmp_path):
    from fyexp.claims.command import known_profiles, verdicts_for
    from fyexp.claims.verdicts import load_frames

    with pytest.raises(FyexpError) as info:
        verdicts_for(tmp_path / "absent", "fyvi")
    assert str(info.value) == (f"--results-dir / FYEXP_RESULTS_DIR: '{tmp_path / 'absent'}' does not exist; expected "
                               "the folder of result CSVs (`fyexp run` writes it)")
    results = _results(tmp_path)
    with pytest.raises(FyexpError) as info:
        verdicts_for(results, "fyvi", "nope")
    claims = load_claims().for_paper("fyvi")
    known = known_profiles(*load_frames(results, None, [e for c in claims.claims for e in c.experiments]))
    assert str(info.value) == f"--profile: unknown profile 'nope'; expected one of {', '.join(sorted(known))}"
    assert len(known) > 2 and "paper" in known


# ---- the interval behind a verdict (fyexp.claims.stats) ------------------------------------------------------------
def _side(values, **keys):
    return pd.DataFrame({"value": values, **keys})


def test_too_few_values_on_either_unpaired_side_give_no_interval_and_two_each_give_welchs():
    from scipy import stats as sps

    from fyexp.claims.stats import difference

    for a, b in (([1.0], [4.0, 5.0, 7.0]), ([1.0, 2.0, 4.0], [5.0])):
        d = difference(_side(a), _side(b))
        assert (d.low, d.high, d.paired, d.n_text()) == (None, None, False, f"{len(a)} vs {len(b)}")
        assert d.mean == pytest.approx(np.mean(a) - np.mean(b)) and not d.has_interval
    d = difference(_side([1.0, 2.0]), _side([4.0, 6.0]))  # two values a side: Welch's interval
    ci = sps.ttest_ind([1.0, 2.0], [4.0, 6.0], equal_var=False).confidence_interval(0.95)
    assert (d.low, d.high, d.n_text(), d.paired) == (pytest.approx(ci.low), pytest.approx(ci.high), "2 vs 2", False)


def test_two_constant_unpaired_sides_give_the_difference_itself_one_varying_side_a_welch_interval():
    from scipy import stats as sps

    from fyexp.claims.stats import difference

    d = difference(_side([0.1, 0.1, 0.1]), _side([0.3, 0.3]))  # (scipy's interval here is off by rounding)
    assert d.low == d.high == d.mean == pytest.approx(-0.2) and d.n_text() == "3 vs 2"
    for a, b in (([2.5, 2.5, 2.5], [1.0, 1.5]), ([2.5, 2.5, 2.5], [1.0, 2.0]), ([2.0, 3.0, 2.5], [1.25, 1.25])):
        d = difference(_side(a), _side(b))
        ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(0.95)
        assert d.low == pytest.approx(ci.low) and d.high == pytest.approx(ci.high) and d.low < d.mean < d.high


def test_two_common_keys_pair_and_constant_differences_give_the_difference_itself():
    from scipy import stats as sps

    from fyexp.claims.stats import difference

    d = difference(_side([3.0, 5.0], seed=[0, 1]), _side([1.0, 2.0], seed=[1, 0]))  # exactly two pairs
    assert d.paired is True and (d.n_a, d.n_b, d.n_text()) == (2, 2, "2 pairs") and d.mean == pytest.approx(2.5)
    ci = sps.ttest_1samp([1.0, 4.0], 0.0).confidence_interval(0.95)  # pairs by seed: 3 − 2, 5 − 1
    assert (d.low, d.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    d = difference(_side([0.1, 0.1, 0.1], seed=[0, 1, 2]), _side([0.0, 0.0, 0.0], seed=[2, 1, 0]))
    assert d.low == d.high == d.mean == pytest.approx(0.1) and d.n_text() == "3 pairs"  # every difference 0.1
    one = difference(_side([3.0, 5.0], seed=[0, 1]), _side([1.0, 2.0], seed=[1, 7]))  # one key in common
    assert one.paired is False and one.n_text() == "2 vs 2"


def test_pairing_columns_only_one_side_has_are_ignored():
    from fyexp.claims.stats import difference

    d = difference(_side([3.0, 5.0, 4.0], seed=[0, 1, 2]), _side([1.0, 2.0, 1.5]))
    assert d.paired is False and d.n_text() == "3 vs 3" and d.mean == pytest.approx(2.5)


def test_rows_pair_on_every_pairing_column_together():
    from fyexp.claims.stats import difference

    keys = {"seed": [0, 0, 1, 1], "split": ["s", "t", "s", "t"]}  # a seed alone or a split alone repeats
    d = difference(_side([3.0, 4.0, 6.0, 5.0], **keys), _side([1.0, 1.5, 2.0, 2.5], **keys))
    assert d.paired is True and d.n_text() == "4 pairs" and d.mean == pytest.approx(2.75)
    # keys joined with a separator: seed 1 / split 11 and seed 11 / split 1 are two keys, not one
    keys = {"seed": ["1", "11"], "split": ["11", "1"]}
    d = difference(_side([3.0, 5.0], **keys), _side([1.0, 2.0], **keys))
    assert d.paired is True and d.n_text() == "2 pairs"


# ---- the stale rows behind a verdict, each once (verdicts._freshness) ---------------------------------------------
def _rows(**sides):
    return {"others": [], "series": [], **sides}


def _frame(experiment, metrics, freshness=None, cell="c1", **extra):
    frame = pd.DataFrame({"experiment": experiment, "profile": "cpu", "cell": cell, "metric": metrics,
                          "value": 0.5, "git_commit": "abc", **extra})
    return frame if freshness is None else frame.assign(freshness=freshness)


def test_stale_rows_are_keyed_by_experiment_profile_cell_and_their_own_metric():
    from fyexp.claims.verdicts import _freshness

    a = _frame("gmm-clustering", ["adjusted_mi", "silhouette"], ["stale", "fresh"], git_commit=["abc+dirty", "abc"])
    b = _frame("nvdm", ["avg_reconstruction_error", "perplexity"], ["stale", "stale"], git_commit="abc+dirty")
    stale, dirty = _freshness(_rows(a=a, b=b), {})
    assert stale == {("gmm-clustering", "cpu", "c1", "adjusted_mi"), ("nvdm", "cpu", "c1", "avg_reconstruction_error"),
                     ("nvdm", "cpu", "c1", "perplexity")}
    assert dirty == {("gmm-clustering", "cpu", "c1", "adjusted_mi"), ("nvdm", "cpu", "c1", "avg_reconstruction_error"),
                     ("nvdm", "cpu", "c1", "perplexity")}  # dirty rows of both experiments
    derived = _frame("tvem-bsc", ["free_energy", "log_likelihood", "free_energy_gap"], ["stale"] * 3,
                     source_metric=[None, None, "free_energy"])  # a derived row counts as the row it reads
    stale, _ = _freshness(_rows(a=derived), {})
    assert stale == {("tvem-bsc", "cpu", "c1", "free_energy"), ("tvem-bsc", "cpu", "c1", "log_likelihood")}
    cell_less = _frame("nvdm", ["perplexity"], ["stale"]).drop(columns="cell")
    assert _freshness(_rows(a=cell_less), {})[0] == {("nvdm", "cpu", "", "perplexity")}


def test_rows_without_freshness_are_judged_by_their_spec_and_skipped_without_one(monkeypatch):
    import fyexp.run.spec_freshness
    import fyexp.store.provenance.freshness as fr
    from fyexp.claims.verdicts import _freshness

    spec = object()
    monkeypatch.setattr(fyexp.run.spec_freshness, "row_freshness", lambda s, frame, settings: pd.Series(
        [fr.Freshness("k", "r", "stale" if s is spec and settings is False else "fresh")] * len(frame),
        index=frame.index, dtype=object))
    first, second = _frame("a-first", ["m"]), _frame("b-second", ["m"], git_commit="abc+dirty")
    stale, dirty = _freshness(_rows(a=first, b=second), {"b-second": spec})  # a-first: no spec, skipped
    assert stale == dirty == {("b-second", "cpu", "c1", "m")}


def test_split_by_metric_skips_empty_or_metric_less_frames_and_goes_on_to_the_next():
    from fyexp.claims.verdicts import split_by_metric

    rows = _frame("nvdm", ["perplexity", "avg_reconstruction_error", "perplexity"])
    out = split_by_metric({"empty": rows.iloc[:0], "no-metric": rows.drop(columns="metric"), "nvdm": rows})
    assert sorted(out) == [("nvdm", ""), ("nvdm", "avg_reconstruction_error"), ("nvdm", "perplexity")]
    assert len(out[("nvdm", "perplexity")]) == 2 and out[("nvdm", "")].empty


def test_a_claim_whose_experiments_have_no_rows_is_not_run_at_the_profile_asked():
    from fyexp.claims.verdicts import NOT_RUN, judge

    for profile in ("cpu", None):
        v, = judge(a_claim(), {"gmm-clustering": pd.DataFrame()}, profile=profile)
        assert (v.verdict, v.profile, v.notes, v.headline) == (NOT_RUN, profile, ["no rows of gmm-clustering"], True)


# ---- the last whole-package run's unclassified survivors (MUTATION.md, "Real gaps left") -------------------------
def test_a_claim_and_a_finding_are_checked_against_the_experiments_folder_given(tmp_path):
    """``check_selector`` looks each name up, and reads each metric, in the experiments folder ``load_claims`` is
    given: the toy experiment exists only in ``tests/specs``."""
    from fyexp.claims.model import Selector, check_selector
    from tests.claims.test_claims_mutation_edges import write

    side = {"experiment": "toy", "metric": "adjusted_mi"}
    finding = {"id": "f", "paper": "fyvi", "claim": "toy", "finding": "a toy finding", "rows": [side]}
    path = write(tmp_path, [toy(rows=side)], [finding])
    loaded = load_claims(path, TOY_SPECS)  # checked against the toy spec: the claim and the finding pass
    assert [s.experiment for s in loaded.claims[0].selectors() + list(loaded.findings[0].rows)] == ["toy"] * 3
    with pytest.raises(FyexpError, match="claim 'toy': experiment 'toy' does not exist"):
        load_claims(path)  # against the shipped experiments
    only_finding = write(tmp_path, [toy(rows=side)], [{**finding, "rows": [{**side, "metric": "toy_nothing"}]}],
                         name="finding.yaml")
    with pytest.raises(FyexpError, match="finding 'f': experiment 'toy' writes no metric 'toy_nothing'"):
        load_claims(only_finding, TOY_SPECS)
    assert check_selector(Selector("toy", "adjusted_mi"), "claim 'c'", path, TOY_SPECS) is None
    with pytest.raises(FyexpError) as info:
        check_selector(Selector("toy", "silhouette_zz"), "claim 'c'", tmp_path / "x.yaml", TOY_SPECS)
    assert str(info.value) == f"{tmp_path / 'x.yaml'}: claim 'c': experiment 'toy' writes no metric 'silhouette_zz'"


def test_a_file_that_is_no_yaml_or_no_claims_mapping_is_named_with_the_yaml_problem_on_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("claims:\n  - id: a\n   paper: [unclosed\n")
    with pytest.raises(yaml.YAMLError) as parsed:
        safe_yaml(bad.read_text())   # the parser fyexp reads claims with (libyaml's, where PyYAML has it)
    problem = " ".join(str(parsed.value).split())
    assert "line 3" in problem and "\n" in str(parsed.value)  # YAML's own message is several lines
    with pytest.raises(FyexpError) as info:
        load_claims(bad, check=False)
    assert str(info.value) == f"{bad}: not valid YAML ({problem})"
    bad.write_text("- claims\n")
    with pytest.raises(FyexpError) as info:
        load_claims(bad, check=False)
    assert str(info.value) == f"{bad}: top level: expected a mapping with a list 'claims' (and optionally 'findings')"


def test_the_claims_file_is_read_as_utf8_whatever_the_locale(tmp_path):
    """A quote's dash or ≈ is UTF-8 in the file; under the C locale (ASCII) it must still read."""
    import locale

    path = tmp_path / "claims.yaml"
    path.write_text(yaml.safe_dump({"claims": [toy(quote="a — b ≈ c")]}, allow_unicode=True), encoding="utf-8")
    assert "—".encode() in path.read_bytes()  # written as UTF-8, not escaped
    saved = locale.setlocale(locale.LC_CTYPE)
    try:
        locale.setlocale(locale.LC_CTYPE, "C")
        quote = load_claims(path, check=False).claims[0].quote
    finally:
        locale.setlocale(locale.LC_CTYPE, saved)
    assert quote == "a — b ≈ c"


def test_select_reads_a_frame_without_status_params_or_the_columns_a_selector_names():
    """Rows without a ``status`` column are ok; a value that is no number is dropped; the metric filters beside
    every other column; a column the frame lacks selects no row."""
    from fyexp.claims.model import Selector
    from fyexp.claims.verdicts import select

    frame = pd.DataFrame({"experiment": "e", "metric": ["m", "m", "m", "n"], "method": "x", "table": "3",
                          "value": [1.5, 2.5, "n/a", 4.0]})
    assert list(select(frame, Selector("e", "m"))["value"]) == [1.5, 2.5]
    assert list(select(frame, Selector("e", "m", method="x"))["value"]) == [1.5, 2.5]  # not metric n's row
    assert list(select(frame, Selector("e", "m", table="3.0"))["value"]) == [1.5, 2.5]
    assert select(frame, Selector("e", "m", method="y")).empty
    assert select(frame, Selector("e", "m", paper_row="P")).empty  # no paper_row column
    assert select(frame.drop(columns="table"), Selector("e", "m", table="3")).empty  # no table column
    with_status = frame.assign(status=["ok", "failed", "ok", "ok"])
    assert list(select(with_status, Selector("e", "m", method="x"))["value"]) == [1.5]


def _two_sided(b_method="y"):
    from fyexp.claims.model import Claim, Selector

    return Claim("two", "fyvi", "Table 9", "x beats y", "greater",
                 {"a": Selector("gmm-clustering", "adjusted_mi", method="x"),
                  "b": Selector("gmm-clustering", "adjusted_mi", method=b_method)}, quote="q", line=3)


def test_judge_at_a_profile_asked_judges_its_rows_and_names_the_missing_side_when_it_has_none():
    from fyexp.claims.verdicts import MISSING, SUPPORTED, judge
    from tests.claims.test_claims_rules import frames

    cpu = frames({"x": np.array([0.9, 0.8, 0.85, 0.95]), "y": np.array([0.2, 0.3, 0.25, 0.1])}, profile="cpu")
    quick = frames({"x": np.array([0.1]), "y": np.array([0.6])}, profile="quick")
    both = {"gmm-clustering": pd.concat([cpu["gmm-clustering"], quick["gmm-clustering"]], ignore_index=True)}
    v, = judge(_two_sided(), both, profile="cpu")
    assert (v.profile, v.verdict, v.headline) == ("cpu", SUPPORTED, True)
    v, = judge(_two_sided(), both, profile="paper")  # no rows at that profile
    assert (v.profile, v.verdict, v.notes) == ("paper", MISSING, ["no rows for gmm-clustering:adjusted_mi[method=x]"])
    v, = judge(_two_sided("z"), both, profile="paper")  # the side with no rows anywhere is named first
    assert (v.profile, v.verdict, v.notes) == ("paper", MISSING, ["no rows for gmm-clustering:adjusted_mi[method=z]"])


def test_a_claim_on_two_experiments_without_rows_names_both():
    from fyexp.claims.model import Claim, Selector
    from fyexp.claims.verdicts import NOT_RUN, judge

    claim = Claim("two", "fyvi", "T", "t", "greater", {"a": Selector("gmm-clustering", "adjusted_mi"),
                                                          "b": Selector("nvdm", "perplexity")}, quote="q", line=3)
    v, = judge(claim, {"gmm-clustering": pd.DataFrame(), "nvdm": pd.DataFrame()}, profile="cpu")
    assert (v.verdict, v.profile, v.notes) == (NOT_RUN, "cpu", ["no rows of gmm-clustering, nvdm"])


# ---- claims.yaml's keys on the declared settings (fyexp.claims.keys) ---------------------------------------------
def test_what_a_key_expects_is_named_by_its_domain_else_by_its_type_null_only_where_allowed():
    from typing import Annotated

    from fyexp.claims.keys import Among, Says
    from fyexp.core.constraints import describe

    assert describe(str | float) == "a string or a number"  # no null: none said
    assert describe(float | None) == "a number or null"
    assert describe(Annotated[str, Among(("p", "q"))] | None) == "one of p, q or null"
    assert describe(Annotated[dict, Says("a toy mapping")]) == "a toy mapping"
