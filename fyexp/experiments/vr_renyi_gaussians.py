r"""Li & Turner Figure 2(b): Monte Carlo estimates of the (negative) Rényi divergence against the exact value.

q = N(μ_q, I) and p = N(μ_p, I) in 2-D (μ_p = [0, 0], μ_q = [1, 1]).  The VR bound of eq. 13 with p in place of
the joint is −D_α[q ‖ p], and its Monte Carlo estimate (eq. 18) with θ_k ∼ q is

    L̂_{α,K} = 1/(1−α) log (1/K) Σ_k (p(θ_k)/q(θ_k))^{1−α}     (α = 1: (1/K) Σ_k log p/q = −KL estimate).

For equal covariances Σ the divergence has the closed form D_α[q ‖ p] = (α/2) (μ_q − μ_p)ᵀ Σ⁻¹ (μ_q − μ_p) for
every real α (the Gaussian integral converges for any α when the covariances agree), so −D_α = −α ‖Δμ‖²/2.
Theorem 2: E L̂_{α,K} ≤ −D_α for α < 1 (≥ for α > 1), the gap shrinking as K grows; K = 1 gives −KL for any α.
One cell per K (the spec's ``grid: {K: [...]}``) and seed: ``repetitions`` independent estimates at every α, drawn
from the cell's Monte Carlo stream; rows are their mean and std, and the exact value.
"""

from __future__ import annotations

import numpy as np
import torch

from fyexp.experiments import register
from fyexp.experiments.grid import GridExperiment, metric
from fyexp.experiments.vr_renyi_gaussians_config import Config, cell_config
from fyexp.objectives import vr_bound
from fyexp.store.results import Cell


def exact_neg_renyi(alpha: float, mu_q, mu_p) -> float:
    """−D_α[N(μ_q, I) ‖ N(μ_p, I)] = −(α/2) ‖μ_q − μ_p‖²."""
    delta = np.asarray(mu_q, float) - np.asarray(mu_p, float)
    return -0.5 * alpha * float(delta @ delta)


def mc_neg_renyi(alpha: float, n_samples: int, repetitions: int, mu_q, mu_p,
                 generator: torch.Generator) -> torch.Tensor:
    """``repetitions`` independent estimates L̂_{α,K} (eq. 18) with θ_k ∼ q; shape (repetitions,)."""
    mu_q = torch.as_tensor(mu_q, dtype=torch.float64)
    mu_p = torch.as_tensor(mu_p, dtype=torch.float64)
    theta = mu_q + torch.randn(n_samples, repetitions, len(mu_q), generator=generator, dtype=torch.float64)
    log_ratio = -0.5 * ((theta - mu_p).pow(2) - (theta - mu_q).pow(2)).sum(-1)  # log p − log q, (K, R)
    return vr_bound(log_ratio, alpha)


@register
class VRRenyiGaussians(GridExperiment):
    name = "vr_renyi_gaussians"
    Config = Config
    columns = {"K": "K"}

    def method(self, config: Config, params: dict) -> str:
        return "mc"

    cell_config = staticmethod(cell_config)   # the settings scope, in the light config module

    def mc_seed(self, cell: Cell) -> int:
        """The cell's Monte Carlo stream: seed · 7919 + K (7919 prime: one stream per seed and K < 7919)."""
        return cell.seed * 7919 + cell.params["K"]

    def measure(self, config: Config, cell: Cell, ctx):
        k = cell.params["K"]
        generator = torch.Generator().manual_seed(self.mc_seed(cell))
        out = []
        for alpha in config.alphas:
            est = mc_neg_renyi(alpha, k, config.repetitions, config.mu_q, config.mu_p, generator)
            common = {"alpha": alpha, "repetitions": config.repetitions}
            out += [metric("neg_renyi_mc_mean", float(est.mean()), **common),
                    metric("neg_renyi_mc_std", float(est.std()), **common),
                    metric("neg_renyi_exact", exact_neg_renyi(alpha, config.mu_q, config.mu_p), **common)]
        return out
