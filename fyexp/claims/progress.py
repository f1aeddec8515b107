"""How far an experiment's run at a profile has got: the note a ``data missing`` verdict carries.

A side of a claim without rows at a profile is either absent for good (the metric needs what the machine lacks, as
FID needs Inception weights) or simply not run yet (its cells are declared but the queue has not reached them).  The
verdict cannot tell which from the rows alone; what it can say is how many of the profile's declared cells have rows,
so that a reader of ``data missing (reduced profile claims)`` sees "34 of 49 cells" and knows the run is part-way.
The count of declared cells is the spec's grid × seeds (:func:`fyexp.experiments.declared.declared_cells`, the count
``fyexp list`` and ``fyexp run`` print), the count with rows the distinct ``cell`` values of the experiment's current
rows at that profile.
"""

from __future__ import annotations

import pandas as pd


def declared_count(spec, profile: str) -> int | None:
    """The number of cells ``spec`` declares at ``profile``; ``None`` for a profile the spec does not name (a
    ``--set`` variant, a superseded label) or one that no longer resolves."""
    from fyexp.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.experiments.declared import declared_cells
    from fyexp.specs import resolve

    if profile not in spec.profiles:
        return None
    try:
        resolved = resolve(spec, profile, get_config_class(spec.runner))
    except (FyexpError, ImportError):
        return None
    return len(declared_cells(resolved.config, resolved.seeds))


def cells_with_rows(frame: pd.DataFrame | None, profile: str) -> int:
    """The number of distinct cells of ``frame`` with a row at ``profile``."""
    if frame is None or frame.empty or "cell" not in frame or "profile" not in frame:
        return 0
    return int(frame.loc[frame["profile"].astype(str) == profile, "cell"].nunique())


def unfinished(experiments, frames: dict, specs: dict, profile: str) -> list[str]:
    """``"E at P: F of D cells have rows"`` for each experiment of ``experiments`` (once each, in order) whose run
    at ``profile`` has rows for fewer cells than the spec declares there; nothing for an experiment without a spec
    or a profile the spec does not name."""
    notes = []
    for name in dict.fromkeys(experiments):
        spec = specs.get(name)
        declared = None if spec is None else declared_count(spec, profile)
        if declared is None:
            continue
        finished = cells_with_rows(frames.get(name), profile)
        if finished < declared:
            notes.append(f"{name} at {profile}: {finished} of {declared} cells have rows")
    return notes


def recorded_reasons(frame: pd.DataFrame | None, selector, profile: str | None = None) -> list[str]:
    """Why the rows say a side was not measured: the rows ``selector`` would name were they measured (its
    experiment's rows of its metric, method and params, through :func:`fyexp.claims.verdicts.select`; not its
    setting, paper row or table, which only a measured row carries) whose ``status`` is ``missing``, at
    ``profile`` (every profile when ``None``), grouped by their ``label`` — a cell writes the reason there, as FID
    does without Inception weights.  One note per reason, read after ``no rows for E:M[...]``:
    ``"not measured in N of its rows (at P, Q): LABEL"``, in the order the rows give them; none when no row says."""
    from dataclasses import replace

    from fyexp.claims.verdicts import select

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
