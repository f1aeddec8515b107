"""How far an experiment's run at a profile has got: the note a ``data missing`` verdict carries.

A side of a claim without rows at a profile is either absent for good (the metric needs what the machine lacks, as
FID needs Inception weights) or simply not run yet (its cells are declared but the queue has not reached them).  The
verdict cannot tell which from the rows alone; what it can say is how many of the profile's declared cells have rows,
so that a reader of ``data missing (reduced profile claims)`` sees "34 of 49 cells" and knows the run is part-way.
The count of declared cells is the spec's grid × seeds (:func:`fyexp.experiments.declared.declared_cells`, the count
``fyexp list`` and ``fyexp run`` print), the count with rows the distinct ``cell`` values of the experiment's current
rows at that profile.

Where no profile has a side's rows at all, :func:`supplying_cells` says which declared cells would write them: the
cells of each profile whose method and params (and table) are the side's, so that a reader sees whether the queue
will supply them (``declared at claims``) or no profile has them yet (``at no profile``).
"""

from __future__ import annotations

import pandas as pd


def declared_count(spec, profile: str) -> int | None:
    """The number of cells ``spec`` declares at ``profile``; ``None`` for a profile the spec does not name (a
    ``--set`` variant, a superseded label) or one that no longer resolves."""
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.experiments.declared import declared_cells
    from fyexp.spec.specs import resolve

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



def _norm(value) -> str:
    """``3``, ``3.0`` and ``'3'`` alike (as :func:`fyexp.claims.verdicts.select` compares them)."""
    try:
        return f"{float(value):g}"
    except (TypeError, ValueError):
        return str(value)


def _supplies(cell, selector) -> bool:
    """Whether ``cell`` (a declared cell) writes rows of ``selector``'s method, params and table."""
    params = cell.params
    if selector.method is not None and str(cell.method or params.get("method")) != selector.method:
        return False
    if selector.table is not None and "table" in params and _norm(params["table"]) != _norm(selector.table):
        return False
    return all(k in params and _norm(params[k]) == _norm(v) for k, v in selector.params)


def supplying_cells(selector, spec) -> list[str]:
    """The note of a side no profile has rows for: ``"its cells (E: method=M, k=v): N declared at P, M at Q; none
    at R"`` over the spec's profiles (their declared cells × seeds whose method, params and table are the side's),
    ``"... at no profile"`` when none declares one; nothing for a side that names no method or params (its cells
    cannot be told from its keys) or an experiment without a spec."""
    if spec is None or (selector.method is None and not selector.params):
        return []
    from fyexp.core.errors import FyexpError
    from fyexp.experiments import get_config_class
    from fyexp.experiments.declared import declared_cells
    from fyexp.spec.specs import resolve

    counts = {}
    for profile in spec.profiles or {}:
        try:
            resolved = resolve(spec, profile, get_config_class(spec.runner))
        except (FyexpError, ImportError):
            continue
        counts[profile] = sum(_supplies(c, selector) for c in declared_cells(resolved.config, resolved.seeds))
    keys = ([f"method={selector.method}"] if selector.method is not None else []) + \
        ([f"table={selector.table}"] if selector.table is not None else []) + [f"{k}={v}" for k, v in selector.params]
    name = f"its cells ({selector.experiment}: {', '.join(keys)})"
    declared = [f"{n} at {p}" for p, n in counts.items() if n]
    if not declared:
        return [f"{name}: declared at no profile"]
    none = [p for p, n in counts.items() if not n]
    return [f"{name}: {', '.join(declared)} declared" + (f"; none at {', '.join(none)}" if none else "")]
