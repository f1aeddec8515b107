"""Degeneracy statistics of implicit distributions (frac App. C.4, Table 8).

For each test image, S = 500 implicit samples u ∈ (0, 1)² are transformed by the arcsine-square-root
v = arcsin(√u) and their sample covariance Σ̂ (ddof = 1) gives

    generalized variance det Σ̂,        total variation tr Σ̂.

Over the test images each is summarised by median, max, mean, coefficient of variation (std / mean, population
std) and skewness (the Fisher–Pearson coefficient g₁ = m₃ / m₂^{3/2}, scipy's ``skew(bias=True)``).  Values
below 1e-10 are treated as zero (the table's convention) before summarising.
"""

from __future__ import annotations

import numpy as np
import torch
from scipy import stats

ZERO = 1e-10
STATISTICS = ("median", "max", "mean", "cv", "skew")


def transformed_covariances(u: torch.Tensor) -> torch.Tensor:
    """Sample covariances (B, k, k) of arcsin(√u) for samples u of shape (S, B, k)."""
    v = torch.arcsin(torch.sqrt(u.double().clamp(0.0, 1.0)))
    centred = v - v.mean(0, keepdim=True)
    return torch.einsum("sbi,sbj->bij", centred, centred) / (v.shape[0] - 1)


def variances(u: torch.Tensor) -> dict[str, np.ndarray]:
    """Per image: ``genvar`` = det Σ̂ and ``totvar`` = tr Σ̂ (each (B,)), values below 1e-10 set to 0."""
    cov = transformed_covariances(u)
    out = {"genvar": torch.linalg.det(cov).numpy(), "totvar": torch.diagonal(cov, dim1=-2, dim2=-1).sum(-1).numpy()}
    return {k: np.where(np.abs(v) < ZERO, 0.0, v) for k, v in out.items()}


def summarize(values: np.ndarray) -> dict[str, float]:
    """median, max, mean, CV (population std / mean; NaN when the mean is 0) and Fisher–Pearson skewness."""
    values = np.asarray(values, dtype=float)
    mean = float(values.mean())
    std = float(values.std())
    return {"median": float(np.median(values)), "max": float(values.max()), "mean": mean,
            "cv": std / mean if mean != 0 else float("nan"),
            "skew": float(stats.skew(values, bias=True)) if std > 0 else float("nan")}


def degeneracy_table(u: torch.Tensor) -> dict[str, float]:
    """Table 8's ten numbers from implicit samples (S, B, 2): ``genvar_median`` … ``totvar_skew``."""
    out = {}
    for name, values in variances(u).items():
        out.update({f"{name}_{stat}": value for stat, value in summarize(values).items()})
    return out


@torch.no_grad()
def model_degeneracy(model, images: torch.Tensor, n_samples: int, batch: int = 100) -> dict[str, float]:
    """:func:`degeneracy_table` of ``n_samples`` draws u ∼ q(u | x) of a semi-implicit model's ``implicit`` per
    image (drawn in batches of ``batch`` images, in order)."""
    return degeneracy_table(torch.cat([model.implicit(x, n_samples).cpu() for x in images.split(batch)], 1))
