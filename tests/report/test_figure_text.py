"""The check that a figure keeps its texts inside the canvas (tests/report/test_figure_titles.py runs it on every
figure of the committed results); FYVI Figure 2 shows the paper's printed points and says why a panel starts at
another ρ."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from tests.conftest import ROOT, run_cli


def test_the_check_finds_a_clipped_title_and_fit_canvas_mends_it():
    from fyexp.report.figures.output import fit_canvas, plt, text_outside_canvas

    fig, ax = plt.subplots(figsize=(2.0, 2.0))
    ax.plot([0, 1], [0, 1])
    fig.suptitle("a title much longer than the two inches of this figure, clipped at both sides")
    fig.tight_layout()
    assert text_outside_canvas(fig) and "figure text" in text_outside_canvas(fig)[0]
    fit_canvas(fig)
    assert text_outside_canvas(fig) == [] and fig.get_size_inches()[0] > 2.0
    small, ax = plt.subplots(figsize=(4.0, 3.0))
    ax.set_title("short")
    fit_canvas(small)  # a figure that fits keeps its size
    assert text_outside_canvas(small) == [] and tuple(small.get_size_inches()) == (4.0, 3.0)
    plt.close(fig)
    plt.close(small)


def test_figure2_overlays_the_printed_points_and_explains_a_late_start():
    from fyexp.report.figures.clustering import missing_note, paper_points

    assert paper_points("adjusted_mi") == [(1.0, 0.606, 0.012), (2.0, 0.636, 0.017)]
    assert paper_points("estep_zeros") == []  # not printed: nothing overlaid
    rhos = [0.1, 0.5, 1.0]
    assert missing_note([0.5, 1.0], rhos, {0.1: 0.0}) == "none at ρ = 0.1: every point\nin one component (undefined)"
    assert missing_note([0.5, 1.0], rhos, {0.1: 0.2}) == "no value at ρ = 0.1"
    assert missing_note(rhos, rhos, {}) == ""


@pytest.mark.slow
def test_installed_report_draws_figure2_with_the_paper_points(tmp_path):
    results = tmp_path / "results"
    (results / "gmm-clustering").mkdir(parents=True)
    shutil.copytree(ROOT / "results" / "gmm-clustering" / "artifacts", results / "gmm-clustering" / "artifacts")
    frame = pd.read_csv(ROOT / "results" / "gmm-clustering" / "results.csv")
    frame[frame["profile"] == "paper"].to_csv(results / "gmm-clustering" / "results.csv", index=False)
    done = run_cli("report", "gmm-clustering", "--results-dir", str(results))
    assert done.returncode == 0, done.stderr
    png = results / "gmm-clustering" / "figures" / "fyvi-figure2-paper.png"
    assert png.is_file() and "fyvi-figure2-paper" in (results / "README.md").read_text(encoding="utf-8")
