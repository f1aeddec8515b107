"""Issue 49: every figure of a profile names it (or its variant) in its title, the papers' notation is mathtext
(``$L_{10^{-5}}$``, not ``L_10^-5``), counts agree with their noun, VR Figure 3's panels sit on a grid, and the
calibration figure draws frac Tables 4a–c's coverages from the reference table."""

from __future__ import annotations

import re
import shutil
from typing import NamedTuple

import numpy as np
import pytest

from fyexp.core.words import counted
from fyexp.report.figures.labels import math_notation, profile_tag
from tests.conftest import ROOT


def test_math_notation_writes_the_papers_symbols_as_mathtext():
    assert math_notation("L_10^-5") == "$L_{10^{-5}}$"
    assert math_notation("L^h_0.9") == "$L^{h}_{0.9}$"
    assert math_notation("L^beta_10^3 and L^bh-alt_0.1") == r"$L^{\beta}_{10^{3}}$ and $L^{bh\,alt}_{0.1}$"
    assert math_notation("exact EM (|K|=2^10)") == r"exact EM ($|\mathcal{K}| = 2^{10}$)"
    assert math_notation("TV-EM |K|=20") == r"TV-EM $|\mathcal{K}| = 20$"
    assert math_notation("Lbeta 0.1, no symbol here") == "Lbeta 0.1, no symbol here"


def test_counts_and_profile_tags():
    assert counted(1, "seed") == "1 seed" and counted(5, "seed") == "5 seeds" and counted(0, "seed") == "0 seeds"
    assert counted(2, "repetition") == "2 repetitions"
    assert profile_tag("paper+n_iter=50") == "[paper+n_iter=50]"


def test_the_study_axis_names_the_objective_recorded_and_says_when_none_was():
    from types import SimpleNamespace

    from fyexp.report.figures.study import objective_label

    def study(attrs, direction="MINIMIZE"):
        return SimpleNamespace(user_attrs=attrs, direction=SimpleNamespace(name=direction))

    assert objective_label(study({"objective": "validation RE"}), {}) == "validation RE (minimize)"
    assert objective_label(study({}, "MAXIMIZE"), {"objective": "ELBO"}) == "ELBO (maximize)"
    assert objective_label(study({}), {}) == "trial value (minimize)\n(objective not recorded)"  # two lines: fits 3.4 in


def test_the_calibration_figure_reads_the_papers_coverages_from_the_reference_table():
    from fyexp.reference import load_paper_tables
    from fyexp.report.figures.calibration import paper_coverage

    printed = paper_coverage("n=30 K=2 mu=±2")
    table = load_paper_tables()
    expected = table[(table["table"] == "4a") & (table["column"] == "kappa_mu1") & (table["row"] == "L_0.5")]
    got = printed[(printed["metric"] == "kappa_mu1") & (printed["gamma"] == 0.5)]
    assert len(got) == 1 and got["value"].iloc[0] == expected["value_num"].iloc[0]
    assert set(printed["table"]) == {"4a"} and set(printed["component"]) == {1, 2}
    assert len(printed) == 2 * 2 * 10  # κ and ℓ of two components at ten γ
    assert paper_coverage("n=400 K=2 mu=±2").empty  # a setting the paper's Tables 4a–c lack


FIGURES = {"gmm-clustering", "gmm-calibration", "tvem-bsc", "vr-vae", "frac-vae", "fy-vae"}


def _title_overlaps(fig) -> list[str]:
    """The titles of ``fig``'s axes whose drawn box overlaps a tick label of another axes (a title touching the
    row above's ticks reads as one of them)."""
    renderer = fig.canvas.get_renderer()
    out = []
    for ax in fig.axes:
        if not ax.get_title():
            continue
        box = ax.title.get_window_extent(renderer)
        for other in fig.axes:
            if other is ax or not other.axison:
                continue
            ticks = [t for t in other.get_xticklabels() + other.get_yticklabels() if t.get_text()]
            if any(box.overlaps(t.get_window_extent(renderer)) for t in ticks):
                out.append(ax.get_title())
                break
    return out


def test_vr_figure3_names_the_settings_it_leaves_out():
    """Settings that ran here without samples and settings that ran only at another profile are named; a profile
    that draws every setting has no note."""
    import pandas as pd

    from fyexp.report.figures.vr import figure3_missing

    rows = pd.DataFrame({"method": "vr_max", "profile": ["a", "a", "b", "b", "b"],
                         "setting": ["X K=3", "Y K=7", "X K=3", "Y K=7", "Z K=9"]})
    assert figure3_missing(rows, "b", {"X K=3", "Y K=7", "Z K=9"}) == ""
    assert figure3_missing(rows, "a", {"X K=3", "Y K=7"}) == "Not drawn: Z K=9: no VR-max cell run at [a]."
    assert figure3_missing(rows, "a", {"Y K=7"}) == \
        "Not drawn: X K=3: run at [a], no samples saved; Z K=9: no VR-max cell run at [a]."
    assert figure3_missing(rows, "b", {"X K=3"}) == "Not drawn: Y K=7, Z K=9: run at [b], no samples saved."


class Drawn(NamedTuple):
    """One figure as ``save_figure`` lays it out: its experiment, file name, texts, size in inches, the axes' data
    lines by label, its number of axes, the texts reaching past its canvas and the axes titles on another axes'
    ticks."""

    experiment: str
    name: str
    texts: list[str]
    size: tuple[float, float]
    lines: dict[str, list]
    axes: int
    clipped: list[str]
    overlaps: list[str]


@pytest.fixture(scope="module")
def figures(tmp_path_factory) -> list[Drawn]:
    """Every figure of every spec, drawn once from the committed rows and artifacts (a copy) and laid out as
    ``save_figure`` lays it out (:func:`fyexp.report.figures.output.fit_canvas`), its PNG not written: what each
    test below reads (drawing them is most of this file's time)."""
    import fyexp.report.figures.output as output
    from fyexp.report import _load, _loader, _ok
    from fyexp.report.figures import FigureContext, draw_figures
    from fyexp.spec.specs import available_specs, load_spec

    tmp = tmp_path_factory.mktemp("titles")
    found: list[Drawn] = []
    experiment = [""]

    def recording_save(fig, path, dpi=120):
        output.fit_canvas(fig)
        clipped = output.text_outside_canvas(fig)   # draws the figure at its final size
        texts = [label.get_text() for label in (fig._suptitle, fig._supxlabel) if label is not None]
        texts += [t.get_text() for t in fig.texts]
        lines = {}
        for ax in fig.axes:
            texts += [ax.get_title(), ax.get_xlabel(), ax.get_ylabel()]
            texts += [t.get_text() for t in ax.get_xticklabels()]
            for line in ax.get_lines():
                lines.setdefault(line.get_label(), []).append(np.asarray(line.get_ydata(), dtype=float))
        for legend in fig.legends:
            texts += [legend.get_title().get_text()] + [t.get_text() for t in legend.get_texts()]
        found.append(Drawn(experiment[0], path.name, texts, tuple(fig.get_size_inches()), lines, len(fig.axes),
                           clipped, _title_overlaps(fig)))
        output.plt.close(fig)
        return path

    results = tmp / "committed"   # a copy: loading reads only, but the repository's results are never at stake
    shutil.copytree(ROOT / "results", results, ignore=shutil.ignore_patterns("work"))
    loaded = {name: _load(load_spec(name), results) for name in available_specs()}
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(output, "save_figure", recording_save)
        for name in available_specs():
            folder = tmp / name   # the experiment's inputs, none of its drawn figures or tables
            shutil.copytree(results / name, folder, ignore=shutil.ignore_patterns("figures", "tables", "cells",
                                                                                  "superseded", "work"))
            experiment[0] = name
            draw_figures(load_spec(name).plots, FigureContext(name, _ok(loaded[name].frame), folder,
                                                              _loader(loaded, results)))
    return found


@pytest.fixture(scope="module")
def drawn(figures) -> dict[str, Drawn]:
    """The figures of the experiments in FIGURES by file name."""
    return {f.name: f for f in figures if f.experiment in FIGURES}


@pytest.mark.slow
def test_every_figure_of_the_committed_results_keeps_its_texts_inside(figures):
    """Every figure of every spec, laid out as saved, has each text inside its canvas (tests/report/
    test_figure_text.py checks the check itself)."""
    assert {f"{f.experiment}/{f.name}": f.clipped for f in figures if f.clipped} == {}
    assert len(figures) >= 30 and {"vr-figure3-paper.png", "samples-FashionMNIST-paper.png",
                                   "fyvi-figure1-paper.png", "fyvi-figure2-paper.png"} <= {f.name for f in figures}


RAW = re.compile(r"(?<!\$)\bL(\^[a-z]+)?_\d|\|K\|=|\^-?\d|Psi_2|\b1 seeds\b|\(profile |\bmu=")


@pytest.mark.slow
def test_every_figure_names_its_profile_and_writes_notation_as_mathtext(figures, drawn):
    import pandas as pd

    assert {"fyvi-figure1-paper.png", "fyvi-figure2-paper-text.png", "coverage-length-paper.png", "figure2-paper.png",
            "frac-figure1-cpu.png", "frac-figure3-cpu.png", "tvem-bars-free-energy-paper.png",
            "vr-figure3-cpu.png", "samples-MNIST-paper.png"} <= set(drawn)
    profiles = {str(p) for name in FIGURES
                for p in pd.read_csv(ROOT / "results" / name / "results.csv", usecols=["profile"])["profile"].unique()}
    untagged, raw = [], {}
    for name, texts in ((f.name, f.texts) for f in figures if f.experiment in FIGURES):
        profile = max((p for p in profiles if name.removesuffix(".png").endswith("-" + p)), key=len, default=None)
        if profile is not None and not any(f"[{profile}]" in t for t in texts):
            untagged.append((name, texts[:1]))
        outside_math = [t for t in texts if RAW.search(re.sub(r"\$[^$]*\$", "", t))]
        if outside_math:
            raw[name] = outside_math
    assert not untagged and not raw, (untagged, raw)
    frac3 = " ".join(drawn["frac-figure3-cpu.png"].texts)
    assert "$L^{h}_{0.9}$" in frac3 and "$L_{1.0}$" in frac3
    tvem = " ".join(drawn["tvem-bars-free-energy-paper.png"].texts)
    assert r"$|\mathcal{K}| = 2^{10}$" in tvem and "20 seeds" in tvem
    assert any("$L_{10^{" in t for t in drawn["frac-figure1-cpu.png"].texts) or \
        any("$L_{" in t for t in drawn["frac-figure1-cpu.png"].texts)


@pytest.mark.slow
def test_vr_figure3_puts_its_panels_on_a_grid(drawn):
    cpu = drawn["vr-figure3-cpu.png"]
    texts, (width, height), axes = cpu.texts, cpu.size, cpu.axes
    assert axes == 8 and width / height < 3, (width, height)  # 7 panels on 4 × 2 (was one 2520 × 408 row)
    assert not any("Not drawn" in t for t in texts)  # every setting run at cpu has its panel
    paper = " ".join(drawn["vr-figure3-paper.png"].texts)  # Caltech panels only: MNIST never ran at paper
    assert "MNIST L=1 K=5" in paper and "no VR-max cell run at [paper]" in paper, paper


@pytest.mark.slow
def test_the_calibration_figure_draws_the_papers_coverages(drawn):
    from fyexp.report.figures.calibration import paper_coverage

    texts, lines = drawn["coverage-length-paper.png"].texts, drawn["coverage-length-paper.png"].lines
    assert "μ1, paper (Table 4a)" in lines and "μ4, paper (Table 4c)" in lines
    printed = paper_coverage("n=30 K=2 mu=±2")
    kappa = printed[printed["metric"] == "kappa_mu1"].sort_values("gamma")["value"].to_numpy()
    assert any(np.allclose(y, kappa) for y in lines["μ1, paper (Table 4a)"])
    assert any("not in the paper's Tables 4a–c" in t for t in texts)  # n = 400, K = 2, μ = ±2: fyexp's own setting


@pytest.mark.slow
def test_frac_scatter_figures_name_their_colours_and_no_title_touches_the_row_above(figures, drawn):
    for name in ("frac-figure4-claims.png", "frac-figure5-claims.png"):
        texts = drawn[name].texts
        assert "digit" in texts and all(str(d) in texts for d in range(10)), name   # the legend of the colours
    assert not {f.name: f.overlaps for f in figures if f.experiment in FIGURES and f.overlaps}


def test_the_overlap_check_sees_a_title_on_the_ticks_above():
    from fyexp.report.figures import plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(3, 3))
    top.set_xlim(0, 1)
    top.set_xticks([0.5])   # one tick label, under the middle of the panel
    fig.subplots_adjust(hspace=0.0)     # the top panel's tick labels hang just below the shared edge
    try:
        bottom.set_title("on the ticks", pad=-14)   # ... where this title sits
        assert _title_overlaps(fig) == ["on the ticks"]
        bottom.set_title("clear of them")
        fig.subplots_adjust(hspace=0.6)
        assert _title_overlaps(fig) == []
    finally:
        plt.close(fig)
