"""Each relation between a claim's keys (:meth:`fyexp.claims.keys.ClaimKeys.__post_init__`) refuses its file with
the whole line a user reads — the file, the claim, the key, what was expected and what the file gave — so that a
changed word or a lost value is a failing test (these were the 18 message mutants mutmut left alive)."""

from __future__ import annotations

import pytest

from fyexp.claims.model import load_claims
from fyexp.core.errors import FyexpError

HEAD = """
claims:
  - id: toy
    paper: fyvi
    where: Table 9
    claim: toy
    rows: {experiment: gmm-clustering, metric: adjusted_mi}
"""
QUOTED = "    line: 12\n    quote: \"a toy sentence\"\n"

CASES = {
    "than-direction": (QUOTED + "    direction: monotone\n    trend: increasing\n    series: [{method: x}, {method: y}]\n"
                       "    than: 0.5\n",
                       "than: expected no constant for direction 'monotone' (than stands in for b in greater, less, "
                       "approx, noninferior only), got 0.5"),
    "than-and-b": (QUOTED + "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    than: 0.5\n",
                   "than: expected either b or than (a constant in place of b), not both, got 0.5"),
    "needs": (QUOTED + "    direction: greater\n    a: {method: x}\n",
              "b: expected set for direction 'greater' (mean(a) > mean(b) (or > than))"),
    "series": (QUOTED + "    direction: monotone\n    trend: increasing\n    series: [{method: x}]\n",
               "series: expected at least two selectors in order"),
    "group": (QUOTED + "    direction: group_best\n    better: greater\n    a: {method: x}\n    group: []\n"
              "    others: [{method: y}]\n", "group: expected at least one selector"),
    "others": (QUOTED + "    direction: best_of\n    better: greater\n    a: {method: x}\n    others: []\n",
               "others: expected at least one selector"),
    "group-others": (QUOTED + "    direction: group_best\n    better: greater\n    a: {method: x}\n"
                     "    group: [{method: y}]\n    others: []\n", "others: expected at least one selector"),
    "uncertainty": (QUOTED + "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    uncertainty: 0.25\n",
                    "uncertainty: expected the paper's printed ± of magnitude (set magnitude too), got 0.25"),
    "per": (QUOTED + "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    per: [alpha]\n",
            "per: expected per_run: true beside it (per names the columns whose values each make a run of their "
            "own), got ['alpha']"),
    "per_run": (QUOTED + "    direction: coverage\n    side: conservative\n    a: {method: x}\n    nominal: 0.9\n"
                "    per_run: true\n",
                "per_run: expected false for direction 'coverage' (a coverage is a share over replicas already), "
                "got True"),
    "quote": ("    line: 12\n    direction: greater\n    a: {method: x}\n    b: {method: y}\n",
              "quote: expected the paper's words (quote) and their line (line) for a claim; a check of ours is "
              "kind: check"),
    "line": ("    quote: \"a toy sentence\"\n    direction: greater\n    a: {method: x}\n    b: {method: y}\n",
             "quote: expected the paper's words (quote) and their line (line) for a claim; a check of ours is "
             "kind: check"),
    "note": ("    kind: check\n    direction: greater\n    a: {method: x}\n    b: {method: y}\n",
             "note: expected why this check is ours (kind: check)"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_relation_between_keys_refuses_with_its_whole_line(tmp_path, case):
    body, line = CASES[case]
    path = tmp_path / "claims.yaml"
    path.write_text(HEAD + body)
    with pytest.raises(FyexpError) as caught:
        load_claims(path)
    assert str(caught.value) == f"{path}: claim 'toy': {line}"


def test_the_same_claims_with_their_relations_kept_load(tmp_path):
    """Each case above, mended, loads: the refusals are of the relation, not of the rest of the file."""
    mended = {"than-direction": QUOTED + "    direction: monotone\n    trend: increasing\n"
                                "    series: [{method: x}, {method: y}]\n",
              "than-and-b": QUOTED + "    direction: greater\n    a: {method: x}\n    than: 0.5\n",
              "per": QUOTED + "    direction: greater\n    a: {method: x}\n    b: {method: y}\n    per: [alpha]\n"
                     "    per_run: true\n",
              "note": "    kind: check\n    note: ours\n    direction: greater\n    a: {method: x}\n    b: {method: y}\n",
              # one selector is enough for a group and for the others (the bounds of "at least one")
              "group-of-one": QUOTED + "    direction: group_best\n    better: greater\n    a: {method: x}\n"
                              "    group: [{method: y}]\n    others: [{method: z}]\n",
              "others-of-one": QUOTED + "    direction: best_of\n    better: greater\n    a: {method: x}\n"
                               "    others: [{method: z}]\n"}
    for name, body in mended.items():
        path = tmp_path / f"{name}.yaml"
        path.write_text(HEAD + body)
        assert load_claims(path).claims[0].id == "toy", name
