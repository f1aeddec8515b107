"""`fyexp report --vector` writes a PDF beside each PNG, from the same figure (for a paper); without it only PNGs
(issue 49, vector figures); every PNG at 150 dpi, stated in the file (issue 49: "about 100 dpi").  Through the
installed script, on gmm-clustering's committed rows in a folder of their own (its spec alone in an experiments
folder, so the index covers one experiment)."""

from __future__ import annotations

import shutil

import pytest
from PIL import Image

from fyexp.report.figures.output import PNG_DPI
from tests.conftest import ROOT, run_cli

pytestmark = pytest.mark.slow


def _folders(tmp_path):
    specs, results = tmp_path / "specs", tmp_path / "results"
    specs.mkdir()
    shutil.copy(ROOT / "experiments" / "gmm-clustering.yaml", specs)
    shutil.copytree(ROOT / "results" / "gmm-clustering", results / "gmm-clustering",
                    ignore=shutil.ignore_patterns("figures"))
    return {"FYEXP_RESULTS_DIR": str(results), "FYEXP_EXPERIMENTS_DIR": str(specs)}, results / "gmm-clustering"


def test_vector_writes_a_pdf_beside_each_png_and_the_default_writes_none(tmp_path):
    env, folder = _folders(tmp_path)
    plain = run_cli("report", "gmm-clustering", env=env)
    assert plain.returncode == 0, plain.stderr
    pngs = sorted((folder / "figures").glob("*.png"))
    assert pngs and not list((folder / "figures").glob("*.pdf"))         # PNGs stay the default
    for png in pngs:                                                       # at 150 dpi, stated in the file
        with Image.open(png) as image:
            assert tuple(round(d) for d in image.info["dpi"]) == (PNG_DPI, PNG_DPI) == (150, 150), png
            assert image.mode == "P" and min(image.size) >= 3 * PNG_DPI, (png, image.size)
    vector = run_cli("report", "gmm-clustering", "--vector", env=env)    # the same rows: drawn again, with PDFs
    assert vector.returncode == 0, vector.stderr
    assert sorted((folder / "figures").glob("*.png")) == pngs
    for png in pngs:
        pdf = png.with_suffix(".pdf")
        assert pdf.is_file() and pdf.read_bytes().startswith(b"%PDF"), pdf
        assert f"figure → {png} (and {pdf.name})" in vector.stdout
    index = (folder.parent / "README.md").read_text(encoding="utf-8")
    assert ".pdf" not in index                                             # the index links the PNGs


def test_report_help_explains_vector():
    shown = run_cli("report", "--help", env={"COLUMNS": "100"})
    assert shown.returncode == 0
    text = " ".join(shown.stdout.split())
    assert "--vector" in text and "PDF beside its PNG" in text and "PNGs stay the default" in text
