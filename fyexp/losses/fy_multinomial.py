"""The Fenchel-Young loss of the Tsallis α-negentropy against word counts: FY-NVDM's observation model.

FYVI Appendix D replaces NVDM's multinomial likelihood Multinomial(softmax(θ)) of a document's word counts
x ∈ ℕ^V (length N = Σ_i x_i, empirical distribution y = x / N) by the FY loss (FYVI §2.3, eq. 6)

    L_Ω(θ; y) = Ω*(θ) + Ω(y) − ⟨θ, y⟩,      Ω*(θ) = ⟨p, θ⟩ − Ω(p) at p = α-entmax(θ),

of the Tsallis negentropy Ω_α(p) = (Σ_i p_i^α − 1) / (α(α−1)) (Shannon's Σ p log p at α = 1), and scales it
by N, as the authors' code does ("normalized counts × document length").  The scaling makes α = 1 the
multinomial negative log-likelihood up to a constant in θ:

    N · L_Ω(θ; y) = N (logsumexp θ − ⟨θ, y⟩ + Σ y log y) = −Σ_i x_i log softmax(θ)_i + N Σ_i y_i log y_i
                  = −log Multinomial(x; N, softmax θ) + [N Σ y log y + log (N! / Π x_i!)].

Its gradient is N (p − y), so training never differentiates through entmax itself.  Both p (α > 1) and y are
sparse, so Ω is summed over their non-zero entries only (:func:`sparse_negentropy`).
"""

from __future__ import annotations

import torch
from torch.autograd import Function

from fyexp.maps.newton import entmax_newton
from fyexp.maps.tsallis import tsallis_negentropy


def sparse_negentropy(p: torch.Tensor, alpha: float) -> torch.Tensor:
    """Ω_α(p) per row of an (n, V) matrix of mostly-zero distributions: Σ_i p_i^α over the non-zero p_i only
    (0^α = 0 for α > 0), which skips the ``pow`` of every zero; equal to :func:`tsallis_negentropy` up to the
    order of the additions.  α = 1 (Shannon) is computed densely."""
    if alpha == 1.0:
        return tsallis_negentropy(p, alpha)
    flat = p.reshape(-1)
    index = (flat > 0).nonzero().squeeze(1)
    rows = torch.div(index, p.shape[-1], rounding_mode="floor")
    lengths = torch.bincount(rows, minlength=flat.numel() // p.shape[-1])
    powered = torch.segment_reduce(flat.index_select(0, index).pow(alpha), "sum", lengths=lengths)
    return (powered.view(p.shape[:-1]) - 1.0) / (alpha * (alpha - 1.0))


def observation_probs(scores: torch.Tensor, alpha: float) -> torch.Tensor:
    """The decoder's word distribution α-entmax(θ) (softmax at α = 1) along the last dim."""
    return entmax_newton(scores, alpha, dim=-1)


class _ScaledFYLoss(Function):
    """N · L_Ω(θ; y) per row, with the gradient N (p − y) in θ (none in the counts)."""

    @staticmethod
    def forward(ctx, scores: torch.Tensor, counts: torch.Tensor, alpha: float) -> torch.Tensor:
        length = counts.sum(-1, keepdim=True)
        y = counts / length.clamp_min(1e-12)
        with torch.no_grad():
            p = observation_probs(scores, alpha)
        loss = ((p - y) * scores).sum(-1) - sparse_negentropy(p, alpha) + sparse_negentropy(y, alpha)
        ctx.save_for_backward(length * (p - y))
        return length.squeeze(-1) * loss

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (scaled_residual,) = ctx.saved_tensors
        return grad.unsqueeze(-1) * scaled_residual, None, None


def fy_multinomial_loss(scores: torch.Tensor, counts: torch.Tensor, alpha: float) -> torch.Tensor:
    """N · L_Ω(θ; x/N) for each document: FY-NVDM's observation loss (NVDM's NLL + const at α = 1).

    Parameters
    ----------
    scores : Tensor of shape (n, V)
        Decoder scores θ (for NVDM, R z + b).
    counts : Tensor of shape (n, V)
        Word counts x (non-negative; rows with N = 0 give 0).
    alpha : float
        The Tsallis index ρ′ ≥ 1 of the observation model.

    Returns
    -------
    Tensor of shape (n,), non-negative.
    """
    return _ScaledFYLoss.apply(scores, counts, float(alpha))


def multinomial_nll(scores: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """NVDM's reconstruction term −Σ_i x_i log softmax(θ)_i per document (the multinomial coefficient omitted)."""
    return -(counts * torch.log_softmax(scores, dim=-1)).sum(-1)


def l1_reconstruction_error(probs: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """FYVI Table 3's RE of each document: ‖x/N − p‖₁ between its empirical word distribution and p; shape (n,)."""
    y = counts / counts.sum(-1, keepdim=True).clamp_min(1e-12)
    return (y - probs).abs().sum(-1)
