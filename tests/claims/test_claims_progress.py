"""fyexp/claims/progress.py: a ``data missing`` verdict says how many of the profile's declared cells have rows."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from fyexp.claims.progress import cells_with_rows, declared_count, unfinished
from fyexp.claims.verdicts import recorded_reasons
from fyexp.spec.specs import load_spec


def _spec(tmp_path):
    """A gmm-clustering spec whose profile ``three`` declares 3 settings × 3 seeds = 9 cells, ``two`` 2 × 1 = 2
    (a method set to null is not run), and ``broken`` does not validate."""
    body = {"name": "toy-gmm", "title": "t", "runner": "gmm_clustering", "paper": "fyvi", "description": "d",
            "defaults": {"n_iter": 5, "grid": {"standard": {}, "sparse": {"rho": [1.5, 2.0]}}},
            "profiles": {"three": {"seeds": [0, 1, 2]},
                         "two": {"seeds": [4], "grid": {"sparse": None, "hard": {}}},
                         "broken": {"seeds": [0], "n_iter": "many"}}}
    (tmp_path / "toy-gmm.yaml").write_text(yaml.safe_dump(body), encoding="utf-8")
    return load_spec("toy-gmm", tmp_path)


def _rows(cells: dict[str, list[str]]) -> pd.DataFrame:
    """Two metric rows per cell (a cell is counted once however many rows it has)."""
    return pd.DataFrame([{"profile": p, "cell": c, "metric": m, "value": 1.0}
                         for p, names in cells.items() for c in names for m in ("a", "b")])


def test_declared_count_is_the_grid_times_the_seeds_of_a_profile_the_spec_names(tmp_path):
    spec = _spec(tmp_path)
    assert declared_count(spec, "three") == 9
    assert declared_count(spec, "two") == 2


@pytest.mark.parametrize("profile", ["three+n_iter=3", "paper", "three~superseded-ab12", "broken"])
def test_declared_count_is_none_for_a_variant_an_unknown_profile_or_one_that_no_longer_validates(tmp_path, profile):
    assert declared_count(_spec(tmp_path), profile) is None


def test_cells_with_rows_counts_distinct_cells_at_that_profile_only():
    frame = _rows({"three": ["c1", "c2", "c3"], "two": ["c1", "c9"]})
    assert cells_with_rows(frame, "three") == 3
    assert cells_with_rows(frame, "two") == 2
    assert cells_with_rows(frame, "quick") == 0
    assert cells_with_rows(None, "three") == 0
    assert cells_with_rows(pd.DataFrame(), "three") == 0
    assert cells_with_rows(frame.drop(columns="cell"), "three") == 0
    assert cells_with_rows(frame.drop(columns="profile"), "three") == 0


def test_unfinished_notes_a_run_with_fewer_cells_than_declared_once_per_experiment(tmp_path):
    specs = {"toy-gmm": _spec(tmp_path)}
    frames = {"toy-gmm": _rows({"three": [f"c{i}" for i in range(8)], "two": ["c1", "c2"]})}
    assert unfinished(["toy-gmm", "toy-gmm"], frames, specs, "three") == ["toy-gmm at three: 8 of 9 cells have rows"]
    assert unfinished(["toy-gmm"], frames, specs, "two") == []           # all 2 declared cells have rows
    assert unfinished(["toy-gmm"], {}, specs, "two") == ["toy-gmm at two: 0 of 2 cells have rows"]
    assert unfinished(["toy-gmm"], frames, {}, "three") == []            # no spec: nothing to count against
    assert unfinished(["other", "toy-gmm"], frames, specs, "three") == ["toy-gmm at three: 8 of 9 cells have rows"]
    assert unfinished(["toy-gmm"], frames, specs, "three+n_iter=3") == []  # a variant declares no cells of its own
    nine = {"toy-gmm": _rows({"three": [f"c{i}" for i in range(9)]})}
    assert unfinished(["toy-gmm"], nine, specs, "three") == []


def test_a_data_missing_verdict_says_how_far_the_profiles_run_has_got(tmp_path):
    from fyexp.claims.model import Claim, Selector
    from fyexp.claims.verdicts import MISSING, SUPPORTED, judge

    spec = _spec(tmp_path)
    claim = Claim("toy", "fyvi", "T", "x beats y", "greater",
                  {"a": Selector("toy-gmm", "adjusted_mi", method="x"),
                   "b": Selector("toy-gmm", "adjusted_mi", method="y")}, quote="q", line=3)

    def frame(methods, n=4):
        return {"toy-gmm": pd.DataFrame([
            {"experiment": "toy-gmm", "profile": "three", "method": m, "metric": "adjusted_mi",
             "value": v + 0.01 * i, "seed": i, "params": "{}", "status": "ok", "git_commit": "abc", "cell": f"{m}{i}",
             "freshness": "fresh"} for m, v in methods.items() for i in range(n)])}

    v, = judge(claim, frame({"x": 0.9}), {"toy-gmm": spec}, profile="three")
    assert (v.verdict, v.notes) == (MISSING, ["no rows for toy-gmm:adjusted_mi[method=y]",
                                              "toy-gmm at three: 4 of 9 cells have rows"])
    assert v.label.endswith("; toy-gmm at three: 4 of 9 cells have rows")
    v, = judge(claim, frame({"x": 0.9}, n=9), {"toy-gmm": spec}, profile="three")  # every declared cell has rows
    assert (v.verdict, v.notes) == (MISSING, ["no rows for toy-gmm:adjusted_mi[method=y]"])
    v, = judge(claim, frame({"x": 0.9}), {"toy-gmm": spec}, profile="two")  # no rows at all at the profile asked
    assert (v.verdict, v.notes) == (MISSING, ["no rows for toy-gmm:adjusted_mi[method=y]",
                                              "toy-gmm at two: 0 of 2 cells have rows"])
    v, = judge(claim, frame({"x": 0.9, "y": 0.1}), {"toy-gmm": spec}, profile="three")  # judged: no count
    assert v.verdict == SUPPORTED and not any("cells have rows" in n for n in v.notes)
    assert np.isfinite(v.estimate)


def _unmeasured_rows() -> pd.DataFrame:
    """fid rows a cell wrote as not measured (status missing, the reason in label), beside measured ones."""
    def row(profile, method, status, label, value=np.nan, params='{"latent": 2, "value": 0.001}'):
        return {"experiment": "toy", "profile": profile, "method": method, "metric": "fid", "value": value,
                "status": status, "label": label, "params": params, "setting": "Fashion-MNIST", "cell": "c"}

    rows = pd.DataFrame([row("claims", "L", "missing", "no weights here"),
                         row("claims", "L", "missing", "no weights here"),
                         row("cpu", "L", "missing", "no weights here"),
                         row("cpu", "L", "missing", np.nan),                       # a reason not written
                         row("cpu", "L", "missing", "  "),
                         row("claims", "L", "missing", "other value", params='{"latent": 2, "value": 1.0}'),
                         row("claims", "Lbeta", "missing", "other method"),
                         row("claims", "L", "ok", "measured", value=70.0),
                         row("claims", "L", "failed", "a crash")])
    return rows.assign(cell=[f"c{i}" for i in range(len(rows))])   # one row per cell (seeds differ)


def test_recorded_reasons_groups_the_unmeasured_rows_a_side_names_by_their_label():
    from fyexp.claims.model import Selector

    # the selector's setting and table are paper keys, which only a measured row carries: not matched here
    side = Selector("toy", "fid", method="L", setting="Fashion-MNIST dim(z)=2", table="9", paper_row="L_0.001",
                    params=(("latent", 2), ("value", 0.001)))
    frame = _unmeasured_rows()
    assert recorded_reasons(frame, side) == ["not measured in 3 of its rows (at claims, cpu): no weights here",
                                            "not measured in 2 of its rows (at cpu): no reason recorded"]
    assert recorded_reasons(frame, side, "claims") == ["not measured in 2 of its rows (at claims): no weights here"]
    assert recorded_reasons(frame, side, "paper") == []
    other = Selector("toy", "fid", method="L", params=(("value", 1.0),))
    assert recorded_reasons(frame, other) == ["not measured in 1 of its rows (at claims): other value"]
    assert recorded_reasons(frame, Selector("toy", "frechet_proxy", method="L")) == []
    assert recorded_reasons(frame.drop(columns="label"), side, "claims") == [
        "not measured in 2 of its rows (at claims): no reason recorded"]
    assert recorded_reasons(frame.drop(columns="status"), side) == []
    assert recorded_reasons(None, side) == [] and recorded_reasons(pd.DataFrame(), side) == []


def test_a_data_missing_verdict_carries_the_reason_its_rows_record_before_the_progress(tmp_path):
    from fyexp.claims.model import Claim, Selector
    from fyexp.claims.verdicts import MISSING, judge

    spec = _spec(tmp_path)
    claim = Claim("toy", "fyvi", "T", "x beats y", "greater",
                  {"a": Selector("toy-gmm", "adjusted_mi", method="x"),
                   "b": Selector("toy-gmm", "adjusted_mi", method="y")}, quote="q", line=3)
    rows = [{"experiment": "toy-gmm", "profile": "three", "method": m, "metric": "adjusted_mi",
             "value": 0.9 if status == "ok" else np.nan, "seed": i, "params": "{}", "status": status,
             "label": "" if status == "ok" else "needs weights", "git_commit": "abc", "cell": f"{m}{i}",
             "freshness": "fresh"} for m, status in (("x", "ok"), ("y", "missing")) for i in range(4)]
    rows.append({**rows[-1], "profile": "two", "label": "not at three", "cell": "y9"})  # another profile's reason
    v, = judge(claim, {"toy-gmm": pd.DataFrame(rows)}, {"toy-gmm": spec}, profile="three")
    assert (v.verdict, v.notes) == (MISSING, ["no rows for toy-gmm:adjusted_mi[method=y]",
                                              "not measured in 4 of its rows (at three): needs weights",
                                              "toy-gmm at three: 8 of 9 cells have rows"])
    v = judge(claim, {"toy-gmm": pd.DataFrame(rows)}, {"toy-gmm": spec})   # every profile with rows
    assert [(x.profile, x.verdict, x.notes[1:]) for x in v] == [
        ("three", MISSING, ["not measured in 4 of its rows (at three): needs weights",
                            "toy-gmm at three: 8 of 9 cells have rows"])]
    v, = judge(claim, {"toy-gmm": pd.DataFrame(rows)}, {"toy-gmm": spec}, profile="two")  # no rows at all there
    assert v.notes == ["no rows for toy-gmm:adjusted_mi[method=y]", "not measured in 1 of its rows (at two): "
                       "not at three", "toy-gmm at two: 1 of 2 cells have rows"]  # the cell ran
