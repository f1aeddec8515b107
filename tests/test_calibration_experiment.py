"""End to end: `fyexp run gmm-calibration --profile quick` into a temporary results folder, then the report."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tests.conftest import ROOT, run_cli


def test_quick_profile_runs_reports_and_resumes(tmp_path):
    env = {"FYEXP_EXPERIMENTS_DIR": str(ROOT / "experiments"), "FYEXP_RESULTS_DIR": str(tmp_path / "results")}
    ran = run_cli("run", "gmm-calibration", "--profile", "quick", "--no-progress", env=env)
    assert ran.returncode == 0, ran.stderr
    frame = pd.read_csv(tmp_path / "results" / "gmm-calibration" / "results.csv")
    assert (frame["status"] == "ok").all()
    assert {"1", "4a", "4b", "4c", "5", "text"} <= set(frame["table"].dropna().astype(str))

    kappa = frame[frame["metric"].astype(str).str.startswith("kappa_mu")]
    R = 200
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

    reported = run_cli("report", "gmm-calibration", env=env)
    assert reported.returncode == 0, reported.stderr
    folder = tmp_path / "results" / "gmm-calibration"
    for table in ("1", "4a", "4b", "4c", "5"):
        assert (folder / "tables" / f"frac-table{table}-quick.md").is_file()
    assert (folder / "figures" / "figure2-quick.png").is_file()
    assert (folder / "figures" / "coverage-length-quick.png").is_file()

    again = run_cli("run", "gmm-calibration", "--profile", "quick", "--no-progress", env=env)
    assert again.returncode == 0 and "0 cells run" in " ".join(again.stderr.split())
