"""End to end: `fyexp run gmm-calibration --profile quick` (shrunk) into a temporary results folder, then the report."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tests.conftest import ROOT, run_cli, run_in_process


@pytest.mark.slow
def test_quick_profile_runs_reports_and_resumes(tmp_path):
    """The quick profile at a quarter of its replicas and fewer importance samples (a variant: what is checked holds
    at any size, the time does not), through the installed script; the report and the resumed run in this process."""
    env = {"FYEXP_EXPERIMENTS_DIR": str(ROOT / "experiments"), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    R = 50
    small = ("--profile", "quick", "--set", f"n_replicas={R}", "--set", "is_samples=50", "--set", "table5_samples=1000")
    profile = f"quick+is_samples=50,n_replicas={R},table5_samples=1000"
    ran = run_cli("run", "gmm-calibration", *small, "--no-progress", env=env)
    assert ran.returncode == 0, ran.stderr
    frame = pd.read_csv(tmp_path / "results" / "gmm-calibration" / "results.csv")
    assert (frame["status"] == "ok").all()
    assert {"1", "4a", "4b", "4c", "5", "text"} <= set(frame["table"].dropna().astype(str))

    assert set(frame["profile"]) == {profile}
    kappa = frame[frame["metric"].astype(str).str.startswith("kappa_mu")]
    expected = np.maximum(2 * np.sqrt(kappa["value"] * (1 - kappa["value"]) / R), 1 / R)
    np.testing.assert_allclose(kappa["tolerance"], expected)
    assert kappa["value"].between(0, 1).all()

    table1 = frame[(frame["table"].astype(str) == "1") & (frame["paper_row"] == "L_0.5")]
    assert set(table1["metric"]) == {"kappa_mu1", "kappa_mu2", "l_mu1", "l_mu2", "bound", "bound_authors"}
    assert frame[(frame["table"].astype(str) == "4c") & (frame["metric"] == "kappa_mu4")].shape[0] == 16
    # a fractional posterior is wider than the ELBO's: ℓ decreases with γ (§5.1)
    lengths = frame[(frame["table"].astype(str) == "1") & (frame["metric"] == "l_mu1")
                    & frame["label"].str.startswith("L_")].sort_values("gamma")["value"].to_numpy()
    assert np.all(np.diff(lengths) < 0)

    reported = run_in_process("report", "gmm-calibration", env=env)
    assert reported.returncode == 0, reported.stderr
    folder = tmp_path / "results" / "gmm-calibration"
    for table in ("1", "4a", "4b", "4c", "5"):
        assert (folder / "tables" / f"frac-table{table}-{profile}.md").is_file()
    assert (folder / "figures" / f"figure2-{profile}.png").is_file()
    assert (folder / "figures" / f"coverage-length-{profile}.png").is_file()

    again = run_in_process("run", "gmm-calibration", *small, "--no-progress", env=env)
    assert again.returncode == 0 and "0 cells run" in " ".join(again.stderr.split())


def test_printed_rows_are_the_reference_tables():
    """The declared rows the paper prints (the runner's paper_row, no reference data read at run time) are exactly
    the published cells of frac Tables 1, 4a–4c, 5 and the text's calibration rows."""
    from fyexp.experiments.gmm_calibration_config import PRINTED, SETTINGS, paper_keys
    from fyexp.reference import paper_cells

    labels = {s.label: key for key, s in SETTINGS.items()}
    published = pd.concat([paper_cells("frac", t) for t in ("1", "4a", "4b", "4c", "5", "text")])
    published = published[published["setting"].isin(labels)]
    expected = {(t, labels[s], r) for t, s, r in zip(published["table"], published["setting"], published["row"])}
    declared = {(table, setting, row) for (table, setting), rows in PRINTED.items() for row in rows}
    assert declared == expected
    assert paper_keys("1", "1", "L_0.2")["paper_row"] == "" and paper_keys("1", "1", "L_0.3")["paper_row"] == "L_0.3"
    assert paper_keys("text", "4a", "R_kappa") == {"paper": "frac", "table": "text", "setting": "n=30 K=2 mu=±2",
                                                   "paper_row": "", "label": "R_kappa"}


def test_figure2_series_from_the_interpolation_artifact(tmp_path):
    """The interpolation cell saves precisions; the report's series pick the data set with the largest gap, whose
    log10 mean-squared gap is the cell's max row, and the legacy figure2.npz is read as it is."""
    from fyexp.experiments import RunContext, get_experiment
    from fyexp.experiments.gmm_calibration_config import GmmCalibrationConfig
    from fyexp.report.figures.calibration import figure2_series
    from fyexp.store.results import Cell

    ctx = RunContext("gmm-calibration", "test", "cpu", None, tmp_path / "work", tmp_path / "artifacts")
    config = GmmCalibrationConfig(n_replicas=30, grid={"interpolation": {}})
    cell = Cell("interpolation", 23)
    rows = {r["metric"]: r["value"] for r in get_experiment("gmm_calibration").run_cell(config, cell, ctx)}
    series = figure2_series(tmp_path / "artifacts")
    assert series["log10_msd"].shape == (30,) and len(series["gammas"]) == 9 and len(series["learnt"]) == 9
    assert series["log10_msd"][series["replica"]] == rows["log10_msd_max"] == series["log10_msd"].max()
    assert np.median(series["log10_msd"]) == rows["log10_msd_median"]
    np.testing.assert_allclose(series["interpolated"][-1], (0.1 / 9.0) + 0.9 / (1.0 / series["elbo_precision"]))
    np.savez(tmp_path / "figure2.npz", **{k: np.asarray(v) for k, v in series.items()})
    legacy = figure2_series(tmp_path)
    assert legacy["replica"] == series["replica"] and np.array_equal(legacy["learnt"], series["learnt"])
    assert figure2_series(tmp_path / "nothing") is None


def test_grid_cells_and_settings_as_committed():
    """The declared grid gives the committed cell keys; a cell's settings read as the config before the grid."""
    from fyexp.experiments import get_experiment
    from fyexp.experiments.gmm_calibration_config import GmmCalibrationConfig

    experiment = get_experiment("gmm_calibration")
    cells = experiment.cells(GmmCalibrationConfig(), (23,))
    assert [c.key for c in cells] == [f"{m}__setting={s}__seed=23" for m in ("calibration", "importance")
                                      for s in ("1", "4a", "4b", "4c")] + ["interpolation__seed=23"]
    settings = experiment.cell_config(GmmCalibrationConfig(grid={"calibration": {"setting": ["4a"]}}), cells[0])
    assert "grid" not in settings and settings["settings"] == ["4a"]
    assert settings["importance"] is False and settings["figure2"] is False
