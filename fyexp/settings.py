"""A cell's settings, part of its identity: a cell is finished only if a finished file exists **for the same
settings**.

The settings of a cell are everything besides the code that decides its numbers:

- ``config``: the spec after profile merging and ``--set`` overrides (the runner's validated ``Config``);
- ``overrides``: the ``--set`` overrides themselves (``{}`` for the plain profile);
- ``method``, ``params`` (the cell's grid values) and ``seed``;
- ``data``: the experiment's ``data_identity(config, data_dir)`` where it defines one (cheap: sizes of the files
  it reads), else ``None``;
- ``environment``: the device kind (``cpu``/``cuda``) and the versions of torch and numpy.

:func:`settings_hash` is a 12-hex-digit SHA-256 of their canonical JSON; every row carries it (column
``settings_hash``) and the cell's settings are written readably beside its file (``<cell-key>.settings.json``).

**Rows without a hash (written before this rule, "legacy").**  They are kept current unless the spec changed since
they ran: the profile as merged from ``git show <row's git_commit>:<spec file>`` is validated by today's runner
``Config`` and compared with the profile as it is now (seeds aside); an old spec that no longer validates (its keys
were since renamed) cannot be compared and its rows stay current.  When git cannot tell (no checkout, unknown commit, the spec outside the repository), a legacy
row is kept current ("unknown (legacy)"): committed results are never thrown away for lack of a record.

**Records read back.**  A row naming a settings hash is trusted only with its sidecar: present, of the schema of
:func:`cell_settings` and hashing to the rows' hash (:func:`read_sidecar`); else one warning line names the sidecar,
the row has unknown provenance in the report and the claims, and ``fyexp run`` redoes the cell
(:func:`finished_verdict`).

When a cell reruns because its settings changed, its old file (and sidecar) moves to
``<experiment>/superseded/<profile>/<cell-key>.<old hash or legacy>.csv``: kept, never averaged with the new rows,
and out of ``results.csv`` and the report.
"""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from fyexp import gitinfo
from fyexp.plain import jsonable  # noqa: F401  (runners import it from here too)

SETTINGS_SUFFIX = ".settings.json"
SUPERSEDED_MARK = "~superseded-"   # a superseded file's rows get profile ``<profile>~superseded-<hash>``


@functools.lru_cache(maxsize=None)
def _versions() -> tuple[str, str]:
    import numpy
    import torch

    return torch.__version__, numpy.__version__


def environment(device: str) -> dict:
    """The part of the machine that decides numerics: device kind, torch and numpy versions."""
    torch_version, numpy_version = _versions()
    return {"device_kind": str(device).split(":", 1)[0], "torch": torch_version, "numpy": numpy_version}


def scoped_config(experiment: Any, config: Any, cell: Any) -> Any:
    """The part of ``config`` that decides ``cell``'s numbers, as JSON: the experiment's ``cell_config(config,
    cell)`` where it declares one (vr-vae: only the cell's data set's training block), else the whole config less
    the grid listing (``experiment.grid_field`` of a :class:`fyexp.experiments.grid.GridExperiment`), whose values the cell
    carries in its ``params``.  So adding a value to an axis, or editing another data set's block, changes no other
    cell's settings.  Without an experiment (or a cell): the whole config."""
    if experiment is None or cell is None:
        return jsonable(config)
    hook = getattr(experiment, "cell_config", None)
    if callable(hook):
        return jsonable(hook(config, cell))
    data = jsonable(config)
    grid_field = getattr(experiment, "grid_field", None)
    if isinstance(data, dict) and grid_field:
        data.pop(grid_field, None)
    return data


def cell_settings(resolved: Any, cell: Any, device: str, data: Any = None, experiment: Any = None) -> dict:
    """The settings of ``cell`` of ``resolved`` (a :class:`fyexp.specs.ResolvedSpec`) on ``device``; ``config`` is
    scoped to the cell by :func:`scoped_config` when the ``experiment`` is given."""
    return {
        "experiment": resolved.name,
        "profile": getattr(resolved, "base_profile", resolved.profile),
        "overrides": {k: jsonable(v) for k, v in getattr(resolved, "overrides", ())},
        "config": scoped_config(experiment, resolved.config, cell),
        "method": cell.method,
        "params": jsonable(cell.params),
        "seed": int(cell.seed),
        "data": jsonable(data),
        "environment": environment(device),
    }


def settings_hash(settings: dict) -> str:
    text = json.dumps(settings, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def data_identity(experiment: Any, config: Any, data_dir: Path | None) -> Any:
    """The experiment's cheap identity of its data (``experiment.data_identity``), ``None`` where it has none."""
    identify = getattr(experiment, "data_identity", None)
    return identify(config, data_dir) if callable(identify) else None


def sidecar_path(cell_file: Path) -> Path:
    return cell_file.with_suffix(SETTINGS_SUFFIX)


def write_sidecar(cell_file: Path, settings: dict) -> None:
    from fyexp.io import atomic_write_text

    atomic_write_text(sidecar_path(cell_file), json.dumps(settings, indent=1, sort_keys=True, default=str) + "\n")


# the sidecar's schema: each key of :func:`cell_settings` and the JSON type it holds (``None``: any JSON value)
SIDECAR_FIELDS: dict[str, type | None] = {
    "experiment": str, "profile": str, "overrides": dict, "config": None, "method": str, "params": dict,
    "seed": int, "data": None, "environment": dict,
}


def sidecar_problem(settings: object, expected_hash: str) -> str | None:
    """What is wrong with a parsed settings sidecar of a cell whose rows name ``expected_hash`` (``None``: nothing):
    it must be a JSON object with exactly the keys of :data:`SIDECAR_FIELDS`, each of its type, whose
    :func:`settings_hash` is the rows' (else the rows were not made at the settings it states)."""
    if not isinstance(settings, dict):
        return f"not a JSON object of settings (a JSON {type(settings).__name__})"
    keys = set(settings)
    if keys != set(SIDECAR_FIELDS):
        missing, extra = sorted(set(SIDECAR_FIELDS) - keys), sorted(keys - set(SIDECAR_FIELDS))
        return "; ".join(part for part in (f"missing key(s) {', '.join(missing)}" if missing else "",
                                           f"unexpected key(s) {', '.join(extra)}" if extra else "") if part)
    for key, kind in SIDECAR_FIELDS.items():
        if kind is not None and (not isinstance(settings[key], kind) or isinstance(settings[key], bool)):
            return f"'{key}' is not a JSON {'integer' if kind is int else 'string' if kind is str else 'object'}"
    found = settings_hash(settings)
    if found != expected_hash:
        return f"its settings hash {found}, but the cell's rows name {expected_hash}"
    return None


def read_sidecar(cell_file: Path, expected_hash: str) -> tuple[dict | None, str | None]:
    """The settings recorded beside ``cell_file``, whose rows name settings ``expected_hash``: ``(settings, None)``,
    or ``(None, what is wrong)``, named in one warning line (:func:`fyexp.damaged.warn_damaged`): the record is
    missing, not JSON, not of the schema or of other settings (:func:`sidecar_problem`).  The rows of such a cell
    have unknown provenance."""
    from fyexp.damaged import UNKNOWN_PROVENANCE_NOTE, read_json, warn_damaged

    path = sidecar_path(Path(cell_file))
    what = "damaged settings record"
    if not path.exists():
        what, problem = "missing settings record", f"the rows of {Path(cell_file).name} name settings {expected_hash}"
    else:
        settings, problem = read_json(path)
        if problem is None:
            problem = sidecar_problem(settings, expected_hash)
            if problem is None:
                return settings, None
    warn_damaged(path, what, problem, UNKNOWN_PROVENANCE_NOTE)
    return None, problem


def records_problem(cell_file: Path, recorded_hash: str | None) -> str | None:
    """What is wrong with the records beside a finished cell file (``None``: nothing): its settings record, when its
    rows name a settings hash (:func:`read_sidecar`), and its executed-code record, where it has one
    (:func:`fyexp.executed.read_record`).  Each damaged record is one warning line."""
    from fyexp.executed import read_record

    problem = read_sidecar(cell_file, recorded_hash)[1] if recorded_hash is not None else None
    return read_record(cell_file)[1] or problem


# ---- legacy rows: the spec at their commit ---------------------------------------------------------------------
def merged_profile(data: dict, profile: str) -> dict | None:
    """``defaults`` deep-merged with ``profiles[profile]``, seeds left out; ``None`` if the profile is missing."""
    from fyexp.specs import deep_merge

    profiles = data.get("profiles") or {}
    if not isinstance(profiles, dict) or not isinstance(profiles.get(profile), dict):
        return None
    merged = deep_merge(data.get("defaults") or {}, profiles[profile])
    merged.pop("seeds", None)
    return merged


@functools.lru_cache(maxsize=None)
def spec_at_commit(spec_path: Path, commit: str) -> dict | None:
    """The spec file as committed at ``commit`` (parsed YAML), ``None`` when git cannot show it."""
    top = gitinfo.toplevel(spec_path.resolve().parent)
    if not commit or commit == "unknown" or top is None:
        return None
    text = gitinfo.file_at_commit(top, commit, spec_path.resolve().relative_to(top).as_posix())
    if text is None:
        return None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    return data if isinstance(data, dict) else None


def legacy_settings_changed(spec: Any, profile: str, git_commit_value: object,
                            config_cls: type | None = None, cell: Any = None, experiment: Any = None) -> bool | None:
    """For a row without ``settings_hash``: whether ``profile`` of ``spec`` changed since the row's commit
    (``None``: cannot tell, the row is kept current).

    With the runner's ``config_cls`` both versions are validated and their configs compared, so a spec that was
    only rewritten (a key moved into ``train:``, a default made explicit) changes nothing; an old spec that no longer
    validates cannot be compared (``None``).  Without it the merged YAML is compared as written.  Given the row's
    ``cell`` and the ``experiment``, only the part of the config that cell depends on is compared
    (:func:`scoped_config`)."""
    from fyexp.errors import FyexpError
    from fyexp.specs import build_config

    commit = str(git_commit_value).split("+", 1)[0] if isinstance(git_commit_value, str) else ""
    old = spec_at_commit(Path(spec.path), commit)
    if old is None:
        return None
    then = merged_profile(old, profile)
    now = merged_profile({"defaults": spec.defaults, "profiles": spec.profiles}, profile)
    if config_cls is None or then is None or now is None:
        return then != now
    try:
        then_config, now_config = (build_config(config_cls, merged, spec.path, f"profiles.{profile}")
                                   for merged in (then, now))
    except (FyexpError, TypeError, ValueError):
        return None
    return scoped_config(experiment, then_config, cell) != scoped_config(experiment, now_config, cell)


def recorded_settings(frame: Any) -> tuple[str | None, str | None]:
    """``(settings_hash, git_commit)`` recorded by a cell file's rows (``None`` where absent)."""
    def first(column: str) -> str | None:
        if column not in frame.columns:
            return None
        values = frame[column].dropna().astype(str)
        return values.iloc[0] if len(values) else None

    return first("settings_hash"), first("git_commit")


def settings_verdict(frame: Any, expected_hash: str, spec: Any, profile: str, config_cls: type | None = None,
                     cell: Any = None, experiment: Any = None) -> str:
    """``same``, ``changed`` or ``legacy`` (no hash, kept current) for a finished cell file's rows."""
    recorded, commit = recorded_settings(frame)
    if recorded is not None:
        return "same" if recorded == expected_hash else "changed"
    changed = legacy_settings_changed(spec, profile, commit, config_cls, cell, experiment)
    return "changed" if changed else "legacy"


# ---- the finished check and superseding, on a results store ---------------------------------------------------
def expected_settings(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None) -> dict:
    """The settings ``cell`` would run at now (:func:`cell_settings` with the experiment's data identity)."""
    return cell_settings(resolved, cell, device, data_identity(experiment, resolved.config, data_dir), experiment)


def finished_verdict(store: Any, resolved: Any, cell: Any, expected_hash: str, experiment: Any = None) -> str:
    """``absent`` (no finished file: missing, damaged or failed, :meth:`ResultStore.is_finished`; or its records
    damaged, :func:`records_problem`), else the :func:`settings_verdict` of its rows: ``same``, ``legacy`` (both
    finished) or ``changed`` (to rerun)."""
    from fyexp.results import read_cell_file

    if not store.is_finished(resolved.profile, cell):
        return "absent"
    path = store.cell_path(resolved.profile, cell)
    frame, _ = read_cell_file(path, expected_key=cell.key)
    if records_problem(path, recorded_settings(frame)[0]) is not None:
        return "absent"  # unknown provenance: never current, so redone (the warning names the record)
    spec = getattr(resolved, "spec", None)
    if spec is None:  # no spec to compare a legacy file with: same hash or kept
        return "changed" if recorded_settings(frame)[0] not in (None, expected_hash) else "same"
    return settings_verdict(frame, expected_hash, spec, getattr(resolved, "base_profile", resolved.profile),
                            type(resolved.config), cell, experiment)


def superseded_dir(store: Any, profile: str) -> Path:
    return store.folder / "superseded" / profile


def supersede(store: Any, profile: str, cell: Any) -> Path | None:
    """Move ``cell``'s finished file (and its settings sidecar) out of the current cells, to
    ``superseded/<profile>/<key>.<its settings hash or 'legacy'>.csv``; return where it went (``None`` if none)."""
    from fyexp.results import read_cell_file

    path = store.cell_path(profile, cell)
    if not path.is_file():
        return None
    frame, _ = read_cell_file(path)
    tag = (recorded_settings(frame)[0] if frame is not None else None) or "legacy"
    target = superseded_dir(store, profile) / f"{cell.key}.{tag}.csv"
    target.parent.mkdir(parents=True, exist_ok=True)
    path.replace(target)
    if sidecar_path(path).is_file():
        sidecar_path(path).replace(sidecar_path(target))
    return target


def superseded_rows(store: Any) -> Any:
    """The rows of every superseded cell file of ``store``'s experiment, each profile relabelled
    ``<profile>~superseded-<settings hash or legacy>`` so that rows of different settings are never pooled with the
    current ones or with each other (``fyexp report --superseded``)."""
    import pandas as pd

    from fyexp.results import read_cell_file

    from fyexp.damaged import warn_damaged

    frames = []
    for path in sorted((store.folder / "superseded").glob("*/*.csv")):
        frame, problem = read_cell_file(path)
        if problem is not None:
            warn_damaged(path, "skipped damaged superseded file", problem, "it is not read")
        if frame is None or frame.empty:
            continue
        tag = path.stem.rsplit(".", 1)[-1]
        frame = frame.copy()
        frame["profile"] = f"{path.parent.name}{SUPERSEDED_MARK}{tag}"
        frames.append(frame)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()
