"""The gmm-clustering experiment: its data (FYVI App. B), config validation, and an end-to-end quick run."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fyexp.data.gmm_blobs import BlobsSpec, make_gmm_blobs
from fyexp.core.errors import ConfigValueError
from fyexp.experiments.gmm_clustering import GMMClustering, GMMClusteringConfig
from fyexp.metrics.clustering import clustering_scores
from tests.conftest import run_in_terminal, strip_ansi

EXPERIMENTS = Path(__file__).resolve().parents[2] / "experiments"
CENTERS = [[0, 0], [1, 1], [1, -1], [-1, -1]]


def test_blobs_as_the_authors_generate_them():
    data = make_gmm_blobs(BlobsSpec.from_lists(CENTERS, [0.5, 0.7, 0.9, 0.11]))
    assert data.X.shape == (1100, 2) and data.inliers.sum() == 1000
    assert np.bincount(data.labels[data.inliers]).tolist() == [250] * 4
    outliers = data.X[~data.inliers]
    assert (np.abs(outliers) <= 3).all()
    np.testing.assert_array_equal(outliers, outliers.astype(np.float32))  # drawn in float32
    # the tight blob (std 0.11 around (-1, -1)) has the spread it was asked for
    assert abs(data.X[data.labels == 3].std(axis=0).mean() - 0.11) < 0.02
    again = make_gmm_blobs(BlobsSpec.from_lists(CENTERS, [0.5, 0.7, 0.9, 0.11]))
    np.testing.assert_array_equal(again.X, data.X)


def test_variance_reading_takes_square_roots():
    spec = BlobsSpec.from_lists(CENTERS, [0.11, 0.5, 0.7, 0.9], spread_kind="variance")
    np.testing.assert_allclose(spec.stds ** 2, [0.11, 0.5, 0.7, 0.9])
    np.testing.assert_allclose(spec.true_covariances[0], 0.11 * np.eye(2))


def test_perfect_clustering_scores_one():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(c, 0.1, size=(20, 2)) for c in ([0, 0], [5, 5])])
    truth = np.repeat([0, 1], 20)
    scores = clustering_scores(X, truth, 1 - truth)  # a relabelling is still perfect
    assert scores["adjusted_mi"] == pytest.approx(1.0) and scores["adjusted_ri"] == pytest.approx(1.0)
    assert scores["silhouette_score"] > 0.9


@pytest.mark.parametrize("bad", [{"grid": {"truncated": {"n_active": [5]}}}, {"grid": {"sparse": {"rho": [0.0]}}},
                                 {"grid": {"sparse": {"n_active": [2]}}}, {"grid": {"exotic": {}}},
                                 {"grid": {"truncated": {"n_active": [1.5]}}}, {"spread": [0.5]}, {"n_iter": 0}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ConfigValueError):
        GMMClusteringConfig(**bad)


def test_grid_cells_and_paper_keys():
    """Each method's own axes × seeds (keys as committed), the sparse ρ read as floats, a null method left out;
    Table 1 keys on the published metrics only (sparse EM at ρ = 2 as its row, ρ = 1.5 as a labelled extra row)."""
    experiment = GMMClustering()
    config = GMMClusteringConfig(grid={"standard": {}, "sparse": {"rho": [1, 1.5, 2]}, "truncated": {"n_active": [2]},
                                       "sklearn": None})
    cells = experiment.cells(config, (0, 1))
    assert [c.key for c in cells[:4]] == ["standard__seed=0", "standard__seed=1", "sparse__rho=1__seed=0",
                                         "sparse__rho=1__seed=1"]
    assert {c.method for c in cells} == {"standard", "sparse", "truncated"} and len(cells) == 10
    assert all(isinstance(c.params["rho"], float) for c in cells if c.method == "sparse")
    keys = {c.key: experiment.paper_keys.keys(c) if experiment.paper_keys.publishes(c, "adjusted_mi") else None
            for c in cells if c.seed == 0}
    assert keys["sparse__rho=2__seed=0"][0]["paper_row"] == "Sparse EM"
    assert keys["sparse__rho=1.5__seed=0"][0]["paper_row"] == "" and keys["sparse__rho=1__seed=0"] is None
    assert keys["standard__seed=0"][0] == {"paper": "fyvi", "table": "1", "paper_row": "Standard EM",
                                           "setting": "synthetic GMM"}
    settings = experiment.cell_config(config, cells[0])
    assert settings["table_rhos"] == [2.0, 1.5] and settings["sweep_rhos"] == [1.0, 1.5, 2.0]
    assert settings["truncated_active"] == [2] and settings["sklearn_reference"] is False and "grid" not in settings


@pytest.mark.slow
def test_quick_profile_end_to_end(tmp_path):
    """The installed `fyexp` with its live progress bar (under a terminal) runs every cell, then `report`."""
    common = ["--results-dir", str(tmp_path), "--experiments-dir", str(EXPERIMENTS)]
    code, screen = run_in_terminal("run", "gmm-clustering", "--profile", "quick", *common)
    assert code == 0, screen
    assert "\x1b[" in screen and "━" in screen  # rich drew a live bar on the terminal
    screen = strip_ansi(screen)
    assert "Traceback" not in screen and "12 cells run" in screen and "gmm-clustering [quick]" in screen
    frame = pd.read_csv(tmp_path / "gmm-clustering" / "results.csv")
    assert set(frame["method"]) == {"standard", "hard", "sparse", "truncated", "sklearn"}
    assert (frame["status"] == "ok").all()
    published = frame.dropna(subset=["paper_row"])
    assert set(published["paper_row"]) == {"Standard EM", "Hard EM", "Sparse EM"}
    assert set(published["metric"]) == {"adjusted_mi", "adjusted_ri", "silhouette_score"}
    zeros = frame[(frame["metric"] == "estep_zeros")]
    assert (zeros[zeros["method"] == "hard"]["value"] == 3).all()  # K − 1 zeros per sample
    assert (zeros[zeros["method"] == "truncated"]["value"] == 2).all()  # K − C′
    code, screen = run_in_terminal("report", "gmm-clustering", *common)
    assert code == 0 and "Traceback" not in screen, screen
    figures = tmp_path / "gmm-clustering" / "figures"
    assert (figures / "fyvi-figure1-quick.png").is_file() and (figures / "fyvi-figure2-quick.png").is_file()
    assert (tmp_path / "gmm-clustering" / "tables" / "fyvi-table1-quick.md").is_file()
