"""The optimization history of an experiment's Optuna study (``fyexp tune``), with a Markdown summary."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from fyexp.report.cache import write_text_if_changed
from fyexp.report.figures import FigureContext, figure


@figure("optuna-history")
def optuna_history(ctx: FigureContext, *, title: str = "") -> list[Path]:
    """One figure per study of the experiment: each ``results/<experiment>/best_params-<profile>.yaml``, and the
    first studies' ``best_params.yaml`` (its study once); titled ``<title or "<experiment> tuning"> [<profile>]``."""
    from fyexp.spec.tuning import BEST_PARAMS

    from fyexp.spec.tuning import best_params_path

    files = sorted(ctx.folder.glob("best_params-*.yaml")) + [ctx.folder / BEST_PARAMS]
    drawn: list[Path] = []
    for path in files:
        profile = study_profile(path)
        if path.name == BEST_PARAMS and os.path.lexists(best_params_path(ctx.folder, profile)):
            continue  # the first studies' file, since superseded by its profile's own
        pngs = report_study(path, ctx.figures_dir, title=f"{title or f'{ctx.experiment} tuning'} [{profile}]")
        drawn += [p for p in pngs if p not in drawn]
    for name, study in local_studies(ctx.folder):   # a study no best-parameters file names any more is drawn too
        profile = name.removeprefix(f"{ctx.experiment}-")
        png = ctx.figures_dir / f"study_{name}.png"
        if png in drawn or profile == name:
            continue
        drawn += draw_study(study, {}, ctx.figures_dir, f"{title or f'{ctx.experiment} tuning'} [{profile}]")
    return drawn


def local_studies(folder: Path) -> list[tuple[str, object]]:
    """``(name, study)`` of every study in the folder's ``study.db`` (``fyexp tune`` names them
    ``<experiment>-<profile>``), in name order, the file opened read-only (:func:`fyexp.spec.tuning.read_only_storage`:
    never written, a 0-byte file stays 0 bytes); none without the file or where it is no study file
    (:func:`fyexp.spec.tuning.study_file_problem`) or cannot be read: the report warns of a damaged study file once,
    apart
    (:func:`fyexp.report.runs.damaged_studies`)."""
    from fyexp.spec.tuning import STUDY_DB

    storage = _study_storage(Path(folder) / STUDY_DB)
    if storage is None:
        return []
    import optuna

    try:
        names = sorted(s.study_name for s in optuna.get_all_study_summaries(storage, include_best_trial=False))
        return [(name, optuna.load_study(study_name=name, storage=storage)) for name in names]
    except Exception:  # a damaged or foreign file: no figure (warned of by damaged_studies)
        return []


def _study_storage(path: Path):
    """A read-only Optuna storage over the study file ``path``, or None (absent, or not a study file)."""
    from fyexp.spec.tuning import read_only_storage, study_file_problem

    if not os.path.lexists(path) or study_file_problem(path) is not None:
        return None
    try:
        return read_only_storage(path)
    except Exception:  # a file the storage cannot open: no figure
        return None


def _best_params_info(best_params: Path) -> dict | None:
    """The best-parameters file as a mapping (:func:`fyexp.spec.tuning.best_params_file_problem`), or None: absent, or
    damaged (one warning naming it; its study's figure is skipped)."""
    from fyexp.store.damaged import warn_damaged
    from fyexp.spec.tuning import best_params_file_problem

    if not os.path.lexists(best_params):
        return None
    info, problem = best_params_file_problem(best_params)
    if problem is not None:
        warn_damaged(best_params, "skipped damaged best-parameters file", problem, "its study's figure is not drawn")
        return None
    return info


def study_profile(best_params: Path) -> str:
    """The profile a best-parameters file names (its ``profile``, else the part of its name after
    ``best_params-``)."""
    profile = (_best_params_info(best_params) or {}).get("profile")
    return str(profile) if profile else best_params.stem.removeprefix("best_params-")


def objective_label(study, info: dict) -> str:
    """The y axis: what the trials return, as ``fyexp tune`` recorded it (the study's ``objective`` attribute or the
    file's ``objective``), with the direction; a study that recorded neither says so."""
    name = study.user_attrs.get("objective") or info.get("objective")
    direction = "minimize" if study.direction.name == "MINIMIZE" else "maximize"
    return f"{name} ({direction})" if name else f"trial value ({direction})\n(objective not recorded)"


def report_study(best_params: Path, figures_dir: Path, title: str = "") -> list[Path]:
    """Optimization-history PNG and a Markdown summary of the study named in a best-parameters file.

    The study is read from the SQLite file beside ``best_params`` (``study.db``, read-only) or else from the
    storage URL recorded in the file: a database server's, never a file's (a ``sqlite:`` or ``journal:`` URL from
    someone else's file may name any path).  Returns the PNG path (nothing when there is no study yet, or the file
    is damaged: one warning); the Markdown goes next to it as ``<stem>.md``.
    """
    import optuna

    from fyexp.spec.tuning import STUDY_DB

    best_params = Path(best_params)
    info = _best_params_info(best_params)
    if info is None or not isinstance(info.get("study"), str):
        return []
    local = best_params.parent / STUDY_DB
    if os.path.lexists(local):
        storage = _study_storage(local)   # a damaged study file: no figure (warned of by damaged_studies)
    else:
        url = info.get("storage")
        if not isinstance(url, str) or "***" in url or url.startswith(("sqlite", "journal:")):
            return []
        try:
            storage = optuna.storages.RDBStorage(url, skip_compatibility_check=True, skip_table_creation=True)
        except Exception:  # a storage that is gone or unreachable: no figure
            return []
    if storage is None:
        return []
    try:
        study = optuna.load_study(study_name=info["study"], storage=storage)
    except Exception:  # no such study in it, or unreadable: no figure
        return []
    return draw_study(study, info, figures_dir, title)


def draw_study(study, info: dict, figures_dir: Path, title: str = "") -> list[Path]:
    """The optimization-history PNG of ``study`` (``info``: its best-parameters file's fields, ``{}`` for none) and
    its Markdown summary beside it; the trial axis ticks whole trial numbers, one trial included."""
    import matplotlib.ticker
    import optuna
    from optuna.trial import TrialState

    from fyexp.spec.tuning import study_summary

    from fyexp.report.figures.output import plt, save_figure

    trials = study.get_trials(deepcopy=False)
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    pruned = [t for t in trials if t.state == TrialState.PRUNED and t.intermediate_values]
    fig, ax = plt.subplots(figsize=(6.8, 3.4))   # room for the legend beside the axes
    if done:
        xs = [t.number for t in done]
        ys = [t.value for t in done]
        ax.scatter(xs, ys, s=14, label="complete")
        best = np.minimum.accumulate(ys) if study.direction == optuna.study.StudyDirection.MINIMIZE \
            else np.maximum.accumulate(ys)
        ax.step(xs, best, where="post", color="C3", label="best so far")
    if pruned:
        ax.scatter([t.number for t in pruned], [t.intermediate_values[max(t.intermediate_values)] for t in pruned],
                   s=10, marker="x", color="0.6", label="pruned (last reported)")
    numbers = [t.number for t in done + pruned]
    if numbers:   # whole trials: one trial alone gets the axis 0 ± 0.5, ticked at its number, not at ±0.045
        ax.set_xlim(min(numbers) - 0.5, max(numbers) + 0.5)
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True, min_n_ticks=1))
    ax.set_xlabel("trial")
    ax.set_ylabel(objective_label(study, info))
    ax.set_title(title or study.study_name)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))   # beside the axes: over no trial
    stem = f"study_{study.study_name}"
    png = save_figure(fig, figures_dir / f"{stem}.png")
    summary = study_summary(study)
    counts = ", ".join(f"{n} {state}" for state, n in summary["trials"].items() if n)
    lines = [f"# Optuna study `{study.study_name}`", "", f"Trials: {counts}.", ""]
    if summary["best_trial"] is not None:
        lines += [f"Best value {summary['best_value']:.6g} (trial {summary['best_trial']}), parameters:", "",
                  "| parameter | value |", "|---|---|"]
        lines += [f"| {k} | {v:.6g} |" if isinstance(v, float) else f"| {k} | {v} |" for k, v in summary["params"].items()]
    lines += ["", f"![optimization history]({png.name})", ""]
    write_text_if_changed(figures_dir / f"{stem}.md", "\n".join(lines))
    return [png]
