"""Judge every claim at every profile that has its rows, from the result rows alone, and pick its headline verdict.

Verdicts (:data:`VERDICTS`), for a claim "a > b" (``less``: the mirror image) with the difference a − b and its
95% interval (:mod:`fyexp.claims.stats`):

- ``supported``: the interval lies above 0 and, where the paper prints a magnitude, contains it;
- ``supported in direction, not in magnitude``: above 0, but the paper's magnitude lies outside the interval;
- ``not resolved at this n``: the interval covers 0 *and* the paper's magnitude: our numbers agree with the paper's
  difference, but at this n it is inside the noise (the verdict says which n would resolve it, ``n_to_resolve``);
- ``not supported``: the interval covers 0 (and not the paper's magnitude, or the paper prints none);
- ``reversed``: the interval lies below 0;
- ``not run``: none of the claim's experiments has a row at any profile;
- ``data missing``: an experiment ran, but a side of the claim has no row at that profile (noted with how many of
  the profile's declared cells have rows when not all do: a run part-way, :mod:`fyexp.claims.progress`).

With one value per side there is no interval: the sign decides and the verdict says ``n = 1, sign only`` (the
magnitude then counts as matched within a factor of 2).  ``approx`` is an equivalence test: supported when the
interval lies within ±delta, not supported when it lies wholly outside (beyond +delta or below −delta), and not
resolved at this n when it reaches both inside and outside (n = 1: the difference within ±delta or not); ``best_of`` combines a's comparisons with every other side (any reversed: reversed) and, where the paper
prints the margin (``magnitude``: a − the best other), checks it against the interval of a − the best other;
``monotone`` combines those of consecutive sides (all in the trend: supported; all against: reversed);
``fraction`` reads a 0/1 metric as the share of runs with its exact (Clopper–Pearson) interval: the share is above
``at_least`` only when the whole interval is (10 of 20 runs is not "most runs"); ``ratio_below``/``ratio_above``
compare mean(a)/mean(b) with a threshold on log values (the interval is that of the ratio of geometric means);
a ratio of wall-clock metrics (:data:`WALL_CLOCK`) with one value per side is not resolved at this n, whatever
its sign: two wall times from separate runs move with the machine's load alone (two identical `cpu` cells of
vr-vae read 0.775 on one day and 1.11 on another).

Profiles: ``paper`` is the paper's; ``paper+key=value`` (a ``--set`` variant), other profiles named ``paper…``
(``paper-lr1e-4``: another reading of a setting) and ``…~superseded-…`` are *variants*; any other is *reduced*.  A claim's headline verdict (:func:`headline`) is the one at ``paper`` when
every side has rows there, else the one at the reduced profile that read the most rows, labelled (a profile named
``claims`` first: one sized to judge the claims with the paper's models, e.g. frac-vae's); variants are never a
headline.  Rows whose cell ran at settings other than the spec now asks (:func:`current_rows`) never reach
a verdict; stale and dirty rows are counted (:func:`fyexp.run.spec_freshness.row_freshness`) and summed
once per paper.
"""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pandas as pd

from fyexp.claims.model import Claim, Selector
from fyexp.claims.progress import supplying_cells, unfinished
from fyexp.claims.stats import (PAIR_COLUMNS, SPREAD_N, SPREAD_SD, Difference, clopper_pearson, difference,
                                 share_interval)
from fyexp.claims.verdict import (DIRECTION_ONLY, MISSING, NOT_RUN, NOT_SUPPORTED, PAPER, REVERSED,  # noqa: F401
                                  SUPPORTED, UNRESOLVED, VERDICTS, Verdict, profile_kind)
from fyexp.run.fingerprints import TIMING as WALL_CLOCK   # the wall-clock metrics (time, seconds, wall, ..._s, ..._ms)

SIGN_ONLY = "n = 1, sign only"
MAX_N = 1000  # beyond this many runs the n that would resolve a difference is not worth printing
#: one wall time per side from separate runs: the machine's load alone moves their ratio
LOAD_NOTE = "n = 1: one wall time per side, from separate runs, and the machine's load alone can move their ratio"
CLAIMS = "claims"  # the reduced profile built to judge the claims (the paper's models, less data and fewer epochs)




# ---- selecting rows ------------------------------------------------------------------------------------------
def _norm(value) -> str:
    """``3``, ``3.0`` and ``'3'`` alike; everything else as its string."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    return f"{number:g}"


# A cell writes one measurement once per paper that prints it (FYVI and FYVL share Tables 1–3): rows that differ
# only in these columns are one measurement, counted once.
TWIN_KEYS = ("paper", "table")


def select(frame: pd.DataFrame, selector: Selector) -> pd.DataFrame:
    """The ok, finite rows of ``frame`` (one experiment's results) that ``selector`` names, each measurement once
    (its twin rows under another paper's keys, :data:`TWIN_KEYS`, dropped)."""
    if frame.empty:
        return frame
    mask = (frame["metric"] == selector.metric) & (frame.get("status", pd.Series("ok", index=frame.index))
                                                   .fillna("ok") == "ok")
    for column in ("method", "paper_row", "setting", "profile"):
        wanted = getattr(selector, column)
        if wanted is not None:
            mask &= frame[column].astype(str) == wanted if column in frame else False
    if selector.table is not None:
        mask &= frame["table"].map(_norm) == _norm(selector.table) if "table" in frame else False
    for column, values in selector.columns:   # any of the values (3, 3.0 and '3' alike); a missing column: none
        mask &= frame[column].map(_norm).isin({_norm(v) for v in values}) if column in frame else False
    rows = frame[mask]
    if selector.params and not rows.empty:
        parsed = rows["params"].map(lambda p: json.loads(p) if isinstance(p, str) and p else {})
        keep = parsed.map(lambda p: all(k in p and _norm(p[k]) == _norm(v) for k, v in selector.params))
        rows = rows[keep]
    rows = rows.drop_duplicates(subset=[c for c in rows.columns if c not in TWIN_KEYS])
    values = pd.to_numeric(rows["value"], errors="coerce")
    return rows.assign(value=values)[np.isfinite(values)]


# ---- judging one comparison ----------------------------------------------------------------------------------
def _direction(d: Difference, sign: int) -> str:
    """``ok``, ``reversed`` or ``tie`` for the claim sign·(a − b) > 0."""
    if d.has_interval:
        low, high = sorted((sign * d.low, sign * d.high))
        return "ok" if low > 0 else "reversed" if high < 0 else "tie"
    effect = sign * d.mean
    return "ok" if effect > 0 else "reversed" if effect < 0 else "tie"


def _scale(claim: Claim, d: Difference) -> float:
    """What turns a difference into the claim's magnitude: 100/|mean(b)| for a relative magnitude, else 1."""
    return 100.0 / abs(d.mean_b) if claim.magnitude_kind == "relative" and d.mean_b else 1.0


def _magnitude_ok(claim: Claim, d: Difference) -> bool:
    """The paper's magnitude inside our interval (n = 1: our difference within a factor of 2 of it).  Where the
    paper prints a ± of its difference (``uncertainty`` u, read as a standard error), both uncertainties count:
    |centre − m| ≤ sqrt(h² + (2u)²), h our interval's half-width (the two-standard-error band of
    :mod:`fyexp.report.tolerance`, which is our interval when u = 0); with one value per side, also
    |ours − m| ≤ 2u."""
    if claim.magnitude is None:
        return True
    scale = _scale(claim, d)
    printed = 2.0 * (claim.uncertainty or 0.0)   # two of the paper's standard errors of its difference
    if d.has_interval:
        if not printed:
            return d.low * scale <= claim.magnitude <= d.high * scale
        centre, half = (d.low + d.high) / 2 * scale, (d.high - d.low) / 2 * scale
        return abs(centre - claim.magnitude) <= math.hypot(half, printed)
    if printed and abs(d.mean * scale - claim.magnitude) <= printed:
        return True
    return 0.5 <= d.mean * scale / claim.magnitude <= 2.0 if claim.magnitude else d.mean == 0


def n_to_resolve(d: Difference, target: float) -> int | None:
    """The n at which an interval as wide per run as ours would exclude 0 around ``target`` (the paper's
    difference, or ours): the half-width shrinks as 1/sqrt(n), so n·(half-width/|target|)², rounded up."""
    if not d.has_interval or not target:
        return None
    half = (d.high - d.low) / 2
    return max(d.n_a, math.ceil(d.n_a * (half / abs(target)) ** 2))


def _about_n(n: int | None) -> str:
    return "" if n is None else f"; about n = {n} would resolve it" if n <= MAX_N else \
        f"; even {MAX_N} runs would not resolve it"


def _decide(state: str, magnitude_ok: bool, has_magnitude: bool) -> str:
    """The verdict of a direction (``ok``/``tie``/``reversed``) and whether the paper's magnitude is in our
    interval: a tie whose interval holds the paper's magnitude is unresolved, not unsupported."""
    if state == "reversed":
        return REVERSED
    if state == "tie":
        return UNRESOLVED if has_magnitude and magnitude_ok else NOT_SUPPORTED
    return SUPPORTED if magnitude_ok else DIRECTION_ONLY


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _n_text(claim: Claim, d: Difference) -> str:
    """``5 pairs``, ``3 vs 4``, or ``5`` against a constant (``than``)."""
    return str(d.n_a) if claim.than is not None else d.n_text()


def own_interval(a: pd.DataFrame) -> Difference:
    """The interval of mean(a) itself (a against 0, paired with itself where a has run keys): what a claim against a
    constant prints, computed on a's values so that no round-off of a − than + than shows (``0 [2.1e-25, 2.1e-25]``
    was a's mean 0 with the interval of (a − 1e-9) shifted back)."""
    return difference(a, _constant(a, 0.0))


def _constant(frame: pd.DataFrame, value: float) -> pd.DataFrame:
    """``frame``'s rows (their run keys) with the constant ``value``: no spread of their own."""
    return frame.drop(columns=[SPREAD_SD, SPREAD_N], errors="ignore").assign(value=value)


def _diff_text(claim: Claim, d: Difference, own: Difference | None = None) -> str:
    if claim.than is not None:  # a's mean and its interval against the constant (never beside a b: refused at load)
        own = d if own is None else own   # a's own interval: (a − than) + than loses a's digits to round-off
        interval = f" [{_fmt(own.low)}, {_fmt(own.high)}]" if own.has_interval else ""
        return f"{_fmt(d.mean_a)}{interval} vs {_fmt(claim.than)}"
    text = f"{_fmt(d.mean_a)} vs {_fmt(d.mean_b)}"
    if claim.magnitude_kind == "relative" and d.mean_b:
        text += f" ({100 * d.mean / abs(d.mean_b):+.1f}%)"
    if d.has_interval:
        text += f"; diff {_fmt(d.mean)} [{_fmt(d.low)}, {_fmt(d.high)}]"
    return text


def _no_interval(d: Difference) -> list[str]:
    return [] if d.has_interval else [SIGN_ONLY]


def _resolve_note(claim: Claim, d: Difference, verdict: str, sign: int) -> tuple[list[str], int | None]:
    """For a tie: which n would resolve the paper's difference (unresolved) or ours (not supported, when ours
    points the claim's way)."""
    if verdict == UNRESOLVED:
        target = claim.magnitude / _scale(claim, d)
        n = n_to_resolve(d, target)
        return [f"the interval holds 0 and the paper's {_fmt(claim.magnitude)}" + _about_n(n)], n
    if verdict == NOT_SUPPORTED and sign * d.mean > 0:
        n = n_to_resolve(d, d.mean)
        return ([f"our difference is inside the noise{_about_n(n)}"] if n else []), n
    return [], None


def _pairwise(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = 1 if claim.direction == "greater" else -1
    d = difference(rows["a"], _against(claim, rows))
    verdict = _decide(_direction(d, sign), _magnitude_ok(claim, d), claim.magnitude is not None)
    notes, n = _resolve_note(claim, d, verdict, sign)
    own = own_interval(rows["a"]) if claim.than is not None else None
    return Verdict(claim, profile, verdict, _diff_text(claim, d, own), _n_text(claim, d), _no_interval(d) + notes,
                   d.low, d.high, d.mean, n_to_resolve=n)


def _against(claim: Claim, rows: dict) -> pd.DataFrame:
    """Side b, or ``than`` (a constant) in a's rows (so that it pairs with a)."""
    return rows["b"] if "b" in rows else _constant(rows["a"], claim.than)


def _approx(claim: Claim, rows: dict, profile: str) -> Verdict:
    d = difference(rows["a"], _against(claim, rows))
    low, high = (d.low, d.high) if d.has_interval else (d.mean, d.mean)
    if -claim.delta <= low and high <= claim.delta:
        verdict = SUPPORTED
    elif low > claim.delta or high < -claim.delta:
        verdict = NOT_SUPPORTED
    else:  # the interval holds differences within ±delta and beyond: equivalence undecided at this n
        verdict = UNRESOLVED
    own = own_interval(rows["a"]) if claim.than is not None else None
    return Verdict(claim, profile, verdict, _diff_text(claim, d, own) + f" (δ = {_fmt(claim.delta)})", _n_text(claim, d),
                   _no_interval(d), d.low, d.high, d.mean)


def _combine(states: list[str], all_reversed_only: bool) -> str:
    if all(s == "ok" for s in states):
        return SUPPORTED
    if (all(s == "reversed" for s in states) if all_reversed_only else "reversed" in states):
        return REVERSED
    return NOT_SUPPORTED


def _best_of(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = 1 if claim.better == "greater" else -1
    diffs = [difference(rows["a"], other) for other in rows["others"]]
    verdict = _combine([_direction(d, sign) for d in diffs], all_reversed_only=False)
    runner_up = max(diffs, key=lambda d: d.mean_b * sign)  # the strongest other side
    text = f"{_fmt(runner_up.mean_a)} vs best other {_fmt(runner_up.mean_b)}"
    if claim.magnitude is not None:
        text += f"; margin {_fmt(runner_up.mean)}" + (f" [{_fmt(runner_up.low)}, {_fmt(runner_up.high)}]"
                                                      if runner_up.has_interval else "")
        if verdict == SUPPORTED and not _magnitude_ok(claim, runner_up):
            verdict = DIRECTION_ONLY
    notes = [SIGN_ONLY] if not all(d.has_interval for d in diffs) else []
    return Verdict(claim, profile, verdict, text, f"{min(d.n_a for d in diffs)}+", notes, runner_up.low,
                   runner_up.high, runner_up.mean)


def _monotone(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = 1 if claim.trend == "increasing" else -1
    series = rows["series"]
    diffs = [difference(later, earlier) for earlier, later in zip(series, series[1:])]
    verdict = _combine([_direction(d, sign) for d in diffs], all_reversed_only=True)
    means = " → ".join(_fmt(s["value"].mean()) for s in series)
    notes = [SIGN_ONLY] if not all(d.has_interval for d in diffs) else []
    return Verdict(claim, profile, verdict, means, f"{min(len(s) for s in series)}+", notes)


def _fraction(claim: Claim, rows: dict, profile: str) -> Verdict:
    share, low, high = share_interval(rows["a"]["value"].to_numpy(float))
    state = "ok" if low > claim.at_least else "reversed" if high < claim.at_least else "tie"
    inside = claim.magnitude is None or low <= claim.magnitude <= high
    verdict = _decide(state, inside, claim.magnitude is not None)
    notes = [] if state == "ok" else [f"the interval [{low:.0%}, {high:.0%}] is not above {claim.at_least:.0%}"]
    return Verdict(claim, profile, verdict, f"{share:.0%} of runs [{low:.0%}, {high:.0%}]", str(len(rows["a"])),
                   notes, low, high, share)


def _ratio(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = -1 if claim.direction == "ratio_below" else 1
    logs = {k: rows[k].assign(value=np.log(rows[k]["value"].clip(lower=1e-300))) for k in ("a", "b")}
    d = difference(logs["a"], logs["b"])
    ratio = float(rows["a"]["value"].mean() / rows["b"]["value"].mean())
    shift = np.log(claim.threshold)
    shifted = Difference(d.mean - shift, None if d.low is None else d.low - shift,
                         None if d.high is None else d.high - shift, d.n_a, d.n_b, d.paired, d.mean_a, d.mean_b)
    state = _direction(shifted, sign)
    low, high = (float(np.exp(d.low)), float(np.exp(d.high))) if d.has_interval else (None, None)
    matched = claim.magnitude is None or (low <= claim.magnitude <= high if low is not None
                                          else 0.5 <= ratio / claim.magnitude <= 2)
    verdict = _decide(state, matched, claim.magnitude is not None)
    notes = _no_interval(d)
    if not d.has_interval and any(WALL_CLOCK.search(side.metric) for side in claim.sides.values()):
        verdict, notes = UNRESOLVED, [LOAD_NOTE]   # not "sign only": the sign decides nothing here
    text = f"ratio {ratio:.3g}" + (f" [{low:.3g}, {high:.3g}]" if low is not None else "")
    return Verdict(claim, profile, verdict, text, d.n_text(), notes, low, high, ratio)


def _oriented(d: Difference, sign: int) -> tuple[float, float]:
    """The interval of sign·(a − b) (with one value per side, the point sign·(a − b) twice)."""
    if d.has_interval:
        low, high = sorted((sign * d.low, sign * d.high))
        return low, high
    return sign * d.mean, sign * d.mean


def _noninferior(claim: Claim, rows: dict, profile: str) -> Verdict:
    """"Similar or better": the interval of sign·(a − b) (``better``) above −margin holds, wholly below −margin is
    reversed, across it is not resolved at this n."""
    sign = 1 if claim.better == "greater" else -1
    d = difference(rows["a"], _against(claim, rows))
    low, high = _oriented(d, sign)
    verdict = SUPPORTED if low > -claim.margin else REVERSED if high < -claim.margin else UNRESOLVED
    own = own_interval(rows["a"]) if claim.than is not None else None
    return Verdict(claim, profile, verdict, _diff_text(claim, d, own) + f" (margin {_fmt(claim.margin)})",
                   _n_text(claim, d), _no_interval(d), d.low, d.high, d.mean)


def _best_side(frames: list[pd.DataFrame], sign: int) -> int:
    """The index of the side with the best mean (``sign`` 1: greatest); the first of equals."""
    means = [sign * float(f["value"].mean()) for f in frames]
    return max(range(len(frames)), key=lambda i: (means[i], -i))


def _group_best(claim: Claim, rows: dict, profile: str) -> Verdict:
    """The best side of ``group`` (by its mean) against the best of ``others``: the paper credits a pair of
    models, not one cell.  The comparison is then a pairwise one (paired where the rows pair), with the printed
    margin ``magnitude`` checked as a pairwise claim's."""
    sign = 1 if claim.better == "greater" else -1
    g, o = _best_side(rows["group"], sign), _best_side(rows["others"], sign)
    d = difference(rows["group"][g], rows["others"][o])
    verdict = _decide(_direction(d, sign), _magnitude_ok(claim, d), claim.magnitude is not None)
    notes, n = _resolve_note(claim, d, verdict, sign)
    text = (f"best of group {claim.group[g].describe()} {_fmt(d.mean_a)} vs best other "
            f"{claim.others[o].describe()} {_fmt(d.mean_b)}")
    if d.has_interval:
        text += f"; diff {_fmt(d.mean)} [{_fmt(d.low)}, {_fmt(d.high)}]"
    return Verdict(claim, profile, verdict, text, d.n_text(), _no_interval(d) + notes, d.low, d.high, d.mean,
                   n_to_resolve=n)


def coverage_counts(frame: pd.DataFrame, replicas: int | None) -> tuple[int, int] | None:
    """(covered, replicas) behind a side's coverage rows: 0/1 rows are one replica each; a row holding a share
    over R replicas (R from its ``replicas`` column, else ``replicas``: the spec's ``n_replicas``) counts
    round(share·R) of R; ``None`` when R is unknown."""
    values = frame["value"].to_numpy(float)
    if len(values) > 1 and np.isin(values, (0.0, 1.0)).all():
        return int(values.sum()), len(values)
    column = pd.to_numeric(frame["replicas"], errors="coerce") if "replicas" in frame else None
    counts = [r if r == r else replicas for r in (column.tolist() if column is not None else [None] * len(values))]
    counts = [replicas if c is None else c for c in counts]
    if any(c is None or c < 1 for c in counts):
        return None
    return int(sum(round(v * c) for v, c in zip(values, counts))), int(sum(counts))


def _coverage(claim: Claim, rows: dict, profile: str) -> Verdict:
    """Coverage over replicas against the nominal level, by the exact (Clopper–Pearson) interval of k of R:
    ``conservative`` holds when the whole interval lies above ``nominal``, ``overconfident`` when below; the other
    side is reversed; an interval holding ``nominal`` is not supported (not resolved when it also holds the paper's
    printed coverage, ``magnitude``)."""
    counts = coverage_counts(rows["a"], rows.get("replicas"))
    if counts is None:
        return Verdict(claim, profile, MISSING, notes=["the number of replicas behind the coverage is unknown (no "
                                                       "replicas column, no n_replicas in the spec)"])
    k, n = counts
    low, high = clopper_pearson(k, n)
    above = "ok" if low > claim.nominal else "reversed" if high < claim.nominal else "tie"
    state = above if claim.side == "conservative" else {"ok": "reversed", "reversed": "ok"}.get(above, "tie")
    inside = claim.magnitude is None or low <= claim.magnitude <= high
    verdict = _decide(state, inside, claim.magnitude is not None)
    text = f"coverage {_fmt(k / n)} [{_fmt(low)}, {_fmt(high)}] vs nominal {_fmt(claim.nominal)} ({k} of {n})"
    return Verdict(claim, profile, verdict, text, f"{n} replicas", [], low, high, k / n)


JUDGES = {"greater": _pairwise, "less": _pairwise, "approx": _approx, "best_of": _best_of, "monotone": _monotone,
          "fraction": _fraction, "ratio_below": _ratio, "ratio_above": _ratio, "noninferior": _noninferior,
          "group_best": _group_best, "coverage": _coverage}
HOLDS = (SUPPORTED, DIRECTION_ONLY)   # a run satisfies the statement (per_run)


def run_keys(rows: dict, candidates: tuple[str, ...] = PAIR_COLUMNS) -> list[str]:
    """The run columns (``candidates``: :data:`fyexp.claims.stats.PAIR_COLUMNS` by default) every side of ``rows``
    fills."""
    frames = [f for f in _frames_of(rows)]
    return [c for c in candidates if frames and all(c in f and f[c].notna().all() for f in frames)]


def _slice(rows: dict, columns: list[str], key: tuple) -> dict:
    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        mask = np.ones(len(frame), dtype=bool)
        for c, v in zip(columns, key):
            mask &= (frame[c] == v).to_numpy()
        return frame[mask]

    return {k: [keep(f) for f in v] if isinstance(v, list) else keep(v) if isinstance(v, pd.DataFrame) else v
            for k, v in rows.items()}


def _per_run(claim: Claim, rows: dict, profile: str) -> Verdict:
    """The statement judged on each run (the runs every side has, by seed / split / fold and the claim's ``per``
    columns: VR Figure 2(b)'s each alpha), its magnitude aside (one
    run cannot test it); the verdict from the k of n runs that satisfy it, with their exact interval: with
    ``at_least``, the share's interval above it holds, below it is reversed (as ``fraction``); without, the
    statement is made of every run: all n hold → supported, all n reversed → reversed, else not supported (a run
    whose interval holds 0 neither holds nor reverses the statement; the note counts the reversed among the runs
    that fail)."""

    columns = run_keys(rows)
    if not columns:
        return Verdict(claim, profile, MISSING, notes=["per run: the sides share no run column (seed, split, fold)"])
    lacking = [c for c in claim.per if c not in run_keys(rows, (c,))]
    if lacking:
        return Verdict(claim, profile, MISSING, notes=[f"per run: a side lacks the column {lacking[0]} (per)"])
    columns += [c for c in claim.per if c not in columns]
    keyed = [set(zip(*(f[c].tolist() for c in columns))) for f in _frames_of(rows)]
    runs = sorted(set.intersection(*keyed), key=str)
    if not runs:
        return Verdict(claim, profile, MISSING, notes=["per run: no run has rows on every side"])
    one = dataclasses.replace(claim, magnitude=None, per_run=False)
    each = [JUDGES[claim.direction](one, _slice(rows, columns, run), profile).verdict for run in runs]
    holds = [v in HOLDS for v in each]
    k, n, turned = sum(holds), len(holds), sum(v == REVERSED for v in each)
    low, high = clopper_pearson(k, n)
    if claim.at_least is not None:
        state = "ok" if low > claim.at_least else "reversed" if high < claim.at_least else "tie"
        verdict = _decide(state, True, False)
    else:
        verdict = SUPPORTED if k == n else REVERSED if turned == n else NOT_SUPPORTED
    failing = [", ".join(f"{c}={v}" for c, v in zip(columns, run)) for run, ok in zip(runs, holds) if not ok]
    which = "" if turned == len(failing) else f" ({turned} reversed, the rest within their interval)"
    notes = [f"fails in {len(failing)} run(s){which}: " + "; ".join(failing[:3]) +
             ("; …" if len(failing) > 3 else "")] if failing else []
    text = f"holds in {k} of {n} runs [{low:.0%}, {high:.0%}]"
    return Verdict(claim, profile, verdict, text, f"{n} runs", notes, low, high, k / n)


# ---- every claim, every profile ------------------------------------------------------------------------------
def split_by_metric(frames: dict[str, pd.DataFrame]) -> dict[tuple[str, str], pd.DataFrame]:
    """(experiment, metric) → that metric's rows (in their order); an experiment's absent metric → its empty frame.
    Splitting once lets every selector filter a few rows instead of the whole experiment."""
    out: dict[tuple[str, str], pd.DataFrame] = {}
    for name, frame in frames.items():
        if frame.empty or "metric" not in frame:
            continue
        out[(name, "")] = frame.iloc[:0]
        out.update({(name, metric): part for metric, part in frame.groupby("metric", sort=False)})
    return out


def _rows_at(claim: Claim, by_metric: dict) -> dict:
    """Every side's rows, at every profile (:func:`_at_profile` keeps one)."""

    def pick(selector: Selector) -> pd.DataFrame:
        frame = by_metric.get((selector.experiment, selector.metric), by_metric.get((selector.experiment, "")))
        # an experiment none of whose rows is evidence (all of unknown provenance) has no frame: no rows, same columns
        return select(pd.DataFrame(columns=list(ROW_KEY)) if frame is None else frame, selector)

    def side(selector: Selector) -> pd.DataFrame:
        rows = pick(selector)
        if claim.spread is None or selector.metric != claim.spread.of:
            return rows
        return with_spread(rows, pick(dataclasses.replace(selector, metric=claim.spread.sd)), claim.spread.n,
                           ("cell", *claim.per))

    out: dict = {k: side(s) for k, s in claim.sides.items()}
    out["group"] = [side(s) for s in claim.group]
    out["others"] = [side(s) for s in claim.others]
    out["series"] = [side(s) for s in claim.series]
    return out


def with_spread(rows: pd.DataFrame, sds: pd.DataFrame, count: str, keys: tuple[str, ...]) -> pd.DataFrame:
    """``rows`` (means) with the columns :data:`~fyexp.claims.stats.SPREAD_SD` (the value of the row of ``sds``
    with the same ``keys``: its cell and the claim's ``per`` columns) and :data:`~fyexp.claims.stats.SPREAD_N`
    (the row's column ``count``); a row without exactly one such sd row, or without ``count``, keeps none (NaN:
    its value a sign only)."""
    on = [k for k in keys if k in rows and k in sds]
    if rows.empty or count not in rows or "cell" not in on:
        return rows.assign(**{SPREAD_SD: np.nan, SPREAD_N: np.nan})
    key = lambda frame: list(zip(*(frame[k].map(_norm).tolist() for k in on)))  # noqa: E731 (3 and 3.0 alike)
    found: dict = {}
    for k, v in zip(key(sds), sds["value"].tolist()):
        found[k] = v if k not in found else np.nan   # two sd rows for one mean: which is its own is unknown
    return rows.assign(**{SPREAD_SD: [found.get(k, np.nan) for k in key(rows)],
                          SPREAD_N: pd.to_numeric(rows[count], errors="coerce").to_numpy(float)})


def replicas_at(spec, profile: str) -> int | None:
    """The spec's ``n_replicas`` at ``profile`` (the replicated data sets a coverage is a share over), if any."""
    if spec is None or profile not in (spec.profiles or {}):
        return None
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.spec.specs import resolve

    try:
        value = getattr(resolve(spec, profile, get_config_class(spec.runner)).config, "n_replicas", None)
    except (FyexpError, ImportError):
        return None
    return int(value) if isinstance(value, (int, float)) and value >= 1 else None


def _at_profile(rows: dict, profile: str) -> dict:
    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["profile"].astype(str) == profile]

    return {k: [keep(f) for f in v] if isinstance(v, list) else keep(v) for k, v in rows.items()}


def _frames_of(rows: dict) -> list[pd.DataFrame]:
    return [rows[k] for k in ("a", "b") if k in rows] + rows.get("group", []) + rows["others"] + rows["series"]


def _missing(claim: Claim, rows: dict) -> list[Selector]:
    """The selectors of ``claim`` with no rows in ``rows`` (:func:`_rows_at`), sides first."""
    named = list(zip(claim.sides.values(), [rows[k] for k in claim.sides]))
    named += list(zip(claim.group, rows.get("group", []))) + list(zip(claim.others, rows["others"]))
    named += list(zip(claim.series, rows["series"]))
    return [s for s, r in named if r.empty]


def recorded_reasons(frame: pd.DataFrame | None, selector: Selector, profile: str | None = None) -> list[str]:
    """Why the rows say a side was not measured: the rows ``selector`` would name were they measured (its
    experiment's rows of its metric, method and params, through :func:`select`; not its
    setting, paper row or table, which only a measured row carries) whose ``status`` is ``missing``, at
    ``profile`` (every profile when ``None``), grouped by their ``label`` — a cell writes the reason there, as FID
    does without Inception weights.  One note per reason, read after ``no rows for E:M[...]``:
    ``"not measured in N of its rows (at P, Q): LABEL"``, in the order the rows give them; none when no row says."""
    from dataclasses import replace

    if frame is None or frame.empty or "status" not in frame:
        return []
    unmeasured = frame[frame["status"].astype(str) == "missing"]
    if profile is not None:
        unmeasured = unmeasured[unmeasured["profile"].astype(str) == profile]
    if unmeasured.empty:
        return []
    grid_only = replace(selector, setting=None, paper_row=None, table=None)
    named = select(unmeasured.assign(status="ok", value=0.0), grid_only)  # as if measured: select's own filters
    if named.empty:
        return []
    labels = named["label"].fillna("").astype(str) if "label" in named else pd.Series("", index=named.index)
    notes = []
    for label, group in named.groupby(labels.where(labels.str.strip() != "", "no reason recorded"), sort=False):
        at = ", ".join(dict.fromkeys(group["profile"].astype(str)))
        notes.append(f"not measured in {len(group)} of its rows (at {at}): {label}")
    return notes


def _missing_notes(selector: Selector, frames: dict, specs: dict, experiments, profile: str | None) -> list[str]:
    """A ``data missing`` verdict's notes: which side has no rows, why its rows say it was not measured
    (:func:`recorded_reasons`), and how far the profile's run has got (:func:`fyexp.claims.progress.unfinished`)
    or, where no profile has the side's rows, which declared cells would write them
    (:func:`fyexp.claims.progress.supplying_cells`; for a side that names no method or params, how far each
    profile's run has got)."""
    reasons = recorded_reasons(frames.get(selector.experiment), selector, profile)
    if profile is None:   # no profile has the side's rows: the cells that would write them, else every run's progress
        spec = specs.get(selector.experiment)
        progress = supplying_cells(selector, spec) or [
            note for p in (spec.profiles if spec is not None else {}) for note in unfinished(experiments, frames, specs, p)]
    else:
        progress = unfinished(experiments, frames, specs, profile)
    return [f"no rows for {selector.describe()}", *reasons, *progress]


ROW_KEY = ("experiment", "profile", "cell", "metric")


def _freshness(rows: dict, specs: dict) -> tuple[frozenset, frozenset]:
    """The keys (experiment, profile, cell, metric; a derived row's metric is its source's, ``source_metric``) of the
    stale and of the dirty rows a verdict read (counted as the report counts them,
    :func:`fyexp.run.spec_freshness.row_freshness`: a commit ending ``+dirty``; a row stale against HEAD), so that a paper's summary counts each row once."""
    from fyexp.run.spec_freshness import row_freshness
    from fyexp.store.provenance.freshness import code_column

    used = pd.concat([f for f in _frames_of(rows) if not f.empty], ignore_index=True)
    stale: set = set()
    dirty: set = set()
    for name, part in used.groupby("experiment"):
        if "freshness" not in part and name not in specs:
            continue
        part = part.assign(metric=part["source_metric"].fillna(part["metric"])) if "source_metric" in part else part
        keys = list(zip(*[part[c].astype(str) if c in part else [""] * len(part) for c in ROW_KEY]))
        states = (part["freshness"] if "freshness" in part
                  else code_column(row_freshness(specs[name], part, settings=False)))
        stale |= {k for k, s in zip(keys, states) if s == "stale"}
        dirty |= {k for k, c in zip(keys, part["git_commit"].astype(str)) if c.endswith("+dirty")}
    return frozenset(stale), frozenset(dirty)


def judge(claim: Claim, frames: dict[str, pd.DataFrame], specs: dict | None = None,
          profile: str | None = None, by_metric: dict | None = None) -> list[Verdict]:
    """The claim's verdict at every profile with rows of its experiments (only ``profile`` if given), its headline
    marked (:func:`headline`); ``by_metric``: :func:`split_by_metric` of ``frames``, when the caller judges many
    claims.  A ``data missing`` verdict notes how many of the profile's declared cells have rows when not all do
    (:func:`fyexp.claims.progress.unfinished`): a side not yet run reads as such."""
    present = [frames[e] for e in claim.experiments if e in frames and not frames[e].empty]
    if not present:
        return _mark([Verdict(claim, profile, NOT_RUN, notes=[f"no rows of {', '.join(claim.experiments)}"])])
    if by_metric is None:
        from fyexp.store.provenance.freshness import evidence

        by_metric = split_by_metric({e: evidence(frames[e]) for e in claim.experiments if e in frames})
    everything = _rows_at(claim, by_metric)
    profiles = list(dict.fromkeys(p for f in _frames_of(everything) for p in f["profile"].astype(str)))
    if profile is not None:
        profiles = [p for p in profiles if p == profile]
    if not profiles:
        missing = _missing(claim, everything) or claim.selectors()
        return _mark([Verdict(claim, profile, MISSING,
                              notes=_missing_notes(missing[0], frames, specs or {}, claim.experiments, profile))])
    out = []
    for p in profiles:
        rows = _at_profile(everything, p)
        missing = _missing(claim, rows)
        if missing:
            out.append(Verdict(claim, p, MISSING,
                               notes=_missing_notes(missing[0], frames, specs or {}, claim.experiments, p)))
            continue
        if claim.direction == "coverage":
            rows["replicas"] = replicas_at((specs or {}).get(claim.sides["a"].experiment), p)
        verdict = (_per_run if claim.per_run else JUDGES[claim.direction])(claim, rows, p)
        verdict.rows_read = sum(len(f) for f in _frames_of(rows))
        verdict.stale, verdict.dirty = _freshness(rows, specs or {})
        out.append(verdict)
    return _mark(out)


def headline(verdicts: list[Verdict]) -> Verdict:
    """The one verdict a claim is known by: at ``paper`` when every side has rows there, else at the ``claims``
    profile when it judged the claim, else at the reduced profile that read the most rows (labelled reduced), else the first that is no variant (``data missing``, ``not run``),
    else a ``data missing`` saying only variants ran."""
    judged = [v for v in verdicts if v.verdict not in (MISSING, NOT_RUN)]
    for v in judged:
        if v.profile_kind == PAPER:
            return v
    reduced = [v for v in judged if v.reduced]
    if reduced:
        return max(reduced, key=lambda v: (v.profile == CLAIMS, v.rows_read))  # max keeps the first of equals
    plain = [v for v in verdicts if not v.variant]
    if plain:
        return plain[0]
    return Verdict(verdicts[0].claim, PAPER, MISSING,
                   notes=[f"only variants ran ({', '.join(sorted({str(v.profile) for v in verdicts}))})"])


def _mark(verdicts: list[Verdict]) -> list[Verdict]:
    """``verdicts`` with the headline marked (added first when it is none of them: only variants ran)."""
    top = headline(verdicts)
    top.headline = True
    return verdicts if top in verdicts else [top, *verdicts]


def judge_all(claims, frames: dict[str, pd.DataFrame], specs: dict | None = None,
              profile: str | None = None, readings=None) -> list[Verdict]:
    """Every claim's verdicts at every profile under the text reading (the claims' own sides, as the departures'
    ``text`` rewrites name them; ``both`` where no departure touches the claim), each headline carrying every
    reading's headline (``by_reading``; :func:`judge_readings`).  ``readings``: :func:`fyexp.claims.readings.
    load_readings` by default."""
    from fyexp.store.provenance.freshness import evidence

    if readings is None:
        from fyexp.claims.readings import load_readings

        readings = load_readings()
    by_metric = split_by_metric({name: evidence(frame) for name, frame in frames.items()})  # no unknown provenance
    return [v for c in claims for v in judge_readings(c, frames, specs, profile, by_metric, readings)]


def judge_readings(claim: Claim, frames: dict, specs: dict | None, profile: str | None, by_metric: dict,
                   readings) -> list[Verdict]:
    """``claim`` judged under each reading: the text reading's verdicts returned (every profile), its headline
    carrying each reading's headline in ``by_reading``; a reading whose touched side has no rows of ours (``none``)
    reads ``not run``, saying so."""
    from fyexp.claims.readings import AUTHORS, BOTH, READINGS, TEXT, claim_under, touching

    departures = touching(claim, readings)
    if not departures:
        return judge(claim, frames, specs, profile, by_metric)
    ids = tuple(d.finding for d in departures)
    out, heads = [], {}
    for reading in READINGS:
        seen = claim_under(claim, reading, readings)
        if seen is None:
            verdicts = [Verdict(claim, profile, NOT_RUN, headline=True,
                                notes=[f"no rows of ours under the {reading} reading "
                                       f"({', '.join(d.finding for d in departures if d.rewrite(reading).none)})"])]
        else:
            verdicts = judge(seen, frames, specs, profile, by_metric)
        for v in verdicts:
            v.reading, v.departures = reading, ids
        heads[reading] = next(v for v in verdicts if v.headline)
        if reading == TEXT:
            out = verdicts
    heads[TEXT].by_reading = heads
    assert BOTH not in heads and AUTHORS in heads
    return out


def current_rows(spec, frame: pd.DataFrame, folder, judged: pd.Series | None = None) -> pd.DataFrame:
    """``frame`` without the rows whose cell ran at settings other than the spec now asks
    (:func:`fyexp.store.provenance.freshness.settings_column`): they never feed a verdict.  ``judged``: the rows'
    :func:`fyexp.run.spec_freshness.row_freshness` where the caller has it (the report judges each row once)."""
    if frame.empty:
        return frame
    from fyexp.run.spec_freshness import row_freshness
    from fyexp.store.provenance.freshness import settings_column

    changed = settings_column(judged if judged is not None else row_freshness(spec, frame, folder, code=False))
    return frame[~(changed == True).to_numpy()]  # noqa: E712 (None: cannot tell, kept)


def claim_rows(name: str, spec, frame: pd.DataFrame, folder, judged: pd.Series | None = None) -> pd.DataFrame:
    """The rows of experiment ``name`` a verdict may read: the current ones (:func:`current_rows`) and those the
    claims derive from its artifacts (:mod:`fyexp.claims.derived`)."""
    from fyexp.claims.derived import with_derived

    return with_derived(name, current_rows(spec, frame, folder, judged), folder)


def load_frames(results_dir, experiments_dir=None, names=None) -> tuple[dict[str, pd.DataFrame], dict]:
    """The current rows (its ``results.csv`` or cell files, :class:`fyexp.store.results.ResultStore`; without those at
    old settings, :func:`current_rows`) and spec of every experiment in ``names`` (default: every experiment with
    a spec; names without one are skipped)."""
    from fyexp.claims.model import experiment_names, experiment_spec
    from fyexp.run.spec_freshness import row_freshness
    from fyexp.store.provenance.freshness import code_column
    from fyexp.store.results import ResultStore

    known = experiment_names(experiments_dir)
    names = known if names is None else [n for n in dict.fromkeys(names) if n in known]
    specs = {name: experiment_spec(name, experiments_dir) for name in names}
    frames = {}
    for name, spec in specs.items():
        store = ResultStore(results_dir, name)
        rows, judged = _read_only(store), None
        if not rows.empty:  # each cell judged once, both axes (as the report does): the settings axis keeps the
            judged = row_freshness(spec, rows, store.folder)  # current rows, the code axis is their staleness,
            rows = rows.assign(freshness=code_column(judged))  # which the rows derived from them carry over
        frames[name] = claim_rows(name, spec, rows, store.folder, judged)
    return frames, specs


def _read_only(store) -> pd.DataFrame:
    """The complete cell files' rows, else ``results.csv`` (:meth:`fyexp.store.results.ResultStore.load`: it writes
    nothing, and names each damaged file it skips in one warning line)."""
    return store.load()
