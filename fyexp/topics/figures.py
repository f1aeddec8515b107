"""FYVI Figure 3: mean embedding coherence of the top-n words per topic against n, one line per model."""

from __future__ import annotations

from pathlib import Path

import pandas as pd


def coherence_figure(frames: dict[str, pd.DataFrame], figures_dir: Path, stem: str = "topic_coherence") -> list[Path]:
    """One PNG per profile: coherence (mean ± std over seeds) against n for every model that has ``topic_coherence`` rows.

    Parameters
    ----------
    frames : mapping label → tidy rows (columns ``metric``, ``value``, ``k``, ``seed``, ``profile``)
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
    figures_dir.mkdir(parents=True, exist_ok=True)
    for profile, sub in data.groupby("profile"):
        fig, ax = plt.subplots(figsize=(4.5, 3.2))
        for model, by_model in sub.groupby("model"):
            stats = by_model.groupby("k")["value"].agg(["mean", "std", "count"]).reset_index()
            ax.errorbar(stats["k"], stats["mean"], yerr=stats["std"].fillna(0), marker="o", capsize=3,
                        label=f"{model} ({int(stats['count'].max())} seeds)")
        ax.set_xlabel("top-n words per topic")
        ax.set_ylabel("mean pairwise cosine similarity")
        ax.set_title(f"Topic coherence [{profile}]")
        ax.legend()
        fig.tight_layout()
        path = figures_dir / f"{stem}_{profile}.png"
        fig.savefig(path, dpi=150)
        plt.close(fig)
        paths.append(path)
    return paths
