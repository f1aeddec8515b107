"""The log-evidence breakdown of frac Tables 2, 6, 7 and 9, with many samples per image in bounded memory.

For each test image and N′ × M hierarchical samples (explicit posterior: N′ = 1, M = 1,024; semi-implicit:
32 × 32) the columns are

* *Test using Objective* — ``data`` − ``div`` = ``total``:
  - L_γ / L^h_γ: data = 1/(1−γ) log Ẑ_d, div = γ/(1−γ) log Ẑ_c (the Rényi divergence D_{1/γ}; frac eq. 1, App. B);
  - β-VAE: data = mean log p(x|z), div = β · mean [log q − log p] (Table 3's weighted KL, Monte Carlo);
  - L^bh_γ / L^bh-alt_γ: data = mean log p(x|z′), z′ ∼ r; div = w·KL(r‖q̃) + Rényi with the KL term of
    :func:`fyexp.objectives.semi_implicit.kl_r_q` (w = 1/(1−γ), or 1 for ``kl_weight='one'``); the two parts
    are reported as ``div_kl`` (unweighted KL) and ``div_renyi``;
* *Test using ELBO* — data = mean log p(x|z), div = mean [log q(z|u) − log p(z)] (the MC KL; for L^bh of the
  Bayes posterior r), total = data − div.  With γ = 1 both use the same samples, so they coincide.

Samples are drawn ``chunk_u`` mixing samples (or ``chunk_z`` latent samples for an explicit posterior) at a
time and combined with running log-sum-exps and sums, so memory is O(chunk × batch) whatever N′M is; the
numbers are accumulated in float64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import torch
from torch import Tensor

Kind = Literal["fractional", "beta", "bh", "bh_alt"]


@dataclass(frozen=True)
class EvalPlan:
    """Which bound and how many samples: N′ = ``n_u`` (1 for explicit), M = ``n_z``; chunks of the sampling."""

    kind: Kind = "fractional"
    gamma: float = 1.0
    beta: float = 1.0
    n_u: int = 1
    n_z: int = 1024
    chunk_u: int = 8
    chunk_z: int = 256
    n_cross: int = 5
    kl_weight: Literal["paper", "one"] = "paper"

    @classmethod
    def of(cls, kind: Kind, value: float, semi_implicit: bool, *, n_samples: int, n_u: int, n_z: int, chunk: int,
           n_cross: int, kl_weight: Literal["paper", "one"] = "paper") -> "EvalPlan":
        """The plan of a bound at ``value`` (γ; β for ``beta``, whose objective is scored at γ = 1): ``n_samples``
        explicit samples in chunks of ``chunk``, or ``n_u`` × ``n_z`` semi-implicit ones in chunks of
        max(n_cross + 1, chunk // n_z) mixing draws."""
        beta = kind == "beta"
        common = dict(kind=kind, gamma=1.0 if beta else value, beta=value if beta else 1.0, n_cross=n_cross,
                      kl_weight=kl_weight)
        if semi_implicit:
            return cls(n_u=n_u, n_z=n_z, chunk_u=max(n_cross + 1, chunk // n_z), **common)
        return cls(n_u=1, n_z=n_samples, chunk_z=chunk, **common)


class _Acc:
    """Running sums and log-sum-exps of per-sample values, one entry per data point."""

    def __init__(self):
        self.sums: dict[str, Tensor] = {}
        self.lses: dict[str, Tensor] = {}
        self.count = 0

    def add_sum(self, name: str, values: Tensor) -> None:       # values (S, B)
        v = values.double().sum(0)
        self.sums[name] = self.sums[name] + v if name in self.sums else v

    def add_lse(self, name: str, values: Tensor) -> None:
        v = torch.logsumexp(values.double(), 0)
        self.lses[name] = torch.logaddexp(self.lses[name], v) if name in self.lses else v

    def mean(self, name: str) -> Tensor:
        return self.sums[name] / self.count

    def log_mean_exp(self, name: str) -> Tensor:
        return self.lses[name] - math.log(self.count)


def _accumulate(acc: _Acc, t, plan: EvalPlan) -> None:
    bayes = plan.kind in ("bh", "bh_alt")
    ll, lq, lp = t.flat("log_likelihood"), t.flat("log_q"), t.flat("log_prior")
    acc.count += ll.shape[0]
    acc.add_sum("ll", ll)
    acc.add_sum("q_minus_p", lq - lp)
    if plan.kind == "fractional" and plan.gamma < 1.0:
        acc.add_lse("zd", (1.0 - plan.gamma) * ll.double())
    if plan.gamma < 1.0 and plan.kind != "beta":
        acc.add_lse("zc", (1.0 / plan.gamma - 1.0) * (lq - lp).double())
    if bayes:
        cross = t.log_q_cross[0] if plan.kind == "bh" else t.log_q_cross[1:].mean(0)
        acc.add_sum("kl_rq", (t.log_r - cross).reshape(ll.shape))
        acc.add_sum("r_minus_p", t.flat("log_r") - t.flat("log_prior_r"))


@torch.no_grad()
def evidence_breakdown(model, x: Tensor, plan: EvalPlan, batch_size: int = 100) -> dict[str, Tensor]:
    """Per-image columns (each (N,), float64): ``obj_total, obj_data, obj_div, elbo_total, elbo_data, elbo_div``
    (and ``obj_div_kl, obj_div_renyi`` for L^bh).  ``model`` implements ``hierarchical_terms``."""
    bayes = plan.kind in ("bh", "bh_alt")
    n_cross = plan.n_cross if plan.kind == "bh_alt" else 0
    if plan.kind == "bh_alt" and min(plan.chunk_u, plan.n_u) <= n_cross:
        raise ValueError(f"L^bh-alt evaluation needs more than n_cross = {n_cross} mixing samples per chunk")
    out: dict[str, list[Tensor]] = {}
    for xb in x.split(batch_size):
        acc = _Acc()
        if plan.n_u == 1:
            for start in range(0, plan.n_z, plan.chunk_z):
                _accumulate(acc, model.hierarchical_terms(xb, 1, min(plan.chunk_z, plan.n_z - start),
                                                          bayes=bayes, n_cross=n_cross), plan)
        else:
            for start in range(0, plan.n_u, plan.chunk_u):
                _accumulate(acc, model.hierarchical_terms(xb, min(plan.chunk_u, plan.n_u - start), plan.n_z,
                                                          bayes=bayes, n_cross=n_cross), plan)
        cols = _columns(acc, plan)
        for key, value in cols.items():
            out.setdefault(key, []).append(value.cpu())
    return {k: torch.cat(v) for k, v in out.items()}


def _columns(acc: _Acc, plan: EvalPlan) -> dict[str, Tensor]:
    g = plan.gamma
    mean_ll = acc.mean("ll")
    renyi = (g / (1.0 - g)) * acc.log_mean_exp("zc") if g < 1.0 and plan.kind != "beta" else acc.mean("q_minus_p")
    if plan.kind == "fractional":
        data = acc.log_mean_exp("zd") / (1.0 - g) if g < 1.0 else mean_ll
        cols = {"obj_data": data, "obj_div": renyi}
        elbo_div = acc.mean("q_minus_p")
    elif plan.kind == "beta":
        cols = {"obj_data": mean_ll, "obj_div": plan.beta * acc.mean("q_minus_p")}
        elbo_div = acc.mean("q_minus_p")
    else:
        kl = acc.mean("kl_rq")
        weight = 1.0 / (1.0 - g) if plan.kl_weight == "paper" else 1.0
        cols = {"obj_data": mean_ll, "obj_div": weight * kl + renyi, "obj_div_kl": kl, "obj_div_renyi": renyi}
        elbo_div = acc.mean("r_minus_p")
    cols["obj_total"] = cols["obj_data"] - cols["obj_div"]
    cols.update(elbo_data=mean_ll, elbo_div=elbo_div, elbo_total=mean_ll - elbo_div)
    return cols
