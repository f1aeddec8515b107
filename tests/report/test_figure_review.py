"""Figures a reviewer would send back (issue 49, a look at each): drawn from the committed rows and study files,
their texts read back.  The tuning study's trial axis ticks whole trials (one trial: not ±0.045) and every study
of the folder's study.db is drawn with its profile (a study no best-parameters file names kept its old PNG, titled
without a profile, its axis 'objective'); VR Figure 4 ticks the α it draws (−500 … 0, not −10⁰); the coherence
figure says what its error bars are."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow


@pytest.fixture
def recorded(monkeypatch):
    """``save_figure`` replaced by one that keeps each figure's texts (file name → dict) and writes nothing."""
    import fyexp.report.figures.output as output

    found: dict[str, dict] = {}

    def save(fig, path, dpi=120):
        output.fit_canvas(fig)
        ax = fig.axes[0]
        lo, hi = sorted(ax.get_xlim())
        shown = [t.get_text() for t, v in zip(ax.get_xticklabels(), ax.get_xticks()) if lo <= v <= hi]
        found[path.name] = {"suptitle": fig._suptitle.get_text() if fig._suptitle is not None else "",
                            "titles": [a.get_title() for a in fig.axes], "ylabel": ax.get_ylabel(),
                            "xticks": shown, "xlim": ax.get_xlim()}   # the ticks drawn
        output.plt.close(fig)
        return path

    monkeypatch.setattr(output, "save_figure", save)
    return found


def _context(name: str, folder, frame=None):
    from fyexp.report.figures import FigureContext

    def load(other: str) -> pd.DataFrame:
        return pd.read_csv(ROOT / "results" / other / "results.csv", low_memory=False)

    return FigureContext(name, frame if frame is not None else pd.DataFrame(), folder, load)


@pytest.mark.parametrize("name", ["nvdm", "fy-nvdm"])
def test_every_study_of_the_folder_is_drawn_with_its_profile_and_whole_trials(name, tmp_path, recorded):
    from fyexp.report.figures.study import optuna_history

    folder = tmp_path / name
    folder.mkdir()
    for file in ("best_params.yaml", "study.db"):
        shutil.copy(ROOT / "results" / name / file, folder)
    drawn = optuna_history(_context(name, folder))
    assert sorted(p.name for p in drawn) == [f"study_{name}-cpu-long.png", f"study_{name}-cpu.png"]
    for profile in ("cpu", "cpu-long"):
        shown = recorded[f"study_{name}-{profile}.png"]
        assert shown["titles"] == [f"{name} tuning [{profile}]"]
        assert shown["ylabel"] != "objective" and "(minimize)" in shown["ylabel"]
        assert all(t.lstrip("\u2212-").isdigit() for t in shown["xticks"] if t), shown["xticks"]
    if name == "fy-nvdm":   # its cpu-long study has one trial, number 0
        one = recorded["study_fy-nvdm-cpu-long.png"]
        assert tuple(map(float, one["xlim"])) == (-0.5, 0.5), one["xlim"]
        assert [t for t in one["xticks"] if t] == ["0"]


def test_vr_figure4_ticks_the_alphas_it_draws(tmp_path, recorded):
    from fyexp.report.figures.vr import alpha_label, figure4

    rows = pd.read_csv(ROOT / "results" / "vr-vae" / "results.csv", low_memory=False)
    rows = rows[rows["metric"].isin(["bias_mean", "bias_std"]) & (rows["profile"] == "paper")]
    figure4(_context("vr-vae", tmp_path, rows))
    shown = recorded["vr-figure4-paper.png"]
    assert shown["xticks"] == ["\u2212500", "\u221250", "\u22125", "\u22121", "0"]
    assert shown["suptitle"] == "VR Figure 4: bias on Frey Face test points, mean ± std [paper]"
    assert alpha_label(-0.5) == "\u22120.5" and alpha_label(2.0) == "2"


def test_the_coherence_figure_says_what_its_error_bars_are(tmp_path, recorded):
    from fyexp.report.figures.topics import coherence_figure

    frames = {label: pd.read_csv(ROOT / "results" / name / "results.csv", low_memory=False)
              for name, label in (("nvdm", "NVDM"), ("fy-nvdm", "FY-NVDM"))}
    coherence_figure(frames, tmp_path)
    assert {"topic_coherence_cpu.png", "topic_coherence_cpu-long.png"} <= set(recorded)
    for shown in recorded.values():
        assert shown["ylabel"].endswith("(error bars: ± std over seeds)")
