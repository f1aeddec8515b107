"""Judge every claim at every profile that has its rows, from the result rows alone.

Verdicts (:data:`VERDICTS`), for a claim "a > b" (``less``: the mirror image) with the difference a − b and its
95% interval (:mod:`fyexp.claims.stats`):

- ``supported``: the interval lies above 0 and, where the paper prints a magnitude, contains it;
- ``supported in direction, not in magnitude``: above 0, but the paper's magnitude lies outside the interval;
- ``not supported``: the interval covers 0;
- ``reversed``: the interval lies below 0;
- ``not run``: none of the claim's experiments has a row at any profile;
- ``data missing``: an experiment ran, but a side of the claim has no row at that profile.

With one value per side there is no interval: the sign decides and the verdict says ``n = 1, sign only`` (the
magnitude then counts as matched within a factor of 2).  ``approx`` is supported when the interval lies within
±delta; ``best_of`` combines a's comparisons with every other side (any reversed: reversed); ``monotone`` those of
consecutive sides (all in the trend: supported; all against: reversed); ``fraction`` reads a 0/1 metric as the share
of runs (Clopper–Pearson interval); ``ratio_below``/``ratio_above`` compare mean(a)/mean(b) with a threshold on log
values (the interval is that of the ratio of geometric means).  A profile whose name does not start with
``paper`` is *reduced*: its verdict says so.  Rows produced from a dirty tree or by code changed since are counted
with :func:`fyexp.freshness.row_states`, as the report counts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fyexp.claims.model import Claim, Selector
from fyexp.claims.stats import Difference, difference, share_interval

SUPPORTED = "supported"
DIRECTION_ONLY = "supported in direction, not in magnitude"
NOT_SUPPORTED = "not supported"
REVERSED = "reversed"
NOT_RUN = "not run"
MISSING = "data missing"
VERDICTS = (SUPPORTED, DIRECTION_ONLY, NOT_SUPPORTED, REVERSED, NOT_RUN, MISSING)


@dataclass
class Verdict:
    claim: Claim
    profile: str | None
    verdict: str
    ours: str = ""
    n: str = ""
    notes: list[str] = field(default_factory=list)
    low: float | None = None
    high: float | None = None
    estimate: float | None = None

    @property
    def reduced(self) -> bool:
        return self.profile is not None and not self.profile.startswith("paper")

    @property
    def label(self) -> str:
        """The verdict as printed: a reduced profile says so, and so do stale or dirty rows."""
        text = self.verdict + (f" (reduced profile {self.profile})" if self.reduced else "")
        return text + "".join(f"; {n}" for n in self.notes)

    def as_dict(self) -> dict:
        return {"id": self.claim.id, "paper": self.claim.paper, "where": self.claim.where, "claim": self.claim.text,
                "paper_numbers": self.claim.paper_numbers, "profile": self.profile, "verdict": self.verdict,
                "reduced": self.reduced, "ours": self.ours, "n": self.n, "estimate": self.estimate,
                "low": self.low, "high": self.high, "notes": self.notes}


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


def _magnitude_ok(claim: Claim, d: Difference) -> bool:
    if claim.magnitude is None:
        return True
    scale = 100.0 / abs(d.mean_b) if claim.magnitude_kind == "relative" and d.mean_b else 1.0
    if d.has_interval:
        return d.low * scale <= claim.magnitude <= d.high * scale
    ratio = d.mean * scale / claim.magnitude if claim.magnitude else np.inf
    return 0.5 <= ratio <= 2.0


def _fmt(x: float) -> str:
    return f"{x:.4g}"


def _diff_text(claim: Claim, d: Difference) -> str:
    text = f"{_fmt(d.mean_a)} vs {_fmt(d.mean_b)}"
    if claim.magnitude_kind == "relative" and d.mean_b:
        text += f" ({100 * d.mean / abs(d.mean_b):+.1f}%)"
    if d.has_interval:
        text += f"; diff {_fmt(d.mean)} [{_fmt(d.low)}, {_fmt(d.high)}]"
    return text


def _no_interval(d: Difference) -> list[str]:
    return [] if d.has_interval else ["n = 1, sign only"]


def _pairwise(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = 1 if claim.direction == "greater" else -1
    b = rows["b"] if "b" in rows else rows["a"].assign(value=claim.than)  # ``than``: a against a constant
    d = difference(rows["a"], b)
    state = _direction(d, sign)
    verdict = {"reversed": REVERSED, "tie": NOT_SUPPORTED}.get(state) or (
        SUPPORTED if _magnitude_ok(claim, d) else DIRECTION_ONLY)
    return Verdict(claim, profile, verdict, _diff_text(claim, d), d.n_text(), _no_interval(d), d.low, d.high, d.mean)


def _approx(claim: Claim, rows: dict, profile: str) -> Verdict:
    d = difference(rows["a"], rows["b"])
    low, high = (d.low, d.high) if d.has_interval else (d.mean, d.mean)
    verdict = SUPPORTED if -claim.delta <= low and high <= claim.delta else NOT_SUPPORTED
    return Verdict(claim, profile, verdict, _diff_text(claim, d) + f" (δ = {_fmt(claim.delta)})", d.n_text(),
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
    best_other = max(d.mean_b * sign for d in diffs) * sign
    notes = ["n = 1, sign only"] if not all(d.has_interval for d in diffs) else []
    return Verdict(claim, profile, verdict, f"{_fmt(diffs[0].mean_a)} vs best other {_fmt(best_other)}",
                   f"{min(d.n_a for d in diffs)}+", notes)


def _monotone(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = 1 if claim.trend == "increasing" else -1
    series = rows["series"]
    diffs = [difference(later, earlier) for earlier, later in zip(series, series[1:])]
    verdict = _combine([_direction(d, sign) for d in diffs], all_reversed_only=True)
    means = " → ".join(_fmt(s["value"].mean()) for s in series)
    notes = ["n = 1, sign only"] if not all(d.has_interval for d in diffs) else []
    return Verdict(claim, profile, verdict, means, f"{min(len(s) for s in series)}+", notes)


def _fraction(claim: Claim, rows: dict, profile: str) -> Verdict:
    share, low, high = share_interval(rows["a"]["value"].to_numpy(float))
    verdict = NOT_SUPPORTED if share < claim.at_least else (
        SUPPORTED if claim.magnitude is None or low <= claim.magnitude <= high else DIRECTION_ONLY)
    return Verdict(claim, profile, verdict, f"{share:.0%} of runs [{low:.0%}, {high:.0%}]", str(len(rows["a"])),
                   [], low, high, share)


def _ratio(claim: Claim, rows: dict, profile: str) -> Verdict:
    sign = -1 if claim.direction == "ratio_below" else 1
    logs = {k: rows[k].assign(value=np.log(rows[k]["value"].clip(lower=1e-300))) for k in ("a", "b")}
    d = difference(logs["a"], logs["b"])
    ratio = float(rows["a"]["value"].mean() / rows["b"]["value"].mean())
    shifted = Difference(d.mean - np.log(claim.threshold), None if d.low is None else d.low - np.log(claim.threshold),
                         None if d.high is None else d.high - np.log(claim.threshold), d.n_a, d.n_b, d.paired,
                         d.mean_a, d.mean_b)
    state = _direction(shifted, sign)
    low, high = (np.exp(d.low), np.exp(d.high)) if d.has_interval else (None, None)
    matched = claim.magnitude is None or (low <= claim.magnitude <= high if low is not None
                                          else 0.5 <= ratio / claim.magnitude <= 2)
    verdict = {"reversed": REVERSED, "tie": NOT_SUPPORTED}.get(state) or (SUPPORTED if matched else DIRECTION_ONLY)
    text = f"ratio {ratio:.3g}" + (f" [{low:.3g}, {high:.3g}]" if low is not None else "")
    return Verdict(claim, profile, verdict, text, d.n_text(), _no_interval(d), low, high, ratio)


JUDGES = {"greater": _pairwise, "less": _pairwise, "approx": _approx, "best_of": _best_of, "monotone": _monotone,
          "fraction": _fraction, "ratio_below": _ratio, "ratio_above": _ratio}


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


def _rows_at(claim: Claim, by_metric: dict, profile: str | None) -> dict:
    def pick(selector: Selector) -> pd.DataFrame:
        frame = by_metric.get((selector.experiment, selector.metric), by_metric.get((selector.experiment, "")))
        return select(pd.DataFrame() if frame is None else frame, selector)

    out: dict = {k: pick(s) for k, s in claim.sides.items()}
    out["others"] = [pick(s) for s in claim.others]
    out["series"] = [pick(s) for s in claim.series]
    return out if profile is None else _at_profile(out, profile)


def _at_profile(rows: dict, profile: str) -> dict:
    def keep(frame: pd.DataFrame) -> pd.DataFrame:
        return frame[frame["profile"].astype(str) == profile]

    return {k: [keep(f) for f in v] if isinstance(v, list) else keep(v) for k, v in rows.items()}


def _missing(claim: Claim, rows: dict) -> list[str]:
    named = list(zip(claim.sides.values(), [rows[k] for k in claim.sides]))
    named += list(zip(claim.others, rows["others"])) + list(zip(claim.series, rows["series"]))
    return [s.describe() for s, r in named if r.empty]


def _freshness_notes(rows: dict, specs: dict) -> list[str]:
    """``k stale rows``, ``k dirty rows`` among the distinct rows a verdict read (counted as
    the report counts them, :func:`fyexp.freshness.row_states`: a commit ending ``+dirty``; a row stale against HEAD)."""
    from fyexp.freshness import row_states

    frames = [rows[k] for k in ("a", "b") if k in rows] + rows["others"] + rows["series"]
    used = pd.concat([f for f in frames if not f.empty], ignore_index=True)
    dirty = stale = 0
    for name, part in used.groupby("experiment"):
        if name not in specs:
            continue
        part = part.drop_duplicates()
        dirty += int(part["git_commit"].astype(str).str.endswith("+dirty").sum())
        states = part["freshness"] if "freshness" in part else row_states(specs[name], part)
        stale += int((states == "stale").sum())
    return [f"{n} {kind} rows" for n, kind in ((stale, "stale"), (dirty, "dirty")) if n]


def judge(claim: Claim, frames: dict[str, pd.DataFrame], specs: dict | None = None,
          profile: str | None = None, by_metric: dict | None = None) -> list[Verdict]:
    """The claim's verdict at every profile with rows of its experiments (only ``profile`` if given);
    ``by_metric``: :func:`split_by_metric` of ``frames``, when the caller judges many claims."""
    present = [frames[e] for e in claim.experiments if e in frames and not frames[e].empty]
    if not present:
        return [Verdict(claim, profile, NOT_RUN, notes=[f"no rows of {', '.join(claim.experiments)}"])]
    if by_metric is None:
        from fyexp.freshness import evidence

        by_metric = split_by_metric({e: evidence(frames[e]) for e in claim.experiments if e in frames})
    everything = _rows_at(claim, by_metric, None)
    pieces = [everything[k] for k in claim.sides] + everything["others"] + everything["series"]
    profiles = list(dict.fromkeys(p for f in pieces for p in f["profile"].astype(str)))
    if profile is not None:
        profiles = [p for p in profiles if p == profile]
    if not profiles:
        missing = _missing(claim, everything) or [s.describe() for s in claim.selectors()]
        return [Verdict(claim, profile, MISSING, notes=[f"no rows for {missing[0]}"])]
    out = []
    for p in profiles:
        rows = _at_profile(everything, p)
        missing = _missing(claim, rows)
        if missing:
            out.append(Verdict(claim, p, MISSING, notes=[f"no rows for {missing[0]}"]))
            continue
        verdict = JUDGES[claim.direction](claim, rows, p)
        verdict.notes += _freshness_notes(rows, specs or {})
        out.append(verdict)
    return out


def judge_all(claims, frames: dict[str, pd.DataFrame], specs: dict | None = None,
              profile: str | None = None) -> list[Verdict]:
    from fyexp.freshness import evidence

    by_metric = split_by_metric({name: evidence(frame) for name, frame in frames.items()})  # no unknown provenance
    return [v for c in claims for v in judge(c, frames, specs, profile, by_metric)]


def load_frames(results_dir, experiments_dir=None, names=None) -> tuple[dict[str, pd.DataFrame], dict]:
    """The rows (its ``results.csv`` or cell files, :class:`fyexp.results.ResultStore`) and spec of every experiment
    in ``names`` (default: every experiment with a spec; names without one are skipped)."""
    from fyexp.claims.model import experiment_names, experiment_spec
    from fyexp.results import ResultStore

    known = experiment_names(experiments_dir)
    names = known if names is None else [n for n in dict.fromkeys(names) if n in known]
    specs = {name: experiment_spec(name, experiments_dir) for name in names}
    from fyexp.freshness import row_states

    frames = {}
    for name, spec in specs.items():
        store = ResultStore(results_dir, name)
        frame = _read_only(store)
        if not frame.empty:  # staleness as the index judges it (executed code where recorded), once per experiment
            frame["freshness"] = row_states(spec, frame, store.folder)
        frames[name] = frame
    return frames, specs


def _read_only(store) -> pd.DataFrame:
    """The complete cell files' rows, else ``results.csv`` (:meth:`fyexp.results.ResultStore.load`: it writes
    nothing, and names each damaged file it skips in one warning line)."""
    return store.load()
