"""Bounds with semi-implicit posteriors (Chai & Bonilla §2.3, Table 3, App. B): L^h_γ, L^bh_γ, L^bh-alt_γ.

A semi-implicit posterior mixes an explicit conditional q̃(z | u) over an implicit q(u) that can only be sampled.
With N′ mixing samples u_i ∼ q(u) and M samples per u_i (N_s = N′M), the Monte Carlo estimators of App. B are

* L^h_γ (eq. 2 substituted into eq. 1):
      1/(1−γ) log (1/N_s) Σ_ij p(x|z_ij)^{1−γ} − γ/(1−γ) log (1/N_s) Σ_ij (q̃(z_ij|u_i)/p(z_ij))^{1/γ−1},
  z_ij ∼ q̃(z|u_i) — :func:`fyexp.objectives.bounds.fractional_bound` on the N_s samples with log q̃(z|u) in
  place of log q(z); at γ = 1 it is E log p(x|z) − E_u KL(q̃(z|u) ‖ p(z)) (Yin & Zhou's lower bound of the ELBO).
* L^bh_γ (§2.3.2, App. B), with a Bayes posterior r(z) = ∫ r(z|u) q(u) du sharing q(u) and z′_ik ∼ r(z|u_i):
      (1/N_s) Σ_ik log p(x|z′_ik) − 1/(1−γ) (1/N_s) Σ_ik log [r(z′_ik|u_i) / q̃(z′_ik|u_i)]
      − γ/(1−γ) log (1/N_s) Σ_ij (q̃(z_ij|u_i)/p(z_ij))^{1/γ−1}.
* L^bh-alt_γ (Table 3's last row, App. B): the cross-entropy term uses other mixing samples U_i ⊂ {u_j},
  u_i ∉ U_i: log r(z′_ik|u_i) − (1/|U_i|) Σ_{u_j∈U_i} log q̃(z′_ik|u_j).  fyexp takes U_i systematically
  (App. B: "a systematic instead of random selection"): u_{i+1}, …, u_{i+|U|} (indices mod N′), |U| = 5 of the
  10 implicit samples (App. C.4).

Every estimator reads :class:`HierarchicalTerms`, the per-sample terms a model returns from
``hierarchical_terms(x, n_u, n_z, bayes, n_cross)``; an explicit posterior is the case N′ = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from torch import Tensor

from fyexp.core.errors import ConfigValueError
from fyexp.models.latent import HierarchicalTerms
from fyexp.objectives import bounds
from fyexp.objectives.objective import Objective


def kl_r_q(terms: HierarchicalTerms, variant: Literal["bh", "bh_alt"]) -> Tensor:
    """Monte Carlo KL term of L^bh (same u) or L^bh-alt (other u's), per data point (B,)."""
    if terms.log_r is None or terms.log_q_cross is None:
        raise ValueError("the L^bh bounds need a Bayes posterior r(z|u) (log_r, log_q_cross)")
    if variant == "bh":
        cross = terms.log_q_cross[0]
    else:
        if terms.log_q_cross.shape[0] < 2:
            raise ValueError("L^bh-alt needs log q(z'|u_j) for at least one other u_j (n_cross >= 1)")
        cross = terms.log_q_cross[1:].mean(0)
    return (terms.log_r - cross).mean((0, 1))


def renyi_term(terms: HierarchicalTerms, gamma: float) -> Tensor:
    """γ/(1−γ) log Ẑ_c, the (upper bound of the) Rényi divergence D_{1/γ}(q‖p) of eq. 2; the MC KL at γ = 1."""
    log_q, log_p = terms.flat("log_q"), terms.flat("log_prior")
    if gamma == 1.0:
        return (log_q - log_p).mean(0)
    log_zc = bounds.log_mean_exp((1.0 / gamma - 1.0) * (log_q - log_p), 0)
    return gamma * log_zc / (1.0 - gamma)


def hierarchical_bound(terms: HierarchicalTerms, gamma: float) -> Tensor:
    """L^h_γ per data point (B,) (γ = 1: the semi-implicit ELBO lower bound)."""
    return bounds.fractional_bound(terms.flat("log_likelihood"), terms.flat("log_prior"), terms.flat("log_q"), gamma)


def bayes_hierarchical_parts(terms: HierarchicalTerms, gamma: float, variant: Literal["bh", "bh_alt"],
                             kl_weight: Literal["paper", "one"] = "paper") -> dict[str, Tensor]:
    """data, KL(r‖q̃), Rényi and the bound L^bh_γ (or L^bh-alt_γ) per data point, each (B,).

    ``kl_weight='paper'`` is the bound as derived (the KL weighted by 1/(1−γ), Table 3 and App. B); ``'one'``
    weights it by 1, which is what the totals printed in frac Tables 2 and 6 add up to (data − KL − Rényi) and
    is not a bound on log p(x) for γ < 1 in general.
    """
    if not 0.0 < gamma < 1.0:
        raise ValueError(f"L^bh needs 0 < gamma < 1 (its KL term carries 1/(1-gamma)), got {gamma}")
    data = terms.log_likelihood.mean((0, 1))
    kl = kl_r_q(terms, variant)
    renyi = renyi_term(terms, gamma)
    weight = 1.0 / (1.0 - gamma) if kl_weight == "paper" else 1.0
    return {"data": data, "kl": kl, "renyi": renyi, "bound": data - weight * kl - renyi}


# ------------------------------------------------------------------------------------------- objectives
@dataclass(frozen=True)
class HierarchicalFractional(Objective):
    """L^h_γ with N′ = ``n_u`` implicit samples and M = ``n_z`` samples per u (frac: 10 × 10 in training)."""

    name: ClassVar[str] = "fractional_h"
    gamma: float = 0.5
    n_u: int = 10
    n_z: int = 10

    def __post_init__(self):
        if not 0.0 < self.gamma <= 1.0:
            raise ConfigValueError("gamma", "a number in (0, 1]", self.gamma)
        for key in ("n_u", "n_z"):
            if getattr(self, key) < 1:
                raise ConfigValueError(key, "an integer >= 1", getattr(self, key))
        object.__setattr__(self, "n_samples", self.n_u * self.n_z)

    def __call__(self, model, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        terms = model.hierarchical_terms(x, self.n_u, self.n_z)
        bound = hierarchical_bound(terms, self.gamma)
        return bound, {"divergence": renyi_term(terms, self.gamma).detach().mean()}


@dataclass(frozen=True)
class BayesHierarchicalFractional(Objective):
    """L^bh_γ (``variant='bh'``) or L^bh-alt_γ (``'bh_alt'``, with ``n_cross`` = |U_i| other mixing samples)."""

    name: ClassVar[str] = "fractional_bh"
    gamma: float = 0.5
    n_u: int = 10
    n_z: int = 10
    variant: Literal["bh", "bh_alt"] = "bh"
    n_cross: int = 5
    kl_weight: Literal["paper", "one"] = "paper"

    def __post_init__(self):
        if not 0.0 < self.gamma < 1.0:
            raise ConfigValueError("gamma", "a number in (0, 1)", self.gamma)
        if self.variant not in ("bh", "bh_alt"):
            raise ConfigValueError("variant", "'bh' or 'bh_alt'", self.variant)
        if self.variant == "bh_alt" and not 1 <= self.n_cross < self.n_u:
            raise ConfigValueError("n_cross", f"an integer in [1, n_u) = [1, {self.n_u})", self.n_cross)
        object.__setattr__(self, "n_samples", self.n_u * self.n_z)

    def __call__(self, model, x: Tensor) -> tuple[Tensor, dict[str, Tensor]]:
        n_cross = self.n_cross if self.variant == "bh_alt" else 0
        terms = model.hierarchical_terms(x, self.n_u, self.n_z, bayes=True, n_cross=n_cross)
        parts = bayes_hierarchical_parts(terms, self.gamma, self.variant, self.kl_weight)
        return parts["bound"], {"kl": parts["kl"].detach().mean(), "renyi": parts["renyi"].detach().mean()}

