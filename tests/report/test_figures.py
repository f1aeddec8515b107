"""Figures apart from runners: named in the spec's ``plots:``, drawn from tidy frames, checked when the spec loads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from fyexp.core.errors import SpecError
from fyexp.report.figures import FigureContext, draw_figures, figure_names
from fyexp.spec.specs import available_specs, load_spec

SPEC = """\
name: toy-plots
title: plots entries
runner: gmm_clustering
plots: {plots}
profiles:
  quick: {{seeds: [0]}}
"""


def _write(tmp_path, plots: str):
    (tmp_path / "toy-plots.yaml").write_text(SPEC.format(plots=plots))
    return tmp_path


def test_every_spec_names_registered_figures():
    for name in available_specs():
        for figure, _ in load_spec(name).plots:
            assert figure in figure_names()


def test_names_and_options_are_parsed(tmp_path):
    spec = load_spec("toy-plots", _write(tmp_path, "[fyvi-figure2, {topic-coherence: {models: {a: A}}}]"))
    assert spec.plots == (("fyvi-figure2", {}), ("topic-coherence", {"models": {"a": "A"}}))


@pytest.mark.parametrize("plots, message", [
    ("[fyvi-figure1, no-such-figure]", r"key 'plots\[1\]': expected a figure among \[.*'fyvi-figure1'.*\], "
                                       r"got 'no-such-figure'$"),
    ("[{topic-coherence: {colour: red}}]", r"key 'plots\[0\]': expected options of 'topic-coherence' among "
                                           r"\['models', 'stem'\], got \['colour'\]$"),
    ("[[fyvi-figure1]]", r"key 'plots\[0\]': expected a figure name, or a one-key mapping"),
])
def test_a_bad_plots_entry_is_a_one_line_spec_error(tmp_path, plots, message):
    with pytest.raises(SpecError, match=message) as err:
        load_spec("toy-plots", _write(tmp_path, plots))
    assert "\n" not in str(err.value)


def test_the_light_list_of_figures_is_what_the_report_registers():
    """Specs are checked against fyexp.spec.plots.FIGURES without the report; every name there is a registered figure
    with exactly those keyword options (a mismatch raises at registration)."""
    import inspect

    from fyexp.spec.plots import FIGURES
    from fyexp.report.figures import figure, get_figure

    assert figure_names() == sorted(FIGURES)
    for name, options in FIGURES.items():
        kw = [p for p, v in inspect.signature(get_figure(name)).parameters.items() if v.kind == v.KEYWORD_ONLY]
        assert tuple(kw) == options, name
    with pytest.raises(ValueError, match="fyexp.spec.plots.FIGURES"):
        figure("not-in-the-list")(lambda ctx: [])
    with pytest.raises(ValueError, match="fyexp.spec.plots.FIGURES"):
        figure("topic-coherence")(lambda ctx, *, colour=None: [])


@pytest.mark.slow
def test_checking_a_spec_does_not_import_the_report(tmp_path):
    _write(tmp_path, "[fyvi-figure1, {optuna-history: {title: T}}]")
    code = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from fyexp.spec.specs import load_spec
        assert load_spec("toy-plots", Path({str(tmp_path)!r})).plots[1] == ("optuna-history", {{"title": "T"}})
        bad = [m for m in sys.modules if m.startswith("fyexp.report") or m in ("pandas", "matplotlib", "torch")]
        assert not bad, bad
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


@pytest.mark.slow
def test_the_report_does_not_import_the_runners():
    code = textwrap.dedent("""
        import sys
        import fyexp.report
        from fyexp.report.figures import figure_names
        figure_names()
        bad = [m for m in sys.modules if m.startswith("fyexp.experiments")]
        assert not bad, bad
        assert "torch" not in sys.modules  # checking a spec's plots (fyexp claims, report) stays light
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def _coherence_rows(profile: str, values: list[float], seeds=(0, 1)) -> pd.DataFrame:
    return pd.DataFrame([{"profile": profile, "metric": "topic_coherence", "k": k, "seed": seed, "value": v + seed / 100}
                         for seed in seeds for k, v in zip((5, 10), values)])


def test_a_figure_reads_another_experiments_rows_through_the_loader(tmp_path):
    own = _coherence_rows("quick", [0.3, 0.2])
    asked = []

    def load(name):
        asked.append(name)
        return _coherence_rows("quick", [0.4, 0.35], seeds=(0,))

    ctx = FigureContext("nvdm", own, tmp_path / "nvdm", load)
    paths = draw_figures((("topic-coherence", {"models": {"nvdm": "NVDM", "fy-nvdm": "FY-NVDM"}}),), ctx)
    assert asked == ["fy-nvdm"]
    assert [p.name for p in paths] == ["topic_coherence_quick.png"] and paths[0].stat().st_size > 1000
    assert paths[0].parent == tmp_path / "nvdm" / "figures"


def test_a_figure_without_its_rows_or_artifacts_draws_nothing(tmp_path):
    empty = pd.DataFrame(columns=["profile", "metric", "value", "seed", "method", "cell", "params"])
    ctx = FigureContext("x", empty, tmp_path, lambda name: empty)
    assert draw_figures(tuple((name, {}) for name in figure_names() if name != "frac-calibration-notes"), ctx) == []


def test_save_figure_is_still_importable_from_the_package(tmp_path):
    from fyexp.report.figures import plt, save_figure

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    path = save_figure(fig, tmp_path / "sub" / "line.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def _rendered(fig, dpi=60):
    import io

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    buffer.seek(0)
    return buffer


def test_a_grey_sample_grid_is_kept_exactly_in_the_palette_png(tmp_path):
    """256 grey levels fit the palette: every pixel of the saved file equals the matplotlib render's."""
    import numpy as np
    from PIL import Image

    from fyexp.report.figures import plt
    from fyexp.report.figures.output import write_palette_png

    fig, ax = plt.subplots(figsize=(3, 3))
    ax.imshow(np.random.default_rng(0).random((28, 28)), cmap="gray", interpolation="nearest")
    ax.set_axis_off()
    rendered = _rendered(fig)
    plt.close(fig)
    write_palette_png(rendered, tmp_path / "grid.png")
    rendered.seek(0)
    with Image.open(tmp_path / "grid.png") as saved, Image.open(rendered) as original:
        assert saved.mode == "P"
        assert np.array_equal(np.asarray(saved.convert("RGB")), np.asarray(original.convert("RGB")))


def test_a_many_coloured_figure_is_quantised_close_to_its_render_and_smaller(tmp_path):
    """More than 256 colours (a viridis gradient, anti-aliased lines): the palette PNG stays within a few levels
    of the render on average, and is smaller than the RGBA file matplotlib writes."""
    import numpy as np
    from PIL import Image

    from fyexp.report.figures import plt
    from fyexp.report.figures.output import write_palette_png

    fig, (left, right) = plt.subplots(1, 2, figsize=(6, 3))
    left.imshow(np.linspace(0, 1, 300 * 300).reshape(300, 300), cmap="viridis")
    for shift in range(12):
        right.plot(np.sin(np.linspace(0, 6, 200) + shift), lw=1.5)
    rendered = _rendered(fig, dpi=100)
    plt.close(fig)
    write_palette_png(rendered, tmp_path / "many.png")
    rendered.seek(0)
    with Image.open(tmp_path / "many.png") as saved, Image.open(rendered) as original:
        colours = len(np.unique(np.asarray(original.convert("RGB")).reshape(-1, 3), axis=0))
        error = np.abs(np.asarray(saved.convert("RGB"), float) - np.asarray(original.convert("RGB"), float))
    assert colours > 256 and saved.mode == "P"
    assert error.mean() < 2.0 and np.quantile(error, 0.99) < 24
    assert (tmp_path / "many.png").stat().st_size < len(rendered.getvalue())
