"""The notes that go with the gmm-calibration tables (written by the report beside them): how agreement is judged
and what the columns mean."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fyexp.report.cache import write_text_if_changed

_TEXT = """# gmm-calibration: notes to the tables

**Agreement.** The report scores every cell with one rule (results/README.md, "How to read a status"):
within tolerance when |ours − paper| ≤ 2·sqrt(se_p² + se_o²).  This study is one run (one data seed, R
replicas), so it has no seed spread of its own and the paper prints none: a cell counts as reproduced only when
it is exact at the printed precision, and a cell within this run's own Monte-Carlo error but not exact is
marked ✗†.  That Monte-Carlo error is, for a coverage κ, the binomial standard error sqrt(κ(1−κ)/R) over the
R replicas (and one replica, 1/R, is the printed resolution).  {se_lines}
Interval lengths ℓ and bounds are deterministic given the data (the data are drawn with the authors' seed and
generator), so their misses are real.  Table 5's log-evidence L̂_evd has a Monte-Carlo standard error of about
CV/sqrt(N_s) (delta method for log mean w); its CV has none we can compute — the CV of heavy-tailed importance
weights is itself a very noisy statistic, so the CVs of the ±1/2 and K = 4 settings are not reproducible from a
different random stream.

**Bounds.** `bound` (Tables 1, 4) and `l_gamma` (Table 5) are eq. (7) of the paper evaluated in closed form.
The published bound column is reproduced by `bound_authors` / `l_gamma_authors`: the authors' code writes the
last term of the Gaussian Rényi divergence D_(1/γ)[q(u_k) || p(u_k)] (and of the KL at γ = 1) as log(σ²/s²_k)
instead of ½ log(σ²/s²_k), which lowers the bound by ½ Σ_k log(σ²/s²_k) (2.6 to 13.7 nats here).  With eq. (7)
the gap to the importance-sampling estimate L̂_evd of Table 5 shrinks from 6–8 to 0.01–0.9 nats (n = 400,
±2), from 4–6 to 0.02–2.9 (n = 30) and from 15–19 to 1.7–10 (K = 4), and the tightest γ is no longer 0.1.

**CAVI.** For γ < 1 the component update of §3.1.3, q(u_k) ∝ p(u_k) Π_i p(x_i|u_k)^(γφ_ik), is not the exact
maximizer of eq. (7) given φ (eq. (7)'s data term is a sum over points of separate log-integrals), so a sweep
can lower eq. (7) slightly (up to ~1e-2 nats on n = 30 data); the stopping rule then fires.  The assignment
update, and both updates at γ = 1, never lower it (tests/calibration/test_calibration.py).

**Importance sampling.** The proposal q(u)q(c) sits in one of the K! label-permuted modes of the posterior,
so for well separated components L̂_evd estimates the evidence of that mode, about log K! below log p(x)
(the tests check this on a small mixture whose evidence is computed exactly).  The paper's numbers are the
same estimator; we follow it.

**Protocol.** Data: legacy NumPy `RandomState(23)`, one assignment vector shared by all replicas.  CAVI:
posterior means initialized at (−1, 1) (K = 4: ±1, ±1/4), variances n/K, φ from the ELBO update; sweeps until
the bound rises by at most 1e-5 (at least 3 sweeps).  C_γ: ELBO means and responsibilities with the variances
of q_γ, scored by the ELBO.  R_ℓ, R_ℓ⁻²: per replica and component, regression of γ on ℓ (ℓ⁻²) over the ten
γ's at ℓ* = 2 z sqrt(K/n), clipped to [0, 1], averaged over components.  R_κ: regression of γ on κ_k at 1 − α,
averaged over components.
"""


def write_notes(frame: pd.DataFrame, path: Path) -> Path:
    """Write the notes, quoting the range of the κ standard errors actually used per profile and setting."""
    if not {"metric", "tolerance", "profile", "setting"} <= set(frame.columns):   # e.g. only the interpolation cell
        frame = frame.iloc[0:0].reindex(columns=["metric", "tolerance", "profile", "setting"])
    kappa = frame[frame["metric"].astype(str).str.startswith("kappa_mu") & frame["tolerance"].notna()]
    lines = []
    for (profile, setting), group in kappa.groupby(["profile", "setting"], sort=False):
        tolerance = pd.to_numeric(group["tolerance"])
        lines.append(f"`{profile}`, {setting}: {tolerance.min():.4f}–{tolerance.max():.4f}.")
    se_lines = ("Twice that standard error (at least one replica), per profile and setting: " + " ".join(lines)
                if lines else "")
    write_text_if_changed(path, _TEXT.format(se_lines=se_lines))
    return path
