r"""Many mean-field Gaussian Bayesian neural networks trained as one batched computation (Li & Turner §5.2).

Each of the M models is a regression network with one hidden layer of H ReLU units,

    y = F_θ(x) + ε,   F_θ(x) = W₂ᵀ relu(W₁ᵀ x + b₁) + b₂,   ε ∼ N(0, σ²),

with a N(0, v₀ I) prior on every weight (v₀ = 1), a mean-field Gaussian q(θ) = N(m, diag v) and a learned noise
variance σ².  All weights of all models and all K posterior samples live in one tensor θ of shape (M, P, K),
so a step of every model (the splits × methods of a data set) is a handful of batched matrix products.

The variational parameters follow the authors' code (``BayesianNN/black_box_alphavi.py``): free parameters
(μ̃, ℓ) give v = 1/(exp(−ℓ) + 1/v₀) and m = μ̃ exp(−ℓ) v — q written as the prior times a Gaussian factor —
initialised μ̃ ∼ N(0, 0.1²), ℓ ∼ −10 + N(0, 0.1²), σ² = 1.

Randomness: model m draws its initial parameters and its weight noise from its own ``torch.Generator``, so its
numbers do not depend on which other models share the batch.

The protocol of :mod:`fyexp.objectives`: ``terms(batch, K)`` returns :class:`LatentTerms` whose "batch" axis is
the model axis: ``log_likelihood[k, m] = N_m · mean_{b} log N(y_b; F_{θ_mk}(x_b), σ_m²)`` (the minibatch
likelihood of Li & Turner eq. 23, f̄_S^N), ``log_prior``/``log_q`` of θ_mk, and the closed-form KL(q_m ‖ p₀).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch
from torch import Tensor, nn

from fyexp.models.base import LatentVariableModel
from fyexp.models.latent import LatentTerms

LOG_2PI = math.log(2 * math.pi)


@dataclass
class RegressionBatch:
    """A minibatch per data group: inputs (G, B, D), targets (G, B) and the training-set size N of each group (G,).

    Model m reads group ``m % G`` (models are laid out method-major: m = a·G + g)."""

    x: Tensor
    y: Tensor
    n_data: Tensor


@dataclass
class WeightSamples:
    """K reparameterized weight samples of every model: θ = m + s ε, θ and ε of shape (M, P, K), m and s (M, P)."""

    theta: Tensor
    eps: Tensor
    mean: Tensor
    std: Tensor
    eps_sq: Tensor | None = None

    def __post_init__(self):
        if self.eps_sq is None:
            self.eps_sq = self.eps.pow(2)


def gaussian_log_density(y: Tensor, mean: Tensor, var: Tensor) -> Tensor:
    """log N(y; mean, var), elementwise."""
    return -0.5 * (LOG_2PI + var.log() + (y - mean).pow(2) / var)


class BatchedBNN(LatentVariableModel):
    """M one-hidden-layer BNNs with mean-field Gaussian posteriors (see the module docstring).

    Parameters
    ----------
    generators : sequence of torch.Generator, one per model
        Each model's own source of initial values and weight noise.
    n_in, n_hidden : int
    prior_var : float
        v₀ of the N(0, v₀ I) prior.
    init_std, init_log_var, init_noise_var : float
        μ̃ ∼ N(0, init_std²), ℓ ∼ init_log_var + N(0, init_std²), σ² = init_noise_var (the authors' 0.1, −10, 1).
    """

    def __init__(self, generators: Sequence[torch.Generator], n_in: int, n_hidden: int, prior_var: float = 1.0,
                 init_std: float = 0.1, init_log_var: float = -10.0, init_noise_var: float = 1.0):
        super().__init__()
        self.generators = list(generators)
        self.n_in, self.n_hidden, self.prior_var = n_in, n_hidden, float(prior_var)
        n_params = n_in * n_hidden + 2 * n_hidden + 1
        init = torch.stack([init_std * torch.randn(2, n_params, generator=g) for g in self.generators])
        self.mean_param = nn.Parameter(init[:, 0].clone())
        self.log_var_param = nn.Parameter(init[:, 1] + init_log_var)
        self.log_noise_var = nn.Parameter(torch.full((len(self.generators),), math.log(init_noise_var)))
        self.model_chunk: int | None = None  # see predict()

    @property
    def n_models(self) -> int:
        return self.mean_param.shape[0]

    @property
    def n_params(self) -> int:
        return self.mean_param.shape[1]

    # ------------------------------------------------------------------------------------- q and prior
    def q_params(self) -> tuple[Tensor, Tensor]:
        """(m, v) of q, each (M, P): v = 1/(exp(−ℓ) + 1/v₀), m = μ̃ exp(−ℓ) v."""
        precision = torch.exp(-self.log_var_param)
        var = 1.0 / (precision + 1.0 / self.prior_var)
        return self.mean_param * precision * var, var

    def noise(self, n_samples: int) -> Tensor:
        """ε ∼ N(0, I) of shape (M, P, K), model m's slice from its own generator (drawn on the CPU; the draws are
        returned, not written in place, so that a :mod:`fyexp.train.ensemble` member draws its own)."""
        dtype = self.mean_param.dtype
        eps = torch.stack([torch.randn(self.n_params, n_samples, generator=g, dtype=dtype) for g in self.generators])
        return eps.to(self.mean_param.device)

    def sample(self, n_samples: int) -> "WeightSamples":
        """θ = m + √v ε of shape (M, P, K) — samples last, the layout of the batched products."""
        mean, var = self.q_params()
        eps = self.noise(n_samples)
        std = var.sqrt()
        return WeightSamples(mean.unsqueeze(-1) + std.unsqueeze(-1) * eps, eps, mean, std)

    def log_prior(self, w: "WeightSamples") -> Tensor:
        """log N(θ_k; 0, v₀ I) summed over the weights, (M, K), by Σ_p θ² = ‖m‖² + 2 (m⊙s)·ε_k + (s²)·ε_k²
        (two batched products instead of a pass over θ)."""
        sq = (w.mean.pow(2).sum(-1, keepdim=True) + 2 * torch.bmm((w.mean * w.std).unsqueeze(1), w.eps).squeeze(1)
              + torch.bmm(w.std.pow(2).unsqueeze(1), w.eps_sq).squeeze(1))
        return -0.5 * (sq / self.prior_var + self.n_params * (LOG_2PI + math.log(self.prior_var)))

    @staticmethod
    def log_q(w: "WeightSamples") -> Tensor:
        """log q(θ_k) = −½ Σ_p [log 2π + log v_p + ε_pk²], (M, K): (θ − m)²/v = ε² exactly for θ = m + √v ε, so
        this is log q at the reparameterized sample, with the same gradient in (m, v)."""
        return -0.5 * (w.eps.shape[1] * LOG_2PI + 2 * w.std.log().sum(-1, keepdim=True) + w.eps_sq.sum(1))

    def kl(self, mean: Tensor, var: Tensor) -> Tensor:
        """KL(q ‖ N(0, v₀ I)) = ½ Σ_p [(m_p² + v_p)/v₀ − 1 − log(v_p/v₀)], (M,)."""
        v0 = self.prior_var
        return 0.5 * ((mean.pow(2) + var) / v0 - 1.0 - (var / v0).log()).sum(-1)

    # ------------------------------------------------------------------------------------- the network
    def predict(self, theta: Tensor, x: Tensor) -> Tensor:
        """F_θ(x) of shape (M, K, B) for weights θ (M, P, K) and inputs x (G, B, D), model m reading group m % G.

        Each (model, sample) pair is one matrix of a batched product: relu(x W₁ + b₁) W₂ + b₂ with batch M·K.
        With ``model_chunk`` set, the model axis is cut into chunks of that many models, so that each operation's
        working set (chunk × K × B × H floats) stays in the CPU's cache; the result is the same."""
        M = theta.shape[0]
        G = x.shape[0]
        xm = x.repeat(M // G, 1, 1) if G != M else x  # (M, B, D), model-major layout m = a·G + g
        chunk = self.model_chunk or M
        # torch.split, not slicing: its backward is one concatenation, where each slice's backward would fill a
        # zero tensor of θ's full size.
        return torch.cat([self._predict(t, xc) for t, xc in zip(theta.split(chunk), xm.split(chunk))])

    def _predict(self, theta: Tensor, xm: Tensor) -> Tensor:
        M, _, K = theta.shape
        D, H, B = self.n_in, self.n_hidden, xm.shape[1]
        w1, b1, w2, b2 = theta.transpose(1, 2).split([D * H, H, H, 1], dim=2)  # each (M, K, ·)
        x = xm.unsqueeze(1).expand(M, K, B, D).reshape(M * K, B, D)
        hidden = torch.relu(torch.baddbmm(b1.reshape(M * K, 1, H), x, w1.reshape(M * K, D, H)))  # (M·K, B, H)
        return torch.bmm(hidden, w2.reshape(M * K, H, 1)).view(M, K, B) + b2

    def noise_var(self) -> Tensor:
        """σ², (M,)."""
        return self.log_noise_var.exp()

    def terms(self, batch: RegressionBatch, n_samples: int) -> LatentTerms:
        """Eq. 23's terms for K = ``n_samples`` weight samples per model; the "batch" axis is the model axis.

        ``terms.log_weights()`` equals :func:`fyexp.objectives.minibatch_log_weights` of the per-point terms."""
        w = self.sample(n_samples)
        f = self.predict(w.theta, batch.x)  # (M, K, B)
        reps = self.n_models // batch.y.shape[0]
        y = batch.y.repeat(reps, 1).unsqueeze(1)  # (M, 1, B)
        n_data = batch.n_data.repeat(reps).to(f.dtype)
        log_lik = gaussian_log_density(y, f, self.noise_var()[:, None, None])  # (M, K, B)
        log_prior, log_q = self.log_prior(w), self.log_q(w)
        scaled = n_data[:, None] * log_lik.mean(-1)  # N · (1/|S|) Σ_{n∈S} log f_n(θ_k)
        return LatentTerms(scaled.T, log_prior.T, log_q.T, self.kl(w.mean, w.std.pow(2)))

    # ------------------------------------------------------------------------------------- evaluation
    @torch.no_grad()
    def predictive(self, x: Tensor, n_samples: int, chunk: int = 1024) -> tuple[Tensor, Tensor]:
        """K posterior draws of F_θ(x) for x (G, N, D): f (M, K, N), and σ² (M,); test points in chunks."""
        theta = self.sample(n_samples).theta
        f = torch.cat([self.predict(theta, xb) for xb in x.split(chunk, dim=1)], dim=-1)
        return f, self.noise_var()


def predictive_metrics(f: Tensor, noise_var: Tensor, y: Tensor, y_mean: Tensor, y_std: Tensor) -> tuple[Tensor, Tensor]:
    """Test log-likelihood and RMSE in original units, per model (Li & Turner §5.2; PBP's protocol).

        ll   = (1/N) Σ_n log (1/K) Σ_k N(y_n; F_k(x_n) s_y + μ_y, σ² s_y²),
        rmse = sqrt((1/N) Σ_n (y_n − (1/K) Σ_k (F_k(x_n) s_y + μ_y))²).

    ``f`` (M, K, N) in standardised units, ``noise_var`` (M,), ``y`` (M, N) in original units, ``y_mean``/``y_std``
    (M,) the training targets' statistics.  Returns (ll, rmse), each (M,).
    """
    pred = f * y_std[:, None, None] + y_mean[:, None, None]
    var = (noise_var * y_std.pow(2))[:, None, None]
    log_p = gaussian_log_density(y.unsqueeze(1), pred, var)
    ll = (torch.logsumexp(log_p, 1) - math.log(f.shape[1])).mean(-1)
    rmse = (y - pred.mean(1)).pow(2).mean(-1).sqrt()
    return ll, rmse


__all__ = ["BatchedBNN", "RegressionBatch", "WeightSamples", "predictive_metrics", "gaussian_log_density"]
