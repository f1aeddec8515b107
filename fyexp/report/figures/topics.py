"""FYVI Figure 3: mean embedding coherence of the top-n words per topic against n, one line per model."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fyexp.report.figures import FigureContext, figure
from fyexp.core.words import counted


@figure("topic-coherence")
def topic_coherence(ctx: FigureContext, *, models: dict[str, str] | None = None,
                    stem: str = "topic_coherence") -> list[Path]:
    """One PNG per profile: coherence (mean ± std over seeds) against n, one line per experiment of ``models``
    (experiment name → legend label; default: this experiment) that has ``topic_coherence`` rows.  The rows of
    the other experiments come through ``ctx.load``."""
    models = models or {ctx.experiment: ctx.experiment}
    frames = {label: ctx.frame if name == ctx.experiment else ctx.load(name) for name, label in models.items()}
    return coherence_figure(frames, ctx.figures_dir, stem)


def coherence_figure(frames: dict[str, pd.DataFrame], figures_dir: Path, stem: str = "topic_coherence") -> list[Path]:
    """Draw the coherence figure of ``frames`` (legend label → tidy rows with ``metric``, ``value``, ``k``,
    ``seed``, ``profile``) into ``figures_dir/<stem>_<profile>.png``."""
    from fyexp.report.figures.output import plt, save_figure

    rows = []
    for label, frame in frames.items():
        if frame.empty or "k" not in frame:
            continue
        sel = frame[frame["metric"] == "topic_coherence"]
        rows.append(sel.assign(model=label)[["model", "profile", "k", "seed", "value"]])
    if not rows:
        return []
    data = pd.concat(rows)
    paths = []
    for profile, sub in data.groupby("profile"):
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        for model, by_model in sub.groupby("model"):
            stats = by_model.groupby("k")["value"].agg(["mean", "std", "count"]).reset_index()
            ax.errorbar(stats["k"], stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3,
                        label=f"{model} ({counted(int(stats['count'].max()), 'seed')})")
        ax.set_xlabel("top-n words per topic")
        ax.set_ylabel("mean pairwise cosine similarity\n(error bars: ± std over seeds)")
        ax.set_title(f"Topic coherence [{profile}]")
        ax.legend()
        paths.append(save_figure(fig, figures_dir / f"{stem}_{profile}.png"))
    return paths
