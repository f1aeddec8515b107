"""The optimization history of an experiment's Optuna study (``fyexp tune``), with a Markdown summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml

from fyexp.report.cache import write_text_if_changed
from fyexp.report.figures import FigureContext, figure


@figure("optuna-history")
def optuna_history(ctx: FigureContext, *, title: str = "") -> list[Path]:
    """The study named in ``results/<experiment>/best_params.yaml`` (default title: ``<experiment> tuning``)."""
    from fyexp.tuning import BEST_PARAMS

    return report_study(ctx.folder / BEST_PARAMS, ctx.figures_dir, title=title or f"{ctx.experiment} tuning")


def report_study(best_params: Path, figures_dir: Path, title: str = "") -> list[Path]:
    """Optimization-history PNG and a Markdown summary of the study named in a best-parameters file.

    The study is read from the SQLite file beside ``best_params`` (``study.db``) or else from the storage URL
    recorded in the file.  Returns the PNG path (nothing when there is no study yet); the Markdown goes next
    to it as ``<stem>.md``.
    """
    import optuna
    from optuna.trial import TrialState

    from fyexp.tuning import STUDY_DB, study_summary

    best_params = Path(best_params)
    if not best_params.is_file():
        return []
    info = yaml.safe_load(best_params.read_text()) or {}
    local = best_params.parent / STUDY_DB
    url = f"sqlite:///{local.resolve()}" if local.is_file() else info.get("storage")
    if not url or "***" in url:
        return []
    try:
        study = optuna.load_study(study_name=info["study"], storage=url)
    except Exception:  # a storage that is gone or unreachable: no figure
        return []
    import matplotlib.ticker

    from fyexp.report.figures.output import plt, save_figure

    trials = study.get_trials(deepcopy=False)
    done = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    pruned = [t for t in trials if t.state == TrialState.PRUNED and t.intermediate_values]
    fig, ax = plt.subplots(figsize=(5.5, 3.4))
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
    ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    ax.set_xlabel("trial")
    ax.set_ylabel("objective")
    ax.set_title(title or study.study_name)
    ax.legend(fontsize=8)
    stem = f"study_{study.study_name}"
    png = save_figure(fig, figures_dir / f"{stem}.png", dpi=150)
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
