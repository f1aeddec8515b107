"""The continuous Bernoulli distribution (Loaiza-Ganem & Cunningham 2019) in its logit parameterization.

For x ∈ [0, 1] and λ = sigmoid(η) ∈ (0, 1),

    p(x | λ) = C(λ) λ^x (1 − λ)^{1−x},    C(λ) = 2 artanh(1 − 2λ) / (1 − 2λ)   (C(½) = 2).

With the logit η, 1 − 2λ = −tanh(η/2) and artanh(1 − 2λ) = −η/2, so

    log C = log( η / tanh(η/2) ),     x log λ + (1 − x) log(1 − λ) = x η − softplus(η),

which is finite and smooth for every η (for large |η|, log C → log |η|).  At η = 0 the ratio is 0/0; on
|η| < ``TAYLOR_CUT`` (λ ∈ [0.49, 0.51], as in docs/protocols.md) we use its Taylor expansion in y = η/2,

    log( 2y / tanh y ) = log 2 + y²/3 − 7 y⁴ / 90 + O(y⁶),

whose error there is below 1.5e-12 (its next term, 62 y⁶/2835, at the cut).  λ is clamped to [1e-4, 1 − 1e-4]
(``docs/protocols.md``, "Frac VAEs", says where the authors' public code shows it and where not); that clamp bounds
the per-pixel density
(log p(0 | λ = 1e-4) ≈ 2.22) and so the published log-evidences (≈ 784 × 2.1), and it is applied to η by
:func:`clamp_logits` (gradients stop outside, as with ``torch.clamp``).

Why not ``torch.distributions.ContinuousBernoulli`` (the authors' class): it is the same density — equal to ours to
1.5e-12 in float64 over the clamp range (``tests/distributions/test_continuous_bernoulli.py``) — but it works through λ,
and in float32, the dtype of the frac runners, log(1 − λ) near λ = 1 − 1e-4 keeps only about four digits: 7e-5 per pixel
off the float64 value where ours is within 1.1e-6, which moves frac-vae's fingerprint (``test_elbo_data``
−31.775 → −31.862) and so its committed numbers.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor

TAYLOR_CUT = 2.0 * math.atanh(2 * 0.01)   # |η| at λ = 0.5 ± 0.01 (logit(0.51) = 0.0400…)
LOG2 = math.log(2.0)


def log_norm_logits(logits: Tensor) -> Tensor:
    """log C(λ) at λ = sigmoid(η), elementwise; exact formula away from η = 0, Taylor series near it."""
    small = logits.abs() < TAYLOR_CUT
    safe = torch.where(small, torch.ones_like(logits), logits)
    exact = torch.log(safe / torch.tanh(safe / 2))           # η / tanh(η/2) > 0 for every η ≠ 0
    y2 = (logits / 2) ** 2
    taylor = LOG2 + y2 / 3 - 7 * y2 * y2 / 90
    return torch.where(small, taylor, exact)


def log_prob_logits(logits: Tensor, x: Tensor) -> Tensor:
    """log p(x | λ = sigmoid(η)) elementwise (no sum): x η − softplus(η) + log C."""
    return x * logits - F.softplus(logits) + log_norm_logits(logits)


def clamp_logits(logits: Tensor, eps: float | None) -> Tensor:
    """η clamped so that λ ∈ [eps, 1 − eps] (the authors' clamp); ``eps=None`` leaves η unchanged."""
    if eps is None or eps <= 0:
        return logits
    bound = math.log((1 - eps) / eps)
    return logits.clamp(-bound, bound)


def mean_logits(logits: Tensor) -> Tensor:
    """E[x] = λ/(2λ − 1) + 1/(2 artanh(1 − 2λ)) = ½ (coth(η/2) + 1) − 1/η  (½ + η/12 − η³/720 near 0)."""
    small = logits.abs() < TAYLOR_CUT
    safe = torch.where(small, torch.ones_like(logits), logits)
    lam = torch.sigmoid(safe)
    exact = lam / (2 * lam - 1) - 1 / safe                    # 1/(2 artanh(1 − 2λ)) = −1/η
    return torch.where(small, 0.5 + logits / 12 - logits ** 3 / 720, exact)
