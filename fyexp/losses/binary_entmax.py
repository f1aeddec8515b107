"""Binary ρ′-entmax observation models: per-pixel FY losses of the Tsallis negentropy on the 2-simplex.

A pixel with score θ ∈ ℝ gets the scores s = [θ, 0] over {on, off}; its gray level x ∈ [0, 1] is the soft target
y = [x, 1 − x] (FYVI §4.2, observation models of Table 2).  With Ω_α the Tsallis negentropy on the simplex,

    Ω_1(p) = Σ p_i log p_i,        Ω_2(p) = ½(Σ p_i² − 1),

the prediction is p = ∇Ω*(s) (α-entmax) and the FY loss is L(θ; x) = Ω*(s) + Ω(y) − ⟨s, y⟩ ≥ 0, zero iff
p = y, with gradient ∂L/∂θ = p_on − x.  In closed form:

* α = 1 (product of Bernoullis): p_on = σ(θ),  L = softplus(θ) − θx + x log x + (1−x) log(1−x),
  i.e. the binary cross-entropy minus the entropy of x (a constant in θ);
* α = 2 (binary sparsemax, "Ψ₂ sparse binary"): p_on = clip((θ + 1)/2, 0, 1),
  L = p θ + p(1 − p) − θx − x(1 − x),  since Ω_2([p, 1−p]) = −p(1−p).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["binary_entmax", "binary_tsallis_negentropy", "binary_fy_loss", "SUPPORTED_ALPHAS"]

SUPPORTED_ALPHAS = (1.0, 2.0)


def _check(alpha: float) -> None:
    if float(alpha) not in SUPPORTED_ALPHAS:
        raise ValueError(f"binary entmax is implemented in closed form for alpha in {SUPPORTED_ALPHAS}, got {alpha}")


def binary_entmax(theta: torch.Tensor, alpha: float) -> torch.Tensor:
    """Probability of the 'on' state, α-entmax([θ, 0])₁; same shape as ``theta``."""
    _check(alpha)
    if alpha == 1.0:
        return torch.sigmoid(theta)
    return ((theta + 1) / 2).clamp(0.0, 1.0)


def binary_tsallis_negentropy(p: torch.Tensor, alpha: float) -> torch.Tensor:
    """Ω_α([p, 1 − p]) elementwise (0 log 0 = 0)."""
    _check(alpha)
    if alpha == 1.0:
        return torch.xlogy(p, p) + torch.xlogy(1 - p, 1 - p)
    return -p * (1 - p)


def binary_fy_loss(theta: torch.Tensor, x: torch.Tensor, alpha: float) -> torch.Tensor:
    """Elementwise FY loss L_Ω_α([θ, 0]; [x, 1 − x]) ≥ 0; sum over pixels for an image's loss."""
    _check(alpha)
    if alpha == 1.0:
        return F.softplus(theta) - theta * x + binary_tsallis_negentropy(x, 1.0)
    p = binary_entmax(theta, 2.0)
    return p * theta + p * (1 - p) - theta * x - x * (1 - x)
