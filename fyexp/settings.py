"""A cell's settings, part of its identity: a cell is finished only if a finished file exists **for the same
settings**.

The settings of a cell are everything besides the code that decides its numbers:

- ``config``: the spec after profile merging and ``--set`` overrides (the runner's validated ``Config``);
- ``overrides``: the ``--set`` overrides themselves (``{}`` for the plain profile);
- ``method``, ``params`` (the cell's grid values) and ``seed``;
- ``data``: the experiment's ``data_identity(config, data_dir)`` (cheap: sizes of the files
  it reads), else ``None``;
- ``environment``: the device kind (``cpu``/``cuda``) and the versions of torch and numpy.

:func:`settings_hash` (:mod:`fyexp.provenance.record`) is a 12-hex-digit SHA-256 of their canonical JSON; every row
carries it (column ``settings_hash``) and the cell's settings are written readably beside its file
(``<cell-key>.settings.json``, by :func:`fyexp.provenance.record.write_record`, read back only by its
:func:`~fyexp.provenance.record.load_record`).

**Rows without a hash (written before this rule, "legacy").**  They are kept current unless the spec changed since
they ran: the profile as merged from ``git show <row's git_commit>:<spec file>`` is validated by today's runner
``Config`` and compared with the profile as it is now (seeds aside); an old spec that no longer validates (its keys
were since renamed) cannot be compared and its rows stay current.  When git cannot tell (no checkout, unknown commit, the spec outside the repository), a legacy
row is kept current ("unknown (legacy)"): committed results are never thrown away for lack of a record.

Whether a cell's settings changed is decided by one rule, :func:`fyexp.provenance.freshness.settings_state`, for
``run`` (:func:`expectation`: every key, the machine's environment included), the report and the claims
(:mod:`fyexp.spec_freshness`: the config).  When a cell reruns because its settings changed, its old file (and
settings record) moves to ``<experiment>/superseded/<profile>/<cell-key>.<old hash or legacy>.csv``
(:meth:`fyexp.results.ResultStore.supersede`): kept, never averaged with the new rows, and out of ``results.csv``
and the report.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import yaml

from fyexp import gitinfo
from fyexp.plain import jsonable  # noqa: F401  (runners import it from here too)
from fyexp.provenance.freshness import Expected
from fyexp.provenance.record import settings_hash

__all__ = ["cell_settings", "data_identity", "environment", "expectation", "expected_settings", "jsonable",
           "legacy_settings_changed", "scoped_config", "settings_hash"]


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
    cell)`` (:class:`fyexp.experiments.base.Experiment`, or the runner's light config module: vr-vae: only the
    cell's data set's training block; by default the whole config less the grid listing, whose values the cell
    carries in its ``params``).  So adding a value to an axis, or editing another data set's block, changes no other
    cell's settings.  Without an experiment (or a cell): the whole config."""
    if experiment is None or cell is None:
        return jsonable(config)
    return jsonable(experiment.cell_config(config, cell))


def training_epochs(config: Any) -> int | None:
    """The training epochs a cell's (scoped) config as JSON states: the ``epochs`` of its first ``train*`` block
    that has an integer one, else a top-level integer ``epochs``; ``None`` where it states none."""
    if not isinstance(config, dict):
        return None
    for key, value in config.items():
        if key.startswith("train") and isinstance(value, dict) and isinstance(value.get("epochs"), int):
            return value["epochs"]
    epochs = config.get("epochs")
    return epochs if isinstance(epochs, int) and not isinstance(epochs, bool) else None


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


def data_identity(experiment: Any, config: Any, data_dir: Path | None) -> Any:
    """The experiment's cheap identity of its data (``experiment.data_identity``), ``None`` where it has none."""
    return None if experiment is None else experiment.data_identity(config, data_dir)


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


# ---- what run compares a finished cell with ----------------------------------------------------------------------
def expected_settings(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None) -> dict:
    """The settings ``cell`` would run at now (:func:`cell_settings` with the experiment's data identity)."""
    return cell_settings(resolved, cell, device, data_identity(experiment, resolved.config, data_dir), experiment)


def expectation(resolved: Any, experiment: Any, cell: Any, device: str, data_dir: Path | None, *,
                settings: dict | None = None, compare_environment: bool = True) -> Expected:
    """What a finished file of ``cell`` is compared with (:func:`fyexp.provenance.freshness.settings_state`): every
    key of its :func:`expected_settings` (``settings`` when already computed), without the environment where
    ``compare_environment`` is false (the device queue: a cell finished on another machine is finished), and, for
    a legacy file, its profile at the file's commit (:func:`legacy_settings_changed`; not for a ``--set`` variant,
    whose overrides a legacy file does not record, nor without the resolved spec)."""
    settings = expected_settings(resolved, experiment, cell, device, data_dir) if settings is None else settings
    if not compare_environment:
        settings = {k: v for k, v in settings.items() if k != "environment"}
    spec = getattr(resolved, "spec", None)
    legacy = None
    if spec is not None and not getattr(resolved, "overrides", ()):
        base = getattr(resolved, "base_profile", resolved.profile)
        config_cls = type(resolved.config)

        def legacy(commit: str | None) -> bool | None:
            return legacy_settings_changed(spec, base, commit, config_cls, cell, experiment)
    return Expected(settings=settings, legacy=legacy)
