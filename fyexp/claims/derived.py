"""Result rows the claims derive from a run's rows and saved artifacts, where a paper's claim is about what a run
did, not where it ended.

``tvem-bsc``: ``free_energy_gap`` — per run, log-likelihood − truncated free energy at the learned parameters
(nats per point), ≥ 0 as the bound guarantees (Lücke, Prop. 4, eq. 22); ``free_energy_largest_drop`` — per TV-EM or exact-EM run, the largest decrease of the truncated free
energy (eq. 6, per data point, nats) between consecutive iterations, max_t (F_t − F_{t+1}), read from the run's
saved trace (``artifacts/<profile>/fits/<cell>.json``, key ``free_energy``); ≤ 0 when the free energy never
decreased, as TV-EM guarantees (Lücke, Sec. 2.2, eqs. 7–9).  Each derived row copies the cell's ``free_energy`` row
(its seed, params, commit, freshness) with the metric and value replaced and ``source_metric`` naming the row it
copies, so it is as stale as the run it reads and a stale row is counted once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.store.damaged import is_path_part, read_json, warn_damaged

LARGEST_DROP = "free_energy_largest_drop"
GAP = "free_energy_gap"
#: experiment → the metrics derived for it
DERIVED = {"tvem-bsc": (LARGEST_DROP, GAP)}


def largest_drop(trace) -> float:
    """max_t (F_t − F_{t+1}) over a free-energy trace (``nan`` with fewer than two values)."""
    values = np.asarray(trace, dtype=float)
    return float(np.max(values[:-1] - values[1:])) if len(values) > 1 else float("nan")


def with_derived(name: str, frame: pd.DataFrame, folder: Path | None) -> pd.DataFrame:
    """``frame`` (experiment ``name``'s rows) and the rows :data:`DERIVED` from its artifacts under ``folder``."""
    if name not in DERIVED or frame.empty or "cell" not in frame:
        return frame
    base = frame[frame["metric"] == "free_energy"]
    loglik = frame[frame["metric"] == "log_likelihood"].set_index(["profile", "cell"])["value"]
    loglik = loglik[~loglik.index.duplicated()]
    rows = []
    for _, row in base.iterrows():
        key = (row["profile"], row["cell"])
        if key in loglik.index:
            rows.append({**row.to_dict(), "metric": GAP, "source_metric": "free_energy",
                         "value": float(loglik[key]) - float(row["value"])})
        if not (is_path_part(str(row["profile"])) and is_path_part(str(row["cell"]))):
            continue   # a row's text is never a path outside its folder ("../../x"): such a row has no trace
        path = Path(folder or ".") / "artifacts" / str(row["profile"]) / "fits" / f"{row['cell']}.json"
        if path.exists() or path.is_symlink():
            fit, problem = read_json(path)   # a regular file within the limits, never a FIFO or a link
            trace = (fit.get("free_energy") or []) if problem is None and isinstance(fit, dict) else None
            if not isinstance(trace, list) or not all(isinstance(v, (int, float)) for v in trace):
                warn_damaged(path, "damaged fit file", problem or "no list of numbers under 'free_energy'",
                             f"its {LARGEST_DROP} is not derived")
                continue
            rows.append({**row.to_dict(), "metric": LARGEST_DROP, "source_metric": "free_energy",
                         "value": largest_drop(trace)})
    return pd.concat([frame, pd.DataFrame(rows)], ignore_index=True) if rows else frame
