"""``fyexp list``'s and ``fyexp show``'s summaries (:class:`fyexp.run.overview.ProfileSummary`, some 0.75 s to derive)
kept beside the results (``results/summaries.json``) so that a fresh clone answers in under a second.

The user cache keys them by modification times, which a clone changes; ``fyexp report`` writes them here under the
*content key* of the results folder (and of the committed ``results/``: :func:`fyexp.run.derivation.content_key`),
which a clone keeps.  Their folders are kept as roles (``results``, ``committed``, ``profile-times``), put back as
this checkout's paths.  Another format, key, spec or anything unexpected is a miss: a cache, never a second source.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path
from typing import Callable

from fyexp.run.derivation import KEPT

STORE = KEPT[1]   # summaries.json, under the results folder
FORMAT = 1


def spec_digest(spec) -> str:
    """SHA-256 of the spec as loaded, its file named by its name alone (the same in another checkout)."""
    return hashlib.sha256(repr(dataclasses.replace(spec, path=Path(spec.path).name)).encode()).hexdigest()


def summaries_key(results_dir: Path, experiments_dir: Path | None) -> str | None:
    """The content key of the results folder (and of the committed ``results/`` where that is another folder) for
    this format; ``None`` where a spec names a runner outside fyexp.  Kept in the user cache under the files'
    :func:`fyexp.run.estimate.recorded_inputs` (hashing the results' bytes takes a fifth of a second)."""
    from fyexp.run.derivation import content_key
    from fyexp.run.estimate import committed_results, recorded_inputs
    from fyexp.store.user_cache import remembered

    def derive() -> str:
        keys = [content_key(results_dir, experiments_dir, FORMAT)]
        if Path(results_dir).resolve() != committed_results():
            keys.append(content_key(committed_results(), experiments_dir, FORMAT))
        return "" if None in keys else hashlib.sha256("\0".join(keys).encode()).hexdigest()

    if (inputs := recorded_inputs(results_dir, experiments_dir)) is None:
        return None
    return remembered("summaries-key", repr(str(Path(results_dir).resolve())), inputs, derive) or None


def _roles(results_dir: Path) -> dict[str, str]:
    """Role → the folder's path as a summary names it (:func:`fyexp.run.estimate.times_as_recorded`'s folders)."""
    from fyexp.run.estimate import PROFILE_TIMES, committed_results

    return {"profile-times": str(PROFILE_TIMES), "committed": str(committed_results()), "results": str(results_dir)}


def _plain_summary(summary, roles: dict[str, str]) -> dict | None:
    """The summary (a dataclass) as JSON values, its folders as roles; ``None`` where a folder has none."""
    row = dataclasses.asdict(summary)
    for key in ("source", "scaled_source"):
        row[key] = next((f"@{role}" for role, path in roles.items() if path == row[key]), None) if row[key] else ""
    return None if None in (row["source"], row["scaled_source"]) else row


def _summary_from(row: dict, roles: dict[str, str], build: type):
    """The summary :func:`_plain_summary` wrote, a ``build``; ``ValueError`` (or ``KeyError``, ``TypeError``) where
    it is of another form or names a folder of no role."""
    if not isinstance(row, dict) or set(row) != {f.name for f in dataclasses.fields(build)}:
        raise ValueError("another summary form")
    folders = {"": "", **{f"@{role}": path for role, path in roles.items()}}
    return build(**{**row, **{k: tuple(row[k]) for k in ("seeds", "extrapolated_keys", "scaled_from")},
                    **{k: folders[row[k]] for k in ("source", "scaled_source")}})


def write_kept(results_dir: Path, experiments_dir: Path | None, derive: Callable[[], dict[str, tuple[str, list]]]
               ) -> Path | None:
    """Keep ``derive()``'s summaries (experiment name → its spec's :func:`spec_digest` and its summaries as recorded)
    under the folder's :func:`summaries_key`, but an experiment's with a summary read from a folder of no role; the
    path, or ``None`` (and any kept file removed) where no key can be made or nothing could be kept."""
    from fyexp.store.io import atomic_write_text

    key, roles = summaries_key(results_dir, experiments_dir), _roles(results_dir)
    experiments = {} if key is None else {
        name: {"spec": digest, "summaries": plain} for name, (digest, summaries) in derive().items()
        if None not in (plain := [_plain_summary(s, roles) for s in summaries])}
    path = Path(results_dir) / STORE
    if not experiments:
        if path.is_file() or path.is_symlink():
            path.unlink()
        return None
    atomic_write_text(path, json.dumps({"format": FORMAT, "key": key, "experiments": experiments},
                                       ensure_ascii=False, separators=(",", ":")) + "\n")
    return path


def read_kept(results_dir: Path, experiments_dir: Path | None, build: type) -> dict[str, tuple[str, list]]:
    """Experiment name → (its spec's digest, its summaries as recorded, each a ``build``) from the kept file, where
    it is of this format and its key is the folders' key now; else ``{}`` (derive afresh).  A folder absent or
    without a file at any depth (a new user's ``results/``) reads the committed ``results/``'s kept file: a summary
    for the empty folder is derived from the same committed results and profile times (the roles are the same)."""
    from fyexp.run.estimate import committed_results
    from fyexp.store.damaged import read_json

    path = Path(results_dir) / STORE
    if not os.path.lexists(path):
        empty = not any(files for _, _, files in os.walk(results_dir))
        if empty and Path(results_dir).resolve() != committed_results():
            return read_kept(committed_results(), experiments_dir, build)
        return {}
    data, _ = read_json(path, shared=True)   # the limits of every record; None where damaged
    try:
        if data["format"] != FORMAT or data["key"] != summaries_key(results_dir, experiments_dir):
            return {}
        roles = _roles(results_dir)
        return {name: (entry["spec"], [_summary_from(row, roles, build) for row in entry["summaries"]])
                for name, entry in data["experiments"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):   # another form: None, a list, a field of another type
        return {}
