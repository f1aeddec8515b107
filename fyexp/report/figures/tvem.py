"""Lücke 2019 (tvem-bsc): Figure 1 (full vs truncated posterior) and the bars test (free energy, learned fields,
recovery over seeds, and the recovery table), from the rows and the artifacts the cells saved."""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pandas as pd

from fyexp.report.cache import write_text_if_changed
from fyexp.store.damaged import read_artifact_json, read_npz
from fyexp.report.figures import FigureContext, figure
from fyexp.core.words import counted
from fyexp.report.figures.labels import math_notation, profile_tag


@figure("tvem-figure1")
def figure1(ctx: FigureContext) -> list[Path]:
    """Per profile with a Figure 1 artifact: Lücke Figure 1 (:func:`figure1_data`, :func:`draw_figure1`)."""
    paths = []
    for profile, _ in ctx.frame.groupby("profile", sort=False):
        data = figure1_data(ctx.artifacts / str(profile))
        if data is not None:
            paths.append(draw_figure1(data, ctx.figures_dir / f"tvem-figure1-{profile}.png", profile))
    return paths


def figure1_data(folder: Path) -> dict | None:
    r"""Figure 1's series from the ``figure1`` cell's ``figure1.npz`` (patterns, names, image, truth, states,
    log-joint, keep): the exact posterior :math:`p(\vec s \mid \vec y, \Theta) = p(\vec s, \vec y) / \sum_{\vec s'}
    p(\vec s', \vec y)` over the 16 states and its truncation to the ``keep`` most probable states (eq. 3 with the
    optimal :math:`\mathcal{K}` of that size, Prop. 7): ``posterior``, ``truncated`` added.  A folder written before
    ``figure1.npz`` holds the series as ``figure1.json``; ``None`` when there is neither."""
    if os.path.lexists(folder / "figure1.npz"):   # a dangling link or a FIFO too: one warning, never followed
        from fyexp.em.tvem import keep_top, truncated_posterior

        data = read_npz(folder / "figure1.npz", ("log_joint", "keep"))
        if data is None:
            return None
        joint = data["log_joint"][None, :]
        data["posterior"] = truncated_posterior(joint)[0][0]
        data["truncated"] = truncated_posterior(keep_top(joint, int(data["keep"])))[0][0]
        return data
    old = read_artifact_json(folder / "figure1.json")
    return None if old is None else {key: np.asarray(value) for key, value in old.items()}


#: what a bars cell's fit (``fits/<cell>.json``) holds for the figures
FIT_KEYS = ("method", "seed", "n_states", "label", "W", "free_energy")


@figure("tvem-bars")
def bars_test(ctx: FigureContext) -> list[Path]:
    """Per profile with fitted bars cells: free energy per iteration, learned vs true fields, recovery over seeds
    (PNG), and the recovery table (Markdown, ``tables/tvem-bars-recovery-<profile>.md``)."""
    paths = []
    for profile, rows in ctx.frame.groupby("profile", sort=False):
        fits_dir = ctx.artifacts / str(profile) / "fits"
        fits = sorted(fits_dir.glob("*.json")) if fits_dir.is_dir() else []
        bars = rows[rows["method"].isin(["tvem", "exact"])]
        if fits and not bars.empty:
            fitted = [read_artifact_json(p, FIT_KEYS, consequence="its run is left out of the figures") for p in fits]
            fitted = [f for f in fitted if f is not None and f["seed"] in set(bars["seed"])]
            if fitted:
                paths.append(draw_free_energy(fitted, bars, ctx.figures_dir / f"tvem-bars-free-energy-{profile}.png",
                                              profile))
                paths.append(draw_dictionaries(fitted, ctx.figures_dir / f"tvem-bars-dictionary-{profile}.png",
                                               profile))
            paths.append(draw_recovery(bars, ctx.figures_dir / f"tvem-bars-recovery-{profile}.png", profile))
            write_recovery_table(bars, ctx.folder / "tables" / f"tvem-bars-recovery-{profile}.md")
    return paths


def _method_order(rows: pd.DataFrame) -> list[str]:
    """Labels of the bars cells, TV-EM by increasing |K| then exact EM."""
    firsts = rows.drop_duplicates("label")
    keys = pd.to_numeric(firsts["n_states"], errors="coerce") + (firsts["method"] == "exact") * 1e9
    return list(firsts.assign(key=keys.to_numpy()).sort_values("key")["label"])


def _image(ax, pixels, cmap="gray", vmin=None, vmax=None) -> None:
    side = int(round(math.sqrt(len(pixels))))
    ax.imshow(np.asarray(pixels).reshape(side, side), cmap=cmap, vmin=vmin, vmax=vmax, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])


def draw_figure1(fig1: dict, path: Path, profile: str = "") -> Path:
    """Lücke Figure 1 (the series of :func:`figure1_data`): the four patterns, the noisy image, the full posterior
    over the 16 states and its truncation."""
    from fyexp.report.figures.output import plt, save_figure

    names, states = [str(n) for n in fig1["names"]], np.asarray(fig1["states"])
    posterior, truncated = np.asarray(fig1["posterior"]), np.asarray(fig1["truncated"])
    fig = plt.figure(figsize=(13, 6.2))
    grid = fig.add_gridspec(2, 6, height_ratios=[1, 1.15])
    patterns = np.asarray(fig1["patterns"])
    for i, (name, pattern) in enumerate(zip(names, patterns)):
        ax = fig.add_subplot(grid[0, i])
        _image(ax, np.ravel(pattern), cmap="gray_r", vmin=0, vmax=1)
        ax.set_title(f"{name} (s{i + 1})")
    clean = np.tensordot(np.asarray(fig1["truth"], dtype=float), patterns, axes=1).ravel()
    pair = " + ".join(n for n, on in zip(names, fig1["truth"]) if on)
    for column, (pixels, title) in enumerate(((clean, f"W s* = {pair}"), (fig1["image"], "data point y = W s* + noise"))):
        ax = fig.add_subplot(grid[0, 4 + column])
        _image(ax, pixels, cmap="gray_r")
        ax.set_title(title, fontsize=9)
    ticks = ["".join(str(b) for b in state) for state in states]
    for column, (values, title) in enumerate(((posterior, "full posterior p(s | y, Θ)"),
                                              (truncated, f"truncated q(s; K, Θ), |K| = {int(fig1['keep'])}"))):
        ax = fig.add_subplot(grid[1, 3 * column: 3 * column + 3])
        colours = ["tab:orange" if t else "tab:blue" for t in (truncated > 0)]
        ax.bar(np.arange(len(values)), values, color=colours)
        ax.set_xticks(np.arange(len(values)), ticks, rotation=90, fontsize=8)
        ax.set_xlabel("state s = (s1 s2 s3 s4)")
        ax.set_ylim(0, 1.05 * max(posterior.max(), truncated.max()))
        ax.set_title(title)
    fig.suptitle(f"Lücke 2019, Figure 1 {profile_tag(profile)} (computed): binary sparse coding with the four "
                 f"patterns as fields; "
                 f"orange = the {int(fig1['keep'])} most probable states (kept mass {posterior[truncated > 0].sum():.3f})")
    return save_figure(fig, path)


def draw_free_energy(fitted: list[dict], rows: pd.DataFrame, path: Path, profile: str = "") -> Path:
    """Free energy (eq. 18) per data point after each M-step, one line per seed (green: all bars recovered)."""
    from fyexp.report.figures.output import plt, save_figure

    labels = _method_order(rows)
    recovered = rows[rows["metric"] == "all_bars_recovered"].set_index("cell")["value"]
    fig, axes = plt.subplots(1, len(labels), figsize=(3.6 * len(labels), 3.6), sharey=True, squeeze=False)
    for ax, label in zip(axes[0], labels):
        runs = [f for f in fitted if f["label"] == label]
        for run in runs:
            key = rows[(rows["label"] == label) & (rows["seed"] == run["seed"])]["cell"].iloc[0]
            ok = recovered.get(key, 0.0) == 1.0
            ax.plot(run["free_energy"], color="tab:green" if ok else "tab:red", lw=0.8, alpha=0.7)
        if runs:
            ax.axhline(np.mean([r["true_log_likelihood"] for r in runs]), color="0.3", ls=":", lw=1)
        n_ok = sum(recovered.get(k, 0.0) == 1.0 for k in rows[rows["label"] == label]["cell"].unique())
        ax.set_title(f"{math_notation(label)}\nall bars: {n_ok}/{counted(len(runs), 'seed')}", fontsize=10)
        ax.set_xlabel("EM iteration")
    axes[0][0].set_ylabel("free energy / N (eq. 18)")
    low = np.percentile([v for f in fitted for v in f["free_energy"][5:]], 1) if fitted else None
    if low is not None:
        axes[0][0].set_ylim(bottom=low)
    fig.suptitle(f"bars test {profile_tag(profile)}: free energy per iteration (green: all bars recovered, red: not; "
                 "dotted: log-likelihood at the true parameters)")
    return save_figure(fig, path)


def draw_dictionaries(fitted: list[dict], path: Path, profile: str = "") -> Path:
    """The true bars and, per method, the fields learned on the lowest seed, ordered by their matched bar."""
    from fyexp.report.figures.output import plt, save_figure

    seed = min(f["seed"] for f in fitted)
    runs = sorted((f for f in fitted if f["seed"] == seed),
                  key=lambda f: (f["method"] == "exact", f["n_states"] or 0))
    truth = np.asarray(runs[0]["truth_W"])
    n_bars, scale = truth.shape[1], {"vmin": min(0.0, truth.min()), "vmax": truth.max()}
    fig, axes = plt.subplots(len(runs) + 1, n_bars, figsize=(0.95 * n_bars + 1.6, 1.05 * (len(runs) + 1)),
                             squeeze=False)
    for h in range(n_bars):
        _image(axes[0][h], truth[:, h], **scale)
    axes[0][0].set_ylabel("true", rotation=0, ha="right", va="center")
    for row, run in zip(axes[1:], runs):
        W = np.asarray(run["W"])
        for h in range(n_bars):
            _image(row[h], W[:, run["match"][h]], **scale)
            row[h].set_title(f"{run['cosine'][h]:.2f}", fontsize=7, pad=2,
                             color="black" if run["cosine"][h] >= 0.9 else "tab:red")
        row[0].set_ylabel(math_notation(run["label"]).replace(" (", "\n("), rotation=0, ha="right", va="center",
                          fontsize=8)
    fig.suptitle(f"bars test {profile_tag(profile)}, seed {seed}: learned fields W matched to the true bars (number = cosine; grey scale "
                 f"0 to the bar height)", fontsize=10)
    return save_figure(fig, path)


def _recovery_summary(rows: pd.DataFrame) -> pd.DataFrame:
    wide = rows.pivot_table(index=["label", "seed"], columns="metric", values="value").reset_index()
    summary = wide.groupby("label").agg(seeds=("seed", "nunique"), rate=("all_bars_recovered", "mean"),
                                        bars=("bars_recovered", "mean"), free_energy=("free_energy", "mean"),
                                        log_likelihood=("log_likelihood", "mean"),
                                        true_log_likelihood=("true_log_likelihood", "mean"),
                                        sigma=("sigma", "mean"), ms=("ms_per_iteration", "median"))
    return summary.loc[_method_order(rows)]


def draw_recovery(rows: pd.DataFrame, path: Path, profile: str = "") -> Path:
    """Fraction of seeds with every bar recovered, per method, with its binomial standard error."""
    from fyexp.report.figures.output import plt, save_figure

    summary = _recovery_summary(rows)
    se = np.sqrt(summary["rate"] * (1 - summary["rate"]) / summary["seeds"])
    fig, ax = plt.subplots(figsize=(1.5 * len(summary) + 2, 3.4))
    ax.bar(np.arange(len(summary)), summary["rate"], yerr=se, capsize=4, color="tab:blue")
    ax.set_xticks(np.arange(len(summary)), [math_notation(str(label)) for label in summary.index], fontsize=9)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("seeds with all bars recovered")
    ax.set_title(f"bars test {profile_tag(profile)}: recovery over {counted(int(summary['seeds'].max()), 'seed')} "
                 f"(± binomial SE)", fontsize=10)
    return save_figure(fig, path)


def write_recovery_table(rows: pd.DataFrame, path: Path) -> Path:
    """The bars-test table (Markdown): recovery over seeds, mean bars, final free energy and log-likelihood."""
    summary = _recovery_summary(rows)
    lines = ["| method | seeds | all bars recovered | bars recovered (mean) | free energy / N | log-likelihood / N | "
             "true-parameter log-lik. / N | σ (mean) | ms / iteration (median) |", "|" + "---|" * 9]
    for label, r in summary.iterrows():
        escaped = label.replace("|", r"\|")  # a literal | inside a Markdown table cell
        lines.append(f"| {escaped} | {int(r.seeds)} | {r.rate:.2f} ({round(r.rate * r.seeds)}/{int(r.seeds)}) | "
                     f"{r.bars:.2f} | {r.free_energy:.3f} | {r.log_likelihood:.3f} | {r.true_log_likelihood:.3f} | "
                     f"{r.sigma:.3f} | {r.ms:.1f} |")
    write_text_if_changed(path, "\n".join(lines) + "\n")
    return path
