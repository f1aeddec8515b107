"""The index says why each stale row is stale (issue 29: "none of them unexplained"): the report groups the stale
rows of each profile by why their fingerprint does not clear them, and lists them under the runs table."""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from fyexp.store.provenance.freshness import BEHAVIOUR_UNCHANGED, CURRENT, STALE, Freshness
from fyexp.report import index, runs


def _frame(cells: list[tuple[str, str]]) -> pd.DataFrame:
    return pd.DataFrame({"profile": [p for p, _ in cells], "cell": [c for _, c in cells], "status": "ok",
                         "git_commit": "abc", "seed": 0, "method": "m", "params": "{}", "metric": "a", "value": 1.0})


def test_stale_rows_are_counted_by_their_reason_per_profile(monkeypatch):
    cells = [("paper", "c1"), ("paper", "c1"), ("paper", "c2"), ("paper", "c3"), ("cpu", "c4"), ("cpu", "c5")]
    verdict = {"c1": Freshness(STALE, "files differ; no fingerprint of toy was kept at abc", STALE, False,
                               "no fingerprint of toy was kept at abc"),
               "c2": Freshness(STALE, "files differ; the fingerprint of toy changed since abc", STALE, False,
                               "the fingerprint of toy changed since abc"),
               "c3": Freshness(BEHAVIOUR_UNCHANGED, "same fingerprint", BEHAVIOUR_UNCHANGED, False),
               "c4": Freshness(CURRENT, "as at HEAD", "fresh", False),
               "c5": Freshness(STALE, "files differ", STALE, False)}   # no experiment name: nothing compared
    asked = []

    def judged(spec, frame, folder=None, *, code=True, settings=True):
        asked.append((len(frame), code))
        found = [verdict[c] if code else Freshness(CURRENT, "settings only", None, False) for c in frame["cell"]]
        return pd.Series(found, index=frame.index, dtype=object)

    monkeypatch.setattr(runs, "row_freshness", judged)
    monkeypatch.setattr(runs, "planned_seeds", lambda *a, **k: 1)
    frame = _frame(cells)
    found = runs.profile_runs(SimpleNamespace(name="toy"), frame)
    assert found["paper"].stale_reasons == (("no fingerprint of toy was kept at abc", 2),
                                            ("the fingerprint of toy changed since abc", 1))
    assert found["paper"].stale_rows == 3 and found["paper"].behaviour_unchanged_rows == 1
    assert found["cpu"].stale_reasons == (("code changed (no fingerprint compared)", 1),)
    assert asked == [(6, True)]  # judged once: the code axis was judged with the rows
    # a frame that comes with its freshness column (the report's) is judged again for its stale rows only
    asked.clear()
    with_column = frame.assign(freshness=[verdict[c].code for c in frame["cell"]])
    again = runs.profile_runs(SimpleNamespace(name="toy"), with_column)
    assert again["paper"].stale_reasons == found["paper"].stale_reasons
    assert asked == [(6, False), (4, True)]


def test_the_index_lists_each_reason_under_the_runs_table():
    run = runs.ProfileRun(profile="paper", planned_seeds=1, cells_ok=2, cells_failed=0, failed_cells=(),
                          seeds_ok=(0,), rows=5, dirty_rows=0, stale_rows=3, unknown_rows=0, commits=("abc",),
                          stale_reasons=(("no fingerprint of toy was kept at abc", 2),
                                         ("the fingerprint of toy changed since abc", 1)))
    fresh = runs.ProfileRun(profile="cpu", planned_seeds=1, cells_ok=1, cells_failed=0, failed_cells=(),
                            seeds_ok=(0,), rows=2, dirty_rows=0, stale_rows=0, unknown_rows=0, commits=("abc",))
    rep = SimpleNamespace(spec=SimpleNamespace(name="toy"), facts=runs.RunFacts(profiles={"paper": run, "cpu": fresh}))
    lines = index.provenance_markdown([rep], None)
    assert "- `toy` `paper`: 2 rows: no fingerprint of toy was kept at abc" in lines
    assert "- `toy` `paper`: 1 row: the fingerprint of toy changed since abc" in lines
    assert not any(line.startswith("- `toy` `cpu`") for line in lines)
    quiet = SimpleNamespace(spec=SimpleNamespace(name="toy"), facts=runs.RunFacts(profiles={"cpu": fresh}))
    assert not any("Why the stale rows" in line for line in index.provenance_markdown([quiet], None))
